"""Revision 0101_knowledge creates exactly what the ORM models describe."""

from pathlib import Path
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from memory_core.knowledge import models
from memory_core.store.base import Base
from memory_core.store.engine import open_database
from memory_core.store.migrate import current_revision, downgrade, upgrade

TABLES = {"knowledge_items", "knowledge_citations", "knowledge_audit", "episodes"}
assert models.KnowledgeItemRow.__tablename__ in Base.metadata.tables


def _ours(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    table = obj if type_ == "table" else getattr(obj, "table", None)
    return table is not None and table.name in TABLES


def _diffs(db_path: Path) -> list[Any]:
    db = open_database(f"sqlite:///{db_path}", migrate=False)
    try:
        with db.engine.connect() as conn:
            opts = {"compare_type": True, "include_object": _ours}
            return list(
                compare_metadata(MigrationContext.configure(conn, opts=opts), Base.metadata)
            )
    finally:
        db.close()


def test_migration_matches_the_models(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    db = open_database(f"sqlite:///{path}")
    assert current_revision(db.engine) is not None
    assert set(inspect(db.engine).get_table_names()) >= TABLES
    db.close()
    assert _diffs(path) == []


def test_comparison_sees_missing_tables(tmp_path: Path) -> None:
    """Guards the test above against passing vacuously."""
    path = tmp_path / "m.db"
    db = open_database(f"sqlite:///{path}", migrate=False)
    upgrade(db.engine, "0001_core")
    db.close()
    added = {d[1].name for d in _diffs(path) if d[0] == "add_table"}
    assert added == TABLES


def test_downgrade_removes_only_knowledge_tables(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'm.db'}")
    downgrade(db.engine, "0001_core")
    names = set(inspect(db.engine).get_table_names())
    assert not (TABLES & names) and "events" in names
    upgrade(db.engine)
    assert set(inspect(db.engine).get_table_names()) >= TABLES
    db.close()
