"""Erasure reaches tables nobody registered: by every column that names the subject."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from memory_core.store.engine import open_database


def test_an_unregistered_table_is_cleared_by_each_column_naming_the_subject(
    tmp_path: Path,
) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'atlas.db'}")
    try:
        with db.engine.begin() as conn:
            conn.execute(
                text("CREATE TABLE notes (id INTEGER, session_id TEXT, old_session_id TEXT)")
            )
            conn.execute(
                text("INSERT INTO notes VALUES (1, 's1', NULL), (2, 's2', 's1'), (3, 's2', 's3')")
            )
        deleted = db.erase(session_id="s1")
        assert deleted["notes"] == 2
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT id FROM notes")).scalars().all() == [3]
        assert db.erase(user_id="s2").get("notes", 0) == 0  # no user column: untouched
    finally:
        db.close()
