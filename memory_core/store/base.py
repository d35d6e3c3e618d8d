"""Declarative base and column mixins shared by every table (SQLAlchemy 2.0 typed ORM)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, ClassVar, cast

from sqlalchemy import JSON, CursorResult, DateTime, Dialect, MetaData, Result, String, Table
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from memory_core.errors import InputError

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# JSON documents: JSONB on PostgreSQL (indexable, compact), plain JSON text elsewhere.
JSONDocument = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC, so say so."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC on every backend.

    SQLite keeps datetimes as naive text, so values are normalised to UTC before
    binding (also in WHERE clauses, keeping text comparison correct) and get their
    ``tzinfo`` back on read. Naive input is refused because it is ambiguous.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise InputError("datetime", f"must be timezone-aware, got naive {value.isoformat()}")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime from the database, got {value!r}")
        return aware(value)


class Base(DeclarativeBase):
    """Root of all ORM classes; constraint names are deterministic for Alembic."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime}


def table_of(row: type[Base]) -> Table:
    """The ``Table`` behind an ORM class (typed as a plain ``FromClause`` by SQLAlchemy),
    for Core inserts and the erase registry."""
    return cast(Table, row.__table__)


def rows_changed(result: Result[Any]) -> int:
    """Rows an UPDATE or DELETE touched: ``Session.execute`` runs them through a cursor,
    but its return type does not declare ``rowcount``."""
    return int(cast(CursorResult[Any], result).rowcount)


class UUIDKeyMixin:
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=lambda: str(uuid.uuid4()))


class AuditMixin:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
