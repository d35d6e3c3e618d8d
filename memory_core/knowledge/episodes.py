"""The mid-term tier: structured task episodes with a use-driven retention score.

An episode starts ``pending`` and ends ``completed`` or ``failed``; a pending episode
older than ``episode_pending_timeout_s`` is ``aborted`` by ``sweep``. Each use adds
``retention_use_bonus``; every whole month takes ``retention_monthly_decay`` away.
Below ``retention_archive_threshold`` a finished episode is archived: its lesson goes
to the knowledge review queue as a ``learned_from_episode`` item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.engine.clock import Clock, to_datetime
from memory_core.errors import InputError, NotFoundError
from memory_core.knowledge.feedback import SYSTEM_ACTOR
from memory_core.knowledge.items import ItemDraft, SourceKind
from memory_core.knowledge.models import EpisodeRow
from memory_core.knowledge.repository import KnowledgeRepository
from memory_core.knowledge.settings import SECONDS_PER_DAY, KnowledgeSettings
from memory_core.store.base import aware

EPISODE_SOURCE = "episodes"
LEARNED_CONFIDENCE = 0.5


class EpisodeStatus(StrEnum):
    PENDING = "pending"
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"


@dataclass(frozen=True, slots=True, kw_only=True)
class Episode:
    """Snapshot of one episode."""

    id: str
    goal: str
    status: EpisodeStatus
    summary: dict[str, Any]
    key_decisions: list[dict[str, Any]]
    failure_points: list[dict[str, Any]]
    entities: list[str]
    started_at: datetime
    ended_at: datetime | None
    retention_score: float
    use_count: int
    needs_review: bool
    archived_at: datetime | None
    archived_item_id: str | None
    session_id: str | None
    user_id: str | None


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What one clock-driven sweep did."""

    aborted: list[str]
    decayed: int
    archived: list[str]


def _episode(row: EpisodeRow) -> Episode:
    return Episode(
        id=row.id,
        goal=row.goal,
        status=EpisodeStatus(row.status),
        summary=dict(row.summary),
        key_decisions=list(row.key_decisions),
        failure_points=list(row.failure_points),
        entities=list(row.entities),
        started_at=aware(row.started_at),
        ended_at=None if row.ended_at is None else aware(row.ended_at),
        retention_score=row.retention_score,
        use_count=row.use_count,
        needs_review=row.needs_review,
        archived_at=None if row.archived_at is None else aware(row.archived_at),
        archived_item_id=row.archived_item_id,
        session_id=row.session_id,
        user_id=row.user_id,
    )


def _records(value: Sequence[Mapping[str, Any]], field: str) -> list[dict[str, Any]]:
    out = []
    for i, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise InputError(f"{field}[{i}]", f"must be a mapping, got {type(entry).__name__}")
        out.append(dict(entry))
    return out


def lesson_text(episode: Episode) -> str:
    """The text an archived episode contributes to the knowledge review queue."""
    parts = [f"Goal: {episode.goal}", f"Outcome: {episode.status.value}"]
    if episode.summary:
        parts.append("Summary: " + json.dumps(episode.summary, ensure_ascii=False, sort_keys=True))
    parts += [
        f"Decision: {json.dumps(d, ensure_ascii=False, sort_keys=True)}"
        for d in episode.key_decisions
    ]
    parts += [
        f"Failure: {json.dumps(f, ensure_ascii=False, sort_keys=True)}"
        for f in episode.failure_points
    ]
    if episode.entities:
        parts.append("Entities: " + ", ".join(episode.entities))
    return "\n".join(parts)


class EpisodeStore:
    """Episodes of one unit of work."""

    __slots__ = ("_clock", "_knowledge", "_session", "_settings")

    def __init__(
        self,
        session: Session,
        *,
        clock: Clock,
        settings: KnowledgeSettings,
        knowledge: KnowledgeRepository,
    ) -> None:
        self._session = session
        self._clock = clock
        self._settings = settings
        self._knowledge = knowledge

    def _now(self) -> datetime:
        return to_datetime(self._clock.now())

    def _row(self, episode_id: str) -> EpisodeRow:
        row = self._session.get(EpisodeRow, episode_id)
        if row is None:
            raise NotFoundError("episode", episode_id)
        return row

    def get(self, episode_id: str) -> Episode:
        return _episode(self._row(episode_id))

    def start(
        self,
        goal: str,
        *,
        entities: Sequence[str] = (),
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> Episode:
        """Open a pending episode for a task the agent has begun."""
        if not goal.strip():
            raise InputError("goal", "must not be empty")
        now = self._now()
        row = EpisodeRow(
            goal=goal.strip(),
            status=EpisodeStatus.PENDING.value,
            summary={},
            key_decisions=[],
            failure_points=[],
            entities=[str(e) for e in entities],
            started_at=now,
            retention_score=self._settings.retention_initial,
            use_count=0,
            decayed_until=now,
            needs_review=False,
            session_id=session_id,
            user_id=user_id,
        )
        self._session.add(row)
        self._session.flush()
        return _episode(row)

    def _finish(self, episode_id: str, status: EpisodeStatus) -> EpisodeRow:
        row = self._row(episode_id)
        if row.status != EpisodeStatus.PENDING.value:
            raise InputError(
                "status",
                f"only pending episodes can become {status.value}; {episode_id} is {row.status}",
            )
        row.status = status.value
        row.ended_at = self._now()
        return row

    def complete(
        self,
        episode_id: str,
        *,
        summary: Mapping[str, Any],
        key_decisions: Sequence[Mapping[str, Any]] = (),
        entities: Sequence[str] = (),
    ) -> Episode:
        """The task succeeded; keep the structured summary and the decisions that mattered."""
        decisions = _records(key_decisions, "key_decisions")
        row = self._finish(episode_id, EpisodeStatus.COMPLETED)
        row.summary, row.key_decisions = dict(summary), decisions
        row.entities = sorted({*row.entities, *map(str, entities)})
        self._session.flush()
        return _episode(row)

    def fail(
        self,
        episode_id: str,
        *,
        failure_points: Sequence[Mapping[str, Any]],
        summary: Mapping[str, Any] | None = None,
    ) -> Episode:
        """The task failed; the failure points are what later episodes learn from."""
        points = _records(failure_points, "failure_points")
        if not points:
            raise InputError("failure_points", "a failed episode needs at least one failure point")
        row = self._finish(episode_id, EpisodeStatus.FAILED)
        row.failure_points = points
        row.summary = dict(summary or {})
        self._session.flush()
        return _episode(row)

    def use(self, episode_id: str) -> Episode:
        """The episode was retrieved and helped: it earns retention."""
        row = self._row(episode_id)
        if row.archived_at is not None:
            raise InputError("episode_id", f"{episode_id} is archived")
        row.use_count += 1
        row.retention_score += self._settings.retention_use_bonus
        self._session.flush()
        return _episode(row)

    def find(
        self,
        *,
        status: EpisodeStatus | None = None,
        entity: str | None = None,
        needs_review: bool | None = None,
        include_archived: bool = False,
    ) -> list[Episode]:
        """Structured filtering (the seed: fields, not vectors, find the right episodes)."""
        query = select(EpisodeRow).order_by(EpisodeRow.started_at)
        if status is not None:
            query = query.where(EpisodeRow.status == EpisodeStatus(status).value)
        if needs_review is not None:
            query = query.where(EpisodeRow.needs_review.is_(needs_review))
        if not include_archived:
            query = query.where(EpisodeRow.archived_at.is_(None))
        rows = self._session.scalars(query).all()
        return [_episode(r) for r in rows if entity is None or entity in r.entities]

    def mark_reviewed(self, episode_id: str) -> Episode:
        """Clear ``needs_review`` once someone checked the episode against changed knowledge."""
        row = self._row(episode_id)
        row.needs_review = False
        self._session.flush()
        return _episode(row)

    def sweep(self) -> SweepReport:
        """Abort stale pending episodes, apply monthly decay, archive the forgotten."""
        now, s = self._now(), self._settings
        cutoff = now - timedelta(seconds=s.episode_pending_timeout_s)
        month = timedelta(days=s.month_days)
        aborted, archived, decayed = [], [], 0
        rows = self._session.scalars(select(EpisodeRow).where(EpisodeRow.archived_at.is_(None)))
        for row in rows:
            if row.status == EpisodeStatus.PENDING.value:
                if aware(row.started_at) <= cutoff:
                    row.status, row.ended_at = EpisodeStatus.ABORTED.value, now
                    row.failure_points = [
                        {"reason": f"pending longer than {s.episode_pending_timeout_s:g} s"}
                    ]
                    aborted.append(row.id)
                continue
            elapsed = (now - aware(row.decayed_until)).total_seconds()
            months = int(elapsed // (s.month_days * SECONDS_PER_DAY))
            if months > 0:
                loss = months * s.retention_monthly_decay
                row.retention_score = max(0.0, row.retention_score - loss)
                row.decayed_until = aware(row.decayed_until) + months * month
                decayed += 1
            if row.retention_score < s.retention_archive_threshold:
                self._archive(row, now)
                archived.append(row.id)
        self._session.flush()
        return SweepReport(aborted=aborted, decayed=decayed, archived=archived)

    def _archive(self, row: EpisodeRow, now: datetime) -> None:
        episode = _episode(row)
        draft = ItemDraft(
            key=f"episode.{row.id}",
            content=lesson_text(episode),
            source_kind=SourceKind.LEARNED_FROM_EPISODE,
            source_name=EPISODE_SOURCE,
            version="1",
            effective_from=now,
            confidence=LEARNED_CONFIDENCE,
            data={"episode_id": row.id, "status": row.status, "use_count": row.use_count},
            session_id=row.session_id,
            user_id=row.user_id,
        )
        submission = self._knowledge.submit(draft, actor=SYSTEM_ACTOR)
        row.archived_at = now
        row.archived_item_id = submission.item.id if submission.item is not None else None
