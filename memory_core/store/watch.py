"""Cheap reads for following a recording atlas from another process (the dashboard).

A follower polls every couple of seconds, so the poll is one indexed query that loads
no snapshot bytes: the newest snapshot's id (``ix_snapshots_atlas_created``), the
time of the atlas's newest event (``ix_events_atlas_at``) and its position in the
stream (``ix_events_atlas_seq``). The heavier listing of every
recorded atlas (names, counts, liveness) is for the picker and is meant to be cached.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from memory_core.store.atlases import AtlasRow
from memory_core.store.base import utcnow
from memory_core.store.events import EventRow
from memory_core.store.recording import FINAL_LABEL
from memory_core.store.snapshots import SnapshotRow

if TYPE_CHECKING:
    from memory_core.store.engine import Database

LIVE_WINDOW = timedelta(seconds=20)
"""A recorder silent for longer (no heartbeat, no snapshot) is shown as stopped: it
heartbeats every 5 s (``memory_core.store.live``), so this allows a few missed beats."""


@dataclass(frozen=True, slots=True)
class Head:
    """Where a recorded atlas stands: its newest snapshot and newest event."""

    snapshot_id: str | None
    snapshot_at: datetime | None
    snapshot_label: str | None
    last_event_at: datetime | None
    last_seen: datetime | None
    last_seq: int | None = None
    """``seq`` of the newest event (None: none yet, or a recorder without a stream)."""

    @property
    def version(self) -> tuple[str | None, datetime | None, int | None]:
        """Changes when a snapshot or an event arrives."""
        return self.snapshot_id, self.last_event_at, self.last_seq

    @property
    def stopped(self) -> bool:
        """The recorder said goodbye (its last snapshot is the final one)."""
        return self.snapshot_label == FINAL_LABEL

    def live(self, now: datetime | None = None) -> bool:
        return _live(self.stopped, (self.snapshot_at, self.last_seen), now)


@dataclass(frozen=True, slots=True)
class RecordedAtlas:
    """One atlas that records snapshots to this database, for the picker."""

    id: str
    name: str
    last_seen: datetime | None
    snapshot_at: datetime
    snapshots: int
    events: int
    stopped: bool

    def live(self, now: datetime | None = None) -> bool:
        return _live(self.stopped, (self.snapshot_at, self.last_seen), now)


def _live(stopped: bool, heard: tuple[datetime | None, ...], now: datetime | None) -> bool:
    """Still recording: no final snapshot and heard from within ``LIVE_WINDOW``."""
    times = [t for t in heard if t is not None]
    return not stopped and bool(times) and (now or utcnow()) - max(times) <= LIVE_WINDOW


def head(db: Database, atlas_id: str) -> Head:
    """One query, both parts answered from an index; no snapshot bytes are read."""
    last_event = (
        select(func.max(EventRow.at)).where(EventRow.atlas_id == atlas_id).scalar_subquery()
    )
    last_seq = select(func.max(EventRow.seq)).where(EventRow.atlas_id == atlas_id).scalar_subquery()
    last_seen = select(AtlasRow.last_seen).where(AtlasRow.id == atlas_id).scalar_subquery()
    stmt = (
        select(
            SnapshotRow.id,
            SnapshotRow.created_at,
            SnapshotRow.label,
            last_event,
            last_seen,
            last_seq,
        )
        .where(SnapshotRow.atlas_id == atlas_id)
        .order_by(SnapshotRow.created_at.desc(), SnapshotRow.id.desc())
        .limit(1)
    )
    with db.session("follow recorded atlas", read_only=True) as s:
        row = s.execute(stmt).first()
        if row is None:  # no snapshot yet
            events_at, seen_at, seq = s.execute(select(last_event, last_seen, last_seq)).one()
            return Head(None, None, None, events_at, seen_at, seq)
    return Head(row[0], row[1], row[2], row[3], row[4], row[5])


def recorded_atlases(db: Database, *, exclude: Collection[str] = ()) -> list[RecordedAtlas]:
    """Atlases with at least one snapshot, most recently snapshotted first."""
    with db.session("list recorded atlases", read_only=True) as s:
        snaps = {
            atlas_id: (newest, count)
            for atlas_id, newest, count in s.execute(
                select(
                    SnapshotRow.atlas_id, func.max(SnapshotRow.created_at), func.count()
                ).group_by(SnapshotRow.atlas_id)
            )
            if atlas_id not in exclude
        }
        if not snaps:
            return []
        ids = list(snaps)
        rows = {r.id: r for r in s.scalars(select(AtlasRow).where(AtlasRow.id.in_(ids)))}
        events = dict(
            s.execute(
                select(EventRow.atlas_id, func.count())
                .where(EventRow.atlas_id.in_(ids))
                .group_by(EventRow.atlas_id)
            ).all()
        )
        finals = s.execute(
            select(SnapshotRow.atlas_id, SnapshotRow.created_at).where(
                SnapshotRow.atlas_id.in_(ids), SnapshotRow.label == FINAL_LABEL
            )
        ).all()
    final = {atlas_id for atlas_id, at in finals if at == snaps[atlas_id][0]}
    found = [
        RecordedAtlas(
            id=atlas_id,
            name=rows[atlas_id].name if atlas_id in rows else "unregistered",
            last_seen=rows[atlas_id].last_seen if atlas_id in rows else None,
            snapshot_at=newest,
            snapshots=int(count),
            events=int(events.get(atlas_id, 0)),
            stopped=atlas_id in final,
        )
        for atlas_id, (newest, count) in snaps.items()
    ]
    return sorted(found, key=lambda a: a.snapshot_at, reverse=True)
