"""Task context graph: every version of its nodes and edges, with provenance (issue #24).

Revision ID: 0401_context_graph
Revises: 0301_event_seq
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0401_context_graph"
down_revision = "0301_event_seq"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TIME: sa.Double[float] = sa.Double()  # the atlas clock's seconds, exactly as the graph holds them
_NODE_TYPES = "'User', 'Goal', 'Constraint', 'Entity'"
_EDGE_TYPES = "'HAS_GOAL', 'SATISFIES', 'CONFLICTS_WITH', 'REFERENCES', 'MODIFIES', 'VALIDATES'"


def _versioned(table: str, types: str, *extra: sa.Column) -> None:  # type: ignore[type-arg]
    op.create_table(
        table,
        sa.Column("graph_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(20), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("attributes", _JSON, nullable=False),
        sa.Column("user_id", sa.String(255), nullable=True),
        sa.Column("session_id", sa.String(255), nullable=True),
        sa.Column("recorded_at", _TIME, nullable=True),
        sa.Column("valid_at", _TIME, nullable=True),
        sa.Column("invalid_at", _TIME, nullable=True),
        sa.Column("expired_at", _TIME, nullable=True),
        sa.Column("deprecated", sa.Boolean(), nullable=False),
        sa.Column("soft_deleted", sa.Boolean(), nullable=False),
        sa.Column("turns", _JSON, nullable=False),
        sa.Column("memory_ids", _JSON, nullable=False),
        *extra,
        sa.PrimaryKeyConstraint("graph_id", "id", "version", name=op.f(f"pk_{table}")),
        sa.CheckConstraint(f"type IN ({types})", name=op.f(f"ck_{table}_type_values")),
        sa.CheckConstraint("version >= 0", name=op.f(f"ck_{table}_version_range")),
    )
    op.create_index(f"ix_{table}_user_id", table, ["user_id"])
    op.create_index(f"ix_{table}_session_id", table, ["session_id"])


def upgrade() -> None:
    _versioned("context_nodes", _NODE_TYPES, sa.Column("key", sa.Text(), nullable=False))
    _versioned(
        "context_edges",
        _EDGE_TYPES,
        sa.Column("source", sa.String(64), nullable=False),
        sa.Column("target", sa.String(64), nullable=False),
    )
    op.create_index("ix_context_edges_graph_source", "context_edges", ["graph_id", "source"])
    op.create_index("ix_context_edges_graph_target", "context_edges", ["graph_id", "target"])


def downgrade() -> None:
    op.drop_table("context_edges")
    op.drop_table("context_nodes")
