"""Recall@10 of the engine's vector index against exact search over the same vectors.

Measured on the index the engine itself built (exact at first, switched to HNSW above
``hnsw_threshold``, then filled one memory at a time). ``recall_at_k`` asks two query
sets of random data: uniformly random directions (no true neighbour: the hardest case)
and stored vectors plus noise (a near neighbour exists: the usual case for memory
recall); the shipped ``hnsw_ef_search`` comes first, then wider searches, to show what
recall costs on these (unclustered, worst-case) vectors. ``recall_by_ef`` is the shared
measure for any named query sets and efSearch values (the clustered real-text scenario
uses it too). Exact search runs over the vectors the index keeps: float16 roundings once
it is HNSW, so the rounding's own effect is not in these figures (on the clustered 100k
set it moved held-out recall@10 from 0.9585 to 0.9580 against the float32 vectors).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

import numpy as np

from benchmarks.datasets import random_unit_vectors
from benchmarks.measure import Samples
from memory_core import AtlasConfig
from memory_core.engine.index import VectorIndex

K = 10
CANDIDATES = 40
"""Searched as deep as the engine's retrieval does (``dense_candidates``)."""
NOISE = 0.5
WIDER_EF = (256, 512, 1024, 2048)


def exact_top_k(vectors: np.ndarray, ids: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The ids of the ``K`` largest inner products per query (flat search, any order)."""
    k = min(K, len(ids))
    if k == len(ids):
        return np.tile(ids, (len(queries), 1))
    return ids[np.argpartition(-(queries @ vectors.T), k - 1, axis=1)[:, :k]]


def recall_by_ef(
    index: VectorIndex, queries: Mapping[str, np.ndarray], efs: Iterable[int]
) -> list[dict[str, Any]]:
    """One row per efSearch value: recall@10 and search latency per query set (the
    index's own efSearch is restored afterwards)."""
    ids = index.ids()
    vectors = index.reconstruct(ids)
    exact = {name: exact_top_k(vectors, ids, q) for name, q in queries.items()}
    shipped = index.ef_search
    rows = []
    try:
        for ef in efs:
            index.ef_search = ef
            row: dict[str, Any] = {"ef_search": ef}
            for name, qs in queries.items():
                latency = Samples(f"index search ({name}, ef {ef})", "engine", len(ids))
                hits = 0
                for i, query in enumerate(qs):
                    _, found = latency.time(partial(index.search, query, CANDIDATES))
                    hits += len(np.intersect1d(found[:K], exact[name][i]))
                row[f"recall_{name}"] = hits / (exact[name].shape[1] * max(len(qs), 1))
                row[f"search_{name}"] = latency.summary()
            rows.append(row)
    finally:
        index.ef_search = shipped
    return rows


def recall_at_k(
    index: VectorIndex, n_queries: int, seed: int = 11, wider: tuple[int, ...] = WIDER_EF
) -> dict[str, Any]:
    """Random and near queries at the shipped efSearch, then at each wider one."""
    ids = index.ids()
    vectors = index.reconstruct(ids)
    dim = vectors.shape[1]
    rng = np.random.default_rng(seed)
    near = vectors[rng.integers(0, len(ids), n_queries)] + NOISE * random_unit_vectors(
        n_queries, seed + 1, dim
    )
    near /= np.linalg.norm(near, axis=1, keepdims=True)
    queries = {"random": random_unit_vectors(n_queries, seed + 2, dim), "near": near}
    shipped = index.ef_search
    rows = recall_by_ef(index, queries, (shipped, *(e for e in wider if e > shipped)))
    cfg = AtlasConfig()
    return {
        "size": len(ids),
        "index": index.kind,
        "params": f"M={cfg.hnsw_m}, efSearch={shipped}, efConstruction={cfg.hnsw_ef_construction}",
        **{k: v for k, v in rows[0].items() if k != "ef_search"},
        "by_ef": rows,
    }
