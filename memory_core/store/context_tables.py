"""Tables of the task context graph: every frozen version of every node and edge.

A graph is kept per ``graph_id`` (the atlas it runs beside); a row is one version, so
time travel and audit read the same rows the live view does. Provenance (the turns and
memories a version came from) is a JSON list on the row: it is read with the row, never
joined. Times are the atlas clock's seconds as the graph holds them (double precision,
so a stored graph reads back equal to the saved one). Created by Alembic revision
``0401_context_graph``; ``0402_context_origin`` added ``origin_session_id``.

A graph may be a user's, spanning their sessions: a row's ``session_id`` is the session
whose turn wrote that version, ``origin_session_id`` the session that first made the node
or edge (whose words every later version copies). Erasing a session deletes the rows of
either kind, so nothing it said or changed stays, and takes its turns and memory ids out of
the provenance of the rows that stay (``session_additions``: the rule of the context
graph's ``without_session``); erasing a user deletes the graph's rows.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ColumnElement,
    Double,
    Index,
    Integer,
    String,
    Text,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from memory_core.context.graph import session_additions
from memory_core.store.base import Base, JSONDocument, table_of
from memory_core.store.erase import Subject, register_erasable

NODE_TYPES = ("User", "Goal", "Constraint", "Entity")
"""The seed's four node types (section 3.1)."""
EDGE_TYPES = ("HAS_GOAL", "SATISFIES", "CONFLICTS_WITH", "REFERENCES", "MODIFIES", "VALIDATES")
"""The seed's six edge types."""


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class _Versioned:
    """Columns every node and edge version has."""

    graph_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    """Position in the graph's log (nodes and edges in one order): a graph is rebuilt by
    replaying its versions in the order they were written."""
    type: Mapped[str] = mapped_column(String(20))
    label: Mapped[str] = mapped_column(Text)
    attributes: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    user_id: Mapped[str | None] = mapped_column(String(255), index=True)
    session_id: Mapped[str | None] = mapped_column(String(255), index=True)
    """The session whose turn wrote this version."""
    origin_session_id: Mapped[str | None] = mapped_column(String(255), index=True)
    """The session that first made the node or edge (None: not known, a per-session row)."""
    recorded_at: Mapped[float | None] = mapped_column(Double)
    valid_at: Mapped[float | None] = mapped_column(Double)
    invalid_at: Mapped[float | None] = mapped_column(Double)
    expired_at: Mapped[float | None] = mapped_column(Double)
    deprecated: Mapped[bool] = mapped_column(Boolean)
    soft_deleted: Mapped[bool] = mapped_column(Boolean)
    turns: Mapped[list[Any]] = mapped_column(JSONDocument)
    memory_ids: Mapped[list[str]] = mapped_column(JSONDocument)


class ContextNodeRow(_Versioned, Base):
    """One version of a User, Goal, Constraint or Entity node; ``key`` is the normalised
    text its id is a hash of."""

    __tablename__ = "context_nodes"
    __table_args__ = (
        CheckConstraint(_one_of("type", NODE_TYPES), name="type_values"),
        CheckConstraint("version >= 0", name="version_range"),
    )

    key: Mapped[str] = mapped_column(Text)


class ContextEdgeRow(_Versioned, Base):
    """One version of a typed edge between two nodes (by node id, any version); ``label``
    is the fact it states."""

    __tablename__ = "context_edges"
    __table_args__ = (
        CheckConstraint(_one_of("type", EDGE_TYPES), name="type_values"),
        CheckConstraint("version >= 0", name="version_range"),
        Index("ix_context_edges_graph_source", "graph_id", "source"),
        Index("ix_context_edges_graph_target", "graph_id", "target"),
    )

    source: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(64))


def _erasable(row: type[ContextNodeRow] | type[ContextEdgeRow]) -> None:
    """A version goes with its user, with the session that wrote it and with the session
    that first made its node or edge; the versions that stay forget the session's turns
    and memories."""

    def where(subject: Subject) -> ColumnElement[bool]:
        if subject.column == "user_id":
            return row.user_id == subject.value
        return or_(row.session_id == subject.value, row.origin_session_id == subject.value)

    def prepare(s: Session, subject: Subject) -> None:
        if subject.column != "session_id":
            return  # a user's rows all go
        graphs = select(row.graph_id).where(row.session_id == subject.value).distinct()
        for graph_id in s.scalars(graphs).all():
            columns = (row.id, row.version, row.session_id, row.origin_session_id)
            stmt = select(*columns, row.turns, row.memory_ids).where(row.graph_id == graph_id)
            rows = s.execute(stmt.order_by(row.seq, row.id, row.version)).all()
            turns, memories = session_additions(
                ((r.id, r.session_id, r.turns, r.memory_ids) for r in rows), subject.value
            )
            for r in rows:
                if subject.value in (r.session_id, r.origin_session_id):
                    continue  # the row goes
                if not (turns.intersection(r.turns) or memories.intersection(r.memory_ids)):
                    continue
                s.execute(
                    update(row)
                    .where(row.graph_id == graph_id, row.id == r.id, row.version == r.version)
                    .values(
                        turns=[t for t in r.turns if t not in turns],
                        memory_ids=[m for m in r.memory_ids if m not in memories],
                    )
                )

    register_erasable(table_of(row), where=where, order=30, prepare=prepare)


_erasable(ContextNodeRow)
_erasable(ContextEdgeRow)
