"""Filling an empty atlas state from checked snapshot data."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import replace

import numpy as np

from memory_core.engine.snapshot import hnsw
from memory_core.engine.snapshot.load import SnapshotData
from memory_core.engine.snapshot.paused import collection_paused
from memory_core.engine.state import AtlasState
from memory_core.errors import InputError


def restore(state: AtlasState, data: SnapshotData) -> None:
    """Rebuild the saved atlas in ``state`` (fresh, empty); checks the embedder first."""
    with collection_paused():
        _restore(state, data)


def _restore(state: AtlasState, data: SnapshotData) -> None:
    header, table = data.header, state.table
    if table.high:
        raise ValueError("snapshot.restore needs a fresh atlas state")
    n = len(data.ids)
    _check_embedder(state, data)
    sessions = []
    for info in header["sessions"]:
        session = state.new_session(info["id"], info["created_at"])
        session.ended, session.last_id = info["ended"], info["last_id"]
        session.working = deque(info["working"])
        sessions.append(session)
    slots = table.allocate_many(data.ids)
    for name, values in data.columns.items():
        if name != "session":
            getattr(table, name)[slots] = values
    codes = np.array([s.code for s in sessions], dtype=table.session.dtype)
    table.session[slots] = codes[data.columns["session"]] if n else codes[:0]
    # a fresh table allocates slots 0 to n - 1
    table.contents[:n] = data.contents
    table.metadata[:n] = data.metadata
    table.provenance[:n] = data.provenance
    state.edges.add_nodes(slots)
    edges = data.edges
    state.edges.load(
        slots[edges["edge_source"]],
        slots[edges["edge_target"]],
        edges["edge_relation"],
        edges["edge_strength"],
    )
    vectors: np.ndarray | None = data.embeddings
    if data.graph is not None:  # the saved HNSW graph instead of minutes of rebuilding
        cfg = state.config
        index, exact, rows = hnsw.build(
            header["graph"],
            data.graph,
            data.embeddings,
            cfg.hnsw_ef_construction,
            state.vectors.ef_search,
        )
        state.vectors.adopt(
            index, exact, np.where(rows >= 0, slots[np.maximum(rows, 0)] if n else rows, -1)
        )
        vectors = None
    postings = data.postings
    if postings is not None:  # by memory row: rows are slots in a fresh table, mapped anyway
        postings = replace(postings, slots=slots[postings.slots])
    if n:
        state.index(slots, vectors, postings)  # the atlas's one entry point for new memories
    state.counters = Counter(header["counters"])
    state.last_decay = header["last_decay"]
    version, internal, gauss = header["rng"]
    state.rng.setstate((version, tuple(internal), gauss))
    clock_set = getattr(state.clock, "set", None)
    if callable(clock_set) and state.clock.now() < header["now"]:
        clock_set(header["now"])


def _check_embedder(state: AtlasState, data: SnapshotData) -> None:
    if not len(data.ids):
        return
    dim = data.embeddings.shape[1]
    if dim != state.embedder.dim:
        raise InputError(
            "embedder", f"dimension {state.embedder.dim} does not match the snapshot's {dim}"
        )
    saved = data.header["embedder"]["name"]
    if saved is not None and saved != state.embedder.name:
        # same dimension, different model: the stored vectors would be compared to
        # queries from another vector space and retrieval would be silently meaningless
        raise InputError(
            "embedder",
            f"the snapshot's vectors come from {saved!r}, this atlas embeds with "
            f"{state.embedder.name!r}",
        )
