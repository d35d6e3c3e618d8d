"""Repository protocols: one SQL and one in-memory implementation each.

The in-memory side (``memory_core.store.memory``) lets the harness and unit tests run
without a database; the contract tests run the same assertions against both.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from memory_core.store.context_graphs import ContextGraphRepository
from memory_core.store.records import (
    AtlasInfo,
    EventFilter,
    EventRecord,
    Page,
    RunRecord,
    SnapshotInfo,
    SortField,
    StoredEvent,
    WeightPoint,
)


class EventRepository(Protocol):
    """The engine's event log, eviction log included."""

    def append(self, records: Sequence[EventRecord]) -> int:
        """Write all records in one transaction (all or none); returns how many."""
        ...

    def query(
        self,
        flt: EventFilter | None = None,
        *,
        offset: int = 0,
        limit: int = 100,
        order_by: SortField = "at",
        descending: bool = True,
    ) -> Page[StoredEvent]:
        """One page of matching events; ties are broken by id so pages never overlap."""
        ...

    def get(self, event_id: int) -> StoredEvent:
        """One event; ``NotFoundError`` if absent."""
        ...

    def count(self, flt: EventFilter | None = None) -> int: ...

    def weight_history(self, node_id: str, *, atlas_id: str | None = None) -> list[WeightPoint]:
        """Every logged weight of a node, oldest first."""
        ...

    def eviction_counts(self, flt: EventFilter | None = None) -> dict[str, int]:
        """Number of evictions per reason among events matching ``flt``."""
        ...

    def after(self, atlas_id: str, seq: int, *, limit: int = 1_000) -> list[StoredEvent]:
        """Up to ``limit`` events of ``atlas_id`` with ``seq`` above ``seq``, in order
        (what a follower has not applied yet)."""
        ...


class RunRepository(Protocol):
    """Simulation runs written by the harness and shown by the runs page."""

    def add(
        self,
        *,
        name: str,
        policy: str,
        params: dict[str, Any],
        metrics: dict[str, Any],
        fact_results: Sequence[Any] = (),
        conversations: Sequence[Any] = (),
        created_at: datetime | None = None,
    ) -> RunRecord: ...

    def get(self, run_id: str) -> RunRecord: ...

    def list(
        self, *, offset: int = 0, limit: int = 100, name_contains: str | None = None
    ) -> Page[RunRecord]:
        """Newest first."""
        ...

    def delete(self, run_id: str) -> None: ...


class SnapshotRepository(Protocol):
    """Snapshot files of whole atlases, kept as bytes with their metadata."""

    def save(
        self,
        *,
        atlas_id: str,
        label: str,
        data: bytes,
        format_version: int,
        node_count: int,
        edge_count: int,
        sessions: Sequence[str] = (),
        event_seq: int | None = None,
    ) -> SnapshotInfo: ...

    def get(self, snapshot_id: str) -> SnapshotInfo: ...

    def data(self, snapshot_id: str) -> bytes: ...

    def list(
        self, *, atlas_id: str | None = None, offset: int = 0, limit: int = 100
    ) -> Page[SnapshotInfo]:
        """Newest first."""
        ...

    def delete(self, snapshot_id: str) -> None: ...


class AtlasRepository(Protocol):
    """Atlases that record to this store, for the dashboard's atlas picker."""

    def register(self, atlas_id: str, *, name: str, kind: str = "live") -> AtlasInfo:
        """Create or rename the entry and mark it seen now."""
        ...

    def heartbeat(self, atlas_id: str) -> None: ...

    def get(self, atlas_id: str) -> AtlasInfo: ...

    def list(self, *, kind: str | None = None) -> list[AtlasInfo]:
        """Most recently seen first."""
        ...


class Store(Protocol):
    """Everything the sink, the harness and the pages need from persistence."""

    @property
    def events(self) -> EventRepository: ...

    @property
    def runs(self) -> RunRepository: ...

    @property
    def snapshots(self) -> SnapshotRepository: ...

    @property
    def atlases(self) -> AtlasRepository: ...

    @property
    def context_graphs(self) -> ContextGraphRepository: ...

    def erase(self, *, session_id: str | None = None, user_id: str | None = None) -> dict[str, int]:
        """Delete every row about one session or one user; returns rows deleted per table."""
        ...

    def close(self) -> None: ...
