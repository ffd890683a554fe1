"""The scenario formulas, in one list: each function is a column named after itself.

A formula's parameters name the columns it reads, so the dependency graph is derived from the
signatures, never listed by hand (docs/design.md, "Formulas are data"). ``planner.compute``
evaluates these lists over numpy columns and renders them as Excel formulas.
"""

from __future__ import annotations

from collections.abc import Callable

from planner.formulas import (
    cost,
    derived,
    disagg_inputs,
    disagg_slo,
    flops,
    latency,
    memory,
    offload,
    serving_columns,
    serving_step,
    slo,
    speculative,
    training,
)

Formula = Callable[..., object]

DERIVED_COMMON: tuple[Formula, ...] = (
    derived.weight_auto_number,
    derived.weight_bits,
    derived.reserve_bytes,
    derived.quant_group_size_effective,
    derived.quant_scale_bits_effective,
    derived.keep_embeddings_16bit_number,
    derived.matmul_path_code,
    derived.gpu_flops_per_s,
)
DERIVED_INFERENCE: tuple[Formula, ...] = (
    *DERIVED_COMMON,
    derived.kv_bits,
    derived.state_recurrent_bits,
    speculative.spec_method_code,
    derived.attention_convention_code,
    derived.logits_convention_code,
    derived.engine_code,
    serving_step.prefill_launch_code,
    derived.chunked_prefill_number,
    derived.vllm_v0_accounting_number,
    derived.attention_dp_number,
    derived.vllm_large_part,
    derived.max_num_seqs_effective,
    derived.max_num_batched_tokens_effective,
    derived.block_size_effective,
    derived.max_model_len_effective,
    derived.gpu_compute_bits,
    derived.gpu_matmul_efficiency,
    *disagg_inputs.DERIVED,
    derived.slo_percentile_number,
    derived.kv_offload_bytes_per_gpu,
    derived.host_link_bytes_per_s,
)
"""Derived inputs of an inference scenario (:mod:`planner.formulas.derived`): computed like
outputs, shown as inputs."""
DERIVED_TRAINING: tuple[Formula, ...] = (
    *DERIVED_COMMON,
    derived.activation_recompute_number,
    derived.include_attention_flops_number,
)
"""Derived inputs of a training scenario."""

WEIGHTS: tuple[Formula, ...] = (
    memory.replicas,
    memory.model_params_other,
    memory.weight_bits_effective,
    memory.embedding_bits,
    memory.weights_bytes,
    memory.weights_bytes_per_gpu,
)

DEPLOYMENT: tuple[Formula, ...] = (
    *WEIGHTS,
    offload.weight_offload_bytes_per_gpu,
    offload.weights_on_gpu_bytes_per_gpu,
    memory.reserve_bytes_per_gpu,
    memory.kv_budget_bytes,
    memory.kv_bytes_per_token,
    memory.tp_kv_fraction,
    memory.context_tokens,
    memory.kv_bytes_per_sequence,
    memory.kv_bytes_per_sequence_per_gpu,
    memory.state_bytes_per_sequence,
    memory.tp_state_fraction,
    memory.state_bytes_per_sequence_per_gpu,
    memory.memory_bytes_per_sequence_per_gpu,
    memory.kv_in_use_bytes_per_gpu,
    memory.kv_headroom_bytes,
    memory.fits,
    memory.shortfall_bytes,
    memory.max_concurrent_sequences,
    memory.token_capacity,
    memory.max_context_tokens,
    offload.kv_offload_bytes_per_token,
    offload.kv_offload_tokens,
    offload.kv_offload_sequences,
    offload.held_sequences,
)

ROOFLINE_INFERENCE: tuple[Formula, ...] = (
    *DEPLOYMENT,
    flops.matmul_params_per_token,
    flops.prefill_flops,
    flops.mean_decode_context_tokens,
    flops.decode_step_flops,
    flops.decode_flops,
    flops.request_flops,
    latency.decode_bytes_per_step,
    offload.host_weight_stream_s,
    offload.weight_offload_bytes_per_token,
    latency.ttft_compute_s,
    latency.ttft_memory_s,
    latency.ttft_s,
    offload.kv_swap_in_bytes_per_gpu,
    offload.kv_swap_in_s,
    offload.kv_swap_in_ttft_ratio,
    latency.tpot_compute_s,
    latency.tpot_memory_s,
    latency.tpot_s,
    latency.e2e_latency_s,
    latency.batch_prefill_s,
    latency.cycle_s,
    latency.requests_per_s,
    latency.throughput_tokens_per_s,
    latency.decode_tokens_per_s,
    latency.input_tokens_per_s,
    latency.meets_target_rate,
    latency.gpus_for_target_rate,
    *disagg_inputs.COST,
    disagg_inputs.cost_usd_per_hour,
    cost.cost_usd_per_month,
    cost.prefill_time_share,
    cost.cost_usd_per_million_input_tokens,
    cost.cost_usd_per_million_output_tokens,
    cost.tokens_per_day,
)

TRAINING: tuple[Formula, ...] = (
    *WEIGHTS,
    flops.matmul_params_per_token,
    training.train_matmul_params,
    training.lora_trainable_params,
    training.trainable_params,
    training.train_attention_flops_per_token,
    training.train_flops_per_token,
    training.train_flops,
    training.train_time_s,
    training.gpu_hours,
    training.train_cost_usd,
    training.data_parallel,
    training.model_state_bytes_per_gpu,
    training.activation_bytes_per_gpu,
    training.train_memory_bytes_per_gpu,
    training.train_fits,
    training.tokens_for_gpu_hours,
    training.tokens_for_usd,
    cost.cost_usd_per_hour,
)

INFERENCE: tuple[Formula, ...] = (*serving_columns.contract_inference(ROOFLINE_INFERENCE),
                                   slo.ttft_slo_percentile_s, slo.saturated, slo.meets_slo,
                                   slo.slo_queue_utilization, slo.slo_requests_per_step,
                                   slo.slo_step_s, slo.slo_step_requests_per_s_replica,
                                   slo.slo_requests_per_s_replica, slo.slo_replicas_low,
                                   slo.slo_replicas_high, *slo.SEARCH, *disagg_slo.COLUMNS,
                                   slo.replicas_needed,
                                   slo.gpus_needed,
                                   slo.cost_usd_per_month_needed)
"""Every inference output: the roofline columns (with ``token_capacity`` and ``requests_per_s``
engine-aware, equal to the roofline's for ``engine = roofline``), then the serving engine's
memory accounting and steady state under load (:data:`serving_columns.SERVING`)."""
