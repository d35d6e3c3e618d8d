"""atlas-session/1: records, schema checks, semantic checks and file-level guards."""

from __future__ import annotations

import copy
import json
import re
import tempfile
from collections.abc import Callable
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from memory_core.errors import NotFoundError, SessionFormatError
from memory_core.harness import session_format as sf

START = "2024-07-21T09:00:00+00:00"
T0 = datetime.fromisoformat(START).timestamp()
PROBLEM = re.compile(r"^.+: \$[^ ]*: .+$")


def make_doc() -> dict[str, Any]:
    return {
        "format": "atlas-session/1",
        "id": "trip",
        "title": "Trip",
        "description": "A small trip conversation.",
        "sessions": [
            {
                "id": "s1",
                "started_at": START,
                "turns": [
                    {"id": "s1-t1", "speaker": "user", "text": "I prefer rail over air."},
                    {"id": "s1-t2", "speaker": "assistant", "text": "Noted."},
                    {
                        "id": "s1-t3",
                        "speaker": "user",
                        "text": "Budget is 5000.",
                        "at": "2024-07-21T09:10:00+00:00",
                    },
                    {"id": "s1-t4", "speaker": "assistant", "text": "Got it."},
                ],
            },
            {
                "id": "s2",
                "started_at": "2024-07-23T10:00:00+02:00",
                "turns": [
                    {
                        "id": "s2-t1",
                        "speaker": "user",
                        "text": "Budget is now 6000.",
                        "at": "2024-07-23T10:00:05+02:00",
                    },
                ],
            },
        ],
        "key_facts": [
            {
                "id": "kf1",
                "fact": "prefers rail",
                "evidence": ["s1-t1"],
                "probe": "How does the user like to travel?",
            },
            {
                "id": "kf2",
                "fact": "budget 5000",
                "evidence": ["s1-t3"],
                "probe": "What is the spending limit?",
                "expect": "forgotten",
            },
            {
                "id": "kf3",
                "fact": "budget 6000",
                "evidence": ["s2-t1", "s1-t3"],
                "probe": "What is the spending limit?",
                "expect": "recalled",
            },
        ],
    }


def problems_of(doc: Any) -> list[str]:
    with pytest.raises(SessionFormatError) as info:
        sf.parse_conversation(doc, "f.json")
    assert info.value.source == "f.json"
    for problem in info.value.problems:
        assert PROBLEM.match(problem), problem
    return info.value.problems


def write(tmp_path: Path, name: str, content: str | bytes | dict[str, Any]) -> Path:
    path = tmp_path / name
    if isinstance(content, dict):
        content = json.dumps(content)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


# -- records -------------------------------------------------------------------


def test_valid_document_builds_typed_records() -> None:
    conv = sf.parse_conversation(make_doc(), "f.json")
    assert (conv.id, conv.title, conv.source) == ("trip", "Trip", "f.json")
    assert [s.id for s in conv.sessions] == ["s1", "s2"]
    assert (
        conv.sessions[1].started_at
        == datetime.fromisoformat("2024-07-23T08:00:00+00:00").timestamp()
    )
    assert [f.expect for f in conv.key_facts] == ["recalled", "forgotten", "recalled"]
    assert conv.key_facts[2].evidence == ("s2-t1", "s1-t3")
    assert [t.id for t in conv.turns()] == ["s1-t1", "s1-t2", "s1-t3", "s1-t4", "s2-t1"]


def test_missing_at_defaults_to_30_seconds_after_previous_turn() -> None:
    conv = sf.parse_conversation(make_doc(), "f.json")
    at = {t.id: t.at - T0 for t in conv.turns()}
    assert at["s1-t1"] == 0.0  # first turn: the session start
    assert at["s1-t2"] == 30.0
    assert at["s1-t3"] == 600.0  # explicit
    assert at["s1-t4"] == 630.0  # 30 s after the explicit one


def test_session_without_any_at_is_start_plus_30s_per_index() -> None:
    doc = make_doc()
    for turn in doc["sessions"][0]["turns"]:
        turn.pop("at", None)
    conv = sf.parse_conversation(doc, "f.json")
    assert [t.at - T0 for t in conv.sessions[0].turns] == [0.0, 30.0, 60.0, 90.0]


def test_optional_title_description_and_expect_default() -> None:
    doc = make_doc()
    del doc["title"], doc["description"], doc["key_facts"][0]["fact"]
    doc["key_facts"][0]["fact"] = "x"
    del doc["key_facts"][1]["expect"]
    conv = sf.parse_conversation(doc, "f.json")
    assert (conv.title, conv.description) == ("", "")
    assert conv.key_facts[1].expect == "recalled"


def test_turn_by_id() -> None:
    conv = sf.parse_conversation(make_doc(), "f.json")
    assert conv.turn_by_id("s2-t1").text == "Budget is now 6000."
    with pytest.raises(NotFoundError, match="s9-t9"):
        conv.turn_by_id("s9-t9")


def test_records_are_frozen() -> None:
    conv = sf.parse_conversation(make_doc(), "f.json")
    with pytest.raises(AttributeError):
        conv.sessions[0].turns[0].text = "changed"  # type: ignore[misc]


def test_to_dict_reads_back_equal() -> None:
    conv = sf.parse_conversation(make_doc(), "f.json")
    again = sf.parse_conversation(json.loads(json.dumps(sf.conversation_to_dict(conv))), "f.json")
    assert again == conv


def test_shipped_schema_is_package_data_and_valid_draft_2020_12() -> None:
    text = resources.files("memory_core.harness").joinpath("schema/atlas-session-1.schema.json")
    schema = json.loads(text.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert Draft202012Validator(schema).is_valid(make_doc())


# -- one test per problem kind ---------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return mutate


def _delete(path: tuple[Any, ...]) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]

    return mutate


SCHEMA_CASES: list[tuple[str, Mutation, str]] = [
    ("missing format", _delete(("format",)), "$: 'format' is a required property"),
    ("wrong format", _set(("format",), "atlas-session/2"), "$.format: 'atlas-session/1' was expected"),
    ("missing turns", _delete(("sessions", 0, "turns")), "$.sessions[0]: 'turns' is a required property"),
    ("no sessions", _set(("sessions",), []), "$.sessions: [] should be non-empty"),
    ("text wrong type", _set(("sessions", 0, "turns", 1, "text"), 5), "$.sessions[0].turns[1].text: 5 is not of type 'string'"),
    ("at wrong type", _set(("sessions", 0, "turns", 1, "at"), 17), "$.sessions[0].turns[1].at: 17 is not of type 'string'"),
    ("bad id", _set(("sessions", 1, "id"), "session two"), "$.sessions[1].id: 'session two' does not match"),
    ("long speaker", _set(("sessions", 0, "turns", 0, "speaker"), "x" * 65), "$.sessions[0].turns[0].speaker: 'xxxxx"),
    ("unknown field", _set(("sessions", 0, "turns", 0, "mood"), "happy"), "$.sessions[0].turns[0]: Additional properties are not allowed ('mood' was unexpected)"),
    ("bad expect", _set(("key_facts", 1, "expect"), "remembered"), "$.key_facts[1].expect: 'remembered' is not one of ['recalled', 'forgotten']"),
    ("no evidence", _set(("key_facts", 0, "evidence"), []), "$.key_facts[0].evidence: [] should be non-empty"),
    ("repeated evidence", _set(("key_facts", 0, "evidence"), ["s1-t1", "s1-t1"]), "$.key_facts[0].evidence: ['s1-t1', 's1-t1'] has non-unique elements"),
    ("not an object", lambda doc: doc.clear(), "$: 'format' is a required property"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mutate", "expected"), [c[1:] for c in SCHEMA_CASES], ids=[c[0] for c in SCHEMA_CASES]
)
def test_schema_problem_names_its_json_path(mutate: Mutation, expected: str) -> None:
    doc = make_doc()
    mutate(doc)
    assert any(p.startswith(f"f.json: {expected}") for p in problems_of(doc)), problems_of(doc)


SEMANTIC_CASES: list[tuple[str, Mutation, str]] = [
    ("duplicate session id", _set(("sessions", 1, "id"), "s1"), "$.sessions[1].id: duplicate session id 's1' (first used at $.sessions[0].id)"),
    ("duplicate turn id", _set(("sessions", 1, "turns", 0, "id"), "s1-t2"), "$.sessions[1].turns[0].id: duplicate turn id 's1-t2' (first used at $.sessions[0].turns[1].id)"),
    ("duplicate fact id", _set(("key_facts", 2, "id"), "kf1"), "$.key_facts[2].id: duplicate key fact id 'kf1'"),
    ("unknown evidence", _set(("key_facts", 2, "evidence"), ["s2-t1", "s7-t1"]), "$.key_facts[2].evidence[1]: unknown turn id 's7-t1'"),
    ("naive start", _set(("sessions", 0, "started_at"), "2024-07-21T09:00:00"), "$.sessions[0].started_at: '2024-07-21T09:00:00' is not an ISO-8601 date and time with a timezone"),
    ("garbage at", _set(("sessions", 0, "turns", 2, "at"), "yesterday"), "$.sessions[0].turns[2].at: 'yesterday' is not an ISO-8601"),
    ("date only", _set(("sessions", 0, "turns", 2, "at"), "2024-07-21"), "$.sessions[0].turns[2].at: '2024-07-21' is not an ISO-8601"),
    ("at before start", _set(("sessions", 1, "turns", 0, "at"), "2024-07-23T07:59:00+00:00"), "$.sessions[1].turns[0].at: 2024-07-23T07:59:00+00:00 is before the session start"),
    ("at goes back", _set(("sessions", 0, "turns", 3, "at"), "2024-07-21T09:05:00+00:00"), "$.sessions[0].turns[3].at: 2024-07-21T09:05:00+00:00 is before the previous turn at 2024-07-21T09:10:00+00:00"),
    ("sessions out of order", _set(("sessions", 1, "started_at"), "2024-07-21T09:08:00+00:00"), "$.sessions[1].started_at: session starts at 2024-07-21T09:08:00+00:00, before the previous session's last turn"),
    ("speaker with a symbol", _set(("sessions", 0, "turns", 0, "speaker"), "user!"), "$.sessions[0].turns[0].speaker: 'user!' is not a speaker name"),
    ("empty turn text", _set(("sessions", 0, "turns", 0, "text"), "  \n"), "$.sessions[0].turns[0].text: text is empty"),
    ("empty fact", _set(("key_facts", 0, "fact"), ""), "$.key_facts[0].fact: fact is empty"),
    ("empty probe", _set(("key_facts", 1, "probe"), " "), "$.key_facts[1].probe: probe is empty"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mutate", "expected"), [c[1:] for c in SEMANTIC_CASES], ids=[c[0] for c in SEMANTIC_CASES]
)
def test_semantic_problem_names_its_json_path(mutate: Mutation, expected: str) -> None:
    doc = make_doc()
    mutate(doc)
    problems = problems_of(doc)
    assert any(p.startswith(f"f.json: {expected}") for p in problems), problems


def test_all_problems_are_reported_at_once() -> None:
    doc = make_doc()
    for case in (*SCHEMA_CASES[4:9], *SEMANTIC_CASES):
        if case[0] not in ("garbage at", "date only"):  # they overwrite "at goes back"'s anchor
            case[1](doc)
    problems = problems_of(doc)
    paths = {p.split(": ")[1] for p in problems}
    assert {
        "$.sessions[0].turns[1].text",
        "$.sessions[1].id",
        "$.sessions[0].turns[0].speaker",
        "$.key_facts[2].evidence[1]",
        "$.sessions[0].started_at",
        "$.key_facts[1].probe",
    } <= paths
    assert len(problems) >= 12
    # problems come out ordered by JSON path
    assert problems.index(next(p for p in problems if "$.key_facts" in p)) < problems.index(
        next(p for p in problems if "$.sessions" in p)
    )


def test_error_message_counts_problems() -> None:
    doc = make_doc()
    doc["sessions"][1]["id"] = "s1"
    doc["key_facts"][0]["probe"] = ""
    with pytest.raises(SessionFormatError, match=r"f.json: 2 problem\(s\)"):
        sf.parse_conversation(doc, "f.json")


def test_long_schema_messages_are_truncated() -> None:
    doc = make_doc()
    doc["sessions"] = {"huge": "x" * 5000}
    problem = next(p for p in problems_of(doc) if p.startswith("f.json: $.sessions: "))
    assert problem.endswith("...")
    assert len(problem) < 300


# -- files ------------------------------------------------------------------------


def test_load_and_validate_file(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.json", make_doc())
    assert sf.load_conversation(path).source == str(path)
    assert sf.validate_file(path) == []


def test_validate_file_prefixes_problems_with_the_file(tmp_path: Path) -> None:
    doc = make_doc()
    doc["key_facts"][0]["evidence"] = ["nope"]
    path = write(tmp_path, "bad.json", doc)
    assert sf.validate_file(path) == [f"{path}: $.key_facts[0].evidence[0]: unknown turn id 'nope'"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"format": ', "line 1: column 12: invalid JSON"),
        (b'{"id": "caf\xe9"}', "$: not UTF-8 text (invalid byte at offset 11)"),
        ('{"id": "a", "id": "b"}', "$: duplicate JSON key 'id'"),
        ('{"id": NaN}', "$: invalid JSON: 'NaN is not allowed in JSON'"),
        ("[" * 100_000, "$: JSON nests 100,000 levels deep; at most 64 allowed"),
    ],
    ids=["syntax", "not-utf8", "duplicate-key", "nan", "deep"],
)
def test_unreadable_json_is_a_problem(tmp_path: Path, content: str | bytes, expected: str) -> None:
    path = write(tmp_path, "x.json", content)
    (problem,) = sf.validate_file(path)
    assert problem.startswith(f"{path}: {expected}")


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "bom.json", b"\xef\xbb\xbf" + json.dumps(make_doc()).encode())
    assert sf.validate_file(path) == []


def test_size_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.json", make_doc())
    size = path.stat().st_size
    assert sf.validate_file(path, max_bytes=size) == []
    (problem,) = sf.validate_file(path, max_bytes=size - 1)
    assert problem == f"{path}: $: file is larger than the limit of {size - 1} bytes"
    assert sf.DEFAULT_MAX_BYTES == 20 * 1024 * 1024


def test_missing_file_is_a_problem(tmp_path: Path) -> None:
    (problem,) = sf.validate_file(tmp_path / "absent.json")
    assert "$: cannot read the file (No such file or directory)" in problem


def test_load_conversations_expands_folders_sorted(tmp_path: Path) -> None:
    for name in ("b", "a"):
        doc = make_doc()
        doc["id"] = f"conv-{name}"
        write(tmp_path, f"{name}.json", doc)
    write(tmp_path, "notes.txt", "ignored")
    extra = tmp_path / "sub"
    extra.mkdir()
    single = write(extra, "c.json", {**make_doc(), "id": "conv-c"})
    conversations = sf.load_conversations([tmp_path, single, tmp_path / "a.json"])
    assert [c.id for c in conversations] == ["conv-a", "conv-b", "conv-c"]


def test_load_conversations_rejects_duplicate_ids_and_reports_every_file(tmp_path: Path) -> None:
    write(tmp_path, "a.json", make_doc())
    write(tmp_path, "b.json", make_doc())
    bad = make_doc()
    bad["id"] = "other"
    bad["sessions"][0]["turns"][0]["text"] = ""
    write(tmp_path, "c.json", bad)
    with pytest.raises(SessionFormatError) as info:
        sf.load_conversations([tmp_path])
    assert info.value.problems == [
        f"{tmp_path / 'b.json'}: $.id: conversation id 'trip' is already used by {tmp_path / 'a.json'}",
        f"{tmp_path / 'c.json'}: $.sessions[0].turns[0].text: text is empty",
    ]


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SessionFormatError, match="folder holds no"):
        sf.load_conversations([tmp_path])


# -- robustness ----------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
INTERESTING_STRINGS = st.sampled_from(
    ["", " ", "s1-t1", "s2-t1", "kf1", "forgotten", "2024-07-20T09:00:00+00:00", "2024-07-21T09:00:00",
     "9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "atlas-session/1", "user"]
)  # fmt: skip


def _containers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if isinstance(value, dict | list) else []
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in children:
        found += _containers(child, (*path, key))
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_mutations_load_or_raise_session_format_error(data: st.DataObject) -> None:
    doc = copy.deepcopy(make_doc())
    for _ in range(data.draw(st.integers(1, 4))):
        containers = _containers(doc)
        if not containers:
            break
        path = data.draw(st.sampled_from(containers))
        target: Any = doc
        for part in path:
            target = target[part]
        keys = list(target.keys()) if isinstance(target, dict) else list(range(len(target)))
        action = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        value = data.draw(JSON_VALUES | INTERESTING_STRINGS)
        if action == "insert" or not keys:
            if isinstance(target, dict):
                target[data.draw(st.text(max_size=8) | st.sampled_from(["at", "expect", "id"]))] = (
                    value
                )
            else:
                target.insert(data.draw(st.integers(0, len(target))), value)
        elif action == "delete":
            del target[data.draw(st.sampled_from(keys))]
        else:
            target[data.draw(st.sampled_from(keys))] = value
    try:
        conv = sf.parse_conversation(doc, "f.json")
    except SessionFormatError as exc:
        assert exc.problems
    else:
        assert conv.sessions


@settings(max_examples=150, deadline=None)
@given(
    cut=st.integers(0, 2000),
    noise=st.binary(min_size=1, max_size=8),
    replace=st.booleans(),
)
def test_random_byte_damage_loads_or_raises_session_format_error(
    cut: int, noise: bytes, replace: bool
) -> None:
    raw = json.dumps(make_doc()).encode()
    cut = min(cut, len(raw))
    damaged = raw[:cut] + noise + raw[cut + (len(noise) if replace else 0) :]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "damaged.json"
        path.write_bytes(damaged)
        try:
            sf.load_conversation(path)
        except SessionFormatError as exc:
            assert exc.problems


@pytest.mark.parametrize(
    "name",
    [
        "user",
        "assistant",
        "Caroline",
        "Zoë O'Neill",
        "J. R. R. Tolkien",
        "プリヤ",
        "प्रिया",
        "bot_2",
        "x" * 64,
    ],
)
def test_display_names_are_speakers_as_said(name: str) -> None:
    doc = make_doc()
    doc["sessions"][0]["turns"][0]["speaker"] = name
    assert sf.parse_conversation(doc, "f.json").sessions[0].turns[0].speaker == name


@pytest.mark.parametrize(
    "name", ["", " user", "user ", "-dash", "a/b", "tab\tname", "emoji😀", "x" * 65]
)
def test_names_with_symbols_or_bad_edges_are_not_speakers(name: str) -> None:
    assert not sf.is_speaker(name)
    doc = make_doc()
    doc["sessions"][0]["turns"][0]["speaker"] = name
    assert any("$.sessions[0].turns[0].speaker" in p for p in problems_of(doc))
