"""ORM tables of the knowledge and episode tiers (created by Alembic revision 0101_knowledge)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from memory_core.knowledge.items import (
    AuditEntry,
    Checklist,
    Citation,
    CitedBy,
    ItemStatus,
    KnowledgeItem,
    ReviewAction,
    SourceKind,
)
from memory_core.store.base import AuditMixin, Base, UTCDateTime, UUIDKeyMixin, aware, table_of
from memory_core.store.erase import register_erasable


def _aware_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else aware(value)


def _values(enum: type[Any]) -> str:
    return ", ".join(f"'{member.value}'" for member in enum)


class KnowledgeItemRow(UUIDKeyMixin, AuditMixin, Base):
    """One version of one knowledge item; versions are never overwritten once active."""

    __tablename__ = "knowledge_items"
    __table_args__ = (
        UniqueConstraint("key", "version", name="uq_knowledge_items_key_version"),
        CheckConstraint("confidence >= 0 AND confidence <= 1", name="confidence_range"),
        CheckConstraint(f"status IN ({_values(ItemStatus)})", name="status_values"),
        CheckConstraint(f"source_kind IN ({_values(SourceKind)})", name="source_kind_values"),
        Index("ix_knowledge_items_status_validity", "status", "effective_from", "expires_at"),
    )

    key: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[str] = mapped_column(String(50))
    content: Mapped[str] = mapped_column(Text)
    data: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    source_kind: Mapped[str] = mapped_column(String(32))
    source_name: Mapped[str] = mapped_column(String(100), index=True)
    effective_from: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    confidence: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(20))
    checklist: Mapped[dict[str, Any]] = mapped_column(JSON)
    last_verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    citation_count: Mapped[int] = mapped_column(Integer, default=0)
    feedback_correct: Mapped[int] = mapped_column(Integer, default=0)
    feedback_wrong: Mapped[int] = mapped_column(Integer, default=0)
    consecutive_wrong: Mapped[int] = mapped_column(Integer, default=0)
    reviewer: Mapped[str | None] = mapped_column(String(100), nullable=True)
    review_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    embedding_model: Mapped[str | None] = mapped_column(String(100), nullable=True)
    session_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    user_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)

    def to_item(self) -> KnowledgeItem:
        return KnowledgeItem(
            id=self.id,
            key=self.key,
            version=self.version,
            content=self.content,
            source_kind=SourceKind(self.source_kind),
            source_name=self.source_name,
            effective_from=aware(self.effective_from),
            expires_at=_aware_or_none(self.expires_at),
            confidence=self.confidence,
            status=ItemStatus(self.status),
            checklist=Checklist.from_dict(self.checklist),
            data=self.data,
            last_verified_at=_aware_or_none(self.last_verified_at),
            citation_count=self.citation_count,
            feedback_correct=self.feedback_correct,
            feedback_wrong=self.feedback_wrong,
            consecutive_wrong=self.consecutive_wrong,
            reviewer=self.reviewer,
            review_note=self.review_note,
            created_at=aware(self.created_at),
            updated_at=aware(self.updated_at),
            session_id=self.session_id,
            user_id=self.user_id,
        )


class KnowledgeCitationRow(UUIDKeyMixin, Base):
    """A memory or episode relied on an item version; flagged when the item changes."""

    __tablename__ = "knowledge_citations"
    __table_args__ = (
        CheckConstraint(f"cited_by_kind IN ({_values(CitedBy)})", name="cited_by_kind_values"),
    )

    item_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("knowledge_items.id", ondelete="CASCADE"), index=True
    )
    cited_by_id: Mapped[str] = mapped_column(String(100), index=True)
    cited_by_kind: Mapped[str] = mapped_column(String(20))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    session_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    user_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False, index=True)
    flag_reason: Mapped[str | None] = mapped_column(Text, nullable=True)

    def to_citation(self, item: KnowledgeItemRow) -> Citation:
        return Citation(
            id=self.id,
            item_id=self.item_id,
            item_key=item.key,
            item_version=item.version,
            cited_by_id=self.cited_by_id,
            cited_by_kind=CitedBy(self.cited_by_kind),
            at=aware(self.at),
            session_id=self.session_id,
            user_id=self.user_id,
            needs_review=self.needs_review,
            flag_reason=self.flag_reason,
        )


class KnowledgeAuditRow(Base):
    """One review action: who, when, what, and the item state before and after.

    Append-only; the integer key gives the order of actions that share a timestamp.
    """

    __tablename__ = "knowledge_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    item_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("knowledge_items.id", ondelete="CASCADE"), index=True
    )
    item_key: Mapped[str] = mapped_column(String(200), index=True)
    action: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str] = mapped_column(String(100))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)

    def to_entry(self) -> AuditEntry:
        return AuditEntry(
            id=self.id,
            item_id=self.item_id,
            item_key=self.item_key,
            action=ReviewAction(self.action),
            actor=self.actor,
            at=aware(self.at),
            before=self.before,
            after=self.after,
            note=self.note,
        )


class EpisodeRow(UUIDKeyMixin, AuditMixin, Base):
    """A finished or running task fragment (mid-term tier); structured, not free text."""

    __tablename__ = "episodes"
    __table_args__ = (
        CheckConstraint(
            "status IN ('pending', 'completed', 'failed', 'aborted')", name="status_values"
        ),
        Index("ix_episodes_status_archived", "status", "archived_at"),
    )

    goal: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    key_decisions: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    failure_points: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    entities: Mapped[list[str]] = mapped_column(JSON)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    retention_score: Mapped[float] = mapped_column(Float)
    use_count: Mapped[int] = mapped_column(Integer, default=0)
    decayed_until: Mapped[datetime] = mapped_column(UTCDateTime())
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False)
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    archived_item_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    session_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    user_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)


# erase(session_id=...|user_id=...) removes these; audit rows and citations of an erased
# item go with it through ON DELETE CASCADE.
register_erasable(table_of(KnowledgeCitationRow), order=50)
register_erasable(table_of(KnowledgeItemRow), order=60)
register_erasable(table_of(EpisodeRow), order=60)
