"""Models from the Hugging Face Hub and quantized checkpoints.

Adds to ``models`` the Hub repo id and the revision (commit) a config was read at (empty for a
model imported from a file), and to ``scenarios`` the ``quant_mode`` input (existing rows get
``auto``, which keeps every stored figure) with its choice check; the ``weight_dtype`` check
gains ``auto`` (the checkpoint's own ``quantization_config``) and the FP4 formats ``mxfp4`` and
``nvfp4``. Stored scenarios keep the weight dtype they have. The choice lists are written out
here, not read from the registry, so this revision means the same thing whatever the registry
becomes. On SQLite both tables are rebuilt (batch mode).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 03:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

WEIGHT_DTYPES_BEFORE = "weight_dtype IN ('bf16', 'fp16', 'fp8', 'int8', 'int4')"
WEIGHT_DTYPES_AFTER = ("weight_dtype IN ('auto', 'bf16', 'fp16', 'fp8', 'int8', 'int4', "
                       "'mxfp4', 'nvfp4')")
QUANT_MODES = "quant_mode IN ('auto', 'weight_only', 'weight_activation')"


def upgrade() -> None:
    with op.batch_alter_table("models") as batch_op:
        batch_op.add_column(sa.Column("hub_repo", sa.String(200), nullable=False,
                                      server_default=""))
        batch_op.add_column(sa.Column("hub_revision", sa.String(100), nullable=False,
                                      server_default=""))
    with op.batch_alter_table("models") as batch_op:
        batch_op.alter_column("hub_repo", server_default=None)
        batch_op.alter_column("hub_revision", server_default=None)
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column("quant_mode", sa.String(16), nullable=False,
                                      server_default="auto"))
        batch_op.drop_constraint(op.f("ck_scenarios_weight_dtype_choice"), type_="check")
        batch_op.create_check_constraint(op.f("ck_scenarios_weight_dtype_choice"),
                                         WEIGHT_DTYPES_AFTER)
        batch_op.create_check_constraint(op.f("ck_scenarios_quant_mode_choice"), QUANT_MODES)
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.alter_column("quant_mode", server_default=None)


def downgrade() -> None:
    # Rows that use a choice the older schema lacks are set to what it can hold: auto and the
    # FP4 formats become bf16 and int4 (the nearest dtypes it knows).
    scenarios = sa.table("scenarios", sa.column("weight_dtype", sa.String))
    bind = op.get_bind()
    bind.execute(scenarios.update().where(scenarios.c.weight_dtype == "auto")
                 .values(weight_dtype="bf16"))
    bind.execute(scenarios.update().where(scenarios.c.weight_dtype.in_(("mxfp4", "nvfp4")))
                 .values(weight_dtype="int4"))
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f("ck_scenarios_quant_mode_choice"), type_="check")
        batch_op.drop_constraint(op.f("ck_scenarios_weight_dtype_choice"), type_="check")
        batch_op.create_check_constraint(op.f("ck_scenarios_weight_dtype_choice"),
                                         WEIGHT_DTYPES_BEFORE)
        batch_op.drop_column("quant_mode")
    with op.batch_alter_table("models") as batch_op:
        batch_op.drop_column("hub_revision")
        batch_op.drop_column("hub_repo")
