"""How a quantized checkpoint stores its weights (:class:`QuantScheme`) and the matmul paths.

Why a module of its own: :class:`planner.spec.architecture.ModelSpec` carries a scheme,
and :mod:`planner.spec.quant_config` reads one from a config and counts a model's bits
under it (so it imports the architecture); the scheme itself needs neither, and living here
keeps the three free of an import circle. The stored-bit formulas of each method are in
:mod:`planner.spec.quant_config`'s docstring, with their sources.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

FULL_BITS = 16
"""Bits of a tensor the checkpoint keeps unquantized (bf16/fp16)."""

ComputePath = Literal["16bit", "fp8", "int8", "int4", "fp4", "mxfp4"]
COMPUTE_PATHS: dict[str, int] = {"16bit": 0, "fp8": 1, "int8": 2, "int4": 3, "fp4": 4,
                                 "mxfp4": 5}
"""Matmul paths by code: 16-bit tensor cores (weight-only quantization dequantizes to 16 bit),
or the 8-bit / 4-bit tensor path of weight-and-activation quantization (W8A8, W4A4): ``fp4``
is NVFP4 (E2M1 values, FP8 scales per 16), ``mxfp4`` the OCP MX format (E8M0 scales per 32);
a GPU lists a dense peak for each it runs on its tensor cores."""
_FP4_PATH = {"nvfp4": "fp4", "mxfp4": "mxfp4"}


@dataclass(frozen=True, slots=True)
class QuantScheme:
    """How a checkpoint stores its quantized matmul weights (see the module docstring)."""

    method: str
    """``gptq``, ``awq``, ``fp8``, ``compressed-tensors``, ``mxfp4``, ``nvfp4``,
    ``bitsandbytes``."""
    dtype: str
    """The planner dtype of the quantized weights (:data:`planner.core.units.DTYPES`): int4, int8,
    fp8, mxfp4 or nvfp4 (4-bit nf4 counts as int4)."""
    weight_bits: int
    group_size: int = 0
    """Weights per scale along the input dimension; 0 = one scale per output row (channel);
    -1 = one scale per tensor."""
    block: tuple[int, int] = (0, 0)
    """``(rows, columns)`` of a 2-D scale block (FP8 block-wise), else (0, 0)."""
    scale_bits: int = 16
    """Bits of one scale."""
    zero_bits: int = 0
    """Bits of one zero point (0: symmetric, none stored)."""
    tensor_bits: int = 0
    """Bits stored once per quantized matrix (global / input scales, shapes, code tables)."""
    row_index_bits: int = 0
    """Bits stored per input row (GPTQ's int32 ``g_idx``)."""
    double_quant: bool = False
    """bitsandbytes nested quantization of the absmax (8-bit, fp32 scale per 256)."""
    activation_bits: int = 16
    """16 for weight-only quantization; 8 or 4 when activations are quantized too."""
    keep: tuple[str, ...] = ()
    """Module-name patterns the checkpoint keeps in 16 bit."""
    quantize_lm_head: bool = False
    kv_cache_bits: int = 0
    """Bits of the KV cache the checkpoint declares (8: a ModelOpt checkpoint's FP8 KV cache,
    :func:`planner.spec.quant_config._modelopt_kv_cache_bits`; 0: none declared, the
    engine's cache is the model dtype unless chosen). Engines take it for
    ``--kv-cache-dtype auto`` (:func:`planner.formulas.derived.kv_bits`)."""
    experts: QuantScheme | None = None
    """The routed experts' own scheme where it differs from the rest (``None``: the same).
    DeepSeek-V4's ``expert_dtype`` "fp4" (the default when absent): MXFP4 experts (E2M1
    values, one E8M0 scale per 32) beside FP8 block-quantized linears and shared experts
    (vLLM ``DeepseekV4FP8Config.get_quant_method``: ``Mxfp4MoEMethod`` for ``FusedMoE``;
    ``vllm/model_executor/models/deepseek_v4.py``). Only the stored bits follow it: the
    matmul path stays the scheme's own."""

    @property
    def weight_only(self) -> bool:
        """True when matmuls run in 16 bit on dequantized weights."""
        return self.activation_bits >= FULL_BITS

    @property
    def compute_path(self) -> str:
        """The matmul path this scheme runs on: 16bit for weight-only, else the low-bit one."""
        if self.weight_only:
            return "16bit"
        if self.dtype in ("mxfp4", "nvfp4"):
            return _FP4_PATH[self.dtype]
        return self.dtype if self.dtype in COMPUTE_PATHS else "16bit"

    @property
    def low_bit_path(self) -> str:
        """The low-bit tensor path the weights' own format would use under W-and-A
        quantization (int4 for GPTQ/AWQ int4, fp8 for fp8, fp4 for NVFP4, mxfp4 for MXFP4)."""
        if self.dtype in ("mxfp4", "nvfp4"):
            return _FP4_PATH[self.dtype]
        return self.dtype if self.dtype in COMPUTE_PATHS else "16bit"

    def matrix_bits(self, n_in: int, n_out: int) -> int:
        """Exact stored bits of one ``n_in x n_out`` matrix: values, scales, zero points,
        per-row indices and per-tensor extras (formulas in the module docstring)."""
        n = n_in * n_out
        bits = n * self.weight_bits + n_in * self.row_index_bits + self.tensor_bits
        if self.block != (0, 0):
            rows, cols = self.block
            return bits + math.ceil(n_out / rows) * math.ceil(n_in / cols) * self.scale_bits
        if self.method == "bitsandbytes" and self.weight_bits == 4:
            blocks = math.ceil(n / 64)
            if self.double_quant:
                return bits + blocks * 8 + math.ceil(blocks / 256) * 32
            return bits + blocks * 32
        if self.group_size < 0:
            groups, per_group_out = 1, 1
        elif self.group_size == 0:
            groups, per_group_out = 1, n_out
        else:
            groups, per_group_out = math.ceil(n_in / self.group_size), n_out
        return bits + groups * per_group_out * (self.scale_bits + self.zero_bits)

    def bits_per_weight(self, n_in: int = 4096, n_out: int = 4096) -> Fraction:
        """Stored bits per weight of an ``n_in x n_out`` matrix, exactly (a fraction)."""
        return Fraction(self.matrix_bits(n_in, n_out), n_in * n_out)

    def keeps(self, module: str) -> bool:
        """True when ``module`` (a dotted Hugging Face module name) stays in 16 bit."""
        return any(_matches(pattern, module) for pattern in self.keep)


def _matches(pattern: str, module: str) -> bool:
    """compressed-tensors ``re:`` patterns as regular expressions; glob patterns
    (``model.layers.*.self_attn``) and plain names against the name or any of its dotted
    prefixes, or as a dotted component run inside it (``lm_head``, ``mlp.gate``)."""
    if pattern.startswith("re:"):
        return re.match(pattern[3:], module) is not None
    parts = module.split(".")
    prefixes = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    if any(ch in pattern for ch in "*?["):
        return any(fnmatch.fnmatchcase(p, pattern) for p in prefixes)
    return pattern == module or f".{pattern}." in f".{module}."
