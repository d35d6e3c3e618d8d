"""Typed edges between memories, in contiguous arrays: no Python object per edge.

Each linked pair of memories has a *position*: its two ends, its strongest relation's
strength (float32, what ranking and the association step read) and its relations. Most
pairs hold one relation, stored in three columns (code, direction, float64 strength);
the few with more keep a small dict. A pair is two half-edges (``2 * pos`` at its first
end, ``2 * pos + 1`` at its second), threaded into one doubly linked list per memory in
ascending position order, so a memory's neighbours cost O(its degree) and unlinking one
O(1). The association term (one PageRank-like step over the whole graph) is two
``bincount`` calls over the position arrays. A networkx graph cost ~870 bytes per memory
at 100k and a Python call per edge to load; these arrays cost ~45 bytes per edge and
load from a snapshot in a few vectorised passes.
"""

from __future__ import annotations

from collections.abc import Container, Iterator

import numpy as np

from memory_core.engine.model import Relation
from memory_core.engine.table import NodeTable

RELATIONS = tuple(Relation)
"""Relation codes: the index of a relation in this tuple (snapshots store the names)."""
_CODE = {r: i for i, r in enumerate(RELATIONS)}

_Rels = dict[Relation, tuple[int, float]]
"""A pair's relations: relation -> (its source slot, its strength), in linking order."""


class EdgeStore:
    """Undirected topology; each pair holds one or more typed, directed relations."""

    __slots__ = (
        "_alive",
        "_dead",
        "_ends",
        "_forward",
        "_head",
        "_more",
        "_n",
        "_next",
        "_present",
        "_prev",
        "_rel",
        "_rel_strength",
        "_strength",
        "_table",
        "_tail",
    )

    def __init__(self, table: NodeTable) -> None:
        self._table = table  # its degree column is kept up to date here
        self._n = 0  # positions used (live and dead)
        self._dead = 0
        self._ends = np.zeros(512, dtype=np.int32)  # half-edge -> its memory's slot
        self._next = np.full(512, -1, dtype=np.int32)  # half-edge -> next in its list
        self._prev = np.full(512, -1, dtype=np.int32)
        self._strength = np.zeros(256, dtype=np.float32)  # position -> strongest relation
        self._alive = np.zeros(256, dtype=bool)
        self._rel = np.zeros(256, dtype=np.int8)  # the pair's (first) relation code
        self._forward = np.zeros(256, dtype=bool)  # its source is the first end
        self._rel_strength = np.zeros(256, dtype=np.float64)
        self._more: dict[int, _Rels] = {}  # position -> every relation, for pairs with 2+
        self._head = np.full(64, -1, dtype=np.int32)  # slot -> first half-edge, -1 none
        self._tail = np.full(64, -1, dtype=np.int32)
        self._present = np.zeros(64, dtype=bool)  # slot -> is a node of the graph

    def __len__(self) -> int:
        return self._n - self._dead

    def add_node(self, slot: int) -> None:
        if slot >= len(self._present):
            self._grow_slots(slot + 1)
        self._present[slot] = True

    def add_nodes(self, slots: np.ndarray) -> None:
        if len(slots) and int(slots.max()) >= len(self._present):
            self._grow_slots(int(slots.max()) + 1)
        self._present[slots] = True

    def nodes(self) -> np.ndarray:
        """The slots that are nodes, ascending."""
        return np.flatnonzero(self._present)

    def degree(self, slot: int) -> int:
        """Neighbours of ``slot``, counted along its list (the table's column is the fast
        answer; this one is for checking it)."""
        return sum(1 for _ in self._halves(slot))

    def link(self, source: int, target: int, relation: Relation, strength: float) -> bool:
        """Add or update ``source -relation-> target``; True when the relation is new."""
        if source == target:
            return False
        pos = self._find(source, target)
        if pos < 0:
            pos = self._append(source, target)
            self._rel[pos], self._forward[pos] = _CODE[relation], True
            self._rel_strength[pos] = self._strength[pos] = strength
            self._table.degree[source] += 1
            self._table.degree[target] += 1
            return True
        return self._relate(pos, relation, source, strength)

    def remove_node(self, slot: int) -> None:
        if slot >= len(self._present) or not self._present[slot]:
            return
        degree = self._table.degree
        for half in list(self._halves(slot)):
            other = half ^ 1
            self._unthread(other)
            degree[self._ends[other]] -= 1
            pos = half >> 1
            self._alive[pos] = False
            self._more.pop(pos, None)
            self._dead += 1
        self._head[slot] = self._tail[slot] = -1
        self._present[slot] = False
        degree[slot] = 0
        if self._dead > 1024 and self._dead > self._n // 2:
            self._compact()

    def relations(self, slot: int) -> Iterator[tuple[int, int, Relation, float]]:
        """(source, target, relation, strength) of every relation touching ``slot``."""
        for half in list(self._halves(slot)):
            neighbour = int(self._ends[half ^ 1])
            for relation, (source, strength) in self._rels(half >> 1).items():
                target = neighbour if source == slot else slot
                yield source, target, relation, strength

    def all_relations(self) -> Iterator[tuple[int, int, Relation, float]]:
        """(source, target, relation, strength) of every relation, pairs in linking order."""
        for pos in np.flatnonzero(self._alive[: self._n]).tolist():
            first, second = int(self._ends[2 * pos]), int(self._ends[2 * pos + 1])
            for relation, (source, strength) in self._rels(pos).items():
                yield source, second if source == first else first, relation, strength

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every relation as (source slots, target slots, relation codes, strengths), in
        ``all_relations`` order (what a snapshot stores)."""
        return self.freeze().columns()

    def freeze(self) -> FrozenEdges:
        """A copy of the live pairs, cheap to take (a few array gathers): a snapshot takes
        it under the atlas lock and builds the columns after releasing it."""
        pos = np.flatnonzero(self._alive[: self._n])
        more = {p: dict(rels) for p, rels in self._more.items()}  # a pair's dict changes
        return FrozenEdges(
            pos,
            self._ends[2 * pos],
            self._ends[2 * pos + 1],
            self._forward[pos],
            self._rel[pos],
            self._rel_strength[pos],
            more,
        )

    def load(
        self, sources: np.ndarray, targets: np.ndarray, codes: np.ndarray, strengths: np.ndarray
    ) -> None:
        """Link many relations at once into a store without edges, with the result of
        ``link`` row by row: pairs get positions in order of first appearance."""
        if self._n:
            raise ValueError("EdgeStore.load needs a store without edges")
        sources = np.asarray(sources, dtype=np.int64)
        targets = np.asarray(targets, dtype=np.int64)
        if not len(sources):
            return
        if (sources == targets).any():
            raise ValueError("EdgeStore.load got a relation from a memory to itself")
        low, high = np.minimum(sources, targets), np.maximum(sources, targets)
        _, first_row, pair_of_row = np.unique(
            low * (int(high.max()) + 1) + high, return_index=True, return_inverse=True
        )
        order = np.argsort(first_row, kind="stable")  # pairs by first appearance
        pos_of_pair = np.empty(len(order), dtype=np.int64)
        pos_of_pair[order] = np.arange(len(order))
        rows = first_row[order]  # each pair's first row, in position order
        n = len(rows)
        self._ensure(n)
        self._ends[0 : 2 * n : 2] = sources[rows]
        self._ends[1 : 2 * n : 2] = targets[rows]
        self._rel[:n] = codes[rows]
        self._forward[:n] = True
        self._rel_strength[:n] = strengths[rows]
        self._strength[:n] = strengths[rows]
        self._alive[:n] = True
        self._n = n
        extra = np.ones(len(sources), dtype=bool)
        extra[rows] = False
        for row in np.flatnonzero(extra).tolist():  # a pair's further relations (rare)
            self._relate(
                int(pos_of_pair[pair_of_row[row]]),
                RELATIONS[codes[row]],
                int(sources[row]),
                float(strengths[row]),
            )
        degree = self._table.degree
        degree += np.bincount(self._ends[: 2 * n], minlength=len(degree)).astype(degree.dtype)
        self._thread()

    def neighbours(self, slot: int) -> list[tuple[int, float]]:
        """(neighbour, strongest relation strength), in position order (``item`` reads:
        a retrieval walks ~50 of these, and a numpy scalar per read cost more)."""
        out: list[tuple[int, float]] = []
        if slot >= len(self._head):
            return out
        ends, strength, nxt = self._ends, self._strength, self._next
        half = self._head.item(slot)
        while half >= 0:
            out.append((ends.item(half ^ 1), strength.item(half >> 1)))
            half = nxt.item(half)
        return out

    def spread(
        self, seeds: list[int], scores: list[float], skip: Container[int]
    ) -> dict[int, float]:
        """Each neighbour of ``seeds`` not in ``skip``: the largest ``score`` of a seed it
        is linked to times that link's strength, keyed in the order the walk meets them
        (seeds in order, each one's neighbours in position order). Graph expansion's walk
        in one loop: no list of pairs per seed, no strength read for a skipped neighbour
        (~90 edges a retrieve at 100k; docs/performance.md, session 14)."""
        best: dict[int, float] = {}
        head, ends, strength, nxt = self._head, self._ends, self._strength, self._next
        for seed, score in zip(seeds, scores, strict=True):
            half = head.item(seed) if seed < len(head) else -1
            while half >= 0:
                neighbour = ends.item(half ^ 1)
                if neighbour not in skip:
                    reach = score * strength.item(half >> 1)
                    if reach > best.get(neighbour, 0.0):
                        best[neighbour] = reach
                half = nxt.item(half)
        return best

    def association(self, weight: np.ndarray) -> np.ndarray:
        """sum over neighbours j of strength_ij * weight_j / degree_j (one PageRank step)."""
        n = self._n
        live = self._alive[:n]
        src, dst = self._ends[0 : 2 * n : 2][live], self._ends[1 : 2 * n : 2][live]
        strength = self._strength[:n][live]
        size = len(weight)
        spread = weight / np.maximum(self._table.degree[:size], 1)
        return (
            np.bincount(src, weights=strength * spread[dst], minlength=size)
            + np.bincount(dst, weights=strength * spread[src], minlength=size)
        )[:size]

    # ------------------------------------------------------------------ internals
    def _halves(self, slot: int) -> Iterator[int]:
        """The half-edges at ``slot``, in position order."""
        if slot >= len(self._head):
            return
        nxt = self._next
        half = int(self._head[slot])
        while half >= 0:
            yield half
            half = int(nxt[half])

    def _find(self, a: int, b: int) -> int:
        """The position of pair (a, b), -1 if unlinked: walks the shorter of both lists."""
        degree = self._table.degree
        if degree[b] < degree[a]:
            a, b = b, a
        ends = self._ends
        for half in self._halves(a):
            if ends[half ^ 1] == b:
                return half >> 1
        return -1

    def _rels(self, pos: int) -> _Rels:
        more = self._more.get(pos)
        if more is not None:
            return more
        end = 2 * pos if self._forward[pos] else 2 * pos + 1
        relation = RELATIONS[self._rel[pos]]
        return {relation: (int(self._ends[end]), float(self._rel_strength[pos]))}

    def _relate(self, pos: int, relation: Relation, source: int, strength: float) -> bool:
        """Add or update one relation of a linked pair; True when it is new to the pair."""
        rels = self._more.get(pos)
        if rels is None:
            if RELATIONS[self._rel[pos]] is relation:
                self._forward[pos] = source == self._ends[2 * pos]
                self._rel_strength[pos] = self._strength[pos] = strength
                return False
            rels = self._more[pos] = self._rels(pos)
        is_new = relation not in rels
        rels[relation] = (source, strength)
        self._strength[pos] = max(s for _, s in rels.values())
        return is_new

    def _append(self, source: int, target: int) -> int:
        pos = self._n
        self._ensure(pos + 1)
        self._n += 1
        self._alive[pos] = True
        for half, slot in ((2 * pos, source), (2 * pos + 1, target)):
            self._ends[half] = slot
            if slot >= len(self._head):
                self._grow_slots(slot + 1)
            tail = int(self._tail[slot])
            self._prev[half], self._next[half] = tail, -1
            if tail < 0:
                self._head[slot] = half
            else:
                self._next[tail] = half
            self._tail[slot] = half
        return pos

    def _unthread(self, half: int) -> None:
        """Take a half-edge out of its memory's list."""
        slot = self._ends[half]
        before, after = int(self._prev[half]), int(self._next[half])
        if before < 0:
            self._head[slot] = after
        else:
            self._next[before] = after
        if after < 0:
            self._tail[slot] = before
        else:
            self._prev[after] = before

    def _thread(self) -> None:
        """Rebuild every memory's list from the live positions (ascending)."""
        live = np.flatnonzero(self._alive[: self._n])
        halves = np.stack([2 * live, 2 * live + 1], axis=1).reshape(-1)
        slots = self._ends[halves]
        order = np.lexsort((halves, slots))
        halves, slots = halves[order].astype(np.int32), slots[order]
        self._head[:] = self._tail[:] = -1
        if slots.size and int(slots.max()) >= len(self._head):
            self._grow_slots(int(slots.max()) + 1)
        same = slots[1:] == slots[:-1]
        self._next[halves[:-1]] = np.where(same, halves[1:], -1)
        self._prev[halves[1:]] = np.where(same, halves[:-1], -1)
        if len(halves):
            self._next[halves[-1]] = self._prev[halves[0]] = -1
            first = np.r_[True, ~same]
            last = np.r_[~same, True]
            self._head[slots[first]] = halves[first]
            self._tail[slots[last]] = halves[last]

    def _compact(self) -> None:
        """Drop dead positions, keeping the live ones in order."""
        live = np.flatnonzero(self._alive[: self._n])
        n = len(live)
        halves = np.stack([2 * live, 2 * live + 1], axis=1).reshape(-1)
        self._ends[: 2 * n] = self._ends[halves]
        for name in ("_strength", "_rel", "_forward", "_rel_strength"):
            column = getattr(self, name)
            column[:n] = column[live]
        self._more = {int(np.searchsorted(live, p)): rels for p, rels in self._more.items()}
        self._alive[:n] = True
        self._alive[n:] = False
        self._n, self._dead = n, 0
        self._thread()

    def _ensure(self, positions: int) -> None:
        """Room for ``positions`` pairs (doubling)."""
        size = len(self._alive)
        if positions <= size:
            return
        size = max(positions, 2 * size)
        for name in ("_strength", "_alive", "_rel", "_forward", "_rel_strength"):
            setattr(self, name, _grown(getattr(self, name), size, 0))
        for name, fill in (("_ends", 0), ("_next", -1), ("_prev", -1)):
            setattr(self, name, _grown(getattr(self, name), 2 * size, fill))

    def _grow_slots(self, size: int) -> None:
        size = max(size, 2 * len(self._head))
        self._head = _grown(self._head, size, -1)
        self._tail = _grown(self._tail, size, -1)
        self._present = _grown(self._present, size, 0)


class FrozenEdges:
    """The live pairs of an ``EdgeStore`` at one instant (its own arrays, nothing shared)."""

    __slots__ = ("_first", "_forward", "_more", "_pos", "_rel", "_rel_strength", "_second")

    def __init__(
        self,
        pos: np.ndarray,
        first: np.ndarray,
        second: np.ndarray,
        forward: np.ndarray,
        rel: np.ndarray,
        rel_strength: np.ndarray,
        more: dict[int, _Rels],
    ) -> None:
        self._pos, self._first, self._second = pos, first, second
        self._forward, self._rel, self._rel_strength, self._more = forward, rel, rel_strength, more

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(sources, targets, codes, strengths) of every relation, pairs in position order
        and a pair's relations in linking order: one row per single-relation pair,
        vectorised; the few pairs with several relations expanded in Python."""
        first, second, forward = self._first, self._second, self._forward
        sources = np.where(forward, first, second).astype(np.int64)
        targets = np.where(forward, second, first).astype(np.int64)
        codes, strengths = self._rel.copy(), self._rel_strength.copy()
        if not self._more:
            return sources, targets, codes, strengths
        keys = sorted(self._more)
        at = np.searchsorted(self._pos, keys)
        counts = np.ones(len(self._pos), dtype=np.int64)
        counts[at] = [len(self._more[k]) for k in keys]
        row_of = np.repeat(np.arange(len(self._pos)), counts)
        out = [sources[row_of], targets[row_of], codes[row_of], strengths[row_of]]
        starts = np.cumsum(counts) - counts
        for key, i in zip(keys, at.tolist(), strict=True):
            a, b = int(first[i]), int(second[i])
            for j, (relation, (source, strength)) in enumerate(self._more[key].items()):
                row = int(starts[i]) + j
                out[0][row], out[1][row] = source, b if source == a else a
                out[2][row], out[3][row] = _CODE[relation], strength
        return out[0], out[1], out[2], out[3]


def _grown(array: np.ndarray, size: int, fill: int) -> np.ndarray:
    out = np.full(size, fill, dtype=array.dtype)
    out[: len(array)] = array
    return out
