"""Database URL resolution: explicit, environment (read at call time), default file."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.errors import ConfigError
from memory_core.store.engine import resolve_url


def test_default_is_a_sqlite_file_in_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATLAS_DATABASE_URL", raising=False)
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path / "data"))
    url = resolve_url()
    assert url.get_backend_name() == "sqlite"
    assert Path(url.database or "") == tmp_path / "data" / "atlas.db"


def test_environment_is_read_at_call_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_DATABASE_URL", f"sqlite:///{tmp_path}/a/b/env.db")
    assert resolve_url().database == f"{tmp_path}/a/b/env.db"
    assert (tmp_path / "a" / "b").is_dir()  # parent folder created
    monkeypatch.setenv("ATLAS_DATABASE_URL", "postgresql://u:secret@db.example:5432/atlas")
    url = resolve_url()
    assert url.drivername == "postgresql+psycopg"  # psycopg 3, not the absent psycopg2
    assert resolve_url(f"sqlite:///{tmp_path}/x.db").database == f"{tmp_path}/x.db"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file:x?mode=memory"])
def test_in_memory_sqlite_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="in-memory SQLite"):
        resolve_url(url)


def test_garbage_url_names_the_setting_and_the_expected_form() -> None:
    with pytest.raises(ConfigError, match=r"ATLAS_DATABASE_URL.*SQLAlchemy URL"):
        resolve_url("not a url")
