"""Recall@10 of the engine's vector index against exact search, at a given size.

The index is the engine's own ``VectorIndex`` with the shipped HNSW parameters, filled
in chunks so that it starts exact and switches to HNSW above ``hnsw_threshold`` just as a
session's index does. Two query sets: uniform random directions (no true neighbour: the
hardest case) and stored vectors with noise (a near neighbour exists: the usual case).
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.datasets import random_unit_vectors
from benchmarks.measure import Samples
from memory_core import AtlasConfig
from memory_core.index import VectorIndex

K = 10
CHUNK = 5_000
NOISE = 0.5


def recall_at_k(vectors: np.ndarray, n_queries: int, seed: int = 11) -> dict[str, object]:
    cfg = AtlasConfig()
    index = VectorIndex(
        vectors.shape[1],
        hnsw_threshold=cfg.hnsw_threshold,
        m=cfg.hnsw_m,
        ef_search=cfg.hnsw_ef_search,
        ef_construction=cfg.hnsw_ef_construction,
    )
    started = time.perf_counter()
    for start in range(0, len(vectors), CHUNK):
        stop = min(start + CHUNK, len(vectors))
        index.add(np.arange(start, stop), vectors[start:stop])
    build_s = time.perf_counter() - started
    rng = np.random.default_rng(seed)
    near = vectors[rng.integers(0, len(vectors), n_queries)] + NOISE * random_unit_vectors(
        n_queries, seed + 1, vectors.shape[1]
    )
    near /= np.linalg.norm(near, axis=1, keepdims=True)
    result: dict[str, object] = {
        "size": len(vectors),
        "index": index.kind,
        "build_s": build_s,
        "params": f"M={cfg.hnsw_m}, efSearch={cfg.hnsw_ef_search}, "
        f"efConstruction={cfg.hnsw_ef_construction}",
    }
    for name, queries in (
        ("random", random_unit_vectors(n_queries, seed + 2, vectors.shape[1])),
        ("near", near),
    ):
        exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :K]
        latency = Samples(op=f"index search ({name})", impl="engine", size=len(vectors))
        hits = 0
        for row, query in enumerate(queries):
            _, ids = latency.time(lambda query=query: index.search(query, K))
            hits += len(np.intersect1d(ids, exact[row]))
        result[f"recall_{name}"] = hits / (K * len(queries))
        result[f"search_{name}"] = latency.summary()
    return result
