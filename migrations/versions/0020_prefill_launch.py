"""How the engine launches a prefill step (issue 23): two inputs on every scenario.

``prefill_launch`` (auto, graphs, eager; the engine's default at auto: SGLang 0.5.8-0.5.9 and
TensorRT-LLM's PyTorch backend launch prefill steps op by op from Python, vLLM V1 replays
compiled piecewise CUDA graphs) and ``eager_kernel_host_s`` (the host's time to launch one
kernel of an eager step, 6.56e-05 s from SGLang's DeepSeek-V3 log in sglang PR 12160:
:data:`planner.formulas.serving_step.EAGER_KERNEL_HOST_S`). Existing rows get auto and
6.56e-05, the new defaults: a stored SGLang or TensorRT-LLM scenario now computes its prefill
steps as at least the host's launch time, as a new one does (the serving model's figures move
with the model, as they did at every earlier model change). The columns are written out here,
not read from the registry, so this revision means the same thing whatever the registry
becomes. On SQLite the table is rebuilt (batch mode). A downgrade drops the columns.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07 23:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

COLUMNS = (
    ("prefill_launch", sa.String(16), "auto"),
    ("eager_kernel_host_s", sa.Float(), "6.56e-05"),
)
CHECKS = (
    ("prefill_launch_choice", "prefill_launch IN ('auto', 'graphs', 'eager')"),
    ("eager_kernel_host_s_range", "eager_kernel_host_s >= 0.0 AND eager_kernel_host_s <= 0.01"),
)


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        for name, type_, default in COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=False, server_default=default))
        for name, check in CHECKS:
            batch_op.create_check_constraint(op.f(f"ck_scenarios_{name}"), check)
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _type, _default in COLUMNS:
            batch_op.alter_column(name, server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _check in CHECKS:
            batch_op.drop_constraint(op.f(f"ck_scenarios_{name}"), type_="check")
        for name, _type, _default in reversed(COLUMNS):
            batch_op.drop_column(name)
