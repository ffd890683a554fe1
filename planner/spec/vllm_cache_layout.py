"""vLLM's own KV-cache layouts where they differ from transformers' cache (issue 26).

transformers caches DeepSeek-V4's compressed entries and windows at the model dtype, and a
sparse-attention MLA latent at ``kv_dtype``; vLLM's kernels fix their own byte layouts, and its
hybrid allocator pads layer groups. This module turns a :class:`ModelSpec` into the byte and
layer-count figures those rules give (plain integers the scenario columns read: the figures of
:func:`planner.spec.figures.model_figures`), each with the vLLM source it follows:

* **DeepSeek-V4** (``vllm/model_executor/layers/deepseek_v4_attention.py``,
  ``vllm/v1/attention/backends/mla/sparse_swa.py``,
  ``vllm/model_executor/layers/deepseek_compressor.py``, ``vllm/v1/kv_cache_interface.py``):
  vLLM runs V4 only with an fp8 cache (``DeepseekV4MLAAttention`` asserts ``kv_cache_dtype``
  starts with fp8 and switches it to ``fp8_ds_mla``), whatever ``kv_dtype`` says. One entry
  (compressed or windowed) is ``nope + 2*rope + nope/64 + 1`` bytes (448 fp8 NoPE, 64 bf16 RoPE,
  7 UE8M0 scales, 1 pad = 584 B for ``head_dim`` 512). Pages are rounded up to a multiple of
  576 B (``_apply_alignment_padding``, ``alignment=576``):

  - compressed entries: ``MLAAttentionSpec(block_size=256, compress_ratio=r)``, a page of
    ``256/r`` entries (``storage_block_size``); CSA's indexer keys
    (``DeepseekV4IndexerCache``) ``d_idx + d_idx/128*4`` = 132 B per entry, ``256/4`` a page;
  - the window (``DeepseekV4SWACache``, every layer): ``SlidingWindowMLASpec`` of 64-token
    blocks of 584 B entries;
  - compressor states (``CompressorStateCache``, float32 ``kv + score``): ``2*c*d`` floats per
    token (``c`` = 2 for CSA's overlap, else 1), a sliding window of ``c*r`` tokens in blocks
    of 4 (CSA) or 8 (HCA) tokens; CSA's indexer has its own at ``d_idx``.

* **Sparse-attention MLA at fp8** (DeepSeek-V3.2, GLM-5): FlashMLA's sparse kernel stores the
  ``fp8_ds_mla`` row, 512 B fp8 NoPE + 16 B scales + 128 B bf16 RoPE = 656 B per token
  (``MLAAttentionSpec.real_page_size_bytes``: ``block_size * 656``), not 576.

* **Hybrid allocator groups** (``vllm/v1/core/kv_cache_utils.py``,
  ``_get_kv_cache_groups_uniform_page_size``): layers of each cache type (full attention,
  sliding window, Mamba / Gated DeltaNet state) are cut into groups of ``G`` layers, ``G`` the
  fewest layers of any type (the most when ``max < 1.25 * min``), the last group of a type
  padded to ``G``: a type of ``n`` layers takes ``ceil(n/G)*G`` layers' memory. (A model whose
  layers are all full attention, even of several page sizes, is one group:
  ``UniformTypeKVCacheSpecs``; no padding.)

* **Kernel block alignment of hybrids** (``HybridAttentionMambaModelConfig``): the enlarged
  attention block is a multiple of 16 tokens, 32 for head size 256 on compute capability 10.x
  (FlashInfer on Blackwell; :func:`planner.formulas.engine_memory.vllm_block_alignment`).

Not modelled: how vLLM lays V4's unequal pages (37,440, 32,832, 8,640 and 1,728 B for
V4-Flash) into one block pool. vLLM's general rule (``unify_kv_cache_spec_page_size``) would
grow a smaller page's block when it divides the largest and otherwise pad it to the largest
(none of these divides 37,440); but V4, whose cache groups are all ``UniformTypeKVCacheSpecs``,
takes the packed layout instead (``_use_packed_kv_cache_config``,
``_get_kv_cache_config_packed``): one block id addresses every layer's page of its group at
its own size, layers of different groups alias the same bytes, and a block costs the
``block_stride`` of the layout whichever group holds it. That makes the bytes per context
token ``block_stride / 256`` and each window block a whole ``block_stride``, not the per-layer
pages summed here; the grouping of the compressor-state caches and the multi-pool variant of
later releases were not confirmed, so the figures below still sum pages per layer.
"""

from __future__ import annotations

from math import ceil
from typing import TypedDict

from planner.spec.architecture import CompressedAttention, ModelSpec


class V4Figures(TypedDict):
    """The ``model_vllm_v4_*`` figures (:func:`v4_figures`)."""

    model_vllm_v4_kv_bytes_per_token: float
    model_vllm_v4_window_page_bytes: int
    model_vllm_v4_csa_state_page_bytes: int
    model_vllm_v4_hca_state_page_bytes: int
    model_vllm_v4_hca_ratio: int

V4_ALIGNMENT_BYTES = 576
"""Page alignment of every DeepSeek-V4 cache (``alignment=576``: FlashMLA's 576 B rows)."""
V4_BLOCK_TOKENS = 256
"""Logical tokens per block of V4's compressed and indexer caches (the C4A block of
``[256 // 4, 584]`` the SWA and compressor-state block sizes are chosen to match)."""
V4_SWA_BLOCK_TOKENS = 64
"""Tokens per block of V4's window cache (``DeepseekV4SWACache.block_size = 64``)."""
V4_STATE_BLOCK_TOKENS = {4: 4, 128: 8}
"""Tokens per block of a compressor-state cache by compress ratio (``CompressorStateCache``)."""
FP8_DS_MLA_ROW_BYTES = 656
"""Bytes per token of a sparse MLA layer's fp8 latent under vLLM (``fp8_ds_mla``)."""
FP32_BYTES = 4


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def v4_entry_bytes(attn: CompressedAttention) -> int:
    """Bytes of one V4 compressed or windowed entry in vLLM's ``fp8_ds_mla`` layout:
    ``nope + 2*rope + nope/64 + 1`` (584 for ``d_h`` 512, RoPE 64)."""
    nope = attn.head_dim - attn.rope_head_dim
    return nope + 2 * attn.rope_head_dim + nope // 64 + 1


def v4_indexer_entry_bytes(attn: CompressedAttention) -> int:
    """Bytes of one CSA indexer key: fp8 values and a float32 scale per 128 (132 for 128)."""
    return attn.index_head_dim + attn.index_head_dim // 128 * 4


def v4_growing_bytes_per_token(attn: CompressedAttention) -> float:
    """Pool bytes per context token of one V4 layer's compressed caches, page padding
    included: ``round_up(256/r * entry, 576) / 256`` (+ the indexer's page for CSA); 0 for a
    window-only layer. V4-Flash CSA: 37,440/256 + 8,640/256 = 180 B; HCA: 1,728/256 = 6.75 B."""
    if not attn.compress_ratio:
        return 0.0
    entries = V4_BLOCK_TOKENS // attn.compress_ratio
    page = _round_up(entries * v4_entry_bytes(attn), V4_ALIGNMENT_BYTES)
    if attn.is_csa:
        page += _round_up(entries * v4_indexer_entry_bytes(attn), V4_ALIGNMENT_BYTES)
    return page / V4_BLOCK_TOKENS


def v4_window_page_bytes(attn: CompressedAttention) -> int:
    """Bytes of one 64-token block of a V4 layer's window cache:
    ``round_up(64 * entry, 576)`` (37,440 for 584 B entries)."""
    return _round_up(V4_SWA_BLOCK_TOKENS * v4_entry_bytes(attn), V4_ALIGNMENT_BYTES)


def v4_state_page_bytes(attn: CompressedAttention) -> int:
    """Bytes of one block of a V4 layer's compressor states (float32 kv and score,
    ``2*c*d`` floats a token, blocks of 4 or 8 tokens, 576-aligned): CSA main
    ``round_up(4*2*2*512*4, 576)`` = 32,832 + its indexer's ``round_up(4*2*2*128*4, 576)`` =
    8,640; HCA ``round_up(8*2*512*4, 576)`` = 32,832. 0 for a window-only layer."""
    if not attn.compress_ratio:
        return 0
    block = V4_STATE_BLOCK_TOKENS.get(attn.compress_ratio, 8)
    coff = 2 if attn.is_csa else 1
    page = _round_up(block * 2 * coff * attn.head_dim * FP32_BYTES, V4_ALIGNMENT_BYTES)
    if attn.is_csa:
        page += _round_up(block * 2 * coff * attn.index_head_dim * FP32_BYTES,
                          V4_ALIGNMENT_BYTES)
    return page


def v4_figures(spec: ModelSpec) -> V4Figures:
    """The ``model_vllm_v4_*`` figures (all 0 for a model without compressed attention):

    * ``model_vllm_v4_kv_bytes_per_token``: growing bytes per context token, all layers;
    * ``model_vllm_v4_window_page_bytes``: one 64-token window block of every layer;
    * ``model_vllm_v4_csa_state_page_bytes`` / ``model_vllm_v4_hca_state_page_bytes``: one
      compressor-state block of every CSA (4 tokens, window 8) / HCA layer (8 tokens, window
      ``r``);
    * ``model_vllm_v4_hca_ratio``: the HCA compress ratio (its state window, tokens).
    """
    grow = 0.0
    window = csa = hca = 0
    hca_ratio = 0
    for layer in spec.layers:
        attn = layer.attention
        if not isinstance(attn, CompressedAttention):
            continue
        grow += v4_growing_bytes_per_token(attn)
        window += v4_window_page_bytes(attn)
        if attn.is_csa:
            csa += v4_state_page_bytes(attn)
        elif attn.compress_ratio:
            hca += v4_state_page_bytes(attn)
            hca_ratio = attn.compress_ratio
    return {"model_vllm_v4_kv_bytes_per_token": int(grow) if grow.is_integer() else grow,
            "model_vllm_v4_window_page_bytes": window,
            "model_vllm_v4_csa_state_page_bytes": csa,
            "model_vllm_v4_hca_state_page_bytes": hca,
            "model_vllm_v4_hca_ratio": hca_ratio}


def vllm_group_size(growing_layers: int, window_layers: int, state_layers: int) -> int:
    """Layers per vLLM KV-cache group: the fewest layers of any present type, or the most
    when ``max < 1.25 * min`` (``_get_kv_cache_groups_uniform_page_size``). Plain Python, for
    tests and explanations; the scenario column is
    :func:`planner.formulas.engine_memory.vllm_group_layers`."""
    counts = [n for n in (growing_layers, window_layers, state_layers) if n > 0]
    if not counts:
        return 1
    low, high = min(counts), max(counts)
    return high if high < 1.25 * low else low


def padded_layers(layers: int, group: int) -> int:
    """Layers' memory a type of ``layers`` layers takes in groups of ``group``:
    ``ceil(layers/group)*group``."""
    return ceil(layers / group) * group if layers else 0
