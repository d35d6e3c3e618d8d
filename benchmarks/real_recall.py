"""Recall on real conversations: the LoCoMo dev split, engine against simple retrievers.

``make bench-recall`` runs this. It imports the dev split from ``../shared/datasets/
locomo-dev`` in memory (nothing is written next to the code: the data stays outside the
repository), embeds every text once through the cached MiniLM embedder, and replays each
conversation under each policy and memory budget (one process: a replay takes seconds,
and forking after the embedder's threads started can hang). It prints the
table, checks issue #14's targets, and writes the table into ``docs/harness.md`` and
the README between the ``real-recall`` markers. Without the folder it says so and exits cleanly.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.cli.options import add_overrides, load_config
from memory_core.engine.config import AtlasConfig

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "datasets" / "locomo-dev"
DOCS = (ROOT / "docs" / "harness.md", ROOT / "README.md")
START, END = "<!-- real-recall:start -->", "<!-- real-recall:end -->"

POLICIES = ("atlas", "hybrid", "fifo", "unlimited")
BUDGETS: tuple[str, ...] = ("none", "150", "25%")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TARGET_UNLIMITED = 0.70
TARGET_150 = 0.58
TARGET_RETENTION_150 = 0.85
TARGET_MS_PER_TURN = 1.0
"""A replay at ``max_nodes=150`` with cached embeddings, per turn: issue #26's limit (issue
#15 had set 2 ms; the stricter one is judged)."""


@dataclass(frozen=True, slots=True)
class Cell:
    """Pooled outcome of one policy at one budget over every conversation."""

    policy: str
    budget: str
    recall: float
    retention: float
    ms_per_turn: float
    by_category: dict[int, float]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo dev folder")
    parser.add_argument("--no-write", action="store_true", help="print only; docs unchanged")
    add_overrides(parser, "override a config field of the atlas rows, e.g. --set entity_route=true")
    args = parser.parse_args(argv)
    conversations = load_conversations(args.data)
    if not conversations:
        print(
            f"bench-recall: skipped, no LoCoMo dev split at {args.data} (it is kept outside "
            "the repository on purpose)"
        )
        return 0
    started = time.perf_counter()
    cells = _run(conversations, base=load_config(None, args.overrides))
    table = render(cells, conversations)
    verdicts = check_targets(cells)
    print(table)
    print("\n".join(verdicts))
    print(keep_what_matters_table(cells))
    print(f"({time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.1f})")
    if not args.no_write:
        for doc in DOCS:
            write_doc(doc, table + "\n\n" + "\n".join(f"- {v}" for v in verdicts))
            print(f"wrote the table into {doc.relative_to(ROOT)}")
    return 0


def keep_what_matters_table(cells: Sequence[Cell]) -> str:
    """The engine's LoCoMo rows beside the sample conversations and the floods
    (``benchmarks.flood_recall``, issue #25), as one table."""
    from benchmarks.flood_recall import keep_what_matters, run, sample_cells
    from memory_core.embedding import make_embedder

    embedder = make_embedder("minilm")
    locomo = [
        (_budget_label(c.budget), c.recall, c.retention) for c in cells if c.policy == "atlas"
    ]
    return "\nKeep what matters (issue #25):\n\n" + keep_what_matters(
        locomo, sample_cells(embedder), run(embedder)
    )


def load_conversations(data: Path = DEFAULT_DATA) -> list:
    """The dev split's conversations, imported in memory; none when the folder is absent."""
    from memory_core.harness.importers import IMPORTERS, ImportOptions, import_files

    files = sorted(data.glob("*.json")) if data.is_dir() else []
    return [conv for _, conv in import_files(IMPORTERS["locomo"], files, ImportOptions())]


def dev_replay_costs(data: Path = DEFAULT_DATA) -> dict[str, Any] | None:
    """The atlas policy's replay cost (ms per turn) and recall at ``max_nodes=150`` and
    with no limit, for ``make bench``; None when the dev split is absent."""
    conversations = load_conversations(data)
    if not conversations:
        return None
    cells = _run(conversations, policies=("atlas",), budgets=("150", "none"))
    return {
        "conversations": len(conversations),
        "turns": sum(sum(len(s.turns) for s in c.sessions) for c in conversations),
        "target_ms_per_turn": TARGET_MS_PER_TURN,
        "cells": [
            {
                "budget": _budget_label(c.budget),
                "max_nodes": 150 if c.budget == "150" else None,
                "ms_per_turn": c.ms_per_turn,
                "recall": c.recall,
                "retention": c.retention,
            }
            for c in cells
        ],
    }


def _run(
    conversations: list,
    policies: Sequence[str] = POLICIES,
    budgets: Sequence[str] = BUDGETS,
    base: AtlasConfig | None = None,
) -> list[Cell]:
    from memory_core.embedding import make_embedder
    from memory_core.engine.importance import information_density
    from memory_core.harness.replay import ReplaySettings, embed_conversation, replay_conversation

    embedder = make_embedder("minilm")
    vectors = [embed_conversation(c, embedder) for c in conversations]
    information_density("warm up", {})  # loads the word-frequency table once, before timing
    cells = []
    for policy in policies:
        for budget in budgets:
            if (policy == "unlimited" and budget != "none") or (
                policy == "fifo" and budget == "none"
            ):
                continue  # unlimited ignores budgets; fifo without one is unlimited
            config = replace(base or AtlasConfig(), max_nodes=150 if budget == "150" else None)
            settings = ReplaySettings(
                policy=policy, capacity_fraction=0.25 if budget == "25%" else None
            )
            results = [
                replay_conversation(
                    conv, config, settings=settings, embedder=embedder, vectors=vecs
                ).result
                for conv, vecs in zip(conversations, vectors, strict=True)
            ]
            print(f"  {policy:9s} {_budget_label(budget):14s} done", flush=True)
            cells.append(_pool(policy, budget, results))
    return cells


def _pool(policy: str, budget: str, results: list) -> Cell:
    from memory_core.harness.importers.locomo import category

    facts = [f for r in results for f in r.facts if f.expect == "recalled"]
    by_category: dict[int, list[bool]] = {}
    for fact in facts:
        by_category.setdefault(category(fact.fact_id) or 0, []).append(fact.recalled)
    return Cell(
        policy=policy,
        budget=budget,
        recall=float(np.mean([f.recalled for f in facts])),
        retention=float(np.mean([f.retained for f in facts])),
        ms_per_turn=1e3 * sum(r.wall_seconds for r in results) / sum(r.turns for r in results),
        by_category={c: float(np.mean(v)) for c, v in sorted(by_category.items())},
    )


def render(cells: Sequence[Cell], conversations: Sequence) -> str:
    """The markdown table: one row per policy and budget."""
    turns = sum(sum(len(s.turns) for s in c.sessions) for c in conversations)
    facts = sum(len(c.key_facts) for c in conversations)
    head = (
        f"LoCoMo dev split: {len(conversations)} conversations, {turns} turns, {facts} key "
        "facts (QA categories 1-4); recall@10, default parameters, cached MiniLM embeddings.\n\n"
        "| policy | budget | recall@10 | retention | ms/turn | "
        + " | ".join(CATEGORIES.values())
        + " |\n|---|---|---:|---:|---:|"
        + "---:|" * len(CATEGORIES)
    )
    order = {b: i for i, b in enumerate(BUDGETS)}
    rows = []
    for cell in sorted(cells, key=lambda c: (order[c.budget], POLICIES.index(c.policy))):
        cats = " | ".join(f"{cell.by_category.get(c, float('nan')):.3f}" for c in CATEGORIES)
        name = f"**{cell.policy}**" if cell.policy == "atlas" else cell.policy
        rows.append(
            f"| {name} | {_budget_label(cell.budget)} | {cell.recall:.3f} | "
            f"{cell.retention:.2f} | {cell.ms_per_turn:.1f} | {cats} |"
        )
    return head + "\n" + "\n".join(rows)


def _budget_label(budget: str) -> str:
    return {"none": "no limit", "150": "150 memories", "25%": "25% of turns"}[budget]


def check_targets(cells: Sequence[Cell]) -> list[str]:
    """Issue #14's targets, each as 'met' or 'missed by ...'."""
    by = {(c.policy, c.budget): c for c in cells}
    out = [
        _verdict("atlas recall@10, no limit", by["atlas", "none"].recall, TARGET_UNLIMITED),
        _verdict("atlas recall@10 at 150", by["atlas", "150"].recall, TARGET_150),
        _verdict("atlas retention at 150", by["atlas", "150"].retention, TARGET_RETENTION_150),
    ]
    for budget in BUDGETS:
        atlas, hybrid = by["atlas", budget], by["hybrid", budget]
        out.append(
            _verdict(f"atlas >= hybrid at {_budget_label(budget)}", atlas.recall, hybrid.recall)
        )
    return out


def _verdict(what: str, value: float, target: float) -> str:
    status = "met" if value >= target - 1e-12 else f"MISSED by {target - value:.3f}"
    return f"{what}: {value:.3f} (target >= {target:.3f}) {status}"


def write_doc(doc: Path, block: str) -> None:
    """Replace what stands between the markers of ``doc`` with ``block``."""
    text = doc.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{doc} has no {START} ... {END} markers")
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    doc.write_text(f"{before}{START}\n{block}\n{END}{after}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
