"""``python -m benchmarks.sessions_bench [--size 100000] [--sessions 1 100 1000 10000]``.

Retrieval cost against how the same memories are spread over sessions. For each session
count the benchmark's memories (templated texts, random unit vectors) are loaded in
equal contiguous blocks, one block per session, through ``add_many`` (auto-link and
indexing included); then each query is retrieved from a session chosen round-robin,
once cross-session (``cross_session=True``) and once in that session alone. Times are
this thread's CPU time (other processes on a shared box inflate them less than wall
time). Real agents hold hundreds or thousands of sessions; the retrieve cost should not
grow with their number (target: at most 1.5x from 1 to 1,000 sessions).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from benchmarks.datasets import Dataset, random_dataset
from benchmarks.operations import BUILD_CHUNK, SPAN_HOURS, START, check_held, engine_config
from memory_core import ElasticMemoryAtlas, ManualClock
from memory_core.embedding.hashing import HashingEmbedder

SESSION_COUNTS = (1, 100, 1_000, 10_000)
N_QUERIES = 400
MODES = ("cross-session", "single-session")


def build(data: Dataset, size: int, sessions: int, clock: ManualClock) -> ElasticMemoryAtlas:
    """``size`` memories in ``sessions`` equal contiguous blocks, oldest session first."""
    atlas = ElasticMemoryAtlas(engine_config(size + 1), embedder=HashingEmbedder(), clock=clock)
    bounds = np.linspace(0, size, sessions + 1).astype(int)
    step = SPAN_HOURS * 3600.0 / max(size, 1)
    for n in range(sessions):
        for start in range(bounds[n], bounds[n + 1], BUILD_CHUNK):
            stop = min(start + BUILD_CHUNK, bounds[n + 1])
            atlas.add_many(
                data.texts[start:stop], session_id=f"s{n}", embeddings=data.vectors[start:stop]
            )
            clock.advance(step * (stop - start))
    return check_held(atlas, size)


def _cpu_ms(fn: Callable[[], Any]) -> float:
    started = time.thread_time_ns()
    fn()
    return (time.thread_time_ns() - started) / 1e6


def _summary(values: list[float]) -> dict[str, float]:
    p50, p99 = np.percentile(values, [50, 99])
    return {"p50_ms": float(p50), "p99_ms": float(p99), "runs": len(values)}


def measure(data: Dataset, size: int, sessions: int, n_queries: int) -> dict[str, Any]:
    """Build, then time ``n_queries`` retrievals in each mode (one warm-up call first)."""
    clock = ManualClock(START)
    started = time.process_time()
    atlas = build(data, size, sessions, clock)
    out: dict[str, Any] = {
        "size": size,
        "sessions": sessions,
        "build_cpu_s": time.process_time() - started,
        "index": atlas.session_info("s0")["index"],
    }
    for mode in MODES:
        cross, times = mode == "cross-session", []
        for q in range(n_queries + 1):
            j = q % len(data.query_texts)
            session = f"s{q % sessions}"
            ms = _cpu_ms(
                partial(
                    atlas.retrieve,
                    data.query_texts[j],
                    top_k=10,
                    session_id=session,
                    cross_session=cross,
                    query_embedding=data.query_vectors[j],
                )
            )
            if q:  # the first call warms caches
                times.append(ms)
        out[mode] = _summary(times)
    return out


def ratios(rows: list[dict[str, Any]]) -> dict[str, float]:
    """p50 and p99 at each session count over those at the fewest sessions, per mode."""
    first = rows[0]
    return {
        f"{mode} {stat} x{row['sessions']}": row[mode][stat] / first[mode][stat]
        for row in rows[1:]
        for mode in MODES
        for stat in ("p50_ms", "p99_ms")
    }


def sessions_costs(
    size: int, counts: tuple[int, ...] = SESSION_COUNTS, n_queries: int = N_QUERIES
) -> dict[str, Any]:
    """Every session count in turn (each a fresh atlas), and the ratios to the first."""
    data = random_dataset(size, n_queries)
    rows = []
    for sessions in counts:
        rows.append(measure(data, size, sessions, n_queries))
        gc.collect()
    return {"rows": rows, "ratios": ratios(rows)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.sessions_bench", description=__doc__
    )
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, nargs="+", default=list(SESSION_COUNTS))
    parser.add_argument("--queries", type=int, default=N_QUERIES)
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = parser.parse_args(argv)
    out = sessions_costs(args.size, tuple(args.sessions), args.queries)
    for row in out["rows"]:
        print(
            f"{args.size:,} memories / {row['sessions']:>6,} sessions ({row['index']}):"
            + "".join(
                f"  {mode} p50 {row[mode]['p50_ms']:.3f} p99 {row[mode]['p99_ms']:.3f} ms"
                for mode in MODES
            )
            + f"  (build {row['build_cpu_s']:.0f} s CPU)"
        )
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
