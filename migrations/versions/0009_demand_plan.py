"""Demand over time (issue 15 item 2): fleet horizons, workload demands (growth or a monthly
series) and GPU prices by month (on-demand, reserved with its term, spot).

Four new tables; no existing row changes, so every stored figure stays what it was. A fleet
without a horizon, a scenario without a demand and a GPU without prices behave as before
(``fleet plan`` refuses a fleet without a horizon; on-demand pricing falls back to the catalog
price). A downgrade drops the four tables.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 05:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

MONTH = "length({c}) = 7 AND substr({c}, 5, 1) = '-'"
PRICES = ("on_demand_usd_per_gpu_hour", "reserved_usd_per_gpu_hour", "spot_usd_per_gpu_hour")


def upgrade() -> None:
    op.create_table(
        "fleet_horizons",
        sa.Column("fleet_id", sa.Integer(), nullable=False),
        sa.Column("start_month", sa.String(7), nullable=False),
        sa.Column("months", sa.Integer(), nullable=False),
        sa.Column("pricing", sa.String(16), nullable=False),
        sa.CheckConstraint(MONTH.format(c="start_month"),
                           name=op.f("ck_fleet_horizons_start_month_format")),
        sa.CheckConstraint("months >= 1 AND months <= 120",
                           name=op.f("ck_fleet_horizons_months_range")),
        sa.CheckConstraint("pricing IN ('on-demand', 'reserved', 'spot')",
                           name=op.f("ck_fleet_horizons_pricing_choice")),
        sa.ForeignKeyConstraint(["fleet_id"], ["fleets.id"],
                                name=op.f("fk_fleet_horizons_fleet_id_fleets"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("fleet_id", name=op.f("pk_fleet_horizons")),
    )
    op.create_table(
        "scenario_demands",
        sa.Column("scenario_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("unit", sa.String(8), nullable=False),
        sa.Column("start_month", sa.String(7), nullable=True),
        sa.Column("start_requests_per_s", sa.Float(), nullable=True),
        sa.Column("growth_fraction_per_month", sa.Float(), nullable=True),
        sa.CheckConstraint("unit IN ('s', 'min', 'day')",
                           name=op.f("ck_scenario_demands_unit_choice")),
        sa.CheckConstraint("kind IN ('growth', 'series')",
                           name=op.f("ck_scenario_demands_kind_choice")),
        sa.CheckConstraint("start_month IS NULL OR (" + MONTH.format(c="start_month") + ")",
                           name=op.f("ck_scenario_demands_start_month_format")),
        sa.CheckConstraint("start_requests_per_s IS NULL OR (start_requests_per_s >= 0 AND "
                           "start_requests_per_s <= 1000000000.0)",
                           name=op.f("ck_scenario_demands_start_rate_range")),
        sa.CheckConstraint("growth_fraction_per_month IS NULL OR (growth_fraction_per_month >= "
                           "-0.99 AND growth_fraction_per_month <= 10.0)",
                           name=op.f("ck_scenario_demands_growth_range")),
        sa.ForeignKeyConstraint(["scenario_id"], ["scenarios.id"],
                                name=op.f("fk_scenario_demands_scenario_id_scenarios"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("scenario_id", name=op.f("pk_scenario_demands")),
    )
    op.create_table(
        "scenario_demand_points",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("scenario_id", sa.Integer(), nullable=False),
        sa.Column("month", sa.String(7), nullable=False),
        sa.Column("requests_per_s", sa.Float(), nullable=False),
        sa.CheckConstraint(MONTH.format(c="month"),
                           name=op.f("ck_scenario_demand_points_month_format")),
        sa.CheckConstraint("requests_per_s >= 0 AND requests_per_s <= 1000000000.0",
                           name=op.f("ck_scenario_demand_points_rate_range")),
        sa.ForeignKeyConstraint(["scenario_id"], ["scenario_demands.scenario_id"],
                                name=op.f("fk_scenario_demand_points_scenario_id_scenario_demands"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scenario_demand_points")),
        sa.UniqueConstraint("scenario_id", "month",
                            name="uq_scenario_demand_points_scenario_month"),
    )
    op.create_index(op.f("ix_scenario_demand_points_scenario_id"), "scenario_demand_points",
                    ["scenario_id"])
    op.create_table(
        "gpu_prices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("gpu_id", sa.Integer(), nullable=False),
        sa.Column("month", sa.String(7), nullable=True),
        *(sa.Column(c, sa.Float(), nullable=True) for c in PRICES),
        sa.Column("reserved_term_months", sa.Integer(), nullable=True),
        sa.CheckConstraint("month IS NULL OR (" + MONTH.format(c="month") + ")",
                           name=op.f("ck_gpu_prices_month_format")),
        *(sa.CheckConstraint(f"{c} IS NULL OR ({c} >= 0 AND {c} <= 10000.0)",
                             name=op.f(f"ck_gpu_prices_{c}_range")) for c in PRICES),
        sa.CheckConstraint("reserved_term_months IS NULL OR (reserved_term_months >= 1 AND "
                           "reserved_term_months <= 120)", name=op.f("ck_gpu_prices_term_range")),
        sa.ForeignKeyConstraint(["gpu_id"], ["gpus.id"], name=op.f("fk_gpu_prices_gpu_id_gpus"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gpu_prices")),
        sa.UniqueConstraint("gpu_id", "month", name="uq_gpu_prices_gpu_month"),
    )
    op.create_index(op.f("ix_gpu_prices_gpu_id"), "gpu_prices", ["gpu_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_gpu_prices_gpu_id"), table_name="gpu_prices")
    op.drop_table("gpu_prices")
    op.drop_index(op.f("ix_scenario_demand_points_scenario_id"),
                  table_name="scenario_demand_points")
    op.drop_table("scenario_demand_points")
    op.drop_table("scenario_demands")
    op.drop_table("fleet_horizons")
