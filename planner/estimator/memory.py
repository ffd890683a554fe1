"""Memory per GPU: weights, runtime reserve, KV-cache budget, concurrency and context that fit.

Every public function here is a scenario column: its name is the output, its parameters are the
columns it reads (inputs, model figures, or other outputs), and its body uses only the operator
set of :mod:`planner.estimator.ops`, so it runs on scalars, numpy arrays and Excel symbols alike.
Bytes are plain bytes (GiB = 2**30 only at display); precision is in bits.

Sources: docs/formulas.md ("Memory", golden figures); the article "Transformer FLOPs and memory".
Assumptions: weights split evenly over ``tp*pp`` GPUs; KV heads split over ``tp`` and replicated
when ``tp`` exceeds the KV heads (``ceil(n_kv/tp)`` heads per GPU; MLA's single latent is
replicated on every tensor-parallel rank); layers split evenly over ``pp`` stages.
"""

from __future__ import annotations

from planner.estimator.ops import Value, ceil, floor, maximum, minimum, safe_div, where

FULL_PRECISION_BITS = 16
"""Bits of the tensors that are never quantized (norms, biases) and of embeddings kept at 16 bit."""


def replicas(gpus: Value, tp: Value, pp: Value) -> Value:
    """Model replicas (independent serving engines): ``floor(gpus / (tp*pp))``."""
    return floor(gpus / (tp * pp))


def model_params_other(model_params_total: Value, model_matmul_dense_params: Value,
                       model_matmul_experts_params: Value, model_params_embedding: Value,
                       model_params_lm_head: Value) -> Value:
    """Parameters outside matmul weights and embeddings (norms, biases): always 16-bit."""
    return (model_params_total - model_matmul_dense_params - model_matmul_experts_params
            - model_params_embedding - model_params_lm_head)


def weight_bits_effective(weight_bits: Value, quant_group_size_effective: Value,
                          quant_scale_bits_effective: Value, weight_auto_number: Value,
                          model_checkpoint_matmul_bits: Value, model_matmul_dense_params: Value,
                          model_matmul_experts_params: Value) -> Value:
    """Bits per matmul weight including group scales: ``bits + scale_bits/group``
    (``group = 0``: no per-group scales; MXFP4 4 + 8/32 = 4.25, NVFP4 4 + 8/16 = 4.5). For
    ``weight_dtype`` auto, the checkpoint's stored matmul bits over its matmul weights (scales,
    zero points and the modules it keeps in 16 bit included: GPTQ 4-bit g128 on Llama-2-13B is
    4.16 bits)."""
    own = weight_bits + safe_div(quant_scale_bits_effective, quant_group_size_effective, 0.0)
    stored = safe_div(model_checkpoint_matmul_bits,
                      model_matmul_dense_params + model_matmul_experts_params, 16.0)
    return where(weight_auto_number > 0, stored, own)


def embedding_bits(weight_bits: Value, keep_embeddings_16bit_number: Value,
                   weight_auto_number: Value, model_checkpoint_embedding_bits: Value,
                   model_params_embedding: Value, model_params_lm_head: Value) -> Value:
    """Bits per embedding / LM-head weight: 16 when kept in 16 bit, else the weight dtype's;
    for ``weight_dtype`` auto, the checkpoint's (16 unless it quantizes its LM head)."""
    own = where(keep_embeddings_16bit_number > 0, maximum(weight_bits, FULL_PRECISION_BITS),
                weight_bits)
    stored = safe_div(model_checkpoint_embedding_bits,
                      model_params_embedding + model_params_lm_head, 16.0)
    return where(weight_auto_number > 0, stored, own)


def weights_bytes(model_matmul_dense_params: Value, model_matmul_experts_params: Value,
                  model_params_embedding: Value, model_params_lm_head: Value,
                  model_params_other: Value, weight_bits_effective: Value,
                  embedding_bits: Value) -> Value:
    """Bytes of all weights of one replica:
    ``matmul*bits_eff/8 + (embedding + lm_head)*emb_bits/8 + other*16/8``.

    With 16-bit weights this is exactly ``params_total * 2`` (Llama-3-8B: 16,060,522,496 B =
    14.9575 GiB, docs/formulas.md)."""
    return ((model_matmul_dense_params + model_matmul_experts_params) * weight_bits_effective / 8
            + (model_params_embedding + model_params_lm_head) * embedding_bits / 8
            + model_params_other * FULL_PRECISION_BITS / 8)


def weights_bytes_per_gpu(weights_bytes: Value, tp: Value, pp: Value) -> Value:
    """Weight bytes on one GPU: ``weights_bytes / (tp*pp)``."""
    return weights_bytes / (tp * pp)


def reserve_bytes_per_gpu(reserve_bytes: Value, reserve_fraction: Value,
                          gpu_memory_bytes: Value) -> Value:
    """Memory held back for activations, workspace and the runtime:
    ``reserve_bytes + reserve_fraction * gpu_memory_bytes``."""
    return reserve_bytes + reserve_fraction * gpu_memory_bytes


def kv_budget_bytes(gpu_memory_bytes: Value, reserve_bytes_per_gpu: Value,
                    weights_bytes_per_gpu: Value) -> Value:
    """Bytes left for the KV cache on one GPU: ``memory - reserve - weights`` (negative when
    the weights alone do not fit). 24 GiB - 3 GiB - 14.9575 GiB = 6.0425 GiB (docs/formulas.md)."""
    return gpu_memory_bytes - reserve_bytes_per_gpu - weights_bytes_per_gpu


def kv_bytes_per_token(model_kv_elems_per_token_full: Value,
                       model_kv_elems_per_token_window: Value, kv_bits: Value) -> Value:
    """KV bytes per token per sequence, whole model: ``2*L*n_kv*d_h*bits/8`` for standard
    attention (Llama-3-8B bf16: 131,072 B = 128 KiB), MLA's latent for DeepSeek. Windowed layers
    count while the context is inside their window."""
    return (model_kv_elems_per_token_full + model_kv_elems_per_token_window) * kv_bits / 8


def kv_elems_at_context(full: Value, window: Value, window_tokens: Value, tokens: Value) -> Value:
    """KV elements of one sequence holding ``tokens`` tokens: windowed layers keep at most
    ``window_tokens`` of them: ``full*T + window*min(T, w)``."""
    return full * tokens + window * minimum(tokens, window_tokens)


def tp_kv_fraction(model_kv_heads: Value, tp: Value) -> Value:
    """Share of a layer's KV cache one tensor-parallel rank holds: ``ceil(n_kv/tp)/n_kv``
    (``1/tp`` when tp divides the KV heads; replicated heads when tp exceeds them)."""
    return ceil(model_kv_heads / tp) / model_kv_heads


def context_tokens(prompt_tokens: Value, output_tokens: Value) -> Value:
    """Tokens cached at the end of a request: ``S + G - 1`` (the last generated token is never
    fed back; docs/formulas.md: S=1024, G=128 → 1151)."""
    return prompt_tokens + output_tokens - 1


def kv_bytes_per_sequence(model_kv_elems_per_token_full: Value,
                          model_kv_elems_per_token_window: Value,
                          model_sliding_window_tokens: Value, context_tokens: Value,
                          kv_bits: Value) -> Value:
    """KV bytes of one sequence at its final context, whole model (Llama-3-8B bf16, 1151 tokens:
    143.875 MiB)."""
    elems = kv_elems_at_context(model_kv_elems_per_token_full, model_kv_elems_per_token_window,
                                model_sliding_window_tokens, context_tokens)
    return elems * kv_bits / 8


def kv_bytes_per_sequence_per_gpu(kv_bytes_per_sequence: Value, tp_kv_fraction: Value,
                                  pp: Value) -> Value:
    """One sequence's KV bytes on one GPU: ``kv_bytes_per_sequence * tp_kv_fraction / pp``."""
    return kv_bytes_per_sequence * tp_kv_fraction / pp


def kv_in_use_bytes_per_gpu(kv_bytes_per_sequence_per_gpu: Value, batch: Value) -> Value:
    """KV bytes on one GPU with ``batch`` sequences at full context."""
    return kv_bytes_per_sequence_per_gpu * batch


def kv_headroom_bytes(kv_budget_bytes: Value, kv_in_use_bytes_per_gpu: Value) -> Value:
    """KV budget left after ``batch`` full-context sequences; negative means it does not fit."""
    return kv_budget_bytes - kv_in_use_bytes_per_gpu


def fits(kv_headroom_bytes: Value) -> Value:
    """Whether weights, reserve and the batch's KV cache fit: ``kv_headroom_bytes >= 0``."""
    return kv_headroom_bytes >= 0


def shortfall_bytes(kv_headroom_bytes: Value) -> Value:
    """Bytes per GPU missing when it does not fit: ``max(0, -kv_headroom_bytes)``."""
    return maximum(0, -kv_headroom_bytes)


def max_concurrent_sequences(kv_budget_bytes: Value, kv_bytes_per_sequence_per_gpu: Value) -> Value:
    """Full-context sequences one replica holds: ``floor(kv_budget / kv_per_sequence)``, at
    least 0. 6.0425 GiB / 1 GiB (8192 tokens of Llama-3-8B) → 6 (docs/formulas.md)."""
    return maximum(0, floor(safe_div(kv_budget_bytes, kv_bytes_per_sequence_per_gpu, 0.0)))


def token_capacity(kv_budget_bytes: Value, kv_bytes_per_token: Value, tp_kv_fraction: Value,
                   pp: Value) -> Value:
    """KV tokens one replica holds across all its sequences:
    ``floor(kv_budget / (kv_bytes_per_token * tp_kv_fraction / pp))``, at least 0.
    Sliding windows are ignored here (they make it a per-sequence, not a pooled, limit)."""
    per_token = kv_bytes_per_token * tp_kv_fraction / pp
    return maximum(0, floor(safe_div(kv_budget_bytes, per_token, 0.0)))


def max_context_tokens(kv_budget_bytes: Value, batch: Value, tp_kv_fraction: Value, pp: Value,
                       kv_bits: Value, model_kv_elems_per_token_full: Value,
                       model_kv_elems_per_token_window: Value, model_sliding_window_tokens: Value,
                       model_max_context_tokens: Value) -> Value:
    """Longest context each of ``batch`` sequences can have: the largest integer ``T`` with
    ``batch * kv_elems(T) * bits/8 * tp_kv_fraction/pp <= kv_budget``, capped at the model's
    ``max_position_embeddings``.

    ``kv_elems(T) = a*T + b*min(T, w)`` is piecewise linear: ``T = floor(E/(a+b))`` while that is
    inside the window, else ``floor((E - b*w)/a)`` (no limit when every layer is windowed)."""
    elems_budget = safe_div(kv_budget_bytes * pp * 8,
                            batch * tp_kv_fraction * kv_bits, 0.0)
    a, b, w = (model_kv_elems_per_token_full, model_kv_elems_per_token_window,
               model_sliding_window_tokens)
    unlimited = 1e18
    inside = floor(safe_div(elems_budget, a + b, unlimited))
    beyond = floor(safe_div(elems_budget - b * w, a, unlimited))
    tokens = where(inside <= w, inside, beyond)
    tokens = where(b > 0, tokens, inside)
    cap = where(model_max_context_tokens > 0, model_max_context_tokens, unlimited)
    return maximum(0, minimum(tokens, cap))
