"""Relevance first (issue #25): weight and recency order related memories only."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_core.engine.retrieval import relevance_gate

from .conftest import DIM, AtlasFactory


def basis(*parts: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for i, x in parts:
        v[i] = x
    return v / np.linalg.norm(v)


def test_a_heavy_recent_unrelated_memory_never_outranks_a_related_one(
    make_atlas: AtlasFactory,
) -> None:
    atlas, clock = make_atlas(max_nodes=None, recency_weight=0.5, unrelated_cosine=0.25)
    fact = atlas.add("fact", importance=0.0, embedding=basis((0, 0.6), (1, 0.8)))
    clock.advance(30 * 24 * 3600.0)
    noise = atlas.add("noise", importance=1.0, embedding=basis((2, 1.0)))
    for _ in range(20):  # reinforced to the cap
        atlas.retrieve("noise", query_embedding=basis((2, 1.0)), top_k=1)
    query = basis((0, 1.0))  # cosine 0.6 to the fact, 0 to the noise
    hits = atlas.retrieve("q", query_embedding=query, top_k=2, reinforce=False)
    assert [h.node.id for h in hits] == [fact.id, noise.id]
    assert hits[1].breakdown.weight > 0.95 * atlas.config.weight_cap
    assert hits[1].breakdown.gate == 0.0
    assert hits[0].breakdown.gate == 1.0  # relevance 0.3 is past the floor 0.125


def test_without_the_gate_the_same_weight_outranks_it(make_atlas: AtlasFactory) -> None:
    """The case above fails with the gate off (``unrelated_cosine`` 0): the test can fail."""
    atlas, clock = make_atlas(max_nodes=None, recency_weight=0.5, unrelated_cosine=0.0)
    atlas.add("fact", importance=0.0, embedding=basis((0, 0.6), (1, 0.8)))
    clock.advance(30 * 24 * 3600.0)
    noise = atlas.add("noise", importance=1.0, embedding=basis((2, 1.0)))
    for _ in range(20):
        atlas.retrieve("noise", query_embedding=basis((2, 1.0)), top_k=1)
    hits = atlas.retrieve("q", query_embedding=basis((0, 1.0)), top_k=2, reinforce=False)
    assert hits[0].node.id == noise.id


def test_weight_orders_memories_equally_related(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=None)
    light = atlas.add("a", importance=0.1, embedding=basis((0, 0.8), (1, 0.6)))
    heavy = atlas.add("b", importance=0.9, embedding=basis((0, 0.8), (2, 0.6)))
    hits = atlas.retrieve("q", query_embedding=basis((0, 1.0)), top_k=2, reinforce=False)
    assert [h.node.id for h in hits] == [heavy.id, light.id]


@given(
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_the_gate_is_shut_at_or_below_the_floor_and_open_above(
    relevance: list[float], unrelated: float, share: float
) -> None:
    rel = np.array(relevance)
    gate = relevance_gate(rel, unrelated, share)
    floor = (1 - share) * unrelated
    assert np.array_equal(gate, (rel > floor).astype(float) if floor > 0 else np.ones_like(rel))


@given(st.floats(0.0, 0.5), st.floats(0.0, 0.5), st.floats(0.0, 3.0), st.floats(0.0, 1.0))
def test_no_weight_or_recency_lifts_an_unrelated_memory_over_a_related_one(
    unrelated_rel: float, margin: float, weight: float, recency: float
) -> None:
    """The guarantee in numbers: relevance u <= floor < r ranks r first for any weight."""
    from memory_core import AtlasConfig

    cfg = AtlasConfig(recency_weight=0.3)
    floor = (1 - cfg.lexical_share) * cfg.unrelated_cosine
    u = min(unrelated_rel, floor)
    r = floor + margin + 1e-9
    gates = relevance_gate(np.array([u, r]), cfg.unrelated_cosine, cfg.lexical_share)
    bonus = cfg.weight_weight * weight / cfg.weight_cap + cfg.recency_weight * recency
    score_u = cfg.similarity_weight * u + gates[0] * bonus
    score_r = cfg.similarity_weight * r + gates[1] * 0.0  # the related one: no weight at all
    assert score_r > score_u
