"""Taking a snapshot: a quick columnar copy under the atlas lock, then encoding and
writing outside it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.engine.graph import RELATIONS
from memory_core.engine.model import KIND_CODES, STATUS_CODES
from memory_core.engine.snapshot import hnsw
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


def capture(state: AtlasState) -> Capture:
    """Copy what a snapshot needs (call under the atlas lock; no encoding, no I/O)."""
    table = state.table
    slots = table.alive_slots()
    order = slots.tolist()
    arrays = {name: getattr(table, name)[slots] for name in (*NODE_COLUMNS, *CODE_COLUMNS)}
    # the table's session codes count every session ever opened; the file numbers the
    # live ones in its own list
    position = np.full(len(state.session_names), -1, dtype=CODE_COLUMNS["session"].dtype)
    for i, session in enumerate(state.sessions.values()):
        position[session.code] = i
    arrays["session"] = position[arrays["session"]]
    arrays[EMBEDDINGS] = state.vectors.reconstruct(slots)
    row_of = np.full(table.high, -1, dtype=np.int64)
    row_of[slots] = np.arange(len(slots))
    arrays.update(_edges(state, row_of))
    graph = state.vectors.graph()
    graph_header = None
    if graph is not None:
        graph_header, members = hnsw.capture(*graph, row_of)
        arrays.update(members)
    rng = state.rng.getstate()
    header = {
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
        "count": len(order),
        "graph": graph_header,
    }
    return Capture(
        header=header,
        arrays=arrays,
        ids=[table.ids[s] for s in order],
        contents=[table.contents[s] for s in order],
        # merging bumps a memory's metadata in place: copy the dicts, not the references
        metadata=[None if (m := table.metadata[s]) is None else dict(m) for s in order],
        provenance=[table.provenance[s] for s in order],
    )


def _edges(state: AtlasState, row_of: np.ndarray) -> dict[str, np.ndarray]:
    sources, targets, codes, strengths = state.edges.columns()
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
    arrays[HEADER] = _json_bytes(snapshot.header)
    for name, texts in (("ids", snapshot.ids), ("contents", snapshot.contents)):
        arrays[f"{name}_offsets"], arrays[f"{name}_blob"] = pack_texts(texts)
    arrays["metadata_json"] = _json_bytes(snapshot.metadata)
    arrays["provenance_json"] = _json_bytes(snapshot.provenance)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        np.savez(fh, **arrays)
    return path


def _json_bytes(value: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(value, allow_nan=True).encode(), dtype=np.uint8)
