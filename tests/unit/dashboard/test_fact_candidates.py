"""Candidate key facts: which turns are proposed, why, and with which draft probe."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from memory_core.dashboard.fact_candidates import (
    draft_probe,
    propose,
    referred_back,
    unmarked,
    value_reason,
)
from memory_core.harness.session_format import FORMAT, Conversation, KeyFact, parse_conversation
from memory_core.testing import HashingEmbedder

TURNS = [
    ("Dana", "Hi there!"),
    ("Dana", "My printer is an HP 4100 and it jams on thick paper."),
    ("assistant", "Thanks, that helps a lot!"),
    ("Dana", "Can you check the weather?"),
    ("assistant", "Noted: the HP 4100 jams on thick paper."),
    ("Dana", "Thanks a lot!"),
    ("Dana", "ok"),
    ("Dana", "I prefer email over phone calls."),
    ("Dana", "The office moves to Rotterdam in March."),
    ("Dana", "My manager Priya approves purchases above 500 euros."),
]
"""Small talk is a minority, as in most chats: below the median turn's density."""


def conversation(reads: list[dict[str, Any]] | None = None) -> Conversation:
    data: dict[str, Any] = {
        "format": FORMAT,
        "id": "chat",
        "title": "Chat",
        "description": "",
        "sessions": [
            {
                "id": "s1",
                "started_at": "2024-03-01T09:00:00+00:00",
                "turns": [
                    {"id": f"t{i}", "speaker": who, "text": text}
                    for i, (who, text) in enumerate(TURNS, start=1)
                ],
            }
        ],
        "key_facts": [],
    }
    if reads is not None:
        data["reads"] = reads
    return parse_conversation(data, "chat.json")


@pytest.fixture
def proposed() -> dict[str, Any]:
    found = propose(conversation(), HashingEmbedder(), link_threshold=0.5)
    return {c.turn_id: c for c in found}


def test_turns_stating_values_are_proposed_and_small_talk_is_not(proposed: dict[str, Any]) -> None:
    assert "states a name, number" in proposed["t2"].reasons
    assert "states a preference" in proposed["t8"].reasons
    for small_talk in ("t1", "t6", "t7"):
        assert small_talk not in proposed
    assert "t4" not in proposed or not any("states" in r for r in proposed["t4"].reasons)


def test_a_turn_a_later_turn_echoes_is_referred_back_to(proposed: dict[str, Any]) -> None:
    assert any(r.startswith("referred back to by t5 (0.") for r in proposed["t2"].reasons)
    # "Thanks, that helps a lot!" ... "Thanks a lot!" are similar but say less than most turns
    assert "t3" not in proposed or not any("referred" in r for r in proposed["t3"].reasons)


def test_candidates_are_ordered_by_information_density(proposed: dict[str, Any]) -> None:
    ordered = list(proposed.values())
    assert [c.density for c in ordered] == sorted((c.density for c in ordered), reverse=True)


def test_turns_the_agents_reads_returned_come_first() -> None:
    read = {
        "id": "r1",
        "at": "2024-03-01T10:00:00+00:00",
        "query": "Anything about the office?",
        "top_k": 1,
        "returned": ["t9"],
    }
    found = propose(conversation([read]), HashingEmbedder())
    assert (found[0].turn_id, found[0].reads) == ("t9", 1)
    assert found[1].density > found[0].density  # denser turns come after it
    assert all(c.reads == 0 for c in found[1:])


def test_a_speakers_own_name_is_addressing_not_a_fact() -> None:
    assert value_reason("Hey Dana, good to see you!", ["Dana", "assistant"]) is None
    assert value_reason("Hey Mel, good to see you!", ["Melanie"]) is None  # a short form
    assert value_reason("Dana, my manager Priya approves it.", ["Dana"]) == "states a name"


def test_a_turn_a_read_ranked_first_gets_the_reads_query_as_probe() -> None:
    read = {
        "id": "r1",
        "at": "2024-03-01T10:00:00+00:00",
        "query": "How does Dana want to be contacted?",
        "top_k": 3,
        "returned": ["t8", "t1"],
    }
    found = {c.turn_id: c for c in propose(conversation([read]), HashingEmbedder())}
    assert "returned by 1 read" in found["t8"].reasons
    assert found["t8"].probe == "How does Dana want to be contacted?"
    assert found["t1"].reasons == ("returned by 1 read",)  # the read is the signal
    assert found["t1"].probe == draft_probe(next(conversation().turns()))  # ranked second


def test_marked_turns_are_left_out() -> None:
    conv = conversation()
    marked = replace(conv, key_facts=(KeyFact("k1", "HP 4100", ("t2",), "Which printer?"),))
    left = unmarked(propose(conv, HashingEmbedder()), marked)
    assert "t2" not in {c.turn_id for c in left}
    assert {c.turn_id for c in left} == {c.turn_id for c in propose(conv, HashingEmbedder())} - {
        "t2"
    }


def test_the_draft_probe_asks_about_rare_words_but_never_the_number_or_speaker() -> None:
    turn = next(t for t in conversation().turns() if t.id == "t2")
    probe = draft_probe(turn)
    assert probe.startswith("What did Dana say about ") and probe.endswith("?")
    assert "4100" not in probe and "Dana say about Dana" not in probe
    assert "printer" in probe or "jams" in probe


def test_questions_and_requests_state_no_value() -> None:
    assert value_reason("Can you remind me at 3pm on Friday?") is None
    assert value_reason("The meeting is at 3pm on Friday.") == "states a date, time"


def test_referred_back_needs_the_threshold_and_a_later_turn() -> None:
    turns = list(conversation().turns())
    found = referred_back(turns, HashingEmbedder(), 0.5)
    assert found[1] is not None and found[1][0] == "t5"
    assert found[-1] is None  # nothing comes after the last turn
    assert referred_back(turns, HashingEmbedder(), 1.01) == [None] * len(turns)
    assert referred_back(turns[:1], HashingEmbedder(), 0.0) == [None]
