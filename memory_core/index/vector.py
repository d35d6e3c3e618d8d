"""FAISS vector index with stable int64 ids, exact while small and HNSW when large.

Exact inner-product search is the right answer below a few tens of thousands of
vectors; above ``hnsw_threshold`` the index is rebuilt as HNSW. HNSW cannot delete,
so deletions there are tombstoned, filtered at search time and purged by a rebuild
once they exceed ``rebuild_fraction`` of the index.
"""

from __future__ import annotations

import functools

import faiss
import numpy as np

from memory_core.errors import IndexError_


@functools.cache
def _single_threaded() -> None:
    # one query at a time: OpenMP fan-out costs more than it saves on 2 cores
    faiss.omp_set_num_threads(1)


class VectorIndex:
    """Cosine search (inner product on unit vectors) keyed by caller-chosen int ids."""

    __slots__ = (
        "_deleted",
        "_dim",
        "_ef_construction",
        "_ef_search",
        "_hnsw",
        "_index",
        "_m",
        "_rebuild_fraction",
        "_threshold",
    )

    def __init__(
        self,
        dim: int,
        *,
        hnsw_threshold: int = 20_000,
        m: int = 32,
        ef_search: int = 96,
        ef_construction: int = 64,
        rebuild_fraction: float = 0.25,
    ) -> None:
        _single_threaded()
        self._dim = dim
        self._threshold = hnsw_threshold
        self._m = m
        self._ef_search = ef_search
        self._ef_construction = ef_construction
        self._rebuild_fraction = rebuild_fraction
        self._deleted: set[int] = set()
        self._hnsw = False
        self._index: faiss.IndexIDMap2 = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    @property
    def kind(self) -> str:
        return "hnsw" if self._hnsw else "flat"

    def __len__(self) -> int:
        return int(self._index.ntotal) - len(self._deleted)

    def ids(self) -> np.ndarray:
        """Live ids, in insertion order."""
        all_ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        if not self._deleted:
            return all_ids
        return all_ids[~np.isin(all_ids, np.fromiter(self._deleted, dtype=np.int64))]

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add unit vectors; ids must be new."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        try:
            self._index.add_with_ids(vectors, ids)
        except RuntimeError as exc:
            raise IndexError_(f"vector index rejected {len(ids)} vectors: {exc}") from exc
        if not self._hnsw and self._index.ntotal > self._threshold:
            self._rebuild(hnsw=True)

    def remove(self, ids: np.ndarray) -> None:
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if len(ids) == 0:
            return
        if not self._hnsw:
            self._index.remove_ids(faiss.IDSelectorBatch(ids))
            return
        self._deleted.update(int(i) for i in ids)
        if len(self._deleted) > self._rebuild_fraction * self._index.ntotal:
            self._rebuild(hnsw=len(self) > self._threshold // 2)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (similarities, ids) for one query vector, best first."""
        live = len(self)
        if live == 0 or k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        want = min(k + len(self._deleted), int(self._index.ntotal))
        sims, ids = self._index.search(
            np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), want
        )
        sims, ids = sims[0], ids[0]
        keep = ids >= 0
        if self._deleted:
            keep &= ~np.isin(ids, np.fromiter(self._deleted, dtype=np.int64))
        return sims[keep][:k], ids[keep][:k]

    def search_many(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Batched search for compaction passes; -1 ids mark missing results."""
        want = min(k, max(1, int(self._index.ntotal)))
        sims, ids = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), want)
        if self._deleted:
            dead = np.isin(ids, np.fromiter(self._deleted, dtype=np.int64))
            ids = np.where(dead, -1, ids)
        return sims, ids

    def reconstruct(self, ids: np.ndarray) -> np.ndarray:
        """Stored vectors of ``ids``, one C++ call for the whole batch."""
        keys = np.ascontiguousarray(ids, dtype=np.int64)
        if len(keys) == 0:
            return np.empty((0, self._dim), dtype=np.float32)
        try:
            return np.asarray(self._index.reconstruct_batch(keys), dtype=np.float32)
        except RuntimeError:
            for ident in keys.tolist():  # name the culprit
                try:
                    self._index.reconstruct(ident)
                except RuntimeError as exc:
                    raise IndexError_(f"vector for id {ident} is not in the index") from exc
            raise

    def _rebuild(self, *, hnsw: bool) -> None:
        live = self.ids()
        vectors = self.reconstruct(live) if len(live) else np.empty((0, self._dim), np.float32)
        if hnsw:
            inner = faiss.IndexHNSWFlat(self._dim, self._m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = self._ef_construction
            inner.hnsw.efSearch = self._ef_search
        else:
            inner = faiss.IndexFlatIP(self._dim)
        index = faiss.IndexIDMap2(inner)
        if len(live):
            index.add_with_ids(vectors, live)
        self._index, self._hnsw, self._deleted = index, hnsw, set()
