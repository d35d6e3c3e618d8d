"""Typed edges between memories: networkx for topology, numpy arrays for bulk maths.

The networkx graph (keyed by slot) answers neighbourhood questions; a parallel edge list
in contiguous arrays lets the association term (one PageRank-like step over the whole
graph) run as two ``bincount`` calls instead of a Python loop.
"""

from __future__ import annotations

from collections.abc import Iterator

import networkx as nx
import numpy as np

from memory_core.engine.model import Relation
from memory_core.engine.table import NodeTable


class EdgeStore:
    """Undirected topology; each pair holds one or more typed, directed relations."""

    __slots__ = ("_alive", "_dead", "_dst", "_n", "_src", "_strength", "_table", "graph")

    def __init__(self, table: NodeTable) -> None:
        self.graph: nx.Graph = nx.Graph()
        self._table = table  # its degree column is kept up to date here
        self._src = np.zeros(256, dtype=np.int64)
        self._dst = np.zeros(256, dtype=np.int64)
        self._strength = np.zeros(256, dtype=np.float32)
        self._alive = np.zeros(256, dtype=bool)
        self._n = 0
        self._dead = 0

    def __len__(self) -> int:
        return self._n - self._dead

    def add_node(self, slot: int) -> None:
        self.graph.add_node(slot)

    def link(self, source: int, target: int, relation: Relation, strength: float) -> bool:
        """Add or update ``source -relation-> target``; True when the relation is new."""
        if source == target:
            return False
        data = self.graph.get_edge_data(source, target)
        if data is None:
            pos = self._append(source, target, strength)
            self.graph.add_edge(source, target, rels={relation: (source, strength)}, pos=pos)
            self._table.degree[source] += 1
            self._table.degree[target] += 1
            return True
        rels: dict[Relation, tuple[int, float]] = data["rels"]
        is_new = relation not in rels
        rels[relation] = (source, strength)
        self._strength[data["pos"]] = max(s for _, s in rels.values())
        return is_new

    def remove_node(self, slot: int) -> None:
        if slot not in self.graph:
            return
        for neighbour, data in self.graph[slot].items():
            self._alive[data["pos"]] = False
            self._dead += 1
            self._table.degree[neighbour] -= 1
        self._table.degree[slot] = 0
        self.graph.remove_node(slot)
        if self._dead > 1024 and self._dead > self._n // 2:
            self._compact()

    def relations(self, slot: int) -> Iterator[tuple[int, int, Relation, float]]:
        """(source, target, relation, strength) of every relation touching ``slot``."""
        for neighbour, data in self.graph[slot].items():
            for relation, (source, strength) in data["rels"].items():
                target = neighbour if source == slot else slot
                yield source, target, relation, strength

    def all_relations(self) -> Iterator[tuple[int, int, Relation, float]]:
        for _, _, data in self.graph.edges(data=True):
            for relation, (source, strength) in data["rels"].items():
                yield source, 0, relation, strength

    def neighbours(self, slot: int) -> Iterator[tuple[int, float]]:
        """(neighbour, strongest relation strength)."""
        for neighbour, data in self.graph[slot].items():
            yield neighbour, float(self._strength[data["pos"]])

    def association(self, weight: np.ndarray) -> np.ndarray:
        """sum over neighbours j of strength_ij * weight_j / degree_j (one PageRank step)."""
        n = self._n
        live = self._alive[:n]
        src, dst, strength = self._src[:n][live], self._dst[:n][live], self._strength[:n][live]
        size = len(weight)
        spread = weight / np.maximum(self._table.degree[:size], 1)
        return (
            np.bincount(src, weights=strength * spread[dst], minlength=size)
            + np.bincount(dst, weights=strength * spread[src], minlength=size)
        )[:size]

    def _append(self, source: int, target: int, strength: float) -> int:
        if self._n == len(self._src):
            size = 2 * self._n
            self._src = np.resize(self._src, size)
            self._dst = np.resize(self._dst, size)
            self._strength = np.resize(self._strength, size)
            self._alive = np.resize(self._alive, size)
        pos = self._n
        self._src[pos], self._dst[pos] = source, target
        self._strength[pos] = strength
        self._alive[pos] = True
        self._n += 1
        return pos

    def _compact(self) -> None:
        self._n = 0
        self._dead = 0
        for u, v, data in self.graph.edges(data=True):
            data["pos"] = self._append(u, v, max(s for _, s in data["rels"].values()))
