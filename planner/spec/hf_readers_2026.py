"""``config.json`` readers for the architectures of 2025–2026 (issue 26), after transformers 5.23.

Why a module of its own: :mod:`planner.spec.hf_config` holds the reader machinery and the
older architectures; these readers add sparse attention (a lightning indexer whose keys are cached
beside the MLA latent), DeepSeek-V4's compressed attention, Gated-DeltaNet and Mamba-2 hybrids,
and the multimodal wrappers whose text models they are. Each reader follows its transformers
modeling file (``models/<type>/modeling_<type>.py``, v5.23) and its config class's defaults; the
counts and caches were checked on the published configs by ``scripts/hf_counts_2026.py``
(``tests/fixtures/hf_counts_2026.json``).

The readers are listed in :data:`READERS_2026`; :mod:`planner.spec.hf_config` adds them to
its registry (this module imports the reader machinery, never the registry). Their vision towers
are in :mod:`planner.spec.hf_readers_vision`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from planner.core.errors import ConfigError
from planner.spec.architecture import (
    Attention,
    Layer,
    Mamba2,
    Mlp,
    ModelSpec,
    Moe,
    NoMixer,
)
from planner.spec.hf_reader import (
    MAX_LAYERS,
    ConfigReader,
    experts_per_token,
    layer_types,
    model_spec,
    name_list,
    state_bits,
    sub_config,
)
from planner.spec.hf_readers_dsa import deepseek_v4, deepseek_v32, glm_moe_dsa
from planner.spec.hf_readers_text import TEXT_READERS, gated_deltanet_hybrid
from planner.spec.hf_readers_vision import (
    gemma4_vision_params,
    kimi_vision_params,
    multimodal,
    qwen3_5_vision_params,
)


# ------------------------------------------------------------- Qwen3.5: Gated DeltaNet hybrids
def _qwen3_5_text(r: ConfigReader, *, moe: bool) -> ModelSpec:
    """Qwen3.5 text model (``modeling_qwen3_5.py`` / ``modeling_qwen3_5_moe.py``): Qwen3-Next's
    layout (Gated DeltaNet layers between gated full-attention layers, by ``layer_types`` or
    every ``full_attention_interval``-th layer) with a dense SwiGLU FFN (``qwen3_5_text``) or
    ``num_experts`` experts plus a gated shared expert in every layer (``qwen3_5_moe_text``).
    The DeltaNet recurrent state is kept in ``mamba_ssm_dtype`` (float32 in the published
    configs; vLLM's default takes it too, ``Qwen3_5ForConditionalGenerationConfig``), the
    convolution window in the model dtype."""
    d = r.integer("hidden_size")
    full, linear, types = gated_deltanet_hybrid(
        r, output_gate=r.flag("attn_output_gate", True))
    if moe:
        shared = r.integer("shared_expert_intermediate_size", 512, minimum=0)
        ffn: Mlp | Moe = Moe(
            num_experts=r.integer("num_experts", 256),
            top_k=experts_per_token(r, "num_experts_per_tok", "num_experts", 8),
            expert=Mlp(r.integer("moe_intermediate_size", 512)),
            shared=Mlp(shared) if shared else None, shared_gate=True)
    else:
        ffn = Mlp(r.integer("intermediate_size"))
    layers = tuple(Layer(full if t == "full_attention" else linear, ffn) for t in types)
    kind = "qwen3_5_moe_text" if moe else "qwen3_5_text"
    spec = model_spec(r, kind, d, layers, tie_default=False)
    bits = state_bits(r, "mamba_ssm_dtype")  # vLLM copies it into mamba_ssm_cache_dtype
    return replace(spec, state_recurrent_bits=bits, state_recurrent_bits_vllm=bits)


def _qwen3_5_dense(r: ConfigReader) -> ModelSpec:
    """``qwen3_5_text``: the dense Qwen3.5 text model."""
    return _qwen3_5_text(r, moe=False)


def _qwen3_5_moe_text(r: ConfigReader) -> ModelSpec:
    """``qwen3_5_moe_text``: the MoE Qwen3.5 text model."""
    return _qwen3_5_text(r, moe=True)


def _qwen3_5(r: ConfigReader) -> ModelSpec:
    """Qwen3.5 dense (``Qwen3_5ForConditionalGeneration``): text model and vision tower."""
    return multimodal(r, model_type="qwen3_5", text_default="qwen3_5_text",
                      text_readers={"qwen3_5_text": _qwen3_5_dense},
                      vision=qwen3_5_vision_params)


def _qwen3_5_moe(r: ConfigReader) -> ModelSpec:
    """Qwen3.5 MoE (``Qwen3_5MoeForConditionalGeneration``): text model and vision tower."""
    return multimodal(r, model_type="qwen3_5_moe", text_default="qwen3_5_moe_text",
                      text_readers={"qwen3_5_moe_text": _qwen3_5_moe_text},
                      vision=qwen3_5_vision_params)


# ------------------------------------------------------------------ Nemotron-H (Mamba-2 hybrid)
_NEMOTRON_BLOCKS = {"M": "mamba", "E": "moe", "*": "attention", "-": "mlp"}


_NEMOTRON_TYPES = {"linear_attention": "mamba", "moe": "moe", "full_attention": "attention",
                   "mlp": "mlp", "mamba": "mamba", "attention": "attention"}


def _nemotron_blocks(r: ConfigReader) -> list[str]:
    """Each block's kind (mamba, moe, attention, mlp): one per character of
    ``hybrid_override_pattern``, else as ``layers_block_type`` (or ``layer_types``) lists
    them; at most :data:`MAX_LAYERS`."""
    pattern = r.cfg.get("hybrid_override_pattern")
    if pattern is not None:
        if not isinstance(pattern, str) or not pattern or set(pattern) - set(_NEMOTRON_BLOCKS):
            raise ConfigError(r.name, "hybrid_override_pattern",
                              "must be a string of M (Mamba-2), E (MoE), * (attention) and "
                              "- (MLP) blocks")
        kinds = [_NEMOTRON_BLOCKS[c] for c in pattern]
    else:
        listed = r.cfg.get("layers_block_type") or r.cfg.get("layer_types")
        if not isinstance(listed, list) or not listed or any(
                t not in _NEMOTRON_TYPES for t in listed):
            raise ConfigError(r.name, "hybrid_override_pattern", "is required (or "
                              "layers_block_type listing mamba, moe, attention, mlp blocks)")
        kinds = [_NEMOTRON_TYPES[t] for t in listed]
    if len(kinds) > MAX_LAYERS:
        raise ConfigError(r.name, "hybrid_override_pattern",
                          f"must have at most {MAX_LAYERS:,} blocks")
    return kinds


def _nemotron_h(r: ConfigReader) -> ModelSpec:
    """NVIDIA Nemotron-H / Nemotron-3 (``modeling_nemotron_h.py``): one block per character of
    ``hybrid_override_pattern`` (``M`` Mamba-2, ``E`` MoE, ``*`` attention, ``-`` MLP; or
    ``layers_block_type``), each with one RMSNorm. Attention: GQA without norms. MoE: routed
    experts and shared experts as two-matrix relu² MLPs, a ``d x E`` router; with
    ``moe_latent_size`` the experts run in that latent width between ``d x latent`` and
    ``latent x d`` projections (Nemotron-3 Super). The MTP block is not built by transformers."""
    d = r.integer("hidden_size")
    kinds = _nemotron_blocks(r)
    heads = r.integer("num_attention_heads", 32)
    head_dim = r.integer("head_dim", 128)
    bias = r.flag("attention_bias", False)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=bias, o_bias=bias)
    mamba = Mamba2(num_heads=r.integer("mamba_num_heads", 128),
                   head_dim=r.integer("mamba_head_dim", 64),
                   state_size=r.integer("ssm_state_size", 128), n_groups=r.integer("n_groups", 8),
                   conv_kernel=r.integer("conv_kernel", 4), conv_bias=r.flag("use_conv_bias", True),
                   proj_bias=r.flag("mamba_proj_bias", False))
    mlp_bias = r.flag("mlp_bias", False)
    none = Mlp(0, gated=False)
    shared_n = r.integer("n_shared_experts", 1, minimum=0)
    shared = Mlp(r.integer("moe_shared_expert_intermediate_size", 7688) * shared_n, gated=False,
                 bias=mlp_bias) if shared_n else None
    moe = Moe(num_experts=r.integer("n_routed_experts", 8),
              top_k=experts_per_token(r, "num_experts_per_tok", "n_routed_experts", 2),
              expert=Mlp(r.integer("moe_intermediate_size", 7688), gated=False, bias=mlp_bias),
              shared=shared, latent_size=r.opt_int("moe_latent_size") or 0)
    dense = Mlp(r.integer("intermediate_size", 21504), gated=False, bias=mlp_bias)
    block: dict[str, tuple[Attention | Mamba2 | NoMixer, Mlp | Moe]] = {
        "mamba": (mamba, none), "moe": (NoMixer(), moe), "attention": (attn, none),
        "mlp": (NoMixer(), dense)}
    layers = tuple(Layer(*block[k], norms=1) for k in kinds)
    spec = ModelSpec(
        name=r.name, model_type="nemotron_h", hidden_size=d, vocab_size=r.integer("vocab_size"),
        layers=layers, tie_word_embeddings=r.flag("tie_word_embeddings", False),
        max_position_embeddings=r.integer("max_position_embeddings", 4096),
        state_recurrent_bits=state_bits(r, "mamba_ssm_cache_dtype") if "mamba_ssm_cache_dtype"
        in r.cfg else 32,
        state_recurrent_bits_vllm=state_bits(r, "mamba_ssm_cache_dtype"))
    return spec


# --------------------------------------------------------------------- MiniMax-M2, MiMo-V2
def _minimax_m2(r: ConfigReader) -> ModelSpec:
    """MiniMax-M2 / M2.5 / M2.7 (``modeling_minimax_m2.py``): GQA with q/k RMSNorms over the
    whole projection (``qk_norm_type`` per_layer: ``h*d_h`` and ``n_kv*d_h``), every layer
    ``num_local_experts`` experts (no shared expert), a ``d x E`` router (the routing bias is a
    buffer). ``rotary_dim`` (partial rotary) changes no shape; MTP modules are not built."""
    d, heads = r.integer("hidden_size"), r.integer("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    qk_norm = r.flag("use_qk_norm", True)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qk_norm=qk_norm,
                     qk_norm_across_heads=r.cfg.get("qk_norm_type", "per_layer") == "per_layer")
    moe = Moe(num_experts=r.integer("num_local_experts"),
              top_k=experts_per_token(r, "num_experts_per_tok", "num_local_experts"),
              expert=Mlp(r.integer("intermediate_size")))
    n = r.integer("num_hidden_layers")
    window = r.opt_int("sliding_window")
    kinds = r.cfg.get("attn_type_list")
    if kinds is not None and (not isinstance(kinds, list) or len(kinds) != n
                              or any(k not in (0, 1) for k in kinds)):
        raise ConfigError(r.name, "attn_type_list", f"must list 0 (sliding) or 1 (full) for "
                          f"each of the {n} layers")
    if kinds and 0 in kinds and window is None:
        raise ConfigError(r.name, "sliding_window", "is required when attn_type_list has "
                          "sliding (0) layers")
    layers = tuple(Layer(attn, moe, sliding_window=window if kinds and kinds[i] == 0 else None)
                   for i in range(n))
    return model_spec(r, "minimax_m2", d, layers, tie_default=False)


def _mimo_layout(r: ConfigReader, n: int) -> tuple[list[str], list[str]]:
    """MiMo-V2-Flash's attention and FFN type per layer as transformers 5.23 builds them
    (``layer_types``, ``mlp_layer_types``, else its config class's rule); the published
    ``hybrid_layer_pattern`` and ``moe_layer_freq`` are refused where they disagree."""
    types = layer_types(r, n, ("full_attention", "sliding_attention"),
                        lambda i: "full_attention" if i == 0 or (i + 1) % 6 == 0
                        else "sliding_attention")
    mlp_types = name_list(r, "mlp_layer_types", n, ("dense", "sparse"),
                          lambda i: "dense" if i == 0 else "sparse")
    pattern = r.cfg.get("hybrid_layer_pattern")
    if pattern is not None and pattern != [int(t == "sliding_attention") for t in types]:
        raise ConfigError(r.name, "hybrid_layer_pattern", "disagrees with the layer types "
                          "transformers 5.23 builds (full on layer 0 and every 6th layer)")
    freq = r.cfg.get("moe_layer_freq")
    if isinstance(freq, list) and freq != [int(t == "sparse") for t in mlp_types]:
        raise ConfigError(r.name, "moe_layer_freq", "disagrees with the FFN types "
                          "transformers 5.23 builds (dense on layer 0, experts after)")
    return types, mlp_types


def _mimo_v2_flash(r: ConfigReader) -> ModelSpec:
    """Xiaomi MiMo-V2-Flash as transformers 5.23 builds it (``MiMoV2FlashConfig``,
    ``modeling_mimo_v2_flash.py``): layers by ``layer_types``, else full attention on layer 0
    and every 6th layer, sliding-window attention elsewhere; sliding layers have twice
    ``num_key_value_heads`` and a learned attention sink per head; q/k use ``head_dim``, values
    ``v_head_dim``; the window is ``sliding_window_size + 1`` (the reference SGLang code attends
    to that many previous tokens plus the query), else ``sliding_window`` (default 129). FFNs by
    ``mlp_layer_types``, else dense on layer 0 and ``n_routed_experts`` experts after (a
    ``d x E`` router, no shared expert). The published file's own layout keys
    (``hybrid_layer_pattern``, ``moe_layer_freq``, ``swa_*``) are not read by transformers;
    where one disagrees with what it builds, the config is refused naming the key."""
    d, n = r.integer("hidden_size"), r.integer("num_hidden_layers")
    heads = r.integer("num_attention_heads", 64)
    kv = r.kv_heads(heads)
    head_dim, v_dim = r.integer("head_dim", 192), r.integer("v_head_dim", 128)
    if heads % (2 * kv):
        raise ConfigError(r.name, "num_key_value_heads", f"({kv}) doubled on sliding layers "
                          f"must divide num_attention_heads ({heads})")
    bias = r.flag("attention_bias", False)
    full = Attention(num_heads=heads, num_kv_heads=kv, head_dim=head_dim, v_head_dim=v_dim,
                     qkv_bias=bias)
    swa = replace(full, num_kv_heads=2 * kv, sinks=True)
    for key, built in (("swa_num_attention_heads", heads), ("swa_num_key_value_heads", 2 * kv),
                       ("swa_head_dim", head_dim), ("swa_v_head_dim", v_dim)):
        if r.cfg.get(key) is not None and r.cfg.get(key) != built:
            raise ConfigError(r.name, key, f"is {r.cfg.get(key)!r}, but transformers 5.23 "
                              f"builds {built} (from the unprefixed keys)")
    types, mlp_types = _mimo_layout(r, n)
    size = r.opt_int("sliding_window_size")
    window = size + 1 if size is not None else r.integer("sliding_window", 129)
    moe = Moe(num_experts=r.integer("n_routed_experts", 256),
              top_k=experts_per_token(r, "num_experts_per_tok", "n_routed_experts", 8),
              expert=Mlp(r.integer("moe_intermediate_size", 2048)))
    dense = Mlp(r.integer("intermediate_size", 16384))
    layers = tuple(Layer(swa if t == "sliding_attention" else full,
                         moe if m == "sparse" else dense,
                         sliding_window=window if t == "sliding_attention" else None)
                   for t, m in zip(types, mlp_types, strict=True))
    return model_spec(r, "mimo_v2_flash", d, layers, tie_default=False)


# ----------------------------------------------------------------------------------- Gemma 4
def _gemma4_text(r: ConfigReader) -> ModelSpec:
    """Gemma 4 text model (``modeling_gemma4.py``): local layers (``head_dim``,
    ``num_key_value_heads``, window ``sliding_window``) and global layers (``global_head_dim``,
    ``num_global_key_value_heads``; with ``attention_k_eq_v`` no ``v_proj``: keys double as
    values, yet transformers caches both), per-head q/k RMSNorms, four norms per layer (seven
    with the MoE block: the experts' own pre/post norms). With ``enable_moe_block`` every layer
    runs the dense MLP and ``num_experts`` experts (``top_k_experts``) side by side; the router
    has ``scale`` (``d``) and ``per_expert_scale`` (``E``) beside its ``d x E`` projection.
    Per-layer input embeddings (``hidden_size_per_layer_input``) and shared-KV layers are not
    in the published 26B/31B configs and are refused."""
    d, heads = r.integer("hidden_size"), r.integer("num_attention_heads")
    if r.integer("hidden_size_per_layer_input", 0, minimum=0):
        raise ConfigError(r.name, "hidden_size_per_layer_input", "must be 0: per-layer input "
                          "embeddings (Gemma 4 E2B/E4B) are not supported")
    if r.integer("num_kv_shared_layers", 0, minimum=0):
        raise ConfigError(r.name, "num_kv_shared_layers", "must be 0: layers sharing another "
                          "layer's KV cache are not supported")
    bias = r.flag("attention_bias", False)
    local = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads),
                      head_dim=r.integer("head_dim", 256), v_head_dim=r.integer("head_dim", 256),
                      qkv_bias=bias, o_bias=bias, qk_norm=True)
    k_eq_v = r.flag("attention_k_eq_v", False)
    global_kv = r.kv_heads(heads, "num_global_key_value_heads") if k_eq_v and r.cfg.get(
        "num_global_key_value_heads") is not None else local.num_kv_heads
    global_dim = r.integer("global_head_dim", local.head_dim)
    glob = replace(local, num_kv_heads=global_kv, head_dim=global_dim, v_head_dim=global_dim,
                   kv_shared=k_eq_v)
    window = r.integer("sliding_window", 512)
    if r.cfg.get("use_bidirectional_attention") == "all":
        window = window // 2 + 1  # Gemma4TextConfig.__post_init__
    n = r.integer("num_hidden_layers")
    types = layer_types(r, n, ("full_attention", "sliding_attention"),
                        lambda i: "sliding_attention" if (i + 1) % 6
                        else "full_attention")
    mlp = Mlp(r.integer("intermediate_size"), fused_gate_up=False)
    ffn: Mlp | Moe = mlp
    norms = 4
    if r.flag("enable_moe_block", False):
        experts = r.integer("num_experts")
        size = r.opt_int("moe_intermediate_size") or r.integer("expert_intermediate_size")
        ffn = Moe(num_experts=experts, top_k=experts_per_token(r, "top_k_experts", "num_experts"),
                  expert=Mlp(size), router_extra=d + experts, dense=mlp)
        norms = 7
    layers = tuple(Layer(local if t == "sliding_attention" else glob, ffn, norms=norms,
                         sliding_window=window if t == "sliding_attention" else None)
                   for t in types)
    return model_spec(r, "gemma4_text", d, layers, tie_default=True)


def _gemma4(r: ConfigReader) -> ModelSpec:
    """Gemma 4 (``Gemma4ForConditionalGeneration``): the Gemma 4 text model and its vision
    tower (an ``audio_config``, when given, is not counted)."""
    return multimodal(r, model_type="gemma4", text_default="gemma4_text",
                      text_readers={"gemma4_text": _gemma4_text}, vision=gemma4_vision_params)


def _kimi_k25(r: ConfigReader) -> ModelSpec:
    """Kimi-K2.5 (``KimiK25ForConditionalGeneration``): its ``text_config`` (``model_type``
    ``kimi_k2``) is DeepSeek-V3 (transformers 5.23 maps it to ``DeepseekV3Config``) and its
    int4 ``quantization_config`` sits inside ``text_config``; the MoonViT tower is counted
    apart."""
    text = dict(sub_config(r, "text_config"))
    if text.get("model_type") in (None, "kimi_k2"):
        text["model_type"] = "deepseek_v3"
    cfg = {**r.cfg, "text_config": text,
           "tie_word_embeddings": r.flag("tie_word_embeddings", True)}  # Kimi_K25Config's
    projection = r.integer("projection_hidden_size", 1152)
    spec = multimodal(ConfigReader(r.name, cfg), model_type="kimi_k25",
                      text_default="deepseek_v3",
                      text_readers={"deepseek_v3": TEXT_READERS["deepseek_v3"]},
                      vision=lambda v, d: kimi_vision_params(v, d, projection))
    spec = replace(spec, model_type="kimi_k25")
    if spec.quantization is None and isinstance(text.get("quantization_config"), Mapping):
        # lazy: only for a Kimi config whose text_config holds the quantization_config
        from planner.spec.quant_config import quant_from_config
        scheme = quant_from_config(text, r.name)
        spec = replace(spec, quantization=scheme) if scheme else spec
    return spec


def _kimi_k2(r: ConfigReader) -> ModelSpec:
    """Kimi-K2 (``model_type`` ``kimi_k2`` at the top level, moonshotai/Kimi-K2-Instruct):
    transformers 5.23 has no class for it outside Kimi-K2.5's wrapper, where it maps the same
    config to ``DeepseekV3Config``; it is read the same way here (DeepSeek-V3's reader)."""
    return replace(TEXT_READERS["deepseek_v3"](r), model_type="kimi_k2")


READERS_2026: dict[str, Callable[[ConfigReader], ModelSpec]] = {
    "deepseek_v32": deepseek_v32,
    "glm_moe_dsa": glm_moe_dsa,
    "deepseek_v4": deepseek_v4,
    "qwen3_5_text": _qwen3_5_dense,
    "qwen3_5_moe_text": _qwen3_5_moe_text,
    "qwen3_5": _qwen3_5,
    "qwen3_5_moe": _qwen3_5_moe,
    "nemotron_h": _nemotron_h,
    "minimax_m2": _minimax_m2,
    "mimo_v2_flash": _mimo_v2_flash,
    "gemma4_text": _gemma4_text,
    "gemma4": _gemma4,
    "kimi_k25": _kimi_k25,
    "kimi_k2": _kimi_k2,
}
"""The readers of the 2025-2026 architectures by ``model_type`` (the DeepSeek sparse-attention
family from :mod:`planner.spec.hf_readers_dsa`)."""
