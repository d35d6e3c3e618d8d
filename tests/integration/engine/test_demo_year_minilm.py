"""Issue #25: play trip-approval under the demo preset, skip a year, and what is left is
what a person would keep — the trip's cap, dates and destination (in its own turns or a
summary carrying them) — while the pleasantries are gone. Engine level, real MiniLM."""

from __future__ import annotations

import pytest

from memory_core import ElasticMemoryAtlas, ManualClock, MiniLMEmbedder
from memory_core.dashboard.demo import DEMO_CONFIG, DemoPlayer, sample_files
from memory_core.dashboard.live import FastForwardClock

pytestmark = pytest.mark.integration

PLEASANTRIES = (
    "Thanks, that's everything for now.",
    "Thanks. I'll check back in a couple of days.",
    "Then do the hotel first, please.",
    "And the trains?",
    "Enjoy the fair!",
)


def test_a_skipped_year_keeps_the_trip_and_forgets_the_pleasantries() -> None:
    clock = FastForwardClock(ManualClock(1.75e9))
    atlas = ElasticMemoryAtlas(DEMO_CONFIG, embedder=MiniLMEmbedder(), clock=clock)
    player = DemoPlayer(atlas, clock)
    player.load(sample_files()["trip-approval"])
    while player.step() is not None:
        pass
    played = len(atlas)
    clock.advance(8760 * 3600.0)
    atlas.decay()
    texts = [n.content for n in atlas.nodes()]
    assert len(texts) < played / 2
    for needle in ("6,000", "9th to the 12th", "Munich"):  # cap, dates, destination
        assert any(needle in t for t in texts), needle
    # a summary may quote a pleasantry among the trip's turns; no memory is one alone
    alone = [t for t in texts if any(t.endswith(p) for p in PLEASANTRIES)]
    assert alone == []
