"""The first seed's algorithm as its article writes it, to measure the engine against.

Section 3 of the seed keeps every memory as a dataclass on a ``networkx.Graph`` node and
does everything by looping over all nodes in Python: retrieval scores every node
(``0.5 * cosine + 0.3 * weight + 0.2 * recency``), auto-linking compares the new memory
with every node of its session, decay subtracts ``decay_rate * hours`` from every weight,
eviction removes every node below 0.15. This is our own code for that algorithm, with
two deliberate differences that only make the reference *faster*, so the ratios we
report are conservative:

* cosine similarity is one numpy dot product per pair; the seed calls scikit-learn's
  ``cosine_similarity`` per pair, which costs tens of microseconds more each;
* the decay pass that the seed runs inside every tenth ``retrieve`` is switched off
  (``decay_every=0``) so that retrieval and decay are timed separately, as for the engine.
"""

from __future__ import annotations

import pickle
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

SIMILARITY_THRESHOLD = 0.7
MAX_AUTO_LINKS = 3
EVICT_THRESHOLD = 0.15
ORPHAN_THRESHOLD = 0.5
WEIGHT_FLOOR = 0.1
WEIGHT_CAP = 3.0
REINFORCE = 1.2


@dataclass(slots=True)
class SeedNode:
    """The seed's ``MemoryNode``: one Python object per memory, vector included."""

    content: str
    embedding: np.ndarray | None
    created_at: float
    last_accessed_at: float
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    weight: float = 1.0
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SeedEdge:
    source_id: str
    target_id: str
    relation_type: str
    strength: float = 1.0


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b) / (float(np.linalg.norm(a)) * float(np.linalg.norm(b)))


class SeedAtlas:
    """``ElasticMemoryAtlas`` of the first seed, with an injectable clock."""

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        decay_rate: float = 0.05,
        max_nodes: int | None = 10_000,
        decay_every: int = 0,
    ) -> None:
        self.graph: nx.Graph = nx.Graph()
        self.clock = clock
        self.decay_rate = decay_rate
        self.max_nodes = max_nodes
        self.decay_every = decay_every
        self._access_counter = 0

    def __len__(self) -> int:
        return len(self.graph)

    def add_memory(
        self,
        content: str,
        metadata: dict[str, Any] | None = None,
        links_to: Iterable[str] = (),
        embedding: np.ndarray | None = None,
    ) -> SeedNode:
        """Add a node; at ``max_nodes`` first run the threshold eviction (as the seed does)."""
        if self.max_nodes and len(self.graph) >= self.max_nodes:
            self.evict_weak_memories()
        now = self.clock()
        node = SeedNode(content, embedding, now, now, metadata=metadata or {})
        self.graph.add_node(node.id, node=node)
        for target in links_to:
            if target in self.graph:
                self.graph.add_edge(node.id, target, relation=SeedEdge(node.id, target, "related"))
        return node

    def add_memory_with_auto_link(
        self, content: str, session_id: str, embedding: np.ndarray
    ) -> SeedNode:
        """Compare the new memory with every same-session node; link the top 3 above 0.7."""
        node = self.add_memory(content, metadata={"session_id": session_id})
        node.embedding = embedding
        candidates = []
        for other_id, data in self.graph.nodes(data=True):
            other: SeedNode = data["node"]
            if other_id == node.id:
                continue
            if other.metadata.get("session_id") == session_id and other.embedding is not None:
                similarity = cosine(embedding, other.embedding)
                if similarity > SIMILARITY_THRESHOLD:
                    candidates.append((other_id, similarity))
        for other_id, sim in sorted(candidates, key=lambda c: c[1], reverse=True)[:MAX_AUTO_LINKS]:
            self.graph.add_edge(
                node.id, other_id, relation=SeedEdge(node.id, other_id, f"similar_{sim:.2f}")
            )
        return node

    def retrieve(
        self, query_embedding: np.ndarray, top_k: int = 5, session_id: str | None = None
    ) -> list[SeedNode]:
        """Score every node: 0.5 * cosine + 0.3 * weight + 0.2 * recency; reinforce the top k."""
        self._access_counter += 1
        now = self.clock()
        scored = []
        for _, data in self.graph.nodes(data=True):
            node: SeedNode = data["node"]
            if node.embedding is None:
                continue
            if session_id is not None and node.metadata.get("session_id") != session_id:
                continue
            recency = 1.0 / ((now - node.last_accessed_at) / 3600.0 + 1.0)
            score = 0.5 * cosine(query_embedding, node.embedding) + 0.3 * node.weight
            scored.append((score + 0.2 * recency, node))
        scored.sort(key=lambda pair: pair[0], reverse=True)
        result = [node for _, node in scored[:top_k]]
        for node in result:
            node.weight = min(node.weight * REINFORCE, WEIGHT_CAP)
            node.last_accessed_at = now
        if self.decay_every and self._access_counter % self.decay_every == 0:
            self.apply_decay()
            self.cleanup_orphans()
        return result

    def apply_decay(self) -> None:
        """Linear decay: lose ``decay_rate`` per hour since last access (floor 0.1)."""
        now = self.clock()
        for _, data in self.graph.nodes(data=True):
            node: SeedNode = data["node"]
            hours = (now - node.last_accessed_at) / 3600.0
            node.weight = max(node.weight - self.decay_rate * hours, WEIGHT_FLOOR)

    def evict_weak_memories(self) -> int:
        """Remove every node whose weight fell below the 0.15 threshold."""
        doomed = [
            node_id
            for node_id, data in self.graph.nodes(data=True)
            if data["node"].weight < EVICT_THRESHOLD
        ]
        self.graph.remove_nodes_from(doomed)
        return len(doomed)

    def cleanup_orphans(self) -> int:
        """Remove unconnected nodes whose weight is below 0.5."""
        doomed = [
            node_id
            for node_id in self.graph.nodes()
            if self.graph.degree(node_id) == 0
            and self.graph.nodes[node_id]["node"].weight < ORPHAN_THRESHOLD
        ]
        self.graph.remove_nodes_from(doomed)
        return len(doomed)

    def end_session(self, session_id: str) -> int:
        """Delete every node of the session (the seed's "method 1")."""
        doomed = [
            node_id
            for node_id, data in self.graph.nodes(data=True)
            if data["node"].metadata.get("session_id") == session_id
        ]
        self.graph.remove_nodes_from(doomed)
        return len(doomed)

    def export(self, path: Path) -> Path:
        """The seed has no snapshot; pickling the graph is the nearest equivalent."""
        with path.open("wb") as fh:
            pickle.dump(self.graph, fh, protocol=pickle.HIGHEST_PROTOCOL)
        return path
