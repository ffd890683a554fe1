"""Dense FP4 tensor peaks (issue 26): ``nvfp4_flops_per_s`` and ``mxfp4_flops_per_s`` on gpus.

Blackwell (B200, B300, GB200, GB300, RTX PRO 6000) runs NVFP4 and MXFP4 matmuls on its tensor
cores, MI355X runs MXFP4; an FP4 checkpoint on those parts takes the W4A4 path at that peak
(``gpu_flops_per_s``), elsewhere W4A16 at the 16-bit peak. Existing rows get NULL (no FP4 peak),
so every stored figure stays what it was until the catalog is reseeded or a peak is set. Each
column carries a CHECK that it is NULL or positive, written out here. On SQLite the table is
rebuilt (batch mode). A downgrade drops the columns.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 20:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

COLUMNS = ("nvfp4_flops_per_s", "mxfp4_flops_per_s")


def upgrade() -> None:
    with op.batch_alter_table("gpus") as batch_op:
        for column in COLUMNS:
            batch_op.add_column(sa.Column(column, sa.Float(), nullable=True))
            batch_op.create_check_constraint(op.f(f"ck_gpus_{column}_positive"),
                                             f"{column} IS NULL OR {column} > 0")


def downgrade() -> None:
    with op.batch_alter_table("gpus") as batch_op:
        for column in COLUMNS:
            batch_op.drop_constraint(op.f(f"ck_gpus_{column}_positive"), type_="check")
            batch_op.drop_column(column)
