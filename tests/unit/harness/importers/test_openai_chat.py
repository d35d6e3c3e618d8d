"""openai-chat importer: JSON and JSONL, session splitting, left-out roles, time rules."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_core.harness.importers.openai_chat import UNTIMED_START

from .conftest import convert, problem, write
from .test_locomo import _delete, _set

T0 = 1_700_000_000  # 2023-11-14T22:13:20Z


def chat() -> dict[str, Any]:
    return {
        "id": "support-42",
        "metadata": {"title": "Printer help"},
        "messages": [
            {"role": "system", "content": "You are a helpful assistant.", "timestamp": T0},
            {"role": "user", "content": "My printer is an HP 4100.", "timestamp": T0 + 10, "name": "Dana"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}], "timestamp": T0 + 12},
            {"role": "tool", "content": "driver 2.1", "timestamp": T0 + 13},
            {"role": "assistant", "content": [{"type": "text", "text": "Driver 2.1 fits."}], "timestamp": T0 + 15},
            {"role": "user", "content": "It works now, thanks.", "timestamp": "2023-11-15T09:00:00Z"},
            {"role": "assistant", "content": "Glad to hear it."},
        ],
    }  # fmt: skip


def test_json_file_split_by_time_gap(tmp_path: Path) -> None:
    [(item, conv)] = convert("openai-chat", write(tmp_path, "c.json", chat()))
    assert conv.id == "support-42" and conv.title == "Printer help" and conv.key_facts == ()
    assert [[t.text for t in s.turns] for s in conv.sessions] == [
        ["My printer is an HP 4100.", "Driver 2.1 fits."],
        ["It works now, thanks.", "Glad to hear it."],
    ]
    assert [t.speaker for t in conv.turns()] == ["Dana", "assistant", "user", "assistant"]
    assert conv.sessions[0].started_at == T0 + 10
    last = conv.sessions[1].turns[1]
    assert last.at == conv.sessions[1].turns[0].at  # an untimed message takes the time before it
    assert item.skipped_messages == 3  # system, empty tool call, tool result


def test_longer_gap_keeps_one_session(tmp_path: Path) -> None:
    [(_, conv)] = convert("openai-chat", write(tmp_path, "c.json", chat()), session_gap=86400.0)
    assert len(conv.sessions) == 1


def test_system_and_tool_messages_on_request(tmp_path: Path) -> None:
    [(item, conv)] = convert("openai-chat", write(tmp_path, "c.json", chat()), include_system=True)
    assert [t.speaker for t in conv.sessions[0].turns] == ["system", "Dana", "tool", "assistant"]
    assert item.skipped_messages == 1  # the tool call has no text


def test_session_field_wins_over_time(tmp_path: Path) -> None:
    data = chat()
    for i, message in enumerate(data["messages"]):
        message["session"] = "a" if i < 5 else "b"
    data["messages"][4]["session"] = "a2"
    del data["messages"][6]["session"]  # continues the current session
    [(_, conv)] = convert("openai-chat", write(tmp_path, "c.json", data), session_gap=1.0)
    assert [len(s.turns) for s in conv.sessions] == [1, 1, 2]


def test_a_left_out_message_can_still_open_a_session(tmp_path: Path) -> None:
    data = {"messages": [
        {"role": "user", "content": "first", "session": "a"},
        {"role": "system", "content": "new chat", "session": "b"},
        {"role": "user", "content": "second"},
    ]}  # fmt: skip
    [(_, conv)] = convert("openai-chat", write(tmp_path, "c.json", data))
    assert [[t.text for t in s.turns] for s in conv.sessions] == [["first"], ["second"]]


def test_jsonl_one_conversation_per_line(tmp_path: Path) -> None:
    untimed = {
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    }
    lines = [json.dumps(chat()), "", json.dumps(untimed)]
    path = write(tmp_path, "logs.jsonl", "\n".join(lines) + "\n")
    converted = convert("openai-chat", path)
    assert [conv.id for _, conv in converted] == ["support-42", "logs-3"]
    item, conv = converted[1]
    assert item.source == f"{path}:3"
    assert conv.sessions[0].started_at == UNTIMED_START.timestamp()
    assert [t.at - conv.sessions[0].started_at for t in conv.turns()] == [0.0, 30.0]


def test_untimed_log_uses_its_own_timestamp_and_session_field(tmp_path: Path) -> None:
    data = {
        "created_at": "2024-03-01T08:00:00+01:00",
        "messages": [
            {"role": "user", "content": "one", "session_id": 1},
            {"role": "assistant", "content": "two", "session_id": 1},
            {"role": "user", "content": "three", "session_id": 2},
        ],
    }
    [(_, conv)] = convert("openai-chat", write(tmp_path, "my chat.json", data))
    assert conv.id == "my-chat"
    start = conv.sessions[0].started_at
    assert [s.started_at - start for s in conv.sessions] == [0.0, 30.0]


BAD: list[tuple[str, Callable[[Any], None], str]] = [
    ("no messages", _delete(("messages",)), "$: missing field 'messages'"),
    ("messages not a list", _set(("messages",), "hi"), "$.messages: expected a list, got a string ('hi')"),
    ("empty messages", _set(("messages",), []), "$.messages: expected at least one message"),
    ("unknown role", _set(("messages", 1, "role"), "narrator"), "$.messages[1].role: expected a role among ['assistant', 'developer', 'function', 'system', 'tool', 'user'], got 'narrator'"),
    ("missing content", _delete(("messages", 1, "content")), "$.messages[1]: missing field 'content'"),
    ("content a number", _set(("messages", 1, "content"), 5), "$.messages[1].content: expected a string, a list of content parts or null, got a number (5)"),
    ("content part not an object", _set(("messages", 4, "content"), ["x"]), "$.messages[4].content[0]: expected a content part object, got a string ('x')"),
    ("unparsable timestamp", _set(("messages", 5, "timestamp"), "tomorrow"), "$.messages[5].timestamp: expected seconds since the epoch or an ISO-8601 date and time"),
    ("boolean timestamp", _set(("messages", 5, "timestamp"), True), "$.messages[5].timestamp: expected seconds since the epoch"),
    ("time runs backwards", _set(("messages", 4, "timestamp"), T0), "$.messages[4].timestamp: 2023-11-14T22:13:20+00:00 is before the previous message's time"),
    ("bad name", _set(("messages", 1, "name"), "<Dana>"), "$.messages[1].name: speaker '<Dana>' is not a name"),
    ("only system", _set(("messages",), [{"role": "system", "content": "x"}]), "$.messages: expected at least one user or assistant message with text"),
    ("metadata not an object", _set(("metadata",), "x"), "$.metadata: expected an object, got a string ('x')"),
    ("title not text", _set(("metadata", "title"), 3), "$.metadata.title: expected a string, got a number (3)"),
    ("not an object", lambda d: d.clear() or d.update(x=1), "$: missing field 'messages'"),
]  # fmt: skip


@pytest.mark.parametrize(("mutate", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_names_file_path_and_expectation(
    tmp_path: Path, mutate: Callable[[Any], None], expected: str
) -> None:
    doc = chat()
    mutate(doc)
    path = write(tmp_path, "c.json", doc)
    assert problem("openai-chat", path).startswith(f"{path}: {expected}")


def test_bad_jsonl_line_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "logs.jsonl", json.dumps(chat()) + "\n[1, 2]\n")
    assert problem("openai-chat", path).startswith(
        f'{path}:2: $: expected a conversation {{"messages": [...]}}, got a list'
    )
    path = write(tmp_path, "logs.jsonl", "{oops\n")
    assert problem("openai-chat", path).startswith(f"{path}:1: line 1: column 2: invalid JSON")
    path = write(tmp_path, "empty.jsonl", "\n\n")
    assert problem("openai-chat", path).startswith(f"{path}: $: expected one JSON conversation")
