"""A bounded, thread-safe ring buffer of engine events for the pages to read.

The atlas publishes events on whatever thread mutates it (the demo player, a browser
session's script thread); pages read from their own threads. Each event gets a
sequence number so a page can ask for "what happened since I last looked".

Privacy: when a session is purged the buffer forgets it too. Its events go, except its
evictions, which stay as content-free rows (what was forgotten when and why, without
the text, so nothing of it can be read or restored), and decay passes stop naming its
memories.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from memory_core.engine.events import AtlasEvent, DecayApplied, MemoryEvicted, SessionEnded
from memory_core.errors import InputError

DEFAULT_CAPACITY = 50_000


@dataclass(frozen=True, slots=True)
class Recorded:
    """One buffered event and its position in the stream."""

    seq: int
    event: AtlasEvent


class EventBuffer:
    """Keeps the last ``capacity`` events; subscribe it to an atlas."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise InputError("capacity", f"must be an integer >= 1, got {capacity!r}")
        self._lock = threading.Lock()
        self._items: deque[Recorded] = deque(maxlen=capacity)
        self._seq = 0

    def __call__(self, event: AtlasEvent) -> None:
        with self._lock:
            if isinstance(event, SessionEnded) and event.mode == "purge":
                self._forget_session(event.session_id)
            self._seq += 1
            self._items.append(Recorded(self._seq, event))

    def __len__(self) -> int:
        return len(self._items)

    @property
    def last_seq(self) -> int:
        """Sequence number of the newest event (0 before the first)."""
        return self._seq

    @property
    def dropped(self) -> int:
        """How many events fell out of the buffer (rolled out or forgotten with a purged session)."""
        with self._lock:
            return self._seq - len(self._items)

    def events(
        self,
        *,
        types: tuple[str, ...] = (),
        since_seq: int = 0,
        where: Callable[[AtlasEvent], bool] | None = None,
    ) -> list[AtlasEvent]:
        """Buffered events, oldest first, optionally of some types or newer than a seq."""
        with self._lock:
            items = list(self._items)
        return [
            r.event
            for r in items
            if r.seq > since_seq
            and (not types or r.event.type in types)
            and (where is None or where(r.event))
        ]

    def for_node(self, node_id: str) -> list[AtlasEvent]:
        """Every buffered event that names ``node_id`` (as subject, merge partner or source)."""
        return self.events(where=lambda e: node_id in _node_ids(e))

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def discard_sessions(self, session_ids: frozenset[str]) -> None:
        """Drop every row left of ``session_ids`` — a demo replay started over: its old
        evictions are not memories someone erased, they belong to a replay that is gone."""
        with self._lock:
            kept = [r for r in self._items if r.event.session_id not in session_ids]
            self._items.clear()
            self._items.extend(kept)

    def _forget_session(self, session_id: str | None) -> None:
        """Drop a purged session's events (called with the lock held; keeps sequence numbers)."""
        gone = frozenset(
            node_id
            for r in self._items
            if r.event.session_id == session_id
            for node_id in _node_ids(r.event)
        )
        kept = [
            Recorded(r.seq, scrubbed)
            for r in self._items
            if (scrubbed := _scrub(r.event, session_id, gone)) is not None
        ]
        self._items.clear()
        self._items.extend(kept)


def _scrub(event: AtlasEvent, session_id: str | None, gone: frozenset[str]) -> AtlasEvent | None:
    """``event`` with nothing of the purged session left in it, or None to drop it."""
    if isinstance(event, MemoryEvicted) and event.session_id == session_id:
        return dataclasses.replace(event, content="", metadata={}, provenance=())
    if event.session_id == session_id:
        return None
    if isinstance(event, DecayApplied) and not gone.isdisjoint(event.weights):
        weights = {k: w for k, w in event.weights.items() if k not in gone}
        return dataclasses.replace(event, weights=weights)
    return event


def _node_ids(event: AtlasEvent) -> tuple[str, ...]:
    ids: list[str] = []
    for name in ("node_id", "kept_id", "merged_id"):
        value = getattr(event, name, None)
        if isinstance(value, str):
            ids.append(value)
    ids.extend(getattr(event, "source_ids", ()))
    weights = getattr(event, "weights", None)
    if weights:
        ids.extend(weights)
    return tuple(ids)
