"""Applying recorded events to a checkpoint copy ends in exactly the agent's atlas."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder
from memory_core.engine.apply import NotReplayableError, apply_events, recording, save_checkpoint
from memory_core.engine.events import AtlasEvent, MemoryAdded
from memory_core.testing import atlas_differences, mixed_agent, mixed_workload

DIM = 64


def follow(tmp_path: Path) -> tuple[ElasticMemoryAtlas, ElasticMemoryAtlas, list[AtlasEvent]]:
    atlas, clock = mixed_agent(DIM)
    events: list[AtlasEvent] = []
    atlas.subscribe(recording(atlas, events.append))
    mixed_workload(atlas, clock, 1)
    saved = save_checkpoint(atlas, tmp_path / "checkpoint.npz", lambda: len(events))
    assert saved.position == len(events) and saved.nodes == len(atlas)
    mixed_workload(atlas, clock, 2)
    copy = ElasticMemoryAtlas.load_snapshot(saved.path, embedder=HashingEmbedder(DIM))
    apply_events(copy, events[saved.position :])
    return atlas, copy, events[saved.position :]


def test_the_followed_copy_is_exactly_the_agents_atlas(tmp_path: Path) -> None:
    atlas, copy, events = follow(tmp_path)
    kinds = {e.type for e in events}
    assert {"added", "reinforced", "evicted", "merged", "status", "summary", "updated"} <= kinds
    assert {"linked", "config", "session_end", "decay"} <= kinds
    assert atlas_differences(atlas, copy) == []


def test_a_follower_from_the_empty_atlas_needs_no_checkpoint() -> None:
    atlas, clock = mixed_agent(DIM)
    events: list[AtlasEvent] = []
    atlas.subscribe(recording(atlas, events.append))
    mixed_workload(atlas, clock, 1)
    mixed_workload(atlas, clock, 2)
    copy = ElasticMemoryAtlas(atlas.config, embedder=HashingEmbedder(DIM))
    # the recorded reconfigure happens later; start from the agent's first config
    copy.reconfigure(
        dataclasses.replace(atlas.config, merge_threshold=AtlasConfig().merge_threshold)
    )
    assert apply_events(copy, events) == len(events)
    assert atlas_differences(atlas, copy) == []


def test_differences_are_found(tmp_path: Path) -> None:
    atlas, copy, _ = follow(tmp_path)
    victim = copy.nodes()[0].id
    copy.pin(victim, not copy.get(victim).pinned)
    assert any(victim in d for d in atlas_differences(atlas, copy))


def test_events_recorded_without_enrichment_are_refused(tmp_path: Path) -> None:
    atlas, _ = mixed_agent(DIM)
    plain: list[AtlasEvent] = []
    atlas.subscribe(plain.append)
    atlas.add("one plain memory", session_id="s")
    copy = ElasticMemoryAtlas(atlas.config, embedder=HashingEmbedder(DIM))
    with pytest.raises(NotReplayableError, match="added"):
        apply_events(copy, plain)
    assert len(copy) == 0


def test_an_event_about_an_unknown_memory_is_a_gap(tmp_path: Path) -> None:
    atlas, _copy, events = follow(tmp_path)
    later = [e for e in events if not isinstance(e, MemoryAdded)]
    fresh = ElasticMemoryAtlas(atlas.config, embedder=HashingEmbedder(DIM))
    with pytest.raises(NotReplayableError, match="not in the copy"):
        apply_events(fresh, later)
