"""Opening the database: URL resolution, engine setup and migrations at start-up."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

from memory_core.errors import ConfigError
from memory_core.paths import data_dir
from memory_core.store.boundary import translate_errors
from memory_core.store.context_graphs import SqlContextGraphRepository
from memory_core.store.erase import Subject, erase_rows
from memory_core.store.migrate import upgrade
from memory_core.store.sql import (
    SqlAtlasRepository,
    SqlEventRepository,
    SqlRunRepository,
    SqlSnapshotRepository,
)

URL_ENV = "ATLAS_DATABASE_URL"
DEFAULT_BUSY_TIMEOUT = 30.0  # a loaded machine can hold a write (embedding inside) for seconds
_WRITE_BEGIN = "IMMEDIATE"
_READ_BEGIN = "DEFERRED"
_URL_HELP = (
    "must be a SQLAlchemy URL with a file path or a server, e.g. sqlite:////var/atlas/atlas.db "
    "or postgresql+psycopg://user:password@host:5432/atlas"
)


def resolve_url(url: str | None = None) -> URL:
    """``url``, else ``$ATLAS_DATABASE_URL`` (read now), else ``<data_dir>/atlas.db``."""
    raw = url or os.environ.get(URL_ENV) or f"sqlite:///{data_dir() / 'atlas.db'}"
    try:
        parsed = make_url(raw)
    except ArgumentError:
        raise ConfigError(URL_ENV, raw, _URL_HELP) from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database or ""
        if database in ("", ":memory:") or parsed.query.get("mode") == "memory":
            raise ConfigError(
                URL_ENV,
                parsed.render_as_string(hide_password=True),
                "in-memory SQLite lives in one connection (one thread under Streamlit); "
                "give a file path",
            )
        Path(database).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
    elif parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3 is what we ship
    return parsed


def create_store_engine(url: URL, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> Engine:
    """An engine with the per-connection settings each backend needs."""
    try:
        if url.get_backend_name() == "sqlite":
            engine = create_engine(url, connect_args={"timeout": busy_timeout})
            _configure_sqlite(engine, busy_timeout)
        else:
            engine = create_engine(url, pool_pre_ping=True)
    except (NoSuchModuleError, ArgumentError, ImportError) as exc:
        raise ConfigError(URL_ENV, url.render_as_string(hide_password=True), _URL_HELP) from exc
    return engine


def _configure_sqlite(engine: Engine, busy_timeout: float) -> None:
    """WAL, busy timeout, foreign keys, and real transactions that wait for the write lock.

    pysqlite's own transaction handling starts no transaction before DDL and silently
    commits around it; taking over BEGIN makes migrations and batches atomic.

    ``Database.session`` transactions begin IMMEDIATE (they take the write lock up front)
    through the ``sqlite_begin`` execution option. A deferred transaction that reads
    and then writes cannot wait for the lock: SQLite refuses the upgrade at once with
    "database is locked" (SQLITE_BUSY, the busy timeout is not consulted, since waiting
    could deadlock two such readers), and after another connection's commit its snapshot
    is stale (SQLITE_BUSY_SNAPSHOT). Nearly every unit of work here reads before it writes.
    ``Database.session(read_only=True)`` begins DEFERRED so pure readers never wait, and so
    does a bare ``engine.connect()`` (schema reads, inspection): taking the write lock there
    would make a second connection of the same thread wait on the first until the timeout.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        _write_ahead_log(cursor, busy_timeout)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA secure_delete=ON")  # erased rows are zeroed, not left in free pages
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", _READ_BEGIN)
        conn.exec_driver_sql(f"BEGIN {mode}")


WAL_RETRY_SECONDS = (0.005, 0.1)
"""First and longest pause between tries of the switch to WAL (doubling in between)."""


def _write_ahead_log(cursor: Any, busy_timeout: float) -> None:
    """Put the file in WAL mode, waiting up to ``busy_timeout`` for the lock it needs.

    The switch needs the file to itself and SQLite runs no busy handler for it: a first
    open while another connection holds a lock failed at once with "database is locked"
    (four threads opening a fresh file, ``test_migrations``). WAL is a property of the
    file, so a connection that finds it set does nothing; otherwise the switch is tried
    again until it is made, by this connection or another, or the timeout has passed."""
    deadline = time.monotonic() + busy_timeout
    pause, longest = WAL_RETRY_SECONDS
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, longest)


class Database:
    """An open database: repositories, sessions for other packages' repositories, erase."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(
            engine.execution_options(sqlite_begin=_WRITE_BEGIN), expire_on_commit=False
        )
        self._read_sessions = sessionmaker(
            engine.execution_options(sqlite_begin=_READ_BEGIN), expire_on_commit=False
        )
        self._events = SqlEventRepository(self)
        self._runs = SqlRunRepository(self)
        self._snapshots = SqlSnapshotRepository(self)
        self._atlases = SqlAtlasRepository(self)
        self._context_graphs = SqlContextGraphRepository(self)

    @property
    def events(self) -> SqlEventRepository:
        return self._events

    @property
    def runs(self) -> SqlRunRepository:
        return self._runs

    @property
    def snapshots(self) -> SqlSnapshotRepository:
        return self._snapshots

    @property
    def atlases(self) -> SqlAtlasRepository:
        return self._atlases

    @property
    def context_graphs(self) -> SqlContextGraphRepository:
        """Versions of task context graphs (``store.context_graphs``)."""
        return self._context_graphs

    @property
    def url(self) -> str:
        """The URL with any password hidden (safe to show and log)."""
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(
        self, action: str = "database operation", *, read_only: bool = False
    ) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on error, errors translated.

        On SQLite a session takes the write lock when it begins (waiting up to the busy
        timeout), so a read followed by a write inside it cannot fail as "locked".
        ``read_only=True`` skips the lock for sessions that only read: they see one
        snapshot and never wait for writers; a write in one may fail as "locked".
        """
        sessions = self._read_sessions if read_only else self._sessions
        with translate_errors(action), sessions.begin() as session:
            yield session

    def erase(self, *, session_id: str | None = None, user_id: str | None = None) -> dict[str, int]:
        """Delete one subject's rows in every registered table, in one transaction."""
        subject = Subject.of(session_id=session_id, user_id=user_id)
        with self.session("erase") as session:
            return erase_rows(session, subject)

    def close(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Database({self.url!r})"


def open_database(
    url: str | None = None,
    *,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    migrate: bool = True,
) -> Database:
    """Open (and create or upgrade to the latest schema) the configured database.

    Args:
        url: SQLAlchemy URL; defaults to ``$ATLAS_DATABASE_URL`` or a SQLite file in
            ``data_dir()``.
        busy_timeout: seconds a SQLite writer waits for a lock before failing.
        migrate: apply Alembic migrations up to head (off only for migration tests).
    """
    engine = create_store_engine(resolve_url(url), busy_timeout=busy_timeout)
    try:
        if migrate:
            upgrade(engine)
    except BaseException:
        engine.dispose()
        raise
    return Database(engine)
