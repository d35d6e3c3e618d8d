"""Task context graphs per user: each version also names the session that first made its
node or edge (``origin_session_id``), so erasing a session removes every version that
copies its words, not only those its turns wrote (issue #24).

Rows written before it (one graph per session) keep ``origin_session_id`` empty: their
``session_id`` is the session of the whole graph, which erasure already matches.

Revision ID: 0402_context_origin
Revises: 0401_context_graph
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0402_context_origin"
down_revision = "0401_context_graph"
branch_labels = None
depends_on = None

_TABLES = ("context_nodes", "context_edges")


def upgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("origin_session_id", sa.String(255), nullable=True))
        op.create_index(f"ix_{table}_origin_session_id", table, ["origin_session_id"])


def downgrade() -> None:
    for table in _TABLES:
        op.drop_index(f"ix_{table}_origin_session_id", table_name=table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("origin_session_id")
