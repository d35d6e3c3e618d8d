"""``atlas context FILE... --json``: session files replayed into graphs, in the shape tools
read; a bad file is refused with the session format's errors."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memory_core.cli import context as context_cmd
from memory_core.errors import SessionFormatError

pytestmark = pytest.mark.integration


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="atlas")
    context_cmd.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


def session(turns: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "format": "atlas-session/1",
        "id": "hotel-trip",
        "sessions": [
            {
                "id": "s1",
                "started_at": "2024-07-21T10:00:00+00:00",
                "turns": [
                    {"id": f"s1-t{i + 1}", "speaker": speaker, "text": text}
                    for i, (speaker, text) in enumerate(turns)
                ],
            }
        ],
        "key_facts": [],
    }


def test_json_graph_of_a_changed_constraint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trip.json"
    path.write_text(
        json.dumps(
            session(
                [
                    ("user", "Book me a hotel in Porto for 2 people, at most 180 EUR per night"),
                    ("assistant", "Sure, I will look for hotels in Porto."),
                    ("user", "Actually my budget for the hotel is 150 EUR per night"),
                ]
            )
        ),
        encoding="utf-8",
    )
    assert main(["context", str(path), "--json", "--embedder", "minilm"]) == 0
    out = json.loads(capsys.readouterr().out)
    (conversation,) = out["conversations"]
    assert conversation["id"] == "hotel-trip"
    nodes = {n["id"]: n for n in conversation["nodes"]}
    assert set(nodes[next(iter(nodes))]) == {
        "id", "type", "label", "attributes", "deprecated", "soft_deleted", "turns",
    }  # fmt: skip
    budgets = [n for n in nodes.values() if n["type"] == "Constraint" and "EUR" in n["label"]]
    in_force = [n for n in budgets if not n["deprecated"]]
    replaced = [n for n in budgets if n["deprecated"]]
    assert [n["attributes"]["value"] for n in in_force] == ["150 EUR per night"]
    assert [n["attributes"]["value"] for n in replaced] == ["180 EUR per night"]
    assert in_force[0]["turns"] == ["s1-t3"]
    conflicts = [e for e in conversation["edges"] if e["type"] == "CONFLICTS_WITH"]
    assert [(e["source"], e["target"]) for e in conflicts] == [
        (in_force[0]["id"], replaced[0]["id"])
    ]
    assert {e["type"] for e in conversation["edges"]} <= {
        "HAS_GOAL", "SATISFIES", "CONFLICTS_WITH", "REFERENCES", "MODIFIES", "VALIDATES",
    }  # fmt: skip
    assert any(n["type"] == "Goal" and n["label"] == "book hotel" for n in nodes.values())
    assert any(n["type"] == "Entity" and n["label"] == "Porto" for n in nodes.values())

    assert main(["context", str(path), "--embedder", "hashing"]) == 0
    table = capsys.readouterr().out
    assert "conversation hotel-trip" in table and "in force" in table


def test_a_bad_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    document = session([("user", "hi")])
    document["sessions"][0]["turns"][0]["text"] = ""
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(SessionFormatError, match="text"):
        main(["context", str(path), "--json", "--embedder", "hashing"])
