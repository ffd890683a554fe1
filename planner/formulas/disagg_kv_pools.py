"""Each disaggregated pool's KV pool: bytes per token and per GPU, tokens it holds, the decode
worker's running batch, and whether both pools hold a request.

Why this module exists: a prefill worker and a decode worker are each a whole engine with its
own memory accounting (:mod:`planner.formulas.engine_memory`) at its own TP and attention DP,
the decode worker on the decode GPU; the decode pool's KV pool caps its running batch
(``decode_max_running_batch``) and the two pools together decide ``engine_fits`` of a
disaggregated deployment (:func:`pools_fit`). The model is described in
:mod:`planner.formulas.disagg`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per worker unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from planner.formulas import engine_memory as em
from planner.formulas import memory, serving
from planner.formulas.ops import Value


def decode_kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full: Value,
                                      model_kv_elems_per_token_window: Value, kv_bits: Value,
                                      model_kv_heads_growing: Value, decode_tp_effective: Value,
                                      decode_attention_dp_number: Value, pp: Value,
                                      engine_code: Value,
                                      model_indexer_elems_per_token: Value,
                                      model_sparse_mla_layers: Value,
                                      model_vllm_v4_kv_bytes_per_token: Value) -> Value:
    """KV bytes one context token takes on one decode GPU
    (:func:`engine_memory.kv_bytes_per_token_per_gpu` at the decode TP and attention DP)."""
    return em.kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full,
                                         model_kv_elems_per_token_window, kv_bits,
                                         model_kv_heads_growing, decode_tp_effective,
                                         decode_attention_dp_number, pp, engine_code,
                                         model_indexer_elems_per_token, model_sparse_mla_layers,
                                         model_vllm_v4_kv_bytes_per_token)


def decode_kv_pool_bytes_per_gpu(engine_code: Value, vllm_v0_accounting_number: Value,
                                 decode_gpu_usable_memory_bytes: Value,
                                 decode_gpu_memory_bytes: Value,
                                 gpu_memory_utilization: Value, mem_fraction_static: Value,
                                 free_gpu_memory_fraction: Value,
                                 weights_on_gpu_bytes_per_gpu: Value, tp: Value,
                                 decode_tp_effective: Value, rope_cache_bytes: Value,
                                 decode_attention_replicated_bytes_per_gpu: Value,
                                 activation_peak_bytes: Value,
                                 decode_gpu_runtime_context_bytes: Value, non_torch_gib: Value,
                                 comm_buffer_gib: Value, reserve_bytes_per_gpu: Value,
                                 spec_draft_weights_bytes_per_gpu: Value) -> Value:
    """Bytes of KV pool per decode GPU (:func:`engine_memory.engine_kv_bytes_per_gpu` on the
    decode GPU): its weights are the scenario's per GPU times ``tp / decode_tp`` (they shard
    evenly over TP) with the rotary table and the decode pool's replicated attention
    (:func:`engine_memory.engine_weights_bytes_per_gpu`), and a speculative drafter's weights
    the same way (the decode workers run it); the engine's non-torch memory at the
    decode TP (:func:`engine_memory.non_torch_bytes`); the roofline: memory - reserve - weights
    (:func:`memory.kv_budget_bytes`)."""
    sharded = weights_on_gpu_bytes_per_gpu * tp / decode_tp_effective
    weights = em.engine_weights_bytes_per_gpu(engine_code, sharded, rope_cache_bytes,
                                              decode_attention_replicated_bytes_per_gpu,
                                              spec_draft_weights_bytes_per_gpu * tp
                                              / decode_tp_effective)
    non_torch = em.non_torch_bytes(engine_code, vllm_v0_accounting_number,
                                   decode_gpu_runtime_context_bytes, non_torch_gib,
                                   decode_tp_effective, comm_buffer_gib)
    budget = memory.kv_budget_bytes(decode_gpu_memory_bytes, reserve_bytes_per_gpu, sharded)
    return em.engine_kv_bytes_per_gpu(engine_code, vllm_v0_accounting_number,
                                      decode_gpu_usable_memory_bytes, gpu_memory_utilization,
                                      mem_fraction_static, free_gpu_memory_fraction, weights,
                                      activation_peak_bytes, non_torch, budget)


def decode_engine_block_tokens(engine_code: Value, block_size_effective: Value,
                               state_bytes_per_sequence_per_gpu: Value, tp: Value,
                               decode_tp_effective: Value, model_state_layers: Value,
                               decode_kv_bytes_per_token_per_gpu: Value,
                               model_kv_layers: Value, model_vllm_v4_kv_bytes_per_token: Value,
                               decode_gpu_compute_capability: Value,
                               model_attention_head_dim: Value) -> Value:
    """Tokens per KV block of a decode worker's engine
    (:func:`engine_memory.engine_block_tokens` at the decode TP, the state per GPU scaled by
    ``tp / decode_tp``, on the decode GPU: its compute capability sets vLLM's alignment)."""
    return em.engine_block_tokens(engine_code, block_size_effective,
                                  state_bytes_per_sequence_per_gpu * tp / decode_tp_effective,
                                  model_state_layers, decode_kv_bytes_per_token_per_gpu,
                                  model_kv_layers, model_vllm_v4_kv_bytes_per_token,
                                  decode_gpu_compute_capability, model_attention_head_dim)


def decode_token_capacity(decode_kv_pool_bytes_per_gpu: Value,
                          decode_kv_bytes_per_token_per_gpu: Value,
                          decode_engine_block_tokens: Value, engine_code: Value,
                          model_growing_layers: Value, model_window_layers: Value,
                          model_state_layers: Value) -> Value:
    """KV tokens one decode worker's pool holds, whole blocks of its own
    (:func:`engine_memory.kv_tokens_in`)."""
    return em.kv_tokens_in(decode_kv_pool_bytes_per_gpu, decode_kv_bytes_per_token_per_gpu,
                           decode_engine_block_tokens, engine_code, model_growing_layers,
                           model_window_layers, model_state_layers)


def decode_max_running_batch(max_num_seqs_effective: Value, decode_token_capacity: Value,
                             mean_decode_context_tokens: Value, engine_state_tokens: Value,
                             output_tokens: Value, output_tokens_cv: Value, engine_code: Value,
                             prompt_tokens: Value, spec_kv_token_factor: Value,
                             spec_draft_tokens_effective: Value) -> Value:
    """Most sequences a decode worker runs at once: ``max_num_seqs`` and its KV pool
    (:func:`serving.max_running_batch`), with speculation's lookahead slots and MTP KV layer
    (no prefix cache in a decode pool: its prompts arrive whole)."""
    return serving.max_running_batch(max_num_seqs_effective, decode_token_capacity,
                                     mean_decode_context_tokens, engine_state_tokens,
                                     output_tokens, output_tokens_cv, engine_code,
                                     prompt_tokens, 0, spec_kv_token_factor,
                                     spec_draft_tokens_effective)


def prefill_kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full: Value,
                                       model_kv_elems_per_token_window: Value, kv_bits: Value,
                                       model_kv_heads_growing: Value,
                                       prefill_tp_effective: Value,
                                       prefill_attention_dp_number: Value, pp: Value,
                                       engine_code: Value,
                                       model_indexer_elems_per_token: Value,
                                       model_sparse_mla_layers: Value,
                                       model_vllm_v4_kv_bytes_per_token: Value) -> Value:
    """KV bytes one context token takes on one prefill GPU
    (:func:`engine_memory.kv_bytes_per_token_per_gpu` at the prefill TP and attention DP)."""
    return em.kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full,
                                         model_kv_elems_per_token_window, kv_bits,
                                         model_kv_heads_growing, prefill_tp_effective,
                                         prefill_attention_dp_number, pp, engine_code,
                                         model_indexer_elems_per_token, model_sparse_mla_layers,
                                         model_vllm_v4_kv_bytes_per_token)


def prefill_kv_pool_bytes_per_gpu(engine_code: Value, vllm_v0_accounting_number: Value,
                                  gpu_usable_memory_bytes: Value, gpu_memory_bytes: Value,
                                  gpu_memory_utilization: Value, mem_fraction_static: Value,
                                  free_gpu_memory_fraction: Value,
                                  weights_on_gpu_bytes_per_gpu: Value, tp: Value,
                                  prefill_tp_effective: Value, rope_cache_bytes: Value,
                                  prefill_attention_replicated_bytes_per_gpu: Value,
                                  activation_peak_bytes: Value,
                                  gpu_runtime_context_bytes: Value, non_torch_gib: Value,
                                  comm_buffer_gib: Value, reserve_bytes_per_gpu: Value) -> Value:
    """Bytes of KV pool per prefill GPU: :func:`decode_kv_pool_bytes_per_gpu`'s accounting on
    the scenario's GPU at the prefill TP (a prefill worker is the same engine, holding the
    prompts it computes until their KV is sent)."""
    return decode_kv_pool_bytes_per_gpu(
        engine_code, vllm_v0_accounting_number, gpu_usable_memory_bytes, gpu_memory_bytes,
        gpu_memory_utilization, mem_fraction_static, free_gpu_memory_fraction,
        weights_on_gpu_bytes_per_gpu, tp, prefill_tp_effective, rope_cache_bytes,
        prefill_attention_replicated_bytes_per_gpu, activation_peak_bytes,
        gpu_runtime_context_bytes, non_torch_gib, comm_buffer_gib, reserve_bytes_per_gpu,
        0)  # the drafter's weights are counted on the decode workers, which run it


def prefill_engine_block_tokens(engine_code: Value, block_size_effective: Value,
                                state_bytes_per_sequence_per_gpu: Value, tp: Value,
                                prefill_tp_effective: Value, model_state_layers: Value,
                                prefill_kv_bytes_per_token_per_gpu: Value,
                                model_kv_layers: Value, model_vllm_v4_kv_bytes_per_token: Value,
                                gpu_compute_capability: Value,
                                model_attention_head_dim: Value) -> Value:
    """Tokens per KV block of a prefill worker's engine (:func:`decode_engine_block_tokens`
    at the prefill TP, on the scenario's GPU)."""
    return em.engine_block_tokens(engine_code, block_size_effective,
                                  state_bytes_per_sequence_per_gpu * tp / prefill_tp_effective,
                                  model_state_layers, prefill_kv_bytes_per_token_per_gpu,
                                  model_kv_layers, model_vllm_v4_kv_bytes_per_token,
                                  gpu_compute_capability, model_attention_head_dim)


def prefill_token_capacity(prefill_kv_pool_bytes_per_gpu: Value,
                           prefill_kv_bytes_per_token_per_gpu: Value,
                           prefill_engine_block_tokens: Value, engine_code: Value,
                           model_growing_layers: Value, model_window_layers: Value,
                           model_state_layers: Value) -> Value:
    """KV tokens one prefill worker's pool holds, whole blocks of its own
    (:func:`engine_memory.kv_tokens_in`)."""
    return em.kv_tokens_in(prefill_kv_pool_bytes_per_gpu, prefill_kv_bytes_per_token_per_gpu,
                           prefill_engine_block_tokens, engine_code, model_growing_layers,
                           model_window_layers, model_state_layers)


def pools_fit(prefill_kv_pool_bytes_per_gpu: Value, prefill_token_capacity: Value,
              decode_kv_pool_bytes_per_gpu: Value, decode_token_capacity: Value,
              prompt_tokens: Value, context_tokens: Value, engine_state_tokens: Value) -> Value:
    """Whether both pools start and hold a request: a positive KV pool on each, one prompt
    (with its fixed state) in a prefill worker's pool and one full-length context in a decode
    worker's (:func:`engine_memory.engine_fits`'s test, per pool). ``engine_fits`` is this in
    a disaggregated deployment."""
    prefill_ok = (prefill_kv_pool_bytes_per_gpu > 0) * (
        prefill_token_capacity >= prompt_tokens + engine_state_tokens)
    decode_ok = (decode_kv_pool_bytes_per_gpu > 0) * (
        decode_token_capacity >= context_tokens + engine_state_tokens)
    return prefill_ok * decode_ok > 0
