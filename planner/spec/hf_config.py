"""Hugging Face ``config.json`` → :class:`ModelSpec`, one reader per supported ``model_type``.

The readers live beside this module, one per architecture family:
:mod:`~planner.spec.hf_readers_text` (text models), :mod:`~planner.spec.hf_readers_vision`
(vision-language wrappers and their towers), :mod:`~planner.spec.hf_readers_2026` (the
architectures of 2025-2026), all on :mod:`~planner.spec.hf_reader`'s typed access. Each
reader follows the matching ``transformers`` modeling file (v5.23): which keys it reads, the
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

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from planner.core.errors import ConfigError
from planner.spec.architecture import ModelSpec, Moe
from planner.spec.hf_reader import MAX_LAYERS as MAX_LAYERS  # re-exported
from planner.spec.hf_reader import MAX_PARAMS, Config, ConfigReader, Reader, short
from planner.spec.hf_reader import MAX_POSITIONS as MAX_POSITIONS
from planner.spec.hf_reader import MAX_SIZE as MAX_SIZE
from planner.spec.hf_readers_2026 import READERS_2026
from planner.spec.hf_readers_text import TEXT_READERS
from planner.spec.hf_readers_vision import VISION_READERS
from planner.spec.params import count_params
from planner.spec.quant_config import quant_from_config

READERS: dict[str, Reader] = {**TEXT_READERS, **VISION_READERS, **READERS_2026}
"""Every reader by ``model_type``: the text models, the vision-language wrappers, then the
architectures of 2025-2026 (this order is the order error messages list them in)."""
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


def _reader_of(cfg: Config, label: str) -> Reader:
    """The reader of the config's ``model_type``; refused, listing the supported types, when
    it is missing or not supported."""
    model_type = cfg.get("model_type")
    if model_type is None:
        raise ConfigError(label, "model_type", "is missing; supported: "
                          + ", ".join(SUPPORTED_MODEL_TYPES))
    reader = READERS.get(model_type) if isinstance(model_type, str) else None
    if reader is None:
        raise ConfigError(label, "model_type", f"{short(model_type)} is not supported; "
                          "supported: " + ", ".join(SUPPORTED_MODEL_TYPES))
    return reader


def spec_from_config(cfg: Config, name: str | None = None) -> ModelSpec:
    """Build a :class:`ModelSpec` from a parsed config.json dict.

    ``name`` defaults to the config's ``_name_or_path`` or its ``model_type``. A
    ``quantization_config`` is read by :func:`planner.spec.quant_config.quant_from_config`.
    """
    if not isinstance(cfg, Mapping):
        raise ConfigError(name or "config", "<root>", "must be a JSON object")
    label = name or str(cfg.get("_name_or_path") or cfg.get("model_type") or "config")[:200]
    spec = _reader_of(cfg, label)(ConfigReader(label, cfg))
    _check_top_k(spec, cfg, label)
    total = count_params(spec).total
    if total > MAX_PARAMS:
        raise ConfigError(label, "<architecture>", f"describes {total:.3g} parameters; at "
                          f"most {MAX_PARAMS:.0e} are supported (check hidden_size, "
                          "intermediate_size, num_hidden_layers and the expert counts)")
    quantization = quant_from_config(cfg, label)
    return replace(spec, quantization=quantization) if quantization else spec
