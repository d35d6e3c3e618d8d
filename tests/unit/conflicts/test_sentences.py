"""The sentence splitter the long-text judge reads by (spaCy's sentencizer, no weights)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from memory_core.conflicts.sentences import sentences


def test_a_chatty_turn_is_cut_into_its_sentences() -> None:
    text = "Hey Mel!  Lost my job at the bank last week. Gonna look into mental health work?"
    assert [s.text for s in sentences(text)] == [
        "Hey Mel!",
        "Lost my job at the bank last week.",
        "Gonna look into mental health work?",
    ]


def test_abbreviations_and_decimals_do_not_end_a_sentence() -> None:
    text = "I saw Dr. Smith at 3.5 km from home, e.g. near the park. It went well."
    assert [s.text for s in sentences(text)] == [
        "I saw Dr. Smith at 3.5 km from home, e.g. near the park.",
        "It went well.",
    ]


def test_one_sentence_is_itself_stripped_and_blank_is_nothing() -> None:
    assert [s.text for s in sentences("  I live in Lyon  ")] == ["I live in Lyon"]
    assert sentences("   ") == ()


@given(st.text(alphabet=st.sampled_from("ab .!?\n"), max_size=60))
def test_offsets_point_at_the_sentence_in_the_text(text: str) -> None:
    found = sentences(text)
    for s in found:
        assert text[s.start : s.end] == s.text == s.text.strip() != ""
    assert all(x.end <= y.start for x, y in pairwise(found))
