"""Forgetting: threshold, orphan, TTL and capacity eviction; session ends; merging; pressure."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memory_core import (
    AtlasConfig,
    CachedEmbedder,
    ElasticMemoryAtlas,
    EvictionReason,
    ExtractiveSummarizer,
    InputError,
    MemoryKind,
    MemoryStatus,
    NotFoundError,
    Relation,
    SummaryItem,
    composite_weight,
)
from memory_core.engine import forgetting
from memory_core.engine.forgetting import eviction_masks
from memory_core.testing import EventRecorder

from .conftest import AtlasFactory, CountingEmbedder, invariants

HOUR = 3600.0

SEED_LINEAR: dict[str, Any] = {
    "decay_strategy": "linear",
    "decay_rate": 0.05,
    "frequency_gain": 0.0,
    "recency_gain": 0.0,
    "association_gain": 0.0,
    "base_weight_min": 1.0,
    "base_weight_max": 1.0,
    "weight_floor": 0.1,
    "evict_threshold": 0.15,
    "orphan_threshold": 0.0,
    "working_memory_size": 0,
    "decay_interval_seconds": 0.0,
    "link_threshold": 1.0,
    "link_previous": False,
}


def seed_atlas(make_atlas: AtlasFactory, **overrides: Any) -> tuple[ElasticMemoryAtlas, Any]:
    return make_atlas(**{**SEED_LINEAR, **overrides})


def evictions(recorder: EventRecorder) -> dict[str, str]:
    return {e.node_id: e.reason.value for e in recorder.of_type("evicted")}  # type: ignore[attr-defined]


# ---------------------------------------------------------------- decay pass
def test_eviction_below_threshold_follows_the_seed_curve(make_atlas: AtlasFactory) -> None:
    atlas, clock = seed_atlas(make_atlas)
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    node = atlas.add("red apples", session_id="s")
    pinned = atlas.add("blue whales", session_id="s", pinned=True)
    clock.advance(16 * HOUR)  # 1.0 - 0.05 * 16 = 0.2: not below 0.15
    assert atlas.decay() == {}
    assert atlas.get(node.id).weight == pytest.approx(0.2)
    clock.advance(2 * HOUR)  # 0.1
    assert atlas.decay() == {"below_threshold": 1}
    assert node.id not in atlas
    assert evictions(recorder) == {node.id: "below_threshold"}
    assert atlas.get(pinned.id).weight == pytest.approx(0.1)  # floor, never evicted
    assert atlas.stats()["evicted"] == {"below_threshold": 1}
    invariants(atlas)


def test_working_memory_tier_is_protected(make_atlas: AtlasFactory) -> None:
    atlas, clock = seed_atlas(make_atlas, working_memory_size=2)
    old = atlas.add("red apples", session_id="s")
    mid = atlas.add("blue whales", session_id="s")
    new = atlas.add("green grass", session_id="s")
    other = atlas.add("yellow sun", session_id="t")
    clock.advance(100 * HOUR)
    atlas.decay()
    assert old.id not in atlas
    assert mid.id in atlas
    assert new.id in atlas
    assert other.id in atlas  # the working tier is per session
    assert atlas.session_info("s")["working"] == [mid.id, new.id]


def test_orphans_go_after_grace_linked_ones_stay(make_atlas: AtlasFactory) -> None:
    atlas, clock = seed_atlas(
        make_atlas, orphan_threshold=0.5, orphan_grace_hours=1.0, base_weight_min=0.3
    )
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    lonely = atlas.add("red apples", session_id="s", importance=0.0)  # strength 0.3
    a = atlas.add("blue whales", session_id="s", importance=0.0)
    b = atlas.add("green grass", session_id="s", importance=0.0)
    atlas.link(a.id, b.id)
    clock.advance(0.5 * HOUR)
    assert atlas.decay() == {}  # too young to be an orphan
    clock.advance(0.5 * HOUR)
    assert atlas.decay() == {"orphan": 1}
    assert evictions(recorder) == {lonely.id: "orphan"}
    assert a.id in atlas
    assert b.id in atlas


def test_ttl_expiry(make_atlas: AtlasFactory) -> None:
    atlas, clock = seed_atlas(make_atlas)
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    short = atlas.add("gate B12 today", session_id="s", ttl_hours=1.0)
    kept = atlas.add("pinned until revoked", session_id="s", ttl_hours=1.0, pinned=True)
    clock.advance(HOUR - 1)
    assert atlas.decay() == {}
    clock.advance(1)
    assert atlas.decay() == {"expired": 1}
    assert evictions(recorder) == {short.id: "expired"}
    assert kept.id in atlas


def test_association_raises_linked_weights(make_atlas: AtlasFactory) -> None:
    atlas, clock = seed_atlas(make_atlas, association_gain=0.5, decay_rate=0.01)
    hub = atlas.add("hub", session_id="s")
    spoke = atlas.add("spoke", session_id="s")
    alone = atlas.add("alone", session_id="s")
    atlas.link(hub.id, spoke.id, strength=0.8)
    clock.advance(10 * HOUR)
    atlas.decay()
    base = 1.0 - 0.01 * 10
    # one step: assoc = strength * neighbour weight / neighbour degree (both degree 1)
    assert atlas.get(alone.id).weight == pytest.approx(base)
    assert atlas.get(hub.id).weight == pytest.approx(base + 0.5 * 0.8 * base, rel=1e-6)


def test_automatic_decay_after_the_interval(make_atlas: AtlasFactory) -> None:
    atlas, clock = seed_atlas(make_atlas, decay_interval_seconds=600.0)
    atlas.add("a", session_id="s")
    clock.advance(599)
    atlas.add("b", session_id="s")
    assert atlas.stats()["decay_passes"] == 0
    clock.advance(1)
    atlas.retrieve("a", session_id="s")
    assert atlas.stats()["decay_passes"] == 1


# ---------------------------------------------------------------- capacity
def test_capacity_evicts_lowest_weight_never_pinned(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=3, working_memory_size=0, link_threshold=1.0)
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    low = atlas.add("red apples", session_id="s", importance=0.0, pinned=True)
    mid = atlas.add("blue whales", session_id="s", importance=0.5)
    high = atlas.add("green grass", session_id="s", importance=1.0)
    newest = atlas.add("yellow sun", session_id="s", importance=0.0)
    assert len(atlas) == 3
    assert evictions(recorder) == {mid.id: "capacity"}
    assert {low.id, high.id, newest.id} == {n.id for n in atlas.nodes()}
    # the newcomer itself is never the victim
    another = atlas.add("purple rain", session_id="s", importance=0.0)
    assert another.id in atlas
    assert newest.id not in atlas
    invariants(atlas)


def test_capacity_prefers_evicting_outside_the_working_tier(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=2, working_memory_size=2, link_threshold=1.0)
    strong_old = atlas.add("red apples", session_id="s", importance=1.0)
    weak = atlas.add("blue whales", session_id="s", importance=0.0)
    assert weak.weight < strong_old.weight
    atlas.add("green grass", session_id="s", importance=0.0)
    # strong_old has the higher weight but is the only one outside the working tier
    assert strong_old.id not in atlas
    assert weak.id in atlas
    assert len(atlas) == 2


def test_all_pinned_can_exceed_capacity(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=2, link_threshold=1.0)
    for text in ("red apples", "blue whales", "green grass"):
        atlas.add(text, session_id="s", pinned=True)
    assert len(atlas) == 3  # pinned are never evicted, not even for capacity


# ---------------------------------------------------------------- ending sessions
def test_end_session_purge_leaves_nothing(make_atlas: AtlasFactory) -> None:
    embedder = CachedEmbedder(CountingEmbedder())
    atlas, _ = make_atlas(embedder=embedder, link_threshold=0.1)
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    texts = ["red apples", "red cars", "red roses"]
    purged = [atlas.add(t, session_id="s").id for t in texts]
    survivor = atlas.add("red wine", session_id="t", links_to=[purged[0]])
    assert atlas.end_session("s", mode="purge") == 3
    assert atlas.sessions() == ["t"]
    assert set(evictions(recorder)) == set(purged)
    assert set(evictions(recorder).values()) == {"session_purge"}
    for text in texts:
        assert not embedder.cache.contains(embedder.name, text)
    assert embedder.cache.contains(embedder.name, "red wine")
    assert atlas.edges(survivor.id) == []
    assert [h.node.id for h in atlas.retrieve("red", top_k=10)] == [survivor.id]
    assert atlas.retrieve("red", session_id="s") == []
    ended = recorder.of_type("session_end")[0]
    assert (ended.mode, ended.affected) == ("purge", 3)  # type: ignore[attr-defined]
    with pytest.raises(NotFoundError):
        atlas.end_session("s")
    invariants(atlas)
    # the id can be reused for a fresh session
    atlas.add("new start", session_id="s")
    assert atlas.nodes("s")[0].content == "new start"


def test_end_session_fade_lets_decay_reclaim(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(fade_strength=0.05, decay_interval_seconds=0, link_threshold=1.0)
    faded = [atlas.add(t, session_id="s").id for t in ("red apples", "blue whales")]
    pinned = atlas.add("green grass", session_id="s", pinned=True)
    other = atlas.add("yellow sun", session_id="t")
    before_pinned = atlas.get(pinned.id).strength
    assert atlas.end_session("s", mode="fade") == 3
    assert all(atlas.get(i).strength == pytest.approx(0.05) for i in faded)
    assert atlas.get(pinned.id).strength == before_pinned
    assert atlas.session_info("s")["ended"]
    clock.advance(48 * HOUR)
    atlas.decay()
    assert all(i not in atlas for i in faded)
    assert pinned.id in atlas
    assert other.id in atlas  # its own working tier still protects it


def test_end_session_keep_changes_nothing(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(session_end_mode="keep")
    node = atlas.add("red apples", session_id="s")
    assert atlas.end_session("s") == 1
    after = atlas.get(node.id)
    assert (after.strength, after.weight) == (node.strength, node.weight)
    assert atlas.session_info("s")["ended"]
    with pytest.raises(InputError, match="mode"):
        atlas.end_session("s", mode="explode")


def test_end_session_summarize(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(
        summary_downweight=0.5,
        link_threshold=1.0,
        summarizer=ExtractiveSummarizer(max_items=2),
    )
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    items = [
        ("User is allergic to peanuts", 1.0, ("turn-1",)),
        ("it rained", 0.0, ()),
        ("User prefers window seats", 0.9, ("turn-3", "turn-4")),
        ("lol", 0.0, ()),
    ]
    nodes = []
    for text, imp, prov in items:
        nodes.append(atlas.add(text, session_id="s", importance=imp, provenance=prov))
        clock.advance(60)
    strengths = {n.id: atlas.get(n.id).strength for n in nodes}
    assert atlas.end_session("s", mode="summarize") == 4
    summaries = [n for n in atlas.nodes("s") if n.kind is MemoryKind.SUMMARY]
    assert len(summaries) == 1
    summary = summaries[0]
    assert summary.content == (
        "Session summary: User is allergic to peanuts; User prefers window seats"
    )
    covered = {nodes[0].id, nodes[2].id}
    assert summary.provenance == ("turn-1", "turn-3", "turn-4")
    targets = {e.target_id for e in atlas.edges(summary.id) if e.relation is Relation.SUMMARIZES}
    assert targets == covered
    assert all(e.source_id == summary.id for e in atlas.edges(summary.id))
    for n in nodes:
        factor = 0.5 if n.id in covered else 1.0
        assert atlas.get(n.id).strength == pytest.approx(strengths[n.id] * factor)
    event = recorder.of_type("summary")[0]
    assert set(event.source_ids) == covered  # type: ignore[attr-defined]
    assert event.node_id == summary.id  # type: ignore[attr-defined]
    invariants(atlas)


def test_summary_provenance_falls_back_to_covered_ids(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(link_threshold=1.0)
    a = atlas.add("User is allergic to peanuts", session_id="s")
    b = atlas.add("User prefers window seats", session_id="s")
    summary = atlas.summarize_session("s")
    assert summary is not None
    assert set(summary.provenance) == {a.id, b.id}
    assert summary.kind is MemoryKind.SUMMARY
    atlas.add("only one", session_id="t")
    assert atlas.summarize_session("t") is None


def test_summarize_under_capacity_pressure_keeps_invariants(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=3, working_memory_size=0, link_threshold=1.0)
    for text in ("red apples are sweet", "blue cars drive fast", "green grass grows tall"):
        atlas.add(text, session_id="s")
    atlas.end_session("s", mode="summarize")
    assert len(atlas) == 3
    invariants(atlas)
    summary = next(n for n in atlas.nodes() if n.kind is MemoryKind.SUMMARY)
    for edge in atlas.edges(summary.id):
        assert edge.target_id in atlas


# ---------------------------------------------------------------- merging
def test_merge_duplicates_folds_into_the_older_twin(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(
        reinforce_factor=1.5,
        base_weight_min=0.6,
        base_weight_max=1.4,
        link_threshold=1.0,
        link_previous=False,
        decay_interval_seconds=0,
    )
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    old = atlas.add("User prefers window seats", session_id="s", provenance=["t1"], importance=0.5)
    atlas.set_status(old.id, MemoryStatus.DEPRECATED)  # so the twin is not merged on write
    clock.advance(60)
    twin = atlas.add("User prefers window seats", session_id="s", provenance=["t2"], importance=1.0)
    friend = atlas.add("unrelated friend", session_id="s")
    atlas.link(twin.id, friend.id, Relation.CAUSAL, 0.7)
    atlas.set_status(old.id, MemoryStatus.ACTIVE)
    elsewhere = atlas.add("User prefers window seats", session_id="t")
    assert atlas.merge_duplicates() == 1
    assert twin.id not in atlas
    assert elsewhere.id in atlas
    kept = atlas.get(old.id)
    assert kept.provenance == ("t1", "t2")
    assert kept.strength == pytest.approx(min(1.4 * 1.5, 3.0))
    (edge,) = atlas.edges(old.id)
    assert (edge.source_id, edge.target_id, edge.relation) == (old.id, friend.id, Relation.CAUSAL)
    assert edge.strength == pytest.approx(0.7)
    merged = recorder.of_type("merged")[0]
    assert (merged.kept_id, merged.merged_id) == (old.id, twin.id)  # type: ignore[attr-defined]
    assert evictions(recorder) == {twin.id: "merged"}
    # the kept memory's weight reflects its new strength right away
    table = atlas._s.table
    slot = table.slot_of[old.id]
    expected = composite_weight(
        table.strength[[slot]],
        table.accessed[[slot]],
        table.count[[slot]],
        table.assoc[[slot]],
        clock.now(),
        atlas.config,
    )[0]
    assert kept.weight == pytest.approx(expected)
    invariants(atlas)


# ---------------------------------------------------------------- memory pressure
def test_memory_pressure_evicts_the_weakest_tenth(
    make_atlas: AtlasFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    atlas, _ = make_atlas(
        memory_watermark=0.5, link_threshold=1.0, working_memory_size=0, family_fold_at=None
    )  # "memory i about topic i" is one template: folding would take them first
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    nodes = [
        atlas.add(f"memory {i} about topic {i}", session_id="s", importance=i / 20, pinned=i == 0)
        for i in range(20)
    ]
    monkeypatch.setattr(forgetting, "_memory_used", lambda: 0.9)
    counts = atlas.decay()
    assert counts == {"memory_pressure": 1}  # int(19 unpinned * 0.1)
    assert evictions(recorder) == {nodes[1].id: "memory_pressure"}
    pressure = recorder.of_type("memory_pressure")[0]
    assert pressure.rss_fraction == pytest.approx(0.9)  # type: ignore[attr-defined]
    assert pressure.evicted == 1  # type: ignore[attr-defined]
    assert EvictionReason.MEMORY_PRESSURE.value in atlas.stats()["evicted"]


def test_memory_used_reads_this_process_and_remakes_its_handle_after_a_fork(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    import psutil

    used = forgetting._memory_used()
    expected = psutil.Process().memory_info().rss / psutil.virtual_memory().total
    assert 0 < used < 1 and used == pytest.approx(expected, rel=0.2)
    handle = forgetting._THIS
    assert handle is not None and forgetting._memory_used() and forgetting._THIS is handle
    other = os.getppid()  # a live process that is not this one, as a forked child's pid
    monkeypatch.setattr(os, "getpid", lambda: other)
    forgetting._memory_used()
    assert forgetting._THIS is not handle and forgetting._THIS.pid == other


def test_long_run_past_the_initial_table_size(make_atlas: AtlasFactory) -> None:
    """Columns, postings and the edge arrays grow and slots are reused without drifting."""
    atlas, clock = make_atlas(
        max_nodes=300,
        working_memory_size=5,
        decay_interval_seconds=600,
        link_threshold=0.5,
        family_fold_at=None,  # "... note i" lines would fold: this is about slot reuse
    )
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
    ]
    for i in range(700):
        text = " ".join(words[(i * k) % len(words)] for k in (1, 3, 7)) + f" note {i}"
        atlas.add(text, session_id=f"s{i % 4}")
        clock.advance(30)
        if i % 50 == 0:
            assert len(atlas.retrieve("alpha bravo", top_k=5)) == min(5, len(atlas))
    assert len(atlas) <= 300
    assert atlas._s.table.capacity > 256
    stats = atlas.stats()
    assert stats["added"] + stats["merged"] == 700
    assert stats["evicted_total"] == stats["added"] - len(atlas)
    invariants(atlas)


def test_a_removed_memory_leaves_the_working_tier(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(working_memory_size=3, link_threshold=1.0)
    a, b, c = (atlas.add(t, session_id="s") for t in ("red apples", "blue whales", "green"))
    atlas.delete(c.id)
    d = atlas.add("yellow sun", session_id="s")
    assert atlas.session_info("s")["working"] == [a.id, b.id, d.id]
    table = atlas._s.table
    assert all(table.working[table.slot_of[i]] for i in (a.id, b.id, d.id))


def test_extractive_summarizer_keeps_heaviest_within_budget() -> None:
    items = [
        SummaryItem("a", "light fact.", 0.2, 1.0),
        SummaryItem("b", "heavy fact.", 2.0, 3.0),
        SummaryItem("c", "x" * 100, 3.0, 2.0),  # heaviest but over the budget
        SummaryItem("d", "medium fact", 1.0, 0.5),
    ]
    summary = ExtractiveSummarizer(max_items=2).summarize(items, max_chars=60)
    assert summary.covered_ids == ("d", "b")  # heaviest that fit, then in time order
    assert summary.text == "Session summary: medium fact; heavy fact"
    assert len(summary.text) <= 60
    nothing = ExtractiveSummarizer().summarize(items[2:3], max_chars=30)
    assert nothing.covered_ids == ()


def test_eviction_masks_rank_the_reasons_and_broadcast_over_times() -> None:
    cfg = AtlasConfig(evict_threshold=0.2, orphan_threshold=0.4, orphan_grace_hours=1.0)
    columns = {
        "expires": np.array([5.0, np.inf, np.inf, np.inf, 5.0, np.inf]),
        "created": np.zeros(6),
        "degree": np.array([0, 0, 0, 1, 0, 0]),
        "pinned": np.array([False, False, False, False, True, False]),
        "working": np.array([False, False, False, False, False, True]),
    }
    weight = np.array([0.1, 0.1, 0.3, 0.3, 0.1, 0.1])
    masks = eviction_masks(cfg, weight=weight, now=7200.0, **columns)
    assert masks.expired.tolist() == [True, False, False, False, False, False]
    assert masks.below_threshold.tolist() == [False, True, False, False, False, False]
    assert masks.orphan.tolist() == [False, False, True, False, False, False]
    # before the grace period no orphan; pinned expire never; working are kept
    early = eviction_masks(cfg, weight=weight, now=1.0, **columns)
    assert not early.orphan.any() and not early.expired.any()
    # many times at once give what one call per time gives
    times = np.array([[1.0], [7200.0]])
    stacked = eviction_masks(cfg, weight=np.stack([weight, weight]), now=times, **columns)
    for row, at in enumerate(times[:, 0]):
        single = eviction_masks(cfg, weight=weight, now=float(at), **columns)
        for got, want in zip(stacked, single, strict=True):
            assert got[row].tolist() == want.tolist()
