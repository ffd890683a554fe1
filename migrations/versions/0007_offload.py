"""Offload to host memory: ``weight_offload_fraction``, ``kv_offload_gib`` and
``host_link_gb_per_s`` on every scenario.

Existing rows get their defaults (no weights and no KV offloaded, a 32 GB/s PCIe Gen4 x16 host
link), so every stored figure stays what it was. The column list is written out here, not read
from the registry, so this revision means the same thing whatever the registry becomes. On
SQLite the table is rebuilt (batch mode) with foreign keys off, as the migration runner does for
every revision. A downgrade drops the three columns (an upgrade gives them their defaults
again).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 03:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

SCENARIO_COLUMNS: tuple[tuple[str, sa.types.TypeEngine, str], ...] = (
    ("weight_offload_fraction", sa.Float(), "0.0"),
    ("kv_offload_gib", sa.Float(), "0.0"),
    ("host_link_gb_per_s", sa.Float(), "32.0"),
)
"""(name, type, default for existing rows)."""

SCENARIO_CHECKS: tuple[tuple[str, str], ...] = (
    ("weight_offload_fraction_range",
     "weight_offload_fraction >= 0.0 AND weight_offload_fraction <= 1.0"),
    ("kv_offload_gib_range", "kv_offload_gib >= 0.0 AND kv_offload_gib <= 1000000.0"),
    ("host_link_gb_per_s_range", "host_link_gb_per_s > 0.0 AND host_link_gb_per_s <= 100000.0"),
)


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        for name, type_, default in SCENARIO_COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=False, server_default=default))
        for name, condition in SCENARIO_CHECKS:
            batch_op.create_check_constraint(op.f(f"ck_scenarios_{name}"), condition)
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _type, _default in SCENARIO_COLUMNS:
            batch_op.alter_column(name, server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _condition in SCENARIO_CHECKS:
            batch_op.drop_constraint(op.f(f"ck_scenarios_{name}"), type_="check")
        for name, _type, _default in reversed(SCENARIO_COLUMNS):
            batch_op.drop_column(name)
