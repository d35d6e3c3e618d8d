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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import delete, select, tuple_
from sqlalchemy.orm import Session

from memory_core.context.graph import session_additions
from memory_core.errors import InputError, NotFoundError
from memory_core.store.base import rows_changed, table_of
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
    """The session whose turn wrote this version."""
    origin_session_id: str | None = None
    """The session that first made the node or edge (its words are in every version)."""
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


@dataclass(frozen=True, slots=True)
class _Kind:
    """Nodes or edges: the table, the row and record types, and the fields only they have.

    Every repository method handles both kinds the same way, so it loops over ``_KINDS``
    instead of writing each step twice.
    """

    table: str
    row: type[ContextNodeRow] | type[ContextEdgeRow]
    record: type[ContextNodeRecord] | type[ContextEdgeRecord]
    own_fields: tuple[str, ...]


_NODES = _Kind("context_nodes", ContextNodeRow, ContextNodeRecord, ("key",))
_EDGES = _Kind("context_edges", ContextEdgeRow, ContextEdgeRecord, ("source", "target"))
_KINDS = (_NODES, _EDGES)

_COLUMNS = (
    "type", "label", "user_id", "session_id", "origin_session_id", "recorded_at", "valid_at",
    "invalid_at", "expired_at", "deprecated", "soft_deleted",
)  # fmt: skip
"""Fields a record and its row hold alike (JSON lists and the key are converted)."""


def _ordered(records: Iterable[ContextVersion]) -> tuple[Any, ...]:
    """Versions of one kind in log order (the order the SQL repository reads them in)."""
    return tuple(sorted(records, key=lambda r: (r.seq, r.id, r.version)))


class MemoryContextGraphRepository:
    """Graphs in dictionaries (harness, unit tests); same contract as the SQL one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions: dict[str, dict[str, dict[tuple[str, int], ContextVersion]]] = {
            kind.table: {} for kind in _KINDS
        }
        """table -> graph id -> (id, version) -> record"""

    def save(
        self,
        graph_id: str,
        nodes: Sequence[ContextNodeRecord],
        edges: Sequence[ContextEdgeRecord] = (),
    ) -> int:
        check_records(graph_id, nodes, edges)
        with self._lock:
            for kind, records in ((_NODES, nodes), (_EDGES, edges)):
                graph = self._versions[kind.table].setdefault(graph_id, {})
                graph.update({(r.id, r.version): r for r in records})
        return len(nodes) + len(edges)

    def load(self, graph_id: str) -> StoredGraph:
        with self._lock:
            nodes, edges = (
                list(self._versions[kind.table].get(graph_id, {}).values()) for kind in _KINDS
            )
        if not nodes and not edges:
            raise NotFoundError("context graph", graph_id)
        return StoredGraph(graph_id, _ordered(nodes), _ordered(edges))

    def graph_ids(self) -> list[str]:
        with self._lock:
            return sorted({g for graphs in self._versions.values() for g in graphs if self.has(g)})

    def has(self, graph_id: str) -> bool:
        return any(graphs.get(graph_id) for graphs in self._versions.values())

    def delete(self, graph_id: str) -> int:
        with self._lock:
            return sum(len(graphs.pop(graph_id, {})) for graphs in self._versions.values())

    def erase(self, subject: Subject) -> dict[str, int]:
        """The in-memory side of ``Database.erase`` for these tables."""
        deleted = dict.fromkeys(self._versions, 0)
        with self._lock:
            for table, graphs in self._versions.items():
                for versions in graphs.values():
                    if subject.column == "session_id":
                        _forget_provenance(versions, subject.value)
                    doomed = [k for k, r in versions.items() if _about(r, subject)]
                    for key in doomed:
                        del versions[key]
                    deleted[table] += len(doomed)
        return deleted


def _forget_provenance(versions: dict[tuple[str, int], ContextVersion], session: str) -> None:
    """The session's turns and memory ids out of the versions of one graph and kind."""
    turns, memories = session_additions(
        ((r.id, r.session_id, r.turns, r.memory_ids) for r in _ordered(versions.values())),
        session,
    )
    for key, record in versions.items():
        if turns.intersection(record.turns) or memories.intersection(record.memory_ids):
            versions[key] = replace(
                record,
                turns=tuple(t for t in record.turns if t not in turns),
                memory_ids=tuple(m for m in record.memory_ids if m not in memories),
            )


def _about(record: ContextVersion, subject: Subject) -> bool:
    """The rule of ``context_tables``' erasure: a user's rows; a session's written or
    first-made rows."""
    if subject.column == "user_id":
        return record.user_id == subject.value
    return subject.value in (record.session_id, record.origin_session_id)


def _row_values(graph_id: str, kind: _Kind, record: ContextVersion) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(record, name) for name in (*_COLUMNS, *kind.own_fields)}
    values.update(
        graph_id=graph_id,
        id=record.id,
        version=record.version,
        seq=record.seq,
        attributes=dict(record.attributes),
        turns=list(record.turns),
        memory_ids=list(record.memory_ids),
    )
    return values


def _versions(s: Session, kind: _Kind, graph_id: str) -> tuple[Any, ...]:
    """A graph's stored versions of one kind as records, in log order."""
    row = kind.row
    stmt = select(row).where(row.graph_id == graph_id).order_by(row.seq, row.id, row.version)
    return tuple(_record(kind, r) for r in s.scalars(stmt))


def _record(kind: _Kind, row: Any) -> Any:
    """The record of a ``kind.row`` (a ContextNodeRow or ContextEdgeRow)."""
    values = {name: getattr(row, name) for name in (*_COLUMNS, *kind.own_fields)}
    return kind.record(
        id=row.id,
        version=row.version,
        seq=row.seq,
        attributes=dict(row.attributes),
        turns=tuple(row.turns),
        memory_ids=tuple(row.memory_ids),
        **values,
    )


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
            for kind, records in ((_NODES, nodes), (_EDGES, edges)):
                row_type = kind.row
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
                        table_of(row_type).insert(),
                        [_row_values(graph_id, kind, r) for r in records],
                    )
        return len(nodes) + len(edges)

    def load(self, graph_id: str) -> StoredGraph:
        with self._db.session("load context graph", read_only=True) as s:
            nodes, edges = (_versions(s, kind, graph_id) for kind in _KINDS)
            if not nodes and not edges:
                raise NotFoundError("context graph", graph_id)
            return StoredGraph(graph_id, nodes, edges)

    def graph_ids(self) -> list[str]:
        stmt = select(ContextNodeRow.graph_id).union(select(ContextEdgeRow.graph_id))
        with self._db.session("list context graphs", read_only=True) as s:
            return sorted(str(g) for g in s.scalars(stmt))

    def delete(self, graph_id: str) -> int:
        with self._db.session("delete context graph") as s:
            gone = 0
            for kind in reversed(_KINDS):  # edges first: they name the nodes
                result = s.execute(delete(kind.row).where(kind.row.graph_id == graph_id))
                gone += rows_changed(result)
            return gone
