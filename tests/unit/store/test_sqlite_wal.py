"""The switch to WAL on a connection's first open waits for a lock held elsewhere, as every
other statement does, instead of failing at once (SQLite runs no busy handler for it)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_core.store.engine import create_store_engine, resolve_url


def _rollback_journal_file(path: Path) -> sqlite3.Connection:
    """A database still in rollback-journal mode, with another connection holding its write
    lock (what a first open meets while a neighbour creates the schema)."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x INTEGER)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO t VALUES (1)")
    return holder


def test_first_open_waits_for_the_lock_the_switch_to_wal_needs(tmp_path: Path) -> None:
    path = tmp_path / "atlas.db"
    holder = _rollback_journal_file(path)
    release = threading.Timer(0.3, holder.execute, ("COMMIT",))
    release.start()
    engine = create_store_engine(resolve_url(f"sqlite:///{path}"), busy_timeout=10)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 1
    finally:
        release.join()
        engine.dispose()
        holder.close()


def test_a_lock_held_past_the_busy_timeout_still_fails_as_locked(tmp_path: Path) -> None:
    path = tmp_path / "atlas.db"
    holder = _rollback_journal_file(path)
    engine = create_store_engine(resolve_url(f"sqlite:///{path}"), busy_timeout=0.2)
    try:
        with pytest.raises(Exception, match="locked"):
            engine.connect().close()
    finally:
        engine.dispose()
        holder.close()
