"""Typed engine events and the bus that delivers them.

Every state change worth auditing is an event: the dashboard, the database sink and
the harness subscribe instead of polling. Publishing is synchronous and cheap when
nobody listens; a failing subscriber is logged and never breaks the engine.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from memory_core.engine.model import EvictionReason, MemoryKind, MemoryStatus

log = logging.getLogger(__name__)

Row = dict[str, float]
"""A memory's table columns after a change (``strength``, ``weight``, ``accessed``...),
as ``memory_core.engine.apply`` records them so a follower can set them exactly."""
Edge = tuple[str, str, str, float]
"""(source id, target id, relation, strength) of one relation."""


@dataclass(slots=True, frozen=True, kw_only=True)
class AtlasEvent:
    """Base of all events; ``at`` is the atlas clock's time in epoch seconds."""

    type: ClassVar[str] = "event"
    at: float
    session_id: str | None = None

    def to_record(self) -> dict[str, Any]:
        """JSON-ready mapping including the event ``type``."""
        record = asdict(self)
        record["type"] = self.type
        return record


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoryAdded(AtlasEvent):
    type: ClassVar[str] = "added"
    node_id: str
    content: str
    kind: MemoryKind
    weight: float
    importance: float
    links: tuple[str, ...] = ()
    provenance: tuple[str, ...] = ()
    # filled by a recorder (memory_core.engine.apply.enrich) so the add can be replayed
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: bytes = b""
    """float32 vector as stored by the vector index."""
    row: Row = field(default_factory=dict)
    edges: tuple[Edge, ...] = ()


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoryReinforced(AtlasEvent):
    type: ClassVar[str] = "reinforced"
    node_id: str
    weight: float
    strength: float
    access_count: int
    accessed: float | None = None


@dataclass(slots=True, frozen=True, kw_only=True)
class DecayApplied(AtlasEvent):
    type: ClassVar[str] = "decay"
    strategy: str
    nodes: int
    mean_weight: float
    min_weight: float
    max_weight: float
    weights: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoryEvicted(AtlasEvent):
    type: ClassVar[str] = "evicted"
    node_id: str
    reason: EvictionReason
    content: str
    kind: MemoryKind
    weight: float
    created_at: float
    access_count: int
    provenance: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoriesMerged(AtlasEvent):
    type: ClassVar[str] = "merged"
    kept_id: str
    merged_id: str | None
    merged_content: str
    similarity: float
    # filled by a recorder: the kept memory afterwards (its relations included)
    row: Row = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    provenance: tuple[str, ...] = ()
    edges: tuple[Edge, ...] = ()


@dataclass(slots=True, frozen=True, kw_only=True)
class StatusChanged(AtlasEvent):
    type: ClassVar[str] = "status"
    node_id: str
    old: MemoryStatus
    new: MemoryStatus
    reason: str
    row: Row = field(default_factory=dict)


@dataclass(slots=True, frozen=True, kw_only=True)
class SummaryCreated(AtlasEvent):
    type: ClassVar[str] = "summary"
    node_id: str
    source_ids: tuple[str, ...]
    content: str
    # filled by a recorder: the rows the summary changed and its relations
    rows: dict[str, Row] = field(default_factory=dict)
    edges: tuple[Edge, ...] = ()


@dataclass(slots=True, frozen=True, kw_only=True)
class SessionEnded(AtlasEvent):
    type: ClassVar[str] = "session_end"
    mode: str
    affected: int
    rows: dict[str, Row] = field(default_factory=dict)
    """Filled by a recorder for ``fade``: the rows it changed."""


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoryUpdated(AtlasEvent):
    """A memory pinned or unpinned, or its confidence set; ``row`` as in ``MemoryAdded``."""

    type: ClassVar[str] = "updated"
    node_id: str
    row: Row = field(default_factory=dict)


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoryLinked(AtlasEvent):
    """A relation added by hand (``link``); automatic links travel with their write."""

    type: ClassVar[str] = "linked"
    node_id: str
    target_id: str
    relation: str
    strength: float


@dataclass(slots=True, frozen=True, kw_only=True)
class ConfigChanged(AtlasEvent):
    """``reconfigure``: the decay and forgetting rules from now on (``AtlasConfig.to_dict``)."""

    type: ClassVar[str] = "config"
    config: dict[str, Any]


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoryRead(AtlasEvent):
    """An agent's read and what it got back, so a recording can be replayed as probes.

    Published by the agent's interface (the MCP server's ``memory_read``), not by
    ``retrieve``: the harness's own reads are not agent traffic. ``session_id`` is the
    read's scope (None: every session); ``returned`` lists the memories in rank order,
    ``provenance`` each one's provenance.
    """

    type: ClassVar[str] = "read"
    query: str
    top_k: int
    cross_session: bool = False
    reinforce: bool = True
    returned: tuple[str, ...] = ()
    provenance: tuple[tuple[str, ...], ...] = ()


@dataclass(slots=True, frozen=True, kw_only=True)
class RuleFired(AtlasEvent):
    """An agent-loop rule changed the memory (the second seed's memory state orchestrator).

    ``rule`` names it (``episode``, ``knowledge_review``, ``forget_request``); ``node_id``
    is what it produced or acted on last (the episode memory, the corrected statement, the
    last memory soft-deleted); ``source_ids`` every memory it acted on; ``message`` the
    line a reviewer reads ("episode created from 50 memories"); ``item_id`` the knowledge
    item it submitted, if any.
    """

    type: ClassVar[str] = "rule"
    rule: str
    node_id: str
    message: str
    source_ids: tuple[str, ...] = ()
    item_id: str | None = None


@dataclass(slots=True, frozen=True, kw_only=True)
class MemoryPressure(AtlasEvent):
    type: ClassVar[str] = "memory_pressure"
    rss_fraction: float
    evicted: int


EVENT_TYPES: dict[str, type[AtlasEvent]] = {
    cls.type: cls
    for cls in (
        MemoryAdded,
        MemoryReinforced,
        DecayApplied,
        MemoryEvicted,
        MemoriesMerged,
        StatusChanged,
        SummaryCreated,
        SessionEnded,
        MemoryPressure,
        MemoryRead,
        RuleFired,
        MemoryUpdated,
        MemoryLinked,
        ConfigChanged,
    )
}

Subscriber = Callable[[AtlasEvent], None]


class EventBus:
    """Synchronous fan-out to subscribers; subscribing returns an unsubscribe callable.

    A subscriber may name the event types it reads; producers ask ``wants`` before
    building an event, so one no subscriber reads costs nothing (a harness replay reads
    adds, evictions, merges and summaries, and skipped ~5 reinforcement events a retrieve).
    """

    __slots__ = ("_lock", "_subscribers", "_wanted")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: tuple[tuple[Subscriber, frozenset[type[AtlasEvent]] | None], ...] = ()
        self._wanted: frozenset[type[AtlasEvent]] | None = frozenset()  # None: every type

    @property
    def active(self) -> bool:
        """True when someone listens; producers skip building events otherwise."""
        return bool(self._subscribers)

    def wants(self, event_type: type[AtlasEvent]) -> bool:
        """Whether a subscriber reads events of ``event_type``."""
        wanted = self._wanted
        return wanted is None or event_type in wanted

    def subscribe(
        self, subscriber: Subscriber, types: Iterable[type[AtlasEvent]] | None = None
    ) -> Callable[[], None]:
        """Call ``subscriber`` with every event, or with those of ``types`` alone."""
        entry = (subscriber, None if types is None else frozenset(types))
        with self._lock:
            self._subscribers = (*self._subscribers, entry)
            self._wanted = _wanted(self._subscribers)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers = tuple(e for e in self._subscribers if e is not entry)
                self._wanted = _wanted(self._subscribers)

        return unsubscribe

    def publish(self, event: AtlasEvent) -> None:
        for subscriber, types in self._subscribers:
            if types is not None and type(event) not in types:
                continue
            try:
                subscriber(event)
            except Exception:  # a broken listener must not break the memory
                log.exception("event subscriber %r failed on %s", subscriber, event.type)


def _wanted(
    subscribers: Iterable[tuple[Subscriber, frozenset[type[AtlasEvent]] | None]],
) -> frozenset[type[AtlasEvent]] | None:
    """The event types some subscriber reads; None when one reads every type."""
    wanted: set[type[AtlasEvent]] = set()
    for _, types in subscribers:
        if types is None:
            return None
        wanted |= types
    return frozenset(wanted)
