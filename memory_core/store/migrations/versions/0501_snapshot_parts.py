"""Snapshot bytes in pieces (``snapshot_parts``): saving a checkpoint binds 4 MB at a
time instead of the whole file, so the recording agent's threads are never held up by
one long copy (issue #26). Snapshots saved before keep their bytes in ``snapshots.data``.

Revision ID: 0501_snapshot_parts
Revises: 0402_context_origin
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0501_snapshot_parts"
down_revision = "0402_context_origin"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "snapshot_parts",
        sa.Column("snapshot_id", sa.String(36), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_parts_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("snapshot_id", "part", name=op.f("pk_snapshot_parts")),
    )


def downgrade() -> None:
    """Join each snapshot's parts back into ``snapshots.data`` before the table goes."""
    bind = op.get_bind()
    ids = bind.execute(sa.text("SELECT DISTINCT snapshot_id FROM snapshot_parts")).scalars()
    for snapshot_id in list(ids):
        parts = bind.execute(
            sa.text("SELECT data FROM snapshot_parts WHERE snapshot_id = :i ORDER BY part"),
            {"i": snapshot_id},
        ).scalars()
        bind.execute(
            sa.text("UPDATE snapshots SET data = :d WHERE id = :i"),
            {"d": b"".join(parts), "i": snapshot_id},
        )
    op.drop_table("snapshot_parts")
