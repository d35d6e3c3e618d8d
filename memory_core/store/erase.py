"""Right to erasure: a registry of tables that hold rows about a session or a user.

Other packages register their tables at import time::

    register_erasable(table_of(KnowledgeRow))                      # has session_id/user_id
    register_erasable(table_of(ConflictRow), user_column=None)     # session_id only

A clause that looks subjects up in ``events`` must run before ``events`` itself is
cleared: give it an ``order`` below ``EVENTS_ORDER`` (the default is).

The store never imports those packages: a process that never loaded them (so never
ran their registrations) still clears their tables, because any table in the database
that is not registered is cleared by every column that names the subject — ``session_id``
or ``*_session_id`` (``old_session_id``), ``user_id`` or ``*_user_id`` — at
``GENERIC_ORDER``. A registration refines that (an order, a lookup through events).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Column, ColumnElement, MetaData, String, Table, delete, inspect, or_, select
from sqlalchemy.orm import Session

from memory_core.errors import InputError
from memory_core.store.base import rows_changed, table_of
from memory_core.store.events import EventRow, WeightSampleRow
from memory_core.store.snapshots import SnapshotRow, SnapshotSessionRow

EVENTS_ORDER = 1000
GENERIC_ORDER = 500


@dataclass(frozen=True, slots=True)
class Subject:
    """Whose data to erase: exactly one session or one user."""

    column: Literal["session_id", "user_id"]
    value: str

    @classmethod
    def of(cls, *, session_id: str | None = None, user_id: str | None = None) -> Subject:
        if (session_id is None) == (user_id is None):
            raise InputError("erase", "give exactly one of session_id or user_id")
        column: Literal["session_id", "user_id"] = "session_id" if session_id else "user_id"
        value = session_id if session_id is not None else user_id
        if not isinstance(value, str) or not value:
            raise InputError(column, "must be a non-empty string")
        return cls(column, value)


WhereClause = Callable[[Subject], "ColumnElement[bool] | None"]
Prepare = Callable[[Session, Subject], None]
"""A step run on a table before the subject's rows go: rows that stay but name the
subject among other things (a list of ids) lose those names."""


@dataclass(frozen=True, slots=True)
class Erasable:
    """A table and how to select a subject's rows in it (None: nothing to delete)."""

    table: Table
    where: WhereClause
    order: int
    prepare: Prepare | None = None


_REGISTRY: dict[str, Erasable] = {}


def register_erasable(
    table: Table,
    *,
    session_column: str | None = "session_id",
    user_column: str | None = "user_id",
    where: WhereClause | None = None,
    order: int = 100,
    prepare: Prepare | None = None,
) -> None:
    """Make ``erase`` delete the subject's rows of ``table`` (after ``prepare``, when
    given, has cleaned the rows that stay); re-registering replaces."""
    if where is None:
        columns = {"session_id": session_column, "user_id": user_column}
        for name in columns.values():
            if name is not None and name not in table.c:
                raise InputError("register_erasable", f"table {table.name} has no column {name!r}")
        if not any(columns.values()):
            raise InputError("register_erasable", "give a session or user column, or a where")

        def by_column(subject: Subject) -> ColumnElement[bool] | None:
            name = columns[subject.column]
            return None if name is None else table.c[name] == subject.value

        where = by_column
    _REGISTRY[table.name] = Erasable(table, where, order, prepare)


def erasable_tables() -> list[Erasable]:
    """Registered tables in deletion order."""
    return sorted(_REGISTRY.values(), key=lambda e: (e.order, e.table.name))


def erase_rows(session: Session, subject: Subject) -> dict[str, int]:
    """Delete the subject's rows in every table that has any; rows deleted per table."""
    deleted: dict[str, int] = {}
    entries = erasable_tables() + _unregistered(session, subject)
    for entry in sorted(entries, key=lambda e: (e.order, e.table.name)):
        clause = entry.where(subject)
        if clause is None:
            continue
        if entry.prepare is not None:
            entry.prepare(session, subject)
        result = session.execute(delete(entry.table).where(clause))
        deleted[entry.table.name] = rows_changed(result)
    return deleted


def _names_subject(column: str, subject: Subject) -> bool:
    return column == subject.column or column.endswith("_" + subject.column)


def _by_columns(table: Table) -> WhereClause:
    def where(subject: Subject) -> ColumnElement[bool]:
        return or_(*(column == subject.value for column in table.c))

    return where


def _unregistered(session: Session, subject: Subject) -> list[Erasable]:
    """Tables in the database, not in the registry, with columns naming the subject."""
    inspector = inspect(session.connection())
    found: list[Erasable] = []
    for name in inspector.get_table_names():
        if name in _REGISTRY:
            continue
        columns = [c["name"] for c in inspector.get_columns(name)]
        subject_columns = [c for c in columns if _names_subject(c, subject)]
        if subject_columns:
            table = Table(name, MetaData(), *(Column(c, String) for c in subject_columns))
            found.append(Erasable(table, _by_columns(table), GENERIC_ORDER))
    return found


def _snapshots_where(subject: Subject) -> ColumnElement[bool]:
    # a snapshot is one opaque file: one that holds the subject's session goes entirely
    sessions: ColumnElement[bool]
    if subject.column == "session_id":
        sessions = SnapshotSessionRow.session_id == subject.value
    else:
        users = select(EventRow.session_id).where(EventRow.user_id == subject.value)
        sessions = SnapshotSessionRow.session_id.in_(users)
    return SnapshotRow.id.in_(select(SnapshotSessionRow.snapshot_id).where(sessions))


def _weight_samples_where(subject: Subject) -> ColumnElement[bool]:
    # decay samples carry no session: find the subject's nodes through its events
    column = getattr(EventRow, subject.column)
    nodes = select(EventRow.node_id).where(EventRow.node_id.is_not(None), column == subject.value)
    return WeightSampleRow.node_id.in_(nodes)


register_erasable(table_of(SnapshotRow), where=_snapshots_where, order=10)
register_erasable(table_of(WeightSampleRow), where=_weight_samples_where, order=20)
register_erasable(table_of(EventRow), order=EVENTS_ORDER)
