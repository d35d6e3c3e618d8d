import pytest

from memory_core.atlas import ElasticMemoryAtlas
from memory_core.dashboard.playground import check_session_name, converse
from memory_core.errors import InputError


def test_recall_happens_before_remembering(atlas: ElasticMemoryAtlas) -> None:
    first = converse(atlas, "I take the train to Munich", session_id="play")
    assert first.hits == [] and first.stored is not None and "Nothing relevant" in first.reply
    second = converse(atlas, "how do I get to Munich by train", session_id="play")
    assert [h.node.id for h in second.hits] == [first.stored.id]
    assert second.stored is not None and len(atlas) == 2
    third = converse(atlas, "and back?", session_id="play", remember=False)
    assert third.stored is None and len(atlas) == 2


@pytest.mark.parametrize("name", ["", " ", "<script>", "x" * 65, "-leading"])
def test_session_names_are_plain(name: str, atlas: ElasticMemoryAtlas) -> None:
    with pytest.raises(InputError, match="session"):
        converse(atlas, "hello", session_id=name)
    assert len(atlas) == 0


def test_top_k_is_checked(atlas: ElasticMemoryAtlas) -> None:
    with pytest.raises(InputError, match="top_k"):
        converse(atlas, "hello", session_id="s", top_k=0)
    assert check_session_name(" demo 1 ") == "demo 1"
