"""Alembic at start-up: create, upgrade an old database, agree with the models, refuse the future."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

import memory_core.store.models  # noqa: F401  (all core tables in Base.metadata)
from memory_core.errors import StoreError, StoreUnavailableError
from memory_core.store import EventRecord, open_database
from memory_core.store.base import Base
from memory_core.store.engine import create_store_engine, resolve_url
from memory_core.store.migrate import current_revision, downgrade, head_revision, upgrade
from memory_core.store.snapshots import PART_BYTES

pytestmark = pytest.mark.integration

CORE_TABLES = {
    "events",
    "weight_samples",
    "runs",
    "snapshots",
    "snapshot_sessions",
    "snapshot_parts",
    "atlases",
}


def test_fresh_database_is_created_at_head(db_url: str) -> None:
    db = open_database(db_url)
    try:
        assert current_revision(db.engine) == head_revision()
        assert set(inspect(db.engine).get_table_names()) >= CORE_TABLES
    finally:
        db.close()


def test_models_and_migrations_agree(database) -> None:  # type: ignore[no-untyped-def]
    with database.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    ours = [d for d in diffs if _touches_core(d)]
    assert ours == []


def _touches_core(diff: object) -> bool:
    """Whether an autogenerate diff concerns one of our tables (others own the rest)."""
    op = diff[0] if isinstance(diff, list) else diff
    for part in op[1:]:  # type: ignore[index]
        table = getattr(part, "table", part)  # Column/Index -> their Table
        name = getattr(table, "name", table)
        if isinstance(name, str) and name in CORE_TABLES:
            return True
    return False


def test_old_database_is_upgraded_on_open_and_keeps_its_rows(db_url: str) -> None:
    engine = create_store_engine(resolve_url(db_url))
    try:
        upgrade(engine, "0001_core")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO atlases (id, name, kind, created_at, last_seen) "
                    "VALUES ('old', 'old atlas', 'live', :t, :t)"
                ),
                {"t": datetime(2025, 1, 1, tzinfo=UTC).replace(tzinfo=None)},
            )
        downgrade(engine, "0001_core")  # a database left by the first release
        assert current_revision(engine) == "0001_core"
    finally:
        engine.dispose()
    db = open_database(db_url)
    try:
        assert current_revision(db.engine) == head_revision()
        assert db.atlases.get("old").name == "old atlas"
    finally:
        db.close()


def test_downgrade_to_base_and_back(db_url: str) -> None:
    db = open_database(db_url)
    try:
        downgrade(db.engine, "base")
        assert not CORE_TABLES & set(inspect(db.engine).get_table_names())
        upgrade(db.engine)
        db.events.append([EventRecord(atlas_id="a", type="added", at=datetime.now(UTC))])
        assert db.events.count() == 1
    finally:
        db.close()


def test_a_snapshot_in_parts_survives_a_downgrade_below_the_parts_table(db_url: str) -> None:
    blob = bytes(range(256)) * (2 * PART_BYTES // 256 + 7)  # three parts
    db = open_database(db_url)
    try:
        info = db.snapshots.save(
            atlas_id="a", label="live", data=blob, format_version=2, node_count=1, edge_count=0
        )
        downgrade(db.engine, "0402_context_origin")  # joins the parts into snapshots.data
        assert "snapshot_parts" not in inspect(db.engine).get_table_names()
        upgrade(db.engine)
        assert db.snapshots.data(info.id) == blob  # now read from snapshots.data
    finally:
        db.close()


def test_reopening_is_a_no_op_and_data_survives(db_url: str) -> None:
    first = open_database(db_url)
    first.runs.add(name="r", policy="p", params={"a": 1}, metrics={"m": 0.5})
    first.close()
    again = open_database(db_url)
    try:
        assert [r.params for r in again.runs.list().items] == [{"a": 1}]
    finally:
        again.close()


def test_concurrent_first_opens_do_not_race(db_url: str) -> None:
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_database(db_url, busy_timeout=30).close()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_database_from_a_newer_version_is_refused(db_url: str) -> None:
    open_database(db_url).close()
    engine = create_store_engine(resolve_url(db_url))
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    engine.dispose()
    with pytest.raises(StoreError, match="newer version"):
        open_database(db_url)


@pytest.mark.postgres
def test_unreachable_server_is_unavailable(postgres_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"postgresql+psycopg://atlas@/nope?host={tmp_path}"  # no server listens there
    with pytest.raises(StoreUnavailableError, match="database unavailable"):
        open_database(url)
