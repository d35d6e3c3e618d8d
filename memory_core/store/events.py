"""Tables of the engine's event log.

Evictions are not a table of their own: they are events of type ``evicted`` whose
``reason`` and ``content`` are real columns, so the eviction page filters them with
the same indexes as every other event. Weights are exploded into ``weight_samples``
(one row per node and event) so a node's weight history is one indexed range scan
instead of a scan over every decay pass's JSON. Samples do not point back at their
event: both tables are then written with plain multi-row inserts, the sink's hot path.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from memory_core.store.base import Base, JSONDocument

# SQLite only auto-increments an INTEGER PRIMARY KEY (the rowid alias).
EventKey = BigInteger().with_variant(Integer(), "sqlite")


class EventRow(Base):
    """One engine event as written by the sink (after the privacy policy)."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(EventKey, primary_key=True, autoincrement=True)
    atlas_id: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime]
    session_id: Mapped[str | None] = mapped_column(String(255))
    node_id: Mapped[str | None] = mapped_column(String(64))
    user_id: Mapped[str | None] = mapped_column(String(255))
    reason: Mapped[str | None] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    content: Mapped[str | None] = mapped_column(Text)
    seq: Mapped[int | None] = mapped_column(BigInteger)
    """Position in its atlas's stream (1, 2, 3...); a follower reads ``seq > n`` in order."""

    __table_args__ = (
        Index("ix_events_atlas_at", "atlas_id", "at"),
        Index("ix_events_atlas_seq", "atlas_id", "seq"),
        Index("ix_events_type_at", "type", "at"),
        Index("ix_events_session", "session_id"),
        Index("ix_events_node", "node_id"),
        Index("ix_events_user", "user_id"),
        Index("ix_events_reason", "reason"),
    )


class WeightSampleRow(Base):
    """A node's weight at one instant, taken from an added/reinforced/decay event."""

    __tablename__ = "weight_samples"

    id: Mapped[int] = mapped_column(EventKey, primary_key=True, autoincrement=True)
    atlas_id: Mapped[str] = mapped_column(String(64))
    node_id: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime]
    weight: Mapped[float] = mapped_column(Float)
    source: Mapped[str] = mapped_column(String(32))

    __table_args__ = (Index("ix_weight_samples_node_at", "node_id", "at"),)
