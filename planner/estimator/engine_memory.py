"""Serving-engine memory accounting: how many KV-cache tokens a real engine allocates per GPU.

Each public function is a scenario column (name = output, parameters = columns read), written only
with the operator set of :mod:`planner.estimator.ops`. Engines are a numeric code column
``engine_code`` (:data:`ENGINES`); ``roofline`` keeps today's fixed-reserve budget
(:func:`planner.estimator.memory.kv_budget_bytes`) unchanged.

What each engine subtracts before the KV pool, per GPU (bytes):

* vLLM V1 (``vllm/v1/worker/gpu_worker.py``, ``Worker.determine_available_memory``)::

      kv = gpu_memory_utilization * total - (weights + torch_peak_increase + non_torch_increase)

  ``torch_peak_increase`` is the activation peak of ``GPUModelRunner.profile_run``
  (``vllm/v1/worker/gpu_model_runner.py``): ``_dummy_run(max_num_tokens)`` (one forward pass
  over ``max_num_batched_tokens`` tokens) then ``_dummy_sampler_run`` (logits and sampling for
  ``min(max_num_seqs, max_num_batched_tokens)`` sequences). The CUDA context is not subtracted
  (it is outside the requested fraction); ``non_torch_increase`` is what the profile run adds
  outside torch (cuBLAS workspaces; NCCL and custom all-reduce buffers when TP > 1). CUDA-graph
  memory is captured after the KV pool is sized: it counts toward fitting the GPU, not toward
  the KV pool. The pool is cut into whole blocks of ``block_size_effective`` tokens
  (``vllm/v1/core/kv_cache_utils.py``: ``num_blocks = available // page_size // num_layers``)
  and "GPU KV cache size" is ``num_blocks * block_size_effective``.
* vLLM V0 (``vllm/worker/worker.py``, ``determine_num_available_blocks``, 0.6.x):
  ``kv = utilization * total - peak_memory`` with ``peak_memory = torch peak (weights included)
  + non-torch memory`` measured after profiling, which includes the CUDA context. Without
  chunked prefill the profile batch is ``max(max_model_len, max_num_batched_tokens)`` tokens.
  Selected with ``vllm_v0_accounting_number = 1``.
* SGLang (``python/sglang/srt/model_executor/model_runner.py``, ``profile_max_num_token``):
  ``rest = available_after_weights - total * (1 - mem_fraction_static)``, i.e.
  ``kv = mem_fraction_static * total - weights - context (- comm buffers)``: activations and
  CUDA graphs live in the ``1 - mem_fraction_static`` share. Page size 1 by default.
* TensorRT-LLM (PyTorch backend, ``KvCacheConfig.free_gpu_memory_fraction``, default 0.9):
  ``kv = free_gpu_memory_fraction * (total - weights - context - activation peak of the
  warm-up forward - comm buffers)``; blocks of ``tokens_per_block`` (32).

Activation peak (bytes per GPU), a model of the profile run, ``max`` of its two phases:

* forward over ``T`` profile tokens: ``T * activation_bytes * (ffn_width/tp + 3*d + moe*k*d)``:
  the gated MLP keeps ``gate_up`` (2I), its activation (I) and the down projection alive at
  once (vLLM ``LlamaMLP.forward``) beside the residual stream and the normed input (3d); a
  fused MoE keeps its three per-routed-copy caches (2I, I, d per expert copy,
  ``fused_moe.py`` ``intermediate_cache1..3``), hence the extra ``k*d``.
* sampler over ``N = min(max_num_seqs, T)`` sequences: ``N * vocab * sampler_bytes_per_logit``.

Checked against six logged vLLM start-ups (``tests/test_engine_memory.py``).
"""

from __future__ import annotations

from planner.estimator.ops import Value, floor, maximum, minimum, safe_div, where

GIB = 2**30

ROOFLINE = 0
"""engine_code: today's fixed-reserve memory model (no engine)."""
VLLM = 1
"""engine_code: vLLM (V1 accounting; V0 with ``vllm_v0_accounting_number``)."""
SGLANG = 2
"""engine_code: SGLang."""
TRTLLM = 3
"""engine_code: TensorRT-LLM (PyTorch backend)."""
ENGINES = {"roofline": ROOFLINE, "vllm": VLLM, "sglang": SGLANG, "trtllm": TRTLLM}
"""The one mapping of engine names to ``engine_code``."""


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


def activation_peak_bytes(forward_activation_bytes: Value,
                          sampler_activation_bytes: Value) -> Value:
    """Activation peak of the profile run: the larger phase (the forward's temporaries are
    freed before the sampler runs)."""
    return maximum(forward_activation_bytes, sampler_activation_bytes)


def rope_cache_bytes(model_max_context_tokens: Value, model_kv_elems_per_token_full: Value,
                     model_kv_elems_per_token_window: Value, model_kv_layers: Value,
                     model_kv_heads: Value, activation_bytes: Value) -> Value:
    """Rotary cos/sin table an engine keeps beside the weights (bytes per GPU):
    ``max_position_embeddings * head_dim * b`` (vLLM ``RotaryEmbedding.cos_sin_cache``, in the
    model dtype, counted in "Model loading took"). Llama-3.1-8B: 131072 * 128 * 2 = 32 MiB,
    the gap between its 14.958 GiB of parameters and the 14.99 GiB vLLM logs.
    ``head_dim = kv_elems / (2 * L_kv * n_kv)`` over the layers that keep a KV cache."""
    head_dim = (model_kv_elems_per_token_full + model_kv_elems_per_token_window) / (
        2 * model_kv_layers * model_kv_heads)
    return model_max_context_tokens * head_dim * activation_bytes


def attention_replicated_bytes_per_gpu(attention_dp_number: Value, tp: Value, pp: Value,
                                       model_hidden_size: Value,
                                       model_attn_flops_per_pair_full: Value,
                                       model_attn_flops_per_pair_window: Value,
                                       model_kv_elems_per_token_full: Value,
                                       model_kv_elems_per_token_window: Value,
                                       model_attn_matmul_params_other: Value,
                                       weight_bits_effective: Value) -> Value:
    """Extra attention weights per GPU under data-parallel attention: every GPU keeps the
    whole Q/K/V/O projections of its pipeline stage instead of ``1/tp`` of them,
    ``attn_params * (1 - 1/tp) / pp * bits/8``. Attention matmul weights
    ``d * (h*d_h*2 + n_kv*d_h*2)`` per layer are ``d * (flops_per_pair/2 + kv_elems)`` summed
    over layers (standard attention), plus the attention weights those do not imply
    (``model_attn_matmul_params_other``: linear attention, gated queries)."""
    attn_params = model_hidden_size * (
        (model_attn_flops_per_pair_full + model_attn_flops_per_pair_window) / 2
        + model_kv_elems_per_token_full + model_kv_elems_per_token_window) \
        + model_attn_matmul_params_other
    return where(attention_dp_number > 0,
                 attn_params * (1 - 1 / tp) / pp * weight_bits_effective / 8,
                 0)


def engine_weights_bytes_per_gpu(engine_code: Value, weights_on_gpu_bytes_per_gpu: Value,
                                 rope_cache_bytes: Value,
                                 attention_replicated_bytes_per_gpu: Value) -> Value:
    """Weights an engine holds per GPU: parameters resident on the GPU (all of them unless
    some are offloaded to host memory, vLLM ``--cpu-offload-gb``) plus the rotary table, plus
    the attention weights data-parallel attention replicates (roofline: the parameters only,
    as today)."""
    return weights_on_gpu_bytes_per_gpu + where(engine_code == ROOFLINE, 0,
                                         rope_cache_bytes + attention_replicated_bytes_per_gpu)


def non_torch_bytes(engine_code: Value, vllm_v0_accounting_number: Value,
                    gpu_runtime_context_bytes: Value, non_torch_gib: Value, tp: Value,
                    comm_buffer_gib: Value) -> Value:
    """Memory outside torch the engine subtracts (bytes per GPU): vLLM V1 the profile-run
    increase ``non_torch_gib`` (default 0.25 GiB, vLLM 0.19 logs at TP 1); vLLM V0, SGLang and
    TRT-LLM the whole runtime context (GPU catalog). Plus ``comm_buffer_gib`` when TP > 1
    (NCCL and custom all-reduce buffers: vLLM 0.19 logs 2.07 GiB at TP 2 vs 0.25 at TP 1)."""
    v1 = (engine_code == VLLM) * (vllm_v0_accounting_number <= 0)
    base = where(v1, non_torch_gib * GIB, gpu_runtime_context_bytes)
    return base + where(tp > 1, comm_buffer_gib * GIB, 0)


def engine_kv_bytes_per_gpu(engine_code: Value, vllm_v0_accounting_number: Value,
                            gpu_usable_memory_bytes: Value, gpu_memory_utilization: Value,
                            mem_fraction_static: Value, free_gpu_memory_fraction: Value,
                            engine_weights_bytes_per_gpu: Value, activation_peak_bytes: Value,
                            non_torch_bytes: Value, kv_budget_bytes: Value) -> Value:
    """Bytes of KV pool per GPU (negative when the weights do not fit), by engine:

    * roofline: ``kv_budget_bytes`` (memory - reserve - weights, unchanged);
    * vLLM: ``util*usable - weights - activation_peak - non_torch`` (V0: the same with the
      context in ``non_torch``);
    * SGLang: ``mem_fraction_static*usable - weights - non_torch``;
    * TRT-LLM: ``free_fraction*(usable - weights - activation_peak - non_torch)``.

    vLLM 0.19, Llama-3.1-8B, H100, util 0.95: 75.23 - 14.99 - 1.89 - 0.25 = 58.11 GiB logged."""
    weights_bytes_per_gpu = engine_weights_bytes_per_gpu
    free = gpu_usable_memory_bytes - weights_bytes_per_gpu
    vllm = gpu_memory_utilization * gpu_usable_memory_bytes - weights_bytes_per_gpu \
        - activation_peak_bytes - non_torch_bytes
    sglang = mem_fraction_static * gpu_usable_memory_bytes - weights_bytes_per_gpu \
        - non_torch_bytes
    trt_free = free - activation_peak_bytes - non_torch_bytes
    trtllm = where(trt_free > 0, free_gpu_memory_fraction * trt_free, trt_free)
    return where(engine_code == VLLM, vllm,
                 where(engine_code == SGLANG, sglang,
                       where(engine_code == TRTLLM, trtllm, kv_budget_bytes)))


def kv_fraction_per_gpu(tp_kv_fraction: Value, tp: Value, attention_dp_number: Value) -> Value:
    """Share of the replica's KV pool per token one GPU holds: ``tp_kv_fraction`` under tensor
    parallel attention (heads split, replicated when TP exceeds the KV heads); ``1/tp`` under
    data-parallel attention (TRT-LLM ``enable_attention_dp``, SGLang ``--enable-dp-attention``:
    each GPU keeps whole sequences of its own requests, nothing replicated)."""
    return where(attention_dp_number > 0, 1 / tp, tp_kv_fraction)


INDEXER_KEY_BYTES_PER_ELEM = 1 + 4 / 128
"""Bytes per element of a sparse-attention indexer key in vLLM's and SGLang's caches: fp8 values
with one float32 scale per 128 (vLLM ``DeepseekV32IndexerCache``: ``index_head_dim +
index_head_dim // 128 * 4`` = 132 B per token and layer for 128 dims), whatever ``kv_dtype``."""


def kv_bytes_per_token_per_gpu(kv_bytes_per_token: Value, kv_fraction_per_gpu: Value,
                               pp: Value, engine_code: Value,
                               model_indexer_elems_per_token: Value, kv_bits: Value) -> Value:
    """KV bytes one token of the replica's pool takes on one GPU: ``kv_bytes_per_token *
    kv_fraction_per_gpu / pp`` (Llama-3.1-8B bf16 at TP 2: 65,536 B). vLLM and SGLang keep a
    sparse-attention indexer's keys at fp8 with per-128 scales
    (:data:`INDEXER_KEY_BYTES_PER_ELEM`), not at ``kv_dtype``: DeepSeek-V3.2 bf16 is 78,324 B
    per token there (61 x (1,152 + 132)) against transformers' 85,888."""
    indexer = model_indexer_elems_per_token * (INDEXER_KEY_BYTES_PER_ELEM - kv_bits / 8)
    engine = where(engine_code == VLLM, indexer, where(engine_code == SGLANG, indexer, 0))
    return (kv_bytes_per_token + engine) * kv_fraction_per_gpu / pp


def engine_kv_tokens(engine_kv_bytes_per_gpu: Value, kv_bytes_per_token_per_gpu: Value,
                     block_size_effective: Value) -> Value:
    """KV tokens the engine allocates per replica, whole blocks:
    ``floor(kv_bytes / (block_size * per_token)) * block_size``, at least 0 (vLLM "GPU KV
    cache size"; every GPU of a replica holds its share of the same tokens)."""
    blocks = floor(engine_kv_bytes_per_gpu / (block_size_effective * kv_bytes_per_token_per_gpu))
    return maximum(0, blocks) * block_size_effective


def engine_state_tokens(state_bytes_per_sequence_per_gpu: Value,
                        kv_bytes_per_token_per_gpu: Value) -> Value:
    """KV tokens of the pool one sequence's fixed state takes (linear-attention layers):
    ``state_per_sequence / kv_per_token``, both per GPU (0 without a state). The state lives in
    the same pool as the KV blocks (vLLM's hybrid allocator pages both from one budget), so a
    running sequence costs ``context + engine_state_tokens`` pool tokens."""
    return safe_div(state_bytes_per_sequence_per_gpu, kv_bytes_per_token_per_gpu, 0.0)


def engine_token_capacity(engine_code: Value, token_capacity: Value,
                          engine_kv_tokens: Value) -> Value:
    """KV tokens per replica, engine-aware: today's ``token_capacity`` for ``roofline``, the
    engine's whole-block pool otherwise. (The integrator replaces ``token_capacity`` with
    :func:`token_capacity_engine_aware`; this column lets both coexist meanwhile.)"""
    return where(engine_code == ROOFLINE, token_capacity, engine_kv_tokens)


def engine_memory_used_bytes(engine_code: Value, gpu_usable_memory_bytes: Value,
                             gpu_memory_utilization: Value, mem_fraction_static: Value,
                             free_gpu_memory_fraction: Value, engine_weights_bytes_per_gpu: Value,
                             activation_peak_bytes: Value, non_torch_bytes: Value,
                             gpu_runtime_context_bytes: Value, cuda_graph_gib: Value,
                             kv_budget_bytes: Value, reserve_bytes_per_gpu: Value) -> Value:
    """Device memory the engine ends up holding per GPU (bytes): its share (vLLM
    ``util*usable``, SGLang ``mem_fraction_static*usable`` plus activations, TRT-LLM weights +
    context + KV + activations) plus CUDA graphs (captured after the KV pool, as in vLLM) and,
    for vLLM V1, the context outside the requested share. Roofline: the listed memory."""
    weights_bytes_per_gpu = engine_weights_bytes_per_gpu
    graphs = cuda_graph_gib * GIB
    vllm = gpu_memory_utilization * gpu_usable_memory_bytes + graphs + gpu_runtime_context_bytes
    sglang = mem_fraction_static * gpu_usable_memory_bytes + activation_peak_bytes + graphs
    free = gpu_usable_memory_bytes - weights_bytes_per_gpu - activation_peak_bytes \
        - non_torch_bytes
    trtllm = (gpu_usable_memory_bytes - (1 - free_gpu_memory_fraction) * maximum(free, 0)
              + graphs)
    roofline = weights_bytes_per_gpu + reserve_bytes_per_gpu + maximum(kv_budget_bytes, 0)
    return where(engine_code == VLLM, vllm,
                 where(engine_code == SGLANG, sglang,
                       where(engine_code == TRTLLM, trtllm, roofline)))


def engine_fits(engine_code: Value, engine_memory_used_bytes: Value,
                gpu_usable_memory_bytes: Value, engine_kv_bytes_per_gpu: Value,
                engine_token_capacity: Value, context_tokens: Value, engine_state_tokens: Value,
                fits: Value) -> Value:
    """Whether the engine starts and holds one full-length request: a positive KV pool, the
    engine's memory (CUDA graphs included) within the usable memory, and at least one
    ``context_tokens`` sequence (with its fixed state, if any) in the pool. Roofline: today's
    ``fits``."""
    engine_ok = ((engine_kv_bytes_per_gpu > 0)
                 * (engine_memory_used_bytes <= gpu_usable_memory_bytes)
                 * (engine_token_capacity >= context_tokens + engine_state_tokens))
    return where(engine_code == ROOFLINE, fits, engine_ok > 0)
