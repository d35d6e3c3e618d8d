"""LiveRecorder on a real SQLite file: when it snapshots, what it keeps, what the watcher sees."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.cli import build_parser
from memory_core.errors import InputError, NotFoundError, StoreUnavailableError
from memory_core.store import live
from memory_core.store.engine import Database, open_database
from memory_core.store.live import LiveRecorder
from memory_core.store.recording import FINAL_LABEL, LIVE_LABEL
from memory_core.store.watch import LIVE_WINDOW, head, recorded_atlases
from memory_core.testing import HashingEmbedder, wait_for


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'atlas.db'}"


@pytest.fixture
def reader(url: str) -> Iterator[Database]:
    db = open_database(url)
    yield db
    db.close()


def atlas() -> ElasticMemoryAtlas:
    return ElasticMemoryAtlas(embedder=HashingEmbedder(64))


def test_listed_at_start_and_snapshots_only_when_something_changed(
    url: str, reader: Database
) -> None:
    recorder = LiveRecorder.start(atlas(), url=url, name="idle agent", snapshot_every=0.1)
    try:
        assert reader.atlases.get(recorder.atlas_id).name == "idle agent"  # before any event
        assert recorder.snapshots_taken == 1  # the first checkpoint, taken at start
        (first,) = reader.snapshots.list(atlas_id=recorder.atlas_id).items
        assert (first.node_count, first.event_seq) == (0, 0)
        time.sleep(1.0)  # ten intervals with nothing new
        assert recorder.snapshots_taken == 1
        recorder.atlas.add("a first fact", session_id="s")
        wait_for(lambda: recorder.snapshots_taken == 2)
        assert head(reader, recorder.atlas_id).snapshot_label == LIVE_LABEL
    finally:
        recorder.close()
    final = head(reader, recorder.atlas_id)
    assert final.stopped and final.snapshot_label == FINAL_LABEL
    assert not final.live()


def test_a_burst_of_events_snapshots_before_the_interval(url: str, reader: Database) -> None:
    recorder = LiveRecorder.start(
        atlas(), url=url, name="busy", snapshot_every=3600, snapshot_events=5
    )
    try:
        for i in range(5):
            recorder.atlas.add(f"burst fact number {i}", session_id="s")
        wait_for(lambda: recorder.snapshots_taken >= 2)  # after the one at start
        infos = reader.snapshots.list(atlas_id=recorder.atlas_id).items
        assert infos[0].node_count == 5 and infos[0].event_seq == 5
    finally:
        recorder.close()


def test_keeps_only_the_newest_live_snapshots(url: str, reader: Database) -> None:
    recorder = LiveRecorder.start(
        atlas(), url=url, name="pruned", snapshot_every=0.1, keep_snapshots=2
    )
    try:
        for i in range(6):
            recorder.atlas.add(f"fact {i} about the trip", session_id="s")
            taken = recorder.snapshots_taken
            wait_for(lambda taken=taken: recorder.snapshots_taken > taken)  # type: ignore[misc]
    finally:
        recorder.close()
    labels = [s.label for s in reader.snapshots.list(atlas_id=recorder.atlas_id).items]
    assert labels == [FINAL_LABEL, LIVE_LABEL, LIVE_LABEL]
    assert reader.snapshots.list(atlas_id=recorder.atlas_id).items[0].node_count == 6


def test_head_sees_new_events_between_snapshots(url: str, reader: Database) -> None:
    recorder = LiveRecorder.start(atlas(), url=url, name="events", snapshot_every=3600)
    try:
        before = head(reader, recorder.atlas_id)
        assert before.snapshot_id is not None and before.last_event_at is None
        recorder.atlas.add("an event without a snapshot", session_id="s")
        recorder.sink.flush()
        after = head(reader, recorder.atlas_id)
        assert after.snapshot_id == before.snapshot_id and after.last_event_at is not None
        assert after.last_seq == 1 and after.version != before.version and after.live()
    finally:
        recorder.close()


def test_recorded_atlases_lists_counts_and_liveness(url: str, reader: Database) -> None:
    first = LiveRecorder.start(atlas(), url=url, name="first", snapshot_every=0.1)
    second = LiveRecorder.start(atlas(), url=url, name="second", snapshot_every=0.1)
    try:
        first.atlas.add("one", session_id="s")
        first.atlas.add("two", session_id="s")
        first.sink.flush()
        wait_for(
            lambda: (
                reader.snapshots.list(atlas_id=first.atlas_id).items[:1] != ()
                and reader.snapshots.list(atlas_id=first.atlas_id).items[0].node_count == 2
            )
        )
    finally:
        second.close()
    try:
        found = {a.name: a for a in recorded_atlases(reader)}
        assert found["first"].events == 2 and found["second"].events == 0
        assert found["first"].live() and not found["first"].stopped
        assert found["second"].stopped and not found["second"].live()
        stale = found["first"].snapshot_at + LIVE_WINDOW + timedelta(seconds=60)
        assert not found["first"].live(stale)
        assert [a.name for a in recorded_atlases(reader, exclude={first.atlas_id})] == ["second"]
    finally:
        first.close()


def test_a_refused_first_listing_is_retried_so_an_idle_recorder_still_shows(
    url: str, reader: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy database refusing the start-up listing must not leave an atlas "unregistered"."""
    db = open_database(url)
    real_register = db.atlases.register
    refusals = iter([StoreUnavailableError("database is locked")])

    def register_refused_once(atlas_id: str, *, name: str, kind: str) -> object:
        for exc in refusals:
            raise exc
        return real_register(atlas_id, name=name, kind=kind)

    monkeypatch.setattr(db.atlases, "register", register_refused_once)
    recorder = LiveRecorder(atlas(), db, name="idle agent", snapshot_every=0.1)
    with pytest.raises(NotFoundError):
        reader.atlases.get(recorder.atlas_id)  # the refusal really happened
    recorder.close()  # no event ever came: only the retry can list it
    (listed,) = recorded_atlases(reader)
    assert (listed.name, listed.stopped) == ("idle agent", True)


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("snapshot_every", {"snapshot_every": 0}),
        ("snapshot_every", {"snapshot_every": float("nan")}),
        ("snapshot_events", {"snapshot_events": 0}),
        ("snapshot_events", {"snapshot_events": 2.5}),
        ("keep_snapshots", {"keep_snapshots": 0}),
    ],
)
def test_bad_settings_are_refused_before_opening_anything(
    tmp_path: Path, field: str, kwargs: dict[str, float]
) -> None:
    url = f"sqlite:///{tmp_path / 'never.db'}"
    with pytest.raises(InputError, match=field):
        LiveRecorder.start(atlas(), url=url, **kwargs)  # type: ignore[arg-type]
    assert not (tmp_path / "never.db").exists()


def test_mcp_flags_default_to_the_recorders_defaults() -> None:
    args = build_parser().parse_args(["mcp", "--record"])
    assert args.snapshot_every == live.DEFAULT_SNAPSHOT_EVERY
    assert args.snapshot_events == live.DEFAULT_SNAPSHOT_EVENTS
    assert args.keep_snapshots == live.DEFAULT_KEEP_SNAPSHOTS
