"""The ``atlas-snapshot/2`` file layout, as one table of members that drives writing,
reading and validation.

A snapshot is an uncompressed zip of ``.npy`` members (as ``np.savez`` writes it): a
JSON header (format, config, clock, counters, sessions, code tables), one array per node column
(row ``i`` of every column is the ``i``-th live memory), the embeddings as one float32
matrix, edges as four parallel arrays, ids and texts as utf-8 blobs with offsets, and
metadata and provenance as one JSON array each (one C parse, not one per memory),
the vector index's HNSW graph when it has one (``hnsw``) and the BM25 postings
(``lexical``; both optional: a file without them rebuilds that index).
Zip stores a CRC-32 per member, so a flipped byte is caught without compression.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

FORMAT = "atlas-snapshot/2"
HEADER = "header"
EMBEDDINGS = "embeddings"


@dataclass(frozen=True, slots=True)
class Column:
    """One numeric array member: its dtype and the rule every value must satisfy."""

    dtype: np.dtype
    allowed: str
    ok: Callable[[np.ndarray], np.ndarray] | None = None  # elementwise, True where valid


def _finite(a: np.ndarray) -> np.ndarray:
    ok: np.ndarray = np.isfinite(a)
    return ok


def _unit(a: np.ndarray) -> np.ndarray:
    return (a >= 0.0) & (a <= 1.0)


def _not_nan(a: np.ndarray) -> np.ndarray:
    ok: np.ndarray = ~np.isnan(a)
    return ok


def _non_negative(a: np.ndarray) -> np.ndarray:
    return a >= 0


_F8, _F4, _I4, _I1, _B = (np.dtype(t) for t in ("<f8", "<f4", "<i4", "i1", "?"))

NODE_COLUMNS: dict[str, Column] = {
    "strength": Column(_F8, "a finite number", _finite),
    "weight": Column(_F8, "a finite number", _finite),
    "created": Column(_F8, "a finite time", _finite),
    "accessed": Column(_F8, "a finite time", _finite),
    "expires": Column(_F8, "a time or +inf (never)", _not_nan),
    "importance": Column(_F4, "a number in [0, 1]", _unit),
    "confidence": Column(_F4, "a number in [0, 1]", _unit),
    "assoc": Column(_F4, "a finite number", _finite),
    "count": Column(_I4, "an int >= 0", _non_negative),
    "pinned": Column(_B, "a bool"),
    "working": Column(_B, "a bool"),
}
"""Node-table columns copied as they are (same name as the ``NodeTable`` attribute)."""

CODE_COLUMNS: dict[str, Column] = {
    "kind": Column(_I1, "an index into the header's 'kinds'"),
    "status": Column(_I1, "an index into the header's 'statuses'"),
    "session": Column(_I4, "an index into the header's 'sessions'"),
}
"""Node columns holding codes into a header list; the file carries its own code tables, so
a reordered enum in a later version still reads old files right."""

EDGE_COLUMNS: dict[str, Column] = {
    "edge_source": Column(_I4, "a row index of a memory"),
    "edge_target": Column(_I4, "a row index of a memory"),
    "edge_relation": Column(_I1, "an index into the header's 'relations'"),
    "edge_strength": Column(_F8, "a finite number", _finite),
}
"""One row per typed relation (a pair of memories may hold several)."""

TEXT_COLUMNS = ("ids", "contents")
"""Per-memory strings stored as ``<name>_offsets`` (int64, n + 1) and ``<name>_blob``
(uint8, utf-8)."""

JSON_COLUMNS = ("metadata", "provenance")
"""Per-memory JSON values stored as one JSON array each (``<name>_json``, uint8)."""

HEADER_KEYS = frozenset(
    (
        "format",
        "config",
        "embedder",
        "now",
        "last_decay",
        "counters",
        "rng",
        "sessions",
        "kinds",
        "statuses",
        "relations",
        "count",
    )
)
"""Required header keys; ``graph`` is optional (absent or null: no HNSW graph stored)."""


def pack_texts(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, blob): text ``i`` is ``blob[offsets[i]:offsets[i + 1]]`` in utf-8."""
    encoded = [t.encode() for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)


def unpack_texts(offsets: np.ndarray, blob: np.ndarray) -> list[str]:
    """Inverse of ``pack_texts`` (offsets already checked); UnicodeDecodeError if not utf-8."""
    data = blob.tobytes()
    ends = offsets.tolist()
    return [data[a:b].decode() for a, b in pairwise(ends)]


def read_texts(arrays: dict[str, np.ndarray], name: str) -> list[str]:
    """The strings packed as ``<name>_offsets`` and ``<name>_blob``, after checking both;
    ``Refusal`` naming what is wrong (UnicodeDecodeError if the blob is not utf-8)."""
    for member in (f"{name}_offsets", f"{name}_blob"):
        if member not in arrays:
            raise Refusal(f"lacks the member {member!r}")
    offsets, blob = arrays[f"{name}_offsets"], arrays[f"{name}_blob"]
    if offsets.dtype != np.int64 or offsets.ndim != 1 or blob.dtype != np.uint8:
        raise Refusal(f"{name}_offsets/{name}_blob must be int64 offsets and uint8 bytes")
    steps = np.diff(offsets)
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(blob) or (steps < 0).any():
        raise Refusal(
            f"{name}_offsets must rise from 0 to the blob's length {len(blob)}, "
            f"got {len(offsets)} offsets ending at {offsets[-1] if len(offsets) else None}"
        )
    return unpack_texts(offsets, blob)


@dataclass(slots=True)
class Raw:
    """A snapshot as read from either layout, before any check: the header, the arrays
    by member name and the per-memory Python values."""

    header: Any
    arrays: dict[str, np.ndarray]
    ids: Any
    contents: Any
    metadata: Any
    provenance: Any


class Refusal(Exception):
    """A failed check, before the reader adds the file's path and turns it into an
    ``InputError``."""
