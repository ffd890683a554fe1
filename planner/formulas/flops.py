"""FLOPs of inference: prefill, one decode step, a whole request (docs/formulas.md).

Per token every matmul weight costs 2 FLOPs (multiply + add), so the linear part is
``2 * P_linear`` per token, with ``P_linear`` the matmul weights a token uses (attention, dense or
top-k expert FFN, shared experts, router). The attention core adds, per layer, FLOPs per
(query, key) pair ``2*h*(d_qk + d_v)`` (= ``4*d_attn`` for standard attention; GQA does not shrink
it). Two named conventions:

* ``attention_convention``: :data:`CAUSAL` (default) counts the ``S(S+1)/2`` pairs a causal mask
  keeps, giving ``2*B*d_attn*S(S+1)`` per layer; :data:`FULL` counts the full ``S x S`` square,
  ``4*B*S^2*d_attn`` (the articles "Qwen2.5-32B by hand" and "From parameters to FLOPs").
* ``logits_convention``: :data:`LOGITS_LAST` (default, inference) computes logits for the last
  prompt position only; :data:`LOGITS_ALL` for every position (training); :data:`LOGITS_NONE`
  leaves the LM head out (the prefill figure of "Qwen2.5-32B by hand").

A request with ``G`` outputs runs one prefill and ``G - 1`` decode steps; decode step ``j`` attends
to ``S + j`` cached positions. Sliding-window layers attend to at most ``w`` of them.
"""

from __future__ import annotations

from planner.formulas.ops import Value, clip, minimum, where

CAUSAL = 0
"""attention_convention: count only the causal (lower-triangle) position pairs."""
FULL = 1
"""attention_convention: count the full S x S score matrix."""
ATTENTION_CONVENTIONS = {"causal": CAUSAL, "full": FULL}

LOGITS_LAST = 0
"""logits_convention: logits for the last prompt position only (what inference samples from)."""
LOGITS_ALL = 1
"""logits_convention: logits for every prompt position (training, scoring)."""
LOGITS_NONE = 2
"""logits_convention: no LM head in prefill (the convention of "Qwen2.5-32B by hand")."""
LOGITS_CONVENTIONS = {"last": LOGITS_LAST, "all": LOGITS_ALL, "none": LOGITS_NONE}


def matmul_params_per_token(model_matmul_dense_params: Value,
                            model_matmul_experts_active_params: Value) -> Value:
    """Layer matmul weights one token multiplies (without the LM head)."""
    return model_matmul_dense_params + model_matmul_experts_active_params


def causal_pairs(tokens: Value) -> Value:
    """Position pairs a causal mask keeps among ``S`` tokens: ``S(S+1)/2``."""
    return tokens * (tokens + 1) / 2


def causal_pairs_windowed(tokens: Value, window: Value) -> Value:
    """Causal pairs when each query sees at most ``w`` positions (itself included):
    ``S(S+1)/2`` for ``S <= w``, else ``w(w+1)/2 + (S-w)*w``."""
    return where(tokens <= window, causal_pairs(tokens),
                 causal_pairs(window) + (tokens - window) * window)


def prefill_attention_flops(tokens: Value, full_per_pair: Value, window_per_pair: Value,
                            window: Value, attention_convention_code: Value) -> Value:
    """Attention-core FLOPs of one sequence's prefill over ``tokens`` positions."""
    causal = (full_per_pair * causal_pairs(tokens)
              + window_per_pair * causal_pairs_windowed(tokens, window))
    square = (full_per_pair * tokens * tokens
              + window_per_pair * tokens * minimum(tokens, window))
    return where(attention_convention_code == FULL, square, causal)


def logits_positions(prompt_tokens: Value, logits_convention_code: Value) -> Value:
    """Prompt positions whose logits prefill computes: 1, ``S`` or 0 by convention."""
    return where(logits_convention_code == LOGITS_ALL, prompt_tokens,
                 where(logits_convention_code == LOGITS_NONE, 0, 1))


def sparse_attention_flops(tokens: Value, per_pair: Value, topk: Value) -> Value:
    """Attention-core FLOPs of sparse attention (DeepSeek-V3.2 and GLM-5's DSA, DeepSeek-V4's
    CSA) over a prefill of ``tokens``: each query attends to its indexer's top ``k`` tokens,
    ``min(i, k)`` for query ``i``, the pair count of a window of ``k``:
    ``per_pair * causal_pairs_windowed(S, k)`` (0 without sparse layers). The indexer's own
    scoring of every cached token is a full-attention term (``model_attn_flops_per_pair_full``)."""
    return per_pair * causal_pairs_windowed(tokens, topk)


def prefill_flops(prompt_tokens: Value, matmul_params_per_token: Value,
                  model_lm_head_matmul_params: Value, model_attn_flops_per_pair_full: Value,
                  model_attn_flops_per_pair_window: Value, model_sliding_window_tokens: Value,
                  attention_convention_code: Value, logits_convention_code: Value,
                  model_attn_flops_per_pair_sparse: Value,
                  model_sparse_topk_tokens: Value) -> Value:
    """FLOPs to prefill one request's prompt of ``S`` tokens:
    ``2*S*P_linear + attention core + 2*d*V*logits_positions``, the core of sparse-attention
    layers over their top-k tokens (:func:`sparse_attention_flops`).

    Qwen2.5-32B, S=1024, full square, no LM head: 65.28 TFLOPs (docs/formulas.md)."""
    linear = 2 * prompt_tokens * matmul_params_per_token
    core = prefill_attention_flops(prompt_tokens, model_attn_flops_per_pair_full,
                                   model_attn_flops_per_pair_window, model_sliding_window_tokens,
                                   attention_convention_code)
    core = core + sparse_attention_flops(prompt_tokens, model_attn_flops_per_pair_sparse,
                                         model_sparse_topk_tokens)
    logits = (2 * model_lm_head_matmul_params
              * logits_positions(prompt_tokens, logits_convention_code))
    return linear + core + logits


def decode_step_flops_at(context: Value, batch: Value, matmul_params_per_token: Value,
                         lm_head_params: Value, full_per_pair: Value, window_per_pair: Value,
                         window: Value) -> Value:
    """FLOPs of one decode step for ``batch`` sequences each attending to ``context`` positions:
    ``B*(2*(P_linear + V*d) + per_pair_full*T + per_pair_window*min(T, w))``
    (= ``2*B*P_linear + 4*B*T*d_attn`` per layer plus ``2*B*d*V`` logits, docs/formulas.md;
    Llama-3-8B at T=8192, B=1: 19.30 GFLOPs)."""
    return batch * (2 * (matmul_params_per_token + lm_head_params)
                    + full_per_pair * context + window_per_pair * minimum(context, window))


def mean_decode_context_tokens(prompt_tokens: Value, output_tokens: Value) -> Value:
    """Mean positions a decode step attends to over the ``G - 1`` steps: ``S + G/2``
    (step ``j`` attends to ``S + j``). "Qwen2.5-32B by hand" uses ``S + (1+G)/2`` instead."""
    return prompt_tokens + output_tokens / 2


def decode_step_flops(mean_decode_context_tokens: Value, batch: Value,
                      matmul_params_per_token: Value, model_lm_head_matmul_params: Value,
                      model_attn_flops_per_pair_full: Value,
                      model_attn_flops_per_pair_window: Value,
                      model_sliding_window_tokens: Value,
                      model_attn_flops_per_pair_sparse: Value,
                      model_sparse_topk_tokens: Value) -> Value:
    """FLOPs of one decode step of the whole batch at the mean decode context (sparse-attention
    layers attend to ``min(T, k)`` tokens)."""
    return (decode_step_flops_at(mean_decode_context_tokens, batch, matmul_params_per_token,
                                 model_lm_head_matmul_params, model_attn_flops_per_pair_full,
                                 model_attn_flops_per_pair_window, model_sliding_window_tokens)
            + batch * model_attn_flops_per_pair_sparse
            * minimum(mean_decode_context_tokens, model_sparse_topk_tokens))


def _attended_within(prompt_tokens: Value, steps: Value, w: Value) -> Value:
    """``sum(min(S+j, w))`` for ``j = 1..n``: with ``m = clip(w - S, 0, n)`` steps inside,
    ``m*S + m(m+1)/2 + (n-m)*w``."""
    inside = clip(w - prompt_tokens, 0, steps)
    return inside * prompt_tokens + inside * (inside + 1) / 2 + (steps - inside) * w


def decode_flops(prompt_tokens: Value, output_tokens: Value, matmul_params_per_token: Value,
                 model_lm_head_matmul_params: Value, model_attn_flops_per_pair_full: Value,
                 model_attn_flops_per_pair_window: Value,
                 model_sliding_window_tokens: Value, model_attn_flops_per_pair_sparse: Value,
                 model_sparse_topk_tokens: Value) -> Value:
    """FLOPs of one request's ``n = G - 1`` decode steps, summed exactly:
    ``n*2*(P_linear + V*d) + per_pair_full*sum(S+j) + per_pair_window*sum(min(S+j, w))
    + per_pair_sparse*sum(min(S+j, k))`` for ``j = 1..n``. With ``m = clip(w - S, 0, n)``
    steps inside the window, ``sum(min(S+j, w)) = m*S + m(m+1)/2 + (n-m)*w``."""
    steps = output_tokens - 1
    attended = steps * prompt_tokens + steps * (steps + 1) / 2
    attended_window = _attended_within(prompt_tokens, steps, model_sliding_window_tokens)
    attended_sparse = _attended_within(prompt_tokens, steps, model_sparse_topk_tokens)
    return (steps * 2 * (matmul_params_per_token + model_lm_head_matmul_params)
            + model_attn_flops_per_pair_full * attended
            + model_attn_flops_per_pair_window * attended_window
            + model_attn_flops_per_pair_sparse * attended_sparse)


def request_flops(prefill_flops: Value, decode_flops: Value) -> Value:
    """FLOPs of one whole request: prefill plus ``G - 1`` decode steps (Llama-3-8B, S=1024,
    G=128: 16.55 TFLOPs, docs/formulas.md)."""
    return prefill_flops + decode_flops
