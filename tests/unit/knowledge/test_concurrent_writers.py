"""Two writers on one real SQLite file: neither fails with "database is locked", nothing is lost.

A transaction that reads before it writes (every knowledge unit does) cannot wait for the
write lock once its read snapshot exists: SQLite answers SQLITE_BUSY at once, without the
busy timeout. These tests put a second writer exactly in that window.
"""

from __future__ import annotations

import threading

from memory_core.knowledge import ItemStatus, KnowledgeBase, load_sample_knowledge

from .conftest import record

LOCK_HELD = 0.3  # seconds the other writer keeps its transaction open


def test_sample_loads_while_another_writer_holds_the_lock(kb: KnowledgeBase) -> None:
    """The audit page opens the knowledge base while another session is mid-write."""
    holding = threading.Event()
    errors: list[BaseException] = []

    def other_writer() -> None:
        try:
            with kb.unit("other writer") as unit:
                unit.items.submit(record(key="policy.parking", version="1"), actor="sync")
                holding.set()
                threading.Event().wait(LOCK_HELD)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)
            holding.set()

    writer = threading.Thread(target=other_writer)
    writer.start()
    assert holding.wait(10)
    report = load_sample_knowledge(kb)
    writer.join(30)

    assert not writer.is_alive() and errors == []
    assert report.added_items == 8
    with kb.unit() as unit:
        assert [v.version for v in unit.items.versions("policy.parking")] == ["1"]
        assert sum(unit.audit.status_counts().values()) == 9


def test_review_and_submit_from_two_sessions_both_land(kb: KnowledgeBase) -> None:
    """A reviewer approves while another session submits during the reviewer's transaction."""
    load_sample_knowledge(kb)
    errors: list[BaseException] = []

    def other_session() -> None:
        try:
            with kb.unit("other session") as unit:
                unit.items.submit(record(key="policy.parking", version="1"), actor="sync")
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    submitter = threading.Thread(target=other_session)
    with kb.unit("review") as unit:
        pending = unit.items.items(status=ItemStatus.PENDING_REVIEW)[0]
        submitter.start()
        # Give the other session the chance to write inside this read-then-write transaction;
        # once this transaction owns the write lock the other one waits instead.
        submitter.join(LOCK_HELD)
        unit.items.approve(pending.id, reviewer="alice")
    submitter.join(30)

    assert not submitter.is_alive() and errors == []
    with kb.unit() as unit:
        assert unit.items.get(pending.id).status is ItemStatus.ACTIVE
        assert [v.version for v in unit.items.versions("policy.parking")] == ["1"]
