"""GPU compute capability (issue 26 item 2): the CUDA compute capability of each GPU, on gpus.

``compute_capability`` (``major.minor``, NULL for parts that are not CUDA or unknown) is what
the serving engines choose kernels and cache defaults by, and so what the planner needs for
their KV pools: vLLM aligns a hybrid model's attention blocks to 32 tokens for head size 256 on
compute capability 10.x (FlashInfer on Blackwell), SGLang caches DeepSeek-V3.2 / GLM-5 at fp8 by
default on 10.0 and above (:mod:`planner.formulas.engine_memory`). The GPUs of the shipped
catalog get its figure (by name, where the row has none), as a database seeded at this revision
would have; other rows get NULL. The column carries a CHECK that it is NULL or positive. On
SQLite the table is rebuilt (batch mode). A downgrade drops the column.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 03:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("gpus") as batch_op:
        batch_op.add_column(sa.Column("compute_capability", sa.Float(), nullable=True))
        batch_op.create_check_constraint(op.f("ck_gpus_compute_capability_positive"),
                                         "compute_capability IS NULL OR compute_capability > 0")
    _fill_shipped_gpus()


def _fill_shipped_gpus() -> None:
    """Give the GPUs of the shipped catalog (by name) their compute capability where the row
    has none: what a database seeded at this revision has."""
    from planner.spec.catalog import load_gpus  # the shipped catalog (seeds/gpus.toml)

    gpus = sa.table("gpus", sa.column("name", sa.String),
                    sa.column("compute_capability", sa.Float))
    bind = op.get_bind()
    for name, spec in load_gpus().items():
        if not spec.compute_capability:
            continue
        bind.execute(gpus.update().where(gpus.c.name == name,
                                         gpus.c.compute_capability.is_(None))
                     .values(compute_capability=spec.compute_capability))


def downgrade() -> None:
    with op.batch_alter_table("gpus") as batch_op:
        batch_op.drop_constraint(op.f("ck_gpus_compute_capability_positive"), type_="check")
        batch_op.drop_column("compute_capability")
