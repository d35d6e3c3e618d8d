"""Logged events decode to what the engine published; a follower applies them, stalls
at a gap and comes back through a newer checkpoint."""

from __future__ import annotations

import dataclasses

import pytest

from memory_core import ElasticMemoryAtlas, HashingEmbedder
from memory_core.engine.apply import recording
from memory_core.engine.events import AtlasEvent, DecayApplied, MemoryAdded
from memory_core.store import MemoryStore
from memory_core.store.follow import AtlasFollower, decode
from memory_core.store.live import LiveRecorder
from memory_core.store.privacy import EventEncoder, LogContent
from memory_core.testing import atlas_differences, mixed_agent, mixed_workload

DIM = 64


def stored(encoder: EventEncoder, event: AtlasEvent, seq: int = 1):  # type: ignore[no-untyped-def]
    store = MemoryStore()
    store.events.append([encoder.encode(event, seq=seq)])
    (found,) = store.events.after(encoder.atlas_id, 0)
    return found


def test_every_logged_event_decodes_to_the_published_one() -> None:
    atlas, clock = mixed_agent(DIM)
    events: list[AtlasEvent] = []
    atlas.subscribe(recording(atlas, events.append))
    mixed_workload(atlas, clock, 1)
    mixed_workload(atlas, clock, 2)
    encoder = EventEncoder("a1")
    assert {e.type for e in events} >= {"added", "merged", "summary", "session_end", "decay"}
    for event in events:
        expected = (
            dataclasses.replace(event, weights={}) if isinstance(event, DecayApplied) else event
        )
        assert decode(stored(encoder, event)) == expected


def test_redacted_logs_keep_no_embedding_and_cannot_be_applied() -> None:
    atlas, _ = mixed_agent(DIM)
    events: list[AtlasEvent] = []
    atlas.subscribe(recording(atlas, events.append))
    atlas.add("Alice's phone is 555 0100", session_id="s")
    (added,) = events
    assert isinstance(added, MemoryAdded) and added.embedding
    for policy in (LogContent.REDACTED, LogContent.NONE):
        record = stored(EventEncoder("a1", policy), added)
        assert "embedding" not in record.payload
        decoded = decode(record)
        assert isinstance(decoded, MemoryAdded) and decoded.embedding == b""


@pytest.fixture
def recorder() -> LiveRecorder:
    atlas, _ = mixed_agent(DIM)
    return LiveRecorder(atlas, MemoryStore(), name="agent", snapshot_every=3600)  # type: ignore[arg-type]


def test_a_follower_applies_events_and_reloads_only_after_a_gap(recorder: LiveRecorder) -> None:
    atlas, store = recorder.atlas, recorder.db
    follower = AtlasFollower(store, recorder.atlas_id, embedder=HashingEmbedder(DIM))
    for i in range(5):
        atlas.add(f"fact number {i} about the trip", session_id="s")
    recorder.sink.flush()
    assert follower.catch_up() and follower.seq == recorder.sink.sequence
    assert follower.reloads == 1 and atlas_differences(atlas, follower.atlas) == []  # type: ignore[arg-type]
    assert not follower.catch_up()  # nothing new

    for i in range(3):
        atlas.add(f"later fact {i} about the hotel", session_id="s")
    recorder.sink.flush()
    missing = follower.seq + 2
    events = store.events._events  # type: ignore[attr-defined]
    del events[next(k for k, e in events.items() if e.seq == missing)]  # a dropped event
    follower.catch_up()
    assert follower.stalled is not None and follower.seq == missing - 1

    recorder.snapshot()  # the next checkpoint closes the gap
    atlas.add("a fact after the checkpoint", session_id="s")
    recorder.sink.flush()
    assert follower.catch_up() and follower.stalled is None and follower.reloads == 2
    assert atlas_differences(atlas, follower.atlas) == []  # type: ignore[arg-type]
    recorder.close()


def test_a_far_newer_checkpoint_is_loaded_instead_of_its_events(recorder: LiveRecorder) -> None:
    atlas = recorder.atlas
    follower = AtlasFollower(
        recorder.db, recorder.atlas_id, embedder=HashingEmbedder(DIM), reload_after=3
    )
    follower.catch_up()
    for i in range(6):
        atlas.add(f"fact number {i} about the trip", session_id="s")
    recorder.snapshot()
    recorder.sink.flush()
    follower.catch_up()
    assert follower.reloads == 2 and follower.applied == 0
    assert atlas_differences(atlas, follower.atlas) == []  # type: ignore[arg-type]
    recorder.close()


def test_a_copy_of_an_atlas_recorded_without_a_stream_follows_its_snapshots() -> None:
    store = MemoryStore()
    atlas = ElasticMemoryAtlas(embedder=HashingEmbedder(DIM))
    from memory_core.store.recording import record_snapshot

    record_snapshot(atlas, store.snapshots, atlas_id="old", label="live")
    follower = AtlasFollower(store, "old", embedder=HashingEmbedder(DIM))
    assert follower.catch_up() and follower.stalled == "the recorder logs no stream"
    atlas.add("one memory", session_id="s")
    record_snapshot(atlas, store.snapshots, atlas_id="old", label="live")
    assert follower.catch_up() and follower.atlas is not None and len(follower.atlas) == 1


def test_a_checkpoint_pruned_while_loading_is_replaced_by_the_newest(
    recorder: LiveRecorder,
) -> None:
    store = recorder.db
    first = store.snapshots.list(atlas_id=recorder.atlas_id).items[0]
    recorder.atlas.add("a fact before the second checkpoint", session_id="s")
    recorder.snapshot()
    follower = AtlasFollower(store, recorder.atlas_id, embedder=HashingEmbedder(DIM))
    real_newest = follower._newest
    calls = iter([first])  # the first listing still names the pruned checkpoint
    follower._newest = lambda: next(calls, None) or real_newest()  # type: ignore[method-assign]
    store.snapshots.delete(first.id)
    recorder.sink.flush()
    assert follower.catch_up() and follower.checkpoint is not None
    assert follower.checkpoint.id != first.id
    assert atlas_differences(recorder.atlas, follower.atlas) == []  # type: ignore[arg-type]
    recorder.close()
