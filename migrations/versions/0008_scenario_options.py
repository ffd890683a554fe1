"""Alternatives (issue 15): ``scenarios.option_of_id`` and ``scenarios.chosen``.

A scenario whose ``option_of_id`` names another scenario of the same fleet (the base) is an
option of it; the base and its options form a group of which exactly one is ``chosen``, and
only chosen scenarios are counted in roll-ups, the Summary and cost totals. Existing rows are
no one's option and are chosen (server default true), so every stored total stays what it was.
The foreign key is ``ON DELETE SET NULL`` as a last line of defence; the service re-forms a
group before it deletes its base. On SQLite the table is rebuilt (batch mode) with foreign keys
off, as the migration runner does for every revision. A downgrade drops both columns (options
become ordinary scenarios again).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 05:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column("option_of_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("chosen", sa.Boolean(), nullable=False,
                                      server_default=sa.true()))
        batch_op.create_foreign_key(op.f("fk_scenarios_option_of_id_scenarios"), "scenarios",
                                    ["option_of_id"], ["id"], ondelete="SET NULL")
        batch_op.create_check_constraint(op.f("ck_scenarios_option_not_self"),
                                         "option_of_id IS NULL OR option_of_id <> id")
        batch_op.create_index(op.f("ix_scenarios_option_of_id"), ["option_of_id"])


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_index(op.f("ix_scenarios_option_of_id"))
        batch_op.drop_constraint(op.f("ck_scenarios_option_not_self"), type_="check")
        batch_op.drop_constraint(op.f("fk_scenarios_option_of_id_scenarios"),
                                 type_="foreignkey")
        batch_op.drop_column("chosen")
        batch_op.drop_column("option_of_id")
