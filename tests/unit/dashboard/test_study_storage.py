"""Study storages are configuration: offered, operator-listed or refused, always masked."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.dashboard.locations import shown_path, shown_text, shown_url
from memory_core.dashboard.study_storage import (
    ALLOW_ANY_ENV,
    STORAGE_URLS_ENV,
    check_storage,
    storage_choices,
)
from memory_core.errors import InputError

SECRET_PG = "postgresql+psycopg://u:secret@127.0.0.1:1/db"


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(STORAGE_URLS_ENV, raising=False)
    monkeypatch.delenv(ALLOW_ANY_ENV, raising=False)
    return tmp_path


def test_the_data_folder_and_the_operator_urls_are_offered(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (data / "old-study.sqlite").write_bytes(b"")
    (data / "atlas.db").write_bytes(b"")  # the dashboard's own database is no study store
    monkeypatch.setenv(STORAGE_URLS_ENV, f"{SECRET_PG}, sqlite:////srv/studies.sqlite\n")
    choices = storage_choices()
    assert [c.label for c in choices] == [
        "sweeps.sqlite (data folder)",
        "old-study.sqlite (data folder)",
        "postgresql+psycopg://u:***@127.0.0.1:1/db",
        "SQLite file studies.sqlite",
    ]
    for choice in choices:
        assert check_storage(choice.url) == choice.url


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:////etc/anything.db",
        "sqlite:///../../escape.sqlite",
        SECRET_PG,
        "mysql://root:hunter2@db.internal.example/x",
    ],
)
def test_anything_else_is_refused_masked_and_says_how_to_allow_it(data: Path, url: str) -> None:
    with pytest.raises(InputError) as caught:
        check_storage(url)
    message = str(caught.value)
    assert STORAGE_URLS_ENV in message and f"{ALLOW_ANY_ENV}=1" in message
    assert "secret" not in message and "hunter2" not in message
    assert not Path("/etc/anything.db").exists()


def test_an_operator_may_allow_any_url(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_ANY_ENV, "1")
    assert check_storage(f"sqlite:///{data / 'x' / 'y.sqlite'}").endswith("y.sqlite")
    with pytest.raises(InputError, match="is not a database URL"):
        check_storage("not a url at all")
    with pytest.raises(InputError, match="choose a study storage"):
        check_storage("  ")


def test_shown_urls_hide_passwords_and_server_paths(data: Path) -> None:
    assert shown_url(f"sqlite:///{data / 'sweeps.sqlite'}") == "sweeps.sqlite (data folder)"
    assert shown_url(SECRET_PG) == "postgresql+psycopg://u:***@127.0.0.1:1/db"
    assert "secret" not in shown_url("postgresql://u:secret@h/db?password=secret")


def test_an_unreachable_configured_database_fails_without_its_password(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_core.harness.sweep import rdb_storage

    monkeypatch.setenv(STORAGE_URLS_ENV, SECRET_PG)  # port 1 on loopback: closed
    with pytest.raises(InputError) as caught:
        rdb_storage(check_storage(SECRET_PG), attempts=1)
    assert "secret" not in str(caught.value) and "u:***@127.0.0.1:1/db" in str(caught.value)


def test_pages_name_places_relative_to_the_data_folder(data: Path) -> None:
    assert shown_url(f"sqlite:///{data / 'atlas.db'}") == "atlas.db (data folder)"
    assert shown_url("sqlite:////srv/elsewhere/a.db") == "SQLite file a.db"
    assert shown_path(data / "conversations") == "conversations in the data folder"
    assert shown_path(data) == "the data folder"
    assert shown_path(Path("/srv/x/y.json")) == "y.json"
    failing = f"cannot open {data}/atlas.db via postgresql://u:secret@h/db"
    assert shown_text(failing) == "cannot open the data folder/atlas.db via postgresql://u:***@h/db"
