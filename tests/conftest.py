"""Shared database fixtures.

``postgres_server`` starts a real PostgreSQL for the whole run: ``initdb`` into a temp
dir, ``pg_ctl start`` listening only on a unix socket in that dir, stopped at the end.
PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` system
user (or a user ``atlaspg`` created on the spot). A missing PostgreSQL fails loudly;
``ATLAS_SKIP_POSTGRES=1`` is the only way to skip that leg.

``db_url`` is parametrised over both engines and gives each test an empty database;
``database`` is that URL opened (migrated) and closed after the test; ``any_store``
adds the in-memory store, for contract tests that must hold for all three.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from memory_core.store.engine import Database, open_database
from memory_core.store.memory import MemoryStore
from memory_core.store.repositories import Store

PG_USER = "atlas"
TEST_DB = "atlas_tests"
_SKIP_ENV = "ATLAS_SKIP_POSTGRES"


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway server with one database, ``TEST_DB``.

    Each test gets a schema of its own in it (``search_path`` set in the URL): as empty
    as a new database, but created in milliseconds instead of seconds.
    """

    socket_dir: Path
    data_dir: Path

    def url(self, schema: str) -> str:
        options = quote(f"-csearch_path={schema}")
        return f"postgresql+psycopg://{PG_USER}@/{TEST_DB}?host={self.socket_dir}&options={options}"

    def fresh_url(self, schema: str) -> str:
        """URL of a new, empty schema."""
        self.admin(f'CREATE SCHEMA "{schema}"')
        return self.url(schema)

    def drop(self, schema: str) -> None:
        self.admin(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    def admin(self, statement: str, dbname: str = TEST_DB) -> None:
        import psycopg

        with psycopg.connect(
            dbname=dbname, user=PG_USER, host=str(self.socket_dir), autocommit=True
        ) as conn:
            conn.execute(statement)  # type: ignore[arg-type]


def _pg_bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
    return Path(candidates[-1]).parent if candidates else None


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.parent.name
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def _server_user() -> str | None:
    """None when we are not root; else an unprivileged account to run the server as."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "atlaspg"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "atlaspg"],
        check=True,
        capture_output=True,
    )
    return "atlaspg"


def _run(cmd: list[str], user: str | None) -> None:
    full = ["runuser", "-u", user, "--", *cmd] if user else cmd
    result = subprocess.run(full, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    if os.environ.get(_SKIP_ENV) == "1":
        pytest.skip(f"{_SKIP_ENV}=1: PostgreSQL leg skipped on request")
    bindir = _pg_bindir()
    if bindir is None:
        pytest.fail(
            "PostgreSQL server binaries (initdb, pg_ctl) not found: install PostgreSQL "
            f"(Debian: apt-get install postgresql) or set {_SKIP_ENV}=1 to skip this leg"
        )
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="atlaspg-"))
    data = root / "data"
    if user:
        shutil.chown(root, user=user, group=pwd.getpwnam(user).pw_gid)
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", PG_USER, "-A", "trust"]
    _run([*initdb, "-E", "UTF8", "--locale=C", "--no-sync"], user)
    options = f"-k {root} -c listen_addresses='' -F -c full_page_writes=off -c max_connections=200"
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-w", "-t", "60"]
    _run([*pg_ctl, "-l", str(root / "server.log"), "-o", options, "start"], user)
    server = PostgresServer(socket_dir=root, data_dir=data)
    server.admin(f"CREATE DATABASE {TEST_DB}", dbname="postgres")
    try:
        yield server
    finally:
        _run([*pg_ctl, "-m", "immediate", "stop"], user)
        shutil.rmtree(root, ignore_errors=True)


_db_numbers = itertools.count()


def fresh_database_url(request: pytest.FixtureRequest, engine: str, tmp_path: Path) -> str:
    """A URL of an empty database: a new SQLite file, or a new PostgreSQL schema
    (dropped when the requesting test ends)."""
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / 'atlas.db'}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    schema = f"test_{os.getpid()}_{next(_db_numbers)}"
    url = server.fresh_url(schema)
    request.addfinalizer(lambda: server.drop(schema))
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database on each engine."""
    return fresh_database_url(request, request.param, tmp_path)


@pytest.fixture
def database(db_url: str) -> Iterator[Database]:
    """``db_url`` opened (schema at head); disposed after the test."""
    db = open_database(db_url)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The same ``Store`` contract with no database, on SQLite and on PostgreSQL."""
    store: Store
    if request.param == "memory":
        store = MemoryStore()
    else:
        store = open_database(fresh_database_url(request, request.param, tmp_path))
    try:
        yield store
    finally:
        store.close()
