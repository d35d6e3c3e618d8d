"""Applying recorded events to a checkpoint copy ends in exactly the agent's atlas."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder
from memory_core.engine.apply import NotReplayableError, apply_events, recording, save_checkpoint
from memory_core.engine.events import AtlasEvent, MemoryAdded
from memory_core.testing import atlas_differences

DIM = 64


class TickingClock:
    """Moves 1 ms on every read, like a wall clock: an event's ``at`` is never the time
    its change was computed at, so a follower must not derive values from ``at``."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start

    def now(self) -> float:
        self.t += 0.001
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def agent() -> tuple[ElasticMemoryAtlas, TickingClock]:
    clock = TickingClock()
    config = AtlasConfig(
        memory_watermark=1.0,
        max_nodes=60,
        working_memory_size=3,
        decay_interval_seconds=0,
        orphan_grace_hours=0.5,
        link_threshold=0.2,
    )
    return ElasticMemoryAtlas(config, embedder=HashingEmbedder(DIM), clock=clock), clock


WORDS = [
    "tea",
    "coffee",
    "deploy",
    "key",
    "friday",
    "lisbon",
    "peanut",
    "build",
    "server",
    "debian",
    "alice",
    "bob",
    "carol",
]


def text(i: int) -> str:
    return " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5)) + f" note {i % 17}"


def first_half(atlas: ElasticMemoryAtlas, clock: TickingClock) -> None:
    for i in range(40):
        atlas.add(
            text(i),
            session_id=f"s{i % 4}",
            metadata={"i": i},
            provenance=[f"turn-{i}"],
            ttl_hours=1.0 if i % 9 == 0 else None,
        )
        clock.advance(30)
    atlas.add(text(3), session_id="s3")  # a duplicate folds into its twin


def second_half(atlas: ElasticMemoryAtlas, clock: TickingClock) -> None:
    ids = [n.id for n in atlas.nodes()]
    for q in ("tea lisbon", "deploy key", "peanut bob"):
        atlas.retrieve(q, top_k=4, cross_session=True)
    atlas.link(ids[0], ids[5], "causal", 0.7)
    atlas.pin(ids[1])
    atlas.set_confidence(ids[2], 0.4)
    atlas.set_status(ids[3], "deprecated", reason="stale")
    atlas.forget(ids[4])
    atlas.delete(ids[6])
    for i in range(40, 90):  # past max_nodes: capacity evictions
        atlas.add(text(i), session_id=f"s{i % 5}", links_to=[ids[1]] if i == 50 else None)
        clock.advance(60)
    atlas.add(text(88), session_id="s3", provenance=["again"])  # folds into its twin
    atlas.reconfigure(dataclasses.replace(atlas.config, merge_threshold=0.6))
    atlas.merge_duplicates()
    atlas.summarize_session("s1")
    atlas.end_session("s2", "fade")
    atlas.end_session("s0", "purge")
    atlas.end_session("s3", "keep")
    clock.advance(3 * 3600)
    atlas.decay()
    atlas.add("after the decay pass", session_id="s9", metadata={"late": True})
    atlas.retrieve("after the decay", top_k=2, session_id="s9")


def follow(tmp_path: Path) -> tuple[ElasticMemoryAtlas, ElasticMemoryAtlas, list[AtlasEvent]]:
    atlas, clock = agent()
    events: list[AtlasEvent] = []
    atlas.subscribe(recording(atlas, events.append))
    first_half(atlas, clock)
    path, seen = save_checkpoint(atlas, tmp_path / "checkpoint.npz", lambda: len(events))
    second_half(atlas, clock)
    copy = ElasticMemoryAtlas.load_snapshot(path, embedder=HashingEmbedder(DIM))
    apply_events(copy, events[seen:])
    return atlas, copy, events[seen:]


def test_the_followed_copy_is_exactly_the_agents_atlas(tmp_path: Path) -> None:
    atlas, copy, events = follow(tmp_path)
    kinds = {e.type for e in events}
    assert {"added", "reinforced", "evicted", "merged", "status", "summary", "updated"} <= kinds
    assert {"linked", "config", "session_end", "decay"} <= kinds
    assert atlas_differences(atlas, copy) == []


def test_a_follower_from_the_empty_atlas_needs_no_checkpoint() -> None:
    atlas, clock = agent()
    events: list[AtlasEvent] = []
    atlas.subscribe(recording(atlas, events.append))
    first_half(atlas, clock)
    second_half(atlas, clock)
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
    atlas, _clock = agent()
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
