"""The verification loop: citations, correct/wrong feedback, and change propagation.

N consecutive "wrong" verdicts send an item back to review (the seed: three strikes);
when a key gets a new version or expires, everything that cited the old text is flagged.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from memory_core.engine.clock import Clock, to_datetime
from memory_core.errors import InputError, NotFoundError
from memory_core.knowledge import history
from memory_core.knowledge.gate import parse_when
from memory_core.knowledge.items import Citation, CitedBy, ItemStatus, KnowledgeItem, ReviewAction
from memory_core.knowledge.models import EpisodeRow, KnowledgeCitationRow, KnowledgeItemRow
from memory_core.knowledge.settings import KnowledgeSettings

SYSTEM_ACTOR = "system"


def require_reviewer(reviewer: str | None) -> str:
    """Review actions must say who did them; an anonymous approval is worthless in an audit."""
    if reviewer is None or not str(reviewer).strip():
        raise InputError("reviewer", "is required for every review action (got an empty value)")
    return str(reviewer).strip()


def flag_citations(session: Session, item_ids: list[str], *, reason: str, at: datetime) -> int:
    """Mark citations of ``item_ids`` and the episodes behind them ``needs_review``."""
    if not item_ids:
        return 0
    rows = session.scalars(
        select(KnowledgeCitationRow).where(
            KnowledgeCitationRow.item_id.in_(item_ids), KnowledgeCitationRow.needs_review.is_(False)
        )
    ).all()
    for row in rows:
        row.needs_review = True
        row.flag_reason = f"{reason} (flagged {at.isoformat()})"
    episode_ids = {r.cited_by_id for r in rows if r.cited_by_kind == CitedBy.EPISODE.value}
    if episode_ids:
        session.execute(
            update(EpisodeRow).where(EpisodeRow.id.in_(episode_ids)).values(needs_review=True)
        )
    return len(rows)


class FeedbackLoop:
    """Citations and feedback inside one unit of work (one session, one transaction)."""

    __slots__ = ("_clock", "_session", "_settings")

    def __init__(self, session: Session, *, clock: Clock, settings: KnowledgeSettings) -> None:
        self._session = session
        self._clock = clock
        self._settings = settings

    def _item(self, item_id: str) -> KnowledgeItemRow:
        row = self._session.get(KnowledgeItemRow, item_id)
        if row is None:
            raise NotFoundError("knowledge item", item_id)
        return row

    def cite(
        self,
        item_id: str,
        *,
        cited_by_id: str,
        cited_by_kind: CitedBy = CitedBy.MEMORY,
        session_id: str | None = None,
        user_id: str | None = None,
        at: datetime | None = None,
    ) -> Citation:
        """Record that a memory or episode relied on this item version (``at`` defaults to now;
        given when importing citations recorded elsewhere)."""
        if not cited_by_id.strip():
            raise InputError("cited_by_id", "must name the citing memory or episode")
        item = self._item(item_id)
        row = KnowledgeCitationRow(
            item_id=item.id,
            cited_by_id=cited_by_id,
            cited_by_kind=CitedBy(cited_by_kind).value,
            at=to_datetime(self._clock.now()) if at is None else parse_when(at, "at"),
            session_id=session_id,
            user_id=user_id,
            needs_review=False,
        )
        item.citation_count += 1
        self._session.add(row)
        self._session.flush()
        return row.to_citation(item)

    def feedback(self, item_id: str, *, correct: bool, actor: str = SYSTEM_ACTOR) -> KnowledgeItem:
        """Count a verdict; the N-th consecutive "wrong" demotes an active item to review."""
        row = self._item(item_id)
        if correct:
            row.feedback_correct += 1
            row.consecutive_wrong = 0
            self._session.flush()
            return row.to_item()
        before = history.row_state(row)
        row.feedback_wrong += 1
        row.consecutive_wrong += 1
        threshold = self._settings.wrong_threshold
        if row.consecutive_wrong >= threshold and row.status == ItemStatus.ACTIVE.value:
            row.status = ItemStatus.PENDING_REVIEW.value
            row.review_note = f"{row.consecutive_wrong} consecutive 'wrong' verdicts"
            history.record(
                self._session,
                row,
                ReviewAction.FEEDBACK_DEMOTE,
                actor=actor,
                at=to_datetime(self._clock.now()),
                before=before,
                note=f"marked wrong {row.consecutive_wrong} times in a row (threshold {threshold})",
            )
        self._session.flush()
        return row.to_item()

    def citations(self, item_id: str) -> list[Citation]:
        item = self._item(item_id)
        rows = self._session.scalars(
            select(KnowledgeCitationRow)
            .where(KnowledgeCitationRow.item_id == item_id)
            .order_by(KnowledgeCitationRow.at)
        ).all()
        return [r.to_citation(item) for r in rows]

    def flagged_citations(self) -> list[Citation]:
        """Citations whose item changed since they were made, oldest first."""
        pairs = self._session.execute(
            select(KnowledgeCitationRow, KnowledgeItemRow)
            .join(KnowledgeItemRow, KnowledgeItemRow.id == KnowledgeCitationRow.item_id)
            .where(KnowledgeCitationRow.needs_review.is_(True))
            .order_by(KnowledgeCitationRow.at)
        ).all()
        return [c.to_citation(i) for c, i in pairs]

    def resolve_flag(self, citation_id: str, *, reviewer: str) -> Citation:
        """A reviewer checked the citing memory or episode against the new text."""
        who = require_reviewer(reviewer)
        row = self._session.get(KnowledgeCitationRow, citation_id)
        if row is None:
            raise NotFoundError("citation", citation_id)
        row.needs_review = False
        row.flag_reason = f"resolved by {who} at {to_datetime(self._clock.now()).isoformat()}"
        self._session.flush()
        return row.to_citation(self._item(row.item_id))
