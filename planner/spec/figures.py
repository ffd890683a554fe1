"""A model's figures as scenario inputs: the integers every per-scenario formula reads.

A :class:`ModelSpec` is structured (per-layer shapes); the scenario formulas are flat and
vectorized. This module is the bridge: it reduces a spec to named integers (each a column of the
scenario sheet, prefixed ``model_``) such as matmul weights per token, KV elements per token on
full-attention and on sliding-window layers, and attention FLOPs per position pair.

Layers are grouped in two classes, full attention and sliding window (chunked attention counts as
a window of its chunk size); a model whose windowed layers use different window sizes is refused
with a clear error rather than approximated. Linear-attention layers (Gated DeltaNet) hold no KV
cache: they add a fixed state per sequence, ``model_state_elems_per_sequence``, whatever the
context length; so do Mamba-2 layers (Nemotron-H). Their recurrent part,
``model_state_recurrent_elems_per_sequence``, is kept at ``model_state_recurrent_bits`` (the
config's ``mamba_ssm_dtype``/``mamba_ssm_cache_dtype``: float32 in the published configs).

Sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer's key is part of the per-token
KV elements and its scoring FLOPs of every (query, cached token) pair count as full-attention
pairs; the attention core reads the indexer's top-k tokens only, which costs as a window of
``k`` tokens does (``min(T, k)`` pairs per query): its per-pair FLOPs are
``model_attn_flops_per_pair_sparse`` over ``model_sparse_topk_tokens``. DeepSeek-V4: the
sliding window is a window class; the compressed entries are per-token KV elements
(``d_h/ratio`` per token, exact at a multiple of the ratio), attention over them a full-attention
term at ``1/ratio`` of the pairs (CSA reads the top-k compressed entries: a sparse term); CSA's
carried overlap slice is fixed state.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

from planner.core.errors import ConfigError
from planner.spec.architecture import (
    Attention,
    CompressedAttention,
    Layer,
    LinearAttention,
    Mamba2,
    Mlp,
    ModelSpec,
    keeps_kv,
)
from planner.spec.params import attention_projections, count_params, layer_matmul_weights
from planner.spec.quant_config import COMPUTE_PATHS, FULL_BITS, checkpoint_bits
from planner.spec.vllm_cache_layout import v4_figures


@dataclass(frozen=True, slots=True)
class ModelFigures:
    """Integers derived from a :class:`ModelSpec`; every field is a scenario-sheet column.

    Units: parameters are counts; ``*_elems_*`` are tensor elements (bytes = elems * bits / 8);
    ``*_flops_per_pair`` are FLOPs per (query, key) position pair summed over layers.
    """

    model_params_total: int
    model_params_active: int
    model_params_embedding: int
    """Token embedding plus any learned position table."""
    model_params_lm_head: int
    """Separate LM head weights (0 when tied to the embedding)."""
    model_matmul_dense_params: int
    """Layer matmul weights every token uses: attention, dense FFN, shared experts, routers."""
    model_matmul_experts_params: int
    """Routed-expert matmul weights of all experts (0 for dense models)."""
    model_matmul_experts_active_params: int
    """Routed-expert matmul weights a single token uses (top-k experts)."""
    model_lm_head_matmul_params: int
    """``V*d``: the logits matmul, done whether or not the head is tied."""
    model_experts: int
    """Routed experts per MoE layer (1 for dense models)."""
    model_experts_per_token: int
    """Experts each token is routed to (1 for dense models)."""
    model_layers: int
    model_hidden_size: int
    model_attention_heads: int
    """Query heads per layer (of the first layer)."""
    model_kv_heads: int
    """Heads the KV cache splits by under tensor parallelism (1 for MLA)."""
    model_kv_elems_per_token_full: float
    """KV-cache elements per token per sequence, summed over full-attention layers."""
    model_kv_elems_per_token_window: int
    """KV-cache elements per token per sequence, summed over sliding-window layers."""
    model_sliding_window_tokens: int
    """The sliding window of the windowed layers (0 when there are none)."""
    model_attn_flops_per_pair_full: float
    """Attention-core FLOPs per position pair, summed over full-attention layers."""
    model_attn_flops_per_pair_window: int
    """Attention-core FLOPs per position pair, summed over sliding-window layers."""
    model_max_context_tokens: int
    """``max_position_embeddings`` (0 when the config gives none)."""
    model_checkpoint_weight_bits: int
    """Bits of one quantized weight value in the checkpoint (its ``quantization_config``;
    16 when it has none)."""
    model_checkpoint_matmul_bits: int
    """Stored bits of every layer matmul weight in the checkpoint, with scales, zero points
    and the modules it keeps in 16 bit (``weight_dtype`` auto)."""
    model_checkpoint_embedding_bits: int
    """Stored bits of the embedding, position table and untied LM head in the checkpoint."""
    model_checkpoint_matmul_path: int
    """The checkpoint's matmul path code: 0 16-bit (weight-only), 1 fp8, 2 int8, 3 int4,
    4 fp4 (W8A8 / W4A4)."""
    model_checkpoint_low_bit_path: int
    """The low-bit path code of the checkpoint's weight format (for ``quant_mode``
    weight_activation; 0 when it is not quantized)."""
    model_checkpoint_kv_bits: int = 0
    """Bits of the KV cache the checkpoint's ``quantization_config`` declares (8 for a
    ModelOpt FP8 KV cache; 0: none), what the engines' ``--kv-cache-dtype auto`` takes
    (:func:`planner.formulas.derived.kv_bits`)."""
    model_state_elems_per_sequence: int = 0
    """Fixed state elements one sequence holds in linear-attention layers, summed over layers
    (recurrent state plus convolution window; 0 when every layer keeps a KV cache)."""
    model_attn_matmul_params_other: int = 0
    """Attention matmul weights that the per-pair FLOPs and KV elements do not imply, summed over
    layers: Gated DeltaNet projections and the output-gate half of a gated query projection
    (Qwen3-Next); 0 for other models. Engine formulas that rebuild attention widths from
    ``model_attn_flops_per_pair_*`` and ``model_kv_elems_*`` add it."""
    model_kv_layers: int = 0
    """Layers that keep a KV cache (all but linear-attention layers)."""
    model_vision_params: int = 0
    """Vision tower and projector of a multimodal checkpoint, reported beside the text model
    (not in ``model_params_total``; 0 for text-only models)."""
    model_state_heads: int = 1
    """Heads the fixed state splits by under tensor parallelism (linear-attention value heads;
    1 when there is no state)."""
    model_state_recurrent_elems_per_sequence: int = 0
    """The recurrent part of ``model_state_elems_per_sequence`` (DeltaNet / SSM state, without
    the convolution window), kept at ``model_state_recurrent_bits``."""
    model_state_recurrent_bits: int = 16
    """Bits of the recurrent state as the config keeps it (32 for float32)."""
    model_state_recurrent_bits_vllm: int = 16
    """Bits of the recurrent state under vLLM's default ``mamba_ssm_cache_dtype`` "auto": the
    config's ``mamba_ssm_cache_dtype`` for Nemotron-H (else 16) and ``mamba_ssm_dtype`` for
    Qwen3.5 (else 16)."""
    model_mtp_layers: int = 0
    """Multi-token-prediction modules of the checkpoint (``num_nextn_predict_layers``; 0
    without), run by ``spec_method = mtp``."""
    model_attn_flops_per_pair_sparse: float = 0
    """Attention-core FLOPs per (query, selected token) pair of sparse-attention layers, summed
    over layers (0 without sparse attention)."""
    model_sparse_topk_tokens: int = 0
    """Tokens each query of a sparse-attention layer attends to (its indexer's top-k; for
    DeepSeek-V4's CSA the tokens its top-k compressed entries cover, ``4*k``)."""
    model_indexer_elems_per_token: int = 0
    """Elements per token of sparse-attention indexer keys among the KV elements, summed over
    the layers that cache them (engines keep these at fp8, not ``kv_dtype``)."""
    model_kv_heads_growing: int = 1
    """Heads the growing KV cache (full-attention layers, compressed entries) splits by under
    tensor parallelism: the most KV heads of those layers (1 for MLA and shared-KV layers)."""
    model_kv_heads_window: int = 1
    """Heads the sliding-window layers' cache splits by (Gemma 4: 16 local KV heads beside 4
    global ones; MiMo-V2: 8 beside 4)."""
    model_state_layers: int = 0
    """Layers that hold a fixed per-sequence state (Gated DeltaNet, Mamba-2): vLLM pages each
    one's state separately, padded to the attention page (0 without a state)."""
    model_growing_layers: int = 0
    """Attention layers whose cache grows with the context (full and sparse attention; not
    sliding-window, state or V4 compressed layers): one vLLM cache type."""
    model_window_layers: int = 0
    """Sliding-window (and chunked) attention layers: one vLLM cache type."""
    model_sparse_mla_layers: int = 0
    """MLA layers with sparse attention (DeepSeek-V3.2, GLM-5): vLLM's FlashMLA sparse kernel
    stores their fp8 latent as 656 B ``fp8_ds_mla`` rows
    (:data:`planner.spec.vllm_cache_layout.FP8_DS_MLA_ROW_BYTES`)."""
    model_vllm_v4_kv_bytes_per_token: float = 0
    """DeepSeek-V4 under vLLM: compressed and indexer bytes per context token, all layers,
    in vLLM's fp8 layout with 576 B page padding (V4-Flash 3,915 B;
    :func:`planner.spec.vllm_cache_layout.v4_figures`). 0 for other models."""
    model_vllm_v4_window_page_bytes: int = 0
    """DeepSeek-V4 under vLLM: one 64-token block of every layer's window cache (bytes)."""
    model_vllm_v4_csa_state_page_bytes: int = 0
    """DeepSeek-V4 under vLLM: one 4-token block of every CSA layer's float32 compressor
    states (attention and indexer; bytes)."""
    model_vllm_v4_hca_state_page_bytes: int = 0
    """DeepSeek-V4 under vLLM: one 8-token block of every HCA layer's compressor state."""
    model_vllm_v4_hca_ratio: int = 0
    """DeepSeek-V4's HCA compress ratio: the HCA compressor state's window (tokens)."""
    model_attention_head_dim: int = 0
    """Head size of the first softmax-attention layer as vLLM's ``ModelConfig.get_head_size``
    reads it: ``head_dim`` (Qwen3.5 256), ``kv_lora_rank + qk_rope_head_dim`` for MLA (576); 0
    when no layer has softmax attention. vLLM's FlashInfer block alignment depends on it."""
    model_layer_kernels: float = 9
    """GPU kernels a decoder layer runs per engine step, mean over layers
    (:func:`layer_kernels`): what the per-kernel launch and tail time of a small-batch step
    scales with (:func:`planner.formulas.serving.serving_step_fixed_s`)."""

    def as_dict(self) -> dict[str, float]:
        """Plain dict of column name to value."""
        return asdict(self)


DENSE_ATTENTION_KERNELS = 5
"""fused add + RMSNorm, QKV GEMM, rotary embedding, attention, output GEMM (vLLM ``llama.py``
``LlamaAttention`` / ``LlamaDecoderLayer``)."""
QK_NORM_KERNELS = 2
"""Per-head RMSNorm of queries and of keys, two kernels (vLLM ``qwen3.py`` ``q_norm``,
``k_norm``)."""
MLA_ATTENTION_KERNELS = 10
"""Multi-head latent attention in decode (vLLM ``deepseek_v2.py`` with the MLA backend):
fused add + RMSNorm, fused q_a/kv_a GEMM, q_a RMSNorm, q_b GEMM, kv_a RMSNorm, rotary, the
absorbed ``W_UK`` batched GEMM, the MLA attention kernel, the ``W_UV`` batched GEMM, output
GEMM."""
DENSE_FFN_KERNELS = 4
"""fused add + RMSNorm, gate-up GEMM, ``silu_and_mul``, down GEMM."""
MOE_FFN_KERNELS = 8
"""fused add + RMSNorm, router GEMM, ``topk_softmax``, ``moe_align_block_size``, the two
grouped expert GEMMs, ``silu_and_mul``, ``moe_sum`` (vLLM ``fused_moe/fused_moe.py``
``fused_experts``); shared experts add a dense FFN's three (gate-up, activation, down)."""


def layer_kernels(layer: Layer) -> int:
    """GPU kernels one decoder layer runs per step, counted from vLLM's model code (the
    constants above): attention (standard, with query/key norms, or MLA; other mixers --
    linear attention, Mamba, compressed attention -- as standard attention, their kernels
    not counted separately) plus the FFN (dense, or routed experts with their shared
    experts)."""
    attn = layer.attention
    if isinstance(attn, Attention) and attn.kv_lora_rank > 0:
        kernels = MLA_ATTENTION_KERNELS
    else:
        kernels = DENSE_ATTENTION_KERNELS
        if isinstance(attn, Attention) and attn.qk_norm:
            kernels += QK_NORM_KERNELS
    ffn = layer.ffn
    if isinstance(ffn, Mlp):
        return kernels + DENSE_FFN_KERNELS
    return kernels + MOE_FFN_KERNELS + (DENSE_FFN_KERNELS - 1 if ffn.shared is not None else 0)


@dataclass(slots=True)
class _LayerSums:
    """Running figures over a spec's layers, added layer by layer in layer order (so the
    float sums round as they always have): matmul weights (parameters), KV elements per token,
    attention FLOPs per position pair, fixed state elements per sequence, and the heads and
    layer counts of each cache class."""

    dense: int = 0
    """Layer matmul weights every token uses (parameters)."""
    experts: int = 0
    """Routed-expert matmul weights of all experts (parameters)."""
    experts_active: int = 0
    """Routed-expert matmul weights one token uses (parameters)."""
    kv_full: float = 0
    """KV elements per token on full-attention layers (compressed shares may be fractions)."""
    kv_window: int = 0
    """KV elements per token on sliding-window layers."""
    flops_full: float = 0
    """Attention FLOPs per position pair on full-attention terms."""
    flops_window: int = 0
    """Attention FLOPs per position pair on sliding-window layers."""
    sparse_flops: float = 0
    """Attention FLOPs per (query, selected token) pair on sparse-attention terms."""
    topk: int = 0
    """Tokens a sparse-attention query attends to (0 without sparse attention)."""
    n_experts: int = 1
    """Routed experts per MoE layer (of the last MoE layer; 1 for dense models)."""
    top_k: int = 1
    """Experts each token is routed to (of the last MoE layer; 1 for dense models)."""
    kv_heads: int = 1
    """Most KV-cache heads of any attention layer."""
    heads_growing: int = 1
    """Most KV-cache heads of the layers whose cache grows with the context."""
    heads_window: int = 1
    """Most KV-cache heads of the sliding-window caches."""
    state: int = 0
    """Fixed state elements per sequence (linear attention, Mamba-2, CSA overlap)."""
    state_heads: int = 1
    """Most heads the fixed state splits by."""
    attn_other: int = 0
    """Attention matmul weights the per-pair FLOPs and KV elements do not imply (parameters)."""
    recurrent: int = 0
    """Recurrent state elements per sequence (without convolution windows)."""
    indexer_elems: int = 0
    """Sparse-attention indexer key elements per token."""
    growing_layers: int = 0
    """Full and sparse attention layers (cache grows with the context)."""
    window_layers: int = 0
    """Sliding-window attention layers."""
    sparse_mla: int = 0
    """MLA layers with sparse attention."""


@lru_cache(maxsize=256)
def model_figures(spec: ModelSpec) -> ModelFigures:
    """Reduce ``spec`` to the flat integers the scenario formulas use (cached per spec: a
    spec is immutable, and tables of thousands of scenarios share a few models)."""
    counts = count_params(spec)
    d = spec.hidden_size
    window = _sliding_window(spec)
    s = _sum_layers(spec)
    return ModelFigures(
        model_params_total=counts.total,
        model_params_active=counts.active,
        model_params_embedding=counts.embedding + counts.position,
        model_params_lm_head=counts.lm_head,
        model_matmul_dense_params=s.dense,
        model_matmul_experts_params=s.experts,
        model_matmul_experts_active_params=s.experts_active,
        model_lm_head_matmul_params=spec.vocab_size * d,
        model_experts=s.n_experts,
        model_experts_per_token=s.top_k,
        model_layers=spec.num_layers,
        model_hidden_size=d,
        model_mtp_layers=spec.mtp_layers,
        model_attention_heads=spec.attention.num_heads,
        model_kv_heads=s.kv_heads,
        model_kv_elems_per_token_full=_whole(s.kv_full),
        model_kv_elems_per_token_window=s.kv_window,
        model_sliding_window_tokens=window,
        model_attn_flops_per_pair_full=_whole(s.flops_full),
        model_attn_flops_per_pair_window=s.flops_window,
        model_max_context_tokens=spec.max_position_embeddings,
        model_state_elems_per_sequence=s.state,
        model_state_heads=s.state_heads,
        model_attn_matmul_params_other=s.attn_other,
        model_kv_layers=sum(1 for layer in spec.layers if keeps_kv(layer.attention)),
        model_state_recurrent_elems_per_sequence=s.recurrent,
        model_state_recurrent_bits=spec.state_recurrent_bits,
        model_state_recurrent_bits_vllm=spec.state_recurrent_bits_vllm,
        model_attn_flops_per_pair_sparse=_whole(s.sparse_flops),
        model_sparse_topk_tokens=s.topk,
        model_indexer_elems_per_token=s.indexer_elems,
        model_kv_heads_growing=s.heads_growing,
        model_kv_heads_window=s.heads_window,
        model_state_layers=sum(1 for layer in spec.layers
                               if isinstance(layer.attention, (LinearAttention, Mamba2))),
        model_vision_params=spec.vision_params,
        model_growing_layers=s.growing_layers,
        model_window_layers=s.window_layers,
        model_sparse_mla_layers=s.sparse_mla,
        model_attention_head_dim=_attention_head_dim(spec),
        **v4_figures(spec),
        model_layer_kernels=_whole(sum(layer_kernels(layer) for layer in spec.layers)
                                   / max(len(spec.layers), 1)),
        **_checkpoint_figures(spec),
    )


def _sliding_window(spec: ModelSpec) -> int:
    """The sliding window of the windowed layers (tokens; 0 when there are none); a spec
    whose windowed layers use several window sizes is refused with :class:`ConfigError`."""
    windows = {layer.sliding_window for layer in spec.layers if layer.sliding_window is not None}
    if len(windows) > 1:
        raise ConfigError(spec.name, "sliding_window",
                          f"layers use several window sizes {sorted(windows)}; one is supported")
    return next(iter(windows), 0)


def _sum_layers(spec: ModelSpec) -> _LayerSums:
    """The per-layer figures of ``spec`` summed over its layers in order (see
    :class:`_LayerSums` for the units): matmul weights of every layer, its mixer's cache,
    state and FLOPs by class, and the routed experts of its FFN."""
    d = spec.hidden_size
    s = _LayerSums()
    for layer in spec.layers:
        de, ex, ea = layer_matmul_weights(layer, d)
        s.dense, s.experts, s.experts_active = s.dense + de, s.experts + ex, s.experts_active + ea
        attn = layer.attention
        if isinstance(attn, (LinearAttention, Mamba2)):
            _add_state_mixer(s, attn, d)
        elif isinstance(attn, CompressedAttention):
            _add_compressed_attention(s, attn)
        elif isinstance(attn, Attention):
            _add_attention(s, attn, layer.sliding_window is None, d)
        if not isinstance(layer.ffn, Mlp):
            s.n_experts, s.top_k = layer.ffn.num_experts, layer.ffn.top_k
    return s


def _add_state_mixer(s: _LayerSums, attn: LinearAttention | Mamba2, d: int) -> None:
    """Add a linear-attention or Mamba-2 layer (hidden size ``d``): its fixed state elements
    per sequence (all and recurrent), the heads the state splits by, and its projections as
    matmul weights the per-pair figures do not imply (parameters)."""
    s.state += attn.state_elems_per_sequence
    s.recurrent += attn.recurrent_state_elems
    heads = attn.num_v_heads if isinstance(attn, LinearAttention) else attn.num_heads
    s.state_heads = max(s.state_heads, heads)
    s.attn_other += sum(i * o for i, o, _ in attention_projections(attn, d).values())


def _add_compressed_attention(s: _LayerSums, attn: CompressedAttention) -> None:
    """Add a DeepSeek-V4 compressed-attention layer: its sliding window as a window term, its
    compressed entries as per-token KV elements and a full-attention FLOPs term at ``1/ratio``
    of the pairs (CSA: a sparse term over its top-k entries, ``4*k`` tokens, and its indexer
    at ``1/ratio``), its carried overlap as fixed state (elements, FLOPs per pair)."""
    s.kv_heads = max(s.kv_heads, attn.kv_cache_heads)
    s.heads_growing = max(s.heads_growing, attn.kv_cache_heads)
    s.heads_window = max(s.heads_window, attn.kv_cache_heads)
    s.kv_window += attn.window_elems_per_token
    s.kv_full += attn.kv_elems_per_token
    s.state += attn.state_elems_per_sequence
    s.flops_window += attn.core_flops_per_pair
    if attn.compress_ratio:
        # the compressed entries: 1/ratio of the pairs (CSA: its top-k of them)
        per_entry = attn.core_flops_per_pair
        if attn.is_csa:  # min(T/4, k) entries = min(T, 4k)/4: a sparse term
            s.sparse_flops += per_entry / attn.compress_ratio
            s.topk = attn.index_topk * attn.compress_ratio
            s.flops_full += attn.indexer_flops_per_pair / attn.compress_ratio
        else:
            s.flops_full += per_entry / attn.compress_ratio


def _add_attention(s: _LayerSums, attn: Attention, full: bool, d: int) -> None:
    """Add a softmax-attention layer (hidden size ``d``; ``full`` when it has no sliding
    window): a gated query's output-gate weights (parameters), its indexer's key elements
    per token and scoring FLOPs per pair (full-attention pairs), then its KV elements per
    token and core FLOPs per pair as a sparse, a full-attention or a sliding-window term."""
    s.kv_heads = max(s.kv_heads, attn.kv_cache_heads)
    if attn.output_gate:
        s.attn_other += d * attn.num_heads * attn.head_dim
    s.flops_full += attn.indexer_flops_per_pair
    s.indexer_elems += attn.indexer.head_dim if attn.indexer else 0
    if attn.sparse_topk:
        s.growing_layers += 1
        s.sparse_mla += 1 if attn.is_mla else 0
        s.kv_full += attn.kv_elems_per_token
        s.sparse_flops += attn.core_flops_per_pair
        s.topk = attn.sparse_topk
        s.heads_growing = max(s.heads_growing, attn.kv_cache_heads)
    elif full:
        s.growing_layers += 1
        s.kv_full += attn.kv_elems_per_token
        s.flops_full += attn.core_flops_per_pair
        s.heads_growing = max(s.heads_growing, attn.kv_cache_heads)
    else:
        s.window_layers += 1
        s.kv_window += attn.kv_elems_per_token
        s.flops_window += attn.core_flops_per_pair
        s.heads_window = max(s.heads_window, attn.kv_cache_heads)


def _attention_head_dim(spec: ModelSpec) -> int:
    """Head size of the first softmax-attention layer (vLLM ``get_head_size``: the MLA latent
    ``kv_lora_rank + qk_rope_head_dim`` for MLA, else ``head_dim``); 0 without one."""
    for layer in spec.layers:
        attn = layer.attention
        if isinstance(attn, Attention):
            return (attn.kv_lora_rank + attn.qk_rope_head_dim if attn.kv_lora_rank
                    else attn.head_dim)
    return 0


def _whole(value: float) -> float:
    """``value`` as an int when it is whole (compressed attention's per-token shares are
    fractions of a block in general, whole for the published head widths)."""
    return int(value) if float(value).is_integer() else value


def _checkpoint_figures(spec: ModelSpec) -> dict[str, int]:
    """The ``model_checkpoint_*`` figures: the checkpoint's stored bits
    (:func:`planner.spec.quant_config.checkpoint_bits`) and matmul paths."""
    scheme = spec.quantization
    stored = checkpoint_bits(spec, scheme)
    return {
        "model_checkpoint_weight_bits": scheme.weight_bits if scheme else FULL_BITS,
        "model_checkpoint_matmul_bits": stored.matmul,
        "model_checkpoint_embedding_bits": stored.embedding,
        "model_checkpoint_matmul_path": COMPUTE_PATHS[scheme.compute_path] if scheme else 0,
        "model_checkpoint_low_bit_path": COMPUTE_PATHS[scheme.low_bit_path] if scheme else 0,
        "model_checkpoint_kv_bits": scheme.kv_cache_bits if scheme else 0,
    }
