import memory_core.knowledge as knowledge


def test_public_names_are_exactly_all_and_sorted() -> None:
    public = {name for name in dir(knowledge) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(knowledge, name)).__name__ == "module"}
    assert public - modules == set(knowledge.__all__)
    assert list(knowledge.__all__) == sorted(knowledge.__all__, key=lambda n: (not n.isupper(), n))
