"""ConflictReview: each action applied to the atlas, audited, idempotent and undoable."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.items import UNDO, ItemStatus, ReviewAction, ReviewItem
from memory_core.conflicts.review import ConflictReview
from memory_core.engine.model import MemoryStatus, Relation
from memory_core.errors import InputError

OLD = "The budget is 5000 euros."
NEW = "The budget is now 6000 euros."


def queued(guard: ConflictGuard) -> ReviewItem:
    """A pinned old memory and a contradiction of it: always a review item."""
    guard.add(OLD, session_id="s1", pinned=True)
    (decision,) = guard.add(NEW, session_id="s1", confidence=0.8).decisions
    assert decision.item_id is not None
    return guard.queue.get(decision.item_id)


def edge_strengths(atlas: ElasticMemoryAtlas, source: str, target: str) -> dict[Relation, float]:
    return {
        e.relation: e.strength
        for e in atlas.edges(source)
        if (e.source_id, e.target_id) == (source, target)
        and e.relation in (Relation.SUPERSEDES, Relation.CONTRADICTS)
    }


@pytest.fixture
def review(guard: ConflictGuard) -> ConflictReview:
    return ConflictReview(guard.atlas, guard.queue, guard.policy)


def test_accept_new_supersedes_the_old_and_undo_restores_it(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, review: ConflictReview
) -> None:
    item = queued(guard)
    entry = review.act(item.id, "accept_new", reviewer="ana")
    assert atlas.get(item.old_id).status is MemoryStatus.SUPERSEDED
    assert atlas.get(item.new_id).confidence == pytest.approx(0.9)
    assert edge_strengths(atlas, item.new_id, item.old_id) == {
        Relation.SUPERSEDES: 1.0,
        Relation.CONTRADICTS: pytest.approx(item.score),
    }
    assert entry.reviewer == "ana" and entry.action == "accept_new"
    assert entry.before["memories"][item.old_id]["status"] == "active"
    assert entry.after["memories"][item.old_id]["status"] == "superseded"
    assert guard.queue.get(item.id).status is ItemStatus.RESOLVED

    undo = review.undo(entry.id, reviewer="bo")
    assert undo.action == UNDO and undo.undo_of == entry.id
    assert atlas.get(item.old_id).status is MemoryStatus.ACTIVE
    assert atlas.get(item.new_id).confidence == pytest.approx(0.8)
    assert set(edge_strengths(atlas, item.new_id, item.old_id).values()) == {0.0}
    assert undo.after["reverted"]["neutralised_edges"]  # no unlink in the atlas: said so
    assert guard.queue.get(item.id).status is ItemStatus.OPEN
    assert guard.queue.audit_entry(entry.id).undone_by == undo.id


def test_keep_old_deprecates_the_new(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, review: ConflictReview
) -> None:
    item = queued(guard)
    review.act(item.id, ReviewAction.KEEP_OLD, reviewer="ana")
    new = atlas.get(item.new_id)
    assert new.status is MemoryStatus.DEPRECATED and new.confidence == pytest.approx(0.3)
    assert atlas.get(item.old_id).status is MemoryStatus.ACTIVE
    hits = atlas.retrieve("budget", top_k=5, reinforce=False)
    assert [h.node.id for h in hits] == [item.old_id]


def test_keep_both_allows_the_pair_for_good_and_undo_forgets_that(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, review: ConflictReview
) -> None:
    item = queued(guard)
    entry = review.act(item.id, "keep_both", reviewer="ana")
    assert guard.queue.is_allowed(item.key)
    assert all(n.status is MemoryStatus.ACTIVE for n in atlas.nodes())
    assert guard.add(NEW, session_id="s2").decisions == ()  # never flagged again
    review.undo(entry.id, reviewer="ana")
    assert not guard.queue.is_allowed(item.key)


def test_edit_merge_replaces_both_and_undo_deletes_the_merge(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, review: ConflictReview
) -> None:
    item = queued(guard)
    entry = review.act(
        item.id, "edit_merge", reviewer="ana", merged_text="The budget is 6000 euros since May."
    )
    (merged,) = entry.after["changes"]["created"]
    assert atlas.get(merged).content == "The budget is 6000 euros since May."
    assert atlas.get(item.old_id).status is MemoryStatus.SUPERSEDED
    assert atlas.get(item.new_id).status is MemoryStatus.SUPERSEDED
    assert Relation.SUPERSEDES in edge_strengths(atlas, merged, item.old_id)
    review.undo(entry.id, reviewer="ana")
    assert merged not in atlas
    assert atlas.get(item.old_id).status is MemoryStatus.ACTIVE
    assert atlas.get(item.new_id).status is MemoryStatus.ACTIVE


def test_accept_new_of_a_folded_statement_stores_it(make_atlas: Any, make_guard: Any) -> None:
    guard = make_guard(make_atlas(merge_threshold=0.5))
    guard.add("The server has 32 GB of RAM.", session_id="s1", pinned=True)
    (decision,) = guard.add("The server has 64 GB of RAM.", session_id="s1").decisions
    review = ConflictReview(guard.atlas, guard.queue)
    entry = review.act(decision.item_id, "accept_new", reviewer="ana")
    (created,) = entry.after["changes"]["created"]
    assert guard.atlas.get(created).content == "The server has 64 GB of RAM."
    assert guard.atlas.get(decision.existing_id).status is MemoryStatus.SUPERSEDED


def test_a_double_click_is_one_action(guard: ConflictGuard, review: ConflictReview) -> None:
    item = queued(guard)
    first = review.act(item.id, "accept_new", reviewer="ana")
    again = review.act(item.id, "accept_new", reviewer="ana")
    assert again.id == first.id
    assert len(guard.queue.audit(item.id)) == 1
    undo = review.undo(first.id, reviewer="ana")
    assert review.undo(first.id, reviewer="ana").id == undo.id
    assert len(guard.queue.audit(item.id)) == 2


def test_a_different_action_on_a_resolved_item_needs_an_undo_first(
    guard: ConflictGuard, review: ConflictReview
) -> None:
    item = queued(guard)
    entry = review.act(item.id, "accept_new", reviewer="ana")
    with pytest.raises(InputError, match="already resolved as accept_new"):
        review.act(item.id, "keep_old", reviewer="bo")
    review.undo(entry.id, reviewer="bo")
    review.act(item.id, "keep_old", reviewer="bo")
    assert guard.queue.get(item.id).resolution is ReviewAction.KEEP_OLD


def test_an_undo_cannot_be_undone(guard: ConflictGuard, review: ConflictReview) -> None:
    item = queued(guard)
    undo = review.undo(review.act(item.id, "keep_old", reviewer="a").id, reviewer="a")
    with pytest.raises(InputError, match="undo"):
        review.undo(undo.id, reviewer="a")


def test_actions_apply_only_to_memories_still_there(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, review: ConflictReview
) -> None:
    item = queued(guard)
    atlas.delete(item.old_id)
    entry = review.act(item.id, "accept_new", reviewer="ana")
    assert entry.before["memories"][item.old_id] == {"present": False}
    assert atlas.get(item.new_id).confidence == pytest.approx(0.9)
    atlas.delete(item.new_id)
    undo = review.undo(entry.id, reviewer="ana")
    assert undo.after["reverted"]["skipped"] == [item.new_id]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"action": "accept_new", "reviewer": ""}, "reviewer"),
        ({"action": "approve", "reviewer": "ana"}, "action"),
        ({"action": "edit_merge", "reviewer": "ana"}, "merged_text"),
        ({"action": "edit_merge", "reviewer": "ana", "merged_text": " "}, "merged_text"),
    ],
)
def test_bad_requests_change_nothing(
    guard: ConflictGuard, review: ConflictReview, kwargs: dict[str, Any], field: str
) -> None:
    item = queued(guard)
    with pytest.raises(InputError, match=field):
        review.act(item.id, **kwargs)
    assert guard.queue.get(item.id).status is ItemStatus.OPEN
    assert guard.queue.audit(item.id) == []


def test_bulk_actions(guard: ConflictGuard, review: ConflictReview) -> None:
    item = queued(guard)
    guard.add("I love crowded beaches.", session_id="s1", pinned=True)
    (decision,) = guard.add("I hate crowded beaches.", session_id="s1").decisions
    entries = review.act_many([item.id, decision.item_id, item.id], "keep_old", reviewer="ana")
    assert len(entries) == 2 and guard.queue.counts().open == 0
    with pytest.raises(InputError, match="edit_merge"):
        review.act_many([item.id], "edit_merge", reviewer="ana")
