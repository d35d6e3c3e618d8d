"""Registry of atlases that record to this database (live agents and recorded snapshots)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from memory_core.store.base import Base, utcnow


class AtlasRow(Base):
    """An atlas the dashboard can list; ``last_seen`` is refreshed by its sink's heartbeat."""

    __tablename__ = "atlases"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(default=utcnow)
