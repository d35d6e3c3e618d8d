from __future__ import annotations

from pathlib import Path

from memory_core.dashboard.conversations import OWN_PREFIX, conversation_files


def test_samples_then_the_users_own_under_a_prefix(tmp_path: Path) -> None:
    samples, own = tmp_path / "samples", tmp_path / "own"
    samples.mkdir()
    own.mkdir()
    for folder, names in ((samples, ["b", "a"]), (own, ["a", "locomo-26"])):
        for name in names:
            (folder / f"{name}.json").write_text("{}")
    (own / "notes.txt").write_text("x")
    found = conversation_files(samples, own)
    assert list(found) == ["a", "b", f"{OWN_PREFIX}a", f"{OWN_PREFIX}locomo-26"]
    assert found[f"{OWN_PREFIX}a"] == own / "a.json"


def test_no_own_folder_means_samples_only(tmp_path: Path) -> None:
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "x.json").write_text("{}")
    assert list(conversation_files(samples, tmp_path / "absent")) == ["x"]
