"""Score a task context graph against what a person expects at the end of each conversation.

The expectations live in ``tests/data/context/task_conversations_{dev,test}.jsonl`` (see the
README there); the graph is the JSON that ``atlas context FILE... --json`` prints (issue #24,
point 6). Only that JSON is read, so any builder can be scored: values are matched by what
they say, never by the builder's slot names or node ids.

    python -m benchmarks.context_eval EXPECTED.jsonl GRAPH.json [--json]
    python -m benchmarks.context_eval EXPECTED.jsonl --write-sessions DIR [--force]

The second form writes each conversation as an ``atlas-session/1`` file, so the command can
replay them. Matching rules (numbers compared as numbers with normalised units, token
sequences for text) are in ``benchmarks/context_match.py``; reading the files and writing
the sessions in ``benchmarks/context_data.py``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.context_data import load_expected, load_graph, write_sessions
from benchmarks.context_match import NodeView, Value, has_marker, is_someone_elses

METRICS = (
    "entity_recall",
    "goal_coverage",
    "in_force",
    "in_force_unique",
    "replaced",
    "forgotten",
    "cancelled",
    "not_constraints",
)


class _Graph:
    """Node views plus the edge facts the rules need: retired SATISFIES edges, conflict sources."""

    def __init__(self, graph: Mapping[str, Any]) -> None:
        self.nodes = [NodeView.of(node) for node in graph.get("nodes", [])]
        satisfies: dict[str, list[bool]] = defaultdict(list)
        self.conflict_sources: dict[str, set[str]] = defaultdict(set)
        self.conflicts: set[tuple[str, str]] = set()
        for edge in graph.get("edges", []):
            source, target = str(edge.get("source")), str(edge.get("target"))
            if edge["type"] == "SATISFIES":
                for end in (source, target):
                    satisfies[end].append(bool(edge.get("deprecated", False)))
            elif edge["type"] == "CONFLICTS_WITH":
                self.conflict_sources[target].add(source)
                self.conflicts.add((source, target))
        self.by_id = {node.id: node for node in self.nodes}
        # the seed deprecates the old constraint's SATISFIES edge, not always the node
        for node in self.nodes:
            flags = satisfies.get(node.id, [])
            node.retired = bool(flags) and all(flags)

    def of_type(self, *types: str) -> list[NodeView]:
        return [node for node in self.nodes if node.type in types]

    def superseded(self, node: NodeView, slot: list[Value]) -> bool:
        """Deprecated, its SATISFIES edges retired, or the target of a CONFLICTS_WITH from a
        node that states another value of the same slot (any node when the slot has no other)."""
        if node.deprecated or node.retired:
            return True
        sources = [self.by_id[s] for s in self.conflict_sources.get(node.id, ()) if s in self.by_id]
        return any(not slot or any(v.matches(s.text) for v in slot) for s in sources)


# ---------------------------------------------------------------- scoring


def _rate(hits: int, total: int) -> dict[str, Any]:
    return {"hits": hits, "total": total, "rate": hits / total if total else None}


def _entities(g: _Graph, entities: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for entity in entities:
        value = Value(entity["label"], aliases=tuple(entity.get("aliases", [])))
        hit = any(node.active and value.matches(node.text) for node in g.nodes)
        found.append({"label": entity["label"], "hit": hit})
    return found


def _in_force(g: _Graph, values: list[Value]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Held by an active Constraint; unique when by exactly one that conflicts with no twin."""
    held_items, unique_items = [], []
    for value in values:
        same = [node for node in g.of_type("Constraint") if value.matches(node.text)]
        held = [node.id for node in same if node.active]
        twins = {node.id for node in same}
        self_conflict = any(a in twins and b in twins for a, b in g.conflicts)
        held_items.append({"value": value.text, "hit": bool(held), "nodes": held})
        unique = len(held) == 1 and not self_conflict
        unique_items.append({"value": value.text, "hit": unique, "active_nodes": len(held)})
    return held_items, unique_items


def _replaced(g: _Graph, in_force: list[Value], replaced: list[Value]) -> list[dict[str, Any]]:
    """Kept as superseded, and in no active Constraint that does not also state the new value."""
    found = []
    for value in replaced:
        slot = [v for v in in_force + replaced if v.slot == value.slot and v is not value]
        current = [v for v in in_force if v.slot == value.slot]
        held = [
            node
            for node in g.of_type("Constraint")
            if not node.soft_deleted and value.matches(node.text)
        ]
        superseded = {node.id for node in held if g.superseded(node, slot)}
        still = [
            node.id
            for node in held
            if node.active
            and node.id not in superseded
            and not any(v.matches(node.text) for v in current)
        ]
        found.append({"value": value.text, "hit": bool(superseded) and not still, "still": still})
    return found


def _forgotten(g: _Graph, values: list[Value]) -> list[dict[str, Any]]:
    """Soft-deleted or absent: no live node is named by it, no live Goal or Constraint holds it."""
    found = []
    for value in values:
        left = [
            node.id
            for node in g.nodes
            if not node.soft_deleted
            and (
                value.matches(node.label)
                or (node.type in ("Constraint", "Goal") and value.matches(node.text))
            )
        ]
        found.append({"value": value.text, "hit": not left, "left": left})
    return found


def _cancelled(g: _Graph, values: list[Value]) -> list[dict[str, Any]]:
    """No active Goal or Constraint holds it, unless that node says it is cancelled."""
    found = []
    for value in values:
        left = [
            node.id
            for node in g.of_type("Goal", "Constraint")
            if node.active and value.matches(node.text) and not has_marker(node.text)
        ]
        found.append({"value": value.text, "hit": not left, "left": left})
    return found


def _not_constraints(g: _Graph, values: list[Value]) -> list[dict[str, Any]]:
    """No active Constraint of the user holds it (one owned by someone else may)."""
    found = []
    for value in values:
        wrong = [
            node.id
            for node in g.of_type("Constraint")
            if node.active and value.matches(node.text) and not is_someone_elses(node.attributes)
        ]
        found.append({"value": value.text, "hit": not wrong, "false_constraints": wrong})
    return found


def score_conversation(expect: Mapping[str, Any], graph: Mapping[str, Any]) -> dict[str, Any]:
    """Per-item results (``items``) and hits/total/rate per metric (``metrics``) for one graph."""
    g = _Graph(graph)

    def values(key: str) -> list[Value]:
        slotted = key in ("constraints_in_force", "replaced")
        return [Value.parse(item, key, needs_slot=slotted) for item in expect.get(key, [])]

    in_force = values("constraints_in_force")
    active_goals = sum(node.active for node in g.of_type("Goal"))
    items: dict[str, list[dict[str, Any]]] = {
        "entity_recall": _entities(g, expect["entities"]),
        "goal_coverage": [
            {"goal": goal, "hit": i < active_goals} for i, goal in enumerate(expect["goals"])
        ],
        "replaced": _replaced(g, in_force, values("replaced")),
        "forgotten": _forgotten(g, values("forgotten")),
        "cancelled": _cancelled(g, values("cancelled")),
        "not_constraints": _not_constraints(g, values("not_constraints")),
    }
    items["in_force"], items["in_force_unique"] = _in_force(g, in_force)
    metrics = {
        name: _rate(sum(i["hit"] for i in items[name]), len(items[name])) for name in METRICS
    }
    return {"items": items, "metrics": metrics}


def score(expected_file: str | Path, graph_json: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """Score every expected conversation; one missing from the graph scores as an empty graph."""
    expected = load_expected(expected_file)
    graphs = load_graph(graph_json)
    totals: dict[str, list[int]] = {name: [0, 0] for name in METRICS}
    kinds: dict[str, dict[str, list[int]]] = defaultdict(lambda: {name: [0, 0] for name in METRICS})
    per_conversation, missing = [], []
    for row in expected:
        graph = graphs.get(row["id"])
        if graph is None:
            missing.append(row["id"])
        result = score_conversation(row["expect"], graph or {"nodes": [], "edges": []})
        for name, metric in result["metrics"].items():
            for bucket in (totals[name], kinds[row["kind"]][name]):
                bucket[0] += metric["hits"]
                bucket[1] += metric["total"]
        per_conversation.append({"id": row["id"], "kind": row["kind"], **result})
    not_constraints = totals["not_constraints"]
    return {
        "expected_file": str(expected_file),
        "conversations": len(expected),
        "missing": missing,
        "metrics": {name: _rate(*pair) for name, pair in totals.items()},
        "false_constraints": not_constraints[1] - not_constraints[0],
        "per_kind": {
            kind: {"conversations": sum(r["kind"] == kind for r in expected)}
            | {name: _rate(*pair) for name, pair in metrics.items()}
            for kind, metrics in sorted(kinds.items())
        },
        "per_conversation": per_conversation,
    }


def render_table(report: Mapping[str, Any]) -> str:
    """The report as a plain-text table: overall, then one row per kind."""

    def cell(metric: Mapping[str, Any]) -> str:
        return (
            "-"
            if metric["rate"] is None
            else f"{metric['rate']:.2f} ({metric['hits']}/{metric['total']})"
        )

    header = ["kind", "n", *METRICS]
    rows = [["all", str(report["conversations"]), *(cell(report["metrics"][m]) for m in METRICS)]]
    rows += [
        [kind, str(data["conversations"]), *(cell(data[m]) for m in METRICS)]
        for kind, data in report["per_kind"].items()
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]
    ]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    lines.append(f"false constraints: {report['false_constraints']}")
    if report["missing"]:
        lines.append(f"missing from the graph (scored as empty): {', '.join(report['missing'])}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("expected", type=Path, help="expectations JSONL")
    parser.add_argument("graph", type=Path, nargs="?", help="JSON printed by atlas context --json")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    parser.add_argument(
        "--write-sessions", type=Path, metavar="DIR", help="write atlas-session/1 files"
    )
    parser.add_argument(
        "--force", action="store_true", help="overwrite files with --write-sessions"
    )
    args = parser.parse_args(argv)
    if args.write_sessions:
        paths = write_sessions(args.expected, args.write_sessions, force=args.force)
        print(f"wrote {len(paths)} atlas-session/1 file(s) to {args.write_sessions}")
        return 0
    if args.graph is None:
        parser.error("GRAPH is required unless --write-sessions is given")
    report = score(args.expected, args.graph)
    print(json.dumps(report, indent=1) if args.json else render_table(report))
    return 0


__all__ = [
    "METRICS",
    "load_expected",
    "load_graph",
    "main",
    "render_table",
    "score",
    "score_conversation",
    "write_sessions",
]


if __name__ == "__main__":
    raise SystemExit(main())
