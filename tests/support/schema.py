"""Whether the ORM models and the Alembic migrations agree, for some tables."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

from memory_core.store.base import Base


def schema_drift(engine: Engine, tables: set[str]) -> list[Any]:
    """The differences between ``Base.metadata`` and the migrated database that touch
    ``tables`` (empty when the migrations build exactly what the models declare)."""
    with engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    return [d for d in diffs if tables & _tables(d)]


def _tables(diff: object) -> set[str]:
    op = diff[0] if isinstance(diff, list) else diff
    names = set()
    for part in op[1:]:  # type: ignore[index]
        table = getattr(part, "table", part)
        name = getattr(table, "name", table)
        if isinstance(name, str):
            names.add(name)
    return names
