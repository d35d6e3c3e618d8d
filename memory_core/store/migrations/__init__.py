"""Alembic environment and revisions of the store schema (applied by ``store.migrate``)."""
