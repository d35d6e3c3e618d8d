"""Index recall against exact search, on an index small enough to build in a test."""

from __future__ import annotations

import numpy as np

from benchmarks.recall import exact_top_k, recall_by_ef
from memory_core.engine.index import VectorIndex


def _index(n: int, hnsw_threshold: int) -> tuple[VectorIndex, np.ndarray]:
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((n, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex(32, hnsw_threshold=hnsw_threshold, m=8, ef_search=16, ef_construction=16)
    index.add(np.arange(100, 100 + n), vectors)
    return index, vectors


def test_exact_top_k_matches_a_full_sort() -> None:
    _, vectors = _index(300, 10_000)
    queries = vectors[:7] + 0.1
    got = exact_top_k(vectors, np.arange(100, 400), queries)
    want = 100 + np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    assert [set(r) for r in got] == [set(r) for r in want]
    assert exact_top_k(vectors[:4], np.arange(4), queries).shape == (7, 4)


def test_flat_index_recall_is_one_and_hnsw_is_measured_per_ef() -> None:
    flat, vectors = _index(400, 10_000)
    queries = {"q": vectors[:20] + 0.05}
    (row,) = recall_by_ef(flat, queries, [16])
    assert row["recall_q"] == 1.0 and row["search_q"]["n"] == 20

    hnsw, vectors = _index(3000, 100)
    assert hnsw.kind == "hnsw"
    rng = np.random.default_rng(9)
    queries = {"random": rng.standard_normal((30, 32)).astype(np.float32)}
    rows = recall_by_ef(hnsw, queries, [8, 400])
    assert [r["ef_search"] for r in rows] == [8, 400]
    assert all(0.0 <= r["recall_random"] <= 1.0 for r in rows)
    assert rows[1]["recall_random"] >= 0.9  # searching most of a 3,000-vector graph
    assert hnsw.ef_search == 16  # restored
