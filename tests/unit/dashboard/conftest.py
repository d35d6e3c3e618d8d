"""Atlases on the hashing embedder and a manual clock, and a live system without a database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_core.dashboard.live import FastForwardClock, LiveSystem
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.config import AtlasConfig
from memory_core.testing import HashingEmbedder, ManualClock

START = 1_750_000_000.0


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def atlas(clock: ManualClock) -> ElasticMemoryAtlas:
    return ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(), clock=clock)


@pytest.fixture
def system() -> Iterator[LiveSystem]:
    live = LiveSystem(embedder=HashingEmbedder(), clock=FastForwardClock(ManualClock(START)))
    yield live
    live.close()
