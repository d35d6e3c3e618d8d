"""The review queue on SQLite and PostgreSQL: persistence, races, erase, schema."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from support.schema import schema_drift

from memory_core.conflicts import Span
from memory_core.conflicts.items import ItemDraft, ItemFilter, ItemStatus, ReviewAction
from memory_core.conflicts.models import ConflictItemRow
from memory_core.conflicts.sql_queue import SqlReviewQueue
from memory_core.errors import NotFoundError
from memory_core.store import open_database
from memory_core.store.base import Base
from memory_core.store.engine import Database

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TABLES = {"conflict_items", "conflict_audit", "conflict_allowed_pairs"}


def draft(n: int = 0, *, session: str = "s1", user: str | None = None, text: str = "") -> ItemDraft:
    return ItemDraft(
        old_id=f"old{n}",
        old_text=f"The budget is {n}000 euros.{text}",
        old_session_id=session,
        new_id=f"new{n}",
        new_text=f"The budget is now {n + 1}000 euros.",
        session_id=session,
        user_id=user,
        similarity=0.81,
        score=0.9,
        reason="same attribute 'budget' with different values",
        kind="value_change",
        suggested=ReviewAction.ACCEPT_NEW,
        spans=(Span("a", 14, 18, f"{n}000"), Span("b", 18, 22, f"{n + 1}000")),
    )


def test_items_survive_a_reopen_with_every_field(db_url: str) -> None:
    db = open_database(db_url)
    item = SqlReviewQueue(db).enqueue(draft(1, user="ana"), at=T0)
    db.close()
    db = open_database(db_url)
    try:
        again = SqlReviewQueue(db).get(item.id)
        assert again == item
        assert again.spans[1] == Span("b", 18, 22, "2000")
        assert again.created_at == T0 and again.created_at.tzinfo is not None
    finally:
        db.close()


def test_enqueue_filters_counts_and_like_escaping(database: Database) -> None:
    queue = SqlReviewQueue(database)
    a = queue.enqueue(draft(1, session="s1", text=" 100% sure"), at=T0)
    assert queue.enqueue(draft(1, session="s1", text=" 100% sure"), at=T0).id == a.id
    b = queue.enqueue(draft(2, session="s2"), at=T0 + timedelta(minutes=1))
    assert [i.id for i in queue.items()] == [b.id, a.id]
    assert [i.id for i in queue.items(ItemFilter(text="100%"))] == [a.id]
    assert queue.items(ItemFilter(text="1_0")) == []  # _ is not a wildcard
    assert [i.id for i in queue.items(ItemFilter(session_id="s2"))] == [b.id]
    assert queue.resolve(a.id, ReviewAction.KEEP_BOTH, reviewer="ana", at=T0)
    assert queue.count(ItemFilter(status=ItemStatus.OPEN)) == 1
    counts = queue.counts()
    assert (counts.open, counts.resolved, counts.open_by_kind) == (1, 1, {"value_change": 1})


def test_two_reviewers_racing_on_one_item_one_wins(database: Database) -> None:
    queue = SqlReviewQueue(database)
    item = queue.enqueue(draft(), at=T0)
    results: list[bool] = []
    barrier = threading.Barrier(4)

    def click(name: str) -> None:
        barrier.wait()
        results.append(queue.resolve(item.id, ReviewAction.KEEP_OLD, reviewer=name, at=T0))

    threads = [threading.Thread(target=click, args=(f"r{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True]


def test_audit_round_trip_and_undo_link(database: Database) -> None:
    queue = SqlReviewQueue(database)
    item = queue.enqueue(draft(), at=T0)
    before = {"memories": {"old0": {"present": True, "status": "active"}}, "edges": []}
    entry = queue.record(item.id, "accept_new", reviewer="ana", at=T0, before=before, after={})
    undo = queue.record(
        item.id, "undo", reviewer="bo", at=T0, before={}, after={}, undo_of=entry.id
    )
    assert queue.mark_undone(entry.id, undo.id) and not queue.mark_undone(entry.id, undo.id)
    assert queue.audit_entry(entry.id).before == before
    assert [e.id for e in queue.audit(item.id)] == [undo.id, entry.id]
    with pytest.raises(NotFoundError):
        queue.mark_undone(12345, 1)
    with pytest.raises(NotFoundError):
        queue.resolve("missing", ReviewAction.KEEP_OLD, reviewer="a", at=T0)


def test_allow_list_is_persistent_and_idempotent(db_url: str) -> None:
    db = open_database(db_url)
    SqlReviewQueue(db).allow("k1", reviewer="ana", at=T0)
    SqlReviewQueue(db).allow("k1", reviewer="ana", at=T0)
    db.close()
    db = open_database(db_url)
    try:
        queue = SqlReviewQueue(db)
        assert queue.is_allowed("k1") and not queue.is_allowed("k2")
        queue.disallow("k1")
        assert not queue.is_allowed("k1")
    finally:
        db.close()


def test_erase_removes_items_audit_and_allowed_pairs(database: Database) -> None:
    queue = SqlReviewQueue(database)
    mine = queue.enqueue(draft(1, session="s1", user="ana"), at=T0)
    theirs = queue.enqueue(draft(2, session="s9", user="bo"), at=T0)
    queue.record(mine.id, "keep_both", reviewer="x", at=T0, before={}, after={})
    queue.allow(mine.key, reviewer="x", at=T0, session_id="s1", user_id="ana")
    deleted = database.erase(session_id="s1")
    assert deleted["conflict_items"] == 1 and deleted["conflict_allowed_pairs"] == 1
    assert queue.audit() == [] and not queue.is_allowed(mine.key)
    assert [i.id for i in queue.items()] == [theirs.id]
    assert database.erase(user_id="bo")["conflict_items"] == 1


def test_models_and_migration_agree(database: Database) -> None:
    assert ConflictItemRow.__table__.name in Base.metadata.tables
    assert schema_drift(database.engine, TABLES) == []
