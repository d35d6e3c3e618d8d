"""A caller's hints (``retrieve(hints=...)``, the agent's entity route): hinted memories
join the candidates and compete on the ranking's own terms; bad hints are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memory_core.errors import InputError

from .conftest import DIM, AtlasFactory


def basis(*parts: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for i, x in parts:
        v[i] = x
    return v / np.linalg.norm(v)


def saturated(bm25: float, saturation: float) -> float:
    return bm25 / (bm25 + saturation)


def test_a_hinted_memory_joins_the_candidates_with_its_hint_as_lexical_evidence(
    make_atlas: AtlasFactory,
) -> None:
    atlas, _ = make_atlas(
        max_nodes=None, dense_candidates=1, lexical_candidates=1, graph_expansion=0
    )
    near = atlas.add("alpha words", embedding=basis((0, 1.0)))
    far = atlas.add("omega other", embedding=basis((0, 0.2), (1, 1.0)))
    query = basis((0, 1.0))
    plain = atlas.retrieve("nothing shared", query_embedding=query, top_k=5, reinforce=False)
    assert [h.node.id for h in plain] == [near.id]  # one dense candidate, no word in common

    hits = atlas.retrieve(
        "nothing shared", query_embedding=query, top_k=5, reinforce=False, hints={far.id: 4.0}
    )
    by_id = {h.node.id: h for h in hits}
    assert set(by_id) == {near.id, far.id}
    hinted = by_id[far.id].breakdown
    assert "hint" in hinted.sources and "lexical" not in hinted.sources
    cfg = atlas.config
    expected = (1 - cfg.lexical_share) * max(hinted.dense, 0.0) + cfg.lexical_share * saturated(
        4.0, cfg.lexical_saturation
    )
    assert hinted.relevance == pytest.approx(expected)


def test_a_hint_never_adds_to_a_memory_s_own_words_and_never_lowers_them(
    make_atlas: AtlasFactory,
) -> None:
    atlas, _ = make_atlas(max_nodes=None)
    match = atlas.add("lisbon lisbon lisbon trip", embedding=basis((0, 1.0)))
    atlas.add("unrelated filler", embedding=basis((1, 1.0)))
    query = basis((0, 0.5), (2, 1.0))
    (before,) = atlas.retrieve("lisbon", query_embedding=query, top_k=1, reinforce=False)
    assert before.node.id == match.id and before.breakdown.lexical > 0.1
    weaker = before.breakdown.lexical / 2
    (after,) = atlas.retrieve(
        "lisbon", query_embedding=query, top_k=1, reinforce=False, hints={match.id: weaker}
    )
    assert after.score == pytest.approx(before.score)  # max(bm25, hint): the words win
    stronger = before.breakdown.lexical * 3
    (lifted,) = atlas.retrieve(
        "lisbon", query_embedding=query, top_k=1, reinforce=False, hints={match.id: stronger}
    )
    assert lifted.score > before.score


def test_a_hinted_memory_does_not_push_out_a_closer_one(make_atlas: AtlasFactory) -> None:
    """A weak hint on an unlike memory ranks it below a memory close to the query."""
    atlas, _ = make_atlas(max_nodes=None)
    close = atlas.add("close", embedding=basis((0, 1.0), (1, 0.3)))
    unlike = atlas.add("unlike", embedding=basis((3, 1.0)))
    hits = atlas.retrieve(
        "question", query_embedding=basis((0, 1.0)), top_k=1, reinforce=False,
        hints={unlike.id: 0.5},
    )  # fmt: skip
    assert [h.node.id for h in hits] == [close.id]


def test_hints_respect_scope_and_status_and_skip_ids_no_longer_held(
    make_atlas: AtlasFactory,
) -> None:
    atlas, _ = make_atlas(max_nodes=None)
    home = atlas.add("home note", session_id="a", embedding=basis((0, 1.0)))
    other = atlas.add("other session note", session_id="b", embedding=basis((1, 1.0)))
    gone = atlas.add("forgotten note", session_id="a", embedding=basis((2, 1.0)))
    atlas.forget(gone.id)
    hints = {other.id: 9.0, gone.id: 9.0, "m-never-stored": 9.0}
    hits = atlas.retrieve(
        "q", session_id="a", query_embedding=basis((0, 1.0)), top_k=5, reinforce=False,
        hints=hints,
    )  # fmt: skip
    assert [h.node.id for h in hits] == [home.id]
    wide = atlas.retrieve(
        "q", session_id="a", cross_session=True, query_embedding=basis((0, 1.0)), top_k=5,
        reinforce=False, hints=hints,
    )  # fmt: skip
    assert {h.node.id for h in wide} == {home.id, other.id}


@pytest.mark.parametrize(
    ("hints", "field"),
    [
        ({"m1": -1.0}, "hints['m1']"),
        ({"m1": math.nan}, "hints['m1']"),
        ({"m1": "high"}, "hints['m1']"),
        ({1: 1.0}, "hints"),
        (["m1"], "hints"),
    ],
)
def test_bad_hints_are_refused_and_change_nothing(
    make_atlas: AtlasFactory, hints: object, field: str
) -> None:
    atlas, _ = make_atlas(max_nodes=None)
    node = atlas.add("note", embedding=basis((0, 1.0)))
    with pytest.raises(InputError) as caught:
        atlas.retrieve("note", hints=hints)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert atlas.get(node.id).access_count == 0
