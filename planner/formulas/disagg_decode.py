"""The decode pool of a disaggregated deployment: its per-token figures, its step and capacity.

Why this module exists: a decode worker runs only decodes, at its own TP, EP and attention DP
on the decode GPU (``decode_gpu``, which may differ from the scenario's), so its step is the
aggregated model's operator sum (:func:`planner.formulas.serving_step._step_kind_s`) with no
prompt tokens (:func:`_decode_step_at`). This module owns the per-token figures at the decode
parallelism on the decode GPU, the weights a decode step reads, its fixed part, the step at
the full batch and the pool's capacity, and the slower pool's capacity of the deployment. The
decode pool's KV pool, which bounds its batch, is :mod:`planner.formulas.disagg_kv_pools`;
the model is described in :mod:`planner.formulas.disagg`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per worker unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from planner.formulas import engine_memory as em
from planner.formulas import expert_parallel as xp
from planner.formulas import memory, serving, serving_step, speculative
from planner.formulas.disagg_inputs import _HUGE
from planner.formulas.disagg_prefill import _pool_step_fixed_s
from planner.formulas.ops import Value, maximum, minimum, where


def decode_matmul_efficiency_effective(matmul_efficiency: Value,
                                       decode_gpu_matmul_efficiency: Value) -> Value:
    """Achievable tensor share on a decode GPU
    (:func:`serving_step.matmul_efficiency_effective`)."""
    return serving_step.matmul_efficiency_effective(matmul_efficiency,
                                                    decode_gpu_matmul_efficiency)


def decode_bandwidth_efficiency_effective(bandwidth_efficiency: Value,
                                          decode_gpu_bandwidth_efficiency: Value) -> Value:
    """Achievable bandwidth share on a decode GPU
    (:func:`serving_step.bandwidth_efficiency_effective`)."""
    return serving_step.bandwidth_efficiency_effective(bandwidth_efficiency,
                                                       decode_gpu_bandwidth_efficiency)


def decode_gemm_s_per_token(matmul_params_per_token: Value, decode_tp_effective: Value,
                            decode_gpu_flops_per_s: Value,
                            decode_matmul_efficiency_effective: Value) -> Value:
    """GEMM seconds per decode token on a decode GPU (:func:`serving_step.gemm_s_per_token`)."""
    return serving_step.gemm_s_per_token(matmul_params_per_token, decode_tp_effective,
                                         decode_gpu_flops_per_s, decode_matmul_efficiency_effective)


def decode_expert_ranks(decode_ep_effective: Value, model_experts: Value) -> Value:
    """Expert ranks of a decode worker (:func:`expert_parallel.expert_ranks` at its EP)."""
    return xp.expert_ranks(decode_ep_effective, model_experts)


def decode_expert_rank_max_sd(decode_expert_ranks: Value) -> Value:
    """The busiest decode expert rank's excess in standard deviations
    (:func:`expert_parallel.expert_rank_max_sd`)."""
    return xp.expert_rank_max_sd(decode_expert_ranks)


def decode_expert_gemm_s_per_token(model_matmul_experts_active_params: Value,
                                   decode_tp_effective: Value, decode_gpu_flops_per_s: Value,
                                   decode_matmul_efficiency_effective: Value) -> Value:
    """Routed-expert GEMM seconds per decode token on a decode GPU
    (:func:`expert_parallel.expert_gemm_s_per_token`)."""
    return xp.expert_gemm_s_per_token(model_matmul_experts_active_params,
                                                   decode_tp_effective, decode_gpu_flops_per_s,
                                                   decode_matmul_efficiency_effective)


def decode_lm_head_s_per_token(model_lm_head_matmul_params: Value, decode_tp_effective: Value,
                               decode_gpu_flops_per_s: Value,
                               decode_matmul_efficiency_effective: Value) -> Value:
    """Logits seconds per decode token on a decode GPU
    (:func:`serving_step.lm_head_s_per_token`)."""
    return serving_step.lm_head_s_per_token(model_lm_head_matmul_params, decode_tp_effective,
                                            decode_gpu_flops_per_s,
                                            decode_matmul_efficiency_effective)


def decode_token_compute_s(serving_decode_flops: Value, decode_steps_per_request: Value,
                           decode_tp_effective: Value, decode_gpu_flops_per_s: Value,
                           decode_matmul_efficiency_effective: Value) -> Value:
    """Compute seconds of one sequence's decode step on a decode GPU
    (:func:`serving_step.decode_compute_s_per_token`): under speculative decoding its verify
    of ``k + 1`` tokens and its drafts (:func:`planner.formulas.speculative.serving_decode_flops`
    over the ``(G - 1)/a`` steps); one token's without."""
    return serving_step.decode_compute_s_per_token(serving_decode_flops,
                                                   decode_steps_per_request,
                                                   decode_tp_effective,
                                                   decode_gpu_flops_per_s,
                                                   decode_matmul_efficiency_effective)


def decode_pool_kv_s_per_token(output_tokens: Value, prompt_tokens: Value,
                          decode_steps_per_request: Value,
                          decode_spec_draft_kv_s_per_step: Value,
                          mean_decode_context_tokens: Value, output_tokens_cv: Value,
                          kv_bytes_per_token: Value, model_kv_heads: Value,
                          decode_tp_effective: Value, decode_attention_dp_number: Value,
                          state_bytes_per_sequence: Value, model_state_heads: Value,
                          decode_gpu_bandwidth_bytes_per_s: Value,
                          decode_bandwidth_efficiency_effective: Value) -> Value:
    """KV memory seconds of one decode token on a decode GPU: the request's KV traffic
    (:func:`serving.serving_kv_memory_s_per_request`, the share per GPU at the decode TP and
    attention DP, :func:`engine_memory.kv_fraction_per_gpu`) over its decode steps, ``G - 1``
    or ``(G - 1)/a`` under speculation, each with the drafter's own KV reads
    (:func:`decode_spec_draft_kv_s_per_step`; :func:`serving_step.decode_kv_s_per_token`)."""
    fraction = em.kv_fraction_per_gpu(memory.tp_kv_fraction(model_kv_heads, decode_tp_effective),
                                      decode_tp_effective, decode_attention_dp_number)
    per_request = serving.serving_kv_memory_s_per_request(
        output_tokens, prompt_tokens, decode_steps_per_request,
        decode_spec_draft_kv_s_per_step, mean_decode_context_tokens,
        output_tokens_cv,
        kv_bytes_per_token, fraction, state_bytes_per_sequence,
        memory.tp_state_fraction(model_state_heads, decode_tp_effective),
        decode_gpu_bandwidth_bytes_per_s, decode_bandwidth_efficiency_effective)
    return serving_step.decode_kv_s_per_token(per_request, decode_steps_per_request)


def decode_spec_draft_kv_s_per_step(spec_draft_tokens_effective: Value,
                                    spec_draft_kv_layers: Value, model_kv_layers: Value,
                                    mean_decode_context_tokens: Value,
                                    decode_kv_bytes_per_token_per_gpu: Value,
                                    decode_gpu_bandwidth_bytes_per_s: Value,
                                    decode_bandwidth_efficiency_effective: Value) -> Value:
    """The drafter's KV reads per sequence per step on a decode GPU
    (:func:`planner.formulas.speculative.spec_draft_kv_s_per_step` at the decode TP and
    attention DP on the decode GPU); 0 without MTP."""
    return speculative.spec_draft_kv_s_per_step(
        spec_draft_tokens_effective, spec_draft_kv_layers, model_kv_layers,
        mean_decode_context_tokens, decode_kv_bytes_per_token_per_gpu,
        decode_gpu_bandwidth_bytes_per_s, decode_bandwidth_efficiency_effective)


def decode_spec_draft_fixed_s(spec_method_code: Value, spec_draft_tokens_effective: Value,
                              decode_dense_weights_s: Value, decode_expert_weights_s: Value,
                              model_layers: Value, model_lm_head_matmul_params: Value,
                              embedding_bits: Value, model_hidden_size: Value,
                              weight_bits_effective: Value, decode_tp_effective: Value,
                              spec_draft_params: Value, spec_draft_layers: Value,
                              kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                              decode_gpu_bandwidth_bytes_per_s: Value,
                              decode_bandwidth_efficiency_effective: Value) -> Value:
    """The drafter's batch-independent seconds per decode step on a decode GPU
    (:func:`planner.formulas.speculative.spec_draft_fixed_s` with the decode pool's weights,
    TP and GPU); 0 without speculation."""
    return speculative.spec_draft_fixed_s(
        spec_method_code, spec_draft_tokens_effective, decode_dense_weights_s,
        decode_expert_weights_s, model_layers, model_lm_head_matmul_params, embedding_bits,
        model_hidden_size, weight_bits_effective, decode_tp_effective, spec_draft_params,
        spec_draft_layers, kernel_overhead_s_per_layer, model_layer_kernels,
        decode_gpu_bandwidth_bytes_per_s, decode_bandwidth_efficiency_effective)


def decode_attention_replicated_bytes_per_gpu(
        decode_attention_dp_number: Value, decode_tp_effective: Value, pp: Value,
        model_hidden_size: Value, model_attn_flops_per_pair_full: Value,
        model_attn_flops_per_pair_window: Value, model_kv_elems_per_token_full: Value,
        model_kv_elems_per_token_window: Value, model_attn_matmul_params_other: Value,
        weight_bits_effective: Value) -> Value:
    """Attention weights data-parallel attention replicates on a decode GPU
    (:func:`engine_memory.attention_replicated_bytes_per_gpu`)."""
    return em.attention_replicated_bytes_per_gpu(
        decode_attention_dp_number, decode_tp_effective, pp, model_hidden_size,
        model_attn_flops_per_pair_full, model_attn_flops_per_pair_window,
        model_kv_elems_per_token_full, model_kv_elems_per_token_window,
        model_attn_matmul_params_other, weight_bits_effective)


def decode_dense_weights_s(model_matmul_dense_params: Value, model_lm_head_matmul_params: Value,
                           weight_bits_effective: Value, embedding_bits: Value,
                           decode_tp_effective: Value, pp: Value,
                           decode_attention_replicated_bytes_per_gpu: Value,
                           decode_gpu_bandwidth_bytes_per_s: Value,
                           decode_bandwidth_efficiency_effective: Value) -> Value:
    """Seconds a decode step reads the dense weights
    (:func:`serving_step.serving_dense_weights_s`)."""
    return serving_step.serving_dense_weights_s(
        model_matmul_dense_params, model_lm_head_matmul_params, weight_bits_effective,
        embedding_bits, decode_tp_effective, pp, decode_attention_replicated_bytes_per_gpu,
        decode_gpu_bandwidth_bytes_per_s, decode_bandwidth_efficiency_effective)


def decode_expert_weights_s(model_matmul_experts_params: Value, weight_bits_effective: Value,
                            decode_tp_effective: Value, decode_gpu_bandwidth_bytes_per_s: Value,
                            decode_bandwidth_efficiency_effective: Value) -> Value:
    """Seconds to read every routed expert on a decode GPU
    (:func:`serving_step.serving_expert_weights_s`)."""
    return serving_step.serving_expert_weights_s(model_matmul_experts_params,
                                                 weight_bits_effective, decode_tp_effective,
                                                 decode_gpu_bandwidth_bytes_per_s,
                                                 decode_bandwidth_efficiency_effective)


def decode_step_fixed_s(decode_tp_effective: Value, pp: Value, decode_ep_effective: Value,
                        decode_attention_dp_number: Value, model_layers: Value,
                        model_experts: Value, model_experts_per_token: Value,
                        engine_code: Value, decode_gpu_nvlink_domain_gpus: Value,
                        collective_latency_s: Value, engine_step_overhead_s: Value,
                        kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                        host_weight_stream_s: Value, decode_spec_draft_fixed_s: Value) -> Value:
    """Batch-independent time of a decode step (:func:`_pool_step_fixed_s` at the decode
    TP/EP on the decode GPU's domain), with the drafter's passes under speculation
    (:func:`decode_spec_draft_fixed_s`)."""
    return _pool_step_fixed_s(decode_tp_effective, pp, decode_ep_effective,
                              decode_attention_dp_number, model_layers, model_experts,
                              model_experts_per_token, engine_code,
                              decode_gpu_nvlink_domain_gpus, collective_latency_s,
                              engine_step_overhead_s, kernel_overhead_s_per_layer,
                              model_layer_kernels, host_weight_stream_s) \
        + decode_spec_draft_fixed_s


_DECODE_STEP_COLUMNS = (
    "pp", "decode_token_compute_s", "decode_pool_kv_s_per_token", "decode_token_s",
    "decode_step_fixed_s", "decode_dense_weights_s", "decode_expert_weights_s", "model_experts",
    "model_experts_per_token", "decode_gemm_s_per_token", "decode_lm_head_s_per_token",
    "decode_expert_gemm_s_per_token", "decode_expert_ranks", "decode_expert_rank_max_sd",
    "spec_verify_tokens")
"""The columns a decode step reads besides its batch, in :func:`_decode_step_at`'s order."""


def _decode_step_at(batch: Value, pp: Value, decode_token_compute_s: Value,
                    decode_pool_kv_s_per_token: Value, decode_token_s: Value,
                    decode_step_fixed_s: Value, decode_dense_weights_s: Value,
                    decode_expert_weights_s: Value, model_experts: Value,
                    model_experts_per_token: Value, decode_gemm_s_per_token: Value,
                    decode_lm_head_s_per_token: Value, decode_expert_gemm_s_per_token: Value,
                    decode_expert_ranks: Value, decode_expert_rank_max_sd: Value,
                    spec_verify_tokens: Value) -> Value:
    """A decode-only step of ``batch`` running sequences (:func:`serving_step._step_kind_s` with
    no prompt tokens), one micro-batch of ``batch / pp``, on the busiest of the decode
    worker's expert ranks; under speculation each sequence verifies ``spec_verify_tokens``
    (``k + 1``). Not a column."""
    return serving_step._step_kind_s(0, maximum(batch, 1) / pp, 0, decode_token_compute_s,
                                     decode_pool_kv_s_per_token, decode_token_s,
                                     decode_step_fixed_s, decode_dense_weights_s,
                                     decode_expert_weights_s, model_experts,
                                     model_experts_per_token, decode_gemm_s_per_token,
                                     decode_lm_head_s_per_token, spec_verify_tokens,
                                     decode_expert_gemm_s_per_token, decode_expert_ranks,
                                     decode_expert_rank_max_sd)


def decode_saturation_step_s(decode_max_running_batch: Value, pp: Value,
                             decode_token_compute_s: Value, decode_pool_kv_s_per_token: Value,
                             decode_token_s: Value, decode_step_fixed_s: Value,
                             decode_dense_weights_s: Value, decode_expert_weights_s: Value,
                             model_experts: Value, model_experts_per_token: Value,
                             decode_gemm_s_per_token: Value,
                             decode_lm_head_s_per_token: Value,
                       decode_expert_gemm_s_per_token: Value, decode_expert_ranks: Value,
                       decode_expert_rank_max_sd: Value, spec_verify_tokens: Value) -> Value:
    """A decode step at the decode worker's full batch."""
    return _decode_step_at(decode_max_running_batch, pp, decode_token_compute_s,
                           decode_pool_kv_s_per_token, decode_token_s, decode_step_fixed_s,
                           decode_dense_weights_s, decode_expert_weights_s, model_experts,
                           model_experts_per_token, decode_gemm_s_per_token,
                           decode_lm_head_s_per_token, decode_expert_gemm_s_per_token,
                           decode_expert_ranks, decode_expert_rank_max_sd, spec_verify_tokens)


def decode_capacity_requests_per_s(decode_workers_effective: Value,
                                   decode_max_running_batch: Value, output_tokens: Value,
                                   decode_saturation_step_s: Value,
                                   spec_acceptance_length_effective: Value) -> Value:
    """Most requests per second the decode pool completes:
    ``Wd * B_max / ((G - 1) / a * step(B_max))`` (the prefill makes the first token; ``a``
    the tokens a step advances a sequence, 1 without speculation; unbounded for ``G = 1``)."""
    steps = maximum(output_tokens - 1, 1) / spec_acceptance_length_effective
    return where(output_tokens > 1,
                 decode_workers_effective * decode_max_running_batch
                 / (steps * decode_saturation_step_s), _HUGE)


def disagg_saturation_requests_per_s(prefill_capacity_requests_per_s: Value,
                                     decode_capacity_requests_per_s: Value) -> Value:
    """Most requests per second the disaggregated deployment completes: the slower pool's."""
    return minimum(prefill_capacity_requests_per_s, decode_capacity_requests_per_s)
