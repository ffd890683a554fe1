"""Memory per GPU: weights, runtime reserve, KV-cache budget, concurrency and context that fit.

Every public function here is a scenario column: its name is the output, its parameters are the
columns it reads (inputs, model figures, or other outputs), and its body uses only the operator
set of :mod:`planner.formulas.ops`, so it runs on scalars, numpy arrays and Excel symbols alike.
Bytes are plain bytes (GiB = 2**30 only at display); precision is in bits.

Sources: docs/formulas.md ("Memory", golden figures); the article "Transformer FLOPs and memory".
Assumptions: weights split evenly over ``tp*pp`` GPUs; KV heads split over ``tp`` and replicated
when ``tp`` exceeds the KV heads (``ceil(n_kv/tp)`` heads per GPU; MLA's single latent is
replicated on every tensor-parallel rank); layers split evenly over ``pp`` stages.

Fixed per-sequence state: linear-attention layers (Qwen3-Next's Gated DeltaNet) keep no KV cache
but a state of ``model_state_elems_per_sequence`` elements per sequence whatever its length,
held at :data:`STATE_BITS`. It splits over ``tp`` by its heads (``model_state_heads``) and over
``pp`` by layers, and it is charged wherever a sequence's memory is: memory per sequence,
memory in use, concurrent sequences, and the budget left for tokens when ``batch`` sequences
run (docs/formulas.md, "Fixed per-sequence state").
"""

from __future__ import annotations

from planner.formulas.ops import Value, ceil, floor, maximum, minimum, safe_div, where

FULL_PRECISION_BITS = 16
"""Bits of the tensors that are never quantized (norms, biases) and of embeddings kept at 16 bit."""

STATE_BITS = 16
"""Bits per element of a linear-attention layer's fixed state: the model dtype (bf16), as vLLM
keeps it by default (``mamba_cache_dtype = "auto"``; ``kv_cache_dtype`` does not apply to it)."""


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
                    weights_on_gpu_bytes_per_gpu: Value) -> Value:
    """Bytes left for the KV cache on one GPU: ``memory - reserve - weights on the GPU``
    (negative when the weights alone do not fit; weights offloaded to host memory do not count,
    :mod:`planner.formulas.offload`). 24 GiB - 3 GiB - 14.9575 GiB = 6.0425 GiB
    (docs/formulas.md)."""
    return gpu_memory_bytes - reserve_bytes_per_gpu - weights_on_gpu_bytes_per_gpu


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


def state_bytes_per_sequence(model_state_elems_per_sequence: Value,
                             model_state_recurrent_elems_per_sequence: Value,
                             state_recurrent_bits: Value) -> Value:
    """Fixed state bytes one sequence holds, whole model, independent of its context:
    ``(state - recurrent) * STATE_BITS/8 + recurrent * recurrent_bits/8``, the recurrent
    (DeltaNet/SSM) part at ``state_recurrent_bits`` (the ``state_dtype`` input; ``auto``: the
    engine's default, :func:`planner.formulas.derived.state_recurrent_bits`). Qwen3-Next-80B-A3B
    (bf16 state): 36 Gated
    DeltaNet layers of ``32*128*128 + 8192*3`` elements = 36 * 548,864 * 2 B = 39,518,208 B =
    37.69 MiB. Qwen3.5-27B (its config's float32 recurrent state): 48 layers of ``48*128*128``
    at 4 B plus ``10240*3`` at 2 B = 153,944,064 B (0 for models whose every layer keeps a KV
    cache)."""
    conv = model_state_elems_per_sequence - model_state_recurrent_elems_per_sequence
    return (conv * STATE_BITS + model_state_recurrent_elems_per_sequence
            * state_recurrent_bits) / 8


def tp_state_fraction(model_state_heads: Value, tp: Value) -> Value:
    """Share of a sequence's fixed state one tensor-parallel rank holds: ``ceil(h/tp)/h`` over
    the linear-attention value heads (``1/tp`` when tp divides them)."""
    return ceil(model_state_heads / tp) / model_state_heads


def state_bytes_per_sequence_per_gpu(state_bytes_per_sequence: Value, tp_state_fraction: Value,
                                     pp: Value) -> Value:
    """One sequence's fixed state on one GPU: ``state_bytes * tp_state_fraction / pp``."""
    return state_bytes_per_sequence * tp_state_fraction / pp


def memory_bytes_per_sequence_per_gpu(kv_bytes_per_sequence_per_gpu: Value,
                                      state_bytes_per_sequence_per_gpu: Value) -> Value:
    """Memory one full-context sequence holds on one GPU: its KV cache plus its fixed state,
    ``kv_per_sequence + state_per_sequence`` (the KV alone for models without a state)."""
    return kv_bytes_per_sequence_per_gpu + state_bytes_per_sequence_per_gpu


def kv_in_use_bytes_per_gpu(memory_bytes_per_sequence_per_gpu: Value, batch: Value) -> Value:
    """KV cache and fixed state on one GPU with ``batch`` sequences at full context:
    ``memory_per_sequence * batch``."""
    return memory_bytes_per_sequence_per_gpu * batch


def kv_headroom_bytes(kv_budget_bytes: Value, kv_in_use_bytes_per_gpu: Value) -> Value:
    """KV budget left after ``batch`` full-context sequences; negative means it does not fit."""
    return kv_budget_bytes - kv_in_use_bytes_per_gpu


def fits(kv_headroom_bytes: Value) -> Value:
    """Whether weights, reserve and the batch's KV cache fit: ``kv_headroom_bytes >= 0``."""
    return kv_headroom_bytes >= 0


def shortfall_bytes(kv_headroom_bytes: Value) -> Value:
    """Bytes per GPU missing when it does not fit: ``max(0, -kv_headroom_bytes)``."""
    return maximum(0, -kv_headroom_bytes)


def max_concurrent_sequences(kv_budget_bytes: Value,
                             memory_bytes_per_sequence_per_gpu: Value) -> Value:
    """Full-context sequences one replica holds: ``floor(kv_budget / memory_per_sequence)``
    (KV plus fixed state), at least 0. 6.0425 GiB / 1 GiB (8192 tokens of Llama-3-8B, no state)
    → 6 (docs/formulas.md)."""
    return maximum(0, floor(safe_div(kv_budget_bytes, memory_bytes_per_sequence_per_gpu, 0.0)))


def growing_kv_elems_per_token(full: Value, window: Value) -> Value:
    """KV elements per token that keep growing with the context: the full-attention layers'
    (with compressed attention's entries and sparse-attention indexer keys, ``full``). A model
    whose every KV layer is windowed (Mistral-7B-v0.1) has no growing part: its windowed
    elements count per token instead (``window``), as before. Not a scenario column: the
    capacity formulas inline it."""
    return where(full > 0, full, window)


def window_kv_elems_per_sequence(full: Value, window: Value, window_tokens: Value,
                                 tokens: Value) -> Value:
    """KV elements one sequence of ``tokens`` tokens holds in its sliding-window layers,
    ``window * min(T, w)``, a per-sequence amount once ``T`` passes the window (0 for a model
    without a growing part, whose windows count per token, :func:`growing_kv_elems_per_token`).
    Not a scenario column."""
    return where(full > 0, window * minimum(tokens, window_tokens), 0)


def kv_class_fraction(heads: Value, tp: Value) -> Value:
    """Share of one layer class's KV cache a tensor-parallel rank holds, ``ceil(h/tp)/h`` over
    that class's KV heads (Gemma-4-31B at TP 8: its 4-head global layers 1/4, replicated past
    4 ranks, its 16-head local layers 1/8). Not a scenario column."""
    return ceil(heads / tp) / heads


def token_capacity(kv_budget_bytes: Value, model_kv_elems_per_token_full: Value,
                   model_kv_elems_per_token_window: Value, model_sliding_window_tokens: Value,
                   context_tokens: Value, kv_bits: Value, model_kv_heads_growing: Value,
                   model_kv_heads_window: Value, tp: Value, pp: Value, batch: Value,
                   state_bytes_per_sequence_per_gpu: Value) -> Value:
    """Context tokens one replica holds across all its sequences, with the KV bytes a function
    of the context: full-attention layers (and compressed entries, indexer keys) per token,
    sliding-window layers ``min(T, w)`` per sequence, linear-attention / Mamba state per
    sequence. Once the fixed state and the window of ``batch`` sequences at ``context_tokens``
    are set aside:
    ``floor((kv_budget - batch*(state + window*min(T, w)*b*f_w/pp)) / (full*b*f_g/pp))``, at
    least 0 (``b = kv_bits/8``; ``f_g``, ``f_w`` each class's share per tensor-parallel rank,
    :func:`kv_class_fraction`).

    Gemma-4-31B bf16, one GPU: its 10 global layers grow by ``2*4*512`` elements a token
    (81,920 B), its 50 local layers hold ``min(T, 1024)`` tokens of ``2*16*256`` elements per
    sequence (838,860,800 B once ``T >= 1024``); charging every layer per token would count
    901,120 B a token."""
    growing = growing_kv_elems_per_token(model_kv_elems_per_token_full,
                                         model_kv_elems_per_token_window)
    per_token = growing * kv_bits / 8 * kv_class_fraction(model_kv_heads_growing, tp) / pp
    window = window_kv_elems_per_sequence(
        model_kv_elems_per_token_full, model_kv_elems_per_token_window,
        model_sliding_window_tokens, context_tokens) * kv_bits / 8 \
        * kv_class_fraction(model_kv_heads_window, tp) / pp
    pool = kv_budget_bytes - batch * (state_bytes_per_sequence_per_gpu + window)
    return maximum(0, floor(safe_div(pool, per_token, 0.0)))


def max_context_tokens(kv_budget_bytes: Value, batch: Value, tp_kv_fraction: Value, pp: Value,
                       kv_bits: Value, model_kv_elems_per_token_full: Value,
                       model_kv_elems_per_token_window: Value, model_sliding_window_tokens: Value,
                       model_max_context_tokens: Value,
                       state_bytes_per_sequence_per_gpu: Value) -> Value:
    """Longest context each of ``batch`` sequences can have: the largest integer ``T`` with
    ``batch * (kv_elems(T) * bits/8 * tp_kv_fraction/pp + state) <= kv_budget``, capped at the
    model's ``max_position_embeddings``.

    ``kv_elems(T) = a*T + b*min(T, w)`` is piecewise linear: ``T = floor(E/(a+b))`` while that is
    inside the window, else ``floor((E - b*w)/a)`` (no limit when every layer is windowed), with
    ``E`` the elements the budget holds once the ``batch`` fixed states are set aside."""
    pool = kv_budget_bytes - batch * state_bytes_per_sequence_per_gpu
    elems_budget = safe_div(pool * pp * 8, batch * tp_kv_fraction * kv_bits, 0.0)
    a, b, w = (model_kv_elems_per_token_full, model_kv_elems_per_token_window,
               model_sliding_window_tokens)
    unlimited = 1e18
    inside = floor(safe_div(elems_budget, a + b, unlimited))
    beyond = floor(safe_div(elems_budget - b * w, a, unlimited))
    tokens = where(inside <= w, inside, beyond)
    tokens = where(b > 0, tokens, inside)
    cap = where(model_max_context_tokens > 0, model_max_context_tokens, unlimited)
    return maximum(0, minimum(tokens, cap))
