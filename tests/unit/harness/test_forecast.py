from __future__ import annotations

import numpy as np
import pytest

from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import ManualClock
from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError
from memory_core.harness.forecast import forecast

WORDS = [
    "apple",
    "brick",
    "cloud",
    "drum",
    "eagle",
    "fern",
    "grape",
    "harbor",
    "igloo",
    "jungle",
    "kettle",
    "lemon",
]


def atlas_with_memories(**overrides) -> tuple[ElasticMemoryAtlas, ManualClock]:
    config = AtlasConfig.from_mapping(
        {
            "association_gain": 0.0,
            "working_memory_size": 2,
            "decay_interval_seconds": 0.0,
            "orphan_grace_hours": 0.0,
            **overrides,
        }
    )
    clock = ManualClock()
    atlas = ElasticMemoryAtlas(config, embedder=HashingEmbedder(dim=128), clock=clock)
    for i, word in enumerate(WORDS):
        clock.advance(600)
        atlas.add(f"the {word} number {i} " + "note " * (i % 4), importance=(i % 5) / 4)
    atlas.pin(atlas.nodes()[0].id)
    return atlas, clock


def test_forecast_does_not_touch_the_atlas() -> None:
    atlas, clock = atlas_with_memories()
    before = [(n.id, n.weight, n.strength) for n in atlas.nodes()]
    now = clock.now()
    forecast(atlas, hours=100, steps=20)
    assert [(n.id, n.weight, n.strength) for n in atlas.nodes()] == before
    assert clock.now() == now


@pytest.mark.parametrize("hours", [6.0, 30.0, 90.0])
def test_forecast_agrees_with_the_engine(hours: float) -> None:
    atlas, clock = atlas_with_memories(decay_rate=0.08)
    predicted = forecast(atlas, hours=hours, steps=1)
    clock.advance(hours * 3600)
    gone_before = {n.id for n in atlas.nodes()}
    atlas.decay()
    actually = gone_before - {n.id for n in atlas.nodes()}
    assert {e.node_id for e in predicted.evictions} == actually
    assert predicted.remaining[-1] == len(atlas)


def test_forecast_is_monotone_and_keeps_pinned_and_working() -> None:
    atlas, _ = atlas_with_memories(decay_rate=0.2)
    f = forecast(atlas, hours=500, steps=50)
    assert np.all(np.diff(f.remaining) <= 0)
    assert len(f.hours) == 50 and f.hours[-1] == pytest.approx(500)
    kept = {n.id for n in atlas.nodes()} - {e.node_id for e in f.evictions}
    working = set(atlas.session_info("default")["working"])
    assert {atlas.nodes()[0].id} | working <= kept
    assert [e.hours for e in f.evictions] == sorted(e.hours for e in f.evictions)
    assert sum(f.by_reason().values()) == len(f.evictions)


def test_a_faster_decay_forecasts_more_evictions() -> None:
    atlas, _ = atlas_with_memories(decay_rate=0.01)
    slow = forecast(atlas, hours=48)
    fast = forecast(
        atlas, hours=48, config=AtlasConfig.from_mapping({"decay_rate": 0.5}, atlas.config)
    )
    assert len(fast.evictions) > len(slow.evictions)


def test_bad_arguments_name_the_field() -> None:
    atlas, _ = atlas_with_memories()
    with pytest.raises(InputError, match="hours"):
        forecast(atlas, hours=0)
    with pytest.raises(InputError, match="steps"):
        forecast(atlas, hours=5, steps=0)


def test_empty_atlas() -> None:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(dim=16), clock=ManualClock())
    f = forecast(atlas, hours=10, steps=5)
    assert f.evictions == () and list(f.remaining) == [0] * 5
