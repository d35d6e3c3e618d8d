"""The expectations JSONL of the task context graph, checked, and its atlas-session/1 files.

``load_expected`` reads ``tests/data/context/task_conversations_*.jsonl`` (fields in the
README there) and refuses a bad line naming the line and the field; ``load_graph`` does the
same for the JSON ``atlas context --json`` prints; ``write_sessions`` turns the
conversations into ``atlas-session/1`` files for the command to replay.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.context_match import Text, Value
from memory_core.errors import InputError
from memory_core.harness.session_format import FORMAT, is_id, parse_conversation

NODE_TYPES = frozenset({"User", "Goal", "Constraint", "Entity"})
EDGE_TYPES = frozenset(
    {"HAS_GOAL", "SATISFIES", "CONFLICTS_WITH", "REFERENCES", "MODIFIES", "VALIDATES"}
)
EXPECT_LISTS = (
    "entities",
    "goals",
    "constraints_in_force",
    "replaced",
    "forgotten",
    "cancelled",
    "not_constraints",
)
REQUIRED_EXPECT = ("entities", "goals", "constraints_in_force", "replaced")
DEFAULT_START = "2025-01-06T09:00:00+00:00"


def load_expected(path: str | Path) -> list[dict[str, Any]]:
    """Read and check an expectations JSONL file; every problem names its line and field."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(where, f"not JSON ({error})") from None
        _check_row(row, where)
        if row["id"] in seen:
            raise InputError(
                f"{where}: $.id", f"{row['id']!r} already used on line {seen[row['id']]}"
            )
        seen[row["id"]] = number
        rows.append(row)
    return rows


def _check_row(row: Any, where: str) -> None:
    if not isinstance(row, dict):
        raise InputError(where, "a line must be a JSON object")
    for field in ("id", "kind", "turns", "expect"):
        if field not in row:
            raise InputError(f"{where}: $.{field}", "missing")
    if not isinstance(row["id"], str) or not is_id(row["id"]):
        raise InputError(f"{where}: $.id", f"{row['id']!r} is not an atlas-session id")
    if not isinstance(row["kind"], str) or not row["kind"]:
        raise InputError(f"{where}: $.kind", "must be a non-empty string")
    turns = row["turns"]
    if not isinstance(turns, list) or not turns:
        raise InputError(f"{where}: $.turns", "must be a non-empty list")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("speaker") not in ("user", "assistant"):
            raise InputError(f"{where}: $.turns[{i}].speaker", "must be 'user' or 'assistant'")
        if not isinstance(turn.get("text"), str) or not turn["text"].strip():
            raise InputError(f"{where}: $.turns[{i}].text", "must be a non-blank string")
    expect = row["expect"]
    if not isinstance(expect, dict):
        raise InputError(f"{where}: $.expect", "must be an object")
    for key in expect:
        if key not in EXPECT_LISTS:
            raise InputError(
                f"{where}: $.expect.{key}", f"unknown; allowed: {', '.join(EXPECT_LISTS)}"
            )
    for key in REQUIRED_EXPECT:
        if not isinstance(expect.get(key), list):
            raise InputError(f"{where}: $.expect.{key}", "missing or not a list")
    for key in EXPECT_LISTS:
        for i, item in enumerate(expect.get(key, [])):
            _check_item(key, item, f"{where}: $.expect.{key}[{i}]")


def _check_item(key: str, item: Any, where: str) -> None:
    if key == "goals":
        if not isinstance(item, str) or not item.strip():
            raise InputError(where, "a goal is a non-blank string")
    elif key == "entities":
        if not isinstance(item, dict) or not isinstance(item.get("label"), str):
            raise InputError(where, "an entity needs a string 'label'")
        if not isinstance(item.get("aliases", []), list):
            raise InputError(f"{where}.aliases", "must be a list of strings")
    else:
        Value.parse(item, where, needs_slot=key in ("constraints_in_force", "replaced"))


# ---------------------------------------------------------------- the graph JSON


def load_graph(graph_json: str | Path | Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The printed graph by conversation id, with node and edge fields checked."""
    data: Any = graph_json
    if isinstance(graph_json, (str, Path)):
        data = json.loads(Path(graph_json).read_text(encoding="utf-8"))
    if not isinstance(data, Mapping) or not isinstance(data.get("conversations"), list):
        raise InputError("$.conversations", "the graph JSON needs a 'conversations' list")
    graphs: dict[str, dict[str, Any]] = {}
    for i, conversation in enumerate(data["conversations"]):
        where = f"$.conversations[{i}]"
        if not isinstance(conversation, Mapping) or not isinstance(conversation.get("id"), str):
            raise InputError(f"{where}.id", "each conversation needs a string 'id'")
        for j, node in enumerate(conversation.get("nodes", [])):
            if not isinstance(node, Mapping) or node.get("type") not in NODE_TYPES:
                got = node.get("type") if isinstance(node, Mapping) else node
                raise InputError(
                    f"{where}.nodes[{j}].type", f"{got!r}; allowed: {sorted(NODE_TYPES)}"
                )
        for j, edge in enumerate(conversation.get("edges", [])):
            if not isinstance(edge, Mapping) or edge.get("type") not in EDGE_TYPES:
                got = edge.get("type") if isinstance(edge, Mapping) else edge
                raise InputError(
                    f"{where}.edges[{j}].type", f"{got!r}; allowed: {sorted(EDGE_TYPES)}"
                )
        graphs[conversation["id"]] = dict(conversation)
    return graphs


def session_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """One expected conversation as an ``atlas-session/1`` document.

    Key facts come from the expectations: each constraint in force is a fact to recall and
    each replaced value a fact to forget, with the turns that state it as evidence (a turn
    that also states the newer value is not evidence for the old one).
    """
    turns = [
        {"id": f"s1-t{i}", "speaker": turn["speaker"], "text": turn["text"]}
        for i, turn in enumerate(row["turns"], 1)
    ]
    texts = [Text.of(turn["text"]) for turn in row["turns"]]
    expect = row["expect"]
    in_force = [
        Value.parse(item, "in force", needs_slot=True) for item in expect["constraints_in_force"]
    ]
    facts: list[dict[str, Any]] = []
    for status, values in (
        ("recalled", in_force),
        ("forgotten", [Value.parse(i, "replaced", needs_slot=True) for i in expect["replaced"]]),
    ):
        for value in values:
            newer = [v for v in in_force if v.slot == value.slot] if status == "forgotten" else []
            evidence = [
                turns[i]["id"]
                for i, text in enumerate(texts)
                if value.matches(text) and not any(v.matches(text) for v in newer)
            ]
            if evidence:
                facts.append(
                    {
                        "id": f"kf{len(facts) + 1}",
                        "fact": f"The {value.slot} is {value.text}."
                        if status == "recalled"
                        else f"The {value.slot} was {value.text} (replaced).",
                        "evidence": evidence,
                        "probe": f"What is the {value.slot} now?",
                        "expect": status,
                    }
                )
    goals = expect["goals"]
    return {
        "format": FORMAT,
        "id": row["id"],
        "title": f"{row['kind']}: {goals[0] if goals else row['id']}",
        "description": "Task conversation with an expected context graph (tests/data/context).",
        "sessions": [
            {"id": "s1", "started_at": row.get("started_at", DEFAULT_START), "turns": turns}
        ],
        "key_facts": facts,
    }


def write_sessions(
    expected_file: str | Path, out_dir: str | Path, *, force: bool = False
) -> list[Path]:
    """Write every conversation as ``OUT_DIR/<id>.json``; all are validated before any is written."""
    out = Path(out_dir)
    documents = []
    for row in load_expected(expected_file):
        document = session_dict(row)
        parse_conversation(
            document, f"{expected_file}:{row['id']}"
        )  # SessionFormatError if invalid
        documents.append((out / f"{row['id']}.json", document))
    clashes = [str(path) for path, _ in documents if path.exists()]
    if clashes and not force:
        raise InputError(
            "out_dir", f"{len(clashes)} file(s) exist, e.g. {clashes[0]}; pass force=True"
        )
    out.mkdir(parents=True, exist_ok=True)
    for path, document in documents:
        path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return [path for path, _ in documents]
