"""Core schema: event log, weight samples, runs, snapshots, atlas registry.

Revision ID: 0001_core
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001_core"
down_revision = None
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "atlases",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("last_seen", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_atlases")),
    )
    op.create_table(
        "events",
        sa.Column("id", _KEY, autoincrement=True, nullable=False),
        sa.Column("atlas_id", sa.String(64), nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("at", _TS, nullable=False),
        sa.Column("session_id", sa.String(255), nullable=True),
        sa.Column("node_id", sa.String(64), nullable=True),
        sa.Column("user_id", sa.String(255), nullable=True),
        sa.Column("reason", sa.String(32), nullable=True),
        sa.Column("payload", _JSON, nullable=False),
        sa.Column("content", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
    )
    op.create_index("ix_events_atlas_at", "events", ["atlas_id", "at"])
    op.create_index("ix_events_type_at", "events", ["type", "at"])
    op.create_index("ix_events_session", "events", ["session_id"])
    op.create_index("ix_events_node", "events", ["node_id"])
    op.create_index("ix_events_user", "events", ["user_id"])
    op.create_index("ix_events_reason", "events", ["reason"])
    op.create_table(
        "weight_samples",
        sa.Column("id", _KEY, autoincrement=True, nullable=False),
        sa.Column("atlas_id", sa.String(64), nullable=False),
        sa.Column("node_id", sa.String(64), nullable=False),
        sa.Column("at", _TS, nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_weight_samples")),
    )
    op.create_index("ix_weight_samples_node_at", "weight_samples", ["node_id", "at"])
    op.create_table(
        "runs",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("policy", sa.String(64), nullable=False),
        sa.Column("params", _JSON, nullable=False),
        sa.Column("metrics", _JSON, nullable=False),
        sa.Column("fact_results", _JSON, nullable=False),
        sa.Column("conversations", _JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index("ix_runs_created", "runs", ["created_at"])
    op.create_index("ix_runs_name", "runs", ["name"])
    op.create_table(
        "snapshots",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("atlas_id", sa.String(64), nullable=False),
        sa.Column("label", sa.String(255), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("format_version", sa.Integer(), nullable=False),
        sa.Column("node_count", sa.Integer(), nullable=False),
        sa.Column("edge_count", sa.Integer(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_snapshots")),
    )
    op.create_index("ix_snapshots_atlas_created", "snapshots", ["atlas_id", "created_at"])
    op.create_table(
        "snapshot_sessions",
        sa.Column("snapshot_id", sa.String(36), nullable=False),
        sa.Column("session_id", sa.String(255), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_sessions_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("snapshot_id", "session_id", name=op.f("pk_snapshot_sessions")),
    )
    op.create_index("ix_snapshot_sessions_session", "snapshot_sessions", ["session_id"])


def downgrade() -> None:
    op.drop_table("snapshot_sessions")
    op.drop_table("snapshots")
    op.drop_table("runs")
    op.drop_table("weight_samples")
    op.drop_table("events")
    op.drop_table("atlases")
