"""Queries behind the knowledge audit page; the page only renders what these return."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import combinations

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from memory_core.engine.clock import Clock, to_datetime
from memory_core.knowledge.feedback import FeedbackLoop
from memory_core.knowledge.gate import version_diff
from memory_core.knowledge.items import AuditEntry, Citation, ItemStatus, KnowledgeItem
from memory_core.knowledge.models import KnowledgeCitationRow, KnowledgeItemRow
from memory_core.knowledge.repository import KnowledgeRepository
from memory_core.knowledge.settings import KnowledgeSettings

_FAR_FUTURE = datetime.max.replace(tzinfo=to_datetime(0).tzinfo)


@dataclass(frozen=True, slots=True)
class VersionConflict:
    """Two active versions of one key; ``overlap`` is the shared window, if any."""

    key: str
    first: KnowledgeItem
    second: KnowledgeItem
    overlap: tuple[datetime, datetime | None] | None

    @property
    def reason(self) -> str:
        head = f"{self.key}: v{self.first.version} and v{self.second.version} are both active"
        if self.overlap is None:
            return f"{head}; validity windows do not overlap (scheduled handover)"
        start, end = self.overlap
        until = end.date().isoformat() if end else "open end"
        return f"{head} with overlapping validity {start.date().isoformat()} .. {until}"


@dataclass(frozen=True, slots=True)
class VersionStep:
    """The diff from one version of a key to the next."""

    from_version: str | None
    to_version: str
    diff: str


@dataclass(frozen=True, slots=True)
class ItemDetail:
    """Everything the detail panel shows for one item version."""

    item: KnowledgeItem
    versions: list[KnowledgeItem]
    history: list[VersionStep]
    citations: list[Citation]
    audit: list[AuditEntry]


def _overlap(a: KnowledgeItem, b: KnowledgeItem) -> tuple[datetime, datetime | None] | None:
    start = max(a.effective_from, b.effective_from)
    end_a, end_b = a.expires_at or _FAR_FUTURE, b.expires_at or _FAR_FUTURE
    end = min(end_a, end_b)
    if start >= end:
        return None
    return start, None if end == _FAR_FUTURE else end


class AuditQueries:
    """Read-only views for reviewers."""

    __slots__ = ("_clock", "_feedback", "_repo", "_session", "_settings")

    def __init__(
        self,
        session: Session,
        *,
        repo: KnowledgeRepository,
        feedback: FeedbackLoop,
        clock: Clock,
        settings: KnowledgeSettings,
    ) -> None:
        self._session = session
        self._repo = repo
        self._feedback = feedback
        self._clock = clock
        self._settings = settings

    def status_counts(self) -> dict[ItemStatus, int]:
        rows = self._session.execute(
            select(KnowledgeItemRow.status, func.count()).group_by(KnowledgeItemRow.status)
        ).all()
        counts = dict.fromkeys(ItemStatus, 0)
        counts.update({ItemStatus(status): int(n) for status, n in rows})
        return counts

    def stale(self, days: float | None = None) -> list[KnowledgeItem]:
        """Active items nobody verified in ``days`` (default ``stale_days``)."""
        limit = self._settings.stale_days if days is None else days
        cutoff = to_datetime(self._clock.now()) - timedelta(days=limit)
        rows = self._session.scalars(
            select(KnowledgeItemRow)
            .where(
                KnowledgeItemRow.status == ItemStatus.ACTIVE.value,
                or_(
                    KnowledgeItemRow.last_verified_at.is_(None),
                    KnowledgeItemRow.last_verified_at < cutoff,
                ),
            )
            .order_by(KnowledgeItemRow.last_verified_at)
        )
        return [r.to_item() for r in rows]

    def expired_but_cited(self) -> list[tuple[KnowledgeItem, int]]:
        """Items whose validity ended yet were cited afterwards, with that citation count."""
        now = to_datetime(self._clock.now())
        ended = or_(
            KnowledgeItemRow.status == ItemStatus.EXPIRED.value, KnowledgeItemRow.expires_at <= now
        )
        rows = self._session.execute(
            select(KnowledgeItemRow, func.count(KnowledgeCitationRow.id))
            .join(KnowledgeCitationRow, KnowledgeCitationRow.item_id == KnowledgeItemRow.id)
            .where(
                ended,
                KnowledgeItemRow.expires_at.is_not(None),
                KnowledgeCitationRow.at >= KnowledgeItemRow.expires_at,
            )
            .group_by(KnowledgeItemRow.id)
            .order_by(func.count(KnowledgeCitationRow.id).desc())
        ).all()
        return [(row.to_item(), int(n)) for row, n in rows]

    def low_confidence(self, threshold: float | None = None) -> list[KnowledgeItem]:
        """Active or pending items below ``threshold`` (default ``low_confidence``)."""
        limit = self._settings.low_confidence if threshold is None else threshold
        rows = self._session.scalars(
            select(KnowledgeItemRow)
            .where(
                KnowledgeItemRow.status.in_(
                    [ItemStatus.ACTIVE.value, ItemStatus.PENDING_REVIEW.value]
                ),
                KnowledgeItemRow.confidence < limit,
            )
            .order_by(KnowledgeItemRow.confidence)
        )
        return [r.to_item() for r in rows]

    def conflicts(self) -> list[VersionConflict]:
        """Pairs of active versions of one key (e.g. two syncs that raced)."""
        keys = self._session.scalars(
            select(KnowledgeItemRow.key)
            .where(KnowledgeItemRow.status == ItemStatus.ACTIVE.value)
            .group_by(KnowledgeItemRow.key)
            .having(func.count() > 1)
        ).all()
        found = []
        for key in sorted(keys):
            active = [v for v in self._repo.versions(key) if v.status is ItemStatus.ACTIVE]
            found += [
                VersionConflict(key, a, b, _overlap(a, b)) for a, b in combinations(active, 2)
            ]
        return found

    def detail(self, item_id: str) -> ItemDetail:
        """One item with all versions of its key, the diffs between them, citations, audit."""
        item = self._repo.get(item_id)
        versions = self._repo.versions(item.key)
        steps = [
            VersionStep(prev.version if prev else None, cur.version, version_diff(prev, cur))
            for prev, cur in zip([None, *versions[:-1]], versions, strict=True)
        ]
        return ItemDetail(
            item=item,
            versions=versions,
            history=steps,
            citations=self._feedback.citations(item_id),
            audit=self._repo.audit_log(key=item.key),
        )
