"""A superseded memory that matches a question hands its score to the memory that
superseded it: the question it answered best is now answered by its replacement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryKind, MemoryNode, MemoryStatus, Relation

from .conftest import DIM, AtlasFactory


def basis(*parts: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for i, x in parts:
        v[i] = x
    return v / np.linalg.norm(v)


QUERY = basis((0, 1.0))


def superseded_pair(
    make_atlas: AtlasFactory, status: MemoryStatus = MemoryStatus.SUPERSEDED
) -> tuple[ElasticMemoryAtlas, MemoryNode, MemoryNode, MemoryNode]:
    """An outdated memory close to the query, its replacement far from it, and a bystander
    in between."""
    atlas, _ = make_atlas(max_nodes=None, graph_expansion=0)
    old = atlas.add("return from munich", embedding=basis((0, 1.0)))
    middle = atlas.add("hotel near the fair", embedding=basis((0, 0.5), (2, 1.0)))
    new = atlas.add("zurich instead", embedding=basis((0, 0.1), (1, 1.0)))
    atlas.link(new.id, old.id, Relation.SUPERSEDES)
    atlas.set_status(old.id, status)
    return atlas, old, middle, new


def ids(atlas: ElasticMemoryAtlas, **kwargs: Any) -> list[str]:
    hits = atlas.retrieve("question", query_embedding=QUERY, top_k=5, reinforce=False, **kwargs)
    return [h.node.id for h in hits]


@pytest.mark.parametrize("status", [MemoryStatus.SUPERSEDED, MemoryStatus.DEPRECATED])
def test_the_replacement_takes_the_outdated_memory_s_place(
    make_atlas: AtlasFactory, status: MemoryStatus
) -> None:
    atlas, old, middle, new = superseded_pair(make_atlas, status)
    found = ids(atlas)
    assert old.id not in found  # an outdated memory is never returned
    assert found.index(new.id) < found.index(middle.id)
    (hit,) = [
        h
        for h in atlas.retrieve("question", query_embedding=QUERY, top_k=5, reinforce=False)
        if h.node.id == new.id
    ]
    assert "replaces" in hit.breakdown.sources
    assert hit.breakdown.dense == pytest.approx(1.0, abs=1e-5)  # the outdated one's match


def test_without_the_supersedes_edge_nothing_is_forwarded(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=None, graph_expansion=0)
    old = atlas.add("return from munich", embedding=basis((0, 1.0)))
    middle = atlas.add("hotel near the fair", embedding=basis((0, 0.5), (2, 1.0)))
    new = atlas.add("zurich instead", embedding=basis((0, 0.1), (1, 1.0)))
    atlas.set_status(old.id, MemoryStatus.SUPERSEDED)
    found = ids(atlas)
    assert found.index(middle.id) < found.index(new.id)


def test_forgotten_memories_forward_nothing(make_atlas: AtlasFactory) -> None:
    atlas, old, middle, new = superseded_pair(make_atlas)
    atlas.forget(old.id)
    found = ids(atlas)
    assert found.index(middle.id) < found.index(new.id)


def test_a_chain_of_replacements_reaches_the_active_one(make_atlas: AtlasFactory) -> None:
    atlas, _old, middle, new = superseded_pair(make_atlas)
    newest = atlas.add("amsterdam direct", embedding=basis((3, 1.0)))
    atlas.link(newest.id, new.id, Relation.SUPERSEDES)
    atlas.set_status(new.id, MemoryStatus.SUPERSEDED)
    found = ids(atlas)
    assert new.id not in found
    assert found.index(newest.id) < found.index(middle.id)


def test_a_replacement_outside_the_scope_or_filters_is_not_reached(
    make_atlas: AtlasFactory,
) -> None:
    atlas, _ = make_atlas(max_nodes=None, graph_expansion=0)
    old = atlas.add("return from munich", session_id="a", embedding=basis((0, 1.0)))
    new = atlas.add("zurich instead", session_id="b", embedding=basis((1, 1.0)))
    atlas.link(new.id, old.id, Relation.SUPERSEDES)
    atlas.set_status(old.id, MemoryStatus.SUPERSEDED)
    assert new.id not in ids(atlas, session_id="a")
    assert new.id in ids(atlas, session_id="a", cross_session=True)
    assert new.id not in ids(atlas, kinds=[MemoryKind.KNOWLEDGE])


def test_re_issued_summaries_are_not_forwarded_to(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=None, graph_expansion=0)
    old = atlas.add("munich return quoted", embedding=basis((0, 1.0)), kind=MemoryKind.SUMMARY)
    middle = atlas.add("hotel near the fair", embedding=basis((0, 0.5), (2, 1.0)))
    new = atlas.add("summary without it", embedding=basis((1, 1.0)), kind=MemoryKind.SUMMARY)
    atlas.link(new.id, old.id, Relation.SUPERSEDES)
    atlas.set_status(old.id, MemoryStatus.DEPRECATED)
    found = ids(atlas)
    assert found.index(middle.id) < found.index(new.id)
