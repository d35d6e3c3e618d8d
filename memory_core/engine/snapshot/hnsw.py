"""The vector index's HNSW graph in a snapshot, as checked arrays.

Rebuilding HNSW over 100k vectors takes minutes; reading its graph back takes a
fraction of a second and gives the very same graph (same search results). The graph is
stored as plain arrays, never as FAISS's own serialisation, so every neighbour id is
checked before FAISS sees it: a snapshot may come from an upload.

Members: ``graph_rows`` (int64, one per FAISS label: the memory row it holds, -1 for a
deleted vector that still routes searches), ``graph_deleted`` (float32, the deleted
vectors, in label order), ``graph_levels`` (int32, each label's level count) and
``graph_neighbors`` (int32, FAISS's flat neighbour table, -1 for an empty place; its
offsets follow from the levels), and ``graph_span`` (float32, the 8-bit quantiser's range;
absent in files written before the graph held 8-bit codes). The header's ``graph`` holds
``m``, ``entry_point`` and ``max_level``, or is null when the index is exact (rebuilt on
load in milliseconds).
"""

from __future__ import annotations

from typing import Any

import faiss
import numpy as np

from memory_core.engine import plain_pages
from memory_core.engine.index.half_rows import HalfRows
from memory_core.engine.index.vector import quantised_hnsw, quantiser_range, quantiser_span
from memory_core.engine.snapshot.layout import Refusal

MEMBERS = ("graph_rows", "graph_deleted", "graph_levels", "graph_neighbors")
SPAN = "graph_span"
"""The 8-bit quantiser's range (float32, each component's low end then its span): written
since the graph holds 8-bit codes; a file without it (its graph was built over float32
rows) gets the range of its own vectors."""
WRITTEN = (*MEMBERS, SPAN)
"""Every graph member a snapshot is written with (``MEMBERS`` are required to read one)."""
_CHUNK = 8192


def capture(
    index: Any, ids: np.ndarray, row_of: np.ndarray
) -> tuple[dict[str, Any], dict[str, np.ndarray], np.ndarray]:
    """(header entry, members, labels of the deleted vectors) of an HNSW ``index`` whose
    label ``i`` holds id ``ids[i]`` (-1: deleted); ``row_of`` maps an id (slot) to its
    row in the snapshot. The deleted vectors themselves (``graph_deleted``) are the
    caller's to read: they never change, so they can be copied after the lock is gone;
    the links can (an insert rewires its neighbours), so they are copied here."""
    hnsw: Any = index.hnsw
    rows = np.where(ids >= 0, row_of[np.maximum(ids, 0)], -1)
    header = {
        "m": int(hnsw.nb_neighbors(1)),
        "entry_point": int(hnsw.entry_point),
        "max_level": int(hnsw.max_level),
    }
    members: dict[str, np.ndarray] = {
        "graph_rows": rows.astype(np.int64),
        "graph_levels": faiss.vector_to_array(hnsw.levels).astype(np.int32, copy=False),
        "graph_neighbors": faiss.vector_to_array(hnsw.neighbors).astype(np.int32, copy=False),
        SPAN: quantiser_span(index),
    }
    return header, members, np.flatnonzero(ids < 0)


def check(header: Any, arrays: dict[str, np.ndarray], n: int, dim: int, m: int) -> None:
    """Refuse a graph that FAISS could not search safely or that does not index exactly
    the snapshot's ``n`` memories."""
    if not isinstance(header, dict) or any(
        not _is_int(header.get(k)) for k in ("m", "entry_point", "max_level")
    ):
        raise Refusal(
            f"graph is {header!r}; allowed: null or {{'m', 'entry_point', 'max_level'}} ints"
        )
    if header["m"] != m:
        raise Refusal(f"graph m is {header['m']}; allowed: the config's hnsw_m {m}")
    for name in MEMBERS:
        if name not in arrays:
            raise Refusal(f"lacks the member {name!r}")
    rows, deleted = arrays["graph_rows"], arrays["graph_deleted"]
    levels, neighbors = arrays["graph_levels"], arrays["graph_neighbors"]
    size = len(rows)
    if rows.dtype != np.int64 or rows.ndim != 1:
        raise Refusal(f"graph_rows must be int64 of one dimension, got {rows.dtype} {rows.shape}")
    live = np.sort(rows[rows >= 0])
    if (rows < -1).any() or not np.array_equal(live, np.arange(n)):
        raise Refusal(
            f"graph_rows must hold every memory row 0 to {n - 1} once, and -1 for deleted vectors"
        )
    if (
        deleted.dtype != np.float32
        or deleted.shape != (size - n, dim)
        or not np.isfinite(deleted).all()
    ):
        raise Refusal(
            f"graph_deleted must be finite float32 of shape ({size - n}, {dim}), got {deleted.dtype} {deleted.shape}"
        )
    cum = _cumulative(dim, m)
    if (
        levels.dtype != np.int32
        or levels.shape != (size,)
        or ((levels < 1) | (levels >= len(cum))).any()
    ):
        raise Refusal(f"graph_levels must be {size} int32 level counts from 1 to {len(cum) - 1}")
    if neighbors.dtype != np.int32 or neighbors.shape != (int(cum[levels].sum()),):
        raise Refusal(
            f"graph_neighbors must be int32 of shape ({int(cum[levels].sum())},), as the levels give, got {neighbors.dtype} {neighbors.shape}"
        )
    span = arrays.get(SPAN)
    if span is not None and (
        span.dtype != np.float32
        or span.shape != (2 * dim,)
        or not np.isfinite(span).all()
        or (span[dim:] <= 0).any()
    ):
        raise Refusal(
            f"{SPAN} must be {2 * dim} finite float32 (lows, then spans > 0), got {span.dtype} {span.shape}"
        )
    if ((neighbors < -1) | (neighbors >= size)).any():
        raise Refusal(f"graph_neighbors must hold labels from 0 to {size - 1} or -1")
    entry, top = header["entry_point"], header["max_level"]
    if size and not (0 <= entry < size and levels[entry] - 1 == top == levels.max() - 1):
        raise Refusal(f"graph entry_point {entry} / max_level {top} do not match the levels")


def build(
    header: dict[str, Any],
    arrays: dict[str, np.ndarray],
    embeddings: np.ndarray,
    ef_construction: int,
    ef_search: int,
) -> tuple[Any, HalfRows, np.ndarray]:
    """(the HNSW index over 8-bit codes, the float16 rows of its labels, the memory row of
    each label, -1 deleted) from checked arrays. The graph is the same whether the file
    was written by an index over float32 rows or over 8-bit codes: the codes follow from
    the file's rows (float16-rounded since the index keeps float16 rows; float32 in older
    files, whose codes were made from those) and the quantiser's range (``SPAN``, or the
    file's vectors' range)."""
    rows, deleted = arrays["graph_rows"], arrays["graph_deleted"]
    dim, size = embeddings.shape[1], len(rows)
    span = arrays.get(SPAN)
    if span is None:
        span = quantiser_range(np.concatenate([embeddings, deleted]))
    index = quantised_hnsw(dim, header["m"], ef_construction, ef_search, span)
    storage: Any = faiss.downcast_index(index.storage)  # its SWIG methods lack stubs
    codes = _reserved_codes(storage, size)
    # room for as many rows again, as growth by adds would leave (an unwritten page is
    # not resident)
    exact = HalfRows(dim, 2 * size)
    dead = rows < 0
    at = np.where(dead, np.cumsum(dead) - 1, rows)  # row in embeddings, or in deleted
    buffer = plain_pages.empty((min(_CHUNK, size), dim), np.float32)
    for start in range(0, size, _CHUNK):
        stop = min(start + _CHUNK, size)
        chunk = _gathered(embeddings, deleted, dead[start:stop], at[start:stop], buffer)
        # the codes FAISS's own add would write, with no growth of its table by copies
        storage.sa_encode_c(stop - start, faiss.swig_ptr(chunk), faiss.swig_ptr(codes[start:]))
        exact.add(chunk)
    storage.ntotal = size
    hnsw: Any = index.hnsw  # the SWIG class's stubs lack its tables
    levels = arrays["graph_levels"]
    offsets = np.zeros(len(levels) + 1, dtype=np.int64)
    np.cumsum(_cumulative(dim, header["m"])[levels], out=offsets[1:])
    faiss.copy_array_to_vector(levels, hnsw.levels)
    faiss.copy_array_to_vector(offsets.astype(np.uint64), hnsw.offsets)
    faiss.copy_array_to_vector(arrays["graph_neighbors"], hnsw.neighbors)
    hnsw.entry_point, hnsw.max_level = header["entry_point"], header["max_level"]
    index.ntotal = size
    return index, exact, rows


def _gathered(
    embeddings: np.ndarray,
    deleted: np.ndarray,
    dead: np.ndarray,
    at: np.ndarray,
    buffer: np.ndarray,
) -> np.ndarray:
    """The rows ``embeddings[at]``, ``deleted[at]`` where ``dead``, C-contiguous: a view
    of the file's rows when they are a run of live ones (every label of a graph without
    deletions), else gathered into ``buffer`` (reused: the caller is done with the last
    chunk)."""
    if not dead.any() and (np.diff(at) == 1).all():
        return np.ascontiguousarray(embeddings[at[0] : at[-1] + 1])
    out = buffer[: len(at)]
    if dead.any():
        out[~dead] = embeddings[at[~dead]]
        out[dead] = deleted[at[dead]]
    else:
        np.take(embeddings, at, axis=0, out=out)
    return out


def _reserved_codes(storage: Any, size: int) -> np.ndarray:
    """A view of ``storage``'s code table (an empty ``IndexScalarQuantizer``) resized to
    ``size`` codes, one row each, to be written in place."""
    storage.codes.resize(size * storage.code_size)
    table: np.ndarray = faiss.rev_swig_ptr(storage.codes.data(), size * storage.code_size)
    return table.reshape(size, storage.code_size)


def _cumulative(dim: int, m: int) -> np.ndarray:
    """FAISS's neighbour-table width up to each level count, for degree ``m``."""
    probe = faiss.IndexHNSWFlat(dim, m)  # held: the table lives inside it
    return faiss.vector_to_array(probe.hnsw.cum_nneighbor_per_level).astype(np.int64)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
