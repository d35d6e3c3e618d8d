"""Knowledge tier: versioned items, citations, review audit trail, episodes.

Revision ID: 0101_knowledge
Revises: 0001_core
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0101_knowledge"
down_revision = "0001_core"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)
_ITEM_STATUS = "'pending_review', 'active', 'deprecated', 'expired'"
_SOURCE_KIND = "'first_party_system', 'second_party_document', 'learned_from_episode'"


def upgrade() -> None:
    op.create_table(
        "knowledge_items",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("version", sa.String(50), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("source_kind", sa.String(32), nullable=False),
        sa.Column("source_name", sa.String(100), nullable=False),
        sa.Column("effective_from", _TS, nullable=False),
        sa.Column("expires_at", _TS, nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("checklist", sa.JSON(), nullable=False),
        sa.Column("last_verified_at", _TS, nullable=True),
        sa.Column("citation_count", sa.Integer(), nullable=False),
        sa.Column("feedback_correct", sa.Integer(), nullable=False),
        sa.Column("feedback_wrong", sa.Integer(), nullable=False),
        sa.Column("consecutive_wrong", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(100), nullable=True),
        sa.Column("review_note", sa.Text(), nullable=True),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.Column("embedding_model", sa.String(100), nullable=True),
        sa.Column("session_id", sa.String(100), nullable=True),
        sa.Column("user_id", sa.String(100), nullable=True),
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_knowledge_items")),
        sa.UniqueConstraint("key", "version", name="uq_knowledge_items_key_version"),
        sa.CheckConstraint(
            "confidence >= 0 AND confidence <= 1",
            name=op.f("ck_knowledge_items_confidence_range"),
        ),
        sa.CheckConstraint(
            f"status IN ({_ITEM_STATUS})", name=op.f("ck_knowledge_items_status_values")
        ),
        sa.CheckConstraint(
            f"source_kind IN ({_SOURCE_KIND})", name=op.f("ck_knowledge_items_source_kind_values")
        ),
    )
    op.create_index("ix_knowledge_items_key", "knowledge_items", ["key"])
    op.create_index("ix_knowledge_items_source_name", "knowledge_items", ["source_name"])
    op.create_index("ix_knowledge_items_session_id", "knowledge_items", ["session_id"])
    op.create_index("ix_knowledge_items_user_id", "knowledge_items", ["user_id"])
    op.create_index(
        "ix_knowledge_items_status_validity",
        "knowledge_items",
        ["status", "effective_from", "expires_at"],
    )

    op.create_table(
        "knowledge_citations",
        sa.Column("item_id", sa.String(36), nullable=False),
        sa.Column("cited_by_id", sa.String(100), nullable=False),
        sa.Column("cited_by_kind", sa.String(20), nullable=False),
        sa.Column("at", _TS, nullable=False),
        sa.Column("session_id", sa.String(100), nullable=True),
        sa.Column("user_id", sa.String(100), nullable=True),
        sa.Column("needs_review", sa.Boolean(), nullable=False),
        sa.Column("flag_reason", sa.Text(), nullable=True),
        sa.Column("id", sa.String(36), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_knowledge_citations")),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["knowledge_items.id"],
            name=op.f("fk_knowledge_citations_item_id_knowledge_items"),
            ondelete="CASCADE",
        ),
        sa.CheckConstraint(
            "cited_by_kind IN ('memory', 'episode')",
            name=op.f("ck_knowledge_citations_cited_by_kind_values"),
        ),
    )
    for column in ("item_id", "cited_by_id", "session_id", "user_id", "needs_review"):
        op.create_index(f"ix_knowledge_citations_{column}", "knowledge_citations", [column])

    op.create_table(
        "knowledge_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("item_id", sa.String(36), nullable=False),
        sa.Column("item_key", sa.String(200), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("at", _TS, nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_knowledge_audit")),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["knowledge_items.id"],
            name=op.f("fk_knowledge_audit_item_id_knowledge_items"),
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_knowledge_audit_item_id", "knowledge_audit", ["item_id"])
    op.create_index("ix_knowledge_audit_item_key", "knowledge_audit", ["item_key"])

    op.create_table(
        "episodes",
        sa.Column("goal", sa.Text(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("key_decisions", sa.JSON(), nullable=False),
        sa.Column("failure_points", sa.JSON(), nullable=False),
        sa.Column("entities", sa.JSON(), nullable=False),
        sa.Column("started_at", _TS, nullable=False),
        sa.Column("ended_at", _TS, nullable=True),
        sa.Column("retention_score", sa.Float(), nullable=False),
        sa.Column("use_count", sa.Integer(), nullable=False),
        sa.Column("decayed_until", _TS, nullable=False),
        sa.Column("needs_review", sa.Boolean(), nullable=False),
        sa.Column("archived_at", _TS, nullable=True),
        sa.Column("archived_item_id", sa.String(36), nullable=True),
        sa.Column("session_id", sa.String(100), nullable=True),
        sa.Column("user_id", sa.String(100), nullable=True),
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_episodes")),
        sa.CheckConstraint(
            "status IN ('pending', 'completed', 'failed', 'aborted')",
            name=op.f("ck_episodes_status_values"),
        ),
    )
    op.create_index("ix_episodes_session_id", "episodes", ["session_id"])
    op.create_index("ix_episodes_user_id", "episodes", ["user_id"])
    op.create_index("ix_episodes_status_archived", "episodes", ["status", "archived_at"])


def downgrade() -> None:
    op.drop_table("episodes")
    op.drop_table("knowledge_audit")
    op.drop_table("knowledge_citations")
    op.drop_table("knowledge_items")
