"""In-memory implementations of the repository protocols, for running without a database.

They follow the SQL implementations' contract exactly (the contract tests run against
both): same filters, ordering with NULLs last and id as tie-breaker, same errors.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from memory_core.errors import NotFoundError
from memory_core.store.base import utcnow
from memory_core.store.context_graphs import MemoryContextGraphRepository
from memory_core.store.erase import Subject
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
    check_kind,
    check_page,
    check_snapshot_args,
    check_sort,
    check_text,
)


def event_matches(flt: EventFilter | None, e: StoredEvent) -> bool:
    """The Python side of ``sql.event_conditions`` (no filter matches everything)."""
    return flt is None or flt.matches(e)


def _sorted_page(
    items: list[StoredEvent], key: str, descending: bool, offset: int, limit: int
) -> Page[StoredEvent]:
    present = [e for e in items if getattr(e, key) is not None]
    missing = [e for e in items if getattr(e, key) is None]
    present.sort(key=lambda e: (getattr(e, key), e.id), reverse=descending)
    missing.sort(key=lambda e: e.id, reverse=descending)
    ordered = present + missing  # NULLs last in both directions, as in SQL
    return Page(tuple(ordered[offset : offset + limit]), len(ordered), offset, limit)


class MemoryEventRepository:
    """Event log in a list; weight samples in a list of (node, atlas, point)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._events: dict[int, StoredEvent] = {}
        self._samples: list[tuple[str, str, WeightPoint]] = []

    def append(self, records: Sequence[EventRecord]) -> int:
        with self._lock:
            for r in records:
                event_id = next(self._ids)
                self._events[event_id] = StoredEvent(
                    id=event_id,
                    atlas_id=r.atlas_id,
                    type=r.type,
                    at=r.at,
                    session_id=r.session_id,
                    node_id=r.node_id,
                    user_id=r.user_id,
                    reason=r.reason,
                    payload=dict(r.payload),
                    content=r.content,
                    seq=r.seq,
                )
                self._samples.extend(
                    (node, r.atlas_id, WeightPoint(r.at, float(w), r.type))
                    for node, w in r.weights.items()
                )
        return len(records)

    def query(
        self,
        flt: EventFilter | None = None,
        *,
        offset: int = 0,
        limit: int = 100,
        order_by: SortField = "at",
        descending: bool = True,
    ) -> Page[StoredEvent]:
        check_page(offset, limit)
        check_sort(order_by)
        with self._lock:
            found = [e for e in self._events.values() if event_matches(flt, e)]
        return _sorted_page(found, order_by, descending, offset, limit)

    def get(self, event_id: int) -> StoredEvent:
        with self._lock:
            if event_id not in self._events:
                raise NotFoundError("event", event_id)
            return self._events[event_id]

    def count(self, flt: EventFilter | None = None) -> int:
        with self._lock:
            return sum(event_matches(flt, e) for e in self._events.values())

    def weight_history(self, node_id: str, *, atlas_id: str | None = None) -> list[WeightPoint]:
        with self._lock:
            points = [
                p
                for node, atlas, p in self._samples
                if node == node_id and (atlas_id is None or atlas == atlas_id)
            ]
        return sorted(points, key=lambda p: p.at)  # stable: equal times keep insertion order

    def eviction_counts(self, flt: EventFilter | None = None) -> dict[str, int]:
        evictions = (flt or EventFilter()).evictions()
        with self._lock:
            return dict(
                Counter(str(e.reason) for e in self._events.values() if event_matches(evictions, e))
            )

    def after(self, atlas_id: str, seq: int, *, limit: int = 1_000) -> list[StoredEvent]:
        check_page(0, limit)
        with self._lock:
            found = [
                e
                for e in self._events.values()
                if e.atlas_id == atlas_id and e.seq is not None and e.seq > seq
            ]
        return sorted(found, key=lambda e: e.seq or 0)[:limit]

    def erase(self, subject: Subject) -> dict[str, int]:
        with self._lock:
            doomed = {
                i: e for i, e in self._events.items() if getattr(e, subject.column) == subject.value
            }
            nodes = {e.node_id for e in doomed.values() if e.node_id is not None}
            before = len(self._samples)
            self._samples = [s for s in self._samples if s[0] not in nodes]
            for i in doomed:
                del self._events[i]
            return {"weight_samples": before - len(self._samples), "events": len(doomed)}

    def sessions_of_user(self, user_id: str) -> set[str]:
        with self._lock:
            return {
                e.session_id
                for e in self._events.values()
                if e.user_id == user_id and e.session_id is not None
            }


class MemoryRunRepository:
    """Runs in a dict."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, RunRecord] = {}

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
    ) -> RunRecord:
        check_text("name", name)
        check_text("policy", policy, 64)
        run = RunRecord(
            id=str(uuid.uuid4()),
            name=name,
            created_at=created_at or utcnow(),
            policy=policy,
            params=dict(params),
            metrics=dict(metrics),
            fact_results=list(fact_results),
            conversations=list(conversations),
        )
        with self._lock:
            self._runs[run.id] = run
        return run

    def get(self, run_id: str) -> RunRecord:
        with self._lock:
            if run_id not in self._runs:
                raise NotFoundError("run", run_id)
            return self._runs[run_id]

    def list(
        self, *, offset: int = 0, limit: int = 100, name_contains: str | None = None
    ) -> Page[RunRecord]:
        check_page(offset, limit)
        needle = (name_contains or "").lower()
        with self._lock:
            runs = [r for r in self._runs.values() if needle in r.name.lower()]
        runs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return Page(tuple(runs[offset : offset + limit]), len(runs), offset, limit)

    def delete(self, run_id: str) -> None:
        with self._lock:
            if self._runs.pop(run_id, None) is None:
                raise NotFoundError("run", run_id)


class MemorySnapshotRepository:
    """Snapshot bytes in a dict."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._infos: dict[str, SnapshotInfo] = {}
        self._data: dict[str, bytes] = {}

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
    ) -> SnapshotInfo:
        check_snapshot_args(atlas_id, label, data, format_version, node_count, edge_count)
        info = SnapshotInfo(
            event_seq=event_seq,
            id=str(uuid.uuid4()),
            atlas_id=atlas_id,
            label=label,
            created_at=utcnow(),
            format_version=format_version,
            node_count=node_count,
            edge_count=edge_count,
            size_bytes=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            sessions=tuple(sorted(set(sessions))),
        )
        with self._lock:
            self._infos[info.id] = info
            self._data[info.id] = bytes(data)
        return info

    def get(self, snapshot_id: str) -> SnapshotInfo:
        with self._lock:
            if snapshot_id not in self._infos:
                raise NotFoundError("snapshot", snapshot_id)
            return self._infos[snapshot_id]

    def data(self, snapshot_id: str) -> bytes:
        with self._lock:
            if snapshot_id not in self._data:
                raise NotFoundError("snapshot", snapshot_id)
            return self._data[snapshot_id]

    def list(
        self, *, atlas_id: str | None = None, offset: int = 0, limit: int = 100
    ) -> Page[SnapshotInfo]:
        check_page(offset, limit)
        with self._lock:
            infos = [i for i in self._infos.values() if atlas_id is None or i.atlas_id == atlas_id]
        infos.sort(key=lambda i: (i.created_at, i.id), reverse=True)
        return Page(tuple(infos[offset : offset + limit]), len(infos), offset, limit)

    def delete(self, snapshot_id: str) -> None:
        with self._lock:
            if self._infos.pop(snapshot_id, None) is None:
                raise NotFoundError("snapshot", snapshot_id)
            del self._data[snapshot_id]

    def erase_sessions(self, sessions: set[str]) -> int:
        with self._lock:
            doomed = [i for i, info in self._infos.items() if sessions & set(info.sessions)]
            for i in doomed:
                del self._infos[i], self._data[i]
            return len(doomed)


class MemoryAtlasRepository:
    """Atlas registry in a dict."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._atlases: dict[str, AtlasInfo] = {}

    def register(self, atlas_id: str, *, name: str, kind: str = "live") -> AtlasInfo:
        check_text("atlas_id", atlas_id, 64)
        check_text("name", name)
        check_kind(kind)
        now = utcnow()
        with self._lock:
            old = self._atlases.get(atlas_id)
            created = old.created_at if old else now
            info = AtlasInfo(id=atlas_id, name=name, kind=kind, created_at=created, last_seen=now)
            self._atlases[atlas_id] = info
            return info

    def heartbeat(self, atlas_id: str) -> None:
        with self._lock:
            if atlas_id not in self._atlases:
                raise NotFoundError("atlas", atlas_id)
            self._atlases[atlas_id] = replace(self._atlases[atlas_id], last_seen=utcnow())

    def get(self, atlas_id: str) -> AtlasInfo:
        with self._lock:
            if atlas_id not in self._atlases:
                raise NotFoundError("atlas", atlas_id)
            return self._atlases[atlas_id]

    def list(self, *, kind: str | None = None) -> list[AtlasInfo]:
        if kind is not None:
            check_kind(kind)
        with self._lock:
            found = [a for a in self._atlases.values() if kind is None or a.kind == kind]
        return sorted(found, key=lambda a: (-a.last_seen.timestamp(), a.id))


class MemoryStore:
    """A ``Store`` that lives and dies with the process (harness runs, unit tests)."""

    def __init__(self) -> None:
        self._events = MemoryEventRepository()
        self._runs = MemoryRunRepository()
        self._snapshots = MemorySnapshotRepository()
        self._atlases = MemoryAtlasRepository()
        self._context_graphs = MemoryContextGraphRepository()

    @property
    def events(self) -> MemoryEventRepository:
        return self._events

    @property
    def runs(self) -> MemoryRunRepository:
        return self._runs

    @property
    def snapshots(self) -> MemorySnapshotRepository:
        return self._snapshots

    @property
    def atlases(self) -> MemoryAtlasRepository:
        return self._atlases

    @property
    def context_graphs(self) -> MemoryContextGraphRepository:
        return self._context_graphs

    def erase(self, *, session_id: str | None = None, user_id: str | None = None) -> dict[str, int]:
        subject = Subject.of(session_id=session_id, user_id=user_id)
        sessions = (
            {subject.value}
            if subject.column == "session_id"
            else self._events.sessions_of_user(subject.value)
        )
        deleted = {"snapshots": self._snapshots.erase_sessions(sessions)}
        deleted.update(self._context_graphs.erase(subject))
        deleted.update(self._events.erase(subject))
        return deleted

    def close(self) -> None:
        """Nothing to release; kept for the ``Store`` protocol."""
