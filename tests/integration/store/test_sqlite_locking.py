"""Concurrent sessions on one real SQLite file: writers wait for each other, readers never wait.

A deferred transaction that reads and then writes is refused at once ("database is
locked", the busy timeout is not consulted) when another connection writes in between.
Sessions therefore take the write lock when they begin; read-only sessions do not.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_core.store import Database, open_database

pytestmark = pytest.mark.integration

OTHER_WRITER_WINDOW = 0.3  # seconds the other session gets to write inside our transaction


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'atlas.db'}", busy_timeout=5)
    with database.session("create table") as s:
        s.execute(text("CREATE TABLE tally (n INTEGER NOT NULL)"))
    yield database
    database.close()


def _values(db: Database) -> list[int]:
    with db.session("read tally", read_only=True) as s:
        return sorted(int(n) for n in s.scalars(text("SELECT n FROM tally")))


def test_read_then_write_session_and_another_writer_both_commit(db: Database) -> None:
    errors: list[BaseException] = []

    def other_writer() -> None:
        try:
            with db.session("other writer") as s:
                s.execute(text("INSERT INTO tally VALUES (2)"))
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    writer = threading.Thread(target=other_writer)
    with db.session("read then write") as s:
        seen = s.scalar(text("SELECT count(*) FROM tally"))
        writer.start()
        writer.join(OTHER_WRITER_WINDOW)  # it may write now, unless we hold the write lock
        s.execute(text("INSERT INTO tally VALUES (1)"))
    writer.join(30)

    assert seen == 0
    assert not writer.is_alive() and errors == []
    assert _values(db) == [1, 2]  # no lost write


def test_read_only_session_reads_while_a_writer_holds_the_lock(db: Database) -> None:
    locked, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with db.session("slow writer") as s:
                s.execute(text("INSERT INTO tally VALUES (7)"))
                locked.set()
                release.wait(30)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)
            locked.set()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert locked.wait(30)
        during = _values(db)  # must not wait for the writer, who waits for us
    finally:
        release.set()
        thread.join(30)

    assert during == []  # the snapshot before the writer's commit
    assert not thread.is_alive() and errors == []
    assert _values(db) == [7]


def test_a_bare_connection_reads_without_the_write_lock(db: Database) -> None:
    """Schema inspection inside an open connection opens a second one in the same thread.

    If a bare ``engine.connect()`` took the write lock, the second connection would wait on
    the first until the busy timeout and fail with "database is locked" (it did, in the
    privacy erase test, when every transaction began IMMEDIATE).
    """
    from sqlalchemy import inspect

    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM tally").scalar_one() == 0
        assert [c["name"] for c in inspect(db.engine).get_columns("tally")] == ["n"]
        with db.session("write while a reader is open") as s:
            s.execute(text("INSERT INTO tally (n) VALUES (7)"))
    assert _values(db) == [7]
