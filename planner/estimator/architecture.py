"""A model's architecture as the estimator sees it: shapes only, no weights.

`ModelSpec` is a per-layer description precise enough to count every parameter of the Hugging Face
implementation exactly (docs/formulas.md, "Parameters"): attention shape (GQA, explicit
head_dim, MLA), biases, q/k norms, gated or plain FFN, mixture-of-experts with router and shared
experts, per-layer sliding windows, norm kind, tied embeddings and learned position tables, and
linear-attention layers (Gated DeltaNet) that hold a fixed-size state per sequence instead of a
growing KV cache. It is built from a config.json by :mod:`planner.estimator.hf_config`;
:mod:`planner.estimator.params` counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

NormKind = Literal["rms", "layer"]


@dataclass(frozen=True, slots=True)
class Attention:
    """One attention block's shape.

    Standard multi-head / grouped-query / multi-query attention: Q and O are ``d x (h*d_h)``,
    K and V are ``d x (n_kv*d_h)``. ``head_dim`` may differ from ``d/h`` (Gemma).

    ``qk_norm`` adds RMSNorms on queries and keys: per head (``d_h`` weights each) or, with
    ``qk_norm_across_heads`` (OLMo 2), over the whole projection (``h*d_h`` and ``n_kv*d_h``).
    ``sinks`` (gpt-oss) adds one learned attention-sink logit per query head. ``output_gate``
    (Qwen3-Next) makes the query projection also emit a sigmoid gate per output element, so Q is
    ``d x 2*h*d_h``.

    Multi-head latent attention (DeepSeek MLA) when ``kv_lora_rank > 0``: queries through an
    optional low-rank ``q_lora_rank`` bottleneck, keys and values from a cached latent of
    ``kv_lora_rank`` plus a shared rotary key of ``qk_rope_head_dim``; ``head_dim`` is then
    ``qk_nope_head_dim + qk_rope_head_dim`` and ``v_head_dim`` the value width per head.
    """

    num_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    qk_norm_across_heads: bool = False
    sinks: bool = False
    output_gate: bool = False
    fused_qkv: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0

    @property
    def is_mla(self) -> bool:
        """True for DeepSeek-style multi-head latent attention."""
        return self.kv_lora_rank > 0

    @property
    def kv_cache_heads(self) -> int:
        """Heads the KV cache is split by under tensor parallelism (1 for MLA's shared latent)."""
        return 1 if self.is_mla else self.num_kv_heads

    @property
    def kv_elems_per_token(self) -> int:
        """Cached elements per token in this layer: ``2*n_kv*d_h`` (K and V), or MLA's latent
        ``kv_lora_rank + qk_rope_head_dim``."""
        if self.is_mla:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.num_kv_heads * self.head_dim

    @property
    def core_flops_per_pair(self) -> int:
        """FLOPs per (query, key) position pair: ``2*h*d_qk`` for QK^T plus ``2*h*d_v`` for AV.

        For standard attention this is ``4*d_attn`` with ``d_attn = h*d_h`` (docs/formulas.md).
        """
        return 2 * self.num_heads * (self.head_dim + self.v_head_dim)

    @property
    def state_elems_per_sequence(self) -> int:
        """Fixed per-sequence state elements (0: softmax attention keeps a growing KV cache)."""
        return 0


@dataclass(frozen=True, slots=True)
class LinearAttention:
    """A Gated DeltaNet linear-attention block (Qwen3-Next ``linear_attn``).

    Projections: ``in_proj_qkvz`` ``d x (2*n_k*d_k + 2*n_v*d_v)`` (queries, keys, values and the
    output gate z), ``in_proj_ba`` ``d x 2*n_v`` (per-head beta and decay), ``out_proj``
    ``n_v*d_v x d``; a depthwise causal convolution over the ``conv_dim = 2*n_k*d_k + n_v*d_v``
    query/key/value channels (``conv_dim * kernel`` weights, no bias); ``dt_bias`` and ``A_log``
    (``n_v`` each); a gated RMSNorm of ``d_v`` weights.

    It keeps no KV cache. Each sequence holds a fixed state whatever its length: the recurrent
    state ``n_v * d_k * d_v`` plus the convolution's last ``kernel - 1`` inputs,
    ``conv_dim * (kernel - 1)`` (vLLM ``MambaStateShapeCalculator.gated_delta_net_state_shape``;
    transformers' cache stores ``kernel`` conv columns, one more than it needs).
    """

    num_k_heads: int
    num_v_heads: int
    head_k_dim: int
    head_v_dim: int
    conv_kernel: int

    @property
    def conv_dim(self) -> int:
        """Channels through the short convolution: ``2*n_k*d_k + n_v*d_v``."""
        return 2 * self.num_k_heads * self.head_k_dim + self.num_v_heads * self.head_v_dim

    @property
    def is_mla(self) -> bool:
        """Never multi-head latent attention."""
        return False

    @property
    def kv_cache_heads(self) -> int:
        """Heads the state splits by under tensor parallelism: the value heads."""
        return self.num_v_heads

    @property
    def kv_elems_per_token(self) -> int:
        """No KV cache grows with the context: 0."""
        return 0

    @property
    def core_flops_per_pair(self) -> int:
        """No (query, key) pairs: the recurrence costs per token, not per pair (0)."""
        return 0

    @property
    def state_elems_per_sequence(self) -> int:
        """Fixed state elements per sequence: ``n_v*d_k*d_v + conv_dim*(kernel - 1)``."""
        return (self.num_v_heads * self.head_k_dim * self.head_v_dim
                + self.conv_dim * (self.conv_kernel - 1))


@dataclass(frozen=True, slots=True)
class Mlp:
    """A feed-forward block: gated (SwiGLU/GeGLU, 3 matrices) or plain (2 matrices)."""

    intermediate_size: int
    gated: bool = True
    bias: bool = False
    fused_gate_up: bool = False


@dataclass(frozen=True, slots=True)
class Moe:
    """A mixture-of-experts block: ``num_experts`` routed experts, ``top_k`` used per token, a
    ``d x E`` router (DeepSeek's and GLM-4.5's score-correction bias is a buffer, not a
    parameter; gpt-oss's router has a real ``E`` bias, ``router_bias``), optional always-on
    shared experts (their summed width in ``shared``) and Qwen's sigmoid shared-expert gate."""

    num_experts: int
    top_k: int
    expert: Mlp
    shared: Mlp | None = None
    shared_gate: bool = False
    router_bias: bool = False


@dataclass(frozen=True, slots=True)
class Layer:
    """One decoder layer: attention (softmax or linear), a dense or MoE FFN, its hidden-size norms,
    and the sliding (or chunked) window it attends over (``None`` for full attention)."""

    attention: Attention | LinearAttention
    ffn: Mlp | Moe
    norms: int = 2
    sliding_window: int | None = None


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A whole decoder-only model. ``layers`` lists every layer in order.

    ``lm_head_bias`` (PhiMoE) adds a ``V`` bias to the LM head. For a multimodal checkpoint the
    spec is its text model (every count, figure and formula is the text model's);
    ``vision_params`` counts the vision tower and the projector into the text model, reported
    beside it (0 for text-only models)."""

    name: str
    model_type: str
    hidden_size: int
    vocab_size: int
    layers: tuple[Layer, ...]
    norm_kind: NormKind = "rms"
    tie_word_embeddings: bool = False
    position_table_size: int = 0
    final_norm: bool = True
    max_position_embeddings: int = 0
    lm_head_bias: bool = False
    vision_params: int = 0

    @property
    def num_layers(self) -> int:
        """Decoder layers."""
        return len(self.layers)

    @property
    def attention(self) -> Attention:
        """The first softmax-attention block: the model's representative query heads, KV heads
        and head_dim (Qwen3-Next's first layers are linear attention)."""
        return next(layer.attention for layer in self.layers
                    if isinstance(layer.attention, Attention))

    @property
    def is_moe(self) -> bool:
        """True when any layer routes tokens to experts."""
        return any(isinstance(layer.ffn, Moe) for layer in self.layers)

    @property
    def norm_params_per_hidden(self) -> int:
        """Parameters per hidden unit of one norm: 1 (RMSNorm), 2 (LayerNorm)."""
        return 1 if self.norm_kind == "rms" else 2
