"""Following a recording atlas from another process: one checkpoint, then its events.

``AtlasFollower`` keeps a copy of a recorded atlas. It loads the newest checkpoint (a
snapshot that knows how many of the atlas's events it contains, ``event_seq``) once, then
applies the events recorded after it, in ``seq`` order, with
``memory_core.engine.apply.apply_events``: a poll reads only the new events, never a
whole snapshot. It reloads a checkpoint only when the stream has a gap (events dropped
by a full buffer, refused by the database, or recorded without what replay needs, e.g.
under a redacting privacy policy) or when the newest checkpoint is more than
``reload_after`` events ahead (loading is then cheaper than applying).
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memory_core.engine.apply import NotReplayableError, apply_events
from memory_core.engine.events import EVENT_TYPES, AtlasEvent
from memory_core.engine.model import EvictionReason, MemoryKind, MemoryStatus
from memory_core.errors import NotFoundError
from memory_core.store.privacy import CONTENT_FIELDS, EMBEDDING_FIELD, EXACT_AT
from memory_core.store.recording import open_recorded

if TYPE_CHECKING:
    from memory_core.embedding.base import Embedder
    from memory_core.engine.atlas import ElasticMemoryAtlas
    from memory_core.store.records import SnapshotInfo, StoredEvent
    from memory_core.store.repositories import Store

log = logging.getLogger(__name__)

RELOAD_AFTER = 50_000
"""A checkpoint this many events ahead of the copy is loaded instead of applying them."""
BATCH = 2_000
"""Events read per query while catching up."""

_ENUMS: dict[str, Callable[[Any], Any]] = {
    "kind": MemoryKind,
    "old": MemoryStatus,
    "new": MemoryStatus,
}
_TUPLES = ("links", "provenance", "source_ids", "returned")


def decode(stored: StoredEvent) -> AtlasEvent | None:
    """The engine event a logged one was encoded from (text the privacy policy dropped
    comes back empty); None for an unknown type or a payload that does not fit it."""
    cls = EVENT_TYPES.get(stored.type)
    if cls is None:
        return None
    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in stored.payload.items() if k in names}
    values["at"] = float(stored.payload.get(EXACT_AT, stored.at.timestamp()))
    values["session_id"] = stored.session_id
    if "node_id" in names:
        values["node_id"] = stored.node_id
    text = next((f for f in CONTENT_FIELDS if f in names), None)
    if text is not None:
        values[text] = stored.content or ""
    try:
        for name, convert in _ENUMS.items():
            if name in values:
                values[name] = convert(values[name])
        if "reason" in names and stored.reason is not None:
            values["reason"] = EvictionReason(stored.reason)
        for name in _TUPLES:
            if name in values:
                values[name] = tuple(tuple(v) if isinstance(v, list) else v for v in values[name])
        if "edges" in values:
            values["edges"] = tuple(tuple(e) for e in values["edges"])
        if "row" in values:
            values["row"] = _row(values["row"])
        if "rows" in values:
            values["rows"] = {node: _row(row) for node, row in values["rows"].items()}
        if isinstance(values.get(EMBEDDING_FIELD), str):
            values[EMBEDDING_FIELD] = base64.b64decode(values[EMBEDDING_FIELD])
        event: AtlasEvent = cls(**values)
    except (TypeError, ValueError):
        return None
    return event


def _row(values: dict[str, Any]) -> dict[str, float]:
    """JSON stores an infinite expiry as null."""
    return {k: math.inf if v is None else v for k, v in values.items()}


class AtlasFollower:
    """A copy of one recorded atlas, brought up to date by ``catch_up``; thread-safe."""

    def __init__(
        self,
        store: Store,
        atlas_id: str,
        *,
        embedder: Embedder,
        reload_after: int = RELOAD_AFTER,
        batch: int = BATCH,
    ) -> None:
        self._store = store
        self.atlas_id = atlas_id
        self._embedder = embedder
        self._reload_after = reload_after
        self._batch = batch
        self._lock = threading.Lock()
        self.atlas: ElasticMemoryAtlas | None = None
        self.checkpoint: SnapshotInfo | None = None
        self.seq = 0
        """Events of the stream the copy contains (None: following snapshots only)."""
        self.applied = 0
        self.reloads = 0
        self.changes = 0
        """Grows whenever the copy changes (a cache key for what pages draw from it)."""
        self.stalled: str | None = None
        """Why the copy waits for a newer checkpoint (a gap in the stream), if it does."""

    def catch_up(self) -> bool:
        """Apply every event recorded since the last call; True when the copy changed."""
        with self._lock:
            newest = self._newest()
            if newest is None:
                return False
            if self._should_load(newest):
                self._load(newest)
                changed = True
            else:
                changed = False
            if self.stalled is None and self.checkpoint is not None:
                changed |= self._apply_new()
            self.changes += changed
            return changed

    def _newest(self) -> SnapshotInfo | None:
        items = self._store.snapshots.list(atlas_id=self.atlas_id, limit=1).items
        return items[0] if items else None

    def _should_load(self, newest: SnapshotInfo) -> bool:
        current = self.checkpoint
        if current is None or self.atlas is None:
            return True
        if newest.id == current.id:
            return False
        if newest.event_seq is None or current.event_seq is None:
            return True  # a recorder without a stream: snapshots are all there is
        if newest.event_seq <= self.seq:
            return False
        return self.stalled is not None or newest.event_seq - self.seq > self._reload_after

    def _load(self, info: SnapshotInfo) -> None:
        try:
            atlas = open_recorded(self._store.snapshots, info.id, embedder=self._embedder)
        except NotFoundError:  # pruned by the recorder meanwhile: a newer one exists
            newest = self._newest()
            if newest is None:
                raise
            info = newest
            atlas = open_recorded(self._store.snapshots, info.id, embedder=self._embedder)
        self.atlas = atlas
        self.checkpoint = info
        self.seq = info.event_seq or 0
        self.stalled = None if info.event_seq is not None else "the recorder logs no stream"
        self.reloads += 1

    def _apply_new(self) -> bool:
        assert self.atlas is not None
        changed = False
        while True:
            stored = self._store.events.after(self.atlas_id, self.seq, limit=self._batch)
            if not stored:
                return changed
            events: list[AtlasEvent] = []
            for record in stored:
                event = decode(record)
                if record.seq != self.seq + len(events) + 1 or event is None:
                    break
                events.append(event)
            try:
                apply_events(self.atlas, events)
            except NotReplayableError as exc:
                self._stall(str(exc))
                return True
            self.seq += len(events)
            self.applied += len(events)
            changed |= bool(events)
            if len(events) < len(stored):  # stopped at a gap or an unreadable event
                self._stall(f"event {self.seq + 1} is missing or unreadable")
                return changed

    def _stall(self, why: str) -> None:
        log.info("following %s: %s; waiting for a newer checkpoint", self.atlas_id, why)
        self.stalled = why
