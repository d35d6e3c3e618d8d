"""Real embedder, real database: write, detect, queue, review, undo, across a reopen."""

from __future__ import annotations

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.conflicts import make_judge
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.items import ItemStatus
from memory_core.conflicts.policy import Resolution
from memory_core.conflicts.review import ConflictReview
from memory_core.conflicts.sql_queue import SqlReviewQueue
from memory_core.embedding.minilm import default_embedder
from memory_core.engine.model import MemoryStatus
from memory_core.store import open_database

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    return default_embedder()


def atlas_with(embedder) -> ElasticMemoryAtlas:  # type: ignore[no-untyped-def]
    return ElasticMemoryAtlas(AtlasConfig(), embedder=embedder, clock=ManualClock(1.7e9))


def test_changing_preferences_supersede_with_minilm(embedder) -> None:  # type: ignore[no-untyped-def]
    atlas = atlas_with(embedder)
    guard = ConflictGuard(atlas, make_judge())
    # one user's two days: with no user_id a write is compared only within its own
    # session (issue #29's user scope)
    ana = {"user_id": "ana"}
    python = guard.add("I love Python.", session_id="day1", metadata=ana).node
    guard.add("My cat is called Mochi.", session_id="day1", metadata=ana)
    ram = guard.add("The server has 32 GB of RAM.", session_id="day1", metadata=ana).node
    go = guard.add("Python is too hard, I switched to Go.", session_id="day2", metadata=ana)
    more = guard.add("The server has 64 GB of RAM.", session_id="day2", metadata=ana)
    assert go.ids(Resolution.SUPERSEDE) == [python.id]
    assert more.ids(Resolution.SUPERSEDE) == [ram.id]
    hits = atlas.retrieve("How much memory does the server have?", top_k=3, reinforce=False)
    assert hits[0].node.id == more.node.id
    assert ram.id not in {h.node.id for h in hits}


def test_review_persists_and_undo_works_after_a_reopen(db_url: str, embedder) -> None:  # type: ignore[no-untyped-def]
    atlas = atlas_with(embedder)
    db = open_database(db_url)
    guard = ConflictGuard(atlas, make_judge(), queue=SqlReviewQueue(db))
    # the pair model leaves this pair open and calls it compatible: the cross-encoder
    # decides (a date change it confirms, "Tuesday" / "Thursday", is settled at the add)
    old = guard.add("I usually vote by mail.", session_id="s1", pinned=True).node
    result = guard.add("I always vote in person.", session_id="s1")
    assert result.second_look == (old.id,)
    assert guard.settle()  # on the guard's worker thread, into the same database
    (item_id,) = [item.id for item in guard.queue.items()]
    entry = ConflictReview(atlas, guard.queue).act(item_id, "accept_new", reviewer="ana")
    assert atlas.get(old.id).status is MemoryStatus.SUPERSEDED
    db.close()

    db = open_database(db_url)
    try:
        queue = SqlReviewQueue(db)
        item = queue.get(item_id)
        assert (item.status, item.resolved_by) == (ItemStatus.RESOLVED, "ana")
        assert (item.old_text, item.new_text) == (old.content, result.node.content)
        undo = ConflictReview(atlas, queue).undo(entry.id, reviewer="bo")
        assert atlas.get(old.id).status is MemoryStatus.ACTIVE
        assert queue.get(item.id).status is ItemStatus.OPEN
        assert [e.action for e in queue.audit(item.id)] == ["undo", "accept_new"]
        assert undo.before["memories"][old.id]["status"] == "superseded"
    finally:
        db.close()
