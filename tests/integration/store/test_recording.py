"""Recorded atlases and the log survive a restart; evicted memories can be restored;
erase reaches tables of other packages too; a follower of a recording agent is exact."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import text

from memory_core import AtlasConfig, ElasticMemoryAtlas
from memory_core.engine.model import MemoryNode
from memory_core.errors import InputError
from memory_core.store import EventFilter, EventRecord, EventSink, open_database
from memory_core.store.follow import AtlasFollower
from memory_core.store.live import LiveRecorder
from memory_core.store.recording import open_recorded, record_snapshot, restore_evicted
from memory_core.testing import (
    HashingEmbedder,
    ManualClock,
    atlas_differences,
    mixed_agent,
    mixed_workload,
)

pytestmark = pytest.mark.integration


def build() -> tuple[ElasticMemoryAtlas, ManualClock]:
    clock = ManualClock(1_700_000_000.0)
    config = AtlasConfig(memory_watermark=1.0, max_nodes=4, working_memory_size=0)
    return ElasticMemoryAtlas(config, embedder=HashingEmbedder(64), clock=clock), clock


def fields(node: MemoryNode) -> tuple[object, ...]:
    return (
        node.id,
        node.content,
        node.session_id,
        node.kind,
        node.status,
        node.weight,
        node.strength,
        node.access_count,
        node.created_at,
        node.provenance,
        node.metadata,
    )


TEXTS = [
    "Alice drinks green tea every morning",
    "The deploy key rotates on Fridays",
    "Bob is allergic to peanuts",
    "Carol moved to Lisbon in May",
    "The build server runs Debian 12",
]


def test_snapshot_round_trip_and_log_survive_a_restart(db_url: str) -> None:
    atlas, clock = build()
    db = open_database(db_url)
    with EventSink(db, atlas_id="agent-1", atlas_name="agent").attach(atlas) as sink:
        for i, t in enumerate(TEXTS):
            clock.advance(60)
            atlas.add(t, session_id="s1" if i % 2 else "s2", metadata={"i": i})
        atlas.retrieve("green tea", session_id="s2")
        sink.flush()
    info = record_snapshot(atlas, db.snapshots, atlas_id="agent-1", label="after five")
    db.close()

    again = open_database(db_url)  # "app restart"
    try:
        assert again.snapshots.get(info.id) == info
        assert set(info.sessions) == {"s1", "s2"} and info.node_count == len(atlas) == 4
        loaded = open_recorded(again.snapshots, info.id, embedder=HashingEmbedder(64))
        assert [fields(n) for n in loaded.nodes()] == [fields(n) for n in atlas.nodes()]
        assert sorted(loaded.edges(), key=repr) == sorted(atlas.edges(), key=repr)
        for node in atlas.nodes():
            assert np.array_equal(loaded.embedding_of(node.id), atlas.embedding_of(node.id))
        assert again.events.count(EventFilter(atlas_id="agent-1", types=("added",))) == 5
        assert [a.id for a in again.atlases.list(kind="live")] == ["agent-1"]
    finally:
        again.close()


def test_restore_an_evicted_memory_from_the_log(database) -> None:  # type: ignore[no-untyped-def]
    atlas, clock = build()
    with EventSink(database, log_content="full").attach(atlas) as sink:
        for t in TEXTS:
            clock.advance(60)
            atlas.add(t, session_id="s1", metadata={"src": "chat"})
        sink.flush()
    (evicted,) = database.events.query(EventFilter(types=("evicted",))).items
    assert evicted.reason == "capacity" and evicted.content in TEXTS
    restored = restore_evicted(atlas, evicted)
    assert restored.content == evicted.content and restored.metadata == {"src": "chat"}
    assert restored.session_id == "s1"
    with pytest.raises(InputError, match="not an eviction"):
        restore_evicted(atlas, database.events.query(EventFilter(types=("added",))).items[0])


def test_redacted_evictions_cannot_be_restored(database) -> None:  # type: ignore[no-untyped-def]
    atlas, clock = build()
    with EventSink(database, log_content="redacted").attach(atlas) as sink:
        for t in TEXTS:
            clock.advance(60)
            atlas.add(t, session_id="s1")
        sink.flush()
    (evicted,) = database.events.query(EventFilter(types=("evicted",))).items
    assert evicted.content is None and evicted.payload["content_length"] > 0
    with pytest.raises(InputError, match="no logged content"):
        restore_evicted(atlas, evicted)
    with database.session() as s:  # no text of any memory anywhere in the log
        rows = s.execute(text("SELECT content, payload FROM events")).all()
    assert not any(t in repr(rows) for t in TEXTS)


def test_erase_reaches_tables_nobody_registered(database) -> None:  # type: ignore[no-untyped-def]
    with database.session() as s:
        s.execute(text("CREATE TABLE notes_of_others (id INTEGER PRIMARY KEY, session_id TEXT)"))
        s.execute(text("INSERT INTO notes_of_others VALUES (1, 's1'), (2, 's2')"))
    database.events.append(
        [EventRecord(atlas_id="a", type="added", at=datetime.now(UTC), session_id="s1")]
    )
    deleted = database.erase(session_id="s1")
    assert deleted["notes_of_others"] == 1 and deleted["events"] == 1
    with database.session() as s:
        assert s.execute(text("SELECT session_id FROM notes_of_others")).scalars().all() == ["s2"]


def test_a_follower_ends_in_the_recording_agents_exact_state(db_url: str) -> None:
    """The real recorder and store: events enriched, written by the sink, read back in
    order, applied to a checkpoint copy; compared memory by memory and edge by edge."""
    atlas, clock = mixed_agent(64)
    recorder = LiveRecorder(atlas, open_database(db_url), name="mixed", snapshot_every=3600)
    reader = open_database(db_url)
    try:
        follower = AtlasFollower(reader, recorder.atlas_id, embedder=HashingEmbedder(64))
        mixed_workload(atlas, clock, 1)
        recorder.sink.flush()
        assert follower.catch_up() and atlas_differences(atlas, follower.atlas) == []  # type: ignore[arg-type]
        recorder.snapshot()  # a checkpoint half-way: this follower does not need it
        mixed_workload(atlas, clock, 2)
        recorder.sink.flush()
        follower.catch_up()
        assert follower.stalled is None and follower.reloads == 1
        assert follower.seq == recorder.sink.sequence == follower.applied
        assert atlas_differences(atlas, follower.atlas) == []  # type: ignore[arg-type]
        late = AtlasFollower(reader, recorder.atlas_id, embedder=HashingEmbedder(64))
        late.catch_up()  # starts from the half-way checkpoint
        assert late.checkpoint is not None and 0 < late.applied < follower.applied
        assert atlas_differences(atlas, late.atlas) == []  # type: ignore[arg-type]
    finally:
        recorder.close()
        reader.close()
