"""Hugging Face ``config.json`` → :class:`ModelSpec`, one reader per supported ``model_type``.

Each reader follows the matching ``transformers`` modeling file (v5.23): which keys it reads, the
defaults its config class applies to absent keys, which projections carry biases, how many norms a
layer has, which layers are sparse, windowed, chunked or linear attention. Exactness is checked
against parameter counts (and, for small configs, the cache) taken from the real implementations
(``scripts/hf_param_counts.py`` → ``tests/fixtures``). Multimodal checkpoints (gemma3, llava,
qwen2_5_vl, llama4) are read as their text model plus the vision tower's parameter count.

A missing key that the implementation would need, or a value of the wrong kind, raises
:class:`ConfigError` naming the key; an unknown ``model_type`` lists the supported ones. Nothing is
guessed beyond the defaults the implementation itself applies.

Every integer is bounded (:data:`MAX_SIZE`, :data:`MAX_LAYERS`, :data:`MAX_POSITIONS`) and so is
the parameter count of the result (:data:`MAX_PARAMS`): a config claiming ``vocab_size`` 10^30
is refused here, naming the key, instead of overflowing a database column or building a
billion-layer tuple.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from planner.errors import ConfigError
from planner.estimator.architecture import (
    Attention,
    Layer,
    LinearAttention,
    Mlp,
    ModelSpec,
    Moe,
)
from planner.estimator.params import count_params
from planner.estimator.quant_config import quant_from_config

Config = Mapping[str, Any]
_MISSING = object()

MAX_SIZE = 2**24
"""Largest width, head count, vocabulary or expert count accepted (16,777,216: far above any
published model, and every figure derived from such sizes fits a 64-bit integer)."""
MAX_LAYERS = 10_000
"""Most layers a config may declare (one :class:`Layer` is built for each)."""
MAX_POSITIONS = 2**31 - 1
"""Largest position count or window (``max_position_embeddings``, ``sliding_window``, …)."""
MAX_PARAMS = 10**15
"""Most parameters a model may have (a quadrillion)."""
_LAYER_KEYS = frozenset({"num_hidden_layers", "n_layer", "max_window_layers",
                         "first_k_dense_replace", "decoder_sparse_step"})
_POSITION_KEYS = frozenset({"max_position_embeddings", "n_positions", "sliding_window"})


def maximum_of(key: str) -> int:
    """The largest value the integer config key ``key`` may take."""
    if key in _LAYER_KEYS:
        return MAX_LAYERS
    if key in _POSITION_KEYS:
        return MAX_POSITIONS
    return MAX_SIZE


class _Reader:
    """Typed access to a config dict with errors that name the key."""

    def __init__(self, name: str, cfg: Config) -> None:
        self.name = name
        self.cfg = cfg

    def integer(self, key: str, default: Any = _MISSING, *, minimum: int = 1) -> int:
        value = self.cfg.get(key, None)
        if value is None:
            if default is _MISSING:
                raise ConfigError(self.name, key, "is required for this model_type but missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(self.name, key, f"must be an integer, got {_short(value)}")
        if value < minimum:
            raise ConfigError(self.name, key, f"must be at least {minimum} (an integer from "
                              f"{minimum} to {maximum_of(key):,}), got {value}")
        if value > maximum_of(key):
            raise ConfigError(self.name, key, f"must be at most {maximum_of(key):,}, got "
                              f"{_short(value)}")
        return value

    def opt_int(self, key: str, *, minimum: int = 1) -> int | None:
        """An integer key that may be absent or null (meaning 'off')."""
        if self.cfg.get(key) is None:
            return None
        return self.integer(key, minimum=minimum)

    def flag(self, key: str, default: bool) -> bool:
        value = self.cfg.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self.name, key, f"must be true or false, got {_short(value)}")
        return value

    def int_list(self, key: str) -> list[int]:
        value = self.cfg.get(key) or []
        if (not isinstance(value, list) or len(value) > MAX_LAYERS
                or not all(isinstance(v, int) and not isinstance(v, bool)
                           and 0 <= v <= MAX_LAYERS for v in value)):
            raise ConfigError(self.name, key, f"must be a list of at most {MAX_LAYERS:,} "
                              f"layer numbers from 0 to {MAX_LAYERS:,}, got "
                              f"{_short(value)}")
        return value

    def head_dim(self, hidden: int, heads: int) -> int:
        """Explicit ``head_dim`` when given, else ``hidden_size / num_attention_heads`` exactly."""
        explicit = self.opt_int("head_dim")
        if explicit is not None:
            return explicit
        if hidden % heads:
            raise ConfigError(
                self.name, "head_dim",
                f"is missing and hidden_size {hidden} is not divisible by {heads} heads",
            )
        return hidden // heads

    def kv_heads(self, heads: int, key: str = "num_key_value_heads") -> int:
        """KV heads; absent or null means multi-head attention (= query heads)."""
        n_kv = self.opt_int(key)
        n_kv = heads if n_kv is None else n_kv
        if heads % n_kv:
            raise ConfigError(self.name, key, f"({n_kv}) must divide num_attention_heads ({heads})")
        return n_kv

    def layer_windows(self, n_layers: int, window: int | None,
                      default_sliding: Callable[[int], bool]) -> list[int | None]:
        """Per-layer sliding window: from ``layer_types`` when the config lists them, else from the
        architecture's own rule."""
        types = self.cfg.get("layer_types")
        if types is not None:
            if not isinstance(types, list) or len(types) != n_layers:
                raise ConfigError(self.name, "layer_types",
                                  f"must list one type for each of the {n_layers} layers")
            allowed = {"full_attention", "sliding_attention"}
            bad = sorted({t for t in types if t not in allowed})
            if bad:
                raise ConfigError(self.name, "layer_types", f"has unsupported entries {bad}")
            if window is None and "sliding_attention" in types:
                raise ConfigError(self.name, "sliding_window",
                                  "is required when layer_types has sliding_attention layers")
            return [window if t == "sliding_attention" else None for t in types]
        return [window if window is not None and default_sliding(i) else None
                for i in range(n_layers)]


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a config value may be huge)."""
    try:
        text = repr(value)
    except ValueError:  # an integer with more digits than Python prints
        return "a number too large to print"
    return text if len(text) <= limit else text[:limit] + "…"


def _llama_family(r: _Reader, *, qkv_bias: bool, o_bias: bool, qk_norm: bool = False,
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
    return _model(r, model_type, d, layers, tie_default=tie_default)


def _model(r: _Reader, model_type: str, d: int, layers: tuple[Layer, ...], *, tie_default: bool,
           norm_kind: str = "rms", position_table: int = 0) -> ModelSpec:
    return ModelSpec(
        name=r.name, model_type=model_type, hidden_size=d, vocab_size=r.integer("vocab_size"),
        layers=layers, norm_kind=norm_kind,  # type: ignore[arg-type]
        tie_word_embeddings=r.flag("tie_word_embeddings", tie_default),
        position_table_size=position_table,
        max_position_embeddings=r.integer("max_position_embeddings", 0),
        mtp_layers=r.integer("num_nextn_predict_layers", 0, minimum=0),
    )


def _llama(r: _Reader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, mlp_bias=r.flag("mlp_bias", False),
                         model_type="llama")


def _mistral(r: _Reader) -> ModelSpec:
    # MistralConfig defaults sliding_window to 4096 when the key is absent; null turns it off.
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 4096
    return _llama_family(r, qkv_bias=False, o_bias=False, window=window, model_type="mistral")


def _qwen_windows(r: _Reader) -> tuple[int | None, Callable[[int], bool]]:
    """Qwen2/Qwen3: windows only with ``use_sliding_window``, on layers >= ``max_window_layers``."""
    if not r.flag("use_sliding_window", False):
        return None, lambda i: False
    window = r.opt_int("sliding_window")
    first = r.integer("max_window_layers", 28, minimum=0)
    return window, lambda i: i >= first


def _qwen2(r: _Reader) -> ModelSpec:
    window, sliding = _qwen_windows(r)
    if window is None:
        r = _Reader(r.name, {k: v for k, v in r.cfg.items() if k != "layer_types"})
    return _llama_family(r, qkv_bias=True, o_bias=False, window=window, sliding=sliding,
                         model_type="qwen2")


def _qwen3(r: _Reader) -> ModelSpec:
    window, sliding = _qwen_windows(r)
    if window is None:
        r = _Reader(r.name, {k: v for k, v in r.cfg.items() if k != "layer_types"})
    bias = r.flag("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, qk_norm=True, window=window,
                         sliding=sliding, model_type="qwen3")


def _gemma(r: _Reader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, tie_default=True, model_type="gemma")


def _gemma2(r: _Reader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 4096
    # Gemma2Config: even layers (0, 2, ...) are local sliding-window layers.
    return _llama_family(r, qkv_bias=bias, o_bias=bias, window=window,
                         sliding=lambda i: i % 2 == 0, norms=4, tie_default=True,
                         model_type="gemma2")


def _phi3(r: _Reader) -> ModelSpec:
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, fused_qkv=True)
    mlp = Mlp(r.integer("intermediate_size"), gated=True, fused_gate_up=True)
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, mlp, sliding_window=window)
                   for _ in range(r.integer("num_hidden_layers")))
    return _model(r, "phi3", d, layers, tie_default=False)


def _moe_layers(r: _Reader, *, attn: Attention, dense: Mlp, moe: Moe,
                is_sparse: Callable[[int], bool]) -> tuple[Layer, ...]:
    n_layers = r.integer("num_hidden_layers")
    return tuple(Layer(attn, moe if is_sparse(i) else dense) for i in range(n_layers))


def _attention(r: _Reader, *, qkv_bias: bool, o_bias: bool, qk_norm: bool = False) -> Attention:
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    return Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=qkv_bias, o_bias=o_bias, qk_norm=qk_norm)


def _mixtral(r: _Reader) -> ModelSpec:
    d = r.integer("hidden_size")
    attn = _attention(r, qkv_bias=False, o_bias=False)
    expert = Mlp(r.integer("intermediate_size"))
    moe = Moe(num_experts=r.integer("num_local_experts", 8),
              top_k=r.integer("num_experts_per_tok", 2),
              expert=expert)
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, moe, sliding_window=window)
                   for _ in range(r.integer("num_hidden_layers")))
    return _model(r, "mixtral", d, layers, tie_default=False)


def _qwen_sparse(r: _Reader) -> Callable[[int], bool]:
    """Qwen MoE rule: a layer is sparse unless listed in ``mlp_only_layers``, every
    ``decoder_sparse_step``-th layer counting from 1."""
    step = r.integer("decoder_sparse_step", 1)
    dense_only = set(r.int_list("mlp_only_layers"))
    experts = r.integer("num_experts", 0, minimum=0)
    return lambda i: i not in dense_only and experts > 0 and (i + 1) % step == 0


def _qwen2_moe(r: _Reader) -> ModelSpec:
    bias = r.flag("qkv_bias", True)
    attn = _attention(r, qkv_bias=bias, o_bias=False)
    shared_size = r.integer("shared_expert_intermediate_size", 0, minimum=0)
    moe = Moe(
        num_experts=r.integer("num_experts"), top_k=r.integer("num_experts_per_tok"),
        expert=Mlp(r.integer("moe_intermediate_size")),
        shared=Mlp(shared_size) if shared_size else None, shared_gate=True,
    )
    layers = _moe_layers(r, attn=attn,
                         dense=Mlp(r.integer("intermediate_size")), moe=moe,
                         is_sparse=_qwen_sparse(r))
    return _model(r, "qwen2_moe", r.integer("hidden_size"), layers, tie_default=False)


def _qwen3_moe(r: _Reader) -> ModelSpec:
    bias = r.flag("attention_bias", False)
    attn = _attention(r, qkv_bias=bias, o_bias=bias, qk_norm=True)
    moe = Moe(num_experts=r.integer("num_experts"), top_k=r.integer("num_experts_per_tok"),
              expert=Mlp(r.integer("moe_intermediate_size")))
    layers = _moe_layers(r, attn=attn,
                         dense=Mlp(r.integer("intermediate_size")), moe=moe,
                         is_sparse=_qwen_sparse(r))
    return _model(r, "qwen3_moe", r.integer("hidden_size"), layers, tie_default=False)


def _deepseek_v3(r: _Reader) -> ModelSpec:
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
    layers = _moe_layers(r, attn=attn,
                         dense=Mlp(r.integer("intermediate_size")), moe=moe,
                         is_sparse=lambda i: i >= first_dense)
    return _model(r, "deepseek_v3", r.integer("hidden_size"), layers, tie_default=False)


def _gpt2(r: _Reader) -> ModelSpec:
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


def _gpt_neox(r: _Reader) -> ModelSpec:
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    if d % heads:
        raise ConfigError(r.name, "num_attention_heads", f"({heads}) must divide hidden_size ({d})")
    bias = r.flag("attention_bias", True)
    attn = Attention(num_heads=heads, num_kv_heads=heads, head_dim=d // heads,
                     v_head_dim=d // heads, qkv_bias=bias, o_bias=bias, fused_qkv=True)
    mlp = Mlp(r.integer("intermediate_size"), gated=False, bias=True)
    layers = tuple(Layer(attn, mlp) for _ in range(r.integer("num_hidden_layers")))
    return _model(r, "gpt_neox", d, layers, tie_default=False, norm_kind="layer")


def _falcon(r: _Reader) -> ModelSpec:
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
    return _model(r, "falcon", d, layers, tie_default=True, norm_kind="layer")


# ----------------------------------------------------------------- architectures of issue 13
def _layer_types(r: _Reader, n_layers: int, allowed: tuple[str, ...],
                 default: Callable[[int], str]) -> list[str]:
    """Each layer's type: the config's ``layer_types`` when listed (checked against
    ``allowed``), else the config class's own rule ``default(i)``."""
    types = r.cfg.get("layer_types")
    if types is None:
        return [default(i) for i in range(n_layers)]
    if not isinstance(types, list) or len(types) != n_layers:
        raise ConfigError(r.name, "layer_types",
                          f"must list one type for each of the {n_layers} layers")
    bad = sorted({str(t) for t in types if t not in allowed})
    if bad:
        raise ConfigError(r.name, "layer_types",
                          f"has unsupported entries {bad}; allowed: {', '.join(allowed)}")
    return list(types)


def _gemma3_text(r: _Reader) -> ModelSpec:
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
    return _model(r, "gemma3_text", d, layers, tie_default=True)


def _olmo2(r: _Reader) -> ModelSpec:
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
    return _model(r, "olmo2", d, layers, tie_default=False)


def _glm4_moe(r: _Reader) -> ModelSpec:
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
    layers = _moe_layers(r, attn=attn, dense=Mlp(r.integer("intermediate_size")), moe=moe,
                         is_sparse=lambda i: i >= first_dense)
    return _model(r, "glm4_moe", d, layers, tie_default=False)


def _deepseek_v2(r: _Reader) -> ModelSpec:
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
    layers = _moe_layers(r, attn=attn, dense=dense, moe=moe, is_sparse=lambda i: i >= first_dense)
    return _model(r, "deepseek_v2", r.integer("hidden_size"), layers, tie_default=False)


def _phimoe(r: _Reader) -> ModelSpec:
    """Phi-3.5-MoE (``modeling_phimoe.py``): LayerNorms with bias, q/k/v/o biases with
    ``attention_bias``, every layer ``num_local_experts`` experts (default 16, top 2), an
    optional bias on the LM head (``lm_head_bias``), an optional ``sliding_window``."""
    d = r.integer("hidden_size")
    bias = r.flag("attention_bias", False)
    attn = _attention(r, qkv_bias=bias, o_bias=bias)
    moe = Moe(num_experts=r.integer("num_local_experts", 16),
              top_k=r.integer("num_experts_per_tok", 2),
              expert=Mlp(r.integer("intermediate_size")))
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, moe, sliding_window=window)
                   for _ in range(r.integer("num_hidden_layers")))
    spec = _model(r, "phimoe", d, layers, tie_default=False, norm_kind="layer")
    return replace(spec, lm_head_bias=r.flag("lm_head_bias", False))


def _granitemoe(r: _Reader) -> ModelSpec:
    """Granite 3.0 MoE (``modeling_granitemoe.py``): every layer ``num_local_experts`` experts
    (default 8, top 2) of width ``intermediate_size``, no shared expert, q/k/v/o biases with
    ``attention_bias``. The embedding/residual/logit multipliers change no shape."""
    d = r.integer("hidden_size")
    bias = r.flag("attention_bias", False)
    attn = _attention(r, qkv_bias=bias, o_bias=bias)
    moe = Moe(num_experts=r.integer("num_local_experts", 8),
              top_k=r.integer("num_experts_per_tok", 2),
              expert=Mlp(r.integer("intermediate_size")))
    layers = tuple(Layer(attn, moe) for _ in range(r.integer("num_hidden_layers")))
    return _model(r, "granitemoe", d, layers, tie_default=False)


def _gpt_oss(r: _Reader) -> ModelSpec:
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
    return _model(r, "gpt_oss", d, layers, tie_default=False)


def _llama4_text(r: _Reader) -> ModelSpec:
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
    types = _layer_types(r, n_layers, ("chunked_attention", "full_attention"),
                         lambda i: "chunked_attention" if no_rope[i] else "full_attention")
    chunk = r.opt_int("attention_chunk_size") if "attention_chunk_size" in r.cfg else 8192
    layers = tuple(
        Layer(attn, moe if i in moe_layers else dense,
              sliding_window=chunk if t == "chunked_attention" else None)
        for i, t in enumerate(types))
    return _model(r, "llama4_text", d, layers, tie_default=False)


def _gated_deltanet_hybrid(r: _Reader, *, output_gate: bool
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
    types = _layer_types(r, n_layers, ("linear_attention", "full_attention"),
                         lambda i: "linear_attention" if (i + 1) % interval else "full_attention")
    return full, linear, list(types)


def _qwen3_next(r: _Reader) -> ModelSpec:
    """Qwen3-Next (``modeling_qwen3_next.py``): a hybrid of Gated DeltaNet linear-attention
    layers (fixed state per sequence, :class:`LinearAttention`) and gated full-attention layers
    (per-head q/k norms, a query projection that also emits an output gate, ``head_dim``
    default 256): by ``layer_types``, else every ``full_attention_interval``-th layer (default
    4) is full attention. FFNs follow Qwen's MoE rule (``decoder_sparse_step``,
    ``mlp_only_layers``) with a shared expert and its sigmoid gate (the gate exists even when
    ``shared_expert_intermediate_size`` is 0)."""
    d = r.integer("hidden_size")
    full, linear, types = _gated_deltanet_hybrid(r, output_gate=True)
    shared_size = r.integer("shared_expert_intermediate_size", 512, minimum=0)
    moe = Moe(num_experts=r.integer("num_experts", 512), top_k=r.integer("num_experts_per_tok", 10),
              expert=Mlp(r.integer("moe_intermediate_size", 512)), shared=Mlp(shared_size),
              shared_gate=True)
    dense = Mlp(r.integer("intermediate_size"))
    sparse = _qwen_sparse(r)
    layers = tuple(Layer(full if t == "full_attention" else linear, moe if sparse(i) else dense)
                   for i, t in enumerate(types))
    return _model(r, "qwen3_next", d, layers, tie_default=False)



# ------------------------------------------------------------------ multimodal: text + vision
def _vit_layers(d: int, f: int, n_layers: int) -> int:
    """Parameters of ``n_layers`` pre-norm ViT encoder layers (SigLIP, CLIP, Llama 4 vision):
    q/k/v/o ``4*(d*d + d)``, MLP ``d*f + f + f*d + d``, two LayerNorms ``4*d``."""
    return n_layers * (4 * (d * d + d) + 2 * d * f + f + d + 4 * d)


def _patches(r: _Reader) -> int:
    """Patches per image side squared: ``(image_size / patch_size)^2``."""
    size, patch = r.integer("image_size"), r.integer("patch_size")
    if size % patch:
        raise ConfigError(r.name, "patch_size", f"({patch}) must divide image_size ({size})")
    return (size // patch) ** 2


def _siglip_params(v: _Reader) -> int:
    """SigLIP vision tower (``modeling_siglip.py``): patch Conv2d with bias, a learned position
    per patch, ViT layers, post LayerNorm, and with ``vision_use_head`` (default true) the
    attention-pooling head (probe ``d``, ``nn.MultiheadAttention`` ``4*d*d + 4*d``, LayerNorm
    ``2d``, MLP)."""
    d, f = v.integer("hidden_size"), v.integer("intermediate_size")
    p, c = v.integer("patch_size"), v.integer("num_channels", 3)
    total = c * p * p * d + d + _patches(v) * d + _vit_layers(d, f, v.integer("num_hidden_layers"))
    total += 2 * d
    if v.flag("vision_use_head", True):
        total += d + 4 * d * d + 4 * d + 2 * d + 2 * d * f + f + d
    return total


def _clip_params(v: _Reader) -> int:
    """CLIP vision tower (``modeling_clip.py``): class embedding, patch Conv2d without bias,
    ``patches + 1`` positions, pre and post LayerNorms, ViT layers (all of them are built even
    when a LLaVA model reads an earlier layer's features)."""
    d, f = v.integer("hidden_size"), v.integer("intermediate_size")
    p, c = v.integer("patch_size"), v.integer("num_channels", 3)
    return (d + c * p * p * d + (_patches(v) + 1) * d + 4 * d
            + _vit_layers(d, f, v.integer("num_hidden_layers")))


def _qwen2_5_vl_vision_params(v: _Reader) -> int:
    """Qwen2.5-VL vision tower (``modeling_qwen2_5_vl.py``): a Conv3d patch embedding without
    bias (``C*t*p*p*d``), blocks of two RMSNorms, fused qkv and proj with biases and a gated MLP
    with biases, then the patch merger: RMSNorm ``d`` and a two-layer MLP from ``d*m^2`` to
    ``out_hidden_size`` (``m = spatial_merge_size``)."""
    d, f = v.integer("hidden_size"), v.integer("intermediate_size")
    c, t = v.integer("in_channels", 3), v.integer("temporal_patch_size", 2)
    p = v.integer("patch_size")
    block = 2 * d + 3 * d * d + 3 * d + d * d + d + 2 * (d * f + f) + f * d + d
    merged = d * v.integer("spatial_merge_size", 2) ** 2
    merger = d + merged * merged + merged + merged * v.integer("out_hidden_size") + v.integer(
        "out_hidden_size")
    return c * t * p * p * d + v.integer("depth") * block + merger


def _llama4_vision_params(v: _Reader, text_hidden: int) -> int:
    """Llama 4 vision tower and projector (``modeling_llama4.py``): class embedding,
    ``patches + 1`` positions, an unfold + linear patch embedding without bias, pre and post
    LayerNorms, ViT layers, the pixel-shuffle adapter (``f x projector_input_dim`` and
    ``projector_output_dim^2``, no biases), and the projector ``vision_output_dim x d_text``."""
    d, f = v.integer("hidden_size"), v.integer("intermediate_size")
    p, c = v.integer("patch_size"), v.integer("num_channels", 3)
    adapter = f * v.integer("projector_input_dim") + v.integer("projector_output_dim") ** 2
    return (d + (_patches(v) + 1) * d + c * p * p * d + 4 * d
            + _vit_layers(d, f, v.integer("num_hidden_layers")) + adapter
            + v.integer("vision_output_dim") * text_hidden)


def _sub_config(r: _Reader, key: str) -> Config:
    value = r.cfg.get(key)
    if not isinstance(value, Mapping):
        raise ConfigError(r.name, key, "is required for this multimodal model_type but missing")
    return value


_TEXT_CONFIG_DEFAULTS: dict[str, dict[str, int]] = {
    "gemma3_text": {"vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216,
                    "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
                    "head_dim": 256, "max_position_embeddings": 131_072},
    "llama": {"vocab_size": 32_000, "hidden_size": 4096, "intermediate_size": 11_008,
              "num_hidden_layers": 32, "num_attention_heads": 32,
              "max_position_embeddings": 2048},
}
"""Defaults of the text config classes (``Gemma3TextConfig``, ``LlamaConfig``) for the shape keys
that published multimodal configs leave out of ``text_config`` (gemma-3-4b-it lists 5 keys,
llava-1.5-7b-hf 7): the wrapper config builds its text config with these defaults."""


def _multimodal(r: _Reader, *, model_type: str, text_default: str, text_types: tuple[str, ...],
                vision: Callable[[_Reader, int], int]) -> ModelSpec:
    """A vision-language checkpoint: the text model from ``text_config`` (read by its own
    reader; ``tie_word_embeddings`` from the top level when given there), the vision tower and
    projector counted by ``vision`` into :attr:`ModelSpec.vision_params`."""
    text_cfg = dict(_sub_config(r, "text_config"))
    text_type = str(text_cfg.get("model_type") or text_default)
    if text_type not in text_types:
        raise ConfigError(r.name, "text_config.model_type",
                          f"{text_type!r} is not supported for {model_type}; supported: "
                          + ", ".join(text_types))
    text_cfg = {**_TEXT_CONFIG_DEFAULTS.get(text_type, {}), **text_cfg}
    if "tie_word_embeddings" in r.cfg:
        text_cfg["tie_word_embeddings"] = r.cfg["tie_word_embeddings"]
    text = _in_section(r, "text_config", lambda: READERS[text_type](_Reader(r.name, text_cfg)))
    vision_reader = _Reader(r.name, _sub_config(r, "vision_config"))
    vision_params = _in_section(r, "vision_config",
                                lambda: vision(vision_reader, text.hidden_size))
    return replace(text, vision_params=vision_params)


def _in_section(r: _Reader, section: str, read: Callable[[], Any]) -> Any:
    """``read()``, with a :class:`ConfigError` about a key of the nested ``section`` naming it
    as ``section.key``."""
    try:
        return read()
    except ConfigError as err:
        if "." in err.key:
            raise
        raise ConfigError(r.name, f"{section}.{err.key}", err.problem) from None


def _gemma3(r: _Reader) -> ModelSpec:
    """Gemma 3 with vision (``Gemma3ForConditionalGeneration``): the Gemma 3 text model, a
    SigLIP tower and the projector (``d_vision x d_text`` and an RMSNorm of ``d_vision``)."""
    def vision(v: _Reader, text_hidden: int) -> int:
        d = v.integer("hidden_size")
        return _siglip_params(v) + d * text_hidden + d
    return _multimodal(r, model_type="gemma3", text_default="gemma3_text",
                       text_types=("gemma3_text",), vision=vision)


def _llava(r: _Reader) -> ModelSpec:
    """LLaVA (``LlavaForConditionalGeneration``): a supported text model, a CLIP or SigLIP
    tower and a two-layer projector (``linear_1`` from ``d_vision`` times the number of feature
    layers read, ``linear_2`` ``d_text x d_text``, biases with ``multimodal_projector_bias``,
    default true)."""
    def vision(v: _Reader, text_hidden: int) -> int:
        kind = v.cfg.get("model_type", "clip_vision_model")
        towers = {"clip_vision_model": _clip_params, "siglip_vision_model": _siglip_params}
        if kind not in towers:
            raise ConfigError(r.name, "model_type",
                              f"{kind!r} is not supported; supported: " + ", ".join(towers))
        layers = r.cfg.get("vision_feature_layer", -2)
        n_features = len(layers) if isinstance(layers, list) else 1
        bias = r.flag("multimodal_projector_bias", True)
        d_in = v.integer("hidden_size") * n_features
        return (towers[kind](v) + d_in * text_hidden + text_hidden * text_hidden
                + (2 * text_hidden if bias else 0))
    return _multimodal(r, model_type="llava", text_default="llama",
                       text_types=("llama", "mistral", "qwen2", "gemma", "gemma2"),
                       vision=vision)


def _qwen2_5_vl(r: _Reader) -> ModelSpec:
    """Qwen2.5-VL (``Qwen2_5_VLForConditionalGeneration``): a Qwen2 text model (from
    ``text_config``, or from the top-level keys of the older flat configs) and the Qwen2.5-VL
    vision tower with its patch merger. M-RoPE changes no shape."""
    cfg = dict(r.cfg)
    if "text_config" not in cfg:
        cfg["text_config"] = {k: v for k, v in cfg.items() if k != "vision_config"}
    cfg["text_config"] = {**cfg["text_config"], "model_type": "qwen2"}
    return _multimodal(_Reader(r.name, cfg), model_type="qwen2_5_vl", text_default="qwen2",
                       text_types=("qwen2",),
                       vision=lambda v, _text_hidden: _qwen2_5_vl_vision_params(v))


def _llama4(r: _Reader) -> ModelSpec:
    """Llama 4 (``Llama4ForConditionalGeneration``, the published Scout and Maverick configs):
    the Llama 4 text model from ``text_config``, the vision tower, adapter and projector. A
    config without ``vision_config`` (the abridged Maverick copy) is read as transformers'
    ``AutoModelForCausalLM`` builds it: the text model alone, no vision tower counted."""
    if r.cfg.get("vision_config") is None:
        text = _in_section(r, "text_config", lambda: _llama4_text(
            _Reader(r.name, {**_sub_config(r, "text_config"),
                             **({"tie_word_embeddings": r.cfg["tie_word_embeddings"]}
                                if "tie_word_embeddings" in r.cfg else {})})))
        return text
    return _multimodal(r, model_type="llama4", text_default="llama4_text",
                       text_types=("llama4_text",), vision=_llama4_vision_params)



READERS: dict[str, Callable[[_Reader], ModelSpec]] = {
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
    "gemma3": _gemma3,
    "llava": _llava,
    "qwen2_5_vl": _qwen2_5_vl,
    "llama4": _llama4,
}
# The architectures of 2025-2026 (issue 26); that module reaches this one only at call time.
from planner.estimator.hf_readers_2026 import READERS_2026  # noqa: E402

READERS.update(READERS_2026)
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(READERS)


def _check_top_k(spec: ModelSpec, cfg: Config, label: str) -> None:
    """:class:`ConfigError` naming the config key when a MoE layer routes each token to more
    experts than it has (else the active count would exceed the total)."""
    for layer in spec.layers:
        ffn = layer.ffn
        if isinstance(ffn, Moe) and not 1 <= ffn.top_k <= ffn.num_experts:
            sub = cfg.get("text_config")
            text: Mapping[str, Any] = sub if isinstance(sub, Mapping) else {}
            key = next((k for k in ("top_k_experts", "num_experts_per_tok", "moe_top_k")
                        if k in cfg or k in text), "num_experts_per_tok")
            if key in text:
                key = f"text_config.{key}"
            raise ConfigError(label, key, f"must be from 1 to the {ffn.num_experts} experts per "
                              f"layer, got {ffn.top_k}")


def spec_from_config(cfg: Config, name: str | None = None) -> ModelSpec:
    """Build a :class:`ModelSpec` from a parsed config.json dict.

    ``name`` defaults to the config's ``_name_or_path`` or its ``model_type``. A
    ``quantization_config`` is read by :func:`planner.estimator.quant_config.quant_from_config`.
    """
    if not isinstance(cfg, Mapping):
        raise ConfigError(name or "config", "<root>", "must be a JSON object")
    label = name or str(cfg.get("_name_or_path") or cfg.get("model_type") or "config")[:200]
    model_type = cfg.get("model_type")
    if model_type is None:
        raise ConfigError(label, "model_type", "is missing; supported: "
                          + ", ".join(SUPPORTED_MODEL_TYPES))
    reader = READERS.get(model_type) if isinstance(model_type, str) else None
    if reader is None:
        raise ConfigError(label, "model_type", f"{_short(model_type)} is not supported; "
                          "supported: " + ", ".join(SUPPORTED_MODEL_TYPES))
    spec = reader(_Reader(label, cfg))
    _check_top_k(spec, cfg, label)
    total = count_params(spec).total
    if total > MAX_PARAMS:
        raise ConfigError(label, "<architecture>", f"describes {total:.3g} parameters; at "
                          f"most {MAX_PARAMS:.0e} are supported (check hidden_size, "
                          "intermediate_size, num_hidden_layers and the expert counts)")
    quantization = quant_from_config(cfg, label)
    return replace(spec, quantization=quantization) if quantization else spec
