import pytest

from memory_core.dashboard.live import (
    FastForwardClock,
    LiveSystem,
    embedder_from_env,
    embedder_name,
)
from memory_core.dashboard.sources import load_snapshot_bytes
from memory_core.errors import InputError
from memory_core.testing import HashingEmbedder, ManualClock


def test_fast_forward_clock_only_moves_forward() -> None:
    clock = FastForwardClock(ManualClock(100.0))
    clock.advance(50)
    assert clock.now() == 150.0 and clock.offset == 50.0
    with pytest.raises(InputError, match="seconds"):
        clock.advance(-1)


def test_skip_ahead_decays_and_events_reach_the_buffer(system: LiveSystem) -> None:
    system.atlas.add("a memory", session_id="s")
    before = system.atlas.get(system.atlas.nodes()[0].id).weight
    system.skip_ahead(48)
    assert system.atlas.nodes()[0].weight < before
    assert {"added", "decay"} <= {e.type for e in system.buffer.events()}
    assert system.recording_status() == {"healthy": False, "error": "recording is off"}
    with pytest.raises(InputError, match="hours"):
        system.skip_ahead(-1)


def test_snapshot_round_trip_through_bytes(system: LiveSystem, tmp_path) -> None:  # type: ignore[no-untyped-def]
    system.atlas.add_many(["one thing", "another thing"], session_id="s")
    path = system.atlas.save_snapshot(tmp_path / "snap.npz")
    loaded = load_snapshot_bytes(path.read_bytes(), HashingEmbedder())
    assert sorted(n.content for n in loaded.nodes()) == ["another thing", "one thing"]
    with pytest.raises(InputError, match="the file: file: is empty"):
        load_snapshot_bytes(b"", HashingEmbedder())


def test_recording_writes_events_and_snapshots_to_the_database(tmp_path) -> None:  # type: ignore[no-untyped-def]
    system = LiveSystem(
        embedder=HashingEmbedder(), record=True, database_url=f"sqlite:///{tmp_path / 'a.db'}"
    )
    try:
        system.atlas.add("recorded memory", session_id="s")
        info = system.save_snapshot_to_db("test")
        assert info.node_count == 1
        assert system.recording.sink is not None
        system.recording.sink.flush(timeout=30)
        assert system.recording_status()["written"] >= 1
    finally:
        system.close()


def test_embedder_choice_is_read_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    assert embedder_from_env().name == HashingEmbedder().name
    assert embedder_name() == "hashing"
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "bert-huge")
    with pytest.raises(InputError, match="ATLAS_DASHBOARD_EMBEDDER"):
        embedder_from_env()


def test_live_atlas_runs_the_demo_preset_and_switches(system: LiveSystem) -> None:
    from memory_core.dashboard.demo import DEMO_CONFIG
    from memory_core.engine.config import PRESETS, AtlasConfig
    from memory_core.errors import ConfigError

    assert system.preset == "demo" and system.atlas.config == DEMO_CONFIG
    system.atlas.add("a memory", session_id="s")
    system.apply_preset("tuned", PRESETS["tuned"])
    assert system.preset == "tuned" and system.atlas.config == PRESETS["tuned"]
    assert len(system.atlas) == 1  # nothing lost by switching
    with pytest.raises(ConfigError, match="hnsw_m"):
        system.apply_preset("odd", AtlasConfig(hnsw_m=8))
    assert system.preset == "tuned"  # a refused switch changes nothing
