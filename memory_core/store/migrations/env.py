"""Alembic environment: always online, on the connection ``store.migrate`` hands over."""

from __future__ import annotations

from alembic import context

import memory_core.store.models  # noqa: F401  (fills Base.metadata for autogenerate)
from memory_core.store.base import Base

connection = context.config.attributes.get("connection")
if connection is None or context.is_offline_mode():
    raise RuntimeError("run migrations through memory_core.store.migrate (needs a live connection)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
