"""The review queue in SQLite or PostgreSQL (tables of revision ``0201_conflicts``).

Each call is one transaction of ``Database.session`` (errors translated to ``StoreError``);
the compare-and-set transitions are single conditional UPDATEs, so two reviewers (or
two clicks) racing on one item cannot both win.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, or_, select, update
from sqlalchemy.orm import Session

from memory_core.conflicts.items import (
    REOPENED_FIELDS,
    AuditEntry,
    ItemDraft,
    ItemFilter,
    ItemStatus,
    QueueCounts,
    ReviewAction,
    ReviewItem,
    resolved_fields,
)
from memory_core.conflicts.models import AllowedPairRow, ConflictAuditRow, ConflictItemRow
from memory_core.conflicts.queue import check_page
from memory_core.errors import NotFoundError
from memory_core.store.base import rows_changed
from memory_core.store.engine import Database

_OPEN = ItemStatus.OPEN.value
_RESOLVED = ItemStatus.RESOLVED.value


class SqlReviewQueue:
    """``ReviewQueue`` over an open ``Database``; the database stays the caller's to close."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def enqueue(self, draft: ItemDraft, *, at: datetime) -> ReviewItem:
        with self._db.session("queue conflict") as session:
            found = session.scalars(
                select(ConflictItemRow).where(
                    ConflictItemRow.status == _OPEN,
                    ConflictItemRow.pair_key == draft.key,
                    ConflictItemRow.old_id == draft.old_id,
                    _same_new(draft.new_id),
                )
            ).first()
            if found is not None:
                return found.to_item()
            row = ConflictItemRow(
                status=_OPEN,
                kind=draft.kind,
                old_id=draft.old_id,
                new_id=draft.new_id,
                old_text=draft.old_text,
                new_text=draft.new_text,
                old_session_id=draft.old_session_id,
                session_id=draft.session_id,
                user_id=draft.user_id,
                pair_key=draft.key,
                similarity=draft.similarity,
                score=draft.score,
                reason=draft.reason,
                spans=[asdict(s) for s in draft.spans],
                suggested=draft.suggested.value,
                created_at=at,
                updated_at=at,
            )
            session.add(row)
            session.flush()
            return row.to_item()

    def get(self, item_id: str) -> ReviewItem:
        with self._db.session("read review item") as session:
            return _item_row(session, item_id).to_item()

    def items(
        self, flt: ItemFilter | None = None, *, offset: int = 0, limit: int = 100
    ) -> list[ReviewItem]:
        check_page(offset, limit)
        query = _filtered(select(ConflictItemRow), flt).order_by(
            ConflictItemRow.created_at.desc(), ConflictItemRow.id.desc()
        )
        with self._db.session("list review items") as session:
            rows = session.scalars(query.offset(offset).limit(limit))
            return [r.to_item() for r in rows]

    def count(self, flt: ItemFilter | None = None) -> int:
        query = _filtered(select(func.count()).select_from(ConflictItemRow), flt)
        with self._db.session("count review items") as session:
            return int(session.scalar(query) or 0)

    def counts(self) -> QueueCounts:
        query = select(ConflictItemRow.status, ConflictItemRow.kind, func.count()).group_by(
            ConflictItemRow.status, ConflictItemRow.kind
        )
        with self._db.session("count review items") as session:
            rows = session.execute(query).all()
        return QueueCounts.tally((status, kind, n) for status, kind, n in rows)

    def resolve(self, item_id: str, action: ReviewAction, *, reviewer: str, at: datetime) -> bool:
        values = {**resolved_fields(action, reviewer, at), "updated_at": at}
        return self._transition(item_id, _OPEN, values)

    def reopen(self, item_id: str) -> bool:
        return self._transition(item_id, _RESOLVED, REOPENED_FIELDS)

    def record(
        self,
        item_id: str,
        action: str,
        *,
        reviewer: str,
        at: datetime,
        before: dict[str, Any],
        after: dict[str, Any],
        undo_of: int | None = None,
    ) -> AuditEntry:
        with self._db.session("record review action") as session:
            _item_row(session, item_id)
            row = ConflictAuditRow(
                item_id=item_id,
                action=action,
                reviewer=reviewer,
                at=at,
                before=before,
                after=after,
                undo_of=undo_of,
            )
            session.add(row)
            session.flush()
            return row.to_entry()

    def audit_entry(self, entry_id: int) -> AuditEntry:
        with self._db.session("read audit entry") as session:
            row = session.get(ConflictAuditRow, entry_id)
            if row is None:
                raise NotFoundError("audit entry", entry_id)
            return row.to_entry()

    def audit(
        self, item_id: str | None = None, *, offset: int = 0, limit: int = 100
    ) -> list[AuditEntry]:
        check_page(offset, limit)
        query = select(ConflictAuditRow).order_by(ConflictAuditRow.id.desc())
        if item_id is not None:
            query = query.where(ConflictAuditRow.item_id == item_id)
        with self._db.session("read audit trail") as session:
            return [r.to_entry() for r in session.scalars(query.offset(offset).limit(limit))]

    def mark_undone(self, entry_id: int, undo_id: int) -> bool:
        statement = (
            update(ConflictAuditRow)
            .where(ConflictAuditRow.id == entry_id, ConflictAuditRow.undone_by.is_(None))
            .values(undone_by=undo_id)
        )
        with self._db.session("mark audit entry undone") as session:
            changed = rows_changed(session.execute(statement))
            if not changed and session.get(ConflictAuditRow, entry_id) is None:
                raise NotFoundError("audit entry", entry_id)
            return bool(changed)

    def allow(
        self,
        key: str,
        *,
        reviewer: str,
        at: datetime,
        item_id: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> None:
        with self._db.session("allow pair") as session:
            if session.get(AllowedPairRow, key) is None:
                session.add(
                    AllowedPairRow(
                        pair_key=key,
                        reviewer=reviewer,
                        at=at,
                        item_id=item_id,
                        session_id=session_id,
                        user_id=user_id,
                    )
                )

    def disallow(self, key: str) -> None:
        with self._db.session("disallow pair") as session:
            row = session.get(AllowedPairRow, key)
            if row is not None:
                session.delete(row)

    def is_allowed(self, key: str) -> bool:
        with self._db.session("read allow-list") as session:
            return session.get(AllowedPairRow, key) is not None

    def close(self) -> None:
        """The database belongs to whoever opened it."""

    def _transition(self, item_id: str, from_status: str, values: dict[str, Any]) -> bool:
        columns = {k: v.value if isinstance(v, StrEnum) else v for k, v in values.items()}
        statement = (
            update(ConflictItemRow)
            .where(ConflictItemRow.id == item_id, ConflictItemRow.status == from_status)
            .values(**columns)
        )
        with self._db.session("update review item") as session:
            changed = rows_changed(session.execute(statement))
            if not changed:
                _item_row(session, item_id)
            return bool(changed)


def _item_row(session: Session, item_id: str) -> ConflictItemRow:
    row = session.get(ConflictItemRow, item_id)
    if row is None:
        raise NotFoundError("review item", item_id)
    return row


def _same_new(new_id: str | None) -> ColumnElement[bool]:
    if new_id is None:
        return ConflictItemRow.new_id.is_(None)
    return ConflictItemRow.new_id == new_id


def _filtered(query: Select[Any], flt: ItemFilter | None) -> Select[Any]:
    if flt is None:
        return query
    clauses: list[ColumnElement[bool]] = [ConflictItemRow.score >= flt.min_score]
    if flt.status is not None:
        clauses.append(ConflictItemRow.status == flt.status.value)
    if flt.kinds:
        clauses.append(ConflictItemRow.kind.in_(flt.kinds))
    if flt.session_id is not None:
        clauses.append(
            or_(
                ConflictItemRow.session_id == flt.session_id,
                ConflictItemRow.old_session_id == flt.session_id,
            )
        )
    if flt.text:
        needle = f"%{_escape_like(flt.text.lower())}%"
        clauses.append(
            or_(
                func.lower(ConflictItemRow.old_text).like(needle, escape="\\"),
                func.lower(ConflictItemRow.new_text).like(needle, escape="\\"),
            )
        )
    return query.where(and_(*clauses))


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
