"""Domain types: memory nodes, typed edges and retrieval hits.

Nodes handed out by the atlas are *snapshots*: the live state sits in columnar arrays
(see ``table``) so that decay and eviction run vectorised; a snapshot never changes
under the caller's feet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np


class MemoryKind(StrEnum):
    """Which tier a memory belongs to."""

    WORKING = "working"
    SESSION = "session"
    EPISODIC = "episodic"
    SUMMARY = "summary"
    KNOWLEDGE = "knowledge"


class MemoryStatus(StrEnum):
    """Lifecycle: only ``active`` memories are ever returned by retrieval."""

    ACTIVE = "active"
    DEPRECATED = "deprecated"
    SUPERSEDED = "superseded"
    TOMBSTONED = "tombstoned"


class Relation(StrEnum):
    """Typed relations between memories (from the first seed's list)."""

    RELATED_TO = "related_to"
    SIMILAR_TO = "similar_to"
    BEFORE = "before"
    AFTER = "after"
    CAUSAL = "causal"
    PART_OF = "part_of"
    CONTRADICTS = "contradicts"
    SUMMARIZES = "summarizes"
    SUPERSEDES = "supersedes"


class EvictionReason(StrEnum):
    """Why a memory left the atlas; every eviction event carries one."""

    BELOW_THRESHOLD = "below_threshold"
    CAPACITY = "capacity"
    ORPHAN = "orphan"
    EXPIRED = "expired"
    SESSION_PURGE = "session_purge"
    MERGED = "merged"
    FORGOTTEN = "forgotten"
    MEMORY_PRESSURE = "memory_pressure"


KIND_CODES: tuple[MemoryKind, ...] = tuple(MemoryKind)
STATUS_CODES: tuple[MemoryStatus, ...] = tuple(MemoryStatus)
RELATION_CODES: tuple[Relation, ...] = tuple(Relation)


@dataclass(slots=True, eq=False)
class MemoryNode:
    """A snapshot of one memory. Identity is the ``id``."""

    id: str
    content: str
    session_id: str
    kind: MemoryKind
    status: MemoryStatus
    weight: float
    strength: float
    importance: float
    confidence: float
    created_at: float
    last_accessed_at: float
    access_count: int
    expires_at: float | None
    pinned: bool
    provenance: tuple[str, ...]
    metadata: dict[str, Any]
    embedding: np.ndarray | None = field(default=None, repr=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryNode) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)


@dataclass(slots=True, frozen=True)
class MemoryEdge:
    """A typed, weighted relation ``source -> target``."""

    source_id: str
    target_id: str
    relation: Relation
    strength: float = 1.0


@dataclass(slots=True, frozen=True)
class ScoreBreakdown:
    """Every part of a retrieval score, so a user can see why a memory ranked where it did.

    ``relevance`` mixes cosine and saturated BM25; ``gate`` is 1 when relevance is above
    what unrelated texts reach; ``final`` is ``(w_rel*relevance + gate*(w_weight*weight_norm
    + w_recency*recency)) / (w_rel + w_weight + w_recency) * confidence_factor
    * session_factor``.
    """

    dense: float
    lexical: float
    graph: float
    relevance: float
    weight: float
    weight_norm: float
    recency: float
    confidence: float
    session_factor: float
    final: float
    sources: tuple[str, ...]
    gate: float = 1.0
    """1 when the memory is related to the query (weight and recency count), else 0."""

    def as_dict(self) -> dict[str, float | str]:
        """Flat mapping for tables and JSON."""
        return {
            "dense": self.dense,
            "lexical": self.lexical,
            "graph": self.graph,
            "relevance": self.relevance,
            "weight": self.weight,
            "weight_norm": self.weight_norm,
            "recency": self.recency,
            "confidence": self.confidence,
            "session_factor": self.session_factor,
            "gate": self.gate,
            "final": self.final,
            "sources": "+".join(self.sources),
        }


@dataclass(slots=True, frozen=True)
class RetrievalHit:
    """One retrieved memory; ``cross_session`` marks hits borrowed from another session."""

    node: MemoryNode
    score: float
    breakdown: ScoreBreakdown
    cross_session: bool = False
