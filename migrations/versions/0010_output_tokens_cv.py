"""Output-length variability (issue 12 accuracy): ``output_tokens_cv`` on every scenario.

The coefficient of variation of output lengths sizes the KV a running slot holds
(``S + G(1 + cv^2)/2``). Existing rows get 0 (every request the same length), the value the
serving model assumed before, so every stored figure stays what it was. The column is written
out here, not read from the registry, so this revision means the same thing whatever the
registry becomes. On SQLite the table is rebuilt (batch mode) with foreign keys off, as the
migration runner does for every revision. A downgrade drops the column.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 10:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

CHECK = ("output_tokens_cv_range", "output_tokens_cv >= 0.0 AND output_tokens_cv <= 3.0")


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column("output_tokens_cv", sa.Float(), nullable=False,
                                      server_default="0.0"))
        batch_op.create_check_constraint(op.f(f"ck_scenarios_{CHECK[0]}"), CHECK[1])
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.alter_column("output_tokens_cv", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f(f"ck_scenarios_{CHECK[0]}"), type_="check")
        batch_op.drop_column("output_tokens_cv")
