"""A GPU as the estimator sees it: memory, dense tensor throughput per dtype, bandwidth, price.

Figures are in base units (bytes, FLOP/s, bytes/s, USD per GPU-hour). Throughput is the dense
tensor-core peak; which dtype's peak applies to a scenario follows from its weight dtype
(:func:`compute_dtype`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.errors import ValidationError


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One GPU model. ``flops_per_s`` maps a compute dtype (bf16, fp16, fp8, int8, int4) to its
    dense peak; a dtype the part lacks is absent."""

    name: str
    memory_bytes: int
    flops_per_s: dict[str, float]
    bandwidth_bytes_per_s: float
    price_usd_per_hour: float = 0.0
    vendor: str = ""
    label: str = ""
    interconnect_bytes_per_s: float = 0.0
    power_w: float = 0.0
    price_is_example: bool = False
    source: str = ""
    notes: dict[str, str] = field(default_factory=dict)


#: Compute dtype tried for each weight dtype, best first. 16-bit weights run at bf16 (fp16 where
#: the part has no bf16, e.g. T4); fp8 and int8 weights run W8A8 where the part supports it;
#: int4 weights are weight-only (W4A16): dequantized and multiplied at 16 bit.
COMPUTE_DTYPES: dict[str, tuple[str, ...]] = {
    "bf16": ("bf16", "fp16"),
    "fp16": ("fp16", "bf16"),
    "fp8": ("fp8", "bf16", "fp16"),
    "int8": ("int8", "bf16", "fp16"),
    "int4": ("bf16", "fp16"),
}


def compute_dtype(gpu: GpuSpec, weight_dtype: str) -> str:
    """The dtype whose peak FLOP/s a scenario with ``weight_dtype`` weights runs at on ``gpu``."""
    for candidate in COMPUTE_DTYPES.get(weight_dtype, (weight_dtype,)):
        if gpu.flops_per_s.get(candidate):
            return candidate
    raise ValidationError("gpu", f"{gpu.name} lists no tensor throughput usable for "
                          f"{weight_dtype} weights", value=sorted(gpu.flops_per_s))
