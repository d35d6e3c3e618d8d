"""LongMemEval importer, on fixtures written from the published format description."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import convert, problem, write
from .test_locomo import _delete, _set


def instance(question_id: str = "e47becba") -> dict[str, Any]:
    return {
        "question_id": question_id,
        "question_type": "single-session-user",
        "question": "What degree did I graduate with?",
        "answer": "Business Administration",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["sharegpt_1", "answer_280352e9"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/18 (Thu) 10:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Can you suggest a pasta recipe?"},
                {"role": "assistant", "content": "Try cacio e pepe."},
            ],
            [
                {"role": "user", "content": "I graduated in Business Administration.", "has_answer": True},
                {"role": "assistant", "content": "Congratulations!", "has_answer": False},
                {"role": "user", "content": ""},
            ],
        ],
        "answer_session_ids": ["answer_280352e9"],
    }  # fmt: skip


def test_instance_becomes_one_conversation(tmp_path: Path) -> None:
    path = write(tmp_path, "longmemeval_oracle.json", [instance(), instance("q2")])
    converted = convert("longmemeval", path)
    assert [conv.id for _, conv in converted] == ["lme-e47becba", "lme-q2"]
    item, conv = converted[0]
    # sorted by date: the answer session (18 May) comes first
    assert [t.text for t in conv.sessions[0].turns] == [
        "I graduated in Business Administration.",
        "Congratulations!",
    ]
    assert [t.speaker for t in conv.turns()] == ["user", "assistant", "user", "assistant"]
    [fact] = conv.key_facts
    assert fact.probe == "What degree did I graduate with?"
    assert fact.fact == "Business Administration" and fact.evidence == ("s1-t1",)
    assert item.skipped_messages == 1 and item.warning() is None
    assert "single-session-user question asked 2023/05/30 (Tue) 23:40" in conv.description
    assert item.source == f"{path} $[0]"


def test_same_minute_sessions_follow_each_other(tmp_path: Path) -> None:
    data = instance()
    data["haystack_dates"] = ["2023/05/20 (Sat) 02:21", "2023/05/20 (Sat) 02:21"]
    [(_, conv)] = convert("longmemeval", write(tmp_path, "a.json", data))
    first, second = conv.sessions
    assert second.started_at == first.started_at + 30.0  # after the first session's 2 turns


def test_integer_answer_and_single_instance_object(tmp_path: Path) -> None:
    data = instance()
    data["answer"] = 3
    [(_, conv)] = convert("longmemeval", write(tmp_path, "a.json", data))
    assert conv.key_facts[0].fact == "3"


def test_abstention_questions_only_on_request(tmp_path: Path) -> None:
    path = write(tmp_path, "a.json", [instance("7161e7e2_abs")])
    [(item, conv)] = convert("longmemeval", path)
    assert conv.key_facts == () and item.unanswerable == 1 and item.dropped_facts == 0
    [(_, conv)] = convert("longmemeval", path, include_unanswerable=True)
    assert [f.id for f in conv.key_facts] == ["7161e7e2_abs"]


def test_question_without_flagged_turn_is_dropped_with_a_warning(tmp_path: Path) -> None:
    data = instance()
    del data["haystack_sessions"][1][0]["has_answer"]
    [(item, conv)] = convert("longmemeval", write(tmp_path, "a.json", [data]))
    assert conv.key_facts == () and item.dropped_facts == 1
    assert item.warning() is not None and "1 question(s) left without evidence" in item.warning()


BAD: list[tuple[str, Callable[[Any], None], str]] = [
    ("missing question", _delete((0, "question")), "$[0]: missing field 'question'"),
    ("missing dates", _delete((0, "haystack_dates")), "$[0]: missing field 'haystack_dates'"),
    ("unparsable date", _set((0, "haystack_dates", 1), "18 May 2023"), "$[0].haystack_dates[1]: '18 May 2023' is not a LongMemEval date like '2023/05/20 (Sat) 02:21'"),
    ("impossible date", _set((0, "haystack_dates", 0), "2023/02/30 (Thu) 10:00"), "$[0].haystack_dates[0]: '2023/02/30 (Thu) 10:00' is not a real date and time"),
    ("bad question date", _set((0, "question_date"), None), "$[0].question_date: expected a string, got null"),
    ("dates and sessions differ", _set((0, "haystack_dates"), ["2023/05/20 (Sat) 02:21"]), "$[0].haystack_dates: expected one date per haystack session (2 sessions, 1 dates)"),
    ("session not a list", _set((0, "haystack_sessions", 0), {"role": "user"}), "$[0].haystack_sessions[0]: expected a list, got an object"),
    ("turn without role", _delete((0, "haystack_sessions", 1, 1, "role")), "$[0].haystack_sessions[1][1]: missing field 'role'"),
    ("content wrong type", _set((0, "haystack_sessions", 0, 1, "content"), ["x"]), "$[0].haystack_sessions[0][1].content: expected a string, got a list"),
    ("has_answer as text", _set((0, "haystack_sessions", 1, 0, "has_answer"), "yes"), "$[0].haystack_sessions[1][0].has_answer: expected true or false, got a string ('yes')"),
    ("answer wrong type", _set((0, "answer"), ["a"]), "$[0].answer: expected a string, got a list"),
    ("no sessions", lambda d: d[0].update(haystack_dates=[], haystack_sessions=[]), "$[0].haystack_sessions: expected at least one session"),
    ("only empty turns", _set((0, "haystack_sessions"), [[{"role": "user", "content": " "}], []]), "$[0].haystack_sessions: expected at least one turn with content"),
]  # fmt: skip


@pytest.mark.parametrize(("mutate", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_names_file_path_and_expectation(
    tmp_path: Path, mutate: Callable[[Any], None], expected: str
) -> None:
    doc = [instance()]
    mutate(doc)
    path = write(tmp_path, "lme.json", doc)
    assert problem("longmemeval", path).startswith(f"{path}: {expected}")


@pytest.mark.parametrize("content", [[], {"question": "x"}, "5"])
def test_wrong_layout(tmp_path: Path, content: Any) -> None:
    path = write(tmp_path, "lme.json", content)
    assert problem("longmemeval", path).startswith(f"{path}: $: expected a LongMemEval file")
