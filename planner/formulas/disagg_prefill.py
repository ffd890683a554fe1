"""The prefill pool of a disaggregated deployment: its step, capacity and a prompt's service.

Why this module exists: a prefill worker runs only prompt chunks, at its own TP, EP and
attention DP on the scenario's GPU, so its step is the aggregated model's operator sum
(:func:`planner.formulas.serving_step._step_kind_s`) with no decodes (:func:`_prefill_step_at`);
this module owns the per-token figures at the prefill parallelism, the full and the one-chunk
step, the pool's capacity in prompts per second and the time a prompt spends in prefill once
admitted. A pool's batch-independent step (:func:`_pool_step_fixed_s`) is here too; the decode
pool (:mod:`planner.formulas.disagg_decode`) takes it at its own TP and EP. The model is
described in :mod:`planner.formulas.disagg`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per worker unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from planner.formulas import engine_memory as em
from planner.formulas import expert_parallel as xp
from planner.formulas import serving_step
from planner.formulas.ops import Value, minimum


def prefill_gemm_s_per_token(matmul_params_per_token: Value, prefill_tp_effective: Value,
                             gpu_flops_per_s: Value, matmul_efficiency_effective: Value) -> Value:
    """GEMM seconds per prompt token on a prefill GPU (:func:`serving_step.gemm_s_per_token`)."""
    return serving_step.gemm_s_per_token(matmul_params_per_token, prefill_tp_effective,
                                         gpu_flops_per_s, matmul_efficiency_effective)


def prefill_expert_ranks(prefill_ep_effective: Value, model_experts: Value) -> Value:
    """Expert ranks of a prefill worker (:func:`expert_parallel.expert_ranks` at its EP)."""
    return xp.expert_ranks(prefill_ep_effective, model_experts)


def prefill_expert_rank_max_sd(prefill_expert_ranks: Value) -> Value:
    """The busiest prefill expert rank's excess in standard deviations
    (:func:`expert_parallel.expert_rank_max_sd`)."""
    return xp.expert_rank_max_sd(prefill_expert_ranks)


def prefill_expert_gemm_s_per_token(model_matmul_experts_active_params: Value,
                                    prefill_tp_effective: Value, gpu_flops_per_s: Value,
                                    matmul_efficiency_effective: Value) -> Value:
    """Routed-expert GEMM seconds per prompt token on a prefill GPU
    (:func:`expert_parallel.expert_gemm_s_per_token`)."""
    return xp.expert_gemm_s_per_token(model_matmul_experts_active_params,
                                                   prefill_tp_effective, gpu_flops_per_s,
                                                   matmul_efficiency_effective)


def prefill_token_compute_s(prefill_flops: Value, prompt_tokens: Value,
                            prefill_tp_effective: Value, gpu_flops_per_s: Value,
                            matmul_efficiency_effective: Value) -> Value:
    """Compute seconds per prompt token on a prefill GPU
    (:func:`serving_step.prefill_compute_s_per_token`)."""
    return serving_step.prefill_compute_s_per_token(prefill_flops, prompt_tokens,
                                                    prefill_tp_effective, gpu_flops_per_s,
                                                    matmul_efficiency_effective)


def prefill_attention_replicated_bytes_per_gpu(
        prefill_attention_dp_number: Value, prefill_tp_effective: Value, pp: Value,
        model_hidden_size: Value, model_attn_flops_per_pair_full: Value,
        model_attn_flops_per_pair_window: Value, model_kv_elems_per_token_full: Value,
        model_kv_elems_per_token_window: Value, model_attn_matmul_params_other: Value,
        weight_bits_effective: Value) -> Value:
    """Attention weights data-parallel attention replicates on a prefill GPU
    (:func:`engine_memory.attention_replicated_bytes_per_gpu`)."""
    return em.attention_replicated_bytes_per_gpu(
        prefill_attention_dp_number, prefill_tp_effective, pp, model_hidden_size,
        model_attn_flops_per_pair_full, model_attn_flops_per_pair_window,
        model_kv_elems_per_token_full, model_kv_elems_per_token_window,
        model_attn_matmul_params_other, weight_bits_effective)


def prefill_dense_weights_s(model_matmul_dense_params: Value, model_lm_head_matmul_params: Value,
                            weight_bits_effective: Value, embedding_bits: Value,
                            prefill_tp_effective: Value, pp: Value,
                            prefill_attention_replicated_bytes_per_gpu: Value,
                            gpu_bandwidth_bytes_per_s: Value,
                            bandwidth_efficiency_effective: Value) -> Value:
    """Seconds a prefill step reads the dense weights
    (:func:`serving_step.serving_dense_weights_s`)."""
    return serving_step.serving_dense_weights_s(
        model_matmul_dense_params, model_lm_head_matmul_params, weight_bits_effective,
        embedding_bits, prefill_tp_effective, pp, prefill_attention_replicated_bytes_per_gpu,
        gpu_bandwidth_bytes_per_s, bandwidth_efficiency_effective)


def prefill_expert_weights_s(model_matmul_experts_params: Value, weight_bits_effective: Value,
                             prefill_tp_effective: Value, gpu_bandwidth_bytes_per_s: Value,
                             bandwidth_efficiency_effective: Value) -> Value:
    """Seconds to read every routed expert on a prefill GPU
    (:func:`serving_step.serving_expert_weights_s`)."""
    return serving_step.serving_expert_weights_s(model_matmul_experts_params, weight_bits_effective,
                                                 prefill_tp_effective, gpu_bandwidth_bytes_per_s,
                                                 bandwidth_efficiency_effective)


def _pool_step_fixed_s(tp: Value, pp: Value, ep: Value, attention_dp_number: Value,
                       model_layers: Value, model_experts: Value,
                       model_experts_per_token: Value, engine_code: Value,
                       nvlink_domain_gpus: Value, collective_latency_s: Value,
                       engine_step_overhead_s: Value, kernel_overhead_s_per_layer: Value,
                       model_layer_kernels: Value, host_weight_stream_s: Value) -> Value:
    """Batch-independent time of a pool's step (:func:`serving_step.serving_step_fixed_s` with the
    pool's collectives, :func:`planner.formulas.expert_parallel.collective_latency_s_per_step`
    at its TP, EP and attention DP). Not a column."""
    code = xp.moe_exchange_code(tp, ep, attention_dp_number, model_experts,
                                model_experts_per_token, engine_code, nvlink_domain_gpus)
    moe_latency = xp.moe_collective_latency_s(code, tp, ep, nvlink_domain_gpus,
                                              collective_latency_s)
    latency = xp.collective_latency_s_per_step(tp, pp, attention_dp_number, model_layers, code,
                                               collective_latency_s, moe_latency)
    return serving_step.serving_step_fixed_s(latency, model_layers, engine_step_overhead_s,
                                             kernel_overhead_s_per_layer, model_layer_kernels,
                                             host_weight_stream_s, 0)  # no drafter in a pool


def prefill_step_fixed_s(prefill_tp_effective: Value, pp: Value, prefill_ep_effective: Value,
                         prefill_attention_dp_number: Value, model_layers: Value,
                         model_experts: Value, model_experts_per_token: Value,
                         engine_code: Value, gpu_nvlink_domain_gpus: Value,
                         collective_latency_s: Value, engine_step_overhead_s: Value,
                         kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                         host_weight_stream_s: Value) -> Value:
    """Batch-independent time of a prefill step (:func:`_pool_step_fixed_s` at the prefill
    TP/EP on the scenario's GPU)."""
    return _pool_step_fixed_s(prefill_tp_effective, pp, prefill_ep_effective,
                              prefill_attention_dp_number, model_layers, model_experts,
                              model_experts_per_token, engine_code, gpu_nvlink_domain_gpus,
                              collective_latency_s, engine_step_overhead_s,
                              kernel_overhead_s_per_layer, model_layer_kernels,
                              host_weight_stream_s)


def _prefill_step_at(tokens: Value, prefill_token_compute_s: Value, prefill_token_s: Value,
                     prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                     prefill_expert_weights_s: Value, model_experts: Value,
                     model_experts_per_token: Value, prefill_gemm_s_per_token: Value,
                     prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                     prefill_expert_rank_max_sd: Value, prefill_host_floor_s: Value) -> Value:
    """A prefill-only step of ``tokens`` prompt tokens (:func:`serving_step._step_kind_s` with no
    decodes), on the busiest of the prefill worker's expert ranks, at least the host's launch
    time of an eager step (:func:`serving_step.prefill_host_floor_s`). Not a column."""
    return serving_step._step_kind_s(tokens, 0, prefill_token_compute_s, 0, 0, prefill_token_s,
                                     prefill_step_fixed_s, prefill_dense_weights_s,
                                     prefill_expert_weights_s, model_experts,
                                     model_experts_per_token, prefill_gemm_s_per_token, 0, 1,
                                     prefill_expert_gemm_s_per_token, prefill_expert_ranks,
                                     prefill_expert_rank_max_sd, prefill_host_floor_s)


def prefill_step_s(max_num_batched_tokens_effective: Value, pp: Value,
                   prefill_token_compute_s: Value, prefill_token_s: Value,
                   prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                   prefill_expert_weights_s: Value, model_experts: Value,
                   model_experts_per_token: Value, prefill_gemm_s_per_token: Value,
                   prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                   prefill_expert_rank_max_sd: Value, prefill_host_floor_s: Value) -> Value:
    """A full prefill step: the token budget of prompt chunks, one micro-batch carrying
    ``1/pp`` of it (the serving step's convention)."""
    return _prefill_step_at(max_num_batched_tokens_effective / pp, prefill_token_compute_s,
                            prefill_token_s, prefill_step_fixed_s, prefill_dense_weights_s,
                            prefill_expert_weights_s, model_experts, model_experts_per_token,
                            prefill_gemm_s_per_token, prefill_expert_gemm_s_per_token,
                            prefill_expert_ranks, prefill_expert_rank_max_sd,
                            prefill_host_floor_s)


def prefill_chunk_step_s(prompt_tokens: Value, max_num_batched_tokens_effective: Value,
                         pp: Value, prefill_token_compute_s: Value, prefill_token_s: Value,
                         prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                         prefill_expert_weights_s: Value, model_experts: Value,
                         model_experts_per_token: Value,
                         prefill_gemm_s_per_token: Value,
                         prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                         prefill_expert_rank_max_sd: Value, prefill_host_floor_s: Value) -> Value:
    """A prefill step carrying one prompt's chunk alone, ``min(S, budget)`` tokens."""
    chunk = minimum(prompt_tokens, max_num_batched_tokens_effective)
    return _prefill_step_at(chunk / pp, prefill_token_compute_s, prefill_token_s,
                            prefill_step_fixed_s, prefill_dense_weights_s,
                            prefill_expert_weights_s, model_experts, model_experts_per_token,
                            prefill_gemm_s_per_token, prefill_expert_gemm_s_per_token,
                            prefill_expert_ranks, prefill_expert_rank_max_sd,
                            prefill_host_floor_s)


def prefill_capacity_requests_per_s(prefill_workers_effective: Value, pp: Value,
                                    max_num_batched_tokens_effective: Value,
                                    prompt_tokens: Value, prefill_step_s: Value) -> Value:
    """Most prompts per second the prefill pool completes:
    ``Wp * pp * budget / S / step(budget)`` (every step full of prompt chunks)."""
    return (prefill_workers_effective * pp * max_num_batched_tokens_effective / prompt_tokens
            / prefill_step_s)


def prefill_service_s(prefill_steps_per_request: Value, prefill_chunk_step_s: Value) -> Value:
    """Time a prompt spends in prefill once admitted: ``ceil(S / budget)`` steps of its own
    chunk."""
    return prefill_steps_per_request * prefill_chunk_step_s
