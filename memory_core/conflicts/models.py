"""ORM tables of the conflict review queue (created by Alembic revision 0201_conflicts)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    or_,
)
from sqlalchemy.orm import Mapped, mapped_column

from memory_core.conflicts.items import AuditEntry, ItemStatus, ReviewAction, ReviewItem
from memory_core.conflicts.verdict import Kind, Span
from memory_core.store.base import AuditMixin, Base, UUIDKeyMixin, table_of
from memory_core.store.erase import Subject, register_erasable


class ConflictItemRow(UUIDKeyMixin, AuditMixin, Base):
    """One flagged pair: both sides as they were when flagged, the verdict, the review state."""

    __tablename__ = "conflict_items"
    __table_args__ = (
        CheckConstraint("status IN ('open', 'resolved')", name="status_values"),
        CheckConstraint("similarity >= -1 AND similarity <= 1", name="similarity_range"),
        CheckConstraint("score >= 0 AND score <= 1", name="score_range"),
        Index("ix_conflict_items_status_created", "status", "created_at"),
    )

    status: Mapped[str] = mapped_column(String(10))
    kind: Mapped[str] = mapped_column(String(20))
    old_id: Mapped[str] = mapped_column(String(64), index=True)
    new_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    old_text: Mapped[str] = mapped_column(Text)
    new_text: Mapped[str] = mapped_column(Text)
    old_session_id: Mapped[str] = mapped_column(String(100), index=True)
    session_id: Mapped[str] = mapped_column(String(100), index=True)
    user_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    pair_key: Mapped[str] = mapped_column(String(65), index=True)
    similarity: Mapped[float] = mapped_column(Float)
    score: Mapped[float] = mapped_column(Float)
    reason: Mapped[str] = mapped_column(Text)
    spans: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    suggested: Mapped[str] = mapped_column(String(20))
    resolution: Mapped[str | None] = mapped_column(String(20), nullable=True)
    resolved_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(nullable=True)

    def to_item(self) -> ReviewItem:
        kind: Kind = self.kind  # type: ignore[assignment]
        return ReviewItem(
            id=self.id,
            status=ItemStatus(self.status),
            created_at=self.created_at,
            old_id=self.old_id,
            old_text=self.old_text,
            old_session_id=self.old_session_id,
            new_id=self.new_id,
            new_text=self.new_text,
            session_id=self.session_id,
            user_id=self.user_id,
            similarity=self.similarity,
            score=self.score,
            reason=self.reason,
            kind=kind,
            suggested=ReviewAction(self.suggested),
            spans=tuple(Span(**s) for s in self.spans),
            resolution=None if self.resolution is None else ReviewAction(self.resolution),
            resolved_by=self.resolved_by,
            resolved_at=self.resolved_at,
        )


class ConflictAuditRow(Base):
    """One review action or undo; append-only except for the ``undone_by`` link."""

    __tablename__ = "conflict_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    item_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("conflict_items.id", ondelete="CASCADE"), index=True
    )
    action: Mapped[str] = mapped_column(String(20))
    reviewer: Mapped[str] = mapped_column(String(100))
    at: Mapped[datetime]
    before: Mapped[dict[str, Any]] = mapped_column(JSON)
    after: Mapped[dict[str, Any]] = mapped_column(JSON)
    undo_of: Mapped[int | None] = mapped_column(Integer, nullable=True)
    undone_by: Mapped[int | None] = mapped_column(Integer, nullable=True)

    def to_entry(self) -> AuditEntry:
        return AuditEntry(
            id=self.id,
            item_id=self.item_id,
            action=self.action,
            reviewer=self.reviewer,
            at=self.at,
            before=self.before,
            after=self.after,
            undo_of=self.undo_of,
            undone_by=self.undone_by,
        )


class AllowedPairRow(Base):
    """A pair a reviewer declared not a conflict: never flagged again."""

    __tablename__ = "conflict_allowed_pairs"

    pair_key: Mapped[str] = mapped_column(String(65), primary_key=True)
    reviewer: Mapped[str] = mapped_column(String(100))
    at: Mapped[datetime]
    item_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    session_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    user_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)


def _items_where(subject: Subject) -> Any:
    table = table_of(ConflictItemRow)
    if subject.column == "user_id":
        return table.c.user_id == subject.value
    return or_(table.c.session_id == subject.value, table.c.old_session_id == subject.value)


# An item quotes both sides, so erasing either side's session removes it; its audit
# rows go with it through ON DELETE CASCADE.
register_erasable(table_of(ConflictItemRow), where=_items_where, order=40)
register_erasable(table_of(AllowedPairRow), order=40)
