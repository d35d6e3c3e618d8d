"""InMemoryReviewQueue: idempotent enqueue, filters, counts, compare-and-set transitions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_core.conflicts.items import (
    ItemDraft,
    ItemFilter,
    ItemStatus,
    ReviewAction,
    pair_key,
    require_reviewer,
)
from memory_core.conflicts.queue import InMemoryReviewQueue
from memory_core.errors import InputError, NotFoundError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def draft(
    n: int = 0, *, kind: str = "value_change", session: str = "s1", score: float = 0.8
) -> ItemDraft:
    return ItemDraft(
        old_id=f"old{n}",
        old_text=f"The budget is {n}000 euros.",
        old_session_id=session,
        new_id=f"new{n}",
        new_text=f"The budget is now {n + 1}000 euros.",
        session_id=session,
        similarity=0.8,
        score=score,
        reason="budget changed",
        kind=kind,  # type: ignore[arg-type]
        suggested=ReviewAction.ACCEPT_NEW,
    )


@pytest.fixture
def queue() -> InMemoryReviewQueue:
    return InMemoryReviewQueue()


def test_enqueue_is_idempotent_for_an_open_pair(queue: InMemoryReviewQueue) -> None:
    first = queue.enqueue(draft(), at=T0)
    assert queue.enqueue(draft(), at=T0 + timedelta(seconds=1)).id == first.id
    assert queue.count() == 1
    assert first.key == pair_key(first.new_text, first.old_text)  # order-independent


def test_a_resolved_pair_can_be_queued_again(queue: InMemoryReviewQueue) -> None:
    first = queue.enqueue(draft(), at=T0)
    queue.resolve(first.id, ReviewAction.KEEP_OLD, reviewer="ana", at=T0)
    assert queue.enqueue(draft(), at=T0).id != first.id


def test_the_oldest_open_item_of_a_pair_answers_after_a_reopen(
    queue: InMemoryReviewQueue,
) -> None:
    first = queue.enqueue(draft(), at=T0)
    queue.resolve(first.id, ReviewAction.KEEP_OLD, reviewer="ana", at=T0)
    second = queue.enqueue(draft(), at=T0)
    assert queue.reopen(first.id)
    assert queue.enqueue(draft(), at=T0).id == first.id
    queue.resolve(first.id, ReviewAction.KEEP_OLD, reviewer="ana", at=T0)
    assert queue.enqueue(draft(), at=T0).id == second.id
    assert queue.enqueue(draft(1), at=T0).id not in (first.id, second.id)


def test_items_are_newest_first_and_filtered(queue: InMemoryReviewQueue) -> None:
    a = queue.enqueue(draft(1, kind="negation", session="s1", score=0.6), at=T0)
    b = queue.enqueue(draft(2, kind="value_change", session="s2"), at=T0 + timedelta(1))
    queue.resolve(a.id, ReviewAction.KEEP_BOTH, reviewer="ana", at=T0)
    assert [i.id for i in queue.items()] == [b.id, a.id]
    assert [i.id for i in queue.items(ItemFilter(status=ItemStatus.OPEN))] == [b.id]
    assert [i.id for i in queue.items(ItemFilter(kinds=("negation",)))] == [a.id]
    assert [i.id for i in queue.items(ItemFilter(session_id="s2"))] == [b.id]
    assert [i.id for i in queue.items(ItemFilter(text="NOW 3000"))] == [b.id]
    assert [i.id for i in queue.items(ItemFilter(min_score=0.7))] == [b.id]
    assert queue.items(offset=1, limit=1)[0].id == a.id
    assert queue.count(ItemFilter(status=ItemStatus.RESOLVED)) == 1


def test_counts_split_open_by_kind(queue: InMemoryReviewQueue) -> None:
    a = queue.enqueue(draft(1, kind="negation"), at=T0)
    queue.enqueue(draft(2, kind="negation"), at=T0)
    queue.enqueue(draft(3, kind="antonym"), at=T0)
    queue.resolve(a.id, ReviewAction.KEEP_OLD, reviewer="ana", at=T0)
    counts = queue.counts()
    assert (counts.open, counts.resolved, counts.total) == (2, 1, 3)
    assert counts.open_by_kind == {"antonym": 1, "negation": 1}


def test_resolve_and_reopen_are_compare_and_set(queue: InMemoryReviewQueue) -> None:
    item = queue.enqueue(draft(), at=T0)
    assert queue.resolve(item.id, ReviewAction.ACCEPT_NEW, reviewer="ana", at=T0) is True
    assert queue.resolve(item.id, ReviewAction.KEEP_OLD, reviewer="bo", at=T0) is False
    resolved = queue.get(item.id)
    assert (resolved.resolution, resolved.resolved_by) == (ReviewAction.ACCEPT_NEW, "ana")
    assert queue.reopen(item.id) is True and queue.reopen(item.id) is False
    assert queue.get(item.id).resolution is None


def test_audit_is_newest_first_and_undone_once(queue: InMemoryReviewQueue) -> None:
    item = queue.enqueue(draft(), at=T0)
    first = queue.record(item.id, "keep_old", reviewer="ana", at=T0, before={"x": 1}, after={})
    second = queue.record(item.id, "undo", reviewer="ana", at=T0, before={}, after={}, undo_of=1)
    assert [e.id for e in queue.audit(item.id)] == [second.id, first.id]
    assert queue.audit_entry(first.id).before == {"x": 1}
    assert queue.mark_undone(first.id, second.id) is True
    assert queue.mark_undone(first.id, 99) is False
    assert queue.audit_entry(first.id).undone_by == second.id


def test_allow_list(queue: InMemoryReviewQueue) -> None:
    key = pair_key("a", "b")
    assert not queue.is_allowed(key)
    queue.allow(key, reviewer="ana", at=T0)
    queue.allow(key, reviewer="bo", at=T0)  # idempotent
    assert queue.is_allowed(key)
    queue.disallow(key)
    queue.disallow(key)
    assert not queue.is_allowed(key)


def test_unknown_ids_and_bad_pages_are_clear_errors(queue: InMemoryReviewQueue) -> None:
    with pytest.raises(NotFoundError, match="review item"):
        queue.get("nope")
    with pytest.raises(NotFoundError, match="audit entry"):
        queue.audit_entry(7)
    with pytest.raises(NotFoundError):
        queue.record("nope", "keep_old", reviewer="a", at=T0, before={}, after={})
    with pytest.raises(InputError, match="limit"):
        queue.items(limit=0)
    with pytest.raises(InputError, match="offset"):
        queue.audit(offset=-1)


@pytest.mark.parametrize("reviewer", ["", "   ", None, 3])
def test_reviewer_is_required(reviewer: object) -> None:
    with pytest.raises(InputError, match="reviewer"):
        require_reviewer(reviewer)
