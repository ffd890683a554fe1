"""Recurrent-state dtype (issue 26): ``state_dtype`` on every scenario.

Mamba-2 and Gated DeltaNet layers keep a fixed state per sequence whose recurrent part engines
hold at 16 or 32 bit (vLLM ``--mamba-ssm-cache-dtype``, SGLang ``--mamba-ssm-dtype``). Existing
rows get ``auto`` (the engine's default; for the roofline the config's dtype, what the planner
used before for every engine), so every stored row keeps a valid value. The column is written
out here, not read from the registry, so this revision means the same thing whatever the
registry becomes. On SQLite the table is rebuilt (batch mode) with foreign keys off, as the
migration runner does for every revision. A downgrade drops the column.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 23:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

CHECK = ("state_dtype_choice", "state_dtype IN ('auto', 'bf16', 'fp16', 'fp32')")


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column("state_dtype", sa.String(16), nullable=False,
                                      server_default="auto"))
        batch_op.create_check_constraint(op.f(f"ck_scenarios_{CHECK[0]}"), CHECK[1])
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.alter_column("state_dtype", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f(f"ck_scenarios_{CHECK[0]}"), type_="check")
        batch_op.drop_column("state_dtype")
