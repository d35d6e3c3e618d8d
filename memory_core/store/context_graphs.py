"""The task context graph's versions in the store: one protocol, in memory or in SQL.

The store never imports the context package: it keeps plain records (every field of a
node or edge version, provenance included), and the part that owns a graph turns it into
records and back. ``save`` is idempotent per version: a version already stored is
overwritten with what is given (the same, since versions are frozen, unless a flag such
as ``soft_deleted`` moved on it), new versions are added, nothing else is touched.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from sqlalchemy import delete, select, tuple_

from memory_core.errors import InputError, NotFoundError
from memory_core.store.context_tables import (
    EDGE_TYPES,
    NODE_TYPES,
    ContextEdgeRow,
    ContextNodeRow,
)
from memory_core.store.erase import Subject
from memory_core.store.records import check_text

if TYPE_CHECKING:
    from memory_core.store.engine import Database

_CHUNK = 500
"""Keys per ``IN`` list (SQLite allows 32766 bound values; PostgreSQL 65535)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextVersion:
    """What every stored node and edge version has: its place, when it held (the atlas
    clock's seconds), its state and where it came from."""

    id: str
    version: int
    seq: int
    type: str
    label: str = ""
    attributes: Mapping[str, Any] = field(default_factory=dict)
    user_id: str | None = None
    session_id: str | None = None
    recorded_at: float | None = None
    valid_at: float | None = None
    invalid_at: float | None = None
    expired_at: float | None = None
    deprecated: bool = False
    soft_deleted: bool = False
    turns: tuple[int, ...] = ()
    memory_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextNodeRecord(ContextVersion):
    """One version of a node; ``key`` is the normalised text its id is a hash of."""

    key: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEdgeRecord(ContextVersion):
    """One version of a typed edge ``source -> target`` (node ids); ``label`` is its fact."""

    source: str
    target: str


@dataclass(frozen=True, slots=True)
class StoredGraph:
    """Every stored version of one graph, each kind in log order (``seq``)."""

    graph_id: str
    nodes: tuple[ContextNodeRecord, ...]
    edges: tuple[ContextEdgeRecord, ...]


class ContextGraphRepository(Protocol):
    """Versions of task context graphs, one graph per ``graph_id``."""

    def save(
        self,
        graph_id: str,
        nodes: Sequence[ContextNodeRecord],
        edges: Sequence[ContextEdgeRecord] = (),
    ) -> int:
        """Store these versions (all or none); returns how many rows were written."""
        ...

    def load(self, graph_id: str) -> StoredGraph:
        """Every version of the graph; ``NotFoundError`` when nothing is stored under it."""
        ...

    def graph_ids(self) -> list[str]:
        """Graphs with at least one stored version, sorted."""
        ...

    def delete(self, graph_id: str) -> int:
        """Drop every version of the graph; returns rows deleted (0 when absent)."""
        ...


Record = TypeVar("Record", ContextNodeRecord, ContextEdgeRecord)


def check_records(
    graph_id: str, nodes: Sequence[ContextNodeRecord], edges: Sequence[ContextEdgeRecord]
) -> None:
    """Refuse anything the tables would refuse, before a row is written (names the row)."""
    check_text("graph_id", graph_id, 64)
    _check_versions("nodes", nodes, NODE_TYPES)
    _check_versions("edges", edges, EDGE_TYPES)
    for i, edge in enumerate(edges):
        check_text(f"edges[{i}].source", edge.source, 64)
        check_text(f"edges[{i}].target", edge.target, 64)


def _check_versions(kind: str, records: Sequence[ContextVersion], types: tuple[str, ...]) -> None:
    seen: set[tuple[str, int]] = set()
    for i, record in enumerate(records):
        where = f"{kind}[{i}]"
        check_text(f"{where}.id", record.id, 64)
        if isinstance(record.version, bool) or not isinstance(record.version, int):
            raise InputError(f"{where}.version", f"must be an integer, got {record.version!r}")
        if record.version < 0:
            raise InputError(f"{where}.version", f"must be >= 0, got {record.version}")
        if isinstance(record.seq, bool) or not isinstance(record.seq, int):
            raise InputError(f"{where}.seq", f"must be an integer, got {record.seq!r}")
        if record.type not in types:
            raise InputError(f"{where}.type", f"{record.type!r} is not one of {', '.join(types)}")
        for name in ("recorded_at", "valid_at", "invalid_at", "expired_at"):
            value = getattr(record, name)
            if value is not None and not (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and math.isfinite(value)
            ):
                raise InputError(
                    f"{where}.{name}", f"must be a finite number or None, got {value!r}"
                )
        key = (record.id, record.version)
        if key in seen:
            raise InputError(where, f"version {record.version} of {record.id} is given twice")
        seen.add(key)


def _ordered(records: Iterable[Record]) -> tuple[Record, ...]:
    return tuple(sorted(records, key=lambda r: (r.seq, r.id, r.version)))


class MemoryContextGraphRepository:
    """Graphs in dictionaries (harness, unit tests); same contract as the SQL one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._nodes: dict[str, dict[tuple[str, int], ContextNodeRecord]] = {}
        self._edges: dict[str, dict[tuple[str, int], ContextEdgeRecord]] = {}

    def save(
        self,
        graph_id: str,
        nodes: Sequence[ContextNodeRecord],
        edges: Sequence[ContextEdgeRecord] = (),
    ) -> int:
        check_records(graph_id, nodes, edges)
        with self._lock:
            self._nodes.setdefault(graph_id, {}).update({(n.id, n.version): n for n in nodes})
            self._edges.setdefault(graph_id, {}).update({(e.id, e.version): e for e in edges})
        return len(nodes) + len(edges)

    def load(self, graph_id: str) -> StoredGraph:
        with self._lock:
            nodes = list(self._nodes.get(graph_id, {}).values())
            edges = list(self._edges.get(graph_id, {}).values())
        if not nodes and not edges:
            raise NotFoundError("context graph", graph_id)
        return StoredGraph(graph_id, _ordered(nodes), _ordered(edges))

    def graph_ids(self) -> list[str]:
        with self._lock:
            return sorted(g for g in self._nodes.keys() | self._edges.keys() if self.has(g))

    def has(self, graph_id: str) -> bool:
        return bool(self._nodes.get(graph_id) or self._edges.get(graph_id))

    def delete(self, graph_id: str) -> int:
        with self._lock:
            gone = len(self._nodes.pop(graph_id, {})) + len(self._edges.pop(graph_id, {}))
        return gone

    def erase(self, subject: Subject) -> dict[str, int]:
        """The in-memory side of ``Database.erase`` for these tables."""
        deleted = {"context_nodes": 0, "context_edges": 0}
        with self._lock:
            for table, graphs in (
                ("context_nodes", self._nodes),
                ("context_edges", self._edges),
            ):
                for versions in graphs.values():
                    doomed = [k for k, r in versions.items() if _about(r, subject)]
                    for key in doomed:
                        del versions[key]
                    deleted[table] += len(doomed)
        return deleted


def _about(record: ContextVersion, subject: Subject) -> bool:
    return bool(getattr(record, subject.column) == subject.value)


_COLUMNS = (
    "type", "label", "attributes", "user_id", "session_id", "recorded_at", "valid_at",
    "invalid_at", "expired_at", "deprecated", "soft_deleted",
)  # fmt: skip


def _row_values(graph_id: str, record: ContextNodeRecord | ContextEdgeRecord) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(record, name) for name in _COLUMNS}
    values.update(
        graph_id=graph_id,
        id=record.id,
        version=record.version,
        seq=record.seq,
        attributes=dict(record.attributes),
        turns=list(record.turns),
        memory_ids=list(record.memory_ids),
    )
    if isinstance(record, ContextNodeRecord):
        values["key"] = record.key
    else:
        values.update(source=record.source, target=record.target)
    return values


def _node(row: ContextNodeRow) -> ContextNodeRecord:
    return ContextNodeRecord(key=row.key, **_common(row))


def _edge(row: ContextEdgeRow) -> ContextEdgeRecord:
    return ContextEdgeRecord(source=row.source, target=row.target, **_common(row))


def _common(row: ContextNodeRow | ContextEdgeRow) -> dict[str, Any]:
    values = {name: getattr(row, name) for name in _COLUMNS}
    values.update(
        id=row.id,
        version=row.version,
        seq=row.seq,
        attributes=dict(row.attributes),
        turns=tuple(row.turns),
        memory_ids=tuple(row.memory_ids),
    )
    return values


class SqlContextGraphRepository:
    """Graphs in ``context_nodes`` and ``context_edges`` (SQLite and PostgreSQL alike)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def save(
        self,
        graph_id: str,
        nodes: Sequence[ContextNodeRecord],
        edges: Sequence[ContextEdgeRecord] = (),
    ) -> int:
        check_records(graph_id, nodes, edges)
        with self._db.session("save context graph") as s:
            for row_type, records in ((ContextNodeRow, nodes), (ContextEdgeRow, edges)):
                keys = [(r.id, r.version) for r in records]
                for start in range(0, len(keys), _CHUNK):  # replace what is there
                    s.execute(
                        delete(row_type).where(
                            row_type.graph_id == graph_id,
                            tuple_(row_type.id, row_type.version).in_(keys[start : start + _CHUNK]),
                        )
                    )
                if records:
                    s.execute(
                        row_type.__table__.insert(),  # type: ignore[attr-defined]
                        [_row_values(graph_id, r) for r in records],
                    )
        return len(nodes) + len(edges)

    def load(self, graph_id: str) -> StoredGraph:
        with self._db.session("load context graph") as s:
            nodes = s.scalars(
                select(ContextNodeRow)
                .where(ContextNodeRow.graph_id == graph_id)
                .order_by(ContextNodeRow.seq, ContextNodeRow.id, ContextNodeRow.version)
            ).all()
            edges = s.scalars(
                select(ContextEdgeRow)
                .where(ContextEdgeRow.graph_id == graph_id)
                .order_by(ContextEdgeRow.seq, ContextEdgeRow.id, ContextEdgeRow.version)
            ).all()
            if not nodes and not edges:
                raise NotFoundError("context graph", graph_id)
            return StoredGraph(
                graph_id, tuple(_node(r) for r in nodes), tuple(_edge(r) for r in edges)
            )

    def graph_ids(self) -> list[str]:
        stmt = select(ContextNodeRow.graph_id).union(select(ContextEdgeRow.graph_id))
        with self._db.session("list context graphs") as s:
            return sorted(str(g) for g in s.scalars(stmt))

    def delete(self, graph_id: str) -> int:
        with self._db.session("delete context graph") as s:
            gone = 0
            for row_type in (ContextEdgeRow, ContextNodeRow):
                result = s.execute(delete(row_type).where(row_type.graph_id == graph_id))
                gone += int(result.rowcount)  # type: ignore[attr-defined]
            return gone
