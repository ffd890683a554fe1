"""Who made each change: ``scenario_changes.author``.

A nullable column (the OS user of the client that made the edit; rows logged before this
revision have none), so undo can say whose change it reverts. Adding a nullable column needs
no table rebuild; the downgrade drops it (batch mode on SQLite).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 00:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("scenario_changes") as batch_op:
        batch_op.add_column(sa.Column("author", sa.String(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scenario_changes") as batch_op:
        batch_op.drop_column("author")
