"""Prefix caching (issue 25): a share of every prompt is served from KV blocks already in the
pool, so its prefill compute is skipped while its KV is still read.

Why a module of its own: the serving model (:mod:`planner.formulas.serving`) prefills all
``S`` prompt tokens of a request and keeps each running request's whole context in the KV
pool; these columns say what a cache hit changes, so that ``serving.py`` only reads them
(``prefill_tokens_computed``, ``prefill_flops_computed``, ``prefix_cache_shared_tokens``).

Mechanism (vLLM automatic prefix caching, docs "Automatic Prefix Caching" and
``vllm/v1/core/kv_cache_manager.py`` ``get_computed_blocks``; SGLang RadixAttention, Zheng
et al., "SGLang: Efficient Execution of Structured Language Model Programs", 2024): a new
request's prompt is matched block by block against cached blocks (hash of the prefix); the
matched tokens are not recomputed (``num_computed_tokens`` starts after them, so they take
no prefill FLOPs and no token budget), their blocks are shared by every request that holds
them (reference counts: one copy in the pool however many running requests use it), and
attention still reads them (the uncached queries attend to the whole context, and every
decode step reads it). ``prefix_cache_hit_fraction`` is the share of prompt tokens matched
(a shared system prompt, few-shot examples, the earlier turns of a chat); the model takes
the cached prefix as one prefix shared by the running requests, held once: the cache's own
footprint is those ``h * S`` tokens of blocks, and each running request holds only its
uncached part privately. The engine always computes at least the prompt's last token (vLLM
recomputes it to get the logits), so at least one token is computed.
"""

from __future__ import annotations

from planner.formulas.flops import (
    logits_positions,
    prefill_attention_flops,
    sparse_attention_flops,
)
from planner.formulas.ops import Value, maximum, where


def prefill_tokens_computed(prompt_tokens: Value, prefix_cache_hit_fraction: Value) -> Value:
    """Prompt tokens a request's prefill computes: ``max(S * (1 - h), 1)`` with ``h`` the
    cache hit share (``S`` without a hit). They are the tokens its prefill chunks take from
    the step's token budget."""
    return where(prefix_cache_hit_fraction > 0,
                 maximum(prompt_tokens * (1 - prefix_cache_hit_fraction), 1), prompt_tokens)


def prefix_cache_shared_tokens(prompt_tokens: Value, prefill_tokens_computed: Value) -> Value:
    """Prompt tokens served from the cache, ``S - computed``: the shared prefix, whose
    blocks the pool holds once (the cache's own footprint, in tokens of the pool)."""
    return prompt_tokens - prefill_tokens_computed


def prefill_flops_computed(prefill_flops: Value, prefix_cache_hit_fraction: Value,
                           prompt_tokens: Value, prefill_tokens_computed: Value,
                           matmul_params_per_token: Value, model_lm_head_matmul_params: Value,
                           model_attn_flops_per_pair_full: Value,
                           model_attn_flops_per_pair_window: Value,
                           model_sliding_window_tokens: Value, attention_convention_code: Value,
                           logits_convention_code: Value, model_attn_flops_per_pair_sparse: Value,
                           model_sparse_topk_tokens: Value) -> Value:
    """FLOPs of the uncached part of a prompt: the ``n = computed`` tokens' GEMMs
    ``2 n P_linear``, their attention core over the whole context (the core of ``S``
    positions less that of the ``S - n`` cached ones: the cached queries are not run, the
    cached keys are attended to), and the logits of ``n`` tokens by the convention.
    ``prefill_flops`` without a hit."""
    cached = prompt_tokens - prefill_tokens_computed

    def core(tokens: Value) -> Value:
        return (prefill_attention_flops(tokens, model_attn_flops_per_pair_full,
                                        model_attn_flops_per_pair_window,
                                        model_sliding_window_tokens, attention_convention_code)
                + sparse_attention_flops(tokens, model_attn_flops_per_pair_sparse,
                                         model_sparse_topk_tokens))

    computed = (2 * prefill_tokens_computed * matmul_params_per_token
                + core(prompt_tokens) - core(cached)
                + 2 * model_lm_head_matmul_params
                * logits_positions(prefill_tokens_computed, logits_convention_code))
    return where(prefix_cache_hit_fraction > 0, computed, prefill_flops)


PREFIX_COLUMNS = (prefill_tokens_computed, prefix_cache_shared_tokens, prefill_flops_computed)
"""The prefix-cache columns, in dependency order (after the roofline FLOPs)."""
