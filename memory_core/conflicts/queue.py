"""The human review queue behind one protocol: in memory (harness, tests) or in SQL.

State changes that a double click could repeat are compare-and-set: ``resolve`` only
moves an *open* item, ``reopen`` only a *resolved* one, ``mark_undone`` only an entry
not undone yet; each returns whether this call made the change, so the caller that
lost the race does nothing.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

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
from memory_core.errors import InputError, NotFoundError

MAX_PAGE = 1000


def check_page(offset: int, limit: int) -> None:
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InputError("offset", f"must be an integer >= 0, got {offset!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InputError("limit", f"must be an integer in [1, {MAX_PAGE}], got {limit!r}")


class ReviewQueue(Protocol):
    """Flagged pairs, the audit trail of what reviewers did, and the allow-list."""

    def enqueue(self, draft: ItemDraft, *, at: datetime) -> ReviewItem:
        """Queue a pair; an open item for the same two memories is returned instead."""
        ...

    def get(self, item_id: str) -> ReviewItem: ...

    def items(
        self, flt: ItemFilter | None = None, *, offset: int = 0, limit: int = 100
    ) -> list[ReviewItem]:
        """Matching items, newest first."""
        ...

    def count(self, flt: ItemFilter | None = None) -> int: ...

    def counts(self) -> QueueCounts: ...

    def resolve(self, item_id: str, action: ReviewAction, *, reviewer: str, at: datetime) -> bool:
        """Open -> resolved; False when the item was not open."""
        ...

    def reopen(self, item_id: str) -> bool:
        """Resolved -> open; False when the item was not resolved."""
        ...

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
    ) -> AuditEntry: ...

    def audit_entry(self, entry_id: int) -> AuditEntry: ...

    def audit(
        self, item_id: str | None = None, *, offset: int = 0, limit: int = 100
    ) -> list[AuditEntry]:
        """Audit entries (of one item), newest first."""
        ...

    def mark_undone(self, entry_id: int, undo_id: int) -> bool:
        """Link an entry to the entry that undid it; False if it was already undone."""
        ...

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
        """Declare a pair not a conflict (idempotent)."""
        ...

    def disallow(self, key: str) -> None: ...

    def is_allowed(self, key: str) -> bool: ...

    def close(self) -> None: ...


@dataclass(slots=True)
class _Allowed:
    reviewer: str
    at: datetime
    item_id: str | None
    session_id: str | None
    user_id: str | None


_Pair = tuple[str, str | None, str]
"""What makes two queued items the same pair: old id, new id, pair key."""


class InMemoryReviewQueue:
    """The queue in process: for the harness (no human, nothing persisted) and tests.

    Open items are indexed by pair, so a guard writing into a queue of thousands (a scan's)
    finds the open item of its pair without hashing every queued text again.
    """

    def __init__(self) -> None:
        self._items: dict[str, ReviewItem] = {}
        self._open: dict[_Pair, list[str]] = {}  # open item ids per pair, oldest first
        self._pairs: dict[str, tuple[_Pair, int]] = {}  # item id -> its pair, queue position
        self._audit: dict[int, AuditEntry] = {}
        self._allowed: dict[str, _Allowed] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def enqueue(self, draft: ItemDraft, *, at: datetime) -> ReviewItem:
        pair = (draft.old_id, draft.new_id, draft.key)
        with self._lock:
            open_ids = self._open.setdefault(pair, [])
            if open_ids:
                return self._items[open_ids[0]]
            item = ReviewItem(
                **_draft_fields(draft), id=str(uuid.uuid4()), status=ItemStatus.OPEN, created_at=at
            )
            self._items[item.id] = item
            self._pairs[item.id] = (pair, len(self._pairs))
            open_ids.append(item.id)
            return item

    def get(self, item_id: str) -> ReviewItem:
        try:
            return self._items[item_id]
        except KeyError:
            raise NotFoundError("review item", item_id) from None

    def items(
        self, flt: ItemFilter | None = None, *, offset: int = 0, limit: int = 100
    ) -> list[ReviewItem]:
        check_page(offset, limit)
        return self._matching(flt)[offset : offset + limit]

    def count(self, flt: ItemFilter | None = None) -> int:
        return len(self._matching(flt))

    def counts(self) -> QueueCounts:
        with self._lock:
            groups = Counter((i.status.value, i.kind) for i in self._items.values())
        return QueueCounts.tally((status, kind, n) for (status, kind), n in groups.items())

    def resolve(self, item_id: str, action: ReviewAction, *, reviewer: str, at: datetime) -> bool:
        with self._lock:
            item = self.get(item_id)
            if item.status is not ItemStatus.OPEN:
                return False
            self._items[item_id] = replace(item, **resolved_fields(action, reviewer, at))
            pair, _ = self._pairs[item_id]
            self._open[pair].remove(item_id)
            if not self._open[pair]:
                del self._open[pair]
            return True

    def reopen(self, item_id: str) -> bool:
        with self._lock:
            item = self.get(item_id)
            if item.status is not ItemStatus.RESOLVED:
                return False
            self._items[item_id] = replace(item, **REOPENED_FIELDS)
            pair, _ = self._pairs[item_id]
            open_ids = self._open.setdefault(pair, [])
            open_ids.append(item_id)
            open_ids.sort(key=lambda i: self._pairs[i][1])  # the oldest open item answers
            return True

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
        self.get(item_id)
        with self._lock:
            entry = AuditEntry(
                id=next(self._ids),
                item_id=item_id,
                action=action,
                reviewer=reviewer,
                at=at,
                before=before,
                after=after,
                undo_of=undo_of,
            )
            self._audit[entry.id] = entry
            return entry

    def audit_entry(self, entry_id: int) -> AuditEntry:
        try:
            return self._audit[entry_id]
        except KeyError:
            raise NotFoundError("audit entry", entry_id) from None

    def audit(
        self, item_id: str | None = None, *, offset: int = 0, limit: int = 100
    ) -> list[AuditEntry]:
        check_page(offset, limit)
        with self._lock:
            entries = [e for e in self._audit.values() if item_id in (None, e.item_id)]
        entries.sort(key=lambda e: e.id, reverse=True)
        return entries[offset : offset + limit]

    def mark_undone(self, entry_id: int, undo_id: int) -> bool:
        with self._lock:
            entry = self.audit_entry(entry_id)
            if entry.undone_by is not None:
                return False
            self._audit[entry_id] = replace(entry, undone_by=undo_id)
            return True

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
        with self._lock:
            self._allowed.setdefault(key, _Allowed(reviewer, at, item_id, session_id, user_id))

    def disallow(self, key: str) -> None:
        with self._lock:
            self._allowed.pop(key, None)

    def is_allowed(self, key: str) -> bool:
        return key in self._allowed

    def close(self) -> None:
        """Nothing to release."""

    def _matching(self, flt: ItemFilter | None) -> list[ReviewItem]:
        with self._lock:
            items = list(self._items.values())
        if flt is not None:
            items = [i for i in items if flt.matches(i)]
        items.sort(key=lambda i: (i.created_at, i.id), reverse=True)
        return items


def _draft_fields(draft: ItemDraft) -> dict[str, Any]:
    return {name: getattr(draft, name) for name in ItemDraft.__dataclass_fields__}
