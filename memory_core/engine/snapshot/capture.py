"""Taking a snapshot: a short copy under the atlas lock, then the rest outside it.

``freeze`` runs under the lock and copies only what can change: the node columns (a
gather each), the table's lists by reference (a list copy: texts, ids and provenance
are immutable, and metadata dicts are replaced, never edited, once stored), the edge
arrays, the HNSW links, the BM25 postings (one dict copy: the index copies a term's
postings before it next changes them) and the header. The vectors are not copied there: a stored row
never changes, so ``complete`` gathers them afterwards a chunk at a time, with no lock
for an HNSW index's float16 rows (their array at the freeze stays whole) and each chunk
under the lock for a few milliseconds for an exact index's (an add may move that
storage). At 100k memories the lock is held once, ~10 ms, instead of the whole ~1 s copy.
"""

from __future__ import annotations

import json
import zipfile
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npy

from memory_core.engine.graph import RELATIONS, FrozenEdges
from memory_core.engine.index.vector import PinnedRows
from memory_core.engine.model import KIND_CODES, STATUS_CODES
from memory_core.engine.snapshot import hnsw, lexical
from memory_core.engine.snapshot.layout import (
    CODE_COLUMNS,
    EDGE_COLUMNS,
    EMBEDDINGS,
    FORMAT,
    HEADER,
    NODE_COLUMNS,
    pack_texts,
)
from memory_core.engine.state import AtlasState

MEMBER_CHUNK = 1 << 20
"""Bytes of an array written at a time (``write_members``)."""


@dataclass(slots=True)
class Capture:
    """Everything a snapshot file holds, copied out of the live state (shares nothing
    mutable with it)."""

    header: dict[str, Any]
    arrays: dict[str, np.ndarray]
    ids: list[str]
    contents: list[str]
    metadata: list[dict[str, Any] | None]
    provenance: list[tuple[str, ...]]


@dataclass(slots=True)
class Frozen:
    """What ``freeze`` took under the lock; ``complete`` turns it into a ``Capture``."""

    header: dict[str, Any]
    arrays: dict[str, np.ndarray]
    order: np.ndarray  # the live slots, in file order (a list of them is made outside the lock)
    row_of: np.ndarray
    by_slot: tuple[list[Any], list[Any], list[Any], list[Any]]  # ids, texts, metadata, provenance
    edges: FrozenEdges
    vectors: PinnedRows
    deleted: PinnedRows | None
    postings: dict[str, Any]  # LexicalIndex.freeze()


def capture(state: AtlasState) -> Capture:
    """Copy what a snapshot needs, all at once (call under the atlas lock)."""
    return complete(freeze(state), nullcontext())


def freeze(state: AtlasState) -> Frozen:
    """The part of a snapshot that must be copied at one instant (call under the lock)."""
    table = state.table
    slots = table.alive_slots()
    arrays = {name: getattr(table, name)[slots] for name in (*NODE_COLUMNS, *CODE_COLUMNS)}
    # the table's session codes count every session ever opened; the file numbers the
    # live ones in its own list
    position = np.full(len(state.session_names), -1, dtype=CODE_COLUMNS["session"].dtype)
    for i, session in enumerate(state.sessions.values()):
        position[session.code] = i
    arrays["session"] = position[arrays["session"]]
    row_of = np.full(table.high, -1, dtype=np.int64)
    row_of[slots] = np.arange(len(slots))
    graph = state.vectors.graph()
    graph_header, deleted = None, None
    if graph is not None:
        graph_header, members, deleted_labels = hnsw.capture(*graph, row_of)
        arrays.update(members)
        deleted = state.vectors.pin_labels(deleted_labels)
    high = table.high
    return Frozen(
        header=_header(state, len(slots), graph_header),
        arrays=arrays,
        order=slots,
        row_of=row_of,
        by_slot=(
            table.ids[:high],
            table.contents[:high],
            table.metadata[:high],
            table.provenance[:high],
        ),
        edges=state.edges.freeze(),
        vectors=state.vectors.pin(slots),
        deleted=deleted,
        postings=state.lexical.freeze(),
    )


def complete(frozen: Frozen, lock: AbstractContextManager[Any]) -> Capture:
    """The rest of the copy, outside the lock but for an exact index's vector gathers
    (each under ``lock``, the atlas's, held a few milliseconds per chunk)."""
    graph = {name: frozen.arrays.pop(name) for name in hnsw.WRITTEN if name in frozen.arrays}
    arrays = frozen.arrays  # the file's member order: columns, vectors, edges, graph
    arrays[EMBEDDINGS] = frozen.vectors.read(lock)
    arrays.update(_edges(frozen.edges, frozen.row_of))
    if frozen.deleted is not None:
        graph["graph_deleted"] = frozen.deleted.read(lock)
        arrays.update({name: graph[name] for name in hnsw.WRITTEN})
    arrays.update(lexical.capture(frozen.postings, frozen.row_of) or {})
    ids, contents, metadata, provenance = frozen.by_slot
    order = frozen.order.tolist()
    return Capture(
        header=frozen.header,
        arrays=arrays,
        ids=[ids[s] for s in order],
        contents=[contents[s] for s in order],
        metadata=[metadata[s] for s in order],
        provenance=[provenance[s] for s in order],
    )


def _header(state: AtlasState, count: int, graph: dict[str, Any] | None) -> dict[str, Any]:
    rng = state.rng.getstate()
    return {
        "format": FORMAT,
        "config": state.config.to_dict(),
        "embedder": {"name": state.embedder.name, "dim": state.embedder.dim},
        "now": state.clock.now(),
        "last_decay": state.last_decay,
        "counters": dict(state.counters),
        "rng": [rng[0], list(rng[1]), rng[2]],
        "sessions": [
            {
                "id": s.id,
                "ended": s.ended,
                "last_id": s.last_id,
                "working": list(s.working),
                "created_at": s.created_at,
            }
            for s in state.sessions.values()
        ],
        "kinds": [k.value for k in KIND_CODES],
        "statuses": [s.value for s in STATUS_CODES],
        "relations": [r.value for r in RELATIONS],
        "count": count,
        "graph": graph,
        "lexical": None,  # set by ``write`` when the postings are stored
    }


def _edges(edges: FrozenEdges, row_of: np.ndarray) -> dict[str, np.ndarray]:
    sources, targets, codes, strengths = edges.columns()
    dtypes = {name: column.dtype for name, column in EDGE_COLUMNS.items()}
    return {
        "edge_source": row_of[sources].astype(dtypes["edge_source"]),
        "edge_target": row_of[targets].astype(dtypes["edge_target"]),
        "edge_relation": codes.astype(dtypes["edge_relation"]),
        "edge_strength": strengths.astype(dtypes["edge_strength"]),
    }


def write(snapshot: Capture, path: Path) -> Path:
    """Encode and write a capture, uncompressed (needs no lock)."""
    arrays: dict[str, Any] = dict(snapshot.arrays)
    texts = {name: pack_texts(getattr(snapshot, name)) for name in ("ids", "contents")}
    header = snapshot.header
    if lexical.MEMBERS[0] in arrays:  # the postings are bound to the texts they index
        header = {**header, "lexical": lexical.header(texts["contents"][1])}
    arrays[HEADER] = _json_bytes(header)
    for name, (offsets, blob) in texts.items():
        arrays[f"{name}_offsets"], arrays[f"{name}_blob"] = offsets, blob
    arrays["metadata_json"] = _json_bytes(snapshot.metadata)
    arrays["provenance_json"] = _json_bytes(snapshot.provenance)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        write_members(fh, arrays)
    return path


def write_members(fh: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    """The zip ``np.savez`` writes (the same ``.npy`` members, byte for byte), written
    from each array's own memory ``MEMBER_CHUNK`` bytes at a time. ``np.savez`` copies
    16 MB at a time into new bytes while holding the GIL; here the only work per chunk
    is zip's CRC and the file write, which both release it, so a checkpoint's write
    never keeps the agent's thread waiting for more than a chunk's bookkeeping."""
    with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED) as archive:
        for name, value in arrays.items():
            array = np.ascontiguousarray(value)
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                npy.write_array_header_1_0(member, npy.header_data_from_array_1_0(array))
                data = memoryview(array.reshape(-1).view(np.uint8).data)
                for start in range(0, len(data), MEMBER_CHUNK):
                    member.write(data[start : start + MEMBER_CHUNK])


def _json_bytes(value: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(value, allow_nan=True).encode(), dtype=np.uint8)
