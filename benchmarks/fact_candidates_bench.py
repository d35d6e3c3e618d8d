"""How well the key-facts page's candidates find the turns that real key facts cite.

``python -m benchmarks.fact_candidates_bench`` proposes candidates (MiniLM, as the
dashboard does) on each conversation of the LoCoMo dev split with its questions removed,
and compares them with the turns the questions cite as evidence: how many turns are
proposed, how many cited turns they hold, how many of the first 20 are cited (against
ordering every turn by information density alone), and the ROC AUC of the order. The
numbers are quoted in ``memory_core/dashboard/fact_candidates.py``. Without the folder it
says so and exits cleanly.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from benchmarks.real_recall import DEFAULT_DATA, load_conversations

TOP = 20


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """Probability that a cited turn scores above an uncited one (ties count half)."""
    pos, neg = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float(((pos > neg).sum() + 0.5 * (pos == neg).sum()) / (pos.size * neg.size))


def main(argv: Sequence[str] | None = None) -> int:
    from memory_core.dashboard.fact_candidates import propose
    from memory_core.embedding.minilm import default_embedder
    from memory_core.engine.importance import information_density

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo dev folder")
    args = parser.parse_args(argv)
    conversations = load_conversations(args.data)
    if not conversations:
        print(f"fact-candidates: skipped, no LoCoMo dev split at {args.data}")
        return 0
    embedder = default_embedder()
    print("conversation | turns | proposed | cited turns proposed | cited in top 20 "
          "(density alone) | base rate | AUC")  # fmt: skip
    for conversation in conversations:
        cited = {t for f in conversation.key_facts for t in f.evidence}
        turns = list(conversation.turns())
        found = propose(replace(conversation, key_facts=()), embedder)
        rank = {c.turn_id: len(found) - i for i, c in enumerate(found)}  # unproposed: 0
        density = sorted(turns, key=lambda t: -information_density(t.text, {}))
        print(
            f"{conversation.id} | {len(turns)} | {len(found) / len(turns):.0%} | "
            f"{sum(c.turn_id in cited for c in found) / len(cited):.0%} | "
            f"{sum(c.turn_id in cited for c in found[:TOP]) / TOP:.0%} "
            f"({sum(t.id in cited for t in density[:TOP]) / TOP:.0%}) | "
            f"{len(cited) / len(turns):.0%} | "
            f"{auc([rank.get(t.id, 0) for t in turns if t.id in cited], [rank.get(t.id, 0) for t in turns if t.id not in cited]):.2f}"
        )  # fmt: skip
    print(f"(load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
