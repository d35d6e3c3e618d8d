"""Where a retrieve or an add spends its CPU time, stage by stage, with the physical floor.

``python -m benchmarks.profile_ops 100000 --breakdown`` wraps the engine's stage
functions (vector search, BM25, graph expansion, filters, the composite weight, HNSW
insert, importance, ...) in exclusive CPU timers for the duration of a measurement and
unwraps them after: what is left of a call once every named stage is subtracted is the
Python overhead per call (validation, the ranking glue, hit objects). The floor is
measured on the same index in the same run: one FAISS search alone (``efSearch`` as
shipped, k = the dense candidates, no filter) and one BM25 search alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.measure import call_cpu_ns
from memory_core import ElasticMemoryAtlas
from memory_core.engine import atlas_base, forgetting, retrieval
from memory_core.engine.graph import EdgeStore
from memory_core.engine.index import LexicalIndex, VectorIndex
from memory_core.engine.index.vector import COARSE_SLACK
from memory_core.engine.table import NodeTable

RETRIEVE_STAGES: tuple[tuple[Any, str, str], ...] = (
    (VectorIndex, "search", "vector index search"),
    (VectorIndex, "_rescored", "re-scoring the index's candidates"),
    (VectorIndex, "reconstruct", "stored vectors (cosines of other candidates)"),
    (LexicalIndex, "search", "BM25 scoring"),
    (retrieval, "_expand", "graph expansion"),
    (retrieval, "_eligible", "filters"),
    (retrieval, "composite_weight", "composite weight"),
    (ElasticMemoryAtlas, "_reinforce", "reinforce hits"),
    (NodeTable, "snapshots", "hit snapshots"),
)
ADD_STAGES: tuple[tuple[Any, str, str], ...] = (
    (VectorIndex, "search", "vector search (merge, auto-link)"),
    (VectorIndex, "add", "vector index insert"),
    (LexicalIndex, "add", "BM25 add"),
    (EdgeStore, "link", "edges"),
    (atlas_base, "composite_weight", "composite weight"),  # the add path's import
    (forgetting, "enforce_capacity", "capacity check"),
    (ElasticMemoryAtlas, "_prepare", "validation + importance"),
    (ElasticMemoryAtlas, "_emit", "events"),
)


@dataclass(slots=True)
class _Clocks:
    """Exclusive CPU nanoseconds per stage: a stage's time excludes the stages it calls.
    One stack per thread (a retrieve runs its vector search on the engine's helper thread
    while BM25 runs on the caller's)."""

    totals: dict[str, int] = field(default_factory=dict)
    stacks: dict[int, list[list[int]]] = field(default_factory=dict)  # [start, in children]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack = self.stacks.setdefault(threading.get_ident(), [])
            frame = [time.thread_time_ns(), 0]
            stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                stack.pop()
                spent = time.thread_time_ns() - frame[0]
                with self.lock:
                    self.totals[name] = self.totals.get(name, 0) + spent - frame[1]
                if stack:
                    stack[-1][1] += spent

        return timed


@contextmanager
def _instrumented(stages: tuple[tuple[Any, str, str], ...]) -> Iterator[_Clocks]:
    clocks = _Clocks()
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in stages]
    try:
        for (owner, attr, original), (_, _, name) in zip(saved, stages, strict=True):
            setattr(owner, attr, clocks.wrap(name, original))
        yield clocks
    finally:
        for owner, attr, original in saved:
            setattr(owner, attr, original)


def split(call: Callable[[int], Any], n: int, stages: tuple[tuple[Any, str, str], ...]) -> str:
    """A table of CPU microseconds per call by stage, over ``n`` calls of ``call(i)``."""
    with _instrumented(stages) as clocks:
        started = call_cpu_ns()
        for i in range(n):
            call(i)
        whole = call_cpu_ns() - started
    named = sum(clocks.totals.values())
    rows = [(name, ns) for name, ns in clocks.totals.items()]
    rows.append(("Python overhead (the rest)", whole - named))
    lines = ["| stage | CPU µs per call | share |", "|---|---:|---:|"]
    for name, ns in sorted(rows, key=lambda r: -r[1]):
        lines.append(f"| {name} | {ns / n / 1e3:.1f} | {ns / whole:.0%} |")
    lines.append(f"| **whole call** | **{whole / n / 1e3:.1f}** | 100% |")
    return "\n".join(lines)


def floor(atlas: ElasticMemoryAtlas, queries: np.ndarray, texts: list[str], n: int) -> str:
    """CPU p50 / p99 of one raw FAISS search and one BM25 search on the atlas's own indexes;
    for an exact index large enough to pre-scan a float16 copy (``COARSE_FROM``), that
    pre-scan too: it, not the float32 search, is what the engine's first pass costs."""
    state = atlas._s
    k = state.config.dense_candidates
    params = state.vectors._params(state.vectors.ef_search)
    searches: list[tuple[str, Any, int]] = [
        (f"FAISS {state.vectors.kind} search alone", state.vectors._index, k)
    ]
    if state.vectors._coarse is not None:  # built by the first search of a large exact index
        wide = 2 * k + COARSE_SLACK
        searches.append(("FAISS float16 pre-scan alone", state.vectors._coarse, wide))
    timings: list[list[float]] = [[] for _ in range(len(searches) + 1)]
    for i in range(n):
        q = np.ascontiguousarray(queries[i % len(queries)][None, :], dtype=np.float32)
        for (_, index, depth), spent in zip(searches, timings, strict=False):
            started = time.thread_time_ns()
            index.search(q, depth, params=params)
            spent.append((time.thread_time_ns() - started) / 1e6)
        started = time.thread_time_ns()
        state.lexical.search(texts[i % len(texts)], state.config.lexical_candidates)
        timings[-1].append((time.thread_time_ns() - started) / 1e6)
    out = []
    names = [(name, depth) for name, _, depth in searches]
    names.append(("BM25 alone", state.config.lexical_candidates))
    for (name, depth), values in zip(names, timings, strict=True):
        p50, p99 = np.percentile(values, [50, 99])
        out.append(f"{name}: CPU p50 {p50:.3f} ms, p99 {p99:.3f} ms (k={depth}, n={n})")
    return "\n".join(out)
