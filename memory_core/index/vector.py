"""FAISS vector index with stable int64 ids, exact while small and HNSW when large.

Exact inner-product search is the right answer below a few tens of thousands of
vectors; above ``hnsw_threshold`` the index is rebuilt as HNSW. HNSW cannot delete,
so deletions there are tombstoned, filtered at search time and purged by a rebuild
once they exceed ``rebuild_fraction`` of the index. FAISS sees private labels, never the
caller's ids: an id removed and later added again (the atlas reuses slots) gets a fresh
label, so its tombstoned old vector can neither hide nor impersonate the new one.
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
        "_external",
        "_hnsw",
        "_index",
        "_label_of",
        "_m",
        "_next",
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
        self._deleted: set[int] = set()  # tombstoned labels (HNSW only)
        self._label_of: dict[int, int] = {}  # live id -> label
        self._external = np.zeros(64, dtype=np.int64)  # label -> id
        self._next = 0
        self._hnsw = False
        self._index: faiss.IndexIDMap2 = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    @property
    def kind(self) -> str:
        return "hnsw" if self._hnsw else "flat"

    def __len__(self) -> int:
        return len(self._label_of)

    def ids(self) -> np.ndarray:
        """Live ids, in insertion order."""
        live: np.ndarray = self._external[self._live_labels()]
        return live

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add unit vectors; ids must not be live already."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        clash = [i for i in ids.tolist() if i in self._label_of]
        if clash or len(set(ids.tolist())) != len(ids):
            raise IndexError_(f"vector index already holds ids {clash or ids.tolist()}")
        labels = np.arange(self._next, self._next + len(ids), dtype=np.int64)
        try:
            self._index.add_with_ids(vectors, labels)
        except RuntimeError as exc:
            raise IndexError_(f"vector index rejected {len(ids)} vectors: {exc}") from exc
        self._remember(ids, labels)
        if not self._hnsw and self._index.ntotal > self._threshold:
            self._rebuild(hnsw=True)

    def remove(self, ids: np.ndarray) -> None:
        labels = [self._label_of.pop(i) for i in np.asarray(ids).tolist() if i in self._label_of]
        if not labels:
            return
        if not self._hnsw:
            self._index.remove_ids(faiss.IDSelectorBatch(np.array(labels, dtype=np.int64)))
            return
        self._deleted.update(labels)
        if len(self._deleted) > self._rebuild_fraction * self._index.ntotal:
            self._rebuild(hnsw=len(self) > self._threshold // 2)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (similarities, ids) for one query vector, best first."""
        live = len(self)
        if live == 0 or k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        want = min(k + len(self._deleted), int(self._index.ntotal))
        sims, labels = self._index.search(
            np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), want
        )
        sims, labels = sims[0], labels[0]
        keep = labels >= 0
        if self._deleted:
            keep &= ~np.isin(labels, np.fromiter(self._deleted, dtype=np.int64))
        return sims[keep][:k], self._external[labels[keep][:k]]

    def search_many(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Batched search for compaction passes; -1 ids mark missing results."""
        want = min(k, max(1, int(self._index.ntotal)))
        sims, labels = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), want)
        dead = labels < 0
        if self._deleted:
            dead |= np.isin(labels, np.fromiter(self._deleted, dtype=np.int64))
        return sims, np.where(dead, -1, self._external[np.where(dead, 0, labels)])

    def reconstruct(self, ids: np.ndarray) -> np.ndarray:
        """Stored vectors of ``ids``, one C++ call for the whole batch."""
        keys = np.asarray(ids, dtype=np.int64).tolist()
        if not keys:
            return np.empty((0, self._dim), dtype=np.float32)
        missing = [i for i in keys if i not in self._label_of]
        if missing:
            raise IndexError_(f"vector for id {missing[0]} is not in the index")
        labels = np.array([self._label_of[i] for i in keys], dtype=np.int64)
        return np.asarray(self._index.reconstruct_batch(labels), dtype=np.float32)

    def _live_labels(self) -> np.ndarray:
        labels = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        if not self._deleted:
            return labels
        return labels[~np.isin(labels, np.fromiter(self._deleted, dtype=np.int64))]

    def _remember(self, ids: np.ndarray, labels: np.ndarray) -> None:
        end = self._next + len(ids)
        if end > len(self._external):
            self._external = np.resize(self._external, max(end, 2 * len(self._external)))
        self._external[self._next : end] = ids
        self._label_of.update(zip(ids.tolist(), labels.tolist(), strict=True))
        self._next = end

    def _rebuild(self, *, hnsw: bool) -> None:
        """Fresh index of the live vectors, relabelled 0..n-1 in insertion order."""
        live = self.ids()
        vectors = self.reconstruct(live)
        inner: faiss.Index
        if hnsw:
            inner = faiss.IndexHNSWFlat(self._dim, self._m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = self._ef_construction
            inner.hnsw.efSearch = self._ef_search
        else:
            inner = faiss.IndexFlatIP(self._dim)
        index = faiss.IndexIDMap2(inner)
        labels = np.arange(len(live), dtype=np.int64)
        if len(live):
            index.add_with_ids(vectors, labels)
        self._index, self._hnsw, self._deleted = index, hnsw, set()
        self._label_of, self._next = {}, 0
        self._remember(live, labels)
