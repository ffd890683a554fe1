"""A model's architecture as the estimator sees it: shapes only, no weights.

`ModelSpec` is a per-layer description precise enough to count every parameter of the Hugging Face
implementation exactly (docs/formulas.md, "Parameters"): attention shape (GQA, explicit
head_dim, MLA), biases, q/k norms, gated or plain FFN, mixture-of-experts with router and shared
experts, per-layer sliding windows, norm kind, tied embeddings and learned position tables, and
linear-attention layers (Gated DeltaNet) and Mamba-2 layers that hold a fixed-size state per
sequence instead of a growing KV cache, DeepSeek sparse attention (a lightning indexer whose keys
are cached beside the latent; attention over the indexer's top-k tokens), and DeepSeek-V4's
compressed attention (a sliding window plus one compressed entry per block of tokens).
It is built from a config.json by :mod:`planner.spec.hf_config`;
:mod:`planner.spec.params` counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from planner.spec.quant_scheme import QuantScheme

NormKind = Literal["rms", "layer"]


@dataclass(frozen=True, slots=True)
class Indexer:
    """DeepSeek sparse attention's lightning indexer (``DeepseekV32Indexer``,
    ``GlmMoeDsaIndexer``): ``wq_b`` ``q_lora_rank x h_idx*d_idx``, ``wk`` ``d x d_idx``, a
    LayerNorm on the key (``2*d_idx``), ``weights_proj`` ``d x h_idx``. Its key, ``d_idx``
    elements per token, is cached beside the latent (transformers ``DynamicIndexedLayer``)."""

    num_heads: int
    head_dim: int
    topk: int
    q_lora_rank: int


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
    indexer: Indexer | None = None
    """DeepSeek sparse attention's lightning indexer computed in this layer (``None``: none, or
    one shared from an earlier layer, GLM-5.2's IndexShare)."""
    sparse_topk: int = 0
    """Tokens each query attends to under DeepSeek sparse attention (0: every cached token)."""
    kv_shared: bool = False
    """Keys double as values (Gemma 4's ``attention_k_eq_v`` global layers): no ``v_proj``.
    The cache still holds K and V as two tensors, so the KV elements stay ``2*n_kv*d_h``, in
    transformers and in the engines alike: the cached K is ``k_norm`` + RoPE of the shared
    projection, the cached V ``v_norm`` of it without RoPE, two different tensors. vLLM
    (``models/gemma4.py``: "k_eq_v layers load K weights into both K and V slots of qkv_proj")
    and SGLang (``models/gemma4_causal.py``, ``RadixAttention`` over k and v) both cache them
    apart; no engine stores one tensor for both, so one accounting (stored twice) serves all."""
    v_norm: bool = False

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
        """Cached elements per token in this layer: ``n_kv*(d_h + d_v)`` (K and V; ``2*n_kv*d_h``
        when values are as wide as keys; MiMo-V2's are not), or MLA's latent
        ``kv_lora_rank + qk_rope_head_dim``; plus a sparse-attention indexer's key."""
        indexer = self.indexer.head_dim if self.indexer else 0
        if self.is_mla:
            return self.kv_lora_rank + self.qk_rope_head_dim + indexer
        return self.num_kv_heads * (self.head_dim + self.v_head_dim) + indexer

    @property
    def core_flops_per_pair(self) -> int:
        """FLOPs per (query, key) position pair: ``2*h*d_qk`` for QK^T plus ``2*h*d_v`` for AV.

        For standard attention this is ``4*d_attn`` with ``d_attn = h*d_h`` (docs/formulas.md).
        Under sparse attention these pairs are the top-k ones only (:attr:`sparse_topk`).
        """
        return 2 * self.num_heads * (self.head_dim + self.v_head_dim)

    @property
    def indexer_flops_per_pair(self) -> int:
        """FLOPs per (query, key) pair of the lightning indexer, which scores every cached
        token: ``2*h_idx*d_idx`` (0 without an indexer)."""
        return 2 * self.indexer.num_heads * self.indexer.head_dim if self.indexer else 0

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
    def recurrent_state_elems(self) -> int:
        """Recurrent state elements: ``n_v*d_k*d_v``."""
        return self.num_v_heads * self.head_k_dim * self.head_v_dim

    @property
    def state_elems_per_sequence(self) -> int:
        """Fixed state elements per sequence: ``n_v*d_k*d_v + conv_dim*(kernel - 1)``."""
        return (self.num_v_heads * self.head_k_dim * self.head_v_dim
                + self.conv_dim * (self.conv_kernel - 1))


@dataclass(frozen=True, slots=True)
class CompressedAttention:
    """DeepSeek-V4 attention (``modeling_deepseek_v4.py``, ``DeepseekV4Attention``): shared-KV
    multi-query attention (one ``head_dim`` vector per token is both key and value) over a
    sliding window, plus, when ``compress_ratio > 0``, one compressed entry per block of
    ``compress_ratio`` tokens (HCA, ratio 128) or per 4 tokens with a lightning indexer picking
    the top ``index_topk`` entries (CSA, ratio 4, overlapping windows).

    Projections: ``q_a`` ``d x q_lora``, ``q_b`` ``q_lora x h*d_h``, ``kv`` ``d x d_h``, a grouped
    output ``o_a`` (``o_groups`` groups of ``h*d_h/o_groups -> o_lora``) and ``o_b``
    ``o_groups*o_lora x d``; norms ``q_lora`` and ``d_h``; ``h`` attention sinks. The compressor
    projects ``d -> c*d_h`` twice (kv and gate, ``c`` = 2 for CSA's overlapping series, else 1),
    a ``ratio x c*d_h`` position bias and a ``d_h`` norm; CSA's indexer the same at ``d_idx``
    width plus ``q_b`` ``q_lora x h_idx*d_idx`` and a ``d x h_idx`` scorer.

    Cache per sequence of ``T`` tokens (transformers ``DeepseekV4HCACache``/``CSACache``): the
    window (``w - 1`` tokens of ``d_h``; the pure sliding layers, ratio 0, keep K and V as two
    tensors), ``floor(T/ratio)`` compressed entries of ``d_h`` (+ ``d_idx`` for CSA's indexer)
    and, for CSA, the previous window's overlap slice ``2*4*(d_h + d_idx)`` (kv and gate). The
    buffer of a block still filling (up to ``ratio - 1`` tokens) is transient and empty at a
    multiple of the ratio.
    """

    num_heads: int
    head_dim: int
    q_lora_rank: int
    o_groups: int
    o_lora_rank: int
    compress_ratio: int
    index_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    rope_head_dim: int = 64
    """The rotary part of ``d_h`` (``qk_rope_head_dim``): it fixes vLLM's fp8 entry layout
    (:func:`planner.spec.vllm_cache_layout.v4_entry_bytes`), not transformers' cache."""

    @property
    def is_csa(self) -> bool:
        """Compressed sparse attention: overlapping compression with a lightning indexer."""
        return self.compress_ratio == 4

    @property
    def is_mla(self) -> bool:
        """Not multi-head latent attention (the KV vector is shared, not a latent)."""
        return False

    @property
    def num_kv_heads(self) -> int:
        """One shared KV head."""
        return 1

    @property
    def kv_cache_heads(self) -> int:
        """One shared KV vector per token: replicated under tensor parallelism."""
        return 1

    @property
    def v_head_dim(self) -> int:
        """Values are the keys: ``d_h``."""
        return self.head_dim

    @property
    def window_elems_per_token(self) -> int:
        """Elements per token the sliding window holds: ``d_h`` (K = V), ``2*d_h`` on the
        pure sliding layers, which transformers caches as two tensors."""
        return self.head_dim * (1 if self.compress_ratio else 2)

    @property
    def kv_elems_per_token(self) -> float:
        """Compressed elements per context token: ``(d_h + d_idx)/ratio`` (0 for ratio 0)."""
        if not self.compress_ratio:
            return 0
        elems = self.head_dim + (self.index_head_dim if self.is_csa else 0)
        return elems // self.compress_ratio if elems % self.compress_ratio == 0 \
            else elems / self.compress_ratio

    @property
    def core_flops_per_pair(self) -> int:
        """FLOPs per (query, attended entry) pair: ``2*h*d_h`` for QK^T plus ``2*h*d_h`` for AV."""
        return 4 * self.num_heads * self.head_dim

    @property
    def indexer_flops_per_pair(self) -> int:
        """FLOPs per (query, compressed entry) of the CSA indexer: ``2*h_idx*d_idx``."""
        return 2 * self.index_heads * self.index_head_dim if self.is_csa else 0

    @property
    def state_elems_per_sequence(self) -> int:
        """CSA's carried overlap slice: kv and gate of the last window, ``2*4*(d_h + d_idx)``."""
        return 2 * 4 * (self.head_dim + self.index_head_dim) if self.is_csa else 0


@dataclass(frozen=True, slots=True)
class Mamba2:
    """A Mamba-2 mixer (``NemotronHMamba2Mixer``): ``in_proj`` ``d x (2*I + 2*g*N + H)`` with
    ``I = H*P`` (heads times head dim), a depthwise convolution over ``conv_dim = I + 2*g*N``
    channels (``conv_dim*kernel`` weights + ``conv_dim`` bias with ``use_conv_bias``),
    ``dt_bias``, ``A_log`` and ``D`` (``H`` each), a gated RMSNorm of ``I`` and ``out_proj``
    ``I x d``.

    No KV cache: each sequence holds the SSM state ``H*P*N`` (kept in ``mamba_ssm_cache_dtype``,
    float32 in the published configs) and the convolution's last ``kernel - 1`` inputs
    ``conv_dim*(kernel - 1)`` (transformers stores ``kernel`` columns, vLLM ``kernel - 1``).
    """

    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    conv_kernel: int
    conv_bias: bool = True
    proj_bias: bool = False

    @property
    def inner(self) -> int:
        """``I = H*P``."""
        return self.num_heads * self.head_dim

    @property
    def conv_dim(self) -> int:
        """Channels through the convolution: ``I + 2*g*N``."""
        return self.inner + 2 * self.n_groups * self.state_size

    is_mla = False
    kv_elems_per_token = 0
    core_flops_per_pair = 0
    indexer_flops_per_pair = 0

    @property
    def kv_cache_heads(self) -> int:
        """The state splits over tensor parallelism by heads."""
        return self.num_heads

    @property
    def recurrent_state_elems(self) -> int:
        """SSM state elements: ``H*P*N``."""
        return self.num_heads * self.head_dim * self.state_size

    @property
    def state_elems_per_sequence(self) -> int:
        """``H*P*N + conv_dim*(kernel - 1)``."""
        return self.recurrent_state_elems + self.conv_dim * (self.conv_kernel - 1)


@dataclass(frozen=True, slots=True)
class NoMixer:
    """No token mixer in this layer (a Nemotron-H ``E`` or ``-`` block is an FFN only)."""

    is_mla = False
    kv_elems_per_token = 0
    core_flops_per_pair = 0
    indexer_flops_per_pair = 0
    state_elems_per_sequence = 0
    kv_cache_heads = 1
    num_heads = 0


def keeps_kv(attn: object) -> bool:
    """Whether a layer's token mixer keeps a per-token cache (softmax or compressed
    attention), as opposed to a fixed state (linear attention, Mamba-2) or nothing."""
    return isinstance(attn, (Attention, CompressedAttention))


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
    latent_size: int = 0
    """Experts run in a ``latent_size`` space (Nemotron-3 Super's latent MoE): ``d x latent``
    in and ``latent x d`` out around them, every token (0: experts read the hidden state)."""
    router_extra: int = 0
    """Router parameters beyond ``d x E`` (Gemma 4's ``scale`` ``d`` and per-expert scale ``E``)."""
    dense: Mlp | None = None
    """A dense MLP run beside the experts in the same layer (Gemma 4's MoE layers)."""


@dataclass(frozen=True, slots=True)
class Layer:
    """One decoder layer: attention (softmax or linear), a dense or MoE FFN, its hidden-size norms,
    and the sliding (or chunked) window it attends over (``None`` for full attention)."""

    attention: Attention | LinearAttention | CompressedAttention | Mamba2 | NoMixer
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
    quantization: QuantScheme | None = None
    """How the checkpoint stores its weights, from its ``quantization_config`` (``None``: 16-bit
    weights)."""
    extra_params: int = 0
    """Parameters outside the per-layer blocks' shapes (DeepSeek-V4's hyper-connection mixing
    weights, ``hc_*``), counted in the total and in every token's active set."""
    mtp_layers: int = 0
    """Multi-token-prediction modules the checkpoint ships (``num_nextn_predict_layers``:
    DeepSeek-V3/R1 1, GLM-4.5 1; 0 without): not counted in the layers or the parameters
    (transformers does not instantiate them); speculative decoding by MTP runs them
    (:mod:`planner.formulas.speculative`)."""
    state_recurrent_bits: int = 16
    """Bits of the recurrent (SSM / DeltaNet) state as the config keeps it
    (``mamba_ssm_cache_dtype`` / ``mamba_ssm_dtype``: 32 for float32; 16 otherwise)."""
    state_recurrent_bits_vllm: int = 16
    """Bits vLLM keeps the recurrent state at by default (``--mamba-ssm-cache-dtype auto``):
    for Nemotron-H the config's ``mamba_ssm_cache_dtype``, else float16
    (``NemotronHForCausalLMConfig.verify_and_update_config``,
    ``vllm/model_executor/models/config.py``); for Qwen3.5 the config's ``mamba_ssm_dtype``
    (``Qwen3_5ForConditionalGenerationConfig.verify_and_update_config`` copies it into
    ``mamba_ssm_cache_dtype`` when that is "auto": float32 in the published configs); for
    other Gated DeltaNet models the model dtype
    (``MambaStateDtypeCalculator.gated_delta_net_state_dtype``: "auto" is the conv state's
    dtype): 16."""

    @property
    def num_layers(self) -> int:
        """Decoder layers."""
        return len(self.layers)

    @property
    def attention(self) -> Attention | CompressedAttention:
        """The first softmax-attention block: the model's representative query heads, KV heads
        and head_dim (Qwen3-Next's first layers are linear attention; DeepSeek-V4's is
        compressed attention)."""
        return next((layer.attention for layer in self.layers
                     if isinstance(layer.attention, (Attention, CompressedAttention))),
                    _NO_ATTENTION)

    @property
    def is_moe(self) -> bool:
        """True when any layer routes tokens to experts."""
        return any(isinstance(layer.ffn, Moe) for layer in self.layers)

    @property
    def norm_params_per_hidden(self) -> int:
        """Parameters per hidden unit of one norm: 1 (RMSNorm), 2 (LayerNorm)."""
        return 1 if self.norm_kind == "rms" else 2


_NO_ATTENTION = Attention(num_heads=1, num_kv_heads=1, head_dim=0, v_head_dim=0)
"""What :attr:`ModelSpec.attention` gives for a model without softmax attention."""
