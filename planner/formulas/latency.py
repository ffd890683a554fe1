"""Latency and throughput lower bounds: each phase takes at least the larger of its compute time
and its memory time, never their sum (docs/formulas.md).

``compute time = FLOPs / (tp * peak FLOP/s * MFU)`` and
``memory time = bytes read per GPU * pp / (bandwidth * MBU)`` for one replica of ``tp x pp`` GPUs:
tensor-parallel ranks work at once, pipeline stages one after another, so a token's path costs the
sum over stages. Bytes read are the matmul weights a step touches (all dense weights, the LM head,
and the share of routed experts that ``n`` tokens in flight hit, ``1 - (1 - k/E)^n`` under uniform
routing) plus the KV cache the step reads or writes.

Columns: ``ttft_s`` (one request's prefill on an idle replica), ``tpot_s`` (one decode step of the
whole batch at the mean context), ``e2e_latency_s``, ``batch_prefill_s``, ``cycle_s`` (one batch
from admission to last token), ``throughput_tokens_per_s`` (output tokens, all replicas).
Golden: Llama-3-8B decode at T=8192, B=1 reads ≈ 16.08 GB → 16.1 ms at 1 TB/s, 0.097 ms of
compute at 200 TFLOP/s; the ``bandwidth/(4P)`` bound of "LLM compute explained" double-counts and is
not used (docs/formulas.md).
"""

from __future__ import annotations

from planner.formulas.memory import kv_elems_at_context
from planner.formulas.ops import Value, ceil, maximum, power, safe_div, where


def expert_touch_fraction(tokens: Value, model_experts: Value,
                          model_experts_per_token: Value) -> Value:
    """Expected share of routed experts that ``tokens`` tokens hit: ``1 - (1 - k/E)^tokens``
    (uniform routing). 1 for dense models (``E = k = 1``).

    Once ``tokens*k/E > 40`` the miss probability is below ``e^-40`` (4e-18, invisible in a
    double) and is taken as 0: spreadsheets report an underflowing power such as
    ``0.75^65536`` as an error (#NUM! in LibreOffice) where numpy gives 0."""
    share = model_experts_per_token / model_experts
    return 1 - where(tokens * share > 40, 0, power(1 - share, tokens))


def weights_read_bytes(tokens: Value, model_matmul_dense_params: Value,
                       model_matmul_experts_params: Value, model_experts: Value,
                       model_experts_per_token: Value, model_lm_head_matmul_params: Value,
                       weight_bits_effective: Value, embedding_bits: Value) -> Value:
    """Weight bytes one forward pass over ``tokens`` tokens in flight reads: dense matmuls,
    touched experts and the LM head (embedding rows and norms are negligible and left out)."""
    touched = expert_touch_fraction(tokens, model_experts, model_experts_per_token)
    return ((model_matmul_dense_params + model_matmul_experts_params * touched)
            * weight_bits_effective / 8
            + model_lm_head_matmul_params * embedding_bits / 8)


def compute_seconds(flops: Value, tp: Value, gpu_flops_per_s: Value, mfu: Value) -> Value:
    """``flops / (tp * peak * MFU)``."""
    return flops / (tp * gpu_flops_per_s * mfu)


def memory_seconds(weight_bytes: Value, kv_bytes: Value, tp: Value, tp_kv_fraction: Value,
                   gpu_bandwidth_bytes_per_s: Value, mbu: Value) -> Value:
    """``(weights/tp + kv*tp_kv_fraction) / (bandwidth * MBU)``: per-GPU bytes summed over the
    pipeline stages a token passes."""
    return (weight_bytes / tp + kv_bytes * tp_kv_fraction) / (gpu_bandwidth_bytes_per_s * mbu)


def decode_kv_read_bytes(context: Value, batch: Value, model_kv_elems_per_token_full: Value,
                         model_kv_elems_per_token_window: Value,
                         model_sliding_window_tokens: Value, kv_bits: Value) -> Value:
    """KV bytes a decode step reads for ``batch`` sequences at ``context`` positions."""
    return batch * kv_elems_at_context(model_kv_elems_per_token_full,
                                       model_kv_elems_per_token_window,
                                       model_sliding_window_tokens, context) * kv_bits / 8


def decode_bytes_per_step(batch: Value, mean_decode_context_tokens: Value,
                          model_matmul_dense_params: Value, model_matmul_experts_params: Value,
                          model_experts: Value, model_experts_per_token: Value,
                          model_lm_head_matmul_params: Value, weight_bits_effective: Value,
                          embedding_bits: Value, model_kv_elems_per_token_full: Value,
                          model_kv_elems_per_token_window: Value,
                          model_sliding_window_tokens: Value, kv_bits: Value,
                          state_bytes_per_sequence: Value) -> Value:
    """Bytes one decode step of the batch moves at the mean context, whole replica:
    weights touched + KV of ``batch`` sequences + their fixed states, read and written back
    (``2 * batch * state_bytes_per_sequence``; 0 without linear-attention layers)."""
    return (weights_read_bytes(batch, model_matmul_dense_params, model_matmul_experts_params,
                               model_experts, model_experts_per_token,
                               model_lm_head_matmul_params, weight_bits_effective, embedding_bits)
            + decode_kv_read_bytes(mean_decode_context_tokens, batch,
                                   model_kv_elems_per_token_full, model_kv_elems_per_token_window,
                                   model_sliding_window_tokens, kv_bits)
            + 2 * batch * state_bytes_per_sequence)


def ttft_compute_s(prefill_flops: Value, tp: Value, gpu_flops_per_s: Value, mfu: Value) -> Value:
    """Compute time of one request's prefill."""
    return compute_seconds(prefill_flops, tp, gpu_flops_per_s, mfu)


def ttft_memory_s(prompt_tokens: Value, tp: Value, tp_kv_fraction: Value,
                  gpu_bandwidth_bytes_per_s: Value, mbu: Value, model_matmul_dense_params: Value,
                  model_matmul_experts_params: Value, model_experts: Value,
                  model_experts_per_token: Value, model_lm_head_matmul_params: Value,
                  weight_bits_effective: Value, embedding_bits: Value,
                  kv_bytes_per_token: Value) -> Value:
    """Memory time of one request's prefill: weights touched by ``S`` tokens + the KV written."""
    weights = weights_read_bytes(prompt_tokens, model_matmul_dense_params,
                                 model_matmul_experts_params, model_experts,
                                 model_experts_per_token, model_lm_head_matmul_params,
                                 weight_bits_effective, embedding_bits)
    return memory_seconds(weights, prompt_tokens * kv_bytes_per_token, tp, tp_kv_fraction,
                          gpu_bandwidth_bytes_per_s, mbu)


def ttft_s(ttft_compute_s: Value, ttft_memory_s: Value, host_weight_stream_s: Value) -> Value:
    """Time to first token, lower bound, one request on an idle replica:
    ``max(compute, memory) + host_weight_stream`` (Qwen2.5-32B, S=1024, the convention of
    "Qwen2.5-32B by hand": 209 ms at 312 TFLOP/s; the stream of weights offloaded to host
    memory is 0 without offload)."""
    return maximum(ttft_compute_s, ttft_memory_s) + host_weight_stream_s


def tpot_compute_s(decode_step_flops: Value, tp: Value, gpu_flops_per_s: Value,
                   mfu: Value) -> Value:
    """Compute time of one decode step of the batch."""
    return compute_seconds(decode_step_flops, tp, gpu_flops_per_s, mfu)


def tpot_memory_s(batch: Value, mean_decode_context_tokens: Value, tp: Value,
                  tp_kv_fraction: Value, gpu_bandwidth_bytes_per_s: Value, mbu: Value,
                  model_matmul_dense_params: Value, model_matmul_experts_params: Value,
                  model_experts: Value, model_experts_per_token: Value,
                  model_lm_head_matmul_params: Value, weight_bits_effective: Value,
                  embedding_bits: Value, model_kv_elems_per_token_full: Value,
                  model_kv_elems_per_token_window: Value, model_sliding_window_tokens: Value,
                  kv_bits: Value, state_bytes_per_sequence: Value,
                  tp_state_fraction: Value) -> Value:
    """Memory time of one decode step of the batch at the mean context: weights, KV, and the
    fixed states of linear-attention layers read and written back
    (``2 * batch * state * tp_state_fraction`` per GPU, summed over stages)."""
    weights = weights_read_bytes(batch, model_matmul_dense_params, model_matmul_experts_params,
                                 model_experts, model_experts_per_token,
                                 model_lm_head_matmul_params, weight_bits_effective,
                                 embedding_bits)
    kv = decode_kv_read_bytes(mean_decode_context_tokens, batch, model_kv_elems_per_token_full,
                              model_kv_elems_per_token_window, model_sliding_window_tokens,
                              kv_bits)
    state = 2 * batch * state_bytes_per_sequence * tp_state_fraction
    return (memory_seconds(weights, kv, tp, tp_kv_fraction, gpu_bandwidth_bytes_per_s, mbu)
            + state / (gpu_bandwidth_bytes_per_s * mbu))


def tpot_s(tpot_compute_s: Value, tpot_memory_s: Value, host_weight_stream_s: Value) -> Value:
    """Time per output token, lower bound: one decode step of the whole batch,
    ``max(compute, memory) + host_weight_stream`` (0 without weights offloaded to host
    memory)."""
    return maximum(tpot_compute_s, tpot_memory_s) + host_weight_stream_s


def e2e_latency_s(ttft_s: Value, tpot_s: Value, output_tokens: Value) -> Value:
    """One request end to end: ``ttft + (G - 1) * tpot``."""
    return ttft_s + (output_tokens - 1) * tpot_s


def batch_prefill_s(batch: Value, prompt_tokens: Value, prefill_flops: Value, tp: Value,
                    gpu_flops_per_s: Value, mfu: Value, tp_kv_fraction: Value,
                    gpu_bandwidth_bytes_per_s: Value, mbu: Value,
                    model_matmul_dense_params: Value, model_matmul_experts_params: Value,
                    model_experts: Value, model_experts_per_token: Value,
                    model_lm_head_matmul_params: Value, weight_bits_effective: Value,
                    embedding_bits: Value, kv_bytes_per_token: Value,
                    host_weight_stream_s: Value) -> Value:
    """Prefill of the whole batch's prompts together (``B*S`` tokens), ``max(compute, memory)``
    plus the stream of weights offloaded to host memory (one forward pass): the TTFT the last
    of ``B`` simultaneous arrivals sees."""
    tokens = batch * prompt_tokens
    weights = weights_read_bytes(tokens, model_matmul_dense_params, model_matmul_experts_params,
                                 model_experts, model_experts_per_token,
                                 model_lm_head_matmul_params, weight_bits_effective,
                                 embedding_bits)
    memory = memory_seconds(weights, tokens * kv_bytes_per_token, tp, tp_kv_fraction,
                            gpu_bandwidth_bytes_per_s, mbu)
    return (maximum(compute_seconds(batch * prefill_flops, tp, gpu_flops_per_s, mfu), memory)
            + host_weight_stream_s)


def cycle_s(batch_prefill_s: Value, tpot_s: Value, output_tokens: Value) -> Value:
    """One batch from admission to its last token: ``batch_prefill + (G - 1) * tpot``."""
    return batch_prefill_s + (output_tokens - 1) * tpot_s


def requests_per_s(replicas: Value, batch: Value, cycle_s: Value) -> Value:
    """Completed requests per second over all replicas: ``replicas * B / cycle``."""
    return safe_div(replicas * batch, cycle_s, 0.0)


def throughput_tokens_per_s(requests_per_s: Value, output_tokens: Value) -> Value:
    """Output tokens per second over all replicas, prefill time included: ``requests_per_s * G``."""
    return requests_per_s * output_tokens


def decode_tokens_per_s(replicas: Value, batch: Value, tpot_s: Value) -> Value:
    """Decode-phase output rate over all replicas: ``replicas * B / tpot``. At B=1, memory bound,
    this is ``bandwidth / bytes read per token`` (a bf16 7B on 2 TB/s: 2e12/(2*7e9) ≈ 143
    tokens/s, not the ``bandwidth/(4P)`` of "LLM compute explained", which counts the weights
    twice)."""
    return safe_div(replicas * batch, tpot_s, 0.0)


def input_tokens_per_s(requests_per_s: Value, prompt_tokens: Value) -> Value:
    """Prompt tokens processed per second over all replicas."""
    return requests_per_s * prompt_tokens


def meets_target_rate(requests_per_s: Value, target_requests_per_s: Value) -> Value:
    """Whether the deployment sustains the target request rate (always true without a target)."""
    return requests_per_s >= target_requests_per_s


def gpus_for_target_rate(target_requests_per_s: Value, requests_per_s: Value, replicas: Value,
                         tp: Value, pp: Value) -> Value:
    """GPUs needed for the target rate at this batch and shape:
    ``ceil(target / (requests_per_s per replica)) * tp * pp`` (0 without a target)."""
    per_replica = safe_div(requests_per_s, replicas, 0.0)
    return ceil(safe_div(target_requests_per_s, per_replica, 0.0)) * tp * pp
