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
    pairs: dict[tuple[int, int], float] = {}
    for source, target, _, strength in edges.all_relations():
        key = (min(source, target), max(source, target))
        pairs[key] = max(pairs.get(key, 0.0), strength)
    out = np.zeros(len(weight))
    for (u, v), strength in pairs.items():
        out[u] += strength * weight[v] / max(edges.degree(v), 1)
        out[v] += strength * weight[u] / max(edges.degree(u), 1)
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


def random_ops(
    seed: int, n: int = 60, steps: int = 600
) -> list[tuple[str, int, int, Relation, float]]:
    rng = np.random.default_rng(seed)
    relations = list(Relation)
    ops = []
    for _ in range(steps):
        a, b = (int(v) for v in rng.integers(0, n, 2))
        kind = "remove" if rng.random() < 0.1 else "link"
        ops.append((kind, a, b, relations[int(rng.integers(0, 3))], float(rng.random())))
    return ops


def replayed(
    ops: list[tuple[str, int, int, Relation, float]], n: int = 60
) -> tuple[NodeTable, EdgeStore]:
    table, edges = store_with(n)
    for kind, a, b, relation, strength in ops:
        if kind == "link":
            edges.link(a, b, relation, strength)
        else:
            edges.remove_node(a)
            edges.add_node(a)
    return table, edges


@pytest.mark.parametrize("seed", range(5))
def test_lists_degrees_and_relations_agree_with_a_plain_model(seed: int) -> None:
    """Random links and removals against a dict of pairs (what networkx held)."""
    model: dict[tuple[int, int], dict[Relation, tuple[int, float]]] = {}
    ops = random_ops(seed)
    table, edges = replayed(ops)
    for kind, a, b, relation, strength in ops:
        if kind == "link" and a != b:
            model.setdefault((min(a, b), max(a, b)), {})[relation] = (a, strength)
        elif kind == "remove":
            model = {k: v for k, v in model.items() if a not in k}
    expected = sorted(
        (source, b if source == a else a, rel, st)
        for (a, b), rels in model.items()
        for rel, (source, st) in rels.items()
    )
    assert sorted(edges.all_relations()) == expected
    assert len(edges) == len(model)
    for slot in range(60):
        touching = [r for r in expected if slot in (r[0], r[1])]
        assert sorted(edges.relations(slot)) == touching
        assert table.degree[slot] == edges.degree(slot) == sum(slot in k for k in model)
        strongest = {
            (b if a == slot else a): max(s for _, s in rels.values())
            for (a, b), rels in model.items()
            if slot in (a, b)
        }
        got = dict(edges.neighbours(slot))
        assert got.keys() == strongest.keys()
        assert all(got[k] == pytest.approx(v, rel=1e-6) for k, v in strongest.items())


@pytest.mark.parametrize("seed", range(5))
def test_load_equals_linking_row_by_row(seed: int) -> None:
    _, linked = replayed(random_ops(seed))
    columns = linked.columns()
    table, loaded = store_with(60)
    loaded.load(*columns)
    assert list(loaded.all_relations()) == list(linked.all_relations())
    for name, a, b in zip(
        ["src", "dst", "rel", "strength"], loaded.columns(), columns, strict=True
    ):
        np.testing.assert_array_equal(a, b, err_msg=name)
    for slot in range(60):
        assert list(loaded.relations(slot)) == list(linked.relations(slot))
        assert table.degree[slot] == loaded.degree(slot)
    weight = np.linspace(0.5, 1.5, 60)
    # a pair's two ends may be stored the other way round: sums in another order
    np.testing.assert_allclose(loaded.association(weight), linked.association(weight), rtol=1e-12)


def test_load_merges_rows_of_one_pair_as_link_does() -> None:
    """Several rows for one pair (any order, a relation repeated) end as link() leaves them."""
    rows = [
        (0, 1, Relation.SIMILAR_TO, 0.5),
        (2, 1, Relation.BEFORE, 1.0),
        (1, 0, Relation.CAUSAL, 0.25),
        (1, 0, Relation.SIMILAR_TO, 0.75),  # same relation, other direction: replaces
    ]
    _, linked = store_with(3)
    for row in rows:
        linked.link(*row)
    table, loaded = store_with(3)
    codes = [list(Relation).index(r[2]) for r in rows]
    loaded.load(
        np.array([r[0] for r in rows]),
        np.array([r[1] for r in rows]),
        np.array(codes, dtype=np.int8),
        np.array([r[3] for r in rows]),
    )
    assert list(loaded.all_relations()) == list(linked.all_relations())
    assert list(loaded.neighbours(0)) == list(linked.neighbours(0)) == [(1, 0.75)]
    assert table.degree[:3].tolist() == [1, 2, 1]
    with pytest.raises(ValueError, match="without edges"):
        loaded.load(np.array([0]), np.array([2]), np.array([0], np.int8), np.array([1.0]))


@pytest.mark.parametrize("seed", range(5))
def test_columns_list_all_relations_in_order_and_a_freeze_keeps_its_instant(seed: int) -> None:
    """The vectorised columns (pairs with several relations expanded) are all_relations
    row by row; a frozen copy does not see links made after it (a snapshot's instant)."""
    _, edges = replayed(random_ops(seed))
    expected = list(edges.all_relations())
    assert any(len(rels) > 1 for rels in edges._more.values())  # the expanded path runs
    frozen = edges.freeze()
    for a in range(0, 60, 7):  # later changes, also to pairs with several relations
        edges.link(a, (a + 1) % 60, Relation.CAUSAL, 0.125)
        edges.remove_node((a + 3) % 60)
    sources, targets, codes, strengths = frozen.columns()
    rows = list(
        zip(sources.tolist(), targets.tolist(), codes.tolist(), strengths.tolist(), strict=True)
    )
    relations = list(Relation)
    assert [(s, t, relations[c], st) for s, t, c, st in rows] == expected
    assert codes.dtype == np.int8 and sources.dtype == np.int64


@pytest.mark.parametrize("seed", range(3))
def test_spread_scores_each_neighbour_by_its_best_seed(seed: int) -> None:
    """Graph expansion's walk: every neighbour of the seeds outside ``skip``, with the
    largest seed score times strength, in the order the seeds' neighbour lists meet them;
    a seed with no edges (or beyond the store) adds nothing."""
    rng = np.random.default_rng(seed)
    _, edges = store_with(40)
    for _ in range(120):
        a, b = (int(x) for x in rng.choice(40, 2, replace=False))
        edges.link(a, b, Relation.RELATED_TO, float(rng.uniform(0.1, 1.0)))
    seeds = [int(s) for s in rng.choice(40, 8, replace=False)] + [99]
    scores = [float(s) for s in rng.uniform(0.01, 0.05, len(seeds))]
    skip = {int(s) for s in rng.choice(40, 10, replace=False)}
    want: dict[int, float] = {}
    for s, score in zip(seeds, scores, strict=True):
        for neighbour, strength in edges.neighbours(s):
            if neighbour not in skip and score * strength > want.get(neighbour, 0.0):
                want[neighbour] = score * strength
    got = edges.spread(seeds, scores, skip)
    assert list(got.items()) == list(want.items()) and got
