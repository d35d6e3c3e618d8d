"""Marking key facts: uploads opened and checked, facts added and edited, saving for tuning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_core.dashboard.conversations import conversation_files
from memory_core.dashboard.marking import (
    DETECT,
    add_fact,
    detect_format,
    fact_rows,
    next_fact_id,
    open_saved,
    open_upload,
    problem_rows,
    save_conversation,
    saved_names,
    with_facts,
)
from memory_core.errors import InputError, SessionFormatError
from memory_core.harness.session_format import FORMAT, Conversation, load_conversation

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_sessions" / "trip-approval.json"
CHAT = {
    "id": "support-42",
    "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "name": "Dana", "content": "My printer is an HP 4100."},
        {"role": "assistant", "content": "Noted, an HP 4100."},
        {"role": "user", "name": "Dana", "content": "I prefer email over phone calls."},
    ],
}
LOCOMO = {"speaker_a": "A", "speaker_b": "B", "qa": []}


def chat_bytes(**changes: Any) -> bytes:
    return json.dumps({**CHAT, **changes}).encode()


@pytest.fixture
def chat() -> Conversation:
    (conversation,) = open_upload("support.json", chat_bytes())
    return conversation


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("x.json", SAMPLE.read_bytes(), FORMAT),
        ("x.json", chat_bytes(), "openai-chat"),
        ("x.jsonl", b"anything", "openai-chat"),
        ("x.json", json.dumps(LOCOMO).encode(), "locomo"),
        ("x.json", json.dumps([{"sample_id": "1", "conversation": {}}]).encode(), "locomo"),
        ("x.json", json.dumps([{"haystack_sessions": []}]).encode(), "longmemeval"),
        ("x.json", b"{not json", FORMAT),  # its reader then says where the JSON breaks
    ],
)
def test_the_format_is_recognised_by_its_top_level(name: str, data: bytes, expected: str) -> None:
    assert detect_format(name, data) == expected


def test_an_unrecognised_upload_names_itself_and_the_formats() -> None:
    with pytest.raises(InputError, match=r"other\.json looks like none of atlas-session/1, locomo"):
        detect_format("other.json", b'{"hello": 1}')


def test_a_chat_log_upload_opens_as_a_conversation_named_after_the_upload(
    chat: Conversation,
) -> None:
    assert chat.id == "support-42"
    assert next(t.text for t in chat.turns()) == "My printer is an HP 4100."
    assert len(list(chat.turns())) == 3  # the system message is left out
    assert chat.source == "support.json"
    assert chat.key_facts == ()


def test_a_bad_upload_lists_every_problem_by_field_and_names_no_server_path(
    tmp_path: Path,
) -> None:
    data = json.loads(SAMPLE.read_text())
    data["sessions"][0]["turns"][1]["at"] = "yesterday"
    data["key_facts"][0]["evidence"] = ["nope"]
    data["key_facts"][1]["expect"] = "maybe"
    with pytest.raises(SessionFormatError) as caught:
        open_upload("mine.json", json.dumps(data).encode(), FORMAT)
    problems = caught.value.problems
    assert len(problems) == 3
    assert all(p.startswith("mine.json: $") for p in problems)
    assert not any("/tmp" in p or "atlas-upload" in p for p in problems)
    rows = problem_rows(problems)
    assert {r["field"] for r in rows} == {
        "$.key_facts[0].evidence[0]",
        "$.key_facts[1].expect",
        "$.sessions[0].turns[1].at",
    }
    assert all(r["file"] == "mine.json" for r in rows)
    assert any("'maybe' is not one of ['recalled', 'forgotten']" in r["problem"] for r in rows)


def test_a_bad_chat_log_names_the_line_and_the_field() -> None:
    lines = json.dumps(CHAT) + "\n" + json.dumps({"messages": [{"role": "robot"}]})
    with pytest.raises(SessionFormatError) as caught:
        open_upload("logs.jsonl", lines.encode())
    (row,) = problem_rows(caught.value.problems)
    assert row["file"] == "logs.jsonl:2"
    assert row["field"] == "$.messages[0].role"
    assert "expected a role among" in row["problem"]


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(InputError, match="'csv' is not one of"):
        open_upload("x.json", chat_bytes(), "csv")
    assert DETECT == "detect"


def test_adding_a_fact_validates_the_whole_conversation(chat: Conversation) -> None:
    marked = add_fact(
        chat, evidence=["s1-t1"], fact=" HP 4100 ", probe="Which printer?", expect="recalled"
    )
    (fact,) = marked.key_facts
    assert (fact.id, fact.fact, fact.evidence, fact.probe) == (
        "k1",
        "HP 4100",
        ("s1-t1",),
        "Which printer?",
    )
    again = add_fact(marked, evidence=["s1-t3"], fact="email", probe="How?", expect="forgotten")
    assert [(f.id, f.expect) for f in again.key_facts] == [("k1", "recalled"), ("k2", "forgotten")]
    assert chat.key_facts == ()  # the draft passed in is unchanged


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"probe": "  "}, "$.key_facts[0].probe"),
        ({"evidence": ["s9-t9"]}, "$.key_facts[0].evidence[0]"),
        ({"evidence": []}, "$.key_facts[0].evidence"),
        ({"expect": "maybe"}, "$.key_facts[0].expect"),
    ],
)
def test_a_bad_fact_names_its_field_and_changes_nothing(
    chat: Conversation, changes: dict[str, Any], field: str
) -> None:
    args: dict[str, Any] = {"evidence": ["s1-t1"], "fact": "HP", "probe": "Which?"} | changes
    with pytest.raises(SessionFormatError) as caught:
        add_fact(chat, **args)
    assert [r["field"] for r in problem_rows(caught.value.problems)] == [field]
    assert chat.key_facts == ()


def test_fact_ids_continue_after_the_highest_k_number() -> None:
    conv = load_conversation(SAMPLE)
    assert next_fact_id(conv) == "k1"  # the sample's ids have another form
    rows = fact_rows(conv)
    rows[0]["id"], rows[1]["id"] = "k7", "k8x"
    assert next_fact_id(with_facts(conv, rows)) == "k8"


def test_edited_rows_replace_the_facts(chat: Conversation) -> None:
    marked = add_fact(chat, evidence=["s1-t1"], fact="HP 4100", probe="Which printer?")
    rows = fact_rows(marked)
    rows[0]["probe"] = "What printer does Dana own?"
    assert with_facts(marked, rows).key_facts[0].probe == "What printer does Dana own?"
    assert with_facts(marked, []).key_facts == ()


def test_saving_writes_where_the_tuning_page_looks_and_never_overwrites_silently(
    chat: Conversation, tmp_path: Path
) -> None:
    folder = tmp_path / "conversations"
    marked = add_fact(chat, evidence=["s1-t1"], fact="HP 4100", probe="Which printer?")
    path = save_conversation(marked, folder)
    assert path == folder / "support-42.json"
    assert load_conversation(path) == load_conversation(path)  # valid
    assert open_saved("support-42", folder).key_facts == marked.key_facts
    assert saved_names(folder) == ["support-42"]
    assert conversation_files(samples=tmp_path / "none", own=folder) == {"yours/support-42": path}

    before = path.read_bytes()
    with pytest.raises(InputError, match=r"support-42\.json already exists"):
        save_conversation(chat, folder)
    assert path.read_bytes() == before
    save_conversation(chat, folder, overwrite=True)
    assert open_saved("support-42", folder).key_facts == ()
    assert sorted(p.name for p in folder.iterdir()) == ["support-42.json"]  # no leftovers


def test_an_invalid_saved_file_names_the_file_not_the_server_path(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"format": "atlas-session/1"}')
    with pytest.raises(SessionFormatError) as caught:
        open_saved("broken", tmp_path)
    assert all(p.startswith("broken.json: $") for p in caught.value.problems)
    assert str(tmp_path) not in str(caught.value)
    assert saved_names(tmp_path / "absent") == []
