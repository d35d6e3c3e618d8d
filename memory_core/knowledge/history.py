"""The audit trail: every change of a knowledge item is written here, in the same transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from memory_core.knowledge.items import ReviewAction
from memory_core.knowledge.models import KnowledgeAuditRow, KnowledgeItemRow

_STATE_FIELDS = (
    "key",
    "version",
    "content",
    "data",
    "source_kind",
    "source_name",
    "effective_from",
    "expires_at",
    "confidence",
    "status",
    "checklist",
    "last_verified_at",
    "reviewer",
    "review_note",
    "consecutive_wrong",
)


def row_state(row: KnowledgeItemRow) -> dict[str, Any]:
    """JSON-safe picture of the reviewable fields (no embedding, no counters but one)."""
    state: dict[str, Any] = {}
    for name in _STATE_FIELDS:
        value = getattr(row, name)
        state[name] = value.isoformat() if isinstance(value, datetime) else value
    return state


def record(
    session: Session,
    row: KnowledgeItemRow,
    action: ReviewAction,
    *,
    actor: str,
    at: datetime,
    before: dict[str, Any] | None,
    note: str | None = None,
) -> KnowledgeAuditRow:
    """Append one audit entry; ``after`` is taken from the row as it is now."""
    entry = KnowledgeAuditRow(
        item_id=row.id,
        item_key=row.key,
        action=action.value,
        actor=actor,
        at=at,
        before=before,
        after=row_state(row),
        note=note,
    )
    session.add(entry)
    return entry
