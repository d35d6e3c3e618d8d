from __future__ import annotations

from memory_core.agent.attribution import attributed


def test_the_speaker_goes_in_front() -> None:
    assert attributed("I went hiking.", "Caroline") == "Caroline: I went hiking."


def test_no_speaker_or_already_attributed_leaves_the_text() -> None:
    assert attributed("I went hiking.", None) == "I went hiking."
    assert attributed("I went hiking.", "  ") == "I went hiking."
    assert attributed("Caroline: I went hiking.", "Caroline") == "Caroline: I went hiking."
