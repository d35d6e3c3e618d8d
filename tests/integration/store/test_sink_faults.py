"""Database faults under a live sink: locked, full, unreachable. The engine never notices;
events are buffered and retried; nothing is lost once the database is back."""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from memory_core import AtlasConfig, ElasticMemoryAtlas
from memory_core.store import Database, EventFilter, EventSink, open_database
from memory_core.testing import EventRecorder, HashingEmbedder, ManualClock

pytestmark = pytest.mark.integration


def until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def seen() -> EventRecorder:
    return EventRecorder()


@pytest.fixture
def atlas(seen: EventRecorder) -> ElasticMemoryAtlas:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=HashingEmbedder(64), clock=ManualClock()
    )
    atlas.subscribe(seen)
    return atlas


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'db' / 'atlas.db'}", busy_timeout=0.05)
    yield database
    database.close()


def fast_sink(db: Database, atlas: ElasticMemoryAtlas) -> EventSink:
    return EventSink(db, flush_interval=0.02, retry_initial=0.02, retry_max=0.1).attach(atlas)


def add_all(atlas: ElasticMemoryAtlas, start: int, n: int) -> None:
    for i in range(start, start + n):
        atlas.add(f"memory number {i} about topic {i % 7}", session_id="s1")


def assert_all_logged(db: Database, seen: EventRecorder) -> None:
    """The database holds exactly the events the atlas published, in order."""
    page = db.events.query(order_by="id", descending=False, limit=10_000)
    assert [e.type for e in page.items] == [e.type for e in seen.events]
    assert db.events.count(EventFilter(types=("added",))) == len(seen.of_type("added"))


def test_locked_database(
    db: Database, atlas: ElasticMemoryAtlas, seen: EventRecorder, tmp_path: Path
) -> None:
    sink = fast_sink(db, atlas)
    try:
        add_all(atlas, 0, 5)
        sink.flush(timeout=10)
        locker = sqlite3.connect(tmp_path / "db" / "atlas.db", isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        try:
            add_all(atlas, 5, 20)  # the engine keeps working while the DB is locked
            assert until(lambda: not sink.healthy)
            assert "locked" in (sink.last_error or "")
            assert len(seen.of_type("added")) >= 20 and sink.pending >= 20
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        sink.flush(timeout=10)
        assert sink.healthy and sink.dropped == 0
        assert_all_logged(db, seen)
    finally:
        sink.close()


def test_full_disk(db: Database, atlas: ElasticMemoryAtlas, seen: EventRecorder) -> None:
    limit: dict[str, int | None] = {"pages": None}

    @event.listens_for(db.engine, "connect")
    def cap(dbapi_connection: Any, _record: Any) -> None:
        if limit["pages"] is not None:
            dbapi_connection.execute(f"PRAGMA max_page_count={limit['pages']}")

    with db.session() as s:
        limit["pages"] = int(s.execute(text("PRAGMA page_count")).scalar() or 0) + 2
    db.engine.dispose()  # new connections get the cap: the file cannot grow
    sink = fast_sink(db, atlas)
    try:
        add_all(atlas, 0, 300)  # long texts, more than two pages
        assert until(lambda: not sink.healthy)
        assert "full" in (sink.last_error or "")
        limit["pages"] = None
        db.engine.dispose()
        sink.flush(timeout=10)
        assert sink.dropped == 0
        assert_all_logged(db, seen)
        with db.session() as s:
            assert s.execute(text("PRAGMA integrity_check")).scalar() == "ok"
    finally:
        sink.close()


def test_unreachable_database(
    db: Database, atlas: ElasticMemoryAtlas, seen: EventRecorder, tmp_path: Path
) -> None:
    sink = fast_sink(db, atlas)
    try:
        add_all(atlas, 0, 3)
        sink.flush(timeout=10)
        db.engine.dispose()
        shutil.move(tmp_path / "db", tmp_path / "away")  # the file is gone
        add_all(atlas, 3, 10)
        assert until(lambda: not sink.healthy)
        assert "unable to open" in (sink.last_error or "")
        shutil.move(tmp_path / "away", tmp_path / "db")
        sink.flush(timeout=10)
        assert sink.healthy
        assert_all_logged(db, seen)
    finally:
        sink.close()
