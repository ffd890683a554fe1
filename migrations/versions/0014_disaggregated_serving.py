"""Disaggregated prefill/decode serving (issue 25): the deployment-shape inputs on scenarios.

``serving_mode`` (aggregated, disaggregated), per pool ``prefill_workers``, ``prefill_tp``,
``prefill_ep``, ``prefill_attention_dp``, ``decode_workers``, ``decode_tp``, ``decode_ep``,
``decode_attention_dp``, and ``decode_gpu`` (the decode pool's GPU type by catalog name).
Existing rows get ``aggregated``, 0 (= the scenario's own figure), ``follow`` and ``same``: every
figure of a stored scenario stays what it was. The columns and their CHECKs are written out here,
not read from the registry, so this revision means the same thing whatever the registry becomes.
On SQLite the table is rebuilt (batch mode). A downgrade drops the columns.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

INTS: tuple[tuple[str, int], ...] = (
    ("prefill_workers", 100_000), ("prefill_tp", 1024), ("prefill_ep", 1024),
    ("decode_workers", 100_000), ("decode_tp", 1024), ("decode_ep", 1024))
"""Pool counts (0 = the scenario's own) and their upper bounds."""
CHOICES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("serving_mode", "aggregated", ("aggregated", "disaggregated")),
    ("prefill_attention_dp", "follow", ("follow", "on", "off")),
    ("decode_attention_dp", "follow", ("follow", "on", "off")),
)


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        for name, default, choices in CHOICES:
            batch_op.add_column(sa.Column(name, sa.String(16), nullable=False,
                                          server_default=default))
            allowed = ", ".join(f"'{c}'" for c in choices)
            batch_op.create_check_constraint(op.f(f"ck_scenarios_{name}_choice"),
                                             f"{name} IN ({allowed})")
        for name, high in INTS:
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False,
                                          server_default="0"))
            batch_op.create_check_constraint(op.f(f"ck_scenarios_{name}_range"),
                                             f"{name} >= 0 AND {name} <= {high}")
        batch_op.add_column(sa.Column("decode_gpu", sa.String(200), nullable=False,
                                      server_default="same"))
        batch_op.create_check_constraint(op.f("ck_scenarios_decode_gpu_not_empty"),
                                         "length(decode_gpu) > 0")
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _default, _choices in CHOICES:
            batch_op.alter_column(name, server_default=None)
        for name, _high in INTS:
            batch_op.alter_column(name, server_default=None)
        batch_op.alter_column("decode_gpu", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f("ck_scenarios_decode_gpu_not_empty"), type_="check")
        batch_op.drop_column("decode_gpu")
        for name, _high in reversed(INTS):
            batch_op.drop_constraint(op.f(f"ck_scenarios_{name}_range"), type_="check")
            batch_op.drop_column(name)
        for name, _default, _choices in reversed(CHOICES):
            batch_op.drop_constraint(op.f(f"ck_scenarios_{name}_choice"), type_="check")
            batch_op.drop_column(name)
