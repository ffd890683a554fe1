"""Hugging Face ``config.json`` → :class:`ModelSpec`, one reader per supported ``model_type``.

Each reader follows the matching ``transformers`` modeling file (v5.23): which keys it reads, the
defaults its config class applies to absent keys, which projections carry biases, how many norms a
layer has, which layers are sparse or windowed. Exactness is checked against parameter counts taken
from the real implementations (``scripts/hf_param_counts.py`` → ``tests/fixtures``).

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
from typing import Any

from planner.errors import ConfigError
from planner.estimator.architecture import Attention, Layer, Mlp, ModelSpec, Moe
from planner.estimator.params import count_params

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

    def int(self, key: str, default: Any = _MISSING, *, minimum: int = 1) -> int:
        value = self.cfg.get(key, None)
        if value is None:
            if default is _MISSING:
                raise ConfigError(self.name, key, "is required for this model_type but missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(self.name, key, f"must be an integer, got {_short(value)}")
        if value < minimum:
            raise ConfigError(self.name, key, f"must be at least {minimum}, got {value}")
        if value > maximum_of(key):
            raise ConfigError(self.name, key, f"must be at most {maximum_of(key):,}, got "
                              f"{_short(value)}")
        return value

    def opt_int(self, key: str, *, minimum: int = 1) -> int | None:
        """An integer key that may be absent or null (meaning 'off')."""
        if self.cfg.get(key) is None:
            return None
        return self.int(key, minimum=minimum)

    def bool(self, key: str, default: bool) -> bool:
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
    d = r.int("hidden_size")
    n_layers = r.int("num_hidden_layers")
    heads = r.int("num_attention_heads")
    attn = Attention(
        num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=r.head_dim(d, heads),
        v_head_dim=r.head_dim(d, heads), qkv_bias=qkv_bias, o_bias=o_bias, qk_norm=qk_norm,
    )
    mlp = Mlp(r.int("intermediate_size"), gated=True, bias=mlp_bias)
    windows = r.layer_windows(n_layers, window, sliding)
    layers = tuple(Layer(attn, mlp, norms=norms, sliding_window=w) for w in windows)
    return _model(r, model_type, d, layers, tie_default=tie_default)


def _model(r: _Reader, model_type: str, d: int, layers: tuple[Layer, ...], *, tie_default: bool,
           norm_kind: str = "rms", position_table: int = 0) -> ModelSpec:
    return ModelSpec(
        name=r.name, model_type=model_type, hidden_size=d, vocab_size=r.int("vocab_size"),
        layers=layers, norm_kind=norm_kind,  # type: ignore[arg-type]
        tie_word_embeddings=r.bool("tie_word_embeddings", tie_default),
        position_table_size=position_table,
        max_position_embeddings=r.int("max_position_embeddings", 0, minimum=0),
    )


def _llama(r: _Reader) -> ModelSpec:
    bias = r.bool("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, mlp_bias=r.bool("mlp_bias", False),
                         model_type="llama")


def _mistral(r: _Reader) -> ModelSpec:
    # MistralConfig defaults sliding_window to 4096 when the key is absent; null turns it off.
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 4096
    return _llama_family(r, qkv_bias=False, o_bias=False, window=window, model_type="mistral")


def _qwen_windows(r: _Reader) -> tuple[int | None, Callable[[int], bool]]:
    """Qwen2/Qwen3: windows only with ``use_sliding_window``, on layers >= ``max_window_layers``."""
    if not r.bool("use_sliding_window", False):
        return None, lambda i: False
    window = r.opt_int("sliding_window")
    first = r.int("max_window_layers", 28, minimum=0)
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
    bias = r.bool("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, qk_norm=True, window=window,
                         sliding=sliding, model_type="qwen3")


def _gemma(r: _Reader) -> ModelSpec:
    bias = r.bool("attention_bias", False)
    return _llama_family(r, qkv_bias=bias, o_bias=bias, tie_default=True, model_type="gemma")


def _gemma2(r: _Reader) -> ModelSpec:
    bias = r.bool("attention_bias", False)
    window = r.opt_int("sliding_window") if "sliding_window" in r.cfg else 4096
    # Gemma2Config: even layers (0, 2, ...) are local sliding-window layers.
    return _llama_family(r, qkv_bias=bias, o_bias=bias, window=window,
                         sliding=lambda i: i % 2 == 0, norms=4, tie_default=True,
                         model_type="gemma2")


def _phi3(r: _Reader) -> ModelSpec:
    d = r.int("hidden_size")
    heads = r.int("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    attn = Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, fused_qkv=True)
    mlp = Mlp(r.int("intermediate_size"), gated=True, fused_gate_up=True)
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, mlp, sliding_window=window)
                   for _ in range(r.int("num_hidden_layers")))
    return _model(r, "phi3", d, layers, tie_default=False)


def _moe_layers(r: _Reader, *, attn: Attention, dense: Mlp, moe: Moe,
                is_sparse: Callable[[int], bool]) -> tuple[Layer, ...]:
    n_layers = r.int("num_hidden_layers")
    return tuple(Layer(attn, moe if is_sparse(i) else dense) for i in range(n_layers))


def _attention(r: _Reader, *, qkv_bias: bool, o_bias: bool, qk_norm: bool = False) -> Attention:
    d = r.int("hidden_size")
    heads = r.int("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    return Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=qkv_bias, o_bias=o_bias, qk_norm=qk_norm)


def _mixtral(r: _Reader) -> ModelSpec:
    d = r.int("hidden_size")
    attn = _attention(r, qkv_bias=False, o_bias=False)
    expert = Mlp(r.int("intermediate_size"))
    moe = Moe(num_experts=r.int("num_local_experts", 8), top_k=r.int("num_experts_per_tok", 2),
              expert=expert)
    window = r.opt_int("sliding_window")
    layers = tuple(Layer(attn, moe, sliding_window=window)
                   for _ in range(r.int("num_hidden_layers")))
    return _model(r, "mixtral", d, layers, tie_default=False)


def _qwen_sparse(r: _Reader) -> Callable[[int], bool]:
    """Qwen MoE rule: a layer is sparse unless listed in ``mlp_only_layers``, every
    ``decoder_sparse_step``-th layer counting from 1."""
    step = r.int("decoder_sparse_step", 1)
    dense_only = set(r.int_list("mlp_only_layers"))
    experts = r.int("num_experts", 0, minimum=0)
    return lambda i: i not in dense_only and experts > 0 and (i + 1) % step == 0


def _qwen2_moe(r: _Reader) -> ModelSpec:
    bias = r.bool("qkv_bias", True)
    attn = _attention(r, qkv_bias=bias, o_bias=False)
    shared_size = r.int("shared_expert_intermediate_size", 0, minimum=0)
    moe = Moe(
        num_experts=r.int("num_experts"), top_k=r.int("num_experts_per_tok"),
        expert=Mlp(r.int("moe_intermediate_size")),
        shared=Mlp(shared_size) if shared_size else None, shared_gate=True,
    )
    layers = _moe_layers(r, attn=attn,
                         dense=Mlp(r.int("intermediate_size")), moe=moe,
                         is_sparse=_qwen_sparse(r))
    return _model(r, "qwen2_moe", r.int("hidden_size"), layers, tie_default=False)


def _qwen3_moe(r: _Reader) -> ModelSpec:
    bias = r.bool("attention_bias", False)
    attn = _attention(r, qkv_bias=bias, o_bias=bias, qk_norm=True)
    moe = Moe(num_experts=r.int("num_experts"), top_k=r.int("num_experts_per_tok"),
              expert=Mlp(r.int("moe_intermediate_size")))
    layers = _moe_layers(r, attn=attn,
                         dense=Mlp(r.int("intermediate_size")), moe=moe,
                         is_sparse=_qwen_sparse(r))
    return _model(r, "qwen3_moe", r.int("hidden_size"), layers, tie_default=False)


def _deepseek_v3(r: _Reader) -> ModelSpec:
    heads = r.int("num_attention_heads")
    nope = r.int("qk_nope_head_dim")
    rope = r.int("qk_rope_head_dim")
    bias = r.bool("attention_bias", False)
    attn = Attention(
        num_heads=heads, num_kv_heads=heads, head_dim=nope + rope,
        v_head_dim=r.int("v_head_dim"), qkv_bias=bias, o_bias=bias,
        q_lora_rank=r.opt_int("q_lora_rank") or 0, kv_lora_rank=r.int("kv_lora_rank"),
        qk_rope_head_dim=rope, qk_nope_head_dim=nope,
    )
    expert_size = r.int("moe_intermediate_size")
    n_shared = r.int("n_shared_experts", 0, minimum=0)
    moe = Moe(
        num_experts=r.int("n_routed_experts"), top_k=r.int("num_experts_per_tok"),
        expert=Mlp(expert_size), shared=Mlp(expert_size * n_shared) if n_shared else None,
    )
    first_dense = r.int("first_k_dense_replace", 0, minimum=0)
    layers = _moe_layers(r, attn=attn,
                         dense=Mlp(r.int("intermediate_size")), moe=moe,
                         is_sparse=lambda i: i >= first_dense)
    return _model(r, "deepseek_v3", r.int("hidden_size"), layers, tie_default=False)


def _gpt2(r: _Reader) -> ModelSpec:
    d = r.int("n_embd")
    heads = r.int("n_head")
    if d % heads:
        raise ConfigError(r.name, "n_head", f"({heads}) must divide n_embd ({d})")
    attn = Attention(num_heads=heads, num_kv_heads=heads, head_dim=d // heads,
                     v_head_dim=d // heads, qkv_bias=True, o_bias=True, fused_qkv=True)
    mlp = Mlp(r.int("n_inner", 4 * d), gated=False, bias=True)
    layers = tuple(Layer(attn, mlp) for _ in range(r.int("n_layer")))
    positions = r.int("n_positions", 1024)
    return ModelSpec(
        name=r.name, model_type="gpt2", hidden_size=d, vocab_size=r.int("vocab_size"),
        layers=layers, norm_kind="layer",
        tie_word_embeddings=r.bool("tie_word_embeddings", True),
        position_table_size=positions, max_position_embeddings=positions,
    )


def _gpt_neox(r: _Reader) -> ModelSpec:
    d = r.int("hidden_size")
    heads = r.int("num_attention_heads")
    if d % heads:
        raise ConfigError(r.name, "num_attention_heads", f"({heads}) must divide hidden_size ({d})")
    bias = r.bool("attention_bias", True)
    attn = Attention(num_heads=heads, num_kv_heads=heads, head_dim=d // heads,
                     v_head_dim=d // heads, qkv_bias=bias, o_bias=bias, fused_qkv=True)
    mlp = Mlp(r.int("intermediate_size"), gated=False, bias=True)
    layers = tuple(Layer(attn, mlp) for _ in range(r.int("num_hidden_layers")))
    return _model(r, "gpt_neox", d, layers, tie_default=False, norm_kind="layer")


def _falcon(r: _Reader) -> ModelSpec:
    d = r.int("hidden_size")
    heads = r.int("num_attention_heads")
    if d % heads:
        raise ConfigError(r.name, "num_attention_heads", f"({heads}) must divide hidden_size ({d})")
    head_dim = d // heads
    new_arch = r.bool("new_decoder_architecture", False)
    parallel = r.bool("parallel_attn", True)
    if new_arch:
        n_kv = r.kv_heads(heads, "num_kv_heads")
    elif r.bool("multi_query", True):
        n_kv = 1
    else:
        n_kv = heads
    bias = r.bool("bias", False)
    attn = Attention(num_heads=heads, num_kv_heads=n_kv, head_dim=head_dim, v_head_dim=head_dim,
                     qkv_bias=bias, o_bias=bias, fused_qkv=True)
    mlp = Mlp(r.int("ffn_hidden_size", 4 * d), gated=False, bias=bias)
    n_ln = r.opt_int("num_ln_in_parallel_attn")
    if n_ln is None and new_arch:
        n_ln = 2
    norms = 2 if (not parallel or n_ln == 2) else 1
    layers = tuple(Layer(attn, mlp, norms=norms) for _ in range(r.int("num_hidden_layers")))
    return _model(r, "falcon", d, layers, tie_default=True, norm_kind="layer")


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
}
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(READERS)


def spec_from_config(cfg: Config, name: str | None = None) -> ModelSpec:
    """Build a :class:`ModelSpec` from a parsed config.json dict.

    ``name`` defaults to the config's ``_name_or_path`` or its ``model_type``.
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
    total = count_params(spec).total
    if total > MAX_PARAMS:
        raise ConfigError(label, "<architecture>", f"describes {total:.3g} parameters; at "
                          f"most {MAX_PARAMS:.0e} are supported (check hidden_size, "
                          "intermediate_size, num_hidden_layers and the expert counts)")
    return spec
