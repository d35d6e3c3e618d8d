"""Retrieval: scope and filters, the score formula, hybrid sources, reinforcement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memory_core import (
    ElasticMemoryAtlas,
    InputError,
    MemoryKind,
    MemoryStatus,
    NotFoundError,
    RetrievalHit,
)

from .conftest import DIM, AtlasFactory, CountingEmbedder, invariants


def basis(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def ids(hits: list[RetrievalHit]) -> list[str]:
    return [h.node.id for h in hits]


def live_state(atlas: ElasticMemoryAtlas) -> list[tuple[Any, ...]]:
    return [
        (n.id, n.strength, n.weight, n.access_count, n.last_accessed_at, n.status)
        for n in atlas.nodes()
    ]


def expected_final(atlas: ElasticMemoryAtlas, hit: RetrievalHit) -> float:
    cfg, b = atlas.config, hit.breakdown
    total = cfg.similarity_weight + cfg.weight_weight + cfg.recency_weight
    floor = (1 - cfg.lexical_share) * cfg.unrelated_cosine
    assert b.gate == (1.0 if b.relevance > floor else 0.0)
    return (
        (
            cfg.similarity_weight * b.relevance
            + b.gate
            * (cfg.weight_weight * b.weight / cfg.weight_cap + cfg.recency_weight * b.recency)
        )
        / total
        * (0.5 + 0.5 * b.confidence)
        * b.session_factor
    )


# ---------------------------------------------------------------- scope
def test_session_isolation(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    mine = atlas.add("User prefers window seats", session_id="a")
    theirs = atlas.add("Other user prefers window seats too", session_id="b")
    hits = atlas.retrieve("window seats", session_id="a", top_k=10)
    assert ids(hits) == [mine.id]
    assert not hits[0].cross_session
    assert ids(atlas.retrieve("window seats", session_id="nobody")) == []
    everywhere = atlas.retrieve("window seats", top_k=10)
    assert set(ids(everywhere)) == {mine.id, theirs.id}
    assert not any(h.cross_session for h in everywhere)
    assert all(h.breakdown.session_factor == 1.0 for h in everywhere)


def test_cross_session_marks_and_downweights(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(cross_session_factor=0.5)
    mine = atlas.add("User prefers window seats", session_id="a")
    theirs = atlas.add("User prefers window seats", session_id="b")
    hits = {
        h.node.id: h
        for h in atlas.retrieve(
            "window seats", session_id="a", cross_session=True, top_k=10, reinforce=False
        )
    }
    assert set(hits) == {mine.id, theirs.id}
    assert not hits[mine.id].cross_session
    assert hits[theirs.id].cross_session
    assert hits[theirs.id].breakdown.session_factor == 0.5
    assert hits[mine.id].breakdown.session_factor == 1.0
    for hit in hits.values():
        assert hit.score == pytest.approx(expected_final(atlas, hit), rel=1e-9)


def test_cross_session_from_an_empty_home_marks_every_hit(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(cross_session_factor=0.6)
    atlas.add("User prefers window seats", session_id="old")
    hits = atlas.retrieve("window seats", session_id="new", cross_session=True)
    assert len(hits) == 1
    assert hits[0].cross_session
    assert hits[0].breakdown.session_factor == 0.6


# ---------------------------------------------------------------- filters
def test_kind_time_and_metadata_filters(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(decay_interval_seconds=0)
    t0 = clock.now()
    early = atlas.add("coffee order large", session_id="s", metadata={"type": "fact"})
    clock.advance(3600)
    middle = atlas.add(
        "coffee order small", session_id="s", kind="knowledge", metadata={"type": "preference"}
    )
    clock.advance(3600)
    late = atlas.add(
        "coffee order medium", session_id="s", kind=MemoryKind.EPISODIC, metadata={"type": "fact"}
    )
    q = "coffee order"

    def got(**kw: Any) -> set[str]:
        return set(ids(atlas.retrieve(q, top_k=10, session_id="s", reinforce=False, **kw)))

    assert got() == {early.id, middle.id, late.id}
    assert got(kinds=["knowledge"]) == {middle.id}
    assert got(kinds=[MemoryKind.SESSION, "episodic"]) == {early.id, late.id}
    assert got(since=t0 + 1800) == {middle.id, late.id}
    assert got(until=t0 + 3600) == {early.id, middle.id}
    assert got(since=t0 + 1800, until=t0 + 5000) == {middle.id}
    assert got(metadata={"type": "fact"}) == {early.id, late.id}
    assert got(metadata={"type": "fact"}, kinds=["session"]) == {early.id}
    assert got(metadata={"type": "none"}) == set()


def test_inactive_expired_and_unconfident_are_never_returned(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(decay_interval_seconds=0, min_confidence=0.3)
    variants: dict[str, dict[str, Any]] = {
        "ok": {},
        "deprecated": {},
        "superseded": {},
        "tombstoned": {},
        "expiring": {"ttl_hours": 1.0},
        "doubtful": {"confidence": 0.2},
    }
    nodes = {
        name: atlas.add(f"coffee order {name}", session_id="s", **kw)
        for name, kw in variants.items()
    }
    atlas.set_status(nodes["deprecated"].id, MemoryStatus.DEPRECATED)
    atlas.set_status(nodes["superseded"].id, "superseded")
    atlas.forget(nodes["tombstoned"].id)
    got = set(ids(atlas.retrieve("coffee order", top_k=20, session_id="s")))
    assert got == {nodes["ok"].id, nodes["expiring"].id}
    clock.advance(3600)  # expiry is exact: expires_at <= now is gone
    got = set(ids(atlas.retrieve("coffee order", top_k=20, cross_session=True)))
    assert got == {nodes["ok"].id}


# ---------------------------------------------------------------- score
def test_breakdown_parts_add_up_to_the_score(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(decay_interval_seconds=0, recency_half_life_hours=2.0)
    texts = [
        "User prefers window seats on long flights",
        "User booked an aisle seat once",
        "Seat upgrades are too expensive",
        "User drinks green tea",
    ]
    for i, text in enumerate(texts):
        atlas.add(text, session_id="s", confidence=1.0 - 0.2 * i, metadata={"i": i})
        clock.advance(1800)
    atlas.add("Window seat again please", session_id="t")
    hits = atlas.retrieve("window seat", top_k=10, session_id="s", cross_session=True)
    assert len(hits) >= 4
    for hit in hits:
        b = hit.breakdown
        assert hit.score == b.final
        assert b.final == pytest.approx(expected_final(atlas, hit), rel=1e-9)
        assert b.weight_norm == pytest.approx(b.weight / atlas.config.weight_cap)
        assert b.confidence == pytest.approx(hit.node.confidence, abs=1e-6)
        hours = (clock.now() - atlas.get(hit.node.id).created_at) / 3600.0
        assert b.recency == pytest.approx(0.5 ** (hours / 2.0))
        fusion = b.relevance - 0.5 * min(max(b.dense, 0.0), 1.0)
        assert -1e-9 <= fusion <= 0.5 + 1e-9
        assert b.sources
        assert b.as_dict()["final"] == b.final
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_single_memory_relevance_is_exact(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    node = atlas.add("zebra crossing", session_id="s", embedding=basis(0))
    query = 0.6 * basis(0) + 0.8 * basis(1)
    # relevance = 0.5 * cosine + 0.5 * bm25 / (bm25 + lexical_saturation)
    hit = atlas.retrieve("zebra", session_id="s", query_embedding=query, reinforce=False)[0]
    assert hit.node.id == node.id
    assert hit.breakdown.sources == ("dense", "lexical")
    assert hit.breakdown.dense == pytest.approx(0.6, abs=1e-6)
    bm25 = hit.breakdown.lexical
    assert bm25 > 0
    saturation = atlas.config.lexical_saturation
    assert hit.breakdown.relevance == pytest.approx(
        0.5 * 0.6 + 0.5 * bm25 / (bm25 + saturation), abs=1e-6
    )
    # no shared word: cosine alone
    hit = atlas.retrieve("giraffe", session_id="s", query_embedding=query, reinforce=False)[0]
    assert hit.breakdown.sources == ("dense",)
    assert hit.breakdown.lexical == 0.0
    assert hit.breakdown.relevance == pytest.approx(0.5 * 0.6, abs=1e-6)
    assert hit.breakdown.recency == 1.0


def test_higher_weight_and_confidence_rank_first_among_equals(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(link_threshold=1.0, merge_threshold=1.0)
    strong = atlas.add("coffee", session_id="s", embedding=basis(3), importance=1.0)
    weak = atlas.add("coffee", session_id="t", embedding=basis(3), importance=0.0)
    doubtful = atlas.add(
        "coffee", session_id="u", embedding=basis(3), importance=1.0, confidence=0.1
    )
    hits = atlas.retrieve("coffee", top_k=3, query_embedding=basis(3), reinforce=False)
    assert hits[0].node.id == strong.id
    by_id = {h.node.id: h.score for h in hits}
    assert by_id[strong.id] > by_id[weak.id]
    assert by_id[strong.id] > by_id[doubtful.id]


# ---------------------------------------------------------------- hybrid sources
def test_lexical_only_match_surfaces(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(dense_candidates=1, link_threshold=1.0, link_previous=False)
    dense_top = atlas.add("completely unrelated words", session_id="s", embedding=basis(0))
    lexical = atlas.add("zebra crossing ahead", session_id="s", embedding=basis(5))
    hits = atlas.retrieve("zebra", top_k=5, session_id="s", query_embedding=basis(0))
    by_id = {h.node.id: h for h in hits}
    assert set(by_id) == {dense_top.id, lexical.id}
    assert by_id[lexical.id].breakdown.sources == ("lexical",)
    assert by_id[lexical.id].breakdown.dense == pytest.approx(0.0, abs=1e-6)
    assert by_id[lexical.id].breakdown.lexical > 0
    assert by_id[dense_top.id].breakdown.sources == ("dense",)


@pytest.mark.parametrize("expansion", [8, 0])
def test_graph_expansion_brings_a_linked_neighbour(
    make_atlas: AtlasFactory, expansion: int
) -> None:
    atlas, _ = make_atlas(
        dense_candidates=1, graph_expansion=expansion, link_threshold=1.0, link_previous=False
    )
    seed = atlas.add("passport number stored", session_id="s", embedding=basis(0))
    neighbour = atlas.add("renewal due in March", session_id="s", embedding=basis(7))
    atlas.add("unrelated lunch plans", session_id="s", embedding=basis(9))
    atlas.link(seed.id, neighbour.id, "related_to", 0.9)
    hits = atlas.retrieve("passport", top_k=5, session_id="s", query_embedding=basis(0))
    by_id = {h.node.id: h for h in hits}
    assert hits[0].node.id == seed.id
    if expansion:
        assert neighbour.id in by_id
        assert by_id[neighbour.id].breakdown.sources == ("graph",)
        assert by_id[neighbour.id].breakdown.graph > 0
    else:
        assert neighbour.id not in by_id


def test_graph_expansion_respects_scope_and_status(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(dense_candidates=1, link_threshold=1.0, link_previous=False)
    seed = atlas.add("passport number stored", session_id="s", embedding=basis(0))
    foreign = atlas.add("renewal due in March", session_id="t", embedding=basis(7))
    gone = atlas.add("old passport lost", session_id="s", embedding=basis(8))
    atlas.link(seed.id, foreign.id)
    atlas.link(seed.id, gone.id)
    atlas.forget(gone.id)
    hits = atlas.retrieve("visa", top_k=5, session_id="s", query_embedding=basis(0))
    assert ids(hits) == [seed.id]


def test_query_embedding_skips_the_embedder(make_atlas: AtlasFactory) -> None:
    embedder = CountingEmbedder()
    atlas, _ = make_atlas(embedder=embedder)
    atlas.add("zebra", session_id="s", embedding=basis(2))
    atlas.retrieve("zebra", session_id="s", query_embedding=basis(2))
    assert embedder.calls == []
    atlas.retrieve("zebra", session_id="s")
    assert embedder.calls == [["zebra"]]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"query": "  "}, "query"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"session_id": ""}, "session_id"),
        ({"kinds": ["dream"]}, "kinds"),
        ({"since": float("nan")}, "since"),
        ({"until": "yesterday"}, "until"),
        ({"metadata": {"a": object()}}, "metadata"),
        ({"query_embedding": np.ones(3)}, "query_embedding"),
    ],
)
def test_bad_retrieval_arguments(
    make_atlas: AtlasFactory, kwargs: dict[str, Any], field: str
) -> None:
    atlas, _ = make_atlas()
    atlas.add("zebra", session_id="s")
    before = live_state(atlas)
    args = {"query": "zebra", **kwargs}
    with pytest.raises(InputError) as info:
        atlas.retrieve(args.pop("query"), **args)
    assert info.value.field == field
    assert live_state(atlas) == before


# ---------------------------------------------------------------- reinforcement
def test_reinforce_false_changes_nothing(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(decay_interval_seconds=0)
    for text in ("red apples", "red cars", "red roses"):
        atlas.add(text, session_id="s")
    clock.advance(7200)
    before = live_state(atlas)
    hits = atlas.retrieve("red", top_k=3, session_id="s", reinforce=False)
    assert len(hits) == 3
    assert live_state(atlas) == before
    assert [h.node.access_count for h in hits] == [0, 0, 0]


def test_reinforcement_multiplies_strength_up_to_the_cap(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(reinforce_factor=1.5, weight_cap=2.0, decay_interval_seconds=0)
    node = atlas.add("red apples", session_id="s", importance=1.0)  # strength 1.4
    clock.advance(600)
    hit = atlas.retrieve("apples", session_id="s")[0]
    assert hit.node.strength == pytest.approx(2.0)  # 1.4 * 1.5 = 2.1, capped
    assert hit.node.access_count == 1
    assert hit.node.last_accessed_at == clock.now()
    for _ in range(3):
        atlas.retrieve("apples", session_id="s")
    after = atlas.get(node.id)
    assert after.strength == 2.0
    assert after.access_count == 4
    assert after.weight <= 2.0
    invariants(atlas)


def test_only_returned_hits_are_reinforced(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(link_threshold=1.0)
    a = atlas.add("zebra", session_id="s", embedding=basis(1))
    b = atlas.add("lion", session_id="s", embedding=basis(2))
    atlas.retrieve("zebra", top_k=1, session_id="s", query_embedding=basis(1))
    assert atlas.get(a.id).access_count == 1
    assert atlas.get(b.id).access_count == 0
    assert atlas.stats()["retrievals"] == 1


def test_best_match_outranks_its_linked_neighbour(make_atlas: AtlasFactory) -> None:
    """Graph expansion adds candidates; it must not lift a weaker hit above the seed it hangs on."""
    atlas, _ = make_atlas(graph_expansion=1, link_threshold=1.0, link_previous=False)
    best = atlas.add("first", session_id="s", embedding=0.6 * basis(0) + 0.8 * basis(1))
    weaker = atlas.add("second", session_id="s", embedding=0.5 * basis(0) + 0.866 * basis(2))
    atlas.link(best.id, weaker.id, "before")
    hits = atlas.retrieve("query", top_k=2, session_id="s", query_embedding=basis(0))
    assert ids(hits) == [best.id, weaker.id]
    assert hits[1].breakdown.sources == ("dense",)


def test_stats_nodes_and_graph_export(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(link_threshold=1.0, max_nodes=50)
    a = atlas.add("red apples", session_id="s", importance=1.0, pinned=True)
    clock.advance(10)
    b = atlas.add("blue whales", session_id="s", kind="episodic", importance=0.0)
    c = atlas.add("green grass", session_id="t")
    atlas.set_status(c.id, "deprecated")
    stats = atlas.stats()
    assert stats["nodes"] == len(atlas) == 3
    assert stats["edges"] == 1  # a -before-> b
    assert stats["sessions"] == 2
    assert stats["max_nodes"] == 50
    assert stats["by_kind"]["session"] == 2
    assert stats["by_kind"]["episodic"] == 1
    assert stats["by_status"] == {
        "active": 2,
        "deprecated": 1,
        "superseded": 0,
        "tombstoned": 0,
    }
    weights = [n.weight for n in atlas.nodes()]
    assert stats["weight_min"] == min(weights)
    assert stats["weight_max"] == max(weights)
    assert stats["weight_mean"] == pytest.approx(sum(weights) / 3)
    assert stats["pinned"] == 1
    assert stats["embedder"] == atlas.embedder.name
    assert stats["now"] == clock.now()
    assert [n.id for n in atlas.nodes()] == [a.id, b.id, c.id]  # oldest first
    assert [n.id for n in atlas.nodes("t")] == [c.id]
    assert atlas.nodes("nobody") == []
    assert a.id in atlas
    assert "nope" not in atlas
    assert 42 not in atlas
    graph = atlas.to_networkx()
    assert set(graph.nodes) == {a.id, b.id, c.id}
    assert list(graph.edges(keys=True)) == [(a.id, b.id, "before")]
    assert graph.nodes[a.id]["node"].content == "red apples"
    only_t = atlas.to_networkx("t")
    assert set(only_t.nodes) == {c.id}
    assert only_t.number_of_edges() == 0
    info = atlas.session_info("s")
    assert (info["nodes"], info["index"], info["ended"]) == (2, "flat", False)
    assert atlas.sessions() == ["s", "t"]


def test_similar_is_read_only_and_scoped(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(link_threshold=1.0)
    probe = atlas.add("probe", session_id="s", embedding=basis(0))
    near = atlas.add("near", session_id="s", embedding=0.9 * basis(0) + 0.436 * basis(1))
    far = atlas.add("far", session_id="s", embedding=0.2 * basis(0) + 0.98 * basis(2))
    gone = atlas.add("gone", session_id="s", embedding=0.95 * basis(0) + 0.312 * basis(3))
    foreign = atlas.add("foreign", session_id="t", embedding=0.99 * basis(0) + 0.141 * basis(4))
    atlas.forget(gone.id)
    before = live_state(atlas)
    got = atlas.similar(probe.id, k=5)
    assert [n.id for n, _ in got] == [near.id, far.id]
    assert got[0][1] == pytest.approx(0.9, abs=1e-3)
    assert [n.id for n, _ in atlas.similar(probe.id, k=1, cross_session=True)] == [foreign.id]
    assert live_state(atlas) == before
    with pytest.raises(InputError):
        atlas.similar(probe.id, k=0)


def test_weights_match_snapshots_and_unknown_ids_are_refused(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    a = atlas.add("the user likes green tea", session_id="s")
    b = atlas.add("the meeting moved to friday", session_id="t")
    atlas.retrieve("green tea", session_id="s")  # reinforces a: the weights differ
    assert atlas.weights([b.id, a.id]) == [atlas.get(b.id).weight, atlas.get(a.id).weight]
    assert atlas.weights([]) == []
    with pytest.raises(NotFoundError):
        atlas.weights([a.id, "missing"])
