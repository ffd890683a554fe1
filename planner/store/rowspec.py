"""A gpus row → :class:`GpuSpec`, for an ORM row or any object with the same attributes
(:mod:`planner.store.lite` reads rows without SQLAlchemy)."""

from __future__ import annotations

from typing import Any

from planner.spec.gpu import GpuSpec

GPU_FLOPS_COLUMNS = {"bf16": "bf16_flops_per_s", "fp16": "fp16_flops_per_s",
                     "fp8": "fp8_flops_per_s", "int8": "int8_ops_per_s", "int4": "int4_ops_per_s",
                     "nvfp4": "nvfp4_flops_per_s", "mxfp4": "mxfp4_flops_per_s"}

GPU_COLUMNS = ("name", "memory_bytes", *GPU_FLOPS_COLUMNS.values(),
               "memory_bandwidth_bytes_per_s", "price_usd_per_gpu_hour", "vendor", "label",
               "interconnect_bytes_per_s", "power_w", "price_is_example", "source",
               "usable_memory_bytes", "matmul_efficiency", "matmul_efficiency_8bit",
               "bandwidth_efficiency", "runtime_context_bytes", "serving_source",
               "nvlink_domain_gpus", "mesh_links_per_gpu", "pcie_gen", "nic_gbit_per_s",
               "topology_source", "compute_capability")
"""The columns of the gpus table :func:`gpu_spec` reads."""


def gpu_spec(row: Any) -> GpuSpec:
    """GpuSpec of a gpus row."""
    flops = {dt: getattr(row, col) for dt, col in GPU_FLOPS_COLUMNS.items()
             if getattr(row, col)}
    return GpuSpec(name=row.name, memory_bytes=row.memory_bytes, flops_per_s=flops,
                   bandwidth_bytes_per_s=row.memory_bandwidth_bytes_per_s,
                   price_usd_per_hour=row.price_usd_per_gpu_hour, vendor=row.vendor,
                   label=row.label, interconnect_bytes_per_s=row.interconnect_bytes_per_s,
                   power_w=row.power_w, price_is_example=row.price_is_example,
                   source=row.source,
                   **{key: getattr(row, key) or empty for key, empty in GPU_OPTIONAL.items()})


GPU_OPTIONAL: dict[str, Any] = {
    "usable_memory_bytes": 0, "matmul_efficiency": 0.0, "matmul_efficiency_8bit": 0.0,
    "bandwidth_efficiency": 0.0, "runtime_context_bytes": 0, "serving_source": "",
    "nvlink_domain_gpus": 0, "mesh_links_per_gpu": 0, "pcie_gen": 0, "nic_gbit_per_s": 0.0,
    "topology_source": "", "compute_capability": 0.0}
"""The gpus columns that may be empty (a row stored before they existed), each read under
its own name with the :class:`GpuSpec` default for empty (0: the planner's default)."""
