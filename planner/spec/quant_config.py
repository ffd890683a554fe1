"""A checkpoint's ``quantization_config`` → how its weights are stored, and their exact bytes.

A quantized checkpoint says how it was quantized in its config.json. This module reads that
block (:func:`quant_from_config`) into a :class:`QuantScheme`: weight bits, the number format,
the group or block each scale covers, the scale and zero-point formats, the tensors it keeps in
16 bit, and whether activations are quantized too (W8A8, W4A4) or only the weights. Then
:func:`checkpoint_bits` counts the stored bits of every tensor of a :class:`ModelSpec` under that
scheme, tensor by tensor, so the planner's weight memory matches the published safetensors.

Bits per stored matrix of ``n_in x n_out`` weights (``g`` weights per scale along the input):

* GPTQ (AutoGPTQ / GPTQModel ``gptq`` format): ``qweight`` ``n_in*n_out*b``; ``scales`` fp16
  ``ceil(n_in/g)*n_out*16``; ``qzeros`` ``ceil(n_in/g)*n_out*b`` (stored even when symmetric);
  ``g_idx`` int32 ``n_in*32`` (stored whether or not ``desc_act``). ``group_size -1``: one group.
* AWQ (AutoAWQ GEMM/GEMV): ``qweight`` ``n_in*n_out*b``; ``scales`` fp16 per group;
  ``qzeros`` ``b`` bits per group when ``zero_point``.
* FP8 block-wise (``quant_method: fp8``, DeepSeek-V3, Qwen3-FP8): e4m3 weights, one fp32
  ``weight_scale_inv`` per ``weight_block_size`` block (128 x 128: 32 bits per 16,384 weights);
  without blocks one fp32 scale per tensor (+ one fp32 input scale when static).
* compressed-tensors (llm-compressor): per its ``config_groups`` ``weights``: ``num_bits``,
  ``strategy`` tensor / channel / group / block; scales in the model dtype (16 bit), zero points
  of ``num_bits`` when not symmetric, ``weight_shape`` int64[2] for packed formats;
  ``nvfp4-pack-quantized``: FP8 scales per 16 and fp32 global scales.
* MXFP4 (OCP microscaling, gpt-oss): 4-bit E2M1 values, one 8-bit E8M0 scale per 32:
  ``4 + 8/32 = 4.25`` bits per weight.
* NVFP4 (NVIDIA ModelOpt ``quant_algo: NVFP4``): 4-bit E2M1 values, one FP8 E4M3 scale per 16,
  and one fp32 scale per tensor (+ one fp32 input scale): ``4 + 8/16 = 4.5`` bits per weight.
* bitsandbytes 4-bit (nf4 / fp4): 4-bit values, one fp32 ``absmax`` per block of 64
  (``4 + 32/64 = 4.5`` bits); with double quantization the absmax are 8-bit with one fp32
  scale per 256 blocks (``4 + 8/64 + 32/16384``), plus the 16- and 256-entry fp32 code tables
  per tensor. 8-bit (LLM.int8): int8 weights and one fp32 scale per output row.

Tensors kept in 16 bit: embeddings always (no method here quantizes ``nn.Embedding``); the LM
head unless the method quantizes it (GPTQ ``lm_head: true``); MoE routers and Qwen's
shared-expert gate (AutoGPTQ, AutoAWQ, vLLM and the FP8 checkpoints all leave them in 16 bit);
every module the config lists in ``modules_to_not_convert``, ``ignore``, ``exclude_modules`` or
``llm_int8_skip_modules``; norms and biases. Sources: the loaders in vLLM
``model_executor/layers/quantization`` (gptq.py, awq.py, fp8.py, mxfp4.py, modelopt.py,
bitsandbytes.py, compressed_tensors/) and the OCP Microscaling Formats (MX) v1.0 specification.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any

from planner.core.errors import ConfigError
from planner.spec.architecture import LinearAttention, Mamba2, Mlp, ModelSpec
from planner.spec.params import attention_projections, count_params, mlp_projections
from planner.spec.quant_scheme import COMPUTE_PATHS as COMPUTE_PATHS  # re-exported
from planner.spec.quant_scheme import FULL_BITS as FULL_BITS
from planner.spec.quant_scheme import QuantScheme as QuantScheme

# --------------------------------------------------------------------------- parsing
MAX_QUANT_INT = 2**24
"""Largest magnitude of an integer in a ``quantization_config`` (a group size, a bit count):
16,777,216, as the widths it groups (:data:`planner.spec.hf_config.MAX_SIZE`)."""


def _qc_int(name: str, qc: Mapping[str, Any], key: str, default: Any = None) -> int:
    value = qc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(name, f"quantization_config.{key}", f"must be an integer, got {value!r}")
    if abs(value) > MAX_QUANT_INT:
        raise ConfigError(name, f"quantization_config.{key}",
                          f"must be an integer from -1 to {MAX_QUANT_INT:,}, got "
                          + (f"{value:,}" if abs(value) < 10**18
                             else f"a number of {len(str(abs(value)))} digits"))
    return value


def _bits(name: str, qc: Mapping[str, Any], key: str, allowed: tuple[int, ...],
          default: int | None = None) -> int:
    value = _qc_int(name, qc, key, default)
    if value not in allowed:
        raise ConfigError(name, f"quantization_config.{key}",
                          f"must be one of {', '.join(map(str, allowed))}, got {value}")
    return value


def _names(name: str, qc: Mapping[str, Any], *keys: str) -> tuple[str, ...]:
    out: list[str] = []
    for key in keys:
        value = qc.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(name, f"quantization_config.{key}",
                              f"must be a list of module names, got {value!r}")
        out.extend(value)
    return tuple(out)


def _gptq(name: str, qc: Mapping[str, Any]) -> QuantScheme:
    bits = _bits(name, qc, "bits", (2, 3, 4, 8))
    group = _qc_int(name, qc, "group_size", 128)
    if group == 0 or group < -1:
        raise ConfigError(name, "quantization_config.group_size",
                          f"must be -1 (one group per column) or from 1 to "
                          f"{MAX_QUANT_INT:,}, got {group}")
    return QuantScheme(
        method="gptq", dtype="int8" if bits == 8 else "int4", weight_bits=bits,
        group_size=group if group > 0 else 0, scale_bits=16, zero_bits=bits, row_index_bits=32,
        keep=_names(name, qc, "modules_to_not_convert"),
        quantize_lm_head=bool(qc.get("lm_head", False)),
    )


def _awq(name: str, qc: Mapping[str, Any]) -> QuantScheme:
    bits = _bits(name, qc, "bits", (4,), qc.get("w_bit", 4))
    group = _qc_int(name, qc, "group_size", qc.get("q_group_size", 128))
    if group <= 0:
        raise ConfigError(name, "quantization_config.group_size", f"must be positive, got {group}")
    zero = qc.get("zero_point", True)
    return QuantScheme(method="awq", dtype="int4", weight_bits=bits, group_size=group,
                       scale_bits=16, zero_bits=bits if zero else 0,
                       keep=_names(name, qc, "modules_to_not_convert"))


def _fp8(name: str, qc: Mapping[str, Any]) -> QuantScheme:
    block = qc.get("weight_block_size")
    static = qc.get("activation_scheme", "dynamic") == "static"
    keep = _names(name, qc, "modules_to_not_convert", "ignored_layers")
    if block is None:
        return QuantScheme(method="fp8", dtype="fp8", weight_bits=8, group_size=-1,
                           scale_bits=32, tensor_bits=32 if static else 0,
                           activation_bits=8, keep=keep)
    if (not isinstance(block, list) or len(block) != 2
            or not all(isinstance(v, int) and v > 0 for v in block)):
        raise ConfigError(name, "quantization_config.weight_block_size",
                          f"must be two positive integers [rows, columns], got {block!r}")
    return QuantScheme(method="fp8", dtype="fp8", weight_bits=8, block=(block[0], block[1]),
                       scale_bits=32, activation_bits=8, keep=keep)


def _mxfp4(name: str, qc: Mapping[str, Any]) -> QuantScheme:
    return QuantScheme(method="mxfp4", dtype="mxfp4", weight_bits=4, group_size=32,
                       scale_bits=8, keep=_names(name, qc, "modules_to_not_convert"))


def _modelopt_kv_cache_bits(qc: Mapping[str, Any]) -> int:
    """8 when a ModelOpt ``quantization_config`` declares an FP8 KV cache, else 0: its
    ``kv_cache_scheme`` ``{"dynamic": false, "num_bits": 8, "type": "float"}`` (the flat
    config.json form ModelOpt 0.37 writes, Gemma-4-31B-IT-NVFP4) or ``kv_cache_quant_algo``
    "FP8" (the hf_quant_config.json form), as vLLM reads it
    (``vllm/utils/torch_utils.py``, ``get_kv_cache_quant_algo_string``, called by
    ``resolve_kv_cache_dtype_string`` for ``--kv-cache-dtype auto``) and SGLang
    (``ModelOptFp4Config.from_config`` derives ``kv_cache_quant_algo`` "FP8" from the scheme;
    ``configure_kv_cache_dtype`` takes it for auto)."""
    scheme = qc.get("kv_cache_scheme")
    if isinstance(scheme, Mapping):
        fp8 = (scheme.get("dynamic") is False and scheme.get("num_bits") == 8
               and scheme.get("type") == "float")
        return 8 if fp8 else 0
    algo = qc.get("kv_cache_quant_algo")
    return 8 if isinstance(algo, str) and algo.upper() == "FP8" else 0


def _modelopt(name: str, qc: Mapping[str, Any]) -> QuantScheme:
    algo = str(qc.get("quant_algo", "")).upper()
    keep = _names(name, qc, "exclude_modules", "ignore")
    kv = _modelopt_kv_cache_bits(qc)
    if algo == "NVFP4":
        group = _qc_int(name, qc, "group_size", 16)
        return QuantScheme(method="nvfp4", dtype="nvfp4", weight_bits=4, group_size=group,
                           scale_bits=8, tensor_bits=64, activation_bits=4, keep=keep,
                           kv_cache_bits=kv)
    if algo == "FP8":
        return QuantScheme(method="fp8", dtype="fp8", weight_bits=8, group_size=-1,
                           scale_bits=32, tensor_bits=32, activation_bits=8, keep=keep,
                           kv_cache_bits=kv)
    raise ConfigError(name, "quantization_config.quant_algo",
                      f"{qc.get('quant_algo')!r} is not supported; supported: NVFP4, FP8")


def _bitsandbytes(name: str, qc: Mapping[str, Any]) -> QuantScheme:
    keep = _names(name, qc, "llm_int8_skip_modules") or ("lm_head",)
    if qc.get("load_in_4bit"):
        kind = str(qc.get("bnb_4bit_quant_type", "fp4"))
        if kind not in ("nf4", "fp4"):
            raise ConfigError(name, "quantization_config.bnb_4bit_quant_type",
                              f"must be nf4 or fp4, got {kind!r}")
        double = bool(qc.get("bnb_4bit_use_double_quant", False))
        # code tables: quant_map fp32[16]; with double quant nested_quant_map fp32[256] and
        # the fp32 offset.
        extra = 16 * 32 + ((256 * 32 + 32) if double else 0)
        return QuantScheme(method="bitsandbytes", dtype="int4", weight_bits=4, group_size=64,
                           scale_bits=32, tensor_bits=extra, double_quant=double, keep=keep)
    if qc.get("load_in_8bit"):
        return QuantScheme(method="bitsandbytes", dtype="int8", weight_bits=8, group_size=0,
                           scale_bits=32, keep=keep)
    raise ConfigError(name, "quantization_config.load_in_4bit",
                      "or load_in_8bit must be true for a bitsandbytes checkpoint")


def _compressed_tensors(name: str, qc: Mapping[str, Any]) -> QuantScheme:
    """llm-compressor's ``compressed-tensors`` format: the one scheme of its
    ``config_groups`` (weights, and input activations when quantized too), NVFP4 packed,
    block-wise or by strategy tensor / channel / group (module docstring)."""
    group = _ct_group(name, qc)
    w = group["weights"]
    fmt = str(qc.get("format", ""))
    bits = _bits(name, w, "num_bits", (4, 8))
    kind = str(w.get("type", "int"))
    strategy = str(w.get("strategy", "tensor"))
    act_bits, static_acts = _ct_activations(name, group.get("input_activations"))
    keep = _names(name, qc, "ignore")
    if fmt == "nvfp4-pack-quantized" or (kind == "float" and bits == 4):
        gs = _qc_int(name, w, "group_size", 16)
        # weight_global_scale fp32 per tensor, input_global_scale fp32 when activations are FP4
        return QuantScheme(method="compressed-tensors", dtype="nvfp4", weight_bits=4,
                           group_size=gs, scale_bits=8,
                           tensor_bits=32 + (32 if act_bits < FULL_BITS else 0),
                           activation_bits=act_bits, keep=keep)
    dtype = ("fp8" if kind == "float" else "int8") if bits == 8 else "int4"
    zero = 0 if w.get("symmetric", True) else bits
    packed = bits == 4
    tensor = (128 if packed else 0) + (32 if static_acts else 0)
    if strategy == "block":
        return QuantScheme(method="compressed-tensors", dtype=dtype, weight_bits=bits,
                           block=_ct_block(name, w), scale_bits=16, tensor_bits=tensor,
                           activation_bits=act_bits, keep=keep)
    return QuantScheme(method="compressed-tensors", dtype=dtype, weight_bits=bits,
                       group_size=_ct_group_size(name, w, strategy), scale_bits=16,
                       zero_bits=zero, tensor_bits=tensor, activation_bits=act_bits, keep=keep)


def _ct_activations(name: str, acts: Any) -> tuple[int, bool]:
    """(bits of the input activations, whether their scales are static): 16 and False when
    the scheme quantizes weights only."""
    act_bits = FULL_BITS
    if isinstance(acts, Mapping) and acts.get("num_bits"):
        act_bits = _bits(name, acts, "num_bits", (4, 8))
    static_acts = isinstance(acts, Mapping) and not acts.get("dynamic", False) \
        and act_bits < FULL_BITS
    return act_bits, bool(static_acts)


def _ct_group(name: str, qc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The one scheme of ``config_groups`` (groups that differ only in their targets count
    once), with its ``weights``; refused, naming the key, otherwise."""
    groups = qc.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        raise ConfigError(name, "quantization_config.config_groups",
                          "must map group names to their weights / input_activations")
    schemes = {repr((g.get("weights"), g.get("input_activations"))): g
               for g in groups.values() if isinstance(g, Mapping)}
    if len(schemes) != 1:
        raise ConfigError(name, "quantization_config.config_groups",
                          f"has {len(schemes)} different schemes; one is supported")
    group = next(iter(schemes.values()))
    if not isinstance(group.get("weights"), Mapping):
        raise ConfigError(name, "quantization_config.config_groups.weights",
                          "is required (a weight quantization scheme)")
    return group


def _ct_block(name: str, w: Mapping[str, Any]) -> tuple[int, int]:
    """``block_structure`` of a block-wise scheme: (rows, columns), two positive integers."""
    block = w.get("block_structure")
    if (not isinstance(block, list) or len(block) != 2
            or not all(isinstance(v, int) and v > 0 for v in block)):
        raise ConfigError(name, "quantization_config.config_groups.weights.block_structure",
                          f"must be two positive integers, got {block!r}")
    return block[0], block[1]


def _ct_group_size(name: str, w: Mapping[str, Any], strategy: str) -> int:
    """Weights per scale of a ``strategy``: ``group`` its positive ``group_size``, ``channel``
    0 (one per output row), ``tensor`` -1 (one per tensor)."""
    sizes = {"tensor": -1, "channel": 0}
    if strategy == "group":
        gs = _qc_int(name, w, "group_size")
        if gs <= 0:
            raise ConfigError(name, "quantization_config.config_groups.weights.group_size",
                              f"must be positive, got {gs}")
        return gs
    if strategy in sizes:
        return sizes[strategy]
    raise ConfigError(name, "quantization_config.config_groups.weights.strategy",
                      f"{strategy!r} is not supported; supported: tensor, channel, group, "
                      "block")


READERS = {
    "gptq": _gptq,
    "awq": _awq,
    "fp8": _fp8,
    "compressed-tensors": _compressed_tensors,
    "mxfp4": _mxfp4,
    "modelopt": _modelopt,
    "bitsandbytes": _bitsandbytes,
}
SUPPORTED_QUANT_METHODS: tuple[str, ...] = tuple(READERS)


def quant_from_config(cfg: Mapping[str, Any], name: str = "config") -> QuantScheme | None:
    """The :class:`QuantScheme` of a config.json's ``quantization_config`` (``None`` when it
    has none); :class:`ConfigError` naming the key for an unknown method or a bad value."""
    qc = cfg.get("quantization_config")
    if qc is None:
        return None
    if not isinstance(qc, Mapping):
        raise ConfigError(name, "quantization_config", "must be a JSON object")
    method = str(qc.get("quant_method", "")).lower()
    reader = READERS.get(method)
    if reader is None:
        raise ConfigError(name, "quantization_config.quant_method",
                          f"{qc.get('quant_method')!r} is not supported; supported: "
                          + ", ".join(SUPPORTED_QUANT_METHODS))
    scheme = reader(name, qc)
    if cfg.get("model_type") == "deepseek_v4" and scheme.method == "fp8":
        expert_dtype = cfg.get("expert_dtype", "fp4")
        if expert_dtype not in ("fp4", "fp8"):
            raise ConfigError(name, "expert_dtype", f"must be fp4 or fp8, got {expert_dtype!r}")
        if expert_dtype == "fp4":
            scheme = replace(scheme, experts=QuantScheme(
                method="mxfp4", dtype="mxfp4", weight_bits=4, group_size=32, scale_bits=8))
    return scheme


# --------------------------------------------------------------------------- counting
@dataclass(frozen=True, slots=True)
class CheckpointBits:
    """Stored bits of a checkpoint's tensors by kind; ``total_bytes`` is their sum / 8."""

    matmul: int
    """Every layer matmul weight (attention, FFN, experts, routers) with its scales."""
    embedding: int
    """Token embedding, position table and the LM head (if not tied)."""
    other: int
    """Norms and biases (16 bit)."""

    @property
    def total_bytes(self) -> Fraction:
        """All of it in bytes."""
        return Fraction(self.matmul + self.embedding + self.other, 8)


def _layer_modules(spec: ModelSpec, i: int) -> list[tuple[str, int, int, int]]:
    """``(module name, n_in, n_out, copies)`` of layer ``i``'s matmuls, with Hugging Face
    names (llama-style; Mixtral's ``block_sparse_moe``; experts named by expert 0 and counted
    ``copies`` times). Routers are listed with ``copies = -1`` (always 16 bit)."""
    layer = spec.layers[i]
    d = spec.hidden_size
    base = f"model.layers.{i}"
    out = _attention_modules(layer.attention, d, base)
    ffn = layer.ffn
    if isinstance(ffn, Mlp):
        return out + [(f"{base}.mlp.{k}_proj", n_in, n_out, 1)
                      for k, (n_in, n_out, _) in mlp_projections(ffn, d).items()]
    if spec.model_type == "mixtral":
        w = {"gate": "w1", "down": "w2", "up": "w3"}
        moe = f"{base}.block_sparse_moe"
        out += [(f"{moe}.experts.0.{w[k]}", n_in, n_out, ffn.num_experts)
                for k, (n_in, n_out, _) in mlp_projections(ffn.expert, d).items()]
        return [*out, (f"{moe}.gate", d, ffn.num_experts, -1)]
    return out + _moe_modules(ffn, d, base)


def _attention_modules(attention: Any, d: int, base: str) -> list[tuple[str, int, int, int]]:
    """The mixer's matmuls with their Hugging Face names: ``self_attn`` projections, Gated
    DeltaNet's ``linear_attn`` (Qwen3-Next) or Mamba-2's ``mixer`` (Nemotron-H)."""
    names = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "q_a": "q_a_proj",
             "q_b": "q_b_proj", "kv_a": "kv_a_proj_with_mqa", "kv_b": "kv_b_proj"}
    block = "self_attn"
    if isinstance(attention, LinearAttention):  # Gated DeltaNet (Qwen3-Next)
        block = "linear_attn"
        names = {"qkvz": "in_proj_qkvz", "ba": "in_proj_ba", "o": "out_proj"}
    if isinstance(attention, Mamba2):  # Nemotron-H
        block = "mixer"
        names = {"in": "in_proj", "o": "out_proj"}
    return [(f"{base}.{block}.{names.get(k, k)}", n_in, n_out, 1)
            for k, (n_in, n_out, _) in attention_projections(attention, d).items()]


def _moe_modules(ffn: Any, d: int, base: str) -> list[tuple[str, int, int, int]]:
    """A llama-style MoE block's matmuls: the experts (named by expert 0), a dense MLP beside
    them (Gemma 4), latent projections (Nemotron-3 Super), shared experts, the router and the
    shared expert's gate (routers: ``copies = -1``)."""
    out = [(f"{base}.mlp.experts.0.{k}_proj", n_in, n_out, ffn.num_experts)
           for k, (n_in, n_out, _) in mlp_projections(ffn.expert,
                                                      ffn.latent_size or d).items()]
    if ffn.dense is not None:  # Gemma 4: a dense MLP beside the experts
        out += [(f"{base}.mlp.dense.{k}_proj", n_in, n_out, 1)
                for k, (n_in, n_out, _) in mlp_projections(ffn.dense, d).items()]
    if ffn.latent_size:  # Nemotron-3 Super: latent projections around the experts
        out += [(f"{base}.mixer.fc1_latent_proj", d, ffn.latent_size, 1),
                (f"{base}.mixer.fc2_latent_proj", ffn.latent_size, d, 1)]
    if ffn.shared is not None:
        shared = "shared_expert" if ffn.shared_gate else "shared_experts"
        out += [(f"{base}.mlp.{shared}.{k}_proj", n_in, n_out, 1)
                for k, (n_in, n_out, _) in mlp_projections(ffn.shared, d).items()]
    out.append((f"{base}.mlp.gate", d, ffn.num_experts, -1))
    if ffn.shared_gate:
        out.append((f"{base}.mlp.shared_expert_gate", d, 1, -1))
    return out


def _matrix_bits(scheme: QuantScheme | None, module: str, n_in: int, n_out: int,
                 copies: int) -> int:
    """Stored bits of one copy of a matrix: 16 bit without a scheme, for a router
    (``copies < 0``) or a module the scheme keeps; the experts' own scheme for an expert;
    else the scheme's (:meth:`QuantScheme.matrix_bits`)."""
    if scheme is None or copies < 0 or scheme.keeps(module):
        return n_in * n_out * FULL_BITS
    if scheme.experts is not None and ".experts." in module:
        return scheme.experts.matrix_bits(n_in, n_out)
    return scheme.matrix_bits(n_in, n_out)


@lru_cache(maxsize=256)
def checkpoint_bits(spec: ModelSpec, scheme: QuantScheme | None) -> CheckpointBits:
    """Exact stored bits of ``spec``'s weights under ``scheme`` (16 bit everywhere when
    ``None``): quantized matmuls by :meth:`QuantScheme.matrix_bits`, kept modules, routers,
    embeddings, norms and biases at 16 bit."""
    counts = count_params(spec)
    matmul = 0
    matmul_weights = 0
    for i in range(spec.num_layers):
        for module, n_in, n_out, copies in _layer_modules(spec, i):
            n = max(copies, 1)
            matmul_weights += n * n_in * n_out
            matmul += n * _matrix_bits(scheme, module, n_in, n_out, copies)
    d, vocab = spec.hidden_size, spec.vocab_size
    embedding = (counts.embedding + counts.position) * FULL_BITS
    if counts.lm_head:
        head_quantized = (scheme is not None and scheme.quantize_lm_head
                          and not scheme.keeps("lm_head"))
        embedding += (scheme.matrix_bits(d, vocab) if head_quantized and scheme
                      else counts.lm_head * FULL_BITS)
    other = (counts.total - counts.embedding - counts.position - counts.lm_head
             - matmul_weights) * FULL_BITS
    return CheckpointBits(matmul=matmul, embedding=embedding, other=other)
