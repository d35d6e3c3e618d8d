"""The dashboard under access rules, in Streamlit's AppTest (no browser).

Read-only mode disables every mutating widget on every page; with a users file, a
visitor (viewer) cannot approve, write or play until signed in, and a signed-in
reviewer's name is what the audit trail records. The sidebar warns when the database
recording fails and recovers when it returns, with no event lost.
"""

from __future__ import annotations

import io
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from memory_core.cli import main
from memory_core.dashboard import access
from memory_core.dashboard.ui.identity import IDENTITY_KEY
from memory_core.dashboard.ui.shared import live_system
from memory_core.embedding import HashingEmbedder
from memory_core.knowledge import KnowledgeBase, ReviewAction
from memory_core.store.engine import open_database
from memory_core.store.records import EventFilter

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "atlas.db"
    open_database(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def env(tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copyfile(template, tmp_path / "atlas.db")
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("ATLAS_DATABASE_URL", raising=False)
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "0")
    monkeypatch.setenv(access.USERS_FILE_ENV, str(tmp_path / "users.toml"))
    monkeypatch.delenv(access.READ_ONLY_ENV, raising=False)
    monkeypatch.setattr(access, "BCRYPT_ROUNDS", 4)
    return tmp_path


@pytest.fixture
def app(env: Path) -> Iterator[AppTest]:
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    yield at
    live_system().close()
    st.cache_resource.clear()


def go(at: AppTest, page: str) -> AppTest:
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def button(at: AppTest, label: str) -> Any:
    return next(b for b in at.button if b.label == label)


def _login_panel() -> None:
    from memory_core.dashboard.ui.identity import identity_panel

    identity_panel()


def add_user(name: str, role: str, password: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
    assert main(["users", "add", name, "--role", role, "--password-stdin"]) == 0


def test_read_only_mode_disables_every_mutating_widget(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(access.READ_ONLY_ENV, "1")
    app.run()  # the entry page: AppTest draws the sidebar only there
    assert any("Read-only" in i.value for i in app.info), [i.value for i in app.info]
    go(app, "pages/demo_player.py")
    for label in ("Play", "Step", "Reset"):
        assert button(app, label).disabled, label
    go(app, "pages/live_graph.py")
    assert button(app, "Skip ahead and decay").disabled
    go(app, "pages/playground.py")
    assert app.chat_input[0].proto.disabled
    # evictions with their text, so the restore button is drawn
    system = live_system()
    gone = system.atlas.add("a memory to evict and restore", session_id="ro")
    system.atlas.delete(gone.id)
    go(app, "pages/eviction_log.py")
    assert button(app, "Restore into the live atlas").disabled
    go(app, "pages/knowledge_audit.py")
    app.text_input(key="reviewer").set_value("alice").run()
    assert button(app, "Approve").disabled and button(app, "Import").disabled
    go(app, "pages/conflict_review.py")
    assert button(app, "Write").disabled
    assert button(app, "Scan the atlas for contradictions").disabled
    # nothing was changed behind the disabled widgets
    assert len(system.atlas) == 0


def test_without_read_only_the_same_widgets_work(app: AppTest) -> None:
    go(app, "pages/demo_player.py")
    assert not button(app, "Play").disabled
    go(app, "pages/playground.py")
    app.chat_input[0].set_value("I take the train to work").run()
    assert not app.exception
    assert len(live_system().atlas) == 1


def test_a_viewer_cannot_approve_and_a_signed_in_reviewer_is_recorded(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_user("vera", "viewer", "viewer-pass", monkeypatch)
    add_user("rita", "reviewer", "reviewer-pass", monkeypatch)
    go(app, "pages/knowledge_audit.py")
    # a visitor typing a name is still only a viewer while a users file is in force
    app.text_input(key="reviewer").set_value("mallory").run()
    assert button(app, "Approve").disabled
    assert any("viewer" in i.value for i in app.info)
    go(app, "pages/playground.py")
    assert app.chat_input[0].proto.disabled

    def sign_in(name: str, password: str) -> AppTest:
        """The sidebar's login form on its own (AppTest draws app.py's sidebar only once)."""
        at = AppTest.from_function(_login_panel, default_timeout=30)
        at.run()
        at.text_input(key="access_login_name").set_value(name)
        at.text_input(key="access_login_password").set_value(password)
        next(b for b in at.button if b.label == "Sign in").click().run()
        assert not at.exception, at.exception
        return at

    refused = sign_in("vera", "wrong-pass")
    assert any("wrong password" in e.value for e in refused.error)
    assert IDENTITY_KEY not in refused.session_state
    vera = sign_in("vera", "viewer-pass")
    assert any("vera" in c.value and "viewer" in c.value for c in vera.caption)
    app.session_state[IDENTITY_KEY] = vera.session_state[IDENTITY_KEY]
    go(app, "pages/knowledge_audit.py")
    assert button(app, "Approve").disabled  # signed in, but a viewer

    app.session_state[IDENTITY_KEY] = sign_in("rita", "reviewer-pass").session_state[IDENTITY_KEY]
    go(app, "pages/knowledge_audit.py")
    app.text_input(key="reviewer").set_value("someone else").run()
    approve = button(app, "Approve")
    assert not approve.disabled
    approve.click().run()
    assert not app.exception
    assert any("approved by rita" in m.value for m in app.success), app.success
    db = open_database()
    try:
        kb = KnowledgeBase(db.session, embedder=HashingEmbedder())
        with kb.unit() as unit:
            actors = {
                e.actor
                for item in unit.items.items()
                for e in unit.items.audit_log(item.id)
                if e.action is ReviewAction.APPROVE
            }
    finally:
        db.close()
    assert "rita" in actors and "someone else" not in actors  # the account, not the typed name


def test_sidebar_warns_while_the_database_is_down_and_nothing_is_lost(
    app: AppTest, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = env / "db"
    folder.mkdir()
    monkeypatch.setenv("ATLAS_DATABASE_URL", f"sqlite:///{folder / 'atlas.db'}")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "1")

    def sidebar() -> AppTest:
        """A fresh browser session on the entry page (AppTest draws the sidebar there)."""
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.run()
        assert not at.exception, at.exception
        return at

    app.run()
    system = live_system()
    sink, db = system.recording.sink, system.recording.db
    assert sink is not None and db is not None
    assert any("Recording to the database" in c.value for c in app.caption)
    system.atlas.add("written while the database is up", session_id="f")
    sink.flush(timeout=10)
    # the database disappears: the engine keeps working, events wait in the sink
    db.engine.dispose()
    shutil.move(folder, env / "away")
    for i in range(5):
        system.atlas.add(f"written during the outage {i}", session_id="f")
    deadline = time.monotonic() + 15
    while sink.healthy and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sink.healthy and len(system.atlas) == 6
    down = sidebar()
    assert any("failing" in w.value for w in down.warning), down.warning
    # it comes back: the badge recovers and every event is in the database
    shutil.move(env / "away", folder)
    sink.flush(timeout=60)
    assert sink.healthy and sink.dropped == 0
    up = sidebar()
    assert not any("failing" in w.value for w in up.warning)
    assert any("Recording to the database" in c.value for c in up.caption)
    assert db.events.count(EventFilter(session_id="f", types=("added",))) == 6
