"""Typed access to a Hugging Face ``config.json`` and the pieces every reader builds with.

Why a module of its own: the readers of each architecture family
(:mod:`~planner.spec.hf_readers_text`, :mod:`~planner.spec.hf_readers_vision`,
:mod:`~planner.spec.hf_readers_2026`) and :func:`planner.spec.hf_config.spec_from_config`
all read keys through :class:`ConfigReader`; with it here they import it, and none imports
another's registry at call time.

A missing key that the implementation would need, or a value of the wrong kind, raises
:class:`ConfigError` naming the key. Every integer is bounded (:data:`MAX_SIZE`,
:data:`MAX_LAYERS`, :data:`MAX_POSITIONS`) and so is the parameter count of a result
(:data:`MAX_PARAMS`): a config claiming ``vocab_size`` 10^30 is refused, naming the key, instead
of overflowing a database column or building a billion-layer tuple.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from planner.core.errors import ConfigError
from planner.spec.architecture import (
    Attention,
    Layer,
    Mlp,
    ModelSpec,
    Moe,
)

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


class ConfigReader:
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
            raise ConfigError(self.name, key, f"must be an integer, got {short(value)}")
        if value < minimum:
            raise ConfigError(self.name, key, f"must be at least {minimum} (an integer from "
                              f"{minimum} to {maximum_of(key):,}), got {value}")
        if value > maximum_of(key):
            raise ConfigError(self.name, key, f"must be at most {maximum_of(key):,}, got "
                              f"{short(value)}")
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
            raise ConfigError(self.name, key, f"must be true or false, got {short(value)}")
        return value

    def int_list(self, key: str) -> list[int]:
        value = self.cfg.get(key) or []
        if (not isinstance(value, list) or len(value) > MAX_LAYERS
                or not all(isinstance(v, int) and not isinstance(v, bool)
                           and 0 <= v <= MAX_LAYERS for v in value)):
            raise ConfigError(self.name, key, f"must be a list of at most {MAX_LAYERS:,} "
                              f"layer numbers from 0 to {MAX_LAYERS:,}, got "
                              f"{short(value)}")
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
            return self._listed_windows(types, n_layers, window)
        return [window if window is not None and default_sliding(i) else None
                for i in range(n_layers)]

    def _listed_windows(self, types: Any, n_layers: int, window: int | None
                        ) -> list[int | None]:
        """:meth:`layer_windows` from a ``layer_types`` list: ``window`` on each
        ``sliding_attention`` layer, none on ``full_attention`` layers."""
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


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a config value may be huge)."""
    try:
        text = repr(value)
    except ValueError:  # an integer with more digits than Python prints
        return "a number too large to print"
    return text if len(text) <= limit else text[:limit] + "…"


# ----------------------------------------------------------------- architectures of issue 13
def layer_types(r: ConfigReader, n_layers: int, allowed: tuple[str, ...],
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


def sub_config(r: ConfigReader, key: str) -> Config:
    """The nested config object at ``key`` (``text_config``, ``vision_config``)."""
    value = r.cfg.get(key)
    if not isinstance(value, Mapping):
        raise ConfigError(r.name, key, "is required for this multimodal model_type but missing")
    return value


def in_section(r: ConfigReader, section: str, read: Callable[[], Any]) -> Any:
    """``read()``, with a :class:`ConfigError` about a key of the nested ``section`` naming it
    as ``section.key``."""
    try:
        return read()
    except ConfigError as err:
        if "." in err.key:
            raise
        raise ConfigError(r.name, f"{section}.{err.key}", err.problem) from None


def model_spec(r: ConfigReader, model_type: str, d: int, layers: tuple[Layer, ...], *,
               tie_default: bool, norm_kind: str = "rms",
               position_table: int = 0) -> ModelSpec:
    """The :class:`ModelSpec` of ``layers`` with the keys every reader shares:
    ``vocab_size``, ``tie_word_embeddings`` (else ``tie_default``),
    ``max_position_embeddings`` (else 0) and ``num_nextn_predict_layers`` (MTP, else 0)."""
    return ModelSpec(
        name=r.name, model_type=model_type, hidden_size=d, vocab_size=r.integer("vocab_size"),
        layers=layers, norm_kind=norm_kind,  # type: ignore[arg-type]
        tie_word_embeddings=r.flag("tie_word_embeddings", tie_default),
        position_table_size=position_table,
        max_position_embeddings=r.integer("max_position_embeddings", 0),
        mtp_layers=r.integer("num_nextn_predict_layers", 0, minimum=0),
    )


def plain_attention(r: ConfigReader, *, qkv_bias: bool, o_bias: bool,
                    qk_norm: bool = False) -> Attention:
    """Grouped-query attention of ``num_attention_heads`` heads of ``head_dim`` (else
    ``hidden_size / heads``), ``num_key_value_heads`` KV heads, V as wide as K."""
    d = r.integer("hidden_size")
    heads = r.integer("num_attention_heads")
    head_dim = r.head_dim(d, heads)
    return Attention(num_heads=heads, num_kv_heads=r.kv_heads(heads), head_dim=head_dim,
                     v_head_dim=head_dim, qkv_bias=qkv_bias, o_bias=o_bias, qk_norm=qk_norm)


def dense_or_moe_layers(r: ConfigReader, *, attn: Attention, dense: Mlp, moe: Moe,
                        is_sparse: Callable[[int], bool]) -> tuple[Layer, ...]:
    """``num_hidden_layers`` layers of ``attn``, each with ``moe`` where ``is_sparse(i)``,
    else ``dense``."""
    n_layers = r.integer("num_hidden_layers")
    return tuple(Layer(attn, moe if is_sparse(i) else dense) for i in range(n_layers))


def state_bits(r: ConfigReader, *keys: str) -> int:
    """Bits of the recurrent state from the config's dtype key (``float32`` → 32; absent or a
    16-bit name → 16)."""
    for key in keys:
        value = r.cfg.get(key)
        if value is None:
            continue
        if value in ("float32", "fp32"):
            return 32
        if value in ("bfloat16", "float16", "bf16", "fp16"):
            return 16
        raise ConfigError(r.name, key, f"must be float32, bfloat16 or float16, got {value!r}")
    return 16


def name_list(r: ConfigReader, key: str, n: int, allowed: tuple[str, ...],
              default: Callable[[int], str]) -> list[str]:
    """A per-layer list of names (``indexer_types``, ``mlp_layer_types``): ``n`` entries from
    ``allowed``, else the config class's rule ``default(i)``."""
    value = r.cfg.get(key)
    if value is None:
        return [default(i) for i in range(n)]
    if not isinstance(value, list) or len(value) < n:
        raise ConfigError(r.name, key, f"must list one entry for each of the {n} layers")
    bad = sorted({str(v) for v in value[:n] if v not in allowed})
    if bad:
        raise ConfigError(r.name, key, f"has unsupported entries {bad}; allowed: "
                          + ", ".join(allowed))
    return list(value[:n])


def experts_per_token(r: ConfigReader, key: str, experts_key: str, default: Any = None) -> int:
    """Experts per token, at most the experts per layer (named by their config keys)."""
    k = r.integer(key) if default is None else r.integer(key, default)
    experts = r.integer(experts_key) if default is None else r.cfg.get(experts_key)
    if isinstance(experts, int) and k > experts:
        raise ConfigError(r.name, key, f"must be at most {experts_key} ({experts}), got {k}")
    return k


Reader = Callable[[ConfigReader], ModelSpec]
"""A reader: one ``model_type``'s config → :class:`ModelSpec`."""
