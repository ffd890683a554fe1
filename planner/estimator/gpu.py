"""A GPU as the estimator sees it: memory, dense tensor throughput per dtype, bandwidth, price.

Figures are in base units (bytes, FLOP/s, bytes/s, USD per GPU-hour). Throughput is the dense
tensor-core peak; which dtype's peak applies to a scenario follows from its weight dtype
(:func:`compute_dtype`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.errors import ValidationError
from planner.units import DTYPES


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


COMPUTE_DTYPES: dict[str, tuple[str, ...]] = {
    name: d.compute for name, d in DTYPES.items() if d.weight}
"""Compute dtype tried for each weight dtype, best first (:attr:`planner.units.Dtype.compute`)."""


PEAK_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "int4")
"""Tensor-core dtypes whose dense peak a GPU lists (``gpu_<dtype>_peak`` columns)."""


def gpu_figures(gpu: GpuSpec) -> dict[str, float]:
    """The GPU's figures as the scenario columns the formulas read: memory in bytes, bandwidth
    in bytes/s, price in USD per GPU-hour, and the dense peak of every tensor dtype in FLOP/s
    (0 where the part has no tensor path for it)."""
    return {
        "gpu_memory_bytes": gpu.memory_bytes,
        "gpu_bandwidth_bytes_per_s": gpu.bandwidth_bytes_per_s,
        "price_usd_per_gpu_hour": gpu.price_usd_per_hour,
        **{f"gpu_{d}_peak": gpu.flops_per_s.get(d, 0.0) for d in PEAK_DTYPES},
    }


def compute_dtype(gpu: GpuSpec, weight_dtype: str) -> str:
    """The dtype whose peak FLOP/s a scenario with ``weight_dtype`` weights runs at on ``gpu``."""
    for candidate in COMPUTE_DTYPES.get(weight_dtype, (weight_dtype,)):
        if gpu.flops_per_s.get(candidate):
            return candidate
    raise ValidationError("gpu", f"{gpu.name} lists no tensor throughput usable for "
                          f"{weight_dtype} weights", value=sorted(gpu.flops_per_s))
