"""Serving-engine memory accounting: how many KV-cache tokens a real engine allocates per GPU.

Each public function is a scenario column (name = output, parameters = columns read), written only
with the operator set of :mod:`planner.formulas.ops`. Engines are a numeric code column
``engine_code`` (:data:`ENGINES`); ``roofline`` keeps today's fixed-reserve budget
(:func:`planner.formulas.memory.kv_budget_bytes`) unchanged.

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

The activation peak of the profile run: :mod:`planner.formulas.profile_run`.

Checked against six logged vLLM start-ups (``tests/formulas/test_engine_memory.py``).
"""

from __future__ import annotations

from planner.formulas.memory import growing_kv_elems_per_token, kv_class_fraction
from planner.formulas.ops import Value, ceil, floor, maximum, minimum, safe_div, where
from planner.spec.vllm_cache_layout import (
    FP8_DS_MLA_ROW_BYTES,
    V4_BLOCK_TOKENS,
    V4_SWA_BLOCK_TOKENS,
)

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


def by_engine(code: Value, table: dict[str, Value]) -> Value:
    """``table[engine]`` for the engine whose code is ``code`` (nested ``where``s; ``table``
    names ``roofline``, the value where no other engine matches)."""
    out: Value = table["roofline"]
    for name, value in table.items():
        out = where(code == ENGINES[name], value, out)
    return out


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
                                 attention_replicated_bytes_per_gpu: Value,
                                 spec_draft_weights_bytes_per_gpu: Value) -> Value:
    """Weights an engine holds per GPU: parameters resident on the GPU (all of them unless
    some are offloaded to host memory, vLLM ``--cpu-offload-gb``) plus the rotary table, plus
    the attention weights data-parallel attention replicates (roofline: the parameters only,
    as today), plus a speculative drafter's weights
    (:func:`planner.formulas.speculative.spec_draft_weights_bytes_per_gpu`, 0 without)."""
    return weights_on_gpu_bytes_per_gpu + where(engine_code == ROOFLINE, 0,
                                         rope_cache_bytes + attention_replicated_bytes_per_gpu
                                         + spec_draft_weights_bytes_per_gpu)


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


MLA_LATENT_ELEMS = 512 + 64
"""Elements of the DeepSeek MLA latent (``kv_lora_rank`` 512 + ``qk_rope_head_dim`` 64) that
vLLM's fixed 656 B ``fp8_ds_mla`` row replaces (every sparse-MLA model so far has this shape)."""


def _vllm_padding(engine_code: Value, layers: Value, model_growing_layers: Value,
                  model_window_layers: Value, model_state_layers: Value) -> Value:
    """Memory factor of vLLM's hybrid-allocator group padding for a cache type of ``layers``
    layers: ``ceil(n/G)*G/n`` with ``G`` the fewest layers of any present type (the most when
    ``max < 1.25*min``; ``_get_kv_cache_groups_uniform_page_size``,
    :func:`planner.spec.vllm_cache_layout.vllm_group_size`). MiMo-V2-Flash (9 full, 39
    sliding layers): G = 9, the sliding layers take 45 layers' memory, factor 45/39. 1 for
    other engines, for an absent type and for models of one cache type. Not a scenario
    column: the engine columns inline it."""
    big = 1e9
    low = minimum(minimum(where(model_growing_layers > 0, model_growing_layers, big),
                          where(model_window_layers > 0, model_window_layers, big)),
                  where(model_state_layers > 0, model_state_layers, big))
    high = maximum(maximum(model_growing_layers, model_window_layers), model_state_layers)
    group = where(high < 1.25 * low, high, where(low < big, low, 1))
    padded = safe_div(ceil(safe_div(layers, group, 0.0)) * group, layers, 1.0)
    return where((engine_code == VLLM) * (layers > 0) > 0, padded, 1)


def _class_fraction_per_gpu(heads: Value, tp: Value, attention_dp_number: Value) -> Value:
    """One layer class's share per GPU: :func:`planner.formulas.memory.kv_class_fraction`
    under tensor-parallel attention, ``1/tp`` under data-parallel attention
    (:func:`kv_fraction_per_gpu`). Not a scenario column."""
    return where(attention_dp_number > 0, 1 / tp, kv_class_fraction(heads, tp))


def kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full: Value,
                               model_kv_elems_per_token_window: Value, kv_bits: Value,
                               model_kv_heads_growing: Value, tp: Value,
                               attention_dp_number: Value, pp: Value, engine_code: Value,
                               model_indexer_elems_per_token: Value,
                               model_sparse_mla_layers: Value,
                               model_vllm_v4_kv_bytes_per_token: Value) -> Value:
    """KV bytes one context token of the replica's pool takes on one GPU: the layers whose
    cache grows with the context (full attention, compressed entries, indexer keys;
    :func:`planner.formulas.memory.growing_kv_elems_per_token`), ``growing * bits/8 *
    kv_fraction_per_gpu / pp`` (Llama-3.1-8B bf16 at TP 2: 65,536 B). Sliding-window layers
    hold a window per sequence instead (:func:`engine_state_tokens`). vLLM and SGLang keep a
    sparse-attention indexer's keys at fp8 with per-128 scales
    (:data:`INDEXER_KEY_BYTES_PER_ELEM`), not at ``kv_dtype``: DeepSeek-V3.2 bf16 is 78,324 B
    per token there (61 x (1,152 + 132)) against transformers' 85,888. The share per GPU is
    the growing layers' own (their KV heads, :func:`_class_fraction_per_gpu`).

    vLLM's own layouts (:mod:`planner.spec.vllm_cache_layout`): a sparse-attention MLA
    latent at 8-bit KV is a 656 B ``fp8_ds_mla`` row, not 576 (DeepSeek-V3.2 fp8: 61 x (656 +
    132) = 48,068 B, not 43,188); DeepSeek-V4 is cached in its fp8 layout whatever
    ``kv_dtype`` (``model_vllm_v4_kv_bytes_per_token``, V4-Flash 3,915 B, not 6,880 at bf16)."""
    growing = growing_kv_elems_per_token(model_kv_elems_per_token_full,
                                         model_kv_elems_per_token_window) * kv_bits / 8
    indexer = model_indexer_elems_per_token * (INDEXER_KEY_BYTES_PER_ELEM - kv_bits / 8)
    ds_mla = where(kv_bits == 8, model_sparse_mla_layers * (FP8_DS_MLA_ROW_BYTES
                                                            - MLA_LATENT_ELEMS), 0)
    vllm = where(model_vllm_v4_kv_bytes_per_token > 0,
                 model_vllm_v4_kv_bytes_per_token, growing + indexer + ds_mla)
    engine = where(engine_code == VLLM, vllm,
                   where(engine_code == SGLANG, growing + indexer, growing))
    fraction = _class_fraction_per_gpu(model_kv_heads_growing, tp, attention_dp_number)
    return engine * fraction / pp


VLLM_HYBRID_BLOCK_ALIGNMENT = 16
"""Tokens an attention block of a vLLM hybrid (attention + Mamba / Gated DeltaNet) model is a
multiple of when vLLM enlarges it to hold a state page: ``kernel_block_alignment_size`` of
``HybridAttentionMambaModelConfig.verify_and_update_config``
(``vllm/model_executor/models/config.py``) for non-MLA attention."""
VLLM_FLASHINFER_BLACKWELL_ALIGNMENT = 32
"""The same alignment on compute capability 10.x (B200, GB200: 10.0; B300, GB300: 10.3) for
head size 256 when the attention backend is FlashInfer or left to vLLM: ``if
current_platform.is_device_capability_family(100) and model_config.get_head_size() == 256``
then ``kernel_block_alignment_size = 32`` (FlashInfer issue 1993: head size 256 with 16-token
pages is broken on Blackwell; ``FlashInferMetadataBuilder`` asserts ``block_size != 16``
there). Compute capability 12.0 (RTX PRO 6000) is another family and keeps 16."""
FLASHINFER_HEAD_SIZE = 256
"""The head size of that rule."""


def vllm_block_alignment(gpu_compute_capability: Value, model_attention_head_dim: Value) -> Value:
    """Tokens a vLLM hybrid model's enlarged attention block is a multiple of:
    :data:`VLLM_FLASHINFER_BLACKWELL_ALIGNMENT` (32) on compute capability 10.x with head size
    256, else :data:`VLLM_HYBRID_BLOCK_ALIGNMENT` (16). Not a scenario column: the engine
    columns inline it."""
    blackwell = (floor(gpu_compute_capability) == 10) * (
        model_attention_head_dim == FLASHINFER_HEAD_SIZE)
    return where(blackwell > 0, VLLM_FLASHINFER_BLACKWELL_ALIGNMENT, VLLM_HYBRID_BLOCK_ALIGNMENT)


def engine_block_tokens(engine_code: Value, block_size_effective: Value,
                         state_bytes_per_sequence_per_gpu: Value, model_state_layers: Value,
                         kv_bytes_per_token_per_gpu: Value, model_kv_layers: Value,
                         model_vllm_v4_kv_bytes_per_token: Value,
                         gpu_compute_capability: Value,
                         model_attention_head_dim: Value) -> Value:
    """Tokens per KV block the engine uses. vLLM with state layers (Mamba-2, Gated DeltaNet)
    makes one attention page at least one layer's state page
    (``HybridAttentionMambaModelConfig.verify_and_update_config``, ``mamba_cache_mode``
    "none"): ``max(block_size, a * ceil(state_page / (a * attn_page_1_token)))`` with
    ``state_page`` one state layer's bytes per sequence, ``attn_page_1_token`` one
    attention layer's bytes per token, both per GPU, and ``a`` the kernel alignment, 16
    tokens, 32 on compute capability 10.x for head size 256 (:func:`vllm_block_alignment`).
    Qwen3.5-27B at TP 8, bf16 state: state page 204,288 B, attention 1,024 B/token → 208
    tokens (224 on a B200); at its config's float32 400 → 416. Otherwise ``block_size``. A
    column of its own: :func:`engine_kv_tokens` and :func:`engine_state_tokens` read it (and
    each disaggregated pool has its own, at its TP and GPU).
    DeepSeek-V4 under vLLM: blocks of 256 tokens
    (:data:`planner.spec.vllm_cache_layout.V4_BLOCK_TOKENS`)."""
    state_page = safe_div(state_bytes_per_sequence_per_gpu, model_state_layers, 0.0)
    attn_token = safe_div(kv_bytes_per_token_per_gpu, model_kv_layers, 0.0)
    align = vllm_block_alignment(gpu_compute_capability, model_attention_head_dim)
    aligned = align * ceil(safe_div(state_page, align * attn_token, 0.0))
    hybrid = (engine_code == VLLM) * (model_state_layers > 0) * (attn_token > 0)
    v4 = (engine_code == VLLM) * (model_vllm_v4_kv_bytes_per_token > 0)
    return where(v4 > 0, V4_BLOCK_TOKENS,
                 where(hybrid > 0, maximum(block_size_effective, aligned),
                       block_size_effective))


def kv_tokens_in(pool_bytes: Value, per_token_bytes: Value, block_tokens: Value,
                 engine_code: Value, model_growing_layers: Value, model_window_layers: Value,
                 model_state_layers: Value) -> Value:
    """Context tokens a pool of ``pool_bytes`` holds in whole blocks of ``block_tokens``:
    ``floor(pool / (block * per_token * pad)) * block``, at least 0 (``pad``
    :func:`_vllm_padding` of the growing layers). Not a column: :func:`engine_kv_tokens` and
    the disaggregated pools' capacities (:mod:`planner.formulas.disagg`) apply it."""
    pad = _vllm_padding(engine_code, model_growing_layers, model_growing_layers,
                        model_window_layers, model_state_layers)
    blocks = floor(safe_div(pool_bytes, block_tokens * per_token_bytes * pad, 0.0))
    return maximum(0, blocks) * block_tokens


def engine_kv_tokens(engine_kv_bytes_per_gpu: Value, kv_bytes_per_token_per_gpu: Value,
                     engine_block_tokens: Value, engine_code: Value,
                     model_growing_layers: Value, model_window_layers: Value,
                     model_state_layers: Value) -> Value:
    """Context tokens the engine's pool holds per replica, whole blocks
    (:func:`kv_tokens_in`): ``floor(kv_bytes / (block * per_token)) * block``, at least 0,
    with ``per_token`` the growing layers' bytes (:func:`kv_bytes_per_token_per_gpu`) and
    ``block`` the engine's block (vLLM enlarges it for state layers,
    :func:`engine_block_tokens`). For a model whose every layer grows this is vLLM's "GPU KV
    cache size" (every GPU of a replica holds its share of the same tokens). For hybrids the
    pool also pages each sequence's windows and state, counted per sequence in
    :func:`engine_state_tokens`: vLLM 0.1x logs ``num_blocks // groups * block`` instead
    (``_report_kv_cache_config``, every group as if it grew), which undercounts the context
    such a pool holds. vLLM pads the growing layers to whole groups (:func:`_vllm_padding`; 1
    for every published 2026 model: their full attention layers are the smallest type)."""
    return kv_tokens_in(engine_kv_bytes_per_gpu, kv_bytes_per_token_per_gpu,
                        engine_block_tokens, engine_code, model_growing_layers,
                        model_window_layers, model_state_layers)


def _window_held_bytes(vllm: Value, context_tokens: Value, window_tokens: Value,
                       block: Value, kv_elems_per_token_full: Value,
                       kv_elems_per_token_window: Value, kv_bits: Value, kv_heads_window: Value,
                       tp: Value, attention_dp_number: Value, pp: Value) -> Value:
    """Bytes per GPU a sequence's sliding-window layers hold at ``context_tokens``, before
    vLLM's group padding: vLLM keeps ``min(ceil(T/block), ceil(w/block) + 1)`` blocks
    (``SlidingWindowManager``), other engines ``min(T, w)`` tokens; bytes per token
    ``window_elems * bits/8 * f_w / pp`` (``f_w`` the window layers' share). vLLM's
    ``SlidingWindowManager`` frees the blocks that fall out of the window
    (``remove_skipped_blocks``); the +1: the window need not start at a block boundary
    (``SlidingWindowSpec.max_memory_usage_bytes``). 0 without a window. Not a column."""
    held = where(vllm, minimum(ceil(context_tokens / block), ceil(window_tokens / block) + 1)
                 * block, minimum(context_tokens, window_tokens))
    per_window_token = where(kv_elems_per_token_full > 0, kv_elems_per_token_window, 0) \
        * kv_bits / 8 * _class_fraction_per_gpu(kv_heads_window, tp, attention_dp_number) / pp
    return per_window_token * where(window_tokens > 0, held, 0)


def _v4_held_bytes(context_tokens: Value, window_tokens: Value, window_page_bytes: Value,
                   csa_state_page_bytes: Value, hca_state_page_bytes: Value, hca_ratio: Value,
                   tp: Value, attention_dp_number: Value, pp: Value) -> Value:
    """Bytes per GPU one DeepSeek-V4 sequence holds beyond its context under vLLM
    (:mod:`planner.spec.vllm_cache_layout`): the fp8 window in
    :data:`V4_SWA_BLOCK_TOKENS`-token blocks, ``min(ceil(T/64), ceil(w/64) + 1)`` of them,
    and the float32 compressor states, CSA in 4-token blocks over a window of 8, HCA in
    8-token blocks over a window of its ratio, each page one layer type's, shared by the
    replica's attention ranks. V4-Flash at 1,151 tokens: 3 x 1,609,920 + 3 x 870,912 + 17 x
    656,640 = 18,605,376 B. Not a column: :func:`engine_state_tokens` reads it."""
    return (window_page_bytes
            * minimum(ceil(context_tokens / V4_SWA_BLOCK_TOKENS),
                      ceil(window_tokens / V4_SWA_BLOCK_TOKENS) + 1)
            + csa_state_page_bytes * minimum(ceil(context_tokens / 4), ceil(8 / 4) + 1)
            + hca_state_page_bytes
            * minimum(ceil(context_tokens / 8), ceil(hca_ratio / 8) + 1)) \
        * _class_fraction_per_gpu(1, tp, attention_dp_number) / pp


def engine_state_tokens(state_bytes_per_sequence_per_gpu: Value,
                        kv_bytes_per_token_per_gpu: Value, engine_code: Value,
                        engine_block_tokens: Value, model_state_layers: Value,
                        model_kv_layers: Value, model_kv_elems_per_token_full: Value,
                        model_kv_elems_per_token_window: Value,
                        model_sliding_window_tokens: Value, context_tokens: Value,
                        kv_bits: Value, model_kv_heads_window: Value, tp: Value,
                        attention_dp_number: Value, pp: Value, model_growing_layers: Value,
                        model_window_layers: Value,
                        model_vllm_v4_kv_bytes_per_token: Value,
                        model_vllm_v4_window_page_bytes: Value,
                        model_vllm_v4_csa_state_page_bytes: Value,
                        model_vllm_v4_hca_state_page_bytes: Value,
                        model_vllm_v4_hca_ratio: Value) -> Value:
    """Pool tokens one sequence takes beyond its context: its fixed state and its
    sliding-window layers' cache, ``(state + window) / per_token``, all per GPU, at
    ``context_tokens`` (0 for a model whose every layer grows). A running sequence costs
    ``context + engine_state_tokens`` pool tokens (the engines page both from one budget).

    * state: vLLM pages each state layer's state in one page padded to the attention page
      (``mamba_page_size_padded`` = ``block * attn_page_1_token``,
      ``HybridAttentionMambaModelConfig``; one page per sequence with ``mamba_cache_mode``
      "none", ``MambaSpec.max_memory_usage_bytes``): ``state_layers * block * attn_token``.
      SGLang and TRT-LLM: the state itself.
    * window: :func:`_window_held_bytes` (vLLM frees the blocks that fall out of the window).

    Qwen3.5-27B on 8 GPUs at TP 8 under vLLM (state at its config's float32): 48 state pages
    of 400 x 1,024 B against 16,384 B per context token (16 layers of 1,024 B) = 1,200 pool
    tokens per sequence.

    vLLM pads each cache type to whole layer groups (:func:`_vllm_padding`): MiMo-V2-Flash's
    39 sliding layers take 45 layers' memory, Nemotron-3-Nano's 23 Mamba layers 24. DeepSeek-V4
    under vLLM: :func:`_v4_held_bytes` (V4-Flash at 1,151 tokens: 4,752.3 pool tokens of
    3,915 B)."""
    block = engine_block_tokens
    attn_token = safe_div(kv_bytes_per_token_per_gpu, model_kv_layers, 0.0)
    vllm = engine_code == VLLM
    pad_state = _vllm_padding(engine_code, model_state_layers, model_growing_layers,
                              model_window_layers, model_state_layers)
    pad_window = _vllm_padding(engine_code, model_window_layers, model_growing_layers,
                               model_window_layers, model_state_layers)
    pad_growing = _vllm_padding(engine_code, model_growing_layers, model_growing_layers,
                                model_window_layers, model_state_layers)
    state = where(vllm * (model_state_layers > 0) > 0,
                  maximum(model_state_layers * block * attn_token,
                          state_bytes_per_sequence_per_gpu) * pad_state,
                  state_bytes_per_sequence_per_gpu)
    w = model_sliding_window_tokens
    window = _window_held_bytes(vllm, context_tokens, w, block, model_kv_elems_per_token_full,
                                model_kv_elems_per_token_window, kv_bits,
                                model_kv_heads_window, tp, attention_dp_number, pp) * pad_window
    v4_blocks = _v4_held_bytes(context_tokens, w, model_vllm_v4_window_page_bytes,
                               model_vllm_v4_csa_state_page_bytes,
                               model_vllm_v4_hca_state_page_bytes, model_vllm_v4_hca_ratio,
                               tp, attention_dp_number, pp)
    v4 = vllm * (model_vllm_v4_kv_bytes_per_token > 0)
    held_bytes = where(v4 > 0, v4_blocks, state + window)
    return safe_div(held_bytes, kv_bytes_per_token_per_gpu * pad_growing, 0.0)


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
                fits: Value, serving_mode_code: Value, pools_fit: Value) -> Value:
    """Whether the engine starts and holds one full-length request: a positive KV pool, the
    engine's memory (CUDA graphs included) within the usable memory, and at least one
    ``context_tokens`` sequence (with its fixed state, if any) in the pool. Roofline: today's
    ``fits``. Disaggregated: both pools (:func:`planner.formulas.disagg_kv_pools.pools_fit`),
    whatever the scenario's own ``tp`` would hold."""
    engine_ok = ((engine_kv_bytes_per_gpu > 0)
                 * (engine_memory_used_bytes <= gpu_usable_memory_bytes)
                 * (engine_token_capacity >= context_tokens + engine_state_tokens))
    aggregated = where(engine_code == ROOFLINE, fits, engine_ok > 0)
    return where(serving_mode_code == 1, pools_fit, aggregated)
