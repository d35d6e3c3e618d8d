"""Recall@10 of a session's vector index against exact search over the same vectors.

Measured on the index the engine itself built for the benchmark's main session (exact
at first, switched to HNSW above ``hnsw_threshold``, then filled one memory at a time).
Two query sets: uniformly random directions (no true neighbour: the hardest case) and
stored vectors plus noise (a near neighbour exists: the usual case for memory recall).
The shipped ``hnsw_ef_search`` comes first, then wider searches, to show what recall
costs on these (unclustered, worst-case) vectors.
"""

from __future__ import annotations

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


def recall_at_k(
    index: VectorIndex, n_queries: int, seed: int = 11, wider: tuple[int, ...] = WIDER_EF
) -> dict[str, Any]:
    ids = index.ids()
    vectors = index.reconstruct(ids)
    dim = vectors.shape[1]
    rng = np.random.default_rng(seed)
    near = vectors[rng.integers(0, len(ids), n_queries)] + NOISE * random_unit_vectors(
        n_queries, seed + 1, dim
    )
    near /= np.linalg.norm(near, axis=1, keepdims=True)
    queries = {"random": random_unit_vectors(n_queries, seed + 2, dim), "near": near}
    exact = {
        name: ids[np.argpartition(-(q @ vectors.T), K, axis=1)[:, :K]]
        for name, q in queries.items()
    }
    cfg = AtlasConfig()
    shipped = index.ef_search
    rows = []
    for ef in (shipped, *(e for e in wider if e > shipped)):
        index.ef_search = ef
        row: dict[str, Any] = {"ef_search": ef}
        for name, qs in queries.items():
            latency = Samples(op=f"index search ({name}, ef {ef})", impl="engine", size=len(ids))
            hits = 0
            for i, query in enumerate(qs):
                _, found = latency.time(partial(index.search, query, CANDIDATES))
                hits += len(np.intersect1d(found[:K], exact[name][i]))
            row[f"recall_{name}"] = hits / (K * len(qs))
            row[f"search_{name}"] = latency.summary()
        rows.append(row)
    index.ef_search = shipped
    return {
        "size": len(ids),
        "index": index.kind,
        "params": f"M={cfg.hnsw_m}, efSearch={shipped}, efConstruction={cfg.hnsw_ef_construction}",
        **{k: v for k, v in rows[0].items() if k != "ef_search"},
        "by_ef": rows,
    }
