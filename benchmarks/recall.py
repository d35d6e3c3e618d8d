"""Recall@10 of a session's vector index against exact search over the same vectors.

Measured on the index the engine itself built for the benchmark's main session (exact
at first, switched to HNSW above ``hnsw_threshold``, then filled one memory at a time).
Two query sets: uniformly random directions (no true neighbour: the hardest case) and
stored vectors plus noise (a near neighbour exists: the usual case for memory recall).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.datasets import random_unit_vectors
from benchmarks.measure import Samples
from memory_core import AtlasConfig
from memory_core.index import VectorIndex

K = 10
NOISE = 0.5


def recall_at_k(index: VectorIndex, n_queries: int, seed: int = 11) -> dict[str, Any]:
    ids = index.ids()
    vectors = index.reconstruct(ids)
    dim = vectors.shape[1]
    rng = np.random.default_rng(seed)
    near = vectors[rng.integers(0, len(ids), n_queries)] + NOISE * random_unit_vectors(
        n_queries, seed + 1, dim
    )
    near /= np.linalg.norm(near, axis=1, keepdims=True)
    cfg = AtlasConfig()
    result: dict[str, Any] = {
        "size": len(ids),
        "index": index.kind,
        "params": f"M={cfg.hnsw_m}, efSearch={cfg.hnsw_ef_search}, "
        f"efConstruction={cfg.hnsw_ef_construction}",
    }
    for name, queries in (
        ("random", random_unit_vectors(n_queries, seed + 2, dim)),
        ("near", near),
    ):
        exact = ids[np.argpartition(-(queries @ vectors.T), K, axis=1)[:, :K]]
        latency = Samples(op=f"index search ({name})", impl="engine", size=len(ids))
        hits = 0
        for row, query in enumerate(queries):
            _, found = latency.time(lambda query=query: index.search(query, K))
            hits += len(np.intersect1d(found, exact[row]))
        result[f"recall_{name}"] = hits / (K * len(queries))
        result[f"search_{name}"] = latency.summary()
    return result
