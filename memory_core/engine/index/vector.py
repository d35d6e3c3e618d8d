"""FAISS vector index with stable int ids, exact while small and HNSW when large.

One index serves the whole atlas; a search can be scoped to a subset of ids (a
session's memories) with ``among``. A small scope is searched exactly over its own
rows (cost grows with the scope, not with the index); a large one inside FAISS with a
bitmap of the scope's labels. Exact inner-product search is the right answer below a
few tens of thousands of vectors; above ``hnsw_threshold`` the index is rebuilt as
HNSW. Deletions are tombstoned in both modes (HNSW cannot delete; an exact index would
move every later vector) and filtered inside FAISS by a bitmap of live labels, so a
search costs the same however many tombstones there are; a rebuild purges them once
they exceed ``rebuild_fraction`` of the index. FAISS sees private labels (its own row
numbers), never the caller's ids: an id removed and later added again (the atlas reuses
slots) gets a fresh label, so its tombstoned old vector can neither hide nor impersonate
the new one. Ids are non-negative ints (the atlas's slots), id -> label an array.

The HNSW graph holds its vectors as 8-bit codes (one byte per component, over the range
the vectors had when the graph was built), which makes its searches and inserts cheaper
than over float32; float16 rows sit beside it (``HalfRows``), and the graph's best
``2k + COARSE_SLACK`` candidates are scored again from them in float32 arithmetic, so
similarities are those of the float16-rounded vectors (to ~1e-4). Those rows are also
what a large index returns and snapshots: an index rounds its vectors to float16 when
it becomes HNSW. An exact index keeps float32 rows.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from typing import Any

import faiss
import numpy as np

from memory_core.engine.index.half_rows import HalfRows
from memory_core.engine.validate import is_count
from memory_core.errors import IndexError_

EXACT_SCOPE = 4096
"""Scopes up to this many ids are searched exactly over their own rows (a gather and
one matrix product); larger ones inside FAISS with a scope bitmap."""

COARSE_FROM = 8192
"""An exact index this large is scanned in float16 first (half the bytes to read), and the
best ``2k + COARSE_SLACK`` labels are then scored again exactly in float32 by FAISS's own
kernel: the same similarities as a float32 scan, for about a third of its cost at 20k.
Smaller indexes (every per-conversation atlas) are scanned in float32 alone."""
COARSE_SLACK = 32
"""Candidates beyond ``2k`` scored again in float32, by an exact index's float16 scan and
by the 8-bit HNSW graph alike."""

_SWIG: Any = faiss
"""faiss, for the SWIG classes its type stubs do not cover."""


@functools.cache
def _single_threaded() -> None:
    # one query at a time: OpenMP fan-out costs more than it saves on 2 cores
    faiss.omp_set_num_threads(1)


def _rows(flat: Any, dim: int) -> np.ndarray:
    """Zero-copy view of every row stored in a FAISS flat index (valid until the next add
    to that index object)."""
    n = int(flat.ntotal)
    view: np.ndarray = faiss.rev_swig_ptr(flat.get_xb(), n * dim)
    return view.reshape(n, dim)


def quantiser_range(vectors: np.ndarray) -> np.ndarray:
    """The 8-bit quantiser's per-component range for ``vectors`` (each component's lowest
    value, then its span, as FAISS keeps them), widened by an eighth of the span on each
    side so that vectors added later mostly fall inside it (a component outside is clipped
    in its code alone: candidates are scored again from the float32 rows)."""
    if not len(vectors):
        dim = vectors.shape[1]
        return np.concatenate([np.full(dim, -1.0), np.full(dim, 2.0)]).astype(np.float32)
    low, high = vectors.min(axis=0), vectors.max(axis=0)
    pad = np.maximum((high - low) / 8, 1e-3)
    return np.concatenate([low - pad, high - low + 2 * pad]).astype(np.float32)


def quantised_hnsw(dim: int, m: int, ef_construction: int, ef_search: int, span: np.ndarray) -> Any:
    """An empty HNSW index (inner product) over 8-bit codes of each component within
    ``span`` (``quantiser_range``): set, not trained, so an index rebuilt from a snapshot
    encodes every vector exactly as the saved one did."""
    index: Any = _SWIG.IndexHNSWSQ(
        dim, _SWIG.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT
    )
    storage: Any = faiss.downcast_index(index.storage)
    faiss.copy_array_to_vector(np.ascontiguousarray(span, dtype=np.float32), storage.sq.trained)
    storage.is_trained = index.is_trained = True
    index.hnsw.efConstruction = ef_construction
    index.hnsw.efSearch = ef_search
    return index


def quantiser_span(index: Any) -> np.ndarray:
    """The ``quantiser_range`` an index made by ``quantised_hnsw`` encodes with."""
    storage: Any = faiss.downcast_index(index.storage)
    span: np.ndarray = faiss.vector_to_array(storage.sq.trained)
    return span.astype(np.float32, copy=False)


def _stored_rows(store: Any, dim: int) -> np.ndarray:
    """Every row of a row store: a FAISS flat index's float32 rows (zero-copy) or a
    ``HalfRows``'s float16 ones; valid until the next add to the store."""
    return store.rows() if isinstance(store, HalfRows) else _rows(store, dim)


class PinnedRows:
    """Some stored vectors, to be read later without holding a lock throughout.

    A row never changes once added: adds append, deletions tombstone, a rebuild makes a
    new store object (this keeps the old one alive). So ``read`` returns the vectors as
    they were when pinned. A float16 store (``HalfRows``, every HNSW index) grows into a
    new array, so the array taken at the pin holds its rows for good and is read with no
    lock at all: a snapshot of a large atlas gathers its vectors while the agent writes.
    A FAISS flat store (an exact index, at most ``hnsw_threshold`` rows) may move its
    storage on an add, so each of its chunks is gathered under ``lock``.
    """

    __slots__ = ("_dim", "_pinned", "_store", "labels")

    CHUNK = 2048
    """Rows per gather (3 MB of 384-d vectors, ~2 ms: a short hold of the GIL, or of the
    lock for a flat store)."""

    def __init__(self, store: Any, dim: int, labels: np.ndarray) -> None:
        self._store, self._dim, self.labels = store, dim, labels
        self._pinned = store.rows() if isinstance(store, HalfRows) else None

    def read(self, lock: AbstractContextManager[Any]) -> np.ndarray:
        out = np.empty((len(self.labels), self._dim), dtype=np.float32)
        for start in range(0, len(self.labels), self.CHUNK):
            stop = start + self.CHUNK
            if self._pinned is not None:
                out[start:stop] = self._pinned[self.labels[start:stop]]
                continue
            with lock:
                out[start:stop] = _rows(self._store, self._dim)[self.labels[start:stop]]
        return out


def _half(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` rounded to float16, as float32."""
    return vectors.astype(np.float16).astype(np.float32)


def _grown(array: np.ndarray, size: int, fill: int | bool) -> np.ndarray:
    """``array`` extended to at least ``size`` entries (doubling), new entries ``fill``."""
    if size <= len(array):
        return array
    out = np.full(max(size, 2 * len(array)), fill, dtype=array.dtype)
    out[: len(array)] = array
    return out


def _mark(bits: np.ndarray, labels: np.ndarray, *, on: bool) -> None:
    """Set (``on``) or clear the bits of ``labels`` in a little-endian packed bitmap."""
    masks = np.left_shift(1, labels & 7).astype(np.uint8)
    if on:
        np.bitwise_or.at(bits, labels >> 3, masks)
    else:
        np.bitwise_and.at(bits, labels >> 3, ~masks)


class VectorIndex:
    """Cosine search (inner product on unit vectors) keyed by caller-chosen int ids."""

    __slots__ = (
        "_coarse",
        "_dim",
        "_ef_construction",
        "_ef_search",
        "_exact",
        "_external",
        "_hnsw",
        "_index",
        "_label_of",
        "_live",
        "_live_bits",
        "_m",
        "_n_live",
        "_rebuild_fraction",
        "_threshold",
        "_unscoped",
    )

    def __init__(
        self,
        dim: int,
        *,
        hnsw_threshold: int = 20_000,
        m: int = 32,
        ef_search: int = 128,
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
        self._label_of = np.full(64, -1, dtype=np.int64)  # id -> label, -1 if not live
        self._external = np.zeros(64, dtype=np.int64)  # label -> id
        self._live = np.zeros(64, dtype=bool)  # label -> not tombstoned
        self._live_bits = np.zeros(8, dtype=np.uint8)  # the same, packed: FAISS's filter
        self._n_live = 0
        self._unscoped: dict[int, Any] = {}  # efSearch -> unscoped search parameters
        self._hnsw = False
        self._index: Any = faiss.IndexFlatIP(dim)  # flat, or HNSW over 8-bit codes
        self._exact: Any = self._index  # every label's row: the flat index, or HalfRows
        self._coarse: Any = None  # float16 copy of an exact index's rows, same labels

    @property
    def kind(self) -> str:
        return "hnsw" if self._hnsw else "flat"

    @property
    def ef_search(self) -> int:
        """HNSW search breadth (FAISS searches at least ``k`` wide anyway)."""
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if not is_count(value):
            raise IndexError_(f"ef_search must be an int >= 1, got {value!r}")
        self._ef_search = value

    @property
    def tombstones(self) -> int:
        """Deleted vectors still stored (purged by the next rebuild)."""
        return int(self._index.ntotal) - self._n_live

    def __len__(self) -> int:
        return self._n_live

    def ids(self) -> np.ndarray:
        """Live ids, in insertion order."""
        live: np.ndarray = self._external[self._live_labels()]
        return live

    def graph(self) -> tuple[Any, np.ndarray] | None:
        """(the FAISS HNSW index, the id of each label, -1 where deleted), None while exact:
        snapshots store the graph so a load need not rebuild it."""
        if not self._hnsw:
            return None
        n = int(self._index.ntotal)
        return self._index, np.where(self._live[:n], self._external[:n], -1)

    def adopt(self, index: Any, exact: HalfRows, ids: np.ndarray) -> None:
        """Take over an HNSW index built from a snapshot's graph (``quantised_hnsw``) and
        the float16 rows of its labels (this one must be empty); label ``i`` holds id
        ``ids[i]``, -1 a deleted vector."""
        self._index, self._exact, self._hnsw, self._coarse = index, exact, True, None
        self._external = _grown(self._external, len(ids), 0)
        self._live = _grown(self._live, len(ids), False)
        live = np.flatnonzero(ids >= 0)
        self._remember(ids[live], live)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add unit vectors; ids must be non-negative and not live already."""
        ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(ids) and ids.min() < 0:
            raise IndexError_(f"vector index ids must be >= 0, got {int(ids.min())}")
        held = ids[ids < len(self._label_of)]
        clash = held[self._label_of[held] >= 0].tolist()
        if clash or (len(ids) > 1 and len(np.unique(ids)) != len(ids)):
            raise IndexError_(f"vector index already holds ids {clash or ids.tolist()}")
        start = int(self._index.ntotal)
        if self._hnsw:  # codes and rows alike from the float16 rounding (a snapshot's)
            vectors = _half(vectors)
        try:
            self._index.add(vectors)
        except (RuntimeError, ValueError, AssertionError) as exc:
            raise IndexError_(f"vector index rejected {len(ids)} vectors: {exc}") from exc
        if self._exact is not self._index:
            self._exact.add(vectors)
        if self._coarse is not None:
            self._coarse.add(vectors)
        self._remember(ids, np.arange(start, start + len(ids), dtype=np.int64))
        if not self._hnsw and self._n_live > self._threshold:
            self._rebuild(hnsw=True)

    def remove(self, ids: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if len(ids) > 1:  # one id (an eviction at capacity) is unique already
            ids = np.unique(ids)
        ids = ids[(ids >= 0) & (ids < len(self._label_of))]
        labels = self._label_of[ids]
        labels = labels[labels >= 0]
        if not len(labels):
            return
        self._label_of[ids] = -1
        had_tombstones = self.tombstones > 0
        self._live[labels] = False
        _mark(self._live_bits, labels, on=False)
        self._n_live -= len(labels)
        if not had_tombstones:  # kept parameters have no filter yet: the next gets one
            self._unscoped = {}
        if self.tombstones > self._rebuild_fraction * self._index.ntotal:
            self._rebuild(hnsw=self._hnsw and self._n_live > self._threshold // 2)

    def search(
        self,
        query: np.ndarray,
        k: int,
        *,
        among: np.ndarray | None = None,
        ef_search: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (similarities, ids) for one query vector, best first; only ids in
        ``among`` (live ids, no repeats) when it is given. ``ef_search`` overrides the
        HNSW search breadth for this call (an add's neighbour search needs less than a
        retrieval); it changes nothing while the index is exact."""
        sims, ids = self._scoped(np.asarray(query).reshape(1, -1), k, among, ef_search)
        keep = ids[0] >= 0
        return sims[0][keep], ids[0][keep]

    def search_many(
        self, queries: np.ndarray, k: int, *, among: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Batched ``search``; -1 ids mark missing results."""
        return self._scoped(queries, max(1, k), among)

    def _scoped(
        self,
        queries: np.ndarray,
        k: int,
        among: np.ndarray | None,
        ef_search: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        ef = self._ef_search if ef_search is None else ef_search
        if among is None or len(among) == self._n_live:
            return self._search(queries, k, ef)
        among = np.asarray(among, dtype=np.int64).reshape(-1)
        labels = self._label_of[among]
        if (labels < 0).any():
            raise IndexError_(f"vector for id {int(among[labels < 0][0])} is not in the index")
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self._dim)
        if len(among) <= EXACT_SCOPE:
            return self._search_rows(queries, k, among, labels)
        mask = np.zeros(int(self._index.ntotal), dtype=bool)
        mask[labels] = True
        return self._search(queries, k, ef, np.packbits(mask, bitorder="little"), len(among))

    def reconstruct(self, ids: np.ndarray) -> np.ndarray:
        """Stored vectors of ``ids`` (a copy)."""
        labels = self._labels(ids)
        if not len(labels):
            return np.empty((0, self._dim), dtype=np.float32)
        vectors: np.ndarray = self._stored()[labels].astype(np.float32, copy=False)
        return vectors

    def pin(self, ids: np.ndarray) -> PinnedRows:
        """The stored vectors of ``ids``, to ``read`` later (a snapshot copies them
        outside the atlas lock, a chunk at a time)."""
        return PinnedRows(self._exact, self._dim, self._labels(ids))

    def pin_labels(self, labels: np.ndarray) -> PinnedRows:
        """Like ``pin``, by FAISS label (``graph`` gives them: deleted vectors too)."""
        return PinnedRows(self._exact, self._dim, labels)

    def _labels(self, ids: np.ndarray) -> np.ndarray:
        keys = np.asarray(ids, dtype=np.int64).reshape(-1)
        inside = keys < len(self._label_of)
        labels = np.full(len(keys), -1, dtype=np.int64)
        labels[inside] = self._label_of[keys[inside]]
        if (labels < 0).any():
            raise IndexError_(f"vector for id {int(keys[labels < 0][0])} is not in the index")
        return labels

    def _search(
        self,
        queries: np.ndarray,
        k: int,
        ef: int,
        scope: np.ndarray | None = None,
        n_scope: int = 0,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(similarities, ids) of shape (n, min(k, candidates)); -1 ids where fewer were
        found. ``ef`` is the HNSW search breadth; ``scope`` a packed bitmap of the
        ``n_scope`` labels to search."""
        want = min(k, self._n_live if scope is None else n_scope)
        n = len(queries)
        if want <= 0:
            return np.empty((n, 0), np.float32), np.empty((n, 0), np.int64)
        params = self._params(ef, scope)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if self._hnsw:
            wide = min(2 * want + COARSE_SLACK, max(want, ef))
            _, candidates = self._index.search(queries, wide, params=params)
            sims, labels = self._rescored(queries, candidates, want)
        elif self._index.ntotal >= COARSE_FROM:
            sims, labels = self._search_coarse(queries, want, params)
        else:
            sims, labels = self._index.search(queries, want, params=params)
        found = labels >= 0
        return sims, np.where(found, self._external[np.where(found, labels, 0)], -1)

    def _search_coarse(
        self, queries: np.ndarray, k: int, params: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """(similarities, labels) as a float32 scan gives them: candidates from the float16
        copy, scored again in float32. Candidates go in ascending label order, so equal
        similarities keep the label order a full scan gives them."""
        if self._coarse is None:  # built once the index is this large, then kept in step
            self._coarse = faiss.IndexScalarQuantizer(
                self._dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
            )
            self._coarse.add(self._stored())
        wide = min(2 * k + COARSE_SLACK, int(self._index.ntotal))
        _, candidates = self._coarse.search(queries, wide, params=params)
        return self._rescored(queries, candidates, k)

    def _rescored(
        self, queries: np.ndarray, candidates: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(similarities, labels): each query's best ``k`` of its ``candidates`` labels
        (-1 none) by their float32 rows, FAISS's own kernel; -1 labels where fewer."""
        stored = self._stored()
        sims = np.full((len(queries), k), -np.finfo(np.float32).max, dtype=np.float32)
        labels = np.full((len(queries), k), -1, dtype=np.int64)
        for i, row in enumerate(candidates):
            row = np.sort(row[row >= 0])
            found = min(k, len(row))
            if found:
                rows = stored[row].astype(np.float32, copy=False)
                best, at = faiss.knn(
                    queries[i : i + 1], rows, found, metric=faiss.METRIC_INNER_PRODUCT
                )
                sims[i, :found], labels[i, :found] = best[0], row[at[0]]
        return sims, labels

    def _search_rows(
        self, queries: np.ndarray, k: int, among: np.ndarray, labels: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact search over the gathered rows of ``among`` (FAISS's own kernel, so the
        similarities are bit-identical to an index search)."""
        want = min(k, len(among))
        if want <= 0:
            n = len(queries)
            return np.empty((n, 0), np.float32), np.empty((n, 0), np.int64)
        rows = self._stored()[labels].astype(np.float32, copy=False)
        sims, found = faiss.knn(queries, rows, want, metric=faiss.METRIC_INNER_PRODUCT)
        return sims, np.where(found >= 0, among[np.maximum(found, 0)], -1)

    def _params(self, ef: int, scope: np.ndarray | None = None) -> Any:
        """Search parameters: efSearch ``ef`` for HNSW, and the scope or live-label filter.
        An unscoped search's are kept: making the SWIG objects (a filter over the live
        labels once there are tombstones) cost a retrieve ~30 µs of CPU among its other
        work, ~6 µs in a loop of their own (docs/performance.md, eighth pass). Their filter
        is the packed live-label bitmap itself, updated in place by an add or a delete, so
        they are remade only when that bitmap is reallocated (growth, a batch, a rebuild)
        or the first tombstone appears (session 12)."""
        if scope is not None:
            return self._made_params(ef, scope)
        if ef not in self._unscoped:
            live = self._live_bits if self.tombstones else None
            self._unscoped[ef] = self._made_params(ef, live)
        return self._unscoped[ef]

    def _made_params(self, ef: int, scope: np.ndarray | None) -> Any:
        """New search parameters: efSearch ``ef`` for HNSW, and the packed label filter
        ``scope`` (None: every label)."""
        params: Any = None  # the SWIG classes used here have no type stubs
        if self._hnsw:
            params = _SWIG.SearchParametersHNSW()
            params.efSearch = ef
        if scope is not None:
            params = params or faiss.SearchParameters()
            selector = faiss.IDSelectorBitmap(len(scope), faiss.swig_ptr(scope))
            params.sel = selector
            params.referenced_objects = [selector, scope]  # alive as long as the params
        return params

    def _stored(self) -> np.ndarray:
        """Zero-copy view of every stored row, float32 or float16 (valid until the next
        add or rebuild)."""
        return _stored_rows(self._exact, self._dim)

    def _live_labels(self) -> np.ndarray:
        return np.flatnonzero(self._live[: self._index.ntotal])

    def _remember(self, ids: np.ndarray, labels: np.ndarray) -> None:
        end = int(labels[-1]) + 1 if len(labels) else 0
        self._external = _grown(self._external, end, 0)
        self._live = _grown(self._live, end, False)
        self._external[labels] = ids
        self._live[labels] = True
        bits = _grown(self._live_bits, (len(self._live) + 7) // 8, 0)
        if bits is not self._live_bits or len(labels) > 1:
            # a new bitmap, or a batch (a restore, a rebuild): packed again from the labels,
            # and parameters that point at the old one are dropped
            packed = np.packbits(self._live, bitorder="little")
            bits[:] = 0
            bits[: len(packed)] = packed
            self._live_bits = bits
            self._unscoped = {}
        else:  # one add: its bit set in place, kept parameters see it
            _mark(bits, labels, on=True)
        top = int(ids.max()) + 1 if len(ids) else 0
        self._label_of = _grown(self._label_of, top, -1)
        self._label_of[ids] = labels
        self._n_live += len(ids)

    def _rebuild(self, *, hnsw: bool) -> None:
        """Fresh index of the live vectors, relabelled 0..n-1 in insertion order."""
        live = self.ids()
        vectors = self.reconstruct(live)
        exact: Any = faiss.IndexFlatIP(self._dim)
        index = exact
        if hnsw:
            vectors, exact = _half(vectors), HalfRows(self._dim)
            index = quantised_hnsw(
                self._dim,
                self._m,
                self._ef_construction,
                self._ef_search,
                quantiser_range(vectors),
            )
            index.add(vectors)
        exact.add(vectors)
        self._index, self._exact, self._hnsw, self._coarse = index, exact, hnsw, None
        self._label_of[:] = -1
        self._live[:] = False
        self._live_bits[:] = 0
        self._n_live = 0
        self._unscoped = {}
        self._remember(live, np.arange(len(live), dtype=np.int64))
