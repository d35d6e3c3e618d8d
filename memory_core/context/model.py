"""The seed's property graph types: four node types, six edge types, frozen versions.

Nodes and edges are frozen slotted dataclasses; a change makes a new version and the old
one is kept (time travel with ``ContextGraph.as_of``, audit). Edges carry graphiti's
bi-temporal fields: ``valid_at`` (since when the fact holds), ``invalid_at`` (since when it
no longer holds: a later turn superseded it) and ``expired_at`` (when the graph learned
so); a superseded fact is invalidated, never deleted. Every node and edge lists the turns
and memory ids it came from.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

Scalar = str | float | int | bool | None


class NodeType(StrEnum):
    USER = "User"
    GOAL = "Goal"
    CONSTRAINT = "Constraint"
    ENTITY = "Entity"


class EdgeType(StrEnum):
    HAS_GOAL = "HAS_GOAL"
    SATISFIES = "SATISFIES"
    CONFLICTS_WITH = "CONFLICTS_WITH"
    REFERENCES = "REFERENCES"
    MODIFIES = "MODIFIES"
    VALIDATES = "VALIDATES"


@dataclass(frozen=True, slots=True)
class Node:
    """One version of a node. ``key`` is the normalised key its id is a hash of."""

    id: str
    type: NodeType
    label: str
    key: str
    attributes: tuple[tuple[str, Scalar], ...] = ()
    version: int = 1
    recorded_at: float = 0.0
    """When this version was made (the turn's time)."""
    deprecated: bool = False
    """Replaced by a newer value for the same slot (kept, not in force)."""
    soft_deleted: bool = False
    """Forgotten on request (kept for audit, hidden from queries by default)."""
    turns: tuple[int, ...] = ()
    memories: tuple[str, ...] = ()

    @property
    def attrs(self) -> dict[str, Scalar]:
        return dict(self.attributes)

    def attr(self, name: str, default: Scalar = None) -> Scalar:
        return next((v for k, v in self.attributes if k == name), default)

    @property
    def active(self) -> bool:
        return not (self.deprecated or self.soft_deleted)


@dataclass(frozen=True, slots=True)
class Edge:
    """One version of a directed, typed edge."""

    id: str
    source: str
    target: str
    type: EdgeType
    fact: str = ""
    valid_at: float = 0.0
    invalid_at: float | None = None
    expired_at: float | None = None
    soft_deleted: bool = False
    version: int = 1
    recorded_at: float = 0.0
    turns: tuple[int, ...] = ()
    memories: tuple[str, ...] = ()

    @property
    def deprecated(self) -> bool:
        return self.invalid_at is not None

    @property
    def active(self) -> bool:
        return not (self.deprecated or self.soft_deleted)


@dataclass(frozen=True, slots=True)
class PendingReview:
    """A change the graph did not apply because it is unsure the new value is for the same
    slot as the one in force: someone (the conflicts review queue) decides."""

    subject: str
    slot: str
    value: str
    existing_id: str
    existing_slot: str
    existing_value: str
    similarity: float
    turn: int
    memory_id: str | None
    attributes: tuple[tuple[str, Scalar], ...] = field(default=())


def normalise(text: str) -> str:
    """Lower case, single spaces, no punctuation at the ends: the form keys are made of."""
    return re.sub(r"\s+", " ", text.lower()).strip(" .,;:!?\"'")


def day_of(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y%m%d") if at is not None else "undated"


def node_id(user: str, at: float | None, type_: NodeType, key: str) -> str:
    """Short hash of user + day + normalised key: the same thing said twice that day is one
    node (the seed's ``hash("U-7821_20240721_iPhone15")``)."""
    raw = f"{user}_{day_of(at)}_{type_.value}:{normalise(key)}"
    prefix = {"User": "U", "Goal": "G", "Constraint": "C", "Entity": "E"}[type_.value]
    return f"{prefix}-{hashlib.blake2b(raw.encode(), digest_size=5).hexdigest()}"


def edge_id(source: str, type_: EdgeType, target: str) -> str:
    raw = f"{source}|{type_.value}|{target}"
    return f"R-{hashlib.blake2b(raw.encode(), digest_size=6).hexdigest()}"


def node_record(node: Node) -> dict[str, Any]:
    return {
        "id": node.id,
        "type": node.type.value,
        "label": node.label,
        "key": node.key,
        "attributes": dict(node.attributes),
        "version": node.version,
        "recorded_at": node.recorded_at,
        "deprecated": node.deprecated,
        "soft_deleted": node.soft_deleted,
        "turns": list(node.turns),
        "memories": list(node.memories),
    }


def node_from_record(record: dict[str, Any]) -> Node:
    return Node(
        id=str(record["id"]),
        type=NodeType(record["type"]),
        label=str(record["label"]),
        key=str(record["key"]),
        attributes=tuple(dict(record.get("attributes") or {}).items()),
        version=int(record.get("version", 1)),
        recorded_at=float(record.get("recorded_at", 0.0)),
        deprecated=bool(record.get("deprecated", False)),
        soft_deleted=bool(record.get("soft_deleted", False)),
        turns=tuple(int(t) for t in record.get("turns", ())),
        memories=tuple(str(m) for m in record.get("memories", ())),
    )


def edge_record(edge: Edge) -> dict[str, Any]:
    return {
        "id": edge.id,
        "source": edge.source,
        "target": edge.target,
        "type": edge.type.value,
        "fact": edge.fact,
        "valid_at": edge.valid_at,
        "invalid_at": edge.invalid_at,
        "expired_at": edge.expired_at,
        "soft_deleted": edge.soft_deleted,
        "version": edge.version,
        "recorded_at": edge.recorded_at,
        "turns": list(edge.turns),
        "memories": list(edge.memories),
    }


def edge_from_record(record: dict[str, Any]) -> Edge:
    def opt(name: str) -> float | None:
        value = record.get(name)
        return None if value is None else float(value)

    return Edge(
        id=str(record["id"]),
        source=str(record["source"]),
        target=str(record["target"]),
        type=EdgeType(record["type"]),
        fact=str(record.get("fact", "")),
        valid_at=float(record.get("valid_at", 0.0)),
        invalid_at=opt("invalid_at"),
        expired_at=opt("expired_at"),
        soft_deleted=bool(record.get("soft_deleted", False)),
        version=int(record.get("version", 1)),
        recorded_at=float(record.get("recorded_at", 0.0)),
        turns=tuple(int(t) for t in record.get("turns", ())),
        memories=tuple(str(m) for m in record.get("memories", ())),
    )
