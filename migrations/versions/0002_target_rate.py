"""Scenario target request rate.

Adds ``scenarios.target_requests_per_s`` (existing rows get 0 = no target) with its range check.
On SQLite this rebuilds the scenarios table (batch mode), which the migration runner does with
foreign keys off so the change log that references it survives.

Downgrading keeps the rates: non-zero ones are copied into ``downgraded_0002_target_rates``
(removed with their scenario), and upgrading again puts them back and drops that table, so a
round trip loses nothing.

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

KEPT = "downgraded_0002_target_rates"
"""Where a downgrade keeps the scenarios' target rates for the next upgrade."""


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column("target_requests_per_s", sa.Float(), nullable=False,
                                      server_default="0"))
        batch_op.create_check_constraint(
            op.f("ck_scenarios_target_requests_per_s_range"),
            "target_requests_per_s >= 0 AND target_requests_per_s <= 1000000000.0")
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.alter_column("target_requests_per_s", server_default=None)
    if sa.inspect(op.get_bind()).has_table(KEPT):  # rates an earlier downgrade kept
        op.execute(f"UPDATE scenarios SET target_requests_per_s = (SELECT k.target_requests_per_s "
                   f"FROM {KEPT} k WHERE k.scenario_id = scenarios.id) "
                   f"WHERE id IN (SELECT scenario_id FROM {KEPT})")
        op.drop_table(KEPT)


def downgrade() -> None:
    op.create_table(
        KEPT,
        sa.Column("scenario_id", sa.Integer(),
                  sa.ForeignKey("scenarios.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("target_requests_per_s", sa.Float(), nullable=False))
    op.execute(f"INSERT INTO {KEPT} (scenario_id, target_requests_per_s) "
               "SELECT id, target_requests_per_s FROM scenarios WHERE target_requests_per_s <> 0")
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f("ck_scenarios_target_requests_per_s_range"), type_="check")
        batch_op.drop_column("target_requests_per_s")
