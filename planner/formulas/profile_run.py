"""vLLM's memory-profiling forward pass: the activation peak an engine subtracts before its KV pool.

Why this module exists: vLLM sizes its KV pool after one dummy forward over the token budget and
a dummy sampler run (:mod:`planner.formulas.engine_memory` subtracts what they peak at); the
peak is a model of its own, checked against logged start-ups, apart from the pool accounting.

Activation peak (bytes per GPU), a model of the profile run, ``max`` of its two phases:

* forward over ``T`` profile tokens: ``T * activation_bytes * (ffn_width/tp + 3*d + moe*k*d)``:
  the gated MLP keeps ``gate_up`` (2I), its activation (I) and the down projection alive at
  once (vLLM ``LlamaMLP.forward``) beside the residual stream and the normed input (3d); a
  fused MoE keeps its three per-routed-copy caches (2I, I, d per expert copy,
  ``fused_moe.py`` ``intermediate_cache1..3``), hence the extra ``k*d``.
* sampler over ``N = min(max_num_seqs, T)`` sequences: ``N * vocab * sampler_bytes_per_logit``,
  plus, in vLLM V1, what the forward leaves allocated while it runs: the fused-MoE workspace of
  the persistent workspace manager and the forward's hidden states
  (:func:`moe_workspace_bytes`, :func:`profile_hidden_bytes`).

Each public function is a scenario column over the operator set (:mod:`planner.formulas.ops`).
Checked against six logged vLLM start-ups (``tests/formulas/test_engine_memory.py``,
``tests/formulas/test_profile_peak.py``).
"""

from __future__ import annotations

from planner.formulas.engine_memory import VLLM
from planner.formulas.ops import Value, maximum, minimum, where


def profile_tokens(max_num_batched_tokens_effective: Value, max_model_len_effective: Value,
                   chunked_prefill_number: Value) -> Value:
    """Tokens of the engine's memory-profiling forward pass: ``max_num_batched_tokens`` with
    chunked prefill (vLLM V1 always), else ``max(max_model_len, max_num_batched_tokens)``
    (vLLM V0 without chunked prefill must fit a whole ``max_model_len`` prompt in one step)."""
    return where(chunked_prefill_number > 0, max_num_batched_tokens_effective,
                 maximum(max_model_len_effective, max_num_batched_tokens_effective))


def profile_sequences(max_num_seqs_effective: Value, profile_tokens: Value) -> Value:
    """Sequences the profiling sampler run draws logits for: ``min(max_num_seqs_effective, tokens)``
    (vLLM ``_dummy_run`` spreads the tokens over at most ``max_num_seqs_effective`` requests)."""
    return minimum(max_num_seqs_effective, profile_tokens)


def ffn_width_per_token(model_matmul_dense_params: Value,
                        model_matmul_experts_active_params: Value,
                        model_attn_flops_per_pair_full: Value,
                        model_attn_flops_per_pair_window: Value,
                        model_kv_elems_per_token_full: Value,
                        model_kv_elems_per_token_window: Value,
                        model_attn_matmul_params_other: Value, model_layers: Value,
                        model_hidden_size: Value) -> Value:
    """Summed FFN matmul widths one token uses in one layer, whole model (elements): ``3*I``
    for a gated MLP, ``3*k*I_expert`` (+ shared experts) for MoE.

    Derived from the figures: matmul weights per layer ``/ d`` minus the attention widths,
    ``h*d_h = flops_per_pair/(4L)`` counted twice (Q and O) and ``n_kv*d_h = kv_elems/(2L)``
    twice (K and V), and the attention weights those do not imply (linear attention, gated
    queries: ``model_attn_matmul_params_other / (L*d)``). Biases and routers are left in (a few
    elements). At least 0."""
    per_layer = (model_matmul_dense_params + model_matmul_experts_active_params
                 - model_attn_matmul_params_other) / (model_layers * model_hidden_size)
    attn = ((model_attn_flops_per_pair_full + model_attn_flops_per_pair_window)
            / (2 * model_layers)
            + (model_kv_elems_per_token_full + model_kv_elems_per_token_window) / model_layers)
    return maximum(0, per_layer - attn)


def forward_activation_bytes(profile_tokens: Value, ffn_width_per_token: Value,
                             model_hidden_size: Value, model_experts: Value,
                             model_experts_per_token: Value, tp: Value,
                             activation_bytes: Value) -> Value:
    """Activation peak of the profiling forward pass on one GPU (bytes):
    ``T * b * (ffn_width/tp + 3*d + [MoE] k*d)`` (module docstring). Llama-3.1-8B at 20,000
    tokens, bf16: 2.06 GiB (vLLM 0.6 logged 17.06 - 14.99 = 2.07 GiB)."""
    moe_copies = where(model_experts > 1, model_experts_per_token * model_hidden_size, 0)
    return profile_tokens * activation_bytes * (ffn_width_per_token / tp + 3 * model_hidden_size
                                                + moe_copies)


def sampler_activation_bytes(profile_sequences: Value, model_lm_head_matmul_params: Value,
                             model_hidden_size: Value, sampler_bytes_per_logit: Value) -> Value:
    """Activation peak of the profiling sampler run (bytes): ``N * vocab * bytes_per_logit``.
    The vocabulary is not split: logits are gathered to every tensor-parallel rank."""
    vocab = model_lm_head_matmul_params / model_hidden_size
    return profile_sequences * vocab * sampler_bytes_per_logit


FUSED_MOE_CHUNK_TOKENS = 16 * 1024
"""Tokens one fused-MoE call processes at a time: vLLM ``VLLM_FUSED_MOE_CHUNK_SIZE`` (default
16,384, ``vllm/envs.py``); the modular kernel sizes its workspaces for ``min(tokens, chunk)``."""


def moe_workspace_bytes(engine_code: Value, vllm_v0_accounting_number: Value,
                        profile_tokens: Value, model_experts: Value,
                        model_experts_per_token: Value, model_matmul_experts_active_params: Value,
                        model_hidden_size: Value, model_layers: Value, tp: Value,
                        activation_bytes: Value) -> Value:
    """Fused-MoE workspace vLLM V1 keeps after the profiling forward (bytes per GPU): the
    modular kernel takes ``workspace13`` (shared with the output) and ``workspace2`` from the
    worker's persistent ``WorkspaceManager`` (``vllm/model_executor/layers/fused_moe/
    modular_kernel.py`` ``_allocate_buffers``: ``current_workspace_manager().get_simultaneous``;
    ``vllm/v1/worker/workspace.py`` keeps the buffer for reuse, so it is still allocated while
    the sampler runs). Triton experts' shapes (``TritonExperts.workspace_shapes``):
    ``workspace13 = M*k*max(I/tp, d)``, ``workspace2 = M*k*2I/tp`` elements, ``M =
    min(tokens, FUSED_MOE_CHUNK_TOKENS)``, ``k*I = experts_active_params / (3*d*L)``. Qwen3-30B-A3B
    (d 2,048, k 8, I 768) at 8,192 tokens, bf16: 0.25 + 0.19 = 0.44 GiB. 0 for dense models and
    for vLLM V0 (its fused_moe frees the intermediate caches after each call)."""
    m = minimum(profile_tokens, FUSED_MOE_CHUNK_TOKENS)
    routed = model_matmul_experts_active_params / (3 * model_hidden_size * model_layers) / tp
    per_token = maximum(routed, model_experts_per_token * model_hidden_size) + 2 * routed
    v1 = (engine_code == VLLM) * (vllm_v0_accounting_number <= 0) * (model_experts > 1)
    return where(v1 > 0, m * per_token * activation_bytes, 0)


def profile_hidden_bytes(engine_code: Value, vllm_v0_accounting_number: Value,
                         profile_tokens: Value, model_hidden_size: Value,
                         activation_bytes: Value) -> Value:
    """The profiling forward's output hidden states, still held while the sampler runs (bytes
    per GPU): vLLM V1 ``GPUModelRunner.profile_run`` keeps ``hidden_states`` from
    ``_dummy_run(max_num_tokens)`` until after ``_dummy_sampler_run`` (``T * d * b``;
    Llama-3.1-8B at 8,192 tokens: 64 MiB). 0 for V0 and the other engines."""
    v1 = (engine_code == VLLM) * (vllm_v0_accounting_number <= 0)
    return where(v1 > 0, profile_tokens * model_hidden_size * activation_bytes, 0)


def activation_peak_bytes(forward_activation_bytes: Value, sampler_activation_bytes: Value,
                          moe_workspace_bytes: Value, profile_hidden_bytes: Value) -> Value:
    """Activation peak of the profile run: the larger phase. The forward's temporaries are
    freed before the sampler runs, but not what vLLM V1 keeps across it: the fused-MoE
    workspace (:func:`moe_workspace_bytes`) and the forward's output hidden states
    (:func:`profile_hidden_bytes`), so the sampler phase is ``sampler + workspace + hidden``."""
    return maximum(forward_activation_bytes,
                   sampler_activation_bytes + moe_workspace_bytes + profile_hidden_bytes)
