"""Domain types of the review queue: items, review actions, audit entries, pair keys.

Snapshots are frozen; the queue (in memory or SQL) holds the live state. A pair of
memories is identified by the fingerprints of its two texts, so a pair a reviewer
declared compatible stays allowed even when one side is written again as a new memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memory_core.conflicts.verdict import Kind, Span
from memory_core.errors import InputError


class ItemStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


class ReviewAction(StrEnum):
    """What a reviewer decides for a flagged pair."""

    ACCEPT_NEW = "accept_new"
    """The new memory is right: the old one is superseded."""
    KEEP_OLD = "keep_old"
    """The old memory is right: the new one is deprecated and its confidence cut."""
    KEEP_BOTH = "keep_both"
    """Not a conflict: nothing changes and the pair is never flagged again."""
    EDIT_MERGE = "edit_merge"
    """A reviewer-written text replaces both (both superseded by the merged memory)."""


UNDO = "undo"
"""The audit action of an entry that reverted an earlier one."""


def require_reviewer(reviewer: object) -> str:
    """Review actions must name who did them: an anonymous decision is worthless in an audit."""
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise InputError("reviewer", "is required for every review action (got an empty value)")
    return reviewer.strip()


def fingerprint(text: str) -> str:
    """Case- and whitespace-insensitive digest of a memory text."""
    normal = " ".join(text.casefold().split())
    return hashlib.sha256(normal.encode()).hexdigest()[:32]


def pair_key(a_text: str, b_text: str) -> str:
    """Order-independent key of a pair of texts (65 characters)."""
    first, second = sorted((fingerprint(a_text), fingerprint(b_text)))
    return f"{first}:{second}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemDraft:
    """A flagged pair going into the queue; ``new_id`` is None when the atlas folded the
    new statement into the old memory as a near-duplicate."""

    old_id: str
    old_text: str
    old_session_id: str
    new_id: str | None
    new_text: str
    session_id: str
    similarity: float
    score: float
    reason: str
    kind: Kind
    suggested: ReviewAction
    spans: tuple[Span, ...] = ()
    user_id: str | None = None

    @property
    def key(self) -> str:
        return pair_key(self.old_text, self.new_text)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewItem(ItemDraft):
    """A queued pair as stored, with its review state."""

    id: str
    status: ItemStatus
    created_at: datetime
    resolution: ReviewAction | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    """One applied review action or undo, with the state of both memories before and after."""

    id: int
    item_id: str
    action: str
    reviewer: str
    at: datetime
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    undo_of: int | None = None
    undone_by: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemFilter:
    """Which queue items to list; every field narrows (None = any)."""

    status: ItemStatus | None = None
    kinds: tuple[str, ...] = ()
    session_id: str | None = None
    text: str = ""
    min_score: float = 0.0

    def matches(self, item: ReviewItem) -> bool:
        needle = self.text.lower()
        return (
            (self.status is None or item.status is self.status)
            and (not self.kinds or item.kind in self.kinds)
            and (
                self.session_id is None or self.session_id in (item.session_id, item.old_session_id)
            )
            and item.score >= self.min_score
            and (not needle or needle in item.old_text.lower() or needle in item.new_text.lower())
        )


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """Open and resolved items, and open items per verdict kind."""

    open: int
    resolved: int
    open_by_kind: dict[str, int]

    @property
    def total(self) -> int:
        return self.open + self.resolved

    @classmethod
    def tally(cls, groups: Iterable[tuple[str, str, int]]) -> QueueCounts:
        """Counts from ``(status, kind, number of items)`` groups, as either queue has them."""
        by_kind: dict[str, int] = {}
        resolved = 0
        for status, kind, n in groups:
            if status == ItemStatus.OPEN:
                by_kind[kind] = by_kind.get(kind, 0) + int(n)
            elif status == ItemStatus.RESOLVED:
                resolved += int(n)
        return cls(sum(by_kind.values()), resolved, dict(sorted(by_kind.items())))


def resolved_fields(action: ReviewAction, reviewer: str, at: datetime) -> dict[str, Any]:
    """What ``resolve`` sets on an open item (the same in memory and in SQL)."""
    return {
        "status": ItemStatus.RESOLVED,
        "resolution": action,
        "resolved_by": reviewer,
        "resolved_at": at,
    }


REOPENED_FIELDS: dict[str, Any] = {
    "status": ItemStatus.OPEN,
    "resolution": None,
    "resolved_by": None,
    "resolved_at": None,
}
"""What ``reopen`` sets on a resolved item (the same in memory and in SQL)."""
