"""Following an atlas through its events: what a recorded event must carry, and applying it.

An agent's atlas publishes events; ``recording`` wraps a subscriber (the database sink) so
that each event first gets, from ``enrich``, what a copy needs to make the same change
exactly: a new memory's float32 embedding, metadata, table row and relations; the rows a
merge, a status change, an update, a summary or a faded session left behind. It runs
inside the publish, under the atlas lock, so it reads the state the event describes.

``apply_events`` makes those changes on another atlas (a dashboard's copy loaded from a
checkpoint snapshot) and ends in the agent's state: same memories and columns, vectors,
relations, sessions and working tiers. Decay passes are recomputed instead of shipped
(every weight of 100k memories per pass) by the function the pass itself uses; their
evictions, like every eviction, arrive as events of their own. Only the ``retrievals``
counter lags: a read that reinforces nothing publishes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memory_core.engine import forgetting, snapshot
from memory_core.engine.config import AtlasConfig
from memory_core.engine.events import (
    EVENT_TYPES,
    AtlasEvent,
    ConfigChanged,
    DecayApplied,
    Edge,
    MemoriesMerged,
    MemoryAdded,
    MemoryEvicted,
    MemoryLinked,
    MemoryReinforced,
    MemoryUpdated,
    Row,
    SessionEnded,
    StatusChanged,
    SummaryCreated,
)
from memory_core.engine.model import Relation
from memory_core.engine.state import AtlasState
from memory_core.engine.table import NodeTable, status_code
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.engine.atlas import ElasticMemoryAtlas

ROW_COLUMNS = (
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
)
"""The table columns a row carries (session, text, metadata and provenance travel apart)."""
FADE_COLUMNS = ("strength", "accessed", "weight")
"""What ending a session with ``fade`` changes, per memory."""

Subscriber = Callable[[AtlasEvent], None]


class NotReplayableError(InputError):
    """An event lacks what applying it needs (recorded without ``recording``, redacted,
    or about a memory the copy does not hold: a gap). The follower reloads a checkpoint."""

    def __init__(self, event: AtlasEvent, why: str) -> None:
        super().__init__("event", f"{event.type} at {event.at!r} cannot be applied: {why}")


# ---------------------------------------------------------------- the agent's side
def recording(atlas: ElasticMemoryAtlas, subscriber: Subscriber) -> Subscriber:
    """``subscriber`` receiving every event enriched for replay (subscribe the result)."""
    state = atlas._s

    def forward(event: AtlasEvent) -> None:
        subscriber(enrich(state, event))

    return forward


def enrich(state: AtlasState, event: AtlasEvent) -> AtlasEvent:
    """``event`` with the fields a follower needs; call while the event is published."""
    add = _ENRICHERS.get(type(event))
    return event if add is None else dataclasses.replace(event, **add(state, event))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A snapshot file and what was true when it was copied."""

    path: Path
    position: int | None
    """``position()`` at the copy: how many events the snapshot already contains."""
    nodes: int
    edges: int
    sessions: tuple[str, ...]


def save_checkpoint(
    atlas: ElasticMemoryAtlas, path: str | Path, position: Callable[[], int] | None = None
) -> Checkpoint:
    """Write a snapshot; ``position()`` and the counts are read at the instant of the copy
    (under the lock, held briefly). The vectors are gathered, and everything is encoded
    and written, outside it, as in ``save_snapshot``."""
    with atlas.lock:
        state = atlas._s
        frozen = snapshot.freeze(state)
        seen = None if position is None else position()
        counts = (len(state.table), len(state.edges), tuple(state.sessions))
    captured = snapshot.complete(frozen, atlas.lock)
    return Checkpoint(snapshot.write(captured, Path(path)), seen, *counts)


def row(table: NodeTable, slot: int, columns: tuple[str, ...] = ROW_COLUMNS) -> Row:
    """Python values of ``columns`` of one memory (exact: float32 widens losslessly)."""
    return {name: getattr(table, name)[slot].item() for name in columns}


def _edges(state: AtlasState, slot: int) -> tuple[Edge, ...]:
    ids = state.table.ids
    return tuple(
        (str(ids[a]), str(ids[b]), rel.value, float(st))
        for a, b, rel, st in state.edges.relations(slot)
    )


def _added(state: AtlasState, event: Any) -> dict[str, Any]:
    table, slot = state.table, state.table.slot_of[event.node_id]
    embedding = event.embedding  # the write's own vector, when the engine passed it on
    if not embedding:
        vector = state.vectors.reconstruct(np.array([slot]))[0]
        embedding = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    return {
        "metadata": dict(table.metadata[slot] or {}),
        "embedding": embedding,
        "row": row(table, slot),
        "edges": _edges(state, slot),
    }


def _reinforced(state: AtlasState, event: Any) -> dict[str, Any]:
    return {"accessed": float(state.table.accessed[state.table.slot_of[event.node_id]])}


def _merged(state: AtlasState, event: Any) -> dict[str, Any]:
    table, slot = state.table, state.table.slot_of[event.kept_id]
    return {
        "row": row(table, slot),
        "metadata": dict(table.metadata[slot] or {}),
        "provenance": table.provenance[slot],
        "edges": _edges(state, slot),
    }


def _one_row(state: AtlasState, event: Any) -> dict[str, Any]:
    return {"row": row(state.table, state.table.slot_of[event.node_id])}


def _summary(state: AtlasState, event: Any) -> dict[str, Any]:
    table = state.table
    ids = [i for i in (*event.source_ids, event.node_id) if i in table.slot_of]
    return {
        "rows": {i: row(table, table.slot_of[i]) for i in ids},
        "edges": _edges(state, table.slot_of[event.node_id]),
    }


def _session_end(state: AtlasState, event: Any) -> dict[str, Any]:
    if event.mode != "fade":
        return {}
    table = state.table
    slots = state.session_slots(state.sessions[event.session_id])
    return {"rows": {str(table.ids[s]): row(table, s, FADE_COLUMNS) for s in slots.tolist()}}


_ENRICHERS: dict[type[AtlasEvent], Callable[[AtlasState, Any], dict[str, Any]]] = {
    MemoryAdded: _added,
    MemoryReinforced: _reinforced,
    MemoriesMerged: _merged,
    StatusChanged: _one_row,
    MemoryUpdated: _one_row,
    SummaryCreated: _summary,
    SessionEnded: _session_end,
}


# ---------------------------------------------------------------- the follower's side
def apply_events(atlas: ElasticMemoryAtlas, events: Iterable[AtlasEvent]) -> int:
    """Make the recorded changes on ``atlas``, in order; returns how many were applied.

    Consecutive evictions of one instant and reason are removed together, as the engine
    removed them; consecutive writes are indexed together (one vector-index call). Raises
    ``NotReplayableError`` at the first event that cannot be applied; the events before it
    stay applied (the caller reloads a checkpoint).
    """
    applied = 0
    with atlas.lock:
        for key, group in groupby(events, key=_batch_key):
            batch = list(group)
            if key is not None:
                _BATCHES[key[0]](atlas, batch)
            else:
                for event in batch:
                    apply = _APPLIERS.get(type(event))
                    if apply is None:
                        raise NotReplayableError(event, "this version does not apply it")
                    apply(atlas, event)
            applied += len(batch)
    return applied


def _batch_key(event: AtlasEvent) -> tuple[str, ...] | None:
    if isinstance(event, MemoryEvicted):
        return (event.type, str(event.reason), repr(event.at))
    return (event.type,) if isinstance(event, MemoryAdded) else None


def _slot(state: AtlasState, event: AtlasEvent, node_id: str) -> int:
    slot = state.table.slot_of.get(node_id)
    if slot is None:
        raise NotReplayableError(event, f"memory {node_id} is not in the copy")
    return slot


def _set_row(table: NodeTable, slot: int, values: Row, event: AtlasEvent) -> None:
    if not values:
        raise NotReplayableError(event, "it carries no row (not recorded for replay)")
    for name, value in values.items():
        if name not in ROW_COLUMNS:
            raise NotReplayableError(event, f"unknown column {name!r}")
        getattr(table, name)[slot] = value


def _link(state: AtlasState, event: AtlasEvent, edge: Edge) -> None:
    source, target, relation, strength = edge
    state.edges.link(
        _slot(state, event, source), _slot(state, event, target), Relation(relation), strength
    )


def _add_many(atlas: ElasticMemoryAtlas, batch: list[Any]) -> None:
    """Consecutive writes: rows first, one index call, then relations and working tiers
    in write order (a write links only to memories older than itself)."""
    state = atlas._s
    for event in batch:
        _check_added(atlas, event)
    slots = np.array([_place(state, event) for event in batch], dtype=np.int64)
    vectors = np.stack([np.frombuffer(event.embedding, dtype=np.float32) for event in batch])
    state.index(slots, vectors)
    for event, slot in zip(batch, slots.tolist(), strict=True):
        state.edges.add_node(slot)
        for edge in event.edges:
            _link(state, event, edge)
        session = state.sessions[str(event.session_id)]
        session.last_id = event.node_id
        atlas._enter_working(session, event.node_id)
        state.counters["added"] += 1


def _check_added(atlas: ElasticMemoryAtlas, event: Any) -> None:
    if not event.row or not event.embedding:
        raise NotReplayableError(event, "it carries no row or embedding")
    if event.node_id in atlas._s.table.slot_of:
        raise NotReplayableError(event, f"memory {event.node_id} is already in the copy")
    floats = len(event.embedding) // 4
    if floats != atlas.embedder.dim or len(event.embedding) % 4:
        raise NotReplayableError(event, f"embedding of {floats} floats, not {atlas.embedder.dim}")


def _place(state: AtlasState, event: Any) -> int:
    """A new memory's table row (not yet findable: ``AtlasState.index`` does that)."""
    table = state.table
    session_id = str(event.session_id)
    session = state.sessions.get(session_id) or state.new_session(session_id, event.row["created"])
    slot = table.allocate(event.node_id)
    table.session[slot] = session.code
    table.contents[slot] = event.content
    table.metadata[slot] = dict(event.metadata) or None
    table.provenance[slot] = tuple(event.provenance)
    _set_row(table, slot, event.row, event)
    return slot


def _apply_reinforced(atlas: ElasticMemoryAtlas, event: Any) -> None:
    if event.accessed is None:
        raise NotReplayableError(event, "it carries no access time")
    table = atlas._s.table
    slot = _slot(atlas._s, event, event.node_id)
    table.strength[slot] = event.strength
    table.count[slot] = event.access_count
    table.accessed[slot] = event.accessed
    table.weight[slot] = event.weight


def _apply_merged(atlas: ElasticMemoryAtlas, event: Any) -> None:
    state, table = atlas._s, atlas._s.table
    slot = _slot(state, event, event.kept_id)
    _set_row(table, slot, event.row, event)
    table.metadata[slot] = dict(event.metadata) or None
    table.provenance[slot] = tuple(event.provenance)
    for edge in event.edges:
        _link(state, event, edge)
    if event.merged_id is None:  # a write folded into its twin enters the working tier
        atlas._enter_working(state.sessions[state.session_of(slot)], event.kept_id)
    state.counters["merged"] += 1


def _apply_status(atlas: ElasticMemoryAtlas, event: Any) -> None:
    table = atlas._s.table
    slot = _slot(atlas._s, event, event.node_id)
    _set_row(table, slot, event.row, event)
    table.status[slot] = status_code(event.new)


def _apply_updated(atlas: ElasticMemoryAtlas, event: Any) -> None:
    _set_row(atlas._s.table, _slot(atlas._s, event, event.node_id), event.row, event)


def _apply_summary(atlas: ElasticMemoryAtlas, event: Any) -> None:
    state = atlas._s
    if not event.rows:
        raise NotReplayableError(event, "it carries no rows")
    for node_id, values in event.rows.items():
        _set_row(state.table, _slot(state, event, node_id), values, event)
    for edge in event.edges:
        _link(state, event, edge)


def _apply_session_end(atlas: ElasticMemoryAtlas, event: Any) -> None:
    state = atlas._s
    session = state.sessions.get(str(event.session_id))
    if session is None:
        raise NotReplayableError(event, f"session {event.session_id} is not in the copy")
    if event.mode == "purge":  # its memories left through their own eviction events
        del state.sessions[session.id]
        state.session_names[session.code] = None
        return
    if event.mode == "fade":
        if event.affected and not event.rows:
            raise NotReplayableError(event, "it carries no rows")
        for node_id, values in event.rows.items():
            _set_row(state.table, _slot(state, event, node_id), values, event)
    state.table.working[state.session_slots(session)] = False  # as the engine: every mode
    session.working.clear()
    session.ended = True


def _apply_linked(atlas: ElasticMemoryAtlas, event: Any) -> None:
    _link(atlas._s, event, (event.node_id, event.target_id, event.relation, event.strength))


def _apply_config(atlas: ElasticMemoryAtlas, event: Any) -> None:
    atlas.reconfigure(AtlasConfig.from_mapping(event.config))


def _apply_decay(atlas: ElasticMemoryAtlas, event: Any) -> None:
    state = atlas._s
    forgetting.reweigh(state, event.at)
    state.last_decay = event.at
    state.counters["decay_passes"] += 1


def _evict(atlas: ElasticMemoryAtlas, batch: list[Any]) -> None:
    state = atlas._s
    slots = np.array([_slot(state, e, e.node_id) for e in batch], dtype=np.int64)
    forgetting.remove(state, slots, batch[0].reason, batch[0].at)


_BATCHES: dict[str, Callable[[ElasticMemoryAtlas, list[Any]], None]] = {
    MemoryEvicted.type: _evict,
    MemoryAdded.type: _add_many,
}


def _nothing(atlas: ElasticMemoryAtlas, event: Any) -> None:
    """Reads, pressure readings and rule notes change nothing by themselves."""


_INFORMATIONAL = ("read", "memory_pressure", "rule")
_APPLIERS: dict[type[AtlasEvent], Callable[[ElasticMemoryAtlas, Any], None]] = {
    EVENT_TYPES[name]: _nothing for name in _INFORMATIONAL if name in EVENT_TYPES
} | {
    MemoryReinforced: _apply_reinforced,
    MemoriesMerged: _apply_merged,
    StatusChanged: _apply_status,
    MemoryUpdated: _apply_updated,
    SummaryCreated: _apply_summary,
    SessionEnded: _apply_session_end,
    MemoryLinked: _apply_linked,
    ConfigChanged: _apply_config,
    DecayApplied: _apply_decay,
}
