"""``python -m benchmarks.judge_bench [--judge NAME]``: cost of the contradiction judge per pair.

Every labelled pair of ``tests/data/conflict_pairs*.jsonl`` is judged once by one judge
(built once and warmed up on a pair of its own, so loading a model is not counted); each
pair is seen for the first time, as a write-path candidate is. The issue-#16 budget is
5 ms per candidate pair on CPU. ``benchmarks.run`` can add it as a section:
``out["judge"] = judge_costs()``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.conflicts.evaluation import load_pairs
from memory_core.conflicts.judge import DEFAULT_JUDGE, make_judge

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
BUDGET_MS = 5.0
"""Issue #16: at most this much judge time per candidate pair."""


def judge_costs(judge: str = DEFAULT_JUDGE, data: Path = DATA) -> dict[str, Any]:
    """Milliseconds per pair (mean, p50, p99, max) over every labelled set, pairs seen once."""
    pairs = [p for path in sorted(data.glob("conflict_pairs*.jsonl")) for p in load_pairs(path)]
    instance = make_judge(judge)
    instance.judge("I live in Oslo, my warm-up city.", "Warm-up: I moved to Bergen.")
    times = []
    for pair in pairs:
        start = time.perf_counter()
        instance.judge(pair.a, pair.b)
        times.append((time.perf_counter() - start) * 1000.0)
    ms = np.asarray(times)
    return {
        "judge": instance.name,
        "pairs": len(pairs),
        "mean_ms": round(float(ms.mean()), 3),
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p99_ms": round(float(np.percentile(ms, 99)), 3),
        "max_ms": round(float(ms.max()), 3),
        "budget_ms": BUDGET_MS,
        "within_budget": bool(np.percentile(ms, 99) <= BUDGET_MS),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default=DEFAULT_JUDGE, help=f"default {DEFAULT_JUDGE}")
    args = parser.parse_args(argv)
    print(json.dumps(judge_costs(args.judge), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
