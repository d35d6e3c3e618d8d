"""Following a recording agent: the polling logic on a real SQLite file, and the pages
through AppTest picking up a memory the agent wrote after the page was opened."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from memory_core import ElasticMemoryAtlas
from memory_core.dashboard.follow import (
    atlas_label,
    check_every,
    poll,
    recorded_decays,
    recorded_node_events,
    status_text,
)
from memory_core.dashboard.inspector import history_row
from memory_core.dashboard.sources import load_recorded
from memory_core.dashboard.state import AtlasSource, Keys
from memory_core.dashboard.ui.shared import follower, live_system
from memory_core.dashboard.weights import evolution_frame
from memory_core.engine.events import AtlasEvent, DecayApplied
from memory_core.errors import InputError
from memory_core.store.engine import Database, open_database
from memory_core.store.live import LiveRecorder
from memory_core.store.watch import Head, recorded_atlases
from memory_core.testing import EventRecorder, HashingEmbedder, wait_for

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'atlas.db'}"


@pytest.fixture
def recorder(url: str) -> Iterator[LiveRecorder]:
    rec = LiveRecorder.start(
        ElasticMemoryAtlas(embedder=HashingEmbedder()), url=url, name="agent", snapshot_every=0.1
    )
    yield rec
    rec.close()


@pytest.fixture
def reader(url: str) -> Iterator[Database]:
    db = open_database(url)
    yield db
    db.close()


def newest_has(db: Database, atlas_id: str, nodes: int) -> bool:
    items = db.snapshots.list(atlas_id=atlas_id, limit=1).items
    return bool(items) and items[0].node_count == nodes


def test_poll_reports_news_once_and_the_new_snapshot_holds_the_write(
    recorder: LiveRecorder, reader: Database
) -> None:
    wait_for(lambda: recorder.snapshots_taken >= 1)
    seen, changed = poll(reader, recorder.atlas_id, "agent", None)
    assert changed and seen.head.snapshot_id is not None
    seen, changed = poll(reader, recorder.atlas_id, "agent", seen)
    assert not changed  # nothing happened: no reload

    recorder.atlas.add("The user is allergic to peanuts", session_id="trip")
    wait_for(lambda: newest_has(reader, recorder.atlas_id, 1))
    recorder.sink.flush()
    fresh, changed = poll(reader, recorder.atlas_id, "agent", seen)
    assert changed and fresh.head.snapshot_id != seen.head.snapshot_id
    assert fresh.head.snapshot_id is not None
    atlas, _ = load_recorded(reader, fresh.head.snapshot_id, HashingEmbedder())
    assert [n.content for n in atlas.nodes()] == ["The user is allergic to peanuts"]
    assert status_text(fresh.head).startswith("live · updated ")


def test_following_another_atlas_counts_as_news(
    recorder: LiveRecorder, reader: Database, url: str
) -> None:
    other = LiveRecorder.start(
        ElasticMemoryAtlas(embedder=HashingEmbedder()), url=url, name="other", snapshot_every=0.1
    )
    try:
        wait_for(lambda: recorder.snapshots_taken >= 1 and other.snapshots_taken >= 1)
        seen, _ = poll(reader, recorder.atlas_id, "agent", None)
        switched, changed = poll(reader, other.atlas_id, "other", seen)
        assert changed and switched.label == f"followed agent other · {other.atlas_id[:8]}"
    finally:
        other.close()


def head(**kwargs: object) -> Head:
    values: dict[str, object] = {
        "snapshot_id": "s1",
        "snapshot_at": NOW - timedelta(seconds=3),
        "snapshot_label": "live",
        "last_event_at": None,
        "last_seen": NOW - timedelta(seconds=1),
    }
    values.update(kwargs)
    return Head(**values)  # type: ignore[arg-type]


def test_status_text_says_how_fresh_the_followed_atlas_is() -> None:
    assert status_text(head(), NOW) == "live · updated 3 s ago"
    assert status_text(head(snapshot_label="final"), NOW) == (
        "recording stopped · last snapshot 3 s ago"
    )
    silent = head(snapshot_at=NOW - timedelta(minutes=5), last_seen=NOW - timedelta(minutes=5))
    assert status_text(silent, NOW) == "recorder silent · last snapshot 5 min ago"
    assert status_text(head(snapshot_id=None, snapshot_at=None), NOW) == (
        "waiting for the first snapshot"
    )


def test_status_text_counts_the_events_a_follower_has_yet_to_apply() -> None:
    assert status_text(head(last_seq=40), NOW, applied=40) == "live · up to date"
    assert status_text(head(last_seq=40), NOW, applied=28) == "live · 12 events to apply"
    assert status_text(head(last_seq=None), NOW, applied=0) == "live · updated 3 s ago"


@pytest.mark.parametrize("bad", [0.1, 61, float("nan"), "2", True])
def test_check_every_names_the_field_and_range(bad: object) -> None:
    with pytest.raises(InputError, match=r"check_every"):
        check_every(bad)  # type: ignore[arg-type]
    assert check_every(2) == 2.0


def test_picker_label_shows_state_events_and_time(recorder: LiveRecorder, reader: Database) -> None:
    recorder.atlas.add("one", session_id="s")
    recorder.sink.flush()
    wait_for(lambda: newest_has(reader, recorder.atlas_id, 1))
    (agent,) = recorded_atlases(reader)
    label = atlas_label(agent)
    assert label.startswith(f"● live · agent · {recorder.atlas_id[:8]} · 1 events · snapshot ")


# -- the pages, through AppTest -------------------------------------------------------


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, url: str) -> Iterator[AppTest]:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "1")
    monkeypatch.setenv("ATLAS_DATABASE_URL", url)
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    live_system.clear()
    follower.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    yield at
    live_system().close()
    live_system.clear()
    follower.clear()


def metric(at: AppTest, label: str) -> str:
    return next(str(m.value) for m in at.metric if m.label == label)


def test_pages_follow_the_agent_and_keep_the_filters(
    app: AppTest, recorder: LiveRecorder, reader: Database
) -> None:
    seats = recorder.atlas.add("The user prefers window seats", session_id="trip")
    recorder.atlas.add("Budget is 5000 euros", session_id="trip")
    wait_for(lambda: newest_has(reader, recorder.atlas_id, 2))
    app.session_state[Keys.SOURCE] = AtlasSource.FOLLOW.value
    app.session_state[Keys.KINDS] = ["session"]
    app.run()
    app.switch_page("pages/live_graph.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert metric(app, "Memories") == "2"
    assert any("followed agent agent" in str(c.value) for c in app.caption)
    inspect = app.selectbox(key=Keys.SELECTED)
    assert inspect.value != seats.id  # not the default: heaviest (newest) first
    inspect.select(seats.id).run()

    recorder.atlas.add("Finance must be in cc on every booking", session_id="trip")
    recorder.sink.flush()  # the follower applies the logged event, not the next snapshot
    app.run()  # what the sidebar's timer does between two looks
    assert metric(app, "Memories") == "3"
    assert app.session_state[Keys.KINDS] == ["session"]
    assert app.selectbox(key=Keys.SELECTED).value == seats.id  # the inspected memory kept
    assert "The user prefers window seats" in [str(t.value) for t in app.text]
    assert live_system().atlas.stats()["nodes"] == 0  # the dashboard's own atlas untouched


def test_pages_follow_the_agents_events_between_checkpoints(
    app: AppTest, url: str, reader: Database
) -> None:
    agent = LiveRecorder.start(
        ElasticMemoryAtlas(embedder=HashingEmbedder()), url=url, name="agent", snapshot_every=3600
    )
    try:
        agent.atlas.add("The user prefers window seats", session_id="trip")
        agent.sink.flush()
        app.session_state[Keys.SOURCE] = AtlasSource.FOLLOW.value
        app.run()
        app.switch_page("pages/live_graph.py")
        app.run()
        assert not app.exception, [e.value for e in app.exception]
        assert metric(app, "Memories") == "1"
        for text in ("Budget is 5000 euros", "Finance must be in cc on every booking"):
            agent.atlas.add(text, session_id="trip")
        agent.atlas.delete(agent.atlas.nodes()[0].id)
        agent.sink.flush()
        app.run()
        assert metric(app, "Memories") == "2"
        copy = follower(agent.atlas_id)
        assert copy.atlas is not None and copy.reloads == 1  # the checkpoint taken at start
        assert agent.snapshots_taken == 1 and copy.applied == copy.seq == 4
        assert {n.content for n in copy.atlas.nodes()} == {
            "Budget is 5000 euros",
            "Finance must be in cc on every booking",
        }
    finally:
        agent.close()


def test_eviction_log_reads_the_followed_agents_events(
    app: AppTest, recorder: LiveRecorder, reader: Database
) -> None:
    node = recorder.atlas.add("a memory the agent deletes", session_id="trip")
    wait_for(lambda: newest_has(reader, recorder.atlas_id, 1))
    recorder.atlas.delete(node.id)
    recorder.sink.flush()
    app.session_state[Keys.SOURCE] = AtlasSource.FOLLOW.value
    app.run()
    own = live_system()  # the dashboard's own atlas records evictions too: not shown
    own.atlas.delete(own.atlas.add("the dashboard's own memory", session_id="own").id)
    assert own.recording.sink is not None
    own.recording.sink.flush()
    app.switch_page("pages/eviction_log.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert any(str(c.value).startswith("1 matching evictions") for c in app.caption)


def test_recorded_decays_match_the_passes_the_agent_published(
    recorder: LiveRecorder, reader: Database
) -> None:
    published = EventRecorder()
    recorder.atlas.subscribe(published)
    recorder.atlas.add("The user prefers window seats", session_id="trip")
    recorder.atlas.add("Budget is 5000 euros", session_id="trip")
    for _ in range(3):
        recorder.atlas.decay()
    recorder.sink.flush()
    passes = [e for e in published.of_type("decay") if isinstance(e, DecayApplied)]
    assert len(passes) == 3

    recorded = recorded_decays(reader.events, recorder.atlas_id)
    columns = ["at", "nodes", "mean", "min", "max"]
    expected = evolution_frame(passes)[columns]
    pd.testing.assert_frame_equal(evolution_frame(recorded)[columns], expected)
    assert [e.weights for e in recorded] == [{}, {}, {}]  # weights live in weight samples
    newest = recorded_decays(reader.events, recorder.atlas_id, limit=2)
    assert [e.at for e in newest] == [e.at for e in recorded[1:]]
    assert recorded_decays(reader.events, "another-atlas") == []


def test_weights_page_charts_the_followed_agents_decay_passes(
    app: AppTest, recorder: LiveRecorder, reader: Database
) -> None:
    recorder.atlas.add("The user prefers window seats", session_id="trip")
    for _ in range(2):
        recorder.atlas.decay()
    recorder.sink.flush()
    wait_for(lambda: newest_has(reader, recorder.atlas_id, 1))
    app.session_state[Keys.SOURCE] = AtlasSource.FOLLOW.value
    app.run()
    app.switch_page("pages/weights.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    captions = [str(c.value) for c in app.caption]
    assert any(
        c.startswith("2 newest recorded decay passes of the followed agent") for c in captions
    )
    assert not any("has no history" in c for c in captions)


def test_recorded_node_history_matches_the_buffered_one(
    recorder: LiveRecorder, reader: Database
) -> None:
    published = EventRecorder()
    recorder.atlas.subscribe(published)
    seats = recorder.atlas.add("The user prefers window seats", session_id="trip")
    other = recorder.atlas.add("Budget is 5000 euros", session_id="trip")
    recorder.atlas.retrieve("window seats", 1, session_id="trip")
    recorder.atlas.decay()
    recorder.atlas.set_status(seats.id, "deprecated", reason="user changed their mind")
    recorder.atlas.decay()
    recorder.atlas.delete(other.id)
    recorder.sink.flush()

    def rows(events: list[AtlasEvent], node_id: str) -> list[tuple[str, str]]:
        found = [r for e in events if (r := history_row(e, node_id)) is not None]
        return [(r["event"], r["detail"]) for r in found]

    recorded = recorded_node_events(reader.events, recorder.atlas_id, seats.id)
    expected = rows(published.events, seats.id)
    assert [kind for kind, _ in expected] == ["added", "reinforced", "decay", "status", "decay"]
    assert rows(recorded, seats.id) == expected
    gone = recorded_node_events(reader.events, recorder.atlas_id, other.id)
    assert rows(gone, other.id) == rows(published.events, other.id)
    assert rows(gone, other.id)[-1] == ("evicted", "evicted: forgotten")
    newest = recorded_node_events(reader.events, recorder.atlas_id, seats.id, limit=2)
    assert [e.type for e in newest] == ["status", "decay"]
    assert recorded_node_events(reader.events, "another-atlas", seats.id) == []


def test_inspector_shows_the_followed_agents_history(
    app: AppTest, recorder: LiveRecorder, reader: Database
) -> None:
    seats = recorder.atlas.add("The user prefers window seats", session_id="trip")
    recorder.atlas.decay()
    recorder.sink.flush()
    wait_for(lambda: newest_has(reader, recorder.atlas_id, 1))
    app.session_state[Keys.SOURCE] = AtlasSource.FOLLOW.value
    app.run()
    app.switch_page("pages/live_graph.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.selectbox(key=Keys.SELECTED).value == seats.id
    history = app.dataframe[-1].value
    assert list(history["event"]) == ["decay", "added"]  # newest first
    assert not any("No event history" in str(c.value) for c in app.caption)
