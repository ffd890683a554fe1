"""``config.json`` readers of the text models supported before 2025's architectures (issue 26).

Each reader follows the matching ``transformers`` modeling file (v5.23): which keys it reads, the
defaults its config class applies to absent keys, which projections carry biases, how many norms
a layer has, which layers are sparse, windowed, chunked or linear attention. Exactness is checked
against parameter counts (and, for small configs, the cache) taken from the real implementations
(``scripts/hf_param_counts.py`` → ``tests/fixtures``). Nothing is guessed beyond the defaults the
implementation itself applies. The readers are listed by ``model_type`` in :data:`TEXT_READERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from planner.core.errors import ConfigError
from planner.spec.architecture import (
    Attention,
    Layer,
    LinearAttention,
    Mlp,
    ModelSpec,
    Moe,
)
from planner.spec.hf_reader import (
    ConfigReader,
    Reader,
    dense_or_moe_layers,
    layer_types,
    model_spec,
    plain_attention,
)


def _llama_family(r: ConfigReader, *, qkv_bias: bool, o_bias: bool, qk_norm: bool = False,
                  window: int | None = None, sliding: Callable[[int], bool] = lambda i: True,
                  norms: int = 2, tie_default: bool = False, mlp_bias: bool = False,
                  model_type: str) -> ModelSpec:
    d = r.integer("hidden_size")
    n_layers = r.integer("num_hidden_layers")
    heads = r.integer("num_attention_heads")
    attn = Attention(
        num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=r.head_dim(d, heads),
        v_head_dim=r.head_dim(d, heads), qkv_bias=qkv_bias, o_bias=o_bias, qk_norm=qk_norm,
    )
    mlp = Mlp(r.integer("intermediate_size"), gated=True, bias=mlp_bias)
    windows = r.layer_windows(n_layers, window, sliding)
    layers = tuple(Layer(attn, mlp, norms=norms, sliding_window=w) for w in windows)
    return model_spec(r, model_type, d, layers, tie_default=tie_default)


def _llama(r: ConfigReader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, mlp_bias=r.flag("mlp_bias", False),
                         model_type="llama")


def _mistral(r: ConfigReader) -> ModelSpec:
    # MistralConfig defaults sliding_window to 4096 when the key is absent; null turns it off.
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 4096
    return _llama_family(r, qkv_bias=False, o_bias=False, window=window, model_type="mistral")


def _qwen_windows(r: ConfigReader) -> tuple[int | None, Callable[[int], bool]]:
    """Qwen2/Qwen3: windows only with ``use_sliding_window``, on layers >= ``max_window_layers``."""
    if not r.flag("use_sliding_window", False):
        return None, lambda i: False
    window = r.opt_int("sliding_window")
    first = r.integer("max_window_layers", 28, minimum=0)
    return window, lambda i: i >= first


def _qwen2(r: ConfigReader) -> ModelSpec:
    window, sliding = _qwen_windows(r)
    if window is None:
        r = ConfigReader(r.name, {k: v for k, v in r.cfg.items() if k != "layer_types"})
    return _llama_family(r, qkv_bias=True, o_bias=False, window=window, sliding=sliding,
                         model_type="qwen2")


def _qwen3(r: ConfigReader) -> ModelSpec:
    window, sliding = _qwen_windows(r)
    if window is None:
        r = ConfigReader(r.name, {k: v for k, v in r.cfg.items() if k != "layer_types"})
    bias = r.flag("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, qk_norm=True, window=window,
                         sliding=sliding, model_type="qwen3")


def _gemma(r: ConfigReader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, tie_default=True, model_type="gemma")


def _gemma2(r: ConfigReader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 4096
    # Gemma2Config: even layers (0, 2, ...) are local sliding-window layers.
    return _llama_family(r, qkv_bias=bias, o_bias=bias, window=window,
                         sliding=lambda i: i % 2 == 0, norms=4, tie_default=True,
                         model_type="gemma2")


def _phi3(r: ConfigReader) -> ModelSpec:
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, fused_qkv=True)
    mlp = Mlp(r.integer("intermediate_size"), gated=True, fused_gate_up=True)
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, mlp, sliding_window=window)
                   for _ in range(r.integer("num_hidden_layers")))
    return model_spec(r, "phi3", d, layers, tie_default=False)


def _mixtral(r: ConfigReader) -> ModelSpec:
    d = r.integer("hidden_size")
    attn = plain_attention(r, qkv_bias=False, o_bias=False)
    expert = Mlp(r.integer("intermediate_size"))
    moe = Moe(num_experts=r.integer("num_local_experts", 8),
              top_k=r.integer("num_experts_per_tok", 2),
              expert=expert)
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, moe, sliding_window=window)
                   for _ in range(r.integer("num_hidden_layers")))
    return model_spec(r, "mixtral", d, layers, tie_default=False)


def _qwen_sparse(r: ConfigReader) -> Callable[[int], bool]:
    """Qwen MoE rule: a layer is sparse unless listed in ``mlp_only_layers``, every
    ``decoder_sparse_step``-th layer counting from 1."""
    step = r.integer("decoder_sparse_step", 1)
    dense_only = set(r.int_list("mlp_only_layers"))
    experts = r.integer("num_experts", 0, minimum=0)
    return lambda i: i not in dense_only and experts > 0 and (i + 1) % step == 0


def _qwen2_moe(r: ConfigReader) -> ModelSpec:
    bias = r.flag("qkv_bias", True)
    attn = plain_attention(r, qkv_bias=bias, o_bias=False)
    shared_size = r.integer("shared_expert_intermediate_size", 0, minimum=0)
    moe = Moe(
        num_experts=r.integer("num_experts"), top_k=r.integer("num_experts_per_tok"),
        expert=Mlp(r.integer("moe_intermediate_size")),
        shared=Mlp(shared_size) if shared_size else None, shared_gate=True,
    )
    layers = dense_or_moe_layers(r, attn=attn,
                                 dense=Mlp(r.integer("intermediate_size")), moe=moe,
                                 is_sparse=_qwen_sparse(r))
    return model_spec(r, "qwen2_moe", r.integer("hidden_size"), layers, tie_default=False)


def _qwen3_moe(r: ConfigReader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    attn = plain_attention(r, qkv_bias=bias, o_bias=bias, qk_norm=True)
    moe = Moe(num_experts=r.integer("num_experts"), top_k=r.integer("num_experts_per_tok"),
              expert=Mlp(r.integer("moe_intermediate_size")))
    layers = dense_or_moe_layers(r, attn=attn,
                                 dense=Mlp(r.integer("intermediate_size")), moe=moe,
                                 is_sparse=_qwen_sparse(r))
    return model_spec(r, "qwen3_moe", r.integer("hidden_size"), layers, tie_default=False)


def _deepseek_v3(r: ConfigReader) -> ModelSpec:
    heads = r.integer("num_attention_heads")
    nope = r.integer("qk_nope_head_dim")
    rope = r.integer("qk_rope_head_dim")
    bias = r.flag("attention_bias", False)
    attn = Attention(
        num_heads=heads, num_kv_heads=heads, head_dim=nope + rope,
        v_head_dim=r.integer("v_head_dim"), qkv_bias=bias, o_bias=bias,
        q_lora_rank=r.opt_int("q_lora_rank") or 0, kv_lora_rank=r.integer("kv_lora_rank"),
        qk_rope_head_dim=rope, qk_nope_head_dim=nope,
    )
    expert_size = r.integer("moe_intermediate_size")
    n_shared = r.integer("n_shared_experts", 0, minimum=0)
    moe = Moe(
        num_experts=r.integer("n_routed_experts"), top_k=r.integer("num_experts_per_tok"),
        expert=Mlp(expert_size), shared=Mlp(expert_size * n_shared) if n_shared else None,
    )
    first_dense = r.integer("first_k_dense_replace", 0, minimum=0)
    layers = dense_or_moe_layers(r, attn=attn,
                                 dense=Mlp(r.integer("intermediate_size")), moe=moe,
                                 is_sparse=lambda i: i >= first_dense)
    return model_spec(r, "deepseek_v3", r.integer("hidden_size"), layers, tie_default=False)


def _gpt2(r: ConfigReader) -> ModelSpec:
    d = r.integer("n_embd")
    heads = r.integer("n_head")
    if d % heads:
        raise ConfigError(r.name, "n_head", f"({heads}) must divide n_embd ({d})")
    attn = Attention(num_heads=heads, num_kv_heads=heads, head_dim=d // heads,
                     v_head_dim=d // heads, qkv_bias=True, o_bias=True, fused_qkv=True)
    mlp = Mlp(r.integer("n_inner", 4 * d), gated=False, bias=True)
    layers = tuple(Layer(attn, mlp) for _ in range(r.integer("n_layer")))
    positions = r.integer("n_positions", 1024)
    return ModelSpec(
        name=r.name, model_type="gpt2", hidden_size=d, vocab_size=r.integer("vocab_size"),
        layers=layers, norm_kind="layer",
        tie_word_embeddings=r.flag("tie_word_embeddings", True),
        position_table_size=positions, max_position_embeddings=positions,
    )


def _gpt_neox(r: ConfigReader) -> ModelSpec:
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    if d % heads:
        raise ConfigError(r.name, "num_attention_heads", f"({heads}) must divide hidden_size ({d})")
    bias = r.flag("attention_bias", True)
    attn = Attention(num_heads=heads, num_kv_heads=heads, head_dim=d // heads,
                     v_head_dim=d // heads, qkv_bias=bias, o_bias=bias, fused_qkv=True)
    mlp = Mlp(r.integer("intermediate_size"), gated=False, bias=True)
    layers = tuple(Layer(attn, mlp) for _ in range(r.integer("num_hidden_layers")))
    return model_spec(r, "gpt_neox", d, layers, tie_default=False, norm_kind="layer")


def _falcon(r: ConfigReader) -> ModelSpec:
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    if d % heads:
        raise ConfigError(r.name, "num_attention_heads", f"({heads}) must divide hidden_size ({d})")
    head_dim = d // heads
    new_arch = r.flag("new_decoder_architecture", False)
    parallel = r.flag("parallel_attn", True)
    if new_arch:
        n_kv = r.kv_heads(heads, "num_kv_heads")
    elif r.flag("multi_query", True):
        n_kv = 1
    else:
        n_kv = heads
    bias = r.flag("bias", False)
    attn = Attention(num_heads=heads, num_kv_heads=n_kv, head_dim=head_dim, v_head_dim=head_dim,
                     qkv_bias=bias, o_bias=bias, fused_qkv=True)
    mlp = Mlp(r.integer("ffn_hidden_size", 4 * d), gated=False, bias=bias)
    n_ln = r.opt_int("num_ln_in_parallel_attn")
    if n_ln is None and new_arch:
        n_ln = 2
    norms = 2 if (not parallel or n_ln == 2) else 1
    layers = tuple(Layer(attn, mlp, norms=norms) for _ in range(r.integer("num_hidden_layers")))
    return model_spec(r, "falcon", d, layers, tie_default=True, norm_kind="layer")


def _gemma3_text(r: ConfigReader) -> ModelSpec:
    """Gemma 3 text model (``Gemma3TextConfig``, ``modeling_gemma3.py``): Gemma 2's four norms
    per layer plus per-head q/k RMSNorms; ``head_dim`` defaults to 256. Local layers attend over
    ``sliding_window`` (default 4096) with their own rope base (``rope_local_base_freq``), global
    layers over the whole context: by ``layer_types``, else every ``sliding_window_pattern``-th
    layer (default 6: five local, one global) is global. Rope changes no shape."""
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.integer("head_dim", 256)
    bias = r.flag("attention_bias", False)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=bias, o_bias=bias, qk_norm=True)
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 4096
    if window is not None and r.flag("use_bidirectional_attention", False):
        window = window // 2 + 1  # Gemma3TextConfig.__post_init__
    pattern = r.integer("sliding_window_pattern", 6)
    n_layers = r.integer("num_hidden_layers")
    windows = r.layer_windows(n_layers, window, lambda i: bool((i + 1) % pattern))
    mlp = Mlp(r.integer("intermediate_size"))
    layers = tuple(Layer(attn, mlp, norms=4, sliding_window=w) for w in windows)
    return model_spec(r, "gemma3_text", d, layers, tie_default=True)


def _olmo2(r: ConfigReader) -> ModelSpec:
    """OLMo 2 (``modeling_olmo2.py``): q/k RMSNorms across all heads (``h*d_h``, ``n_kv*d_h``),
    norms after attention and after the MLP only (2 per layer), biases on q/k/v/o with
    ``attention_bias``."""
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    bias = r.flag("attention_bias", False)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=bias, o_bias=bias, qk_norm=True,
                     qk_norm_across_heads=True)
    mlp = Mlp(r.integer("intermediate_size"))
    layers = tuple(Layer(attn, mlp) for _ in range(r.integer("num_hidden_layers")))
    return model_spec(r, "olmo2", d, layers, tie_default=False)


def _glm4_moe(r: ConfigReader) -> ModelSpec:
    """GLM-4.5 / 4.6 (``modeling_glm4_moe.py``): q/k/v biases with ``attention_bias`` (never on
    o), per-head q/k norms with ``use_qk_norm``, the first ``first_k_dense_replace`` layers
    (default 1) dense, the rest ``n_routed_experts`` experts + ``n_shared_experts`` (default 1)
    shared experts; the router's score-correction bias is a buffer. Partial rotary changes no
    shape. The multi-token-prediction layer (``num_nextn_predict_layers``) is not instantiated
    by transformers and not counted."""
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=r.flag("attention_bias", False),
                     qk_norm=r.flag("use_qk_norm", False))
    expert_size = r.integer("moe_intermediate_size")
    n_shared = r.integer("n_shared_experts", 1, minimum=0)
    moe = Moe(num_experts=r.integer("n_routed_experts"), top_k=r.integer("num_experts_per_tok"),
              expert=Mlp(expert_size),
              shared=Mlp(expert_size * n_shared) if n_shared else None)
    first_dense = r.integer("first_k_dense_replace", 1, minimum=0)
    layers = dense_or_moe_layers(r, attn=attn, dense=Mlp(r.integer("intermediate_size")), moe=moe,
                                 is_sparse=lambda i: i >= first_dense)
    return model_spec(r, "glm4_moe", d, layers, tie_default=False)


def _deepseek_v2(r: ConfigReader) -> ModelSpec:
    """DeepSeek-V2 / V2-Lite (``modeling_deepseek_v2.py``): MLA as in V3 (queries through a
    ``q_lora_rank`` bottleneck, or a plain ``q_proj`` when it is null: V2-Lite), experts from
    layer ``first_k_dense_replace`` on, a plain ``d x E`` router (no score-correction bias: V2
    routes greedily or by group-limited greedy top-k). ``q_lora_rank`` absent means the config
    class's 1536; dense MLPs carry biases with ``mlp_bias``."""
    heads = r.integer("num_attention_heads")
    nope = r.integer("qk_nope_head_dim")
    rope = r.integer("qk_rope_head_dim")
    bias = r.flag("attention_bias", False)
    q_lora = r.opt_int("q_lora_rank") if "q_lora_rank" in r.cfg else 1536
    attn = Attention(
        num_heads=heads, num_kv_heads=heads, head_dim=nope + rope,
        v_head_dim=r.integer("v_head_dim"), qkv_bias=bias, o_bias=bias,
        q_lora_rank=q_lora or 0, kv_lora_rank=r.integer("kv_lora_rank"),
        qk_rope_head_dim=rope, qk_nope_head_dim=nope,
    )
    expert_size = r.integer("moe_intermediate_size")
    n_shared = r.integer("n_shared_experts", 2, minimum=0)
    moe = Moe(num_experts=r.integer("n_routed_experts"), top_k=r.integer("num_experts_per_tok"),
              expert=Mlp(expert_size),
              shared=Mlp(expert_size * n_shared) if n_shared else None)
    first_dense = r.integer("first_k_dense_replace", 0, minimum=0)
    dense = Mlp(r.integer("intermediate_size"), bias=r.flag("mlp_bias", False))
    layers = dense_or_moe_layers(r, attn=attn, dense=dense, moe=moe,
                                 is_sparse=lambda i: i >= first_dense)
    return model_spec(r, "deepseek_v2", r.integer("hidden_size"), layers, tie_default=False)


def _phimoe(r: ConfigReader) -> ModelSpec:
    """Phi-3.5-MoE (``modeling_phimoe.py``): LayerNorms with bias, q/k/v/o biases with
    ``attention_bias``, every layer ``num_local_experts`` experts (default 16, top 2), an
    optional bias on the LM head (``lm_head_bias``), an optional ``sliding_window``."""
    d = r.integer("hidden_size")
    bias = r.flag("attention_bias", False)
    attn = plain_attention(r, qkv_bias=bias, o_bias=bias)
    moe = Moe(num_experts=r.integer("num_local_experts", 16),
              top_k=r.integer("num_experts_per_tok", 2),
              expert=Mlp(r.integer("intermediate_size")))
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, moe, sliding_window=window)
                   for _ in range(r.integer("num_hidden_layers")))
    spec = model_spec(r, "phimoe", d, layers, tie_default=False, norm_kind="layer")
    return replace(spec, lm_head_bias=r.flag("lm_head_bias", False))


def _granitemoe(r: ConfigReader) -> ModelSpec:
    """Granite 3.0 MoE (``modeling_granitemoe.py``): every layer ``num_local_experts`` experts
    (default 8, top 2) of width ``intermediate_size``, no shared expert, q/k/v/o biases with
    ``attention_bias``. The embedding/residual/logit multipliers change no shape."""
    d = r.integer("hidden_size")
    bias = r.flag("attention_bias", False)
    attn = plain_attention(r, qkv_bias=bias, o_bias=bias)
    moe = Moe(num_experts=r.integer("num_local_experts", 8),
              top_k=r.integer("num_experts_per_tok", 2),
              expert=Mlp(r.integer("intermediate_size")))
    layers = tuple(Layer(attn, moe) for _ in range(r.integer("num_hidden_layers")))
    return model_spec(r, "granitemoe", d, layers, tie_default=False)


def _gpt_oss(r: ConfigReader) -> ModelSpec:
    """gpt-oss (``modeling_gpt_oss.py``): one learned attention-sink logit per head and layer,
    q/k/v/o biases with ``attention_bias`` (default true), ``head_dim`` default 64, every layer
    ``num_local_experts`` experts with biases (``gate_up_proj_bias`` ``2*f``, ``down_proj_bias``
    ``d``) and a router with a bias. Sliding-window (default 128) and full layers alternate:
    by ``layer_types``, else even layers (0, 2, ...) slide. The MXFP4 storage of the experts is
    a weight format (``quantization_config``), not a shape: counts here are parameters."""
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.integer("head_dim", 64)
    bias = r.flag("attention_bias", True)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=bias, o_bias=bias, sinks=True)
    moe = Moe(num_experts=r.integer("num_local_experts"), top_k=r.integer("num_experts_per_tok"),
              expert=Mlp(r.integer("intermediate_size"), bias=True), router_bias=True)
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 128
    windows = r.layer_windows(r.integer("num_hidden_layers"), window, lambda i: i % 2 == 0)
    layers = tuple(Layer(attn, moe, sliding_window=w) for w in windows)
    return model_spec(r, "gpt_oss", d, layers, tie_default=False)


def _llama4_text(r: ConfigReader) -> ModelSpec:
    """Llama 4 text model (``Llama4TextConfig``, ``modeling_llama4.py``): MoE layers at
    ``moe_layers`` (else every ``interleave_moe_layer_step``-th layer, counting from 1), each
    ``num_local_experts`` routed experts of width ``intermediate_size`` plus one always-on
    shared expert of the same width; the other layers dense of width ``intermediate_size_mlp``.
    Attention is chunked on rope layers (``layer_types`` ``chunked_attention``, by default
    every layer but each ``no_rope_layer_interval``-th): a token attends within its
    ``attention_chunk_size`` chunk, so a sequence holds at most that many tokens of KV in those
    layers (modelled as a window of that size). The L2 q/k norm has no weights."""
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.integer("head_dim", 128)
    bias = r.flag("attention_bias", False)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=bias, o_bias=bias)
    n_layers = r.integer("num_hidden_layers")
    step = r.integer("interleave_moe_layer_step", 1)
    moe_layers = set(r.int_list("moe_layers")) if r.cfg.get("moe_layers") is not None \
        else set(range(step - 1, n_layers, step))
    width = r.integer("intermediate_size")
    moe = Moe(num_experts=r.integer("num_local_experts", 16),
              top_k=r.integer("num_experts_per_tok", 1),
              expert=Mlp(width), shared=Mlp(width))
    dense = Mlp(r.integer("intermediate_size_mlp", 16384))
    interval = r.integer("no_rope_layer_interval", 4)
    no_rope = r.int_list("no_rope_layers") or [int((i + 1) % interval != 0)
                                                for i in range(n_layers)]
    types = layer_types(r, n_layers, ("chunked_attention", "full_attention"),
                        lambda i: "chunked_attention" if no_rope[i] else "full_attention")
    chunk = r.opt_int("attention_chunk_size") if "attention_chunk_size" in r.cfg else 8192
    layers = tuple(
        Layer(attn, moe if i in moe_layers else dense,
              sliding_window=chunk if t == "chunked_attention" else None)
        for i, t in enumerate(types))
    return model_spec(r, "llama4_text", d, layers, tie_default=False)


def gated_deltanet_hybrid(r: ConfigReader, *, output_gate: bool
                          ) -> tuple[Attention, LinearAttention, list[str]]:
    """The mixers of Qwen's Gated DeltaNet hybrids (Qwen3-Next, Qwen3.5) and which layer has
    which: gated full attention (per-head q/k norms, ``head_dim`` default 256), Gated DeltaNet
    linear attention (value heads a multiple of key heads), and the layer types by
    ``layer_types``, else every ``full_attention_interval``-th layer (default 4) full."""
    heads = r.integer("num_attention_heads")
    head_dim = r.integer("head_dim", 256)
    bias = r.flag("attention_bias", False)
    full = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=bias, o_bias=bias, qk_norm=True,
                     output_gate=output_gate)
    n_k, n_v = r.integer("linear_num_key_heads", 16), r.integer("linear_num_value_heads", 32)
    if n_v % n_k:
        raise ConfigError(r.name, "linear_num_value_heads",
                          f"({n_v}) must be a multiple of linear_num_key_heads ({n_k})")
    linear = LinearAttention(num_k_heads=n_k, num_v_heads=n_v,
                             head_k_dim=r.integer("linear_key_head_dim", 128),
                             head_v_dim=r.integer("linear_value_head_dim", 128),
                             conv_kernel=r.integer("linear_conv_kernel_dim", 4))
    n_layers = r.integer("num_hidden_layers")
    interval = r.integer("full_attention_interval", 4)
    types = layer_types(r, n_layers, ("linear_attention", "full_attention"),
                        lambda i: "linear_attention" if (i + 1) % interval else "full_attention")
    return full, linear, list(types)


def _qwen3_next(r: ConfigReader) -> ModelSpec:
    """Qwen3-Next (``modeling_qwen3_next.py``): a hybrid of Gated DeltaNet linear-attention
    layers (fixed state per sequence, :class:`LinearAttention`) and gated full-attention layers
    (per-head q/k norms, a query projection that also emits an output gate, ``head_dim``
    default 256): by ``layer_types``, else every ``full_attention_interval``-th layer (default
    4) is full attention. FFNs follow Qwen's MoE rule (``decoder_sparse_step``,
    ``mlp_only_layers``) with a shared expert and its sigmoid gate (the gate exists even when
    ``shared_expert_intermediate_size`` is 0)."""
    d = r.integer("hidden_size")
    full, linear, types = gated_deltanet_hybrid(r, output_gate=True)
    shared_size = r.integer("shared_expert_intermediate_size", 512, minimum=0)
    moe = Moe(num_experts=r.integer("num_experts", 512), top_k=r.integer("num_experts_per_tok", 10),
              expert=Mlp(r.integer("moe_intermediate_size", 512)), shared=Mlp(shared_size),
              shared_gate=True)
    dense = Mlp(r.integer("intermediate_size"))
    sparse = _qwen_sparse(r)
    layers = tuple(Layer(full if t == "full_attention" else linear, moe if sparse(i) else dense)
                   for i, t in enumerate(types))
    return model_spec(r, "qwen3_next", d, layers, tie_default=False)


TEXT_READERS: dict[str, Reader] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "qwen2_moe": _qwen2_moe,
    "qwen3": _qwen3,
    "qwen3_moe": _qwen3_moe,
    "gemma": _gemma,
    "gemma2": _gemma2,
    "phi3": _phi3,
    "gpt2": _gpt2,
    "gpt_neox": _gpt_neox,
    "falcon": _falcon,
    "deepseek_v3": _deepseek_v3,
    "gemma3_text": _gemma3_text,
    "olmo2": _olmo2,
    "glm4_moe": _glm4_moe,
    "deepseek_v2": _deepseek_v2,
    "phimoe": _phimoe,
    "granitemoe": _granitemoe,
    "gpt_oss": _gpt_oss,
    "llama4_text": _llama4_text,
    "qwen3_next": _qwen3_next,
}
"""The readers of this module by ``model_type``, in the order they were added."""
