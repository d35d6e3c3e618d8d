"""Conflict review queue: flagged pairs, the reviewers' audit trail, the allow-list.

Revision ID: 0201_conflicts
Revises: 0101_knowledge
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0201_conflicts"
down_revision = "0101_knowledge"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "conflict_items",
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("old_id", sa.String(64), nullable=False),
        sa.Column("new_id", sa.String(64), nullable=True),
        sa.Column("old_text", sa.Text(), nullable=False),
        sa.Column("new_text", sa.Text(), nullable=False),
        sa.Column("old_session_id", sa.String(100), nullable=False),
        sa.Column("session_id", sa.String(100), nullable=False),
        sa.Column("user_id", sa.String(100), nullable=True),
        sa.Column("pair_key", sa.String(65), nullable=False),
        sa.Column("similarity", sa.Float(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("spans", sa.JSON(), nullable=False),
        sa.Column("suggested", sa.String(20), nullable=False),
        sa.Column("resolution", sa.String(20), nullable=True),
        sa.Column("resolved_by", sa.String(100), nullable=True),
        sa.Column("resolved_at", _TS, nullable=True),
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conflict_items")),
        sa.CheckConstraint(
            "status IN ('open', 'resolved')", name=op.f("ck_conflict_items_status_values")
        ),
        sa.CheckConstraint(
            "similarity >= -1 AND similarity <= 1",
            name=op.f("ck_conflict_items_similarity_range"),
        ),
        sa.CheckConstraint("score >= 0 AND score <= 1", name=op.f("ck_conflict_items_score_range")),
    )
    for column in ("old_id", "new_id", "old_session_id", "session_id", "user_id", "pair_key"):
        op.create_index(f"ix_conflict_items_{column}", "conflict_items", [column])
    op.create_index("ix_conflict_items_status_created", "conflict_items", ["status", "created_at"])

    op.create_table(
        "conflict_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("item_id", sa.String(36), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("reviewer", sa.String(100), nullable=False),
        sa.Column("at", _TS, nullable=False),
        sa.Column("before", sa.JSON(), nullable=False),
        sa.Column("after", sa.JSON(), nullable=False),
        sa.Column("undo_of", sa.Integer(), nullable=True),
        sa.Column("undone_by", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conflict_audit")),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["conflict_items.id"],
            name=op.f("fk_conflict_audit_item_id_conflict_items"),
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_conflict_audit_item_id", "conflict_audit", ["item_id"])

    op.create_table(
        "conflict_allowed_pairs",
        sa.Column("pair_key", sa.String(65), nullable=False),
        sa.Column("reviewer", sa.String(100), nullable=False),
        sa.Column("at", _TS, nullable=False),
        sa.Column("item_id", sa.String(36), nullable=True),
        sa.Column("session_id", sa.String(100), nullable=True),
        sa.Column("user_id", sa.String(100), nullable=True),
        sa.PrimaryKeyConstraint("pair_key", name=op.f("pk_conflict_allowed_pairs")),
    )
    op.create_index(
        "ix_conflict_allowed_pairs_session_id", "conflict_allowed_pairs", ["session_id"]
    )
    op.create_index("ix_conflict_allowed_pairs_user_id", "conflict_allowed_pairs", ["user_id"])


def downgrade() -> None:
    op.drop_table("conflict_allowed_pairs")
    op.drop_table("conflict_audit")
    op.drop_table("conflict_items")
