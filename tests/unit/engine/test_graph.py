"""EdgeStore: typed relations, degrees, neighbour strengths and the association step."""

from __future__ import annotations

import numpy as np
import pytest

from memory_core.engine.graph import EdgeStore
from memory_core.engine.model import Relation
from memory_core.engine.table import NodeTable


def store_with(n: int) -> tuple[NodeTable, EdgeStore]:
    table = NodeTable(capacity=4)
    edges = EdgeStore(table)
    for i in range(n):
        table.allocate(f"m{i}")
        edges.add_node(i)
    return table, edges


def brute_association(edges: EdgeStore, weight: np.ndarray) -> np.ndarray:
    out = np.zeros(len(weight))
    for u, v in edges.graph.edges:
        strength = max(s for _, s in edges.graph[u][v]["rels"].values())
        out[u] += strength * weight[v] / max(edges.graph.degree(v), 1)
        out[v] += strength * weight[u] / max(edges.graph.degree(u), 1)
    return out


def test_link_is_typed_directed_and_updates_degree() -> None:
    table, edges = store_with(3)
    assert edges.link(0, 1, Relation.BEFORE, 1.0) is True
    assert edges.link(0, 1, Relation.BEFORE, 1.0) is False
    assert edges.link(1, 0, Relation.SIMILAR_TO, 0.6) is True
    assert edges.link(2, 2, Relation.RELATED_TO, 1.0) is False
    assert len(edges) == 1
    assert table.degree[:3].tolist() == [1, 1, 0]
    rels = sorted(edges.relations(0), key=lambda r: r[2].value)
    assert rels == [(0, 1, Relation.BEFORE, 1.0), (1, 0, Relation.SIMILAR_TO, 0.6)]
    assert list(edges.neighbours(1)) == [(0, 1.0)]  # strongest relation of the pair


def test_neighbour_strength_follows_updates() -> None:
    _, edges = store_with(2)
    edges.link(0, 1, Relation.SIMILAR_TO, 0.6)
    ((neighbour, strength),) = edges.neighbours(0)
    assert neighbour == 1
    assert strength == pytest.approx(0.6)
    edges.link(0, 1, Relation.SIMILAR_TO, 0.8)
    ((neighbour, strength),) = edges.neighbours(0)
    assert neighbour == 1
    assert strength == pytest.approx(0.8)


def test_association_is_one_pagerank_step() -> None:
    _, edges = store_with(4)
    edges.link(0, 1, Relation.SIMILAR_TO, 0.5)
    edges.link(1, 2, Relation.BEFORE, 1.0)
    edges.link(0, 2, Relation.CAUSAL, 0.25)
    weight = np.array([1.0, 2.0, 4.0, 8.0])
    got = edges.association(weight)
    # node 0: 0.5 * w1/deg1 + 0.25 * w2/deg2 = 0.5*2/2 + 0.25*4/2
    assert got[0] == pytest.approx(0.5 + 0.5)
    assert got[3] == 0.0  # isolated
    np.testing.assert_allclose(got, brute_association(edges, weight), rtol=1e-6)


def test_remove_node_drops_its_edges_and_degrees() -> None:
    table, edges = store_with(3)
    edges.link(0, 1, Relation.BEFORE, 1.0)
    edges.link(1, 2, Relation.BEFORE, 1.0)
    edges.remove_node(1)
    edges.remove_node(1)
    assert len(edges) == 0
    assert table.degree[:3].tolist() == [0, 0, 0]
    np.testing.assert_allclose(edges.association(np.ones(3)), np.zeros(3))


def test_compaction_keeps_association_exact() -> None:
    n = 1_200
    table, edges = store_with(n + 3)
    hub = 0
    for i in range(1, n + 1):
        edges.link(hub, i, Relation.RELATED_TO, 0.5)
    edges.link(n + 1, n + 2, Relation.SIMILAR_TO, 0.9)
    edges.link(1, n + 1, Relation.BEFORE, 0.3)
    edges.remove_node(hub)  # > 1024 dead positions, more than half: compacts
    assert edges._dead == 0
    assert len(edges) == 2
    weight = np.linspace(0.1, 2.0, n + 3)
    np.testing.assert_allclose(
        edges.association(weight), brute_association(edges, weight), rtol=1e-6
    )
    assert table.degree[1] == 1
