"""Scenario target request rate; log of seeded catalog items.

Adds ``scenarios.target_requests_per_s`` (existing rows get 0 = no target) with its range check,
and ``seeded_items``, which lets re-seeding add what is new without duplicating or overwriting
rows a user edited.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 09:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "seeded_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("row_version", sa.Integer(), nullable=False),
        sa.Column("seeded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seeded_items")),
        sa.UniqueConstraint("kind", "name", name="uq_seeded_items_kind_name"),
    )
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column("target_requests_per_s", sa.Float(), nullable=False,
                                      server_default="0"))
        batch_op.create_check_constraint(
            op.f("ck_scenarios_target_requests_per_s_range"),
            "target_requests_per_s >= 0 AND target_requests_per_s <= 1000000000.0")
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.alter_column("target_requests_per_s", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f("ck_scenarios_target_requests_per_s_range"), type_="check")
        batch_op.drop_column("target_requests_per_s")
    op.drop_table("seeded_items")
