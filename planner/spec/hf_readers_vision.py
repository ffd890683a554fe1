"""Vision-language checkpoints: the text model read by its own reader plus the vision tower.

Multimodal checkpoints (gemma3, llava, qwen2_5_vl, llama4, and 2026's qwen3_5, gemma4, kimi_k25)
are read as their text model (from ``text_config``) plus the parameter count of the vision tower
and projector in :attr:`ModelSpec.vision_params`. Why a module of its own: the tower formulas
(ViT, SigLIP, CLIP, the Qwen and Llama 4 towers) are one concept shared by the wrappers of every
era; each follows its ``transformers`` modeling file (v5.23), named in its docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from planner.core.errors import ConfigError
from planner.spec.architecture import ModelSpec
from planner.spec.hf_reader import ConfigReader, Reader, in_section, sub_config
from planner.spec.hf_readers_text import TEXT_READERS


def _text_readers(*model_types: str) -> dict[str, Reader]:
    """The text readers of :data:`~planner.spec.hf_readers_text.TEXT_READERS` a wrapper
    accepts in its ``text_config``, by ``model_type``."""
    return {t: TEXT_READERS[t] for t in model_types}


# ------------------------------------------------------------------ multimodal: text + vision
def _vit_layers(d: int, f: int, n_layers: int) -> int:
    """Parameters of ``n_layers`` pre-norm ViT encoder layers (SigLIP, CLIP, Llama 4 vision):
    q/k/v/o ``4*(d*d + d)``, MLP ``d*f + f + f*d + d``, two LayerNorms ``4*d``."""
    return n_layers * (4 * (d * d + d) + 2 * d * f + f + d + 4 * d)


def _patches(r: ConfigReader) -> int:
    """Patches per image side squared: ``(image_size / patch_size)^2``."""
    size, patch = r.integer("image_size"), r.integer("patch_size")
    if size % patch:
        raise ConfigError(r.name, "patch_size", f"({patch}) must divide image_size ({size})")
    return (size // patch) ** 2


def _siglip_params(v: ConfigReader) -> int:
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


def _clip_params(v: ConfigReader) -> int:
    """CLIP vision tower (``modeling_clip.py``): class embedding, patch Conv2d without bias,
    ``patches + 1`` positions, pre and post LayerNorms, ViT layers (all of them are built even
    when a LLaVA model reads an earlier layer's features)."""
    d, f = v.integer("hidden_size"), v.integer("intermediate_size")
    p, c = v.integer("patch_size"), v.integer("num_channels", 3)
    return (d + c * p * p * d + (_patches(v) + 1) * d + 4 * d
            + _vit_layers(d, f, v.integer("num_hidden_layers")))


def _qwen2_5_vl_vision_params(v: ConfigReader) -> int:
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


def _llama4_vision_params(v: ConfigReader, text_hidden: int) -> int:
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


def multimodal(r: ConfigReader, *, model_type: str, text_default: str,
               text_readers: Mapping[str, Reader],
               vision: Callable[[ConfigReader, int], int]) -> ModelSpec:
    """A vision-language checkpoint: the text model from ``text_config`` (read by its own
    reader; ``tie_word_embeddings`` from the top level when given there), the vision tower and
    projector counted by ``vision`` into :attr:`ModelSpec.vision_params`."""
    text_cfg = dict(sub_config(r, "text_config"))
    text_type = str(text_cfg.get("model_type") or text_default)
    if text_type not in text_readers:
        raise ConfigError(r.name, "text_config.model_type",
                          f"{text_type!r} is not supported for {model_type}; supported: "
                          + ", ".join(text_readers))
    text_cfg = {**_TEXT_CONFIG_DEFAULTS.get(text_type, {}), **text_cfg}
    if "tie_word_embeddings" in r.cfg:
        text_cfg["tie_word_embeddings"] = r.cfg["tie_word_embeddings"]
    text = in_section(r, "text_config",
                      lambda: text_readers[text_type](ConfigReader(r.name, text_cfg)))
    vision_reader = ConfigReader(r.name, sub_config(r, "vision_config"))
    vision_params = in_section(r, "vision_config",
                               lambda: vision(vision_reader, text.hidden_size))
    return replace(text, vision_params=vision_params)


def _gemma3(r: ConfigReader) -> ModelSpec:
    """Gemma 3 with vision (``Gemma3ForConditionalGeneration``): the Gemma 3 text model, a
    SigLIP tower and the projector (``d_vision x d_text`` and an RMSNorm of ``d_vision``)."""
    def vision(v: ConfigReader, text_hidden: int) -> int:
        d = v.integer("hidden_size")
        return _siglip_params(v) + d * text_hidden + d
    return multimodal(r, model_type="gemma3", text_default="gemma3_text",
                      text_readers=_text_readers("gemma3_text"), vision=vision)


def _llava(r: ConfigReader) -> ModelSpec:
    """LLaVA (``LlavaForConditionalGeneration``): a supported text model, a CLIP or SigLIP
    tower and a two-layer projector (``linear_1`` from ``d_vision`` times the number of feature
    layers read, ``linear_2`` ``d_text x d_text``, biases with ``multimodal_projector_bias``,
    default true)."""
    def vision(v: ConfigReader, text_hidden: int) -> int:
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
    return multimodal(r, model_type="llava", text_default="llama",
                      text_readers=_text_readers("llama", "mistral", "qwen2", "gemma", "gemma2"),
                      vision=vision)


def _qwen2_5_vl(r: ConfigReader) -> ModelSpec:
    """Qwen2.5-VL (``Qwen2_5_VLForConditionalGeneration``): a Qwen2 text model (from
    ``text_config``, or from the top-level keys of the older flat configs) and the Qwen2.5-VL
    vision tower with its patch merger. M-RoPE changes no shape."""
    cfg = dict(r.cfg)
    if "text_config" not in cfg:
        cfg["text_config"] = {k: v for k, v in cfg.items() if k != "vision_config"}
    cfg["text_config"] = {**cfg["text_config"], "model_type": "qwen2"}
    return multimodal(ConfigReader(r.name, cfg), model_type="qwen2_5_vl", text_default="qwen2",
                      text_readers=_text_readers("qwen2"),
                      vision=lambda v, _text_hidden: _qwen2_5_vl_vision_params(v))


def _llama4(r: ConfigReader) -> ModelSpec:
    """Llama 4 (``Llama4ForConditionalGeneration``, the published Scout and Maverick configs):
    the Llama 4 text model from ``text_config``, the vision tower, adapter and projector. A
    config without ``vision_config`` (the abridged Maverick copy) is read as transformers'
    ``AutoModelForCausalLM`` builds it: the text model alone, no vision tower counted."""
    if r.cfg.get("vision_config") is None:
        text = in_section(r, "text_config", lambda: TEXT_READERS["llama4_text"](
            ConfigReader(r.name, {**sub_config(r, "text_config"),
                         **({"tie_word_embeddings": r.cfg["tie_word_embeddings"]}
                            if "tie_word_embeddings" in r.cfg else {})})))
        return text
    return multimodal(r, model_type="llama4", text_default="llama4_text",
                      text_readers=_text_readers("llama4_text"), vision=_llama4_vision_params)


def qwen3_5_vision_params(v: ConfigReader, text_hidden: int) -> int:
    """Qwen3.5 vision tower (``Qwen3_5VisionModel``): Conv3d patch embedding with bias
    (``C*t*p*p*d + d``), a learned table of ``num_position_embeddings`` positions, ``depth``
    blocks (two LayerNorms, fused qkv and proj with biases, a two-layer MLP with biases) and
    the merger (LayerNorm ``2d``, ``D x D`` and ``D x out_hidden_size`` with biases,
    ``D = d*m^2``). ``deepstack_visual_indexes`` add one merger each."""
    d, f = v.integer("hidden_size"), v.integer("intermediate_size")
    c, t = v.integer("in_channels", 3), v.integer("temporal_patch_size", 2)
    p = v.integer("patch_size")
    block = 4 * d + 3 * d * d + 3 * d + d * d + d + d * f + f + f * d + d
    merged = d * v.integer("spatial_merge_size", 2) ** 2
    out = v.integer("out_hidden_size")
    merger = 2 * d + merged * merged + merged + merged * out + out
    deepstack = len(v.cfg.get("deepstack_visual_indexes") or [])
    deep_merger = 2 * merged + merged * merged + merged + merged * out + out
    return (c * t * p * p * d + d + v.integer("num_position_embeddings") * d
            + v.integer("depth") * block
            + merger + deepstack * deep_merger)


def gemma4_vision_params(v: ConfigReader, text_hidden: int) -> int:
    """Gemma 4 vision tower and embedder (``Gemma4VisionModel``, ``Gemma4MultimodalEmbedder``):
    a bias-free ``3*p*p -> d`` patch projection, a two-axis position table
    (``2 x position_embedding_size x d``), ``num_hidden_layers`` layers of four RMSNorms,
    per-head q/k norms, q/k/v/o and a gated MLP (no biases), and the projection into the
    text width ``d x d_text``."""
    d, f = v.integer("hidden_size"), v.integer("intermediate_size")
    heads = v.integer("num_attention_heads")
    head_dim = v.integer("head_dim", d // heads)
    n_kv = v.integer("num_key_value_heads", heads)
    p = v.integer("patch_size")
    layer = (4 * d + 2 * head_dim + 2 * d * heads * head_dim + 2 * d * n_kv * head_dim
             + 3 * d * f)
    return (3 * p * p * d + 2 * v.integer("position_embedding_size") * d
            + v.integer("num_hidden_layers") * layer + d * text_hidden)


# ---------------------------------------------------------------------------------- Kimi-K2.5
def kimi_vision_params(v: ConfigReader, text_hidden: int, projection: int) -> int:
    """Kimi-K2.5's MoonViT tower and patch-merger projector (``modeling_kimi_k25.py``), with
    the keys ``Kimi_K25VisionConfig`` reads (the published file's ``vt_*`` and
    ``init_pos_emb_*`` keys are not among them; its defaults, 1152 wide, 4304 MLP, 27 layers,
    a 64 x 64 position table, patch 14, are what the published tower has): a Conv2d patch
    embedding with bias, the position table, layers of q/k/v/proj and a two-layer MLP with
    biases and two LayerNorms, a final LayerNorm, and the projector (LayerNorm of
    ``projection_hidden_size``, ``D x D`` and ``D x d_text`` with biases,
    ``D = projection_hidden_size * merge_h * merge_w``)."""
    d, f = v.integer("hidden_size", 1152), v.integer("intermediate_size", 4304)
    p = v.integer("patch_size", 14)
    layer = 4 * (d * d + d) + d * f + f + f * d + d + 4 * d
    merge = v.cfg.get("merge_kernel_size") or [2, 2]
    if not (isinstance(merge, list) and len(merge) == 2
            and all(isinstance(x, int) and 0 < x < 64 for x in merge)):
        raise ConfigError(v.name, "merge_kernel_size", "must be two integers from 1 to 63")
    big = projection * merge[0] * merge[1]
    return (3 * p * p * d + d + v.integer("pos_emb_height", 64) * v.integer("pos_emb_width", 64) * d
            + v.integer("num_hidden_layers", 27) * layer + 2 * d
            + 2 * projection + big * big + big + big * text_hidden + text_hidden)


VISION_READERS: dict[str, Reader] = {
    "gemma3": _gemma3,
    "llava": _llava,
    "qwen2_5_vl": _qwen2_5_vl,
    "llama4": _llama4,
}
"""The wrappers of this module by ``model_type``."""
