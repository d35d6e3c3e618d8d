"""Alembic, driven from code: the scripts ship inside the package, no alembic.ini needed.

Upgrades run in one transaction holding a lock (an advisory lock on PostgreSQL, the
write lock on SQLite), so two processes opening a fresh database at once do not race.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Engine, text

from memory_core.errors import StoreError
from memory_core.store.boundary import translate_errors

_PG_LOCK_KEY = 0x41544C4153  # "ATLAS"


def alembic_config() -> Config:
    """Config whose ``script_location`` is the installed ``migrations`` package."""
    config = Config()
    config.set_main_option("script_location", str(files("memory_core.store") / "migrations"))
    return config


def head_revision() -> str:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    if len(heads) != 1:
        raise StoreError(f"migrations must form one chain, found heads {sorted(heads)}")
    return heads[0]


def current_revision(engine: Engine) -> str | None:
    with translate_errors("read schema revision"), engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision``; a no-op when it is already there."""
    _run(engine, lambda config: command.upgrade(config, revision))


def downgrade(engine: Engine, revision: str) -> None:
    """Step the schema back (used by migration tests and manual rollbacks)."""
    _run(engine, lambda config: command.downgrade(config, revision))


def _run(engine: Engine, step: Callable[[Config], None]) -> None:
    config = alembic_config()
    with translate_errors("migrate schema"), engine.connect() as conn:
        conn.execution_options(sqlite_begin="IMMEDIATE")
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
            config.attributes["connection"] = conn
            try:
                step(config)
            except CommandError as exc:
                raise StoreError(
                    f"cannot migrate the database schema: {exc} "
                    "(was it created by a newer version of elastic-atlas?)"
                ) from exc
