"""Table of simulation runs (the harness writes one row per run)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, String
from sqlalchemy.orm import Mapped, mapped_column

from memory_core.store.base import Base, JSONDocument, UUIDKeyMixin, utcnow


class RunRow(UUIDKeyMixin, Base):
    """Parameters, policy, metrics and per-fact results of one simulation run."""

    __tablename__ = "runs"

    name: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    policy: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    fact_results: Mapped[list[Any]] = mapped_column(JSONDocument)
    conversations: Mapped[list[Any]] = mapped_column(JSONDocument)

    __table_args__ = (Index("ix_runs_created", "created_at"), Index("ix_runs_name", "name"))
