"""Resource limits: capacity, content size, drawn graph nodes and the RAM watermark.

The watermark test uses the real ``psutil`` reading: the watermark is set just below the
process's actual share of RAM (allocating ballast when the process is smaller than the
lowest allowed watermark), so the next decay pass must evict and announce the pressure.
"""

from __future__ import annotations

import numpy as np
import psutil
import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.dashboard.graph_view import MAX_DRAWN_NODES, build_graph
from memory_core.engine.events import MemoryPressure
from memory_core.errors import ConfigError, InputError
from memory_core.testing import EventRecorder

from .conftest import START, build, distinct_texts

LOWEST_WATERMARK = 0.05  # AtlasConfig's lower bound
MAX_BALLAST = 3 * 2**30


def test_capacity_holds_through_single_and_batched_writes() -> None:
    atlas, _ = build(max_nodes=25, working_memory_size=2, link_threshold=1.0)
    for i, text in enumerate(distinct_texts(120, "memory about")):
        atlas.add(text, session_id=f"s{i % 3}")
        assert len(atlas) <= 25
    atlas.add_many(distinct_texts(60, "batch note on"), session_id="b")
    assert len(atlas) == 25
    assert atlas.stats()["evicted"]["capacity"] >= 155


def test_content_size_limit_names_the_field_and_the_limit() -> None:
    atlas, _ = build(max_content_chars=1_000)
    atlas.add("x" * 1_000, session_id="s")
    before = atlas.stats()["nodes"]
    for call in (
        lambda: atlas.add("y" * 1_001, session_id="s"),
        lambda: atlas.add_many(["fine", "z" * 5_000], session_id="s"),
        lambda: atlas.retrieve("q" * 1_001),
    ):
        with pytest.raises(InputError) as caught:
            call()
        assert "1000" in str(caught.value) and "max_content_chars" in str(caught.value)
    assert atlas.stats()["nodes"] == before
    with pytest.raises(ConfigError) as bad:
        AtlasConfig(max_content_chars=10_000_000)
    assert "max_content_chars" in str(bad.value)


def test_the_graph_never_draws_more_than_its_cap() -> None:
    atlas, _ = build(max_nodes=None, link_threshold=1.0, working_memory_size=0, merge_threshold=1.0)
    atlas.add_many(distinct_texts(MAX_DRAWN_NODES + 200), session_id="s")
    assert len(atlas) == MAX_DRAWN_NODES + 200
    nodes, edges = atlas.nodes(), atlas.edges()
    cfg = atlas.config
    view = build_graph(
        nodes, edges, weight_range=(cfg.weight_floor, cfg.weight_cap), max_nodes=MAX_DRAWN_NODES
    )
    assert len(view.drawn) == MAX_DRAWN_NODES and view.hidden == 200
    assert "200 weaker memories are hidden" in view.note
    with pytest.raises(InputError) as caught:
        build_graph(nodes, edges, weight_range=(0.1, 3.0), max_nodes=MAX_DRAWN_NODES + 1)
    assert "max_nodes" in str(caught.value)


def test_a_low_watermark_triggers_aggressive_cleanup_and_a_pressure_event() -> None:
    process, total = psutil.Process(), psutil.virtual_memory().total
    needed = int(LOWEST_WATERMARK * total) - process.memory_info().rss + 64 * 2**20
    if needed > MAX_BALLAST:
        pytest.skip(f"would need {needed >> 20} MiB of ballast to cross a 5% watermark")
    ballast = np.ones(max(needed, 0) // 8, dtype=np.float64)  # touched: really resident
    used = process.memory_info().rss / total
    watermark = max(LOWEST_WATERMARK, round(used - 0.01, 3))
    assert used >= watermark
    atlas = ElasticMemoryAtlas(
        AtlasConfig(
            memory_watermark=watermark,
            link_threshold=1.0,
            working_memory_size=0,
            merge_threshold=1.0,
        ),
        embedder=HashingEmbedder(64),
        clock=ManualClock(START),
    )
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    atlas.add_many(distinct_texts(50, "memory on"), session_id="s")
    pinned = atlas.add("never evict the pinned one", session_id="s", pinned=True)
    before = len(atlas)
    expected = int((before - 1) * 0.1)  # the weakest tenth of the unpinned memories
    assert expected >= 3
    counts = atlas.decay()
    del ballast
    assert counts.get("memory_pressure") == expected
    assert len(atlas) == before - expected and pinned.id in atlas
    (event,) = [e for e in recorder.events if isinstance(e, MemoryPressure)]
    assert event.evicted == expected and event.rss_fraction >= watermark
    print(f"\nwatermark {watermark:.3f}, process at {event.rss_fraction:.3f}: evicted {expected}")
