"""The prefill-to-decode hand-over of a disaggregated deployment (issue 25): one input on
every scenario.

``disagg_handover_s``: the orchestration of a prompt's hand-over from its prefill worker to a
decode worker beyond the KV transfer and the first decode step (the router's serial dispatch
of the decode leg, the decode engine picking the pull up at its step boundaries), 0.11 s from
vLLM PR 51919's NixlConnector measurement
(:data:`planner.formulas.disagg_load.DISAGG_HANDOVER_S`). Existing rows get 0.11, the new
default: a stored disaggregated scenario's TTFT and request cycle now count it, as a new one's
do (an aggregated scenario's figures do not read it). The column is written out here, not
read from the registry, so this revision means the same thing whatever the registry becomes.
On SQLite the table is rebuilt (batch mode). A downgrade drops the column.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-08 02:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

COLUMN = "disagg_handover_s"
DEFAULT = "0.11"
CHECK = ("disagg_handover_s_range", "disagg_handover_s >= 0.0 AND disagg_handover_s <= 10.0")


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column(COLUMN, sa.Float(), nullable=False,
                                      server_default=DEFAULT))
        batch_op.create_check_constraint(op.f(f"ck_scenarios_{CHECK[0]}"), CHECK[1])
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.alter_column(COLUMN, server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f(f"ck_scenarios_{CHECK[0]}"), type_="check")
        batch_op.drop_column(COLUMN)
