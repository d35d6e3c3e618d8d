"""Score a task context graph against what a person expects at the end of each conversation.

The expectations live in ``tests/data/context/task_conversations_{dev,test}.jsonl`` (see the
README there); the graph is the JSON that ``atlas context FILE... --json`` prints (issue #24,
point 6). Only that JSON is read, so any builder can be scored: values are matched by what
they say, never by the builder's slot names or node ids.

    python -m benchmarks.context_eval EXPECTED.jsonl GRAPH.json [--json]
    python -m benchmarks.context_eval EXPECTED.jsonl --write-sessions DIR [--force]

The second form writes each conversation as an ``atlas-session/1`` file, so the command can
replay them. Matching rules (numbers compared as numbers with normalised units, token
sequences for text) are in ``benchmarks/context_match.py``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.context_match import NodeView, Text, Value, has_marker, is_someone_elses
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
DEFAULT_START = "2025-01-06T09:00:00+00:00"


# ---------------------------------------------------------------- expectations


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
        for (
            node
        ) in self.nodes:  # the seed deprecates the old constraint's edge, not always the node
            flags = satisfies.get(node.id, [])
            node.retired = bool(flags) and all(flags)

    def of_type(self, *types: str) -> list[NodeView]:
        return [node for node in self.nodes if node.type in types]


# ---------------------------------------------------------------- scoring


def _rate(hits: int, total: int) -> dict[str, Any]:
    return {"hits": hits, "total": total, "rate": hits / total if total else None}


def score_conversation(expect: Mapping[str, Any], graph: Mapping[str, Any]) -> dict[str, Any]:
    """Per-item results and per-metric hits/totals for one conversation."""
    g = _Graph(graph)
    constraints = g.of_type("Constraint")
    in_force = [
        Value.parse(item, "in force", needs_slot=True) for item in expect["constraints_in_force"]
    ]
    replaced = [Value.parse(item, "replaced", needs_slot=True) for item in expect["replaced"]]
    items: dict[str, list[dict[str, Any]]] = {}

    items["entity_recall"] = [
        {
            "label": entity["label"],
            "hit": any(
                node.active
                and Value(entity["label"], aliases=tuple(entity.get("aliases", []))).matches(
                    node.text
                )
                for node in g.nodes
            ),
        }
        for entity in expect["entities"]
    ]
    active_goals = sum(node.active for node in g.of_type("Goal"))
    items["goal_coverage"] = [
        {"goal": goal, "hit": i < active_goals} for i, goal in enumerate(expect["goals"])
    ]

    items["in_force"], items["in_force_unique"] = [], []
    for value in in_force:
        held = [node for node in constraints if node.active and value.matches(node.text)]
        same = {node.id for node in constraints if value.matches(node.text)}
        self_conflict = any(a in same and b in same for a, b in g.conflicts)
        items["in_force"].append(
            {"value": value.text, "hit": bool(held), "nodes": [n.id for n in held]}
        )
        items["in_force_unique"].append(
            {
                "value": value.text,
                "hit": len(held) == 1 and not self_conflict,
                "active_nodes": len(held),
            }
        )

    items["replaced"] = []
    for value in replaced:
        newer = [v for v in in_force + replaced if v.slot == value.slot and v is not value]
        current = [v for v in in_force if v.slot == value.slot]

        def superseded(node: NodeView, newer: list[Value] = newer) -> bool:
            sources = [g.by_id[s] for s in g.conflict_sources.get(node.id, ()) if s in g.by_id]
            by_newer = any(not newer or any(v.matches(s.text) for v in newer) for s in sources)
            return node.deprecated or node.retired or by_newer

        held = [node for node in constraints if not node.soft_deleted and value.matches(node.text)]
        kept = any(superseded(node) for node in held)
        still = [
            node.id
            for node in held
            if node.active
            and not superseded(node)
            and not any(v.matches(node.text) for v in current)
        ]
        items["replaced"].append(
            {"value": value.text, "hit": kept and not still, "still_in_force": still}
        )

    items["forgotten"] = []
    for item in expect.get("forgotten", []):
        value = Value.parse(item, "forgotten")
        left = [
            node.id
            for node in g.nodes
            if not node.soft_deleted
            and (
                value.matches(node.label)
                or (node.type in ("Constraint", "Goal") and value.matches(node.text))
            )
        ]
        items["forgotten"].append({"value": value.text, "hit": not left, "left": left})

    items["cancelled"] = []
    for item in expect.get("cancelled", []):
        value = Value.parse(item, "cancelled")
        left = [
            node.id
            for node in g.of_type("Goal", "Constraint")
            if node.active and value.matches(node.text) and not has_marker(node.text)
        ]
        items["cancelled"].append({"value": value.text, "hit": not left, "left": left})

    items["not_constraints"] = []
    for item in expect.get("not_constraints", []):
        value = Value.parse(item, "not_constraints")
        wrong = [
            node.id
            for node in constraints
            if node.active and value.matches(node.text) and not is_someone_elses(node.attributes)
        ]
        items["not_constraints"].append(
            {"value": value.text, "hit": not wrong, "false_constraints": wrong}
        )

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


# ---------------------------------------------------------------- atlas-session/1 files


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
    facts = []
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


if __name__ == "__main__":
    raise SystemExit(main())
