"""Versioned knowledge items in SQL: submit through the gate, review, expire, erase.

Every method works inside the caller's session and flushes; the caller's transaction
(see ``KnowledgeBase.unit``) decides whether it all commits or nothing does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.embedding.base import Embedder, embed_checked
from memory_core.engine.clock import Clock, to_datetime
from memory_core.errors import InputError, NotFoundError
from memory_core.knowledge import history
from memory_core.knowledge.feedback import SYSTEM_ACTOR, flag_citations, require_reviewer
from memory_core.knowledge.gate import GateResult, IngestionGate, parse_when
from memory_core.knowledge.items import (
    AuditEntry,
    Checklist,
    ItemDraft,
    ItemStatus,
    KnowledgeItem,
    ReviewAction,
    parse_version,
)
from memory_core.knowledge.models import (
    KnowledgeAuditRow,
    KnowledgeItemRow,
)

EDITABLE_FIELDS = ("content", "effective_from", "expires_at", "confidence", "checklist", "data")


@dataclass(frozen=True, slots=True)
class Submission:
    """The gate's verdict and, if accepted, the stored version."""

    result: GateResult
    item: KnowledgeItem | None

    @property
    def accepted(self) -> bool:
        return self.item is not None


class KnowledgeRepository:
    """Knowledge items of one unit of work."""

    __slots__ = ("_clock", "_embedder", "_gate", "_session")

    def __init__(
        self, session: Session, *, gate: IngestionGate, embedder: Embedder, clock: Clock
    ) -> None:
        self._session = session
        self._gate = gate
        self._embedder = embedder
        self._clock = clock

    # -- reading ------------------------------------------------------------------
    def now(self) -> datetime:
        return to_datetime(self._clock.now())

    def row(self, item_id: str) -> KnowledgeItemRow:
        row = self._session.get(KnowledgeItemRow, item_id)
        if row is None:
            raise NotFoundError("knowledge item", item_id)
        return row

    def get(self, item_id: str) -> KnowledgeItem:
        return self.row(item_id).to_item()

    def _version_rows(self, key: str) -> list[KnowledgeItemRow]:
        rows = self._session.scalars(select(KnowledgeItemRow).where(KnowledgeItemRow.key == key))
        return sorted(rows, key=lambda r: parse_version(r.version))

    def versions(self, key: str) -> list[KnowledgeItem]:
        """Every stored version of ``key``, oldest first."""
        return [r.to_item() for r in self._version_rows(key)]

    def newest(self, key: str, *, excluding: str | None = None) -> KnowledgeItem | None:
        rows = [r for r in self._version_rows(key) if r.id != excluding]
        return rows[-1].to_item() if rows else None

    def items(
        self,
        *,
        status: ItemStatus | None = None,
        key: str | None = None,
        source_name: str | None = None,
    ) -> list[KnowledgeItem]:
        """Items filtered by status / key / source, ordered by key then creation."""
        query = select(KnowledgeItemRow).order_by(KnowledgeItemRow.key, KnowledgeItemRow.created_at)
        if status is not None:
            query = query.where(KnowledgeItemRow.status == ItemStatus(status).value)
        if key is not None:
            query = query.where(KnowledgeItemRow.key == key)
        if source_name is not None:
            query = query.where(KnowledgeItemRow.source_name == source_name)
        return [r.to_item() for r in self._session.scalars(query)]

    def audit_log(self, item_id: str | None = None, *, key: str | None = None) -> list[AuditEntry]:
        query = select(KnowledgeAuditRow).order_by(KnowledgeAuditRow.id)
        if item_id is not None:
            query = query.where(KnowledgeAuditRow.item_id == item_id)
        if key is not None:
            query = query.where(KnowledgeAuditRow.item_key == key)
        return [r.to_entry() for r in self._session.scalars(query)]

    # -- ingestion ----------------------------------------------------------------
    def check(self, candidate: ItemDraft | Mapping[str, Any]) -> GateResult:
        """Run the gate without writing (preview of problems, status and diff)."""
        if isinstance(candidate, ItemDraft):
            draft = candidate
        else:
            parsed, problems = self._gate.parse(candidate)
            if parsed is None:
                return GateResult(draft=None, problems=tuple(problems))
            draft = parsed
        return self._gate.evaluate(draft, self.newest(draft.key))

    def submit(
        self, candidate: ItemDraft | Mapping[str, Any], *, actor: str = SYSTEM_ACTOR
    ) -> Submission:
        """Store a new version if the gate accepts it; otherwise write nothing."""
        result = self.check(candidate)
        if not result.accepted or result.draft is None or result.status is None:
            return Submission(result, None)
        draft = result.draft
        vector = embed_checked(self._embedder, [draft.content])[0]
        now = self.now()
        row = KnowledgeItemRow(
            key=draft.key,
            version=draft.version,
            content=draft.content,
            data=draft.data,
            source_kind=draft.source_kind.value,
            source_name=draft.source_name,
            effective_from=draft.effective_from,
            expires_at=draft.expires_at,
            confidence=float(draft.confidence),
            status=ItemStatus.PENDING_REVIEW.value,
            checklist=draft.checklist.as_dict(),
            citation_count=0,
            feedback_correct=0,
            feedback_wrong=0,
            consecutive_wrong=0,
            embedding=vector.tobytes(),
            embedding_model=self._embedder.name,
            session_id=draft.session_id,
            user_id=draft.user_id,
        )
        self._session.add(row)
        self._session.flush()
        history.record(
            self._session,
            row,
            ReviewAction.SUBMIT,
            actor=actor,
            at=now,
            before=None,
            note=result.diff,
        )
        if result.status is ItemStatus.ACTIVE:
            before = history.row_state(row)
            self._activate(row, actor=actor, at=now)
            history.record(
                self._session,
                row,
                ReviewAction.AUTO_APPROVE,
                actor=actor,
                at=now,
                before=before,
                note=f"trusted source {row.source_name}",
            )
        self._session.flush()
        return Submission(result, row.to_item())

    def _activate(self, row: KnowledgeItemRow, *, actor: str, at: datetime) -> None:
        """Make ``row`` the version in force and retire the ones it replaces."""
        row.status = ItemStatus.ACTIVE.value
        row.reviewer = actor
        row.last_verified_at = at
        row.consecutive_wrong = 0
        others = [
            r
            for r in self._version_rows(row.key)
            if r.id != row.id and r.status == ItemStatus.ACTIVE.value
        ]
        for other in others:
            before = history.row_state(other)
            if row.effective_from > at:  # future-dated: the old text stays in force until then
                if other.expires_at is None or other.expires_at > row.effective_from:
                    other.expires_at = row.effective_from
                note = f"valid until v{row.version} takes effect {row.effective_from.isoformat()}"
            else:
                ended = other.expires_at is not None and other.expires_at <= at
                other.status = (ItemStatus.EXPIRED if ended else ItemStatus.DEPRECATED).value
                other.review_note = f"superseded by v{row.version}"
                note = other.review_note
            history.record(
                self._session,
                other,
                ReviewAction.SUPERSEDE,
                actor=actor,
                at=at,
                before=before,
                note=note,
            )
        previous_ids = [r.id for r in self._version_rows(row.key) if r.id != row.id]
        flag_citations(
            self._session, previous_ids, reason=f"{row.key} changed to v{row.version}", at=at
        )

    # -- review actions -------------------------------------------------------------
    def _pending(self, item_id: str, action: str) -> KnowledgeItemRow:
        row = self.row(item_id)
        if row.status != ItemStatus.PENDING_REVIEW.value:
            raise InputError(
                "status", f"only pending_review items can be {action}; {item_id} is {row.status}"
            )
        return row

    def approve(self, item_id: str, *, reviewer: str, note: str | None = None) -> KnowledgeItem:
        """Reviewer accepts a pending version: it becomes the one in force."""
        who = require_reviewer(reviewer)
        row = self._pending(item_id, "approved")
        before, now = history.row_state(row), self.now()
        row.review_note = note
        self._activate(row, actor=who, at=now)
        history.record(
            self._session, row, ReviewAction.APPROVE, actor=who, at=now, before=before, note=note
        )
        self._session.flush()
        return row.to_item()

    def reject(self, item_id: str, *, reviewer: str, note: str | None = None) -> KnowledgeItem:
        """Reviewer refuses a pending version; it is kept (deprecated) for the record."""
        who = require_reviewer(reviewer)
        row = self._pending(item_id, "rejected")
        before = history.row_state(row)
        row.status = ItemStatus.DEPRECATED.value
        row.reviewer = who
        row.review_note = f"rejected: {note}" if note else "rejected"
        history.record(
            self._session,
            row,
            ReviewAction.REJECT,
            actor=who,
            at=self.now(),
            before=before,
            note=note,
        )
        self._session.flush()
        return row.to_item()

    def edit(
        self, item_id: str, *, reviewer: str, changes: Mapping[str, Any], note: str | None = None
    ) -> KnowledgeItem:
        """Correct a pending version in place; the gate runs again on the result."""
        who = require_reviewer(reviewer)
        row = self._pending(item_id, "edited (submit a new version instead)")
        unknown = sorted(set(changes) - set(EDITABLE_FIELDS))
        if unknown or not changes:
            raise InputError(
                "changes",
                f"editable fields are {', '.join(EDITABLE_FIELDS)}; "
                f"got {sorted(changes) if changes else 'nothing'}",
            )
        draft = self._edited_draft(row.to_item(), changes)
        result = self._gate.evaluate(draft, self.newest(row.key, excluding=row.id))
        if not result.accepted or result.draft is None:
            raise InputError("changes", "; ".join(str(p) for p in result.problems))
        draft = result.draft
        vector = (
            embed_checked(self._embedder, [draft.content])[0]
            if (draft.content != row.content or row.embedding_model != self._embedder.name)
            else None
        )
        before = history.row_state(row)
        row.content, row.data, row.confidence = draft.content, draft.data, float(draft.confidence)
        row.effective_from, row.expires_at = draft.effective_from, draft.expires_at
        row.checklist = draft.checklist.as_dict()
        row.reviewer, row.review_note = who, note
        if vector is not None:
            row.embedding, row.embedding_model = vector.tobytes(), self._embedder.name
        history.record(
            self._session,
            row,
            ReviewAction.EDIT,
            actor=who,
            at=self.now(),
            before=before,
            note=note,
        )
        self._session.flush()
        return row.to_item()

    @staticmethod
    def _edited_draft(item: KnowledgeItem, changes: Mapping[str, Any]) -> ItemDraft:
        values: dict[str, Any] = dict(changes)
        for name in ("effective_from", "expires_at"):
            if name in values and values[name] is not None:
                values[name] = parse_when(values[name], name)
        if "checklist" in values:
            values["checklist"] = Checklist.from_dict(values["checklist"])
        if "content" in values:
            values["content"] = str(values["content"]).strip()
        base = ItemDraft(
            key=item.key,
            content=item.content,
            source_kind=item.source_kind,
            source_name=item.source_name,
            version=item.version,
            effective_from=item.effective_from,
            expires_at=item.expires_at,
            confidence=item.confidence,
            checklist=item.checklist,
            data=item.data,
            session_id=item.session_id,
            user_id=item.user_id,
        )
        return replace(base, **values)

    def expire(self, item_id: str, *, reviewer: str, note: str | None = None) -> KnowledgeItem:
        """Take a version out of force now; whatever cited it is flagged for review."""
        who = require_reviewer(reviewer)
        row = self.row(item_id)
        if row.status == ItemStatus.EXPIRED.value:
            raise InputError("status", f"{item_id} is already expired")
        self._expire_row(row, actor=who, at=self.now(), note=note)
        self._session.flush()
        return row.to_item()

    def _expire_row(
        self, row: KnowledgeItemRow, *, actor: str, at: datetime, note: str | None
    ) -> None:
        before = history.row_state(row)
        row.status = ItemStatus.EXPIRED.value
        if row.expires_at is None or row.expires_at > at:
            row.expires_at = max(at, row.effective_from)
        history.record(
            self._session, row, ReviewAction.EXPIRE, actor=actor, at=at, before=before, note=note
        )
        flag_citations(self._session, [row.id], reason=f"{row.key} v{row.version} expired", at=at)

    def expire_due(self) -> list[KnowledgeItem]:
        """Mark active versions whose expiry has passed as expired (clock-driven sweep)."""
        now = self.now()
        rows = self._session.scalars(
            select(KnowledgeItemRow).where(
                KnowledgeItemRow.status == ItemStatus.ACTIVE.value,
                KnowledgeItemRow.expires_at.is_not(None),
                KnowledgeItemRow.expires_at <= now,
            )
        ).all()
        for row in rows:
            self._expire_row(row, actor=SYSTEM_ACTOR, at=now, note="validity period ended")
        self._session.flush()
        return [r.to_item() for r in rows]
