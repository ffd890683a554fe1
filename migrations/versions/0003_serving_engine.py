"""Serving engines: the engine, its knobs and the latency objectives on every scenario, serving
figures on every GPU.

Adds to ``scenarios`` the input columns of ``planner.compute.inputs.SERVING_INPUTS`` (existing
rows get their defaults: engine ``roofline``, so every stored figure stays what it was) with
their range and choice checks, and to ``gpus`` the figures the serving model reads (memory the
runtime sees, achievable GEMM and bandwidth shares, the runtime's context memory, their source;
NULL = the documented default). The column list is written out here, not read from the registry,
so this revision means the same thing whatever the registry becomes. On SQLite both tables are
rebuilt (batch mode) with foreign keys off, as the migration runner does for every revision.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 00:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

SCENARIO_COLUMNS: tuple[tuple[str, sa.types.TypeEngine, str], ...] = (
    ("engine", sa.String(16), "roofline"),
    ("gpu_memory_utilization", sa.Float(), "0.9"),
    ("mem_fraction_static", sa.Float(), "0.88"),
    ("free_gpu_memory_fraction", sa.Float(), "0.9"),
    ("max_num_batched_tokens", sa.Integer(), "0"),
    ("max_num_seqs", sa.Integer(), "0"),
    ("block_size", sa.Integer(), "0"),
    ("max_model_len", sa.Integer(), "0"),
    ("chunked_prefill", sa.Boolean(), "1"),
    ("vllm_v0_accounting", sa.Boolean(), "0"),
    ("non_torch_gib", sa.Float(), "0.25"),
    ("comm_buffer_gib", sa.Float(), "1.82"),
    ("cuda_graph_gib", sa.Float(), "0.9"),
    ("sampler_bytes_per_logit", sa.Float(), "12.0"),
    ("activation_bytes", sa.Float(), "2.0"),
    ("matmul_efficiency", sa.Float(), "0.0"),
    ("bandwidth_efficiency", sa.Float(), "0.0"),
    ("engine_step_overhead_s", sa.Float(), "0.0008"),
    ("kernel_overhead_s_per_layer", sa.Float(), "4e-05"),
    ("request_latency_s", sa.Float(), "0.04"),
    ("request_overhead_s", sa.Float(), "0.02"),
    ("stream_overhead_s_per_token", sa.Float(), "0.0002"),
    ("collective_latency_s", sa.Float(), "1e-05"),
    ("collective_efficiency", sa.Float(), "0.7"),
    ("ep", sa.Integer(), "1"),
    ("attention_dp", sa.Boolean(), "0"),
    ("concurrency", sa.Integer(), "0"),
    ("service_scv", sa.Float(), "1.0"),
    ("slo_ttft_s", sa.Float(), "0.0"),
    ("slo_percentile", sa.String(16), "99"),
    ("slo_tpot_s", sa.Float(), "0.0"),
)
"""(name, type, default for existing rows)."""

SCENARIO_CHECKS: tuple[tuple[str, str], ...] = (
    ("engine_choice",
     "engine IN ('roofline', 'vllm', 'sglang', 'trtllm')"),
    ("gpu_memory_utilization_range",
     "gpu_memory_utilization >= 0.01 AND gpu_memory_utilization <= 1.0"),
    ("mem_fraction_static_range",
     "mem_fraction_static >= 0.01 AND mem_fraction_static <= 1.0"),
    ("free_gpu_memory_fraction_range",
     "free_gpu_memory_fraction >= 0.01 AND free_gpu_memory_fraction <= 1.0"),
    ("max_num_batched_tokens_range",
     "max_num_batched_tokens >= 0 AND max_num_batched_tokens <= 10000000"),
    ("max_num_seqs_range",
     "max_num_seqs >= 0 AND max_num_seqs <= 1000000"),
    ("block_size_range",
     "block_size >= 0 AND block_size <= 4096"),
    ("max_model_len_range",
     "max_model_len >= 0 AND max_model_len <= 10000000"),
    ("non_torch_gib_range",
     "non_torch_gib >= 0.0 AND non_torch_gib <= 100.0"),
    ("comm_buffer_gib_range",
     "comm_buffer_gib >= 0.0 AND comm_buffer_gib <= 100.0"),
    ("cuda_graph_gib_range",
     "cuda_graph_gib >= 0.0 AND cuda_graph_gib <= 100.0"),
    ("sampler_bytes_per_logit_range",
     "sampler_bytes_per_logit >= 0.0 AND sampler_bytes_per_logit <= 1000.0"),
    ("activation_bytes_range",
     "activation_bytes >= 0.5 AND activation_bytes <= 8.0"),
    ("matmul_efficiency_range",
     "matmul_efficiency >= 0.0 AND matmul_efficiency <= 1.0"),
    ("bandwidth_efficiency_range",
     "bandwidth_efficiency >= 0.0 AND bandwidth_efficiency <= 1.0"),
    ("engine_step_overhead_s_range",
     "engine_step_overhead_s >= 0.0 AND engine_step_overhead_s <= 10.0"),
    ("kernel_overhead_s_per_layer_range",
     "kernel_overhead_s_per_layer >= 0.0 AND kernel_overhead_s_per_layer <= 1.0"),
    ("request_latency_s_range",
     "request_latency_s >= 0.0 AND request_latency_s <= 100.0"),
    ("request_overhead_s_range",
     "request_overhead_s >= 0.0 AND request_overhead_s <= 100.0"),
    ("stream_overhead_s_per_token_range",
     "stream_overhead_s_per_token >= 0.0 AND stream_overhead_s_per_token <= 1.0"),
    ("collective_latency_s_range",
     "collective_latency_s >= 0.0 AND collective_latency_s <= 1.0"),
    ("collective_efficiency_range",
     "collective_efficiency >= 0.01 AND collective_efficiency <= 1.0"),
    ("ep_range",
     "ep >= 1 AND ep <= 1024"),
    ("concurrency_range",
     "concurrency >= 0 AND concurrency <= 100000000"),
    ("service_scv_range",
     "service_scv >= 0.0 AND service_scv <= 100.0"),
    ("slo_ttft_s_range",
     "slo_ttft_s >= 0 AND slo_ttft_s <= 3600"),
    ("slo_percentile_choice",
     "slo_percentile IN ('50', '90', '99')"),
    ("slo_tpot_s_range",
     "slo_tpot_s >= 0 AND slo_tpot_s <= 3600"),
)

GPU_COLUMNS: tuple[tuple[str, sa.types.TypeEngine], ...] = (
    ("usable_memory_bytes", sa.BigInteger()),
    ("matmul_efficiency", sa.Float()),
    ("matmul_efficiency_8bit", sa.Float()),
    ("bandwidth_efficiency", sa.Float()),
    ("runtime_context_bytes", sa.BigInteger()),
)
GPU_CHECKS: tuple[tuple[str, str], ...] = (
    ("usable_memory_bytes_positive", "usable_memory_bytes IS NULL OR usable_memory_bytes > 0"),
    ("runtime_context_bytes_positive",
     "runtime_context_bytes IS NULL OR runtime_context_bytes > 0"),
    *((f"{c}_share", f"{c} IS NULL OR ({c} > 0 AND {c} <= 1)")
      for c in ("matmul_efficiency", "matmul_efficiency_8bit", "bandwidth_efficiency")),
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
    with op.batch_alter_table("gpus") as batch_op:
        for name, type_ in GPU_COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=True))
        batch_op.add_column(sa.Column("serving_source", sa.Text(), nullable=False,
                                      server_default=""))
        for name, condition in GPU_CHECKS:
            batch_op.create_check_constraint(op.f(f"ck_gpus_{name}"), condition)
    with op.batch_alter_table("gpus") as batch_op:
        batch_op.alter_column("serving_source", server_default=None)
    _fill_shipped_gpus()


def _fill_shipped_gpus() -> None:
    """Give the GPUs of the shipped catalog (by name) the serving figures it lists, where the
    row has none: what a database seeded before this revision would have had, and what a
    downgrade then upgrade restores."""
    from planner.spec.catalog import load_gpus  # the shipped catalog (seeds/gpus.toml)

    gpus = sa.table("gpus", sa.column("name", sa.String), sa.column("serving_source", sa.Text),
                    *(sa.column(name, type_) for name, type_ in GPU_COLUMNS))
    bind = op.get_bind()
    for name, spec in load_gpus().items():
        values = {"usable_memory_bytes": spec.usable_memory_bytes or None,
                  "matmul_efficiency": spec.matmul_efficiency or None,
                  "matmul_efficiency_8bit": spec.matmul_efficiency_8bit or None,
                  "bandwidth_efficiency": spec.bandwidth_efficiency or None,
                  "runtime_context_bytes": spec.runtime_context_bytes or None,
                  "serving_source": spec.serving_source}
        bind.execute(gpus.update().where(gpus.c.name == name,
                                         gpus.c.usable_memory_bytes.is_(None))
                     .values(**values))


def downgrade() -> None:
    with op.batch_alter_table("gpus") as batch_op:
        for name, _condition in GPU_CHECKS:
            batch_op.drop_constraint(op.f(f"ck_gpus_{name}"), type_="check")
        batch_op.drop_column("serving_source")
        for name, _type in reversed(GPU_COLUMNS):
            batch_op.drop_column(name)
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _condition in SCENARIO_CHECKS:
            batch_op.drop_constraint(op.f(f"ck_scenarios_{name}"), type_="check")
        for name, _type, _default in reversed(SCENARIO_COLUMNS):
            batch_op.drop_column(name)
