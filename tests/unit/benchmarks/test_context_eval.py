"""The task-context-graph scorer on hand-made graphs, and the shipped conversations themselves."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from benchmarks import context_eval
from benchmarks.context_eval import (
    load_expected,
    load_graph,
    score,
    score_conversation,
    write_sessions,
)
from benchmarks.context_match import Text, Value
from memory_core.errors import InputError
from memory_core.harness.session_format import validate_file

DATA = Path(__file__).parents[2] / "data" / "context"
SPLITS = {name: DATA / f"task_conversations_{name}.jsonl" for name in ("dev", "test")}
#: both sets: the freehand conversations and the ones rendered from task state scripts
FILES = {f"{kind}_{name}": DATA / f"task_{kind}_{name}.jsonl" for kind in ("conversations", "scripts") for name in ("dev", "test")}  # fmt: skip

EXPECT: dict[str, Any] = {
    "entities": [
        {"label": "Munich", "aliases": ["München"], "type": "place"},
        {"label": "NVM-48211", "aliases": [], "type": "id"},
    ],
    "goals": ["book a hotel for the trade fair"],
    "constraints_in_force": [
        {"slot": "hotel limit", "value": "200 EUR per night", "number": 200, "unit": "EUR"}
    ],
    "replaced": [
        {"slot": "hotel limit", "value": "180 EUR per night", "number": 180, "unit": "EUR"}
    ],
    "forgotten": ["rental car"],
    "cancelled": ["spa day"],
    "not_constraints": [{"value": "colleague's limit", "number": 300, "unit": "EUR"}],
}


def node(id_: str, type_: str, label: str, **fields: Any) -> dict[str, Any]:
    return {"id": id_, "type": type_, "label": label, "attributes": fields.pop("attributes", {}),
            "deprecated": False, "soft_deleted": False, "turns": ["s1-t1"], **fields}  # fmt: skip


def edge(source: str, target: str, type_: str, *, deprecated: bool = False) -> dict[str, Any]:
    return {"source": source, "target": target, "type": type_, "deprecated": deprecated}


def perfect() -> dict[str, Any]:
    return {
        "nodes": [
            node("u", "User", "user"),
            node("g", "Goal", "book a hotel"),
            node("e1", "Entity", "München", attributes={"kind": "place"}),
            node("e2", "Entity", "booking", attributes={"reference": "NVM-48211"}),
            node("e3", "Entity", "Jonas", attributes={"kind": "person"}),
            node(
                "c1",
                "Constraint",
                "hotel limit",
                attributes={"value": 180, "unit": "EUR"},
                deprecated=True,
            ),
            node("c2", "Constraint", "hotel limit: 200 EUR per night"),
            node("c3", "Constraint", "rental car", soft_deleted=True),
        ],
        "edges": [
            edge("u", "g", "HAS_GOAL"),
            edge("g", "e1", "REFERENCES"),
            edge("g", "c1", "SATISFIES", deprecated=True),
            edge("g", "c2", "SATISFIES"),
            edge("c2", "c1", "CONFLICTS_WITH"),
        ],
    }


def rates(graph: dict[str, Any], expect: dict[str, Any] = EXPECT) -> dict[str, float | None]:
    return {name: m["rate"] for name, m in score_conversation(expect, graph)["metrics"].items()}


def with_nodes(
    graph: dict[str, Any], drop: set[str] = frozenset(), add: tuple[dict[str, Any], ...] = ()
) -> dict[str, Any]:  # type: ignore[assignment]
    return {"nodes": [n for n in graph["nodes"] if n["id"] not in drop] + list(add),
            "edges": [e for e in graph["edges"] if e["source"] not in drop and e["target"] not in drop]}  # fmt: skip


def test_a_perfect_graph_scores_one_everywhere() -> None:
    assert set(rates(perfect()).values()) == {1.0}


def test_an_empty_graph_finds_nothing_but_passes_what_must_be_absent() -> None:
    got = rates({"nodes": [], "edges": []})
    assert got["entity_recall"] == got["in_force"] == got["replaced"] == got["goal_coverage"] == 0.0
    assert got["forgotten"] == got["cancelled"] == got["not_constraints"] == 1.0


def test_a_graph_without_the_replaced_value_misses_the_replacement_only() -> None:
    got = rates(with_nodes(perfect(), drop={"c1"}))
    assert got["replaced"] == 0.0
    assert got["in_force"] == got["in_force_unique"] == 1.0


def test_an_old_value_left_active_is_not_replaced() -> None:
    graph = perfect()
    graph["nodes"][5]["deprecated"] = False
    graph["edges"] = [e for e in graph["edges"] if e["type"] not in ("CONFLICTS_WITH", "SATISFIES")]
    result = score_conversation(EXPECT, graph)
    assert result["metrics"]["replaced"]["rate"] == 0.0
    assert result["items"]["replaced"][0]["still"] == ["c1"]


@pytest.mark.parametrize("how", ["conflict edge", "retired SATISFIES edge"])
def test_a_replacement_may_be_shown_by_edges_alone(how: str) -> None:
    graph = perfect()
    graph["nodes"][5]["deprecated"] = False
    if how == "conflict edge":
        graph["edges"] = [e for e in graph["edges"] if e["type"] != "SATISFIES"]
    else:
        graph["edges"] = [e for e in graph["edges"] if e["type"] != "CONFLICTS_WITH"]
    assert rates(graph)["replaced"] == 1.0


def test_the_colleagues_limit_kept_as_mine_is_a_false_constraint() -> None:
    mine = node("c9", "Constraint", "hotel limit 300 euros a night")
    graph = with_nodes(perfect(), add=(mine,))
    assert rates(graph)["not_constraints"] == 0.0
    report = score_conversation(EXPECT, graph)["items"]["not_constraints"][0]
    assert report["false_constraints"] == ["c9"]
    theirs = node("c9", "Constraint", "hotel limit 300 EUR", attributes={"owner": "Jonas"})
    assert rates(with_nodes(perfect(), add=(theirs,)))["not_constraints"] == 1.0
    as_entity = node("e9", "Entity", "Jonas's limit: 300 EUR")
    assert rates(with_nodes(perfect(), add=(as_entity,)))["not_constraints"] == 1.0


def test_soft_deleted_nodes_count_as_forgotten_and_never_as_in_force() -> None:
    graph = perfect()
    graph["nodes"][7]["soft_deleted"] = False
    assert rates(graph)["forgotten"] == 0.0
    graph["nodes"][7]["soft_deleted"] = True
    graph["nodes"][6]["soft_deleted"] = True
    got = rates(graph)
    assert got["forgotten"] == 1.0
    assert got["in_force"] == 0.0


def test_a_forgotten_thing_in_an_entity_label_must_go_too() -> None:
    car = node("e8", "Entity", "Rental car from Sixt")
    assert rates(with_nodes(perfect(), add=(car,)))["forgotten"] == 0.0
    merely_mentioned = node("e8", "Entity", "Sixt", attributes={"note": "rental car desk"})
    assert rates(with_nodes(perfect(), add=(merely_mentioned,)))["forgotten"] == 1.0


def test_a_restated_value_must_stay_one_node_without_a_conflict() -> None:
    twice = with_nodes(perfect(), add=(node("c4", "Constraint", "limit 200 euros per night"),))
    got = rates(twice)
    assert got["in_force"] == 1.0 and got["in_force_unique"] == 0.0
    self_conflict = with_nodes(
        perfect(), add=(node("c4", "Constraint", "200 EUR", deprecated=True),)
    )
    self_conflict["edges"].append(edge("c2", "c4", "CONFLICTS_WITH"))
    assert rates(self_conflict)["in_force_unique"] == 0.0


def test_cancelled_things_may_stay_only_marked_as_cancelled() -> None:
    wanted = with_nodes(perfect(), add=(node("c5", "Constraint", "spa day on Saturday"),))
    assert rates(wanted)["cancelled"] == 0.0
    marked = with_nodes(
        perfect(), add=(node("c5", "Constraint", "spa day", attributes={"status": "cancelled"}),)
    )
    assert rates(marked)["cancelled"] == 1.0


@pytest.mark.parametrize(
    ("written", "value", "unit", "hit"),
    [
        ("two hundred euros a night", 200, "EUR", True),
        ("€200/night", 200, "EUR", True),
        ("200 EUR per night", 200, "euros", True),
        ("EUR 200", 200, "EUR", True),
        ("200 USD per night", 200, "EUR", False),
        ("limit 200", 200, "EUR", True),
        ("1,650 euros", 1650, "EUR", True),
        ("under ten grand", 10000, "GBP", True),
        ("mileage below 40k", 40000, "mile", True),
        ("1600/mo", 1600, "USD", True),
        ("party of four", 4, "people", True),
        ("4 rooms", 4, "people", False),
        ("62 m²", 62, "sqm", True),
        ("79.50 EUR", 79.5, "EUR", True),
        ("a hundred and eighty", 18, None, False),
        ("Mondays at 4:30", 30, "minute", False),
    ],
)
def test_numbers_are_compared_as_numbers_with_normalised_units(
    written: str, value: float, unit: str | None, hit: bool
) -> None:
    assert (
        Value.parse({"value": "x", "number": value, "unit": unit}, "t").matches(Text.of(written))
        is hit
    )


@pytest.mark.parametrize(
    ("written", "value", "hit"),
    [
        ("Flight on 15 November", "the 15th", True),
        ("weekly on Tuesday", "Tuesdays", True),
        ("District: Neukolln", "Neukölln", True),
        ("ORD 20240721 889", "ORD-20240721-889", True),
        ("order 889", "ORD-20240721-889", False),
        ("140 EUR", "14th", False),
        ("SF-Express, COD", "SF Express", True),
    ],
)
def test_text_values_match_as_word_sequences(written: str, value: str, hit: bool) -> None:
    assert Value(value).matches(Text.of(written)) is hit


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def row(id_: str, kind: str) -> dict[str, Any]:
    turns = [{"speaker": "user", "text": "Hotel limit 180 euros."}, {"speaker": "assistant", "text": "OK."},
             {"speaker": "user", "text": "Make it 200."}]  # fmt: skip
    return {"id": id_, "kind": kind, "turns": turns, "expect": EXPECT}


def test_score_reports_per_kind_and_scores_missing_conversations_as_empty(tmp_path: Path) -> None:
    expected = write_jsonl(tmp_path / "e.jsonl", [row("a", "trip"), row("b", "order")])
    graph = {"conversations": [{"id": "a", **perfect()}]}
    report = score(expected, graph)
    assert report["missing"] == ["b"]
    assert report["per_kind"]["trip"]["in_force"]["rate"] == 1.0
    assert report["per_kind"]["order"]["in_force"]["rate"] == 0.0
    assert report["metrics"]["in_force"] == {"hits": 1, "total": 2, "rate": 0.5}
    assert report["false_constraints"] == 0
    table = context_eval.render_table(report)
    assert table.splitlines()[0].startswith("kind") and "missing from the graph" in table


def test_cli_prints_a_table_or_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = write_jsonl(tmp_path / "e.jsonl", [row("a", "trip")])
    graph = tmp_path / "g.json"
    graph.write_text(json.dumps({"conversations": [{"id": "a", **perfect()}]}), encoding="utf-8")
    assert context_eval.main([str(expected), str(graph)]) == 0
    assert "1.00 (1/1)" in capsys.readouterr().out
    assert context_eval.main([str(expected), str(graph), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["replaced"]["rate"] == 1.0


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r["expect"]["constraints_in_force"][0].update(unit="parsecs"), "unit"),
        (lambda r: r["expect"]["replaced"][0].pop("slot"), "slot"),
        (lambda r: r["turns"][0].update(speaker="system"), "speaker"),
        (lambda r: r.update(id="has space"), "$.id"),
        (lambda r: r["expect"].update(extra=[]), "extra"),
    ],
)
def test_bad_expectations_are_refused_naming_the_field(
    tmp_path: Path, mutate: Any, field: str
) -> None:
    bad = json.loads(json.dumps(row("a", "trip")))
    mutate(bad)
    with pytest.raises(InputError, match=re.escape(field)):
        load_expected(write_jsonl(tmp_path / "e.jsonl", [bad]))


def test_bad_graph_json_is_refused_naming_the_field() -> None:
    with pytest.raises(InputError, match=r"nodes\[0\]\.type"):
        load_graph(
            {"conversations": [{"id": "a", "nodes": [{"id": "n", "type": "Thing"}], "edges": []}]}
        )
    with pytest.raises(InputError, match="conversations"):
        load_graph({"graphs": []})


# ---------------------------------------------------------------- the shipped conversations


@pytest.fixture(scope="module")
def shipped() -> dict[str, list[dict[str, Any]]]:
    return {name: load_expected(path) for name, path in SPLITS.items()}


@pytest.fixture(scope="module")
def every_row() -> list[dict[str, Any]]:
    return [row for path in FILES.values() for row in load_expected(path)]


def test_ids_are_unique_across_every_file(every_row: list[dict[str, Any]]) -> None:
    ids = [r["id"] for r in every_row]
    assert len(ids) >= 90 and sorted({i for i in ids if ids.count(i) > 1}) == []


def test_shipped_files_parse_and_have_the_promised_shape(
    shipped: dict[str, list[dict[str, Any]]],
) -> None:
    rows = shipped["dev"] + shipped["test"]
    assert len(rows) >= 40 and len(shipped["test"]) >= 12
    assert len({r["id"] for r in rows}) == len(rows)
    by_kind: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r["id"])
        assert 6 <= len(r["turns"]) <= 14, r["id"]
        assert {t["speaker"] for t in r["turns"]} == {"user", "assistant"}, r["id"]
        assert r["expect"]["replaced"] and r["expect"]["constraints_in_force"], r["id"]
    assert len(by_kind) >= 8
    assert {r["kind"] for r in shipped["test"]} == set(by_kind)


def test_every_expected_value_is_said_in_its_conversation(
    every_row: list[dict[str, Any]],
) -> None:
    """A builder can only find what was said; an expectation nobody said is a data bug."""
    unsaid = []
    for r in every_row:
        said = Text.of("\n".join(t["text"] for t in r["turns"]))
        expect = r["expect"]
        values = [Value(e["label"], aliases=tuple(e["aliases"])) for e in expect["entities"]]
        for key in (
            "constraints_in_force",
            "replaced",
            "forgotten",
            "cancelled",
            "not_constraints",
        ):
            values += [
                Value.parse(i, key, needs_slot=key in ("constraints_in_force", "replaced"))
                for i in expect.get(key, [])
            ]
        unsaid += [f"{r['id']}: {v.text}" for v in values if not v.matches(said)]
    assert unsaid == []


def test_user_turns_share_no_four_word_sequence_across_conversations(
    every_row: list[dict[str, Any]],
) -> None:
    """The conversations aim at kinds of talk, so no sentence frame is reused between them,
    within a set or between the two sets."""
    owners: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for r in every_row:
        for turn in r["turns"]:
            if turn["speaker"] == "user":
                words = re.findall(r"[a-z0-9']+", turn["text"].lower())
                for i in range(len(words) - 3):
                    owners[tuple(words[i : i + 4])].add(r["id"])
    assert {" ".join(k): sorted(v) for k, v in owners.items() if len(v) > 1} == {}


@pytest.mark.parametrize("split", sorted(FILES))
def test_shipped_files_convert_to_valid_atlas_session_files(split: str, tmp_path: Path) -> None:
    paths = write_sessions(FILES[split], tmp_path)
    rows = load_expected(FILES[split])
    assert len(paths) == len(rows)
    for path, r in zip(paths, rows, strict=True):
        assert validate_file(path) == [], path
        document = json.loads(path.read_text(encoding="utf-8"))
        kinds = {"recalled"} | ({"forgotten"} if r["expect"]["replaced"] else set())
        assert {f["expect"] for f in document["key_facts"]} == kinds, path.name
    with pytest.raises(InputError, match="exist"):
        write_sessions(FILES[split], tmp_path)
    assert len(write_sessions(FILES[split], tmp_path, force=True)) == len(paths)


def graph_from(rows: list[dict[str, Any]], *, replaced_deprecated: bool) -> dict[str, Any]:
    """The graph the expectations describe: entities, values in force, replaced values."""
    conversations = []
    for r in rows:
        expect, nodes = r["expect"], [node("g", "Goal", "goal")]
        nodes += [node(f"e{i}", "Entity", e["label"]) for i, e in enumerate(expect["entities"])]
        for prefix, key, deprecated in (
            ("c", "constraints_in_force", False),
            ("r", "replaced", replaced_deprecated),
        ):
            nodes += [
                node(
                    f"{prefix}{i}",
                    "Constraint",
                    c["value"],
                    attributes={"unit": c.get("unit")},
                    deprecated=deprecated,
                )
                for i, c in enumerate(expect[key])
            ]
        conversations.append({"id": r["id"], "nodes": nodes, "edges": []})
    return {"conversations": conversations}


@pytest.mark.parametrize("split", sorted(FILES))
def test_the_graph_the_expectations_describe_scores_one(split: str) -> None:
    """The expectations agree with each other: no value in force is also replaced or someone else's."""
    report = score(FILES[split], graph_from(load_expected(FILES[split]), replaced_deprecated=True))
    assert {
        name: m["rate"] for name, m in report["metrics"].items() if name != "goal_coverage"
    } == {name: 1.0 for name in context_eval.METRICS if name != "goal_coverage"}


def test_a_graph_that_never_deprecates_fails_every_replacement() -> None:
    report = score(
        SPLITS["dev"], graph_from(load_expected(SPLITS["dev"]), replaced_deprecated=False)
    )
    assert report["metrics"]["replaced"]["rate"] == 0.0
    assert report["metrics"]["in_force"]["rate"] == 1.0
