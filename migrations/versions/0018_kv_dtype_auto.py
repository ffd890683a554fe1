"""``kv_dtype`` gains ``auto`` (issue 26): the engine's launch default for the checkpoint.

``auto`` is the engine's ``--kv-cache-dtype auto`` for the checkpoint on the GPU (the model
dtype, except where the engine picks fp8: :func:`planner.formulas.derived.kv_bits`); it becomes
the input's default. This revision widens the ``kv_dtype`` choice check. Stored scenarios keep
the dtype they have (an explicit ``bf16`` stays bf16, which is what it meant before). The choice
lists are written out here, not read from the registry, so this revision means the same thing
whatever the registry becomes. On SQLite the table is rebuilt (batch mode). A downgrade sets
``auto`` rows to ``bf16`` (the older schema's default, the model dtype) and narrows the check.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 06:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

CHECK = "ck_scenarios_kv_dtype_choice"
KV_DTYPES_BEFORE = "kv_dtype IN ('bf16', 'fp16', 'fp8', 'int8')"
KV_DTYPES_AFTER = "kv_dtype IN ('auto', 'bf16', 'fp16', 'fp8', 'int8')"


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f(CHECK), type_="check")
        batch_op.create_check_constraint(op.f(CHECK), KV_DTYPES_AFTER)


def downgrade() -> None:
    scenarios = sa.table("scenarios", sa.column("kv_dtype", sa.String))
    op.get_bind().execute(scenarios.update().where(scenarios.c.kv_dtype == "auto")
                          .values(kv_dtype="bf16"))
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f(CHECK), type_="check")
        batch_op.create_check_constraint(op.f(CHECK), KV_DTYPES_BEFORE)
