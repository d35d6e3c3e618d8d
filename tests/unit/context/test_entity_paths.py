"""The health rule's mean entity path (``update.mean_entity_path``) against networkx's
shortest paths on random graphs: leaf entities sharing a neighbour (searched once from it),
entities in chains and cycles, parallel edges, self-loops, deprecated and soft-deleted
nodes and invalidated edges, isolated entities, and the ``limit`` on entities measured."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from memory_core.context.graph import ContextGraph
from memory_core.context.model import Edge, EdgeType, Node, NodeType
from memory_core.context.update import mean_entity_path

TYPES = (NodeType.ENTITY, NodeType.ENTITY, NodeType.GOAL, NodeType.CONSTRAINT)


def _random_graph(seed: int) -> ContextGraph:
    rng = random.Random(seed)
    graph = ContextGraph("u")
    ids = [graph.user_id]
    graph.put_node(Node(graph.user_id, NodeType.USER, "u", "u"))
    for i in range(rng.randint(2, 40)):
        ident = f"n{i}"
        graph.put_node(Node(ident, rng.choice(TYPES), ident, ident))
        ids.append(ident)
        hubs = ids[: max(2, len(ids) // 5)]  # most nodes hang off a few: leaves share them
        for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
            other = rng.choice(hubs if rng.random() < 0.7 else ids)
            kind = rng.choice(list(EdgeType))
            graph.put_edge(Edge(f"e{ident}{other}{kind.value}", ident, other, kind))
    for ident in rng.sample(ids[1:], k=len(ids) // 8):  # some nodes out of force
        node = graph.node(ident)
        graph.put_node(Node(node.id, node.type, node.label, node.key, version=2,
                            deprecated=rng.random() < 0.5, soft_deleted=rng.random() < 0.5))  # fmt: skip
    for edge in rng.sample(graph.edges(), k=len(graph.edges()) // 8):  # some edges too
        graph.put_edge(Edge(edge.id, edge.source, edge.target, edge.type, version=2,
                            invalid_at=1.0, soft_deleted=rng.random() < 0.3))  # fmt: skip
    return graph


def _networkx_mean(graph: ContextGraph, limit: int) -> float:
    g = nx.MultiGraph()
    g.add_nodes_from(n.id for n in graph.nodes())
    g.add_edges_from((e.source, e.target) for e in graph.edges() if {e.source, e.target} <= set(g))
    entities = [n.id for n in graph.nodes(NodeType.ENTITY)][:limit]
    lengths = [
        nx.shortest_path_length(g, a, b)
        for a, b in itertools.permutations(entities, 2)
        if nx.has_path(g, a, b)
    ]
    return sum(lengths) / len(lengths) if len(entities) > 1 and lengths else 0.0


@pytest.mark.parametrize("seed", range(120))
def test_mean_entity_path_equals_networkx(seed: int) -> None:
    graph = _random_graph(seed)
    for limit in (200, 5):
        assert mean_entity_path(graph, limit) == _networkx_mean(graph, limit)


def test_leaves_sharing_a_neighbour_and_a_chain() -> None:
    """Three entities on one goal (2 hops apart pairwise) and one two goals further."""
    graph = ContextGraph("u")
    for ident, type_ in [("g1", NodeType.GOAL), ("g2", NodeType.GOAL), ("a", NodeType.ENTITY),
                         ("b", NodeType.ENTITY), ("c", NodeType.ENTITY), ("d", NodeType.ENTITY)]:  # fmt: skip
        graph.put_node(Node(ident, type_, ident, ident))
    for source, target in [("g1", "a"), ("g1", "b"), ("g1", "c"), ("g1", "g2"), ("g2", "d")]:
        graph.put_edge(Edge(f"{source}{target}", source, target, EdgeType.REFERENCES))
    # a-b, a-c, b-c: 2 hops; a/b/c-d: 3 hops; both directions: (6 * 2 + 6 * 3) / 12
    assert mean_entity_path(graph) == 2.5
