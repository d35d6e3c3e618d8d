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


@pytest.fixture
def topics() -> list[str]:
    """Thirty topics that share no template: lines differing only in numbers would form
    one family and fold (issue #25), which tests of drawing caps must not trigger."""
    return [
        "trains",
        "hotels",
        "violins",
        "gardening",
        "taxes",
        "chess",
        "sailing",
        "pottery",
        "cheese",
        "glaciers",
        "tennis",
        "volcanoes",
        "knitting",
        "opera",
        "cacti",
        "bridges",
        "comets",
        "poetry",
        "saddles",
        "lighthouses",
        "mushrooms",
        "tango",
        "beekeeping",
        "origami",
        "falconry",
        "sushi",
        "canoes",
        "orchids",
        "telescopes",
        "jazz",
    ]
