"""The default guard on the real MiniLM: the cross-encoder's second look, off the add,
queues contradictions the first look (rules and pair model) left open and would have
missed; a scan finds the same. Not timed (``make bench`` is)."""

from __future__ import annotations

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.policy import ResolutionPolicy
from memory_core.embedding.minilm import MiniLMEmbedder

pytestmark = [pytest.mark.integration]

MISSED = [  # the pair model is unsure (p in the open band) and says no; the encoder says yes
    ("I usually vote by mail.", "I always vote in person."),
    ("I drink my coffee black.", "These days I take my coffee with oat milk."),
]


def _atlas() -> ElasticMemoryAtlas:
    return ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=MiniLMEmbedder(), clock=ManualClock(0.0)
    )


def _later(atlas: ElasticMemoryAtlas) -> None:
    clock = atlas.clock
    assert isinstance(clock, ManualClock)
    clock.advance(60.0)


def test_the_second_look_queues_what_the_first_look_missed() -> None:
    atlas = _atlas()
    guard = ConflictGuard(atlas, policy=ResolutionPolicy(auto_score=0.8))  # a model alone: review
    for old, new in MISSED:
        guard.add(old, session_id="s")
        _later(atlas)
        result = guard.add(new, session_id="s")
        assert result.decisions == ()  # the first look found no contradiction ...
        assert len(result.second_look) == 1  # ... and left the pair open
        _later(atlas)
    assert guard.settle()
    items = guard.queue.items()
    assert sorted((i.old_text, i.new_text) for i in items) == sorted(MISSED)
    assert all(i.reason.startswith("second look: cross-encoder p=") for i in items)
    assert guard.second_look.errors == () and guard.second_look.overflowed == 0
    assert guard.close()


def test_a_scan_gives_the_same_pairs_their_second_look() -> None:
    atlas = _atlas()
    for old, new in MISSED:
        atlas.add(old, session_id="s")
        _later(atlas)
        atlas.add(new, session_id="s")
        _later(atlas)
    items = ConflictGuard(atlas).scan()
    assert sorted((i.old_text, i.new_text) for i in items) == sorted(MISSED)
