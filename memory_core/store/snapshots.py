"""Tables of recorded atlases: snapshot files stored as bytes, plus the sessions each holds.

``snapshot_sessions`` lets ``erase(session_id=...)`` find and delete every snapshot that
contains the subject's memories; a snapshot is one opaque file and cannot be edited.
``snapshot_parts`` holds a file's bytes in pieces of ``PART_BYTES``: a driver copies a
bound value while holding Python's GIL, so one 200 MB value (a 100k-memory checkpoint)
stopped the agent's threads for ~0.2 s, a 4 MB piece for about a millisecond. Files
saved before the parts table keep their bytes in ``snapshots.data``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from memory_core.store.base import Base, UUIDKeyMixin, utcnow


class SnapshotRow(UUIDKeyMixin, Base):
    """One ``save_snapshot`` file with what the pages show without loading it."""

    __tablename__ = "snapshots"

    atlas_id: Mapped[str] = mapped_column(String(64))
    label: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    format_version: Mapped[int] = mapped_column(Integer)
    node_count: Mapped[int] = mapped_column(Integer)
    edge_count: Mapped[int] = mapped_column(Integer)
    size_bytes: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    event_seq: Mapped[int | None] = mapped_column(BigInteger)
    # deferred: listing snapshots must not pull megabytes of blobs; empty when the bytes
    # are in snapshot_parts
    data: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)

    __table_args__ = (Index("ix_snapshots_atlas_created", "atlas_id", "created_at"),)


class SnapshotSessionRow(Base):
    """Which sessions a snapshot contains (for erasure)."""

    __tablename__ = "snapshot_sessions"

    snapshot_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    session_id: Mapped[str] = mapped_column(String(255), primary_key=True)

    __table_args__ = (Index("ix_snapshot_sessions_session", "session_id"),)


PART_BYTES = 4 << 20
"""Bytes per ``snapshot_parts`` row."""


class SnapshotPartRow(Base):
    """Piece ``part`` (from 0) of a snapshot file's bytes."""

    __tablename__ = "snapshot_parts"

    snapshot_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
