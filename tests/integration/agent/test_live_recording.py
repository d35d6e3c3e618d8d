"""An agent process serving `atlas mcp --record` writes events and snapshots that the
dashboard's data layer (the store) can read while it runs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.store.engine import open_database
from memory_core.store.live import LiveRecorder
from memory_core.store.recording import open_recorded
from memory_core.store.records import EventFilter
from memory_core.testing import HashingEmbedder

pytestmark = pytest.mark.integration


def test_recorder_streams_events_and_snapshots(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'atlas.db'}"
    atlas = ElasticMemoryAtlas(embedder=HashingEmbedder(64))
    recorder = LiveRecorder.start(atlas, url=url, name="agent-under-test", snapshot_every=0.2)
    atlas.add("User prefers window seats", session_id="s1")
    atlas.add("Budget is 5000 euros", session_id="s1")
    reader = open_database(url)
    deadline = time.monotonic() + 20
    snapshots = []
    while time.monotonic() < deadline:
        recorder.sink.flush()
        snapshots = list(reader.snapshots.list(atlas_id=recorder.atlas_id).items)
        if snapshots and snapshots[0].node_count == 2:
            break
        time.sleep(0.1)
    assert snapshots and snapshots[0].node_count == 2
    seen = open_recorded(reader.snapshots, snapshots[0].id, embedder=HashingEmbedder(64))
    assert sorted(n.content for n in seen.nodes()) == [
        "Budget is 5000 euros",
        "User prefers window seats",
    ]
    recorder.close()
    events = reader.events.query(EventFilter(atlas_id=recorder.atlas_id))
    assert {e.type for e in events.items} >= {"added"}
    reader.close()
