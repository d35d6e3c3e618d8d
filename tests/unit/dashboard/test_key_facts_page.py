"""The key-facts page through AppTest: open from the data folder, accept, save; roles apply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.dashboard.access import hash_password
from memory_core.dashboard.ui.shared import live_system
from memory_core.harness.session_format import load_conversation

ROOT = Path(__file__).resolve().parents[3]
PAGE = "pages/key_facts.py"
CHAT = {
    "id": "support-42",
    "messages": [
        {"role": "user", "name": "Dana", "content": "My printer is an HP 4100 and it jams."},
        {"role": "assistant", "content": "Noted: the HP 4100 jams on thick paper."},
        {"role": "user", "name": "Dana", "content": "Thanks!"},
        {"role": "user", "name": "Dana", "content": "The office moves to Rotterdam in March."},
    ],
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    from memory_core.harness.importers import IMPORTERS, ImportOptions
    from memory_core.harness.importers.batch import import_files, write_conversations

    raw = tmp_path / "support.json"
    raw.write_text(json.dumps(CHAT))
    done = import_files(IMPORTERS["openai-chat"], [raw], ImportOptions())
    write_conversations([item for item, _ in done], tmp_path / "data" / "conversations")
    return tmp_path / "data"


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, data: Path) -> Iterator[AppTest]:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "0")
    monkeypatch.setenv("ATLAS_DATA_DIR", str(data))
    monkeypatch.setenv("ATLAS_USERS_FILE", str(data / "no-users.toml"))
    live_system.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    yield at
    live_system().close()
    live_system.clear()


def button(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    return next(b for b in at.button if b.label == label)


def opened(at: AppTest) -> AppTest:
    button(at, "Open conversation").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return next(str(m.value) for m in at.metric if m.label == label)


def test_a_conversation_of_the_data_folder_is_marked_and_saved(app: AppTest, data: Path) -> None:
    opened(app)
    assert metric(app, "Turns") == "4" and metric(app, "Key facts") == "0"
    candidate = next(s for s in app.selectbox if s.label == "Candidate")
    assert "s1-t3" not in candidate.options  # "Thanks!" states nothing
    candidate.set_value("s1-t1").run()
    next(t for t in app.text_input if t.label == "Probe question").set_value(
        "Which printer does Dana own?"
    )
    button(app, "Accept as key fact").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert metric(app, "Key facts") == "1"
    assert any("Marked k1: Which printer does Dana own?" in str(s.value) for s in app.success)
    assert "s1-t1" not in next(s for s in app.selectbox if s.label == "Candidate").options

    replace = next(c for c in app.checkbox if c.label.startswith("Replace"))
    assert replace.value  # opened from this very file
    button(app, "Save conversation").click().run()
    assert not app.exception, [e.value for e in app.exception]
    saved = load_conversation(data / "conversations" / "support-42.json")
    assert [(f.id, f.evidence, f.probe, f.expect) for f in saved.key_facts] == [
        ("k1", ("s1-t1",), "Which printer does Dana own?", "recalled")
    ]


def test_saving_over_the_file_needs_replace_and_keeps_it_otherwise(
    app: AppTest, data: Path
) -> None:
    path = data / "conversations" / "support-42.json"
    before = path.read_bytes()
    opened(app)
    button(app, "Accept as key fact").click().run()
    next(c for c in app.checkbox if c.label.startswith("Replace")).uncheck()
    button(app, "Save conversation").click().run()
    assert any("already exists" in str(e.value) for e in app.error)
    assert path.read_bytes() == before


def test_a_viewer_may_look_but_not_save(
    app: AppTest, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = data / "users.toml"
    users.write_text(
        f'[users.alice]\nrole = "reviewer"\npassword_hash = "{hash_password("correct horse")}"\n'
    )
    monkeypatch.setenv("ATLAS_USERS_FILE", str(users))
    opened(app)
    save = button(app, "Save conversation")
    assert save.disabled
    assert "viewer" in (save.help or "")
