"""Safe by default: loopback unless told otherwise, and no open dashboard without users."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from memory_core.dashboard.access import (
    ALLOW_OPEN_ENV,
    USERS_FILE_ENV,
    exposure_refusal,
    hash_password,
    loopback,
)
from memory_core.dashboard.ui.shared import live_system

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_addresses(address: str) -> None:
    assert loopback(address)


@pytest.mark.parametrize("address", ["", None, "0.0.0.0", "::", "host.lan.example", "example.org"])
def test_open_addresses(address: str | None) -> None:
    assert not loopback(address)


def test_shipped_config_listens_on_loopback() -> None:
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert loopback(server["address"])
    run = next(
        line for line in (ROOT / "Makefile").read_text().splitlines() if "streamlit run" in line
    )
    assert "127.0.0.1" in run


@pytest.fixture
def no_users(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "users.toml"
    monkeypatch.setenv(USERS_FILE_ENV, str(path))
    monkeypatch.delenv(ALLOW_OPEN_ENV, raising=False)
    return path


def test_open_address_without_users_is_refused_with_how_to_add_them(no_users: Path) -> None:
    message = exposure_refusal("0.0.0.0", path=no_users)
    assert message is not None
    assert "atlas users add" in message and ALLOW_OPEN_ENV in message
    assert exposure_refusal("127.0.0.1", path=no_users) is None


def test_users_or_explicit_flag_allow_an_open_address(
    no_users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_OPEN_ENV, "1")
    assert exposure_refusal("0.0.0.0", path=no_users) is None
    monkeypatch.delenv(ALLOW_OPEN_ENV)
    no_users.write_text(
        f'[users.alice]\nrole = "reviewer"\npassword_hash = "{hash_password("correct horse")}"\n'
    )
    assert exposure_refusal("0.0.0.0", path=no_users) is None


def test_broken_users_file_refuses_without_crashing(no_users: Path) -> None:
    no_users.write_text("[users\n")
    message = exposure_refusal("", path=no_users)
    assert message is not None and "broken" in message


@pytest.fixture
def open_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_users: Path) -> Iterator[AppTest]:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "0")
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    live_system.clear()
    yield AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    st_config.set_option("server.address", before)
    live_system.clear()


def test_app_on_an_open_address_without_users_shows_only_the_refusal(open_app: AppTest) -> None:
    open_app.run()
    assert not open_app.exception
    assert len(open_app.error) == 1 and "atlas users add" in open_app.error[0].value
    assert not open_app.sidebar.radio  # nothing else rendered: no atlas, no actions


def test_unexpected_errors_show_no_traceback_in_the_browser() -> None:
    client = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["client"]
    assert client["showErrorDetails"] in {"type", "none"}
