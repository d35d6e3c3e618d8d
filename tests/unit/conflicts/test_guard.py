"""ConflictGuard.add: detection before storing, the policy applied, forget requests."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.items import ItemStatus, ReviewAction, pair_key
from memory_core.conflicts.policy import Resolution
from memory_core.conflicts.verdict import BaseJudge, Verdict
from memory_core.engine.model import MemoryStatus, Relation
from memory_core.errors import InputError

OLD = "The budget is 5000 euros."
NEW = "The budget is now 6000 euros."


def relations(atlas: ElasticMemoryAtlas, source: str, target: str) -> set[Relation]:
    return {
        e.relation for e in atlas.edges(source) if (e.source_id, e.target_id) == (source, target)
    }


def test_a_newer_confident_statement_supersedes_the_old(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, tick: Any
) -> None:
    old = guard.add(OLD, session_id="s1").node
    assert old is not None
    tick(atlas)
    result = guard.add(NEW, session_id="s1", confidence=0.8)
    new = result.node
    assert new is not None and new.id != old.id
    assert result.ids(Resolution.SUPERSEDE) == [old.id]
    assert atlas.get(old.id).status is MemoryStatus.SUPERSEDED
    assert atlas.get(old.id).weight < old.weight  # the deprecation cut
    assert new.confidence == pytest.approx(0.9)  # raised to the winner's confidence
    assert {Relation.SUPERSEDES, Relation.CONTRADICTS} <= relations(atlas, new.id, old.id)
    hits = atlas.retrieve("What is the budget?", top_k=5, reinforce=False)
    assert [h.node.id for h in hits] == [new.id]


def test_a_contradicting_near_duplicate_is_not_folded_into_the_old(
    make_atlas: Any, make_guard: Any
) -> None:
    atlas = make_atlas(merge_threshold=0.5)
    plain = atlas.add("The server has 32 GB of RAM.", session_id="s1")
    assert atlas.add("The server has 64 GB of RAM.", session_id="s1").id == plain.id  # merged
    guarded = make_guard(make_atlas(merge_threshold=0.5))
    first = guarded.add("The server has 32 GB of RAM.", session_id="s1").node
    second = guarded.add("The server has 64 GB of RAM.", session_id="s1").node
    assert first.id != second.id
    assert guarded.atlas.get(first.id).status is MemoryStatus.SUPERSEDED


def test_a_more_credible_old_memory_wins(atlas: ElasticMemoryAtlas, guard: ConflictGuard) -> None:
    old = guard.add(OLD, session_id="s1", confidence=1.0).node
    result = guard.add(NEW, session_id="s1", confidence=0.5)
    assert result.ids(Resolution.KEEP_OLD) == [old.id]
    assert result.node.confidence == pytest.approx(0.3)
    assert atlas.get(old.id).status is MemoryStatus.ACTIVE
    assert Relation.CONTRADICTS in relations(atlas, result.node.id, old.id)
    assert Relation.SUPERSEDES not in relations(atlas, result.node.id, old.id)


def test_an_uncertain_case_is_queued_with_both_sides(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    old = guard.add(OLD, session_id="s1", pinned=True, metadata={"user_id": "ana"}).node
    result = guard.add(NEW, session_id="s2", metadata={"user_id": "ana"})
    (decision,) = result.decisions
    assert decision.resolution is Resolution.REVIEW and decision.item_id is not None
    item = guard.queue.get(decision.item_id)
    assert (item.old_id, item.new_id) == (old.id, result.node.id)
    assert (item.old_text, item.new_text) == (OLD, NEW)
    assert (item.old_session_id, item.session_id, item.user_id) == ("s1", "s2", "ana")
    assert item.status is ItemStatus.OPEN and item.suggested is ReviewAction.ACCEPT_NEW
    assert item.kind == "value_change" and item.spans and item.reason
    assert atlas.get(old.id).status is MemoryStatus.ACTIVE  # nothing decided yet
    assert result.node.confidence == 1.0


def test_an_uncertain_near_duplicate_is_queued_with_no_new_memory(
    make_atlas: Any, make_guard: Any
) -> None:
    guard = make_guard(make_atlas(merge_threshold=0.5))
    old = guard.add("The server has 32 GB of RAM.", session_id="s1", pinned=True).node
    result = guard.add("The server has 64 GB of RAM.", session_id="s1")
    assert result.node.id == old.id  # the atlas folded it in as a duplicate
    item = guard.queue.get(result.decisions[0].item_id)
    assert item.new_id is None and item.new_text == "The server has 64 GB of RAM."


def test_no_conflict_is_a_plain_add(atlas: ElasticMemoryAtlas, guard: ConflictGuard) -> None:
    guard.add(OLD, session_id="s1")
    result = guard.add("My cat is called Mochi.", session_id="s1")
    assert result.decisions == () and result.node is not None
    assert guard.queue.counts().total == 0


def test_an_allowed_pair_is_never_flagged_again(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    guard.add(OLD, session_id="s1", pinned=True)
    guard.queue.allow(pair_key(OLD, NEW), reviewer="ana", at=_now(atlas))
    assert guard.add(NEW, session_id="s1").decisions == ()


def test_forget_that_tombstones_the_last_write(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    keep = guard.add("My cat is called Mochi.", session_id="s1").node
    last = guard.add("My address is 12 Rose Lane.", session_id="s1").node
    result = guard.add("Forget that.", session_id="s1")
    assert result.node is None  # the request itself is not a memory
    assert result.ids(Resolution.FORGET) == [last.id]
    assert atlas.get(last.id).status is MemoryStatus.TOMBSTONED
    assert atlas.get(keep.id).status is MemoryStatus.ACTIVE
    assert len(atlas) == 2


def test_forget_that_falls_back_to_the_newest_memory_of_the_session(
    atlas: ElasticMemoryAtlas, make_guard: Any
) -> None:
    atlas.add("My address is 12 Rose Lane.", session_id="s1")
    newest = atlas.add("My phone is 555 0101.", session_id="s1")
    result = make_guard(atlas).add("please forget that", session_id="s1")
    assert result.ids(Resolution.FORGET) == [newest.id]


def test_forget_about_a_topic_tombstones_the_best_match(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    ana = {"user_id": "ana"}  # another session of the same user
    address = guard.add("My home address is 12 Rose Lane.", session_id="s1", metadata=ana).node
    cat = guard.add("My cat is called Mochi.", session_id="s1", metadata=ana).node
    result = guard.add("Forget what I said about my home address.", session_id="s2", metadata=ana)
    assert result.ids(Resolution.FORGET) == [address.id]
    assert atlas.get(cat.id).status is MemoryStatus.ACTIVE
    hits = atlas.retrieve("home address", top_k=5, reinforce=False)
    assert address.id not in {h.node.id for h in hits}


def test_forget_with_nothing_matching_changes_nothing(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    guard.add("My cat is called Mochi.", session_id="s1")
    assert guard.add("Forget about the quarterly tax filing.", session_id="s1").decisions == ()
    assert guard.add("Forget that.", session_id="empty").decisions == ()
    assert all(n.status is MemoryStatus.ACTIVE for n in atlas.nodes())


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content": "  "}, "content"),
        ({"content": NEW, "confidence": 1.5}, "confidence"),
        ({"content": NEW, "session_id": ""}, "session_id"),
        ({"content": NEW, "embedding": np.ones(3)}, "embedding"),
    ],
)
def test_bad_input_is_refused_and_nothing_changes(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, kwargs: dict[str, Any], field: str
) -> None:
    old = guard.add(OLD, session_id="s1").node
    with pytest.raises(InputError, match=field):
        guard.add(**kwargs)
    assert len(atlas) == 1 and atlas.get(old.id).status is MemoryStatus.ACTIVE


def test_scan_queues_contradictions_written_around_the_guard(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, tick: Any
) -> None:
    ana = {"user_id": "ana"}  # two sessions of one user
    old = atlas.add(OLD, session_id="s1", metadata=ana)
    tick(atlas)
    new = atlas.add(NEW, session_id="s2", metadata=ana)
    atlas.add("My cat is called Mochi.", session_id="s1", metadata=ana)
    items = guard.scan()
    assert [(i.old_id, i.new_id) for i in items] == [(old.id, new.id)]
    assert guard.scan() == items  # the open item is reused, not duplicated
    assert guard.queue.counts().open == 1
    assert atlas.get(old.id).status is MemoryStatus.ACTIVE


def _now(atlas: ElasticMemoryAtlas) -> Any:
    from memory_core.engine.clock import to_datetime

    return to_datetime(atlas.clock.now())


class WarmingJudge(BaseJudge):
    """A judge that records what ``warm`` was given, or fails to warm up."""

    def __init__(self, *, fails: bool = False) -> None:
        self.fails = fails
        self.warmed: list[str] = []

    @property
    def name(self) -> str:
        return "warming"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        return Verdict("compatible", 0.1, "same topic")

    def warm(self, texts: Sequence[str] = ()) -> None:
        if self.fails:
            raise RuntimeError("no model here")
        self.warmed += list(texts)


def test_a_guard_warms_up_in_the_background_on_what_is_stored(atlas: ElasticMemoryAtlas) -> None:
    atlas.add(OLD, session_id="s")
    judge = WarmingJudge()
    guard = ConflictGuard(atlas, judge)
    assert not guard.warmed.is_set()
    thread = guard.warm_in_background()
    thread.join(timeout=30)
    assert guard.warmed.is_set() and judge.warmed == [OLD]


def test_a_failed_warm_up_is_logged_and_the_guard_still_writes(
    atlas: ElasticMemoryAtlas, caplog: pytest.LogCaptureFixture
) -> None:
    guard = ConflictGuard(atlas, WarmingJudge(fails=True))
    with caplog.at_level(logging.ERROR, logger="memory_core.conflicts.guard"):
        guard.warm_in_background().join(timeout=30)
    assert guard.warmed.is_set() and "warm-up failed" in caplog.text
    assert guard.add(OLD, session_id="s").node is not None
