"""Live follow from the event stream: each event's position in its atlas's stream, and
how many events a snapshot contains (a follower's checkpoint).

Revision ID: 0301_event_seq
Revises: 0201_conflicts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0301_event_seq"
down_revision = "0201_conflicts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("seq", sa.BigInteger(), nullable=True))
    op.create_index("ix_events_atlas_seq", "events", ["atlas_id", "seq"])
    with op.batch_alter_table("snapshots") as batch:
        batch.add_column(sa.Column("event_seq", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_column("event_seq")
    op.drop_index("ix_events_atlas_seq", table_name="events")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("seq")
