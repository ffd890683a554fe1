"""The serving-engine columns in dependency order, for the sheet.

``scenario.INFERENCE`` is :func:`contract_inference` of the roofline columns: today's columns
and the engine model side by side. Two contract names exist in the roofline columns
(``token_capacity``, ``requests_per_s``); :func:`contract_inference` swaps in engine-aware
versions under those names (equal to the roofline's for ``engine = roofline``), and the serving
columns also keep them as ``engine_token_capacity`` and ``engine_requests_per_s``.

Wiring notes for the sheet:

* inputs: ``planner.compute.inputs.SERVING_INPUTS``; the numbers the formulas read from them
  (``engine_code``, 0/1 flags, the engine's default limits where an input is 0) are derived
  inputs (:mod:`planner.formulas.derived`);
* GPU columns: :func:`planner.spec.gpu.serving_figures` (``gpu_usable_memory_bytes``,
  ``gpu_matmul_efficiency_16bit``/``_8bit``, ``gpu_bandwidth_efficiency``,
  ``gpu_interconnect_bytes_per_s``, ``gpu_runtime_context_bytes``), the wiring
  (:func:`planner.spec.gpu.topology_figures`) and the derived ``gpu_matmul_efficiency`` at
  the row's compute dtype;
* whole-number outputs: ``engine_kv_tokens``, ``engine_token_capacity``, ``max_running_batch``,
  ``profile_tokens``, ``profile_sequences``; flags: ``engine_fits``, ``overloaded``;
* the step-time split for a details pane: ``step_compute_s``, ``step_memory_s``,
  ``step_elementwise_s``, ``step_communication_s``, ``step_overhead_s``, ``step_host_link_s``
  (``step_s`` = max(compute, memory) + the other four).
"""

from __future__ import annotations

from collections.abc import Callable

from planner.formulas import (
    disagg,
    disagg_load,
    expert_parallel,
    memory,
    prefix_cache,
    profile_run,
    serving,
    serving_cohort,
    serving_load,
    serving_operating,
    serving_queue,
    serving_step,
    speculative,
    step_mix,
    topology,
)
from planner.formulas import engine_memory as em
from planner.formulas.latency import requests_per_s as roofline_requests_per_s
from planner.formulas.ops import Value, where

Formula = Callable[..., object]

SPEC_AND_PREFIX: tuple[Formula, ...] = (
    *prefix_cache.PREFIX_COLUMNS,
    *speculative.SPEC_COUNTS,
    speculative.spec_kv_token_factor,
    speculative.spec_draft_weights_bytes_per_gpu,
    speculative.spec_draft_flops_per_step,
    speculative.serving_decode_flops,
    speculative.serving_request_flops,
)
"""Prefix caching and speculative decoding (:mod:`planner.formulas.prefix_cache`,
:mod:`planner.formulas.speculative`): what the serving columns read in place of the
prompt, the output steps and the request's FLOPs; equal to those without a cache hit or
speculation."""

ENGINE_MEMORY: tuple[Formula, ...] = (
    em.rope_cache_bytes,
    em.attention_replicated_bytes_per_gpu,
    em.engine_weights_bytes_per_gpu,
    profile_run.profile_tokens,
    profile_run.profile_sequences,
    profile_run.ffn_width_per_token,
    profile_run.forward_activation_bytes,
    profile_run.sampler_activation_bytes,
    profile_run.moe_workspace_bytes,
    profile_run.profile_hidden_bytes,
    profile_run.activation_peak_bytes,
    em.non_torch_bytes,
    em.engine_kv_bytes_per_gpu,
    em.kv_fraction_per_gpu,
    em.kv_bytes_per_token_per_gpu,
    em.engine_block_tokens,
    em.engine_kv_tokens,
    em.engine_state_tokens,
    em.engine_token_capacity,
    em.engine_memory_used_bytes,
    em.engine_fits,
)

SERVING_LOAD: tuple[Formula, ...] = (
    serving_step.matmul_efficiency_effective,
    serving_step.bandwidth_efficiency_effective,
    speculative.spec_draft_kv_s_per_step,
    serving_load.load_mode,
    serving_load.replica_request_rate_per_s,
    serving_load.micro_batch_request_rate_per_s,
    serving_step.request_tokens,
    serving_step.prefill_steps_per_request,
    serving_step.residence_steps,
    serving.max_running_batch,
    serving_step.serving_compute_s_per_request,
    serving.serving_kv_memory_s_per_request,
    serving_step.serving_dense_weights_s,
    serving_step.serving_expert_weights_s,
    speculative.spec_draft_fixed_s,
    topology.tp_link_kind,
    topology.tp_link_bytes_per_s,
    topology.ep_link_bytes_per_s,
    topology.tp_hop_latency_s,
    expert_parallel.moe_exchange_code,
    expert_parallel.moe_dispatch_bytes,
    expert_parallel.moe_comm_s_per_token,
    expert_parallel.moe_collective_latency_s,
    expert_parallel.collective_latency_s_per_step,
    serving_step.serving_comm_s_per_token,
    serving_step.serving_activation_s_per_token,
    serving_step.serving_token_s,
    serving_step.serving_step_fixed_s,
    serving_step.prefill_eager,
    serving_step.prefill_host_floor_s,
    serving_step.prefill_compute_s_per_token,
    serving_step.decode_compute_s_per_token,
    serving_step.decode_kv_s_per_token,
    serving_step.gemm_s_per_token,
    serving_step.lm_head_s_per_token,
    expert_parallel.expert_ranks,
    expert_parallel.expert_rank_max_sd,
    expert_parallel.expert_gemm_s_per_token,
    serving_operating.saturation_requests_per_step,
    step_mix.saturation_prefill_tokens,
    step_mix.saturation_prefill_decodes,
    step_mix.saturation_prefill_step_s,
    step_mix.saturation_decode_step_s,
    serving_operating.saturation_step_s,
    serving_operating.saturation_requests_per_s_replica,
    *disagg.POOLS,
    serving_operating.saturation_requests_per_s,
    serving_operating.saturation_output_tokens_per_s,
    serving_queue.frontend_code,
    serving_queue.request_latency_effective_s,
    serving_queue.request_overhead_effective_s,
    serving_queue.stream_overhead_effective_s_per_token,
    serving_queue.frontend_requests_per_s_replica,
    serving_queue.serving_capacity_requests_per_s_replica,
    serving_queue.gpu_utilization,
    serving_queue.utilization,
    serving_queue.overloaded,
    serving_operating.serving_step_0_s,
    serving_operating.serving_step_1_s,
    serving_operating.serving_step_2_s,
    serving_operating.serving_step_3_s,
    serving_operating.serving_step_4_s,
    serving_operating.serving_step_5_s,
    serving_operating.serving_step_6_s,
    serving_operating.closed_loop_batch,
    serving_operating.operating_requests_per_step,
    serving_operating.micro_batch_requests_per_step,
    serving_operating.running_batch,
    serving_operating.step_compute_s,
    serving_operating.step_memory_s,
    serving_operating.step_communication_s,
    serving_operating.step_elementwise_s,
    serving_operating.step_overhead_s,
    serving_operating.step_host_link_s,
    step_mix.closed_loop_prefill_tokens,
    step_mix.closed_loop_prefill_decodes,
    serving_cohort.closed_loop_prefill_step_s,
    serving_cohort.closed_loop_decode_step_s,
    serving_cohort.closed_loop_step_s,
    serving_operating.step_s,
    serving_cohort.prefill_first,
    serving_cohort.cohort_ttft_steps,
    serving_cohort.prefill_only_step_s,
    *disagg_load.LOAD,
    serving_cohort.tpot_mean_s,
    serving_cohort.ttft_service_s,
    serving_queue.queue_wait_mean_s,
    serving_queue.queue_wait_p50_s,
    serving_queue.queue_wait_p90_s,
    serving_queue.queue_wait_p99_s,
    serving_queue.step_alignment_s,
    serving_queue.ttft_mean_s,
    serving_queue.ttft_p50_s,
    serving_queue.ttft_p90_s,
    serving_queue.ttft_p99_s,
    serving_queue.e2e_mean_s,
    serving_cohort.wave_prefill_tokens_per_step,
    serving_cohort.wave_prefill_step_s,
    serving_cohort.wave_ttft_steps,
    serving_cohort.wave_ttft_mean_s,
    serving_queue.serving_requests_per_s,
    serving_queue.output_tokens_per_s,
    serving_queue.engine_requests_per_s,
)

SERVING: tuple[Formula, ...] = (*SPEC_AND_PREFIX, *ENGINE_MEMORY, *SERVING_LOAD)
"""Every serving column, in dependency order; reads INFERENCE's columns."""

ITERATIONS: tuple[str, ...] = tuple(f"serving_step_{i}_s" for i in range(1, 7))
"""The fixed-point iteration columns, first to last."""


def token_capacity(kv_budget_bytes: Value, model_kv_elems_per_token_full: Value,
                   model_kv_elems_per_token_window: Value, model_sliding_window_tokens: Value,
                   context_tokens: Value, kv_bits: Value, model_kv_heads_growing: Value,
                   model_kv_heads_window: Value, tp: Value, pp: Value, batch: Value,
                   state_bytes_per_sequence_per_gpu: Value, engine_code: Value,
                   engine_kv_tokens: Value) -> Value:
    """KV tokens one replica holds, engine-aware (contract name): today's
    :func:`planner.formulas.memory.token_capacity` for ``roofline``, the engine's whole-block
    pool (:func:`planner.formulas.engine_memory.engine_kv_tokens`) otherwise."""
    today = memory.token_capacity(kv_budget_bytes, model_kv_elems_per_token_full,
                                  model_kv_elems_per_token_window, model_sliding_window_tokens,
                                  context_tokens, kv_bits, model_kv_heads_growing,
                                  model_kv_heads_window, tp, pp, batch,
                                  state_bytes_per_sequence_per_gpu)
    return where(engine_code == em.ROOFLINE, today, engine_kv_tokens)


def requests_per_s(replicas: Value, batch: Value, cycle_s: Value, engine_code: Value,
                   serving_requests_per_s: Value) -> Value:
    """Completed requests per second, engine-aware (contract name): today's
    :func:`planner.formulas.latency.requests_per_s` for ``roofline``, the serving model's
    otherwise."""
    today = roofline_requests_per_s(replicas, batch, cycle_s)
    return where(engine_code == em.ROOFLINE, today, serving_requests_per_s)


def contract_inference(inference: tuple[Formula, ...]) -> tuple[Formula, ...]:
    """``inference`` (``scenario.INFERENCE``) with the engine-aware :func:`token_capacity` and
    :func:`requests_per_s` swapped in under the contract names, followed by :data:`SERVING`
    (whose ``engine_token_capacity`` and ``engine_requests_per_s`` then equal them)."""
    swap: dict[str, Formula] = {"token_capacity": token_capacity, "requests_per_s": requests_per_s}
    return (*(swap.get(f.__name__, f) for f in inference), *SERVING)
