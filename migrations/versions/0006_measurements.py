"""Measured benchmark runs, calibration profiles and the scenarios' calibration input
(issue 12).

``measurements`` holds imported benchmark runs (settings and measured figures, NULL = unknown),
linked to their model and GPU rows and deduplicated by a content hash. ``calibration_profiles``
holds fitted serving efficiency parameters per GPU and engine, versioned by name (a refit adds a
version), with the measurement ids, residuals and errors of the fit as JSON. ``scenarios`` gets
the ``calibration`` input (``auto``, ``none`` or a profile name; existing rows ``auto``, which
changes none of their figures: a database upgraded to this revision has no profiles yet). On
SQLite the scenarios table is rebuilt (batch mode).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 01:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

FIGURES = ("request_rate", "input_tokens", "output_tokens", "output_tokens_per_s",
           "ttft_mean_ms", "ttft_p50_ms", "ttft_p99_ms", "tpot_mean_ms", "itl_mean_ms")
COUNTS = ("gpus", "tp", "pp", "concurrency", "num_requests")


def upgrade() -> None:
    op.create_table(
        "measurements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("gpu_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("source_format", sa.String(32), nullable=False),
        sa.Column("gpus", sa.Integer(), nullable=True),
        sa.Column("tp", sa.Integer(), nullable=True),
        sa.Column("pp", sa.Integer(), nullable=True),
        sa.Column("engine", sa.String(16), nullable=True),
        sa.Column("weight_dtype", sa.String(16), nullable=True),
        sa.Column("kv_dtype", sa.String(16), nullable=True),
        sa.Column("mode", sa.String(16), nullable=True),
        sa.Column("concurrency", sa.Integer(), nullable=True),
        sa.Column("num_requests", sa.Integer(), nullable=True),
        *(sa.Column(name, sa.Float(), nullable=True) for name in FIGURES),
        sa.Column("settings_json", sa.Text(), nullable=False, server_default="{}"),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        *(sa.CheckConstraint(f"{c} IS NULL OR {c} >= 0", name=op.f(f"ck_measurements_{c}_non_negative"))
          for c in FIGURES),
        *(sa.CheckConstraint(f"{c} IS NULL OR {c} >= 1", name=op.f(f"ck_measurements_{c}_positive"))
          for c in COUNTS),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"],
                                name=op.f("fk_measurements_model_id_models"), ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(["gpu_id"], ["gpus.id"],
                                name=op.f("fk_measurements_gpu_id_gpus"), ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_measurements")),
        sa.UniqueConstraint("content_hash", name="uq_measurements_content_hash"),
    )
    op.create_index(op.f("ix_measurements_model_id"), "measurements", ["model_id"])
    op.create_index(op.f("ix_measurements_gpu_id"), "measurements", ["gpu_id"])
    op.create_table(
        "calibration_profiles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("gpu_id", sa.Integer(), nullable=False),
        sa.Column("engine", sa.String(16), nullable=False),
        sa.Column("model_filter", sa.String(200), nullable=True),
        sa.Column("parameters_json", sa.Text(), nullable=False),
        sa.Column("measurement_ids_json", sa.Text(), nullable=False),
        sa.Column("residuals_json", sa.Text(), nullable=False),
        sa.Column("errors_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("version >= 1", name=op.f("ck_calibration_profiles_version_positive")),
        sa.ForeignKeyConstraint(["gpu_id"], ["gpus.id"],
                                name=op.f("fk_calibration_profiles_gpu_id_gpus"),
                                ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calibration_profiles")),
        sa.UniqueConstraint("name", "version", name="uq_calibration_profiles_name_version"),
    )
    op.create_index(op.f("ix_calibration_profiles_gpu_id"), "calibration_profiles", ["gpu_id"])


    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.add_column(sa.Column("calibration", sa.String(200), nullable=False,
                                      server_default="auto"))
        batch_op.create_check_constraint(op.f("ck_scenarios_calibration_not_empty"),
                                         "length(calibration) > 0")
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.alter_column("calibration", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        batch_op.drop_constraint(op.f("ck_scenarios_calibration_not_empty"), type_="check")
        batch_op.drop_column("calibration")
    op.drop_index(op.f("ix_calibration_profiles_gpu_id"), table_name="calibration_profiles")
    op.drop_table("calibration_profiles")
    op.drop_index(op.f("ix_measurements_gpu_id"), table_name="measurements")
    op.drop_index(op.f("ix_measurements_model_id"), table_name="measurements")
    op.drop_table("measurements")
