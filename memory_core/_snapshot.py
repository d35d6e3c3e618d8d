"""Whole-atlas snapshots: one ``.npz`` file with columns, texts, edges, embeddings, config.

Exact round trip: a loaded atlas has the same memories, weights, edges, vectors,
sessions, counters and id generator state as the saved one.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory_core._state import AtlasState
from memory_core.config import AtlasConfig
from memory_core.errors import ConfigError, InputError
from memory_core.model import Relation

FORMAT = "atlas-snapshot/1"
COLUMNS = (
    "strength",
    "weight",
    "created",
    "accessed",
    "expires",
    "importance",
    "confidence",
    "assoc",
    "count",
    "kind",
    "status",
    "pinned",
    "working",
)

REQUIRED_KEYS = frozenset(
    (
        "format",
        "config",
        "now",
        "last_decay",
        "counters",
        "rng",
        "sessions",
        "ids",
        "session_of",
        "contents",
        "metadata",
        "provenance",
        "edges",
    )
)


@dataclass(slots=True)
class SnapshotData:
    config: AtlasConfig
    meta: dict[str, Any]
    columns: dict[str, np.ndarray]
    embeddings: np.ndarray


@dataclass(slots=True)
class Capture:
    """Everything a snapshot file holds, copied out of the live state."""

    meta: bytes
    embeddings: np.ndarray
    columns: dict[str, np.ndarray]


def capture(state: AtlasState) -> Capture:
    """Copy what a snapshot needs (call under the atlas lock; fast, no I/O, no compression)."""
    table = state.table
    slots = table.alive_slots()
    slot_index = {int(s): i for i, s in enumerate(slots.tolist())}
    embeddings = state.vectors.reconstruct(slots)
    edges = [
        [slot_index[src], slot_index[v if src == u else u], rel.value, float(strength)]
        for u, v, data in state.edges.graph.edges(data=True)
        for rel, (src, strength) in data["rels"].items()
    ]
    rng_state = state.rng.getstate()
    meta = {
        "format": FORMAT,
        "config": state.config.to_dict(),
        "embedder": {"name": state.embedder.name, "dim": state.embedder.dim},
        "now": state.clock.now(),
        "last_decay": state.last_decay,
        "counters": dict(state.counters),
        "rng": [rng_state[0], list(rng_state[1]), rng_state[2]],
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
        "ids": [table.ids[s] for s in slots.tolist()],
        "session_of": [state.session_of(s) for s in slots.tolist()],
        "contents": [table.contents[s] for s in slots.tolist()],
        "metadata": [table.metadata[s] for s in slots.tolist()],
        "provenance": [list(table.provenance[s]) for s in slots.tolist()],
        "edges": edges,
    }
    columns = {f"col_{name}": getattr(table, name)[slots] for name in COLUMNS}  # copies
    return Capture(json.dumps(meta).encode(), embeddings, columns)


def write(snapshot: Capture, path: Path) -> Path:
    """Compress and write a capture (needs no lock: the capture shares nothing live)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {
        "meta": np.frombuffer(snapshot.meta, dtype=np.uint8),
        "embeddings": snapshot.embeddings,
        **snapshot.columns,
    }
    with path.open("wb") as fh:
        np.savez_compressed(fh, **arrays)
    return path


def read(path: Path) -> SnapshotData:
    try:
        # our own handle: np.load leaks the file it opened when the zip is invalid
        with path.open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
            meta = json.loads(bytes(npz["meta"]).decode())
            columns = {name: npz[f"col_{name}"] for name in COLUMNS}
            embeddings = npz["embeddings"]
    except (
        OSError,
        EOFError,
        KeyError,
        ValueError,
        TypeError,  # a plain .npy array instead of an .npz archive
        NotImplementedError,  # zipfile: a flipped compression-method byte
        zipfile.BadZipFile,
        zlib.error,
        json.JSONDecodeError,
    ) as exc:
        raise InputError("snapshot", f"{path} is not an atlas snapshot ({exc})") from exc
    missing = REQUIRED_KEYS - meta.keys() if isinstance(meta, dict) else REQUIRED_KEYS
    if missing:
        raise InputError("snapshot", f"{path} lacks {', '.join(sorted(missing))}")
    if meta.get("format") != FORMAT:
        raise InputError("snapshot", f"{path} has format {meta.get('format')!r}, expected {FORMAT}")
    try:
        config = AtlasConfig.from_mapping(meta["config"])
    except ConfigError as exc:
        raise InputError("snapshot", f"{path} holds an invalid config: {exc}") from exc
    n = len(meta["ids"])
    if embeddings.shape[0] != n or any(len(c) != n for c in columns.values()):
        raise InputError("snapshot", f"{path} is inconsistent: column lengths differ from {n} ids")
    return SnapshotData(config, meta, columns, embeddings)


def restore(state: AtlasState, data: SnapshotData) -> None:
    """Fill an empty atlas state from snapshot data."""
    meta, table = data.meta, state.table
    if data.embeddings.shape[1] != state.embedder.dim and len(meta["ids"]):
        raise InputError(
            "embedder",
            f"dimension {state.embedder.dim} does not match the snapshot's {data.embeddings.shape[1]}",
        )
    saved = (meta.get("embedder") or {}).get("name")
    if saved is not None and saved != state.embedder.name and len(meta["ids"]):
        # same dimension, different model: the stored vectors would be compared to
        # queries from another vector space and retrieval would be silently meaningless
        raise InputError(
            "embedder",
            f"the snapshot's vectors come from {saved!r}, this atlas embeds with "
            f"{state.embedder.name!r}",
        )
    sessions = {}
    for info in meta["sessions"]:
        session = state.new_session(info["id"], info["created_at"])
        session.ended, session.last_id = info["ended"], info["last_id"]
        session.working = deque(info["working"])
        sessions[info["id"]] = session
    slots = [table.allocate(ident) for ident in meta["ids"]]
    slot_arr = np.array(slots, dtype=np.int64)
    for name in COLUMNS:
        getattr(table, name)[slot_arr] = data.columns[name]
    for i, slot in enumerate(slots):
        table.session[slot] = sessions[meta["session_of"][i]].code
        table.contents[slot] = meta["contents"][i]
        table.metadata[slot] = meta["metadata"][i]
        table.provenance[slot] = tuple(meta["provenance"][i])
        state.edges.add_node(slot)
    if len(slots):
        state.index(slot_arr, data.embeddings)
    for src, dst, rel, strength in meta["edges"]:
        state.edges.link(slots[src], slots[dst], Relation(rel), float(strength))
    state.counters = Counter(meta["counters"])
    state.last_decay = meta["last_decay"]
    version, internal, gauss = meta["rng"]
    state.rng.setstate((version, tuple(internal), gauss))
    clock_set = getattr(state.clock, "set", None)
    if callable(clock_set) and state.clock.now() < meta["now"]:
        clock_set(meta["now"])
