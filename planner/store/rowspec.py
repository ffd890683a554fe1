"""A gpus row → :class:`GpuSpec`, for an ORM row or any object with the same attributes
(:mod:`planner.store.lite` reads rows without SQLAlchemy)."""

from __future__ import annotations

from typing import Any

from planner.estimator.gpu import GpuSpec

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
                   source=row.source, usable_memory_bytes=row.usable_memory_bytes or 0,
                   matmul_efficiency=row.matmul_efficiency or 0.0,
                   matmul_efficiency_8bit=row.matmul_efficiency_8bit or 0.0,
                   bandwidth_efficiency=row.bandwidth_efficiency or 0.0,
                   runtime_context_bytes=row.runtime_context_bytes or 0,
                   serving_source=row.serving_source or "",
                   nvlink_domain_gpus=row.nvlink_domain_gpus or 0,
                   mesh_links_per_gpu=row.mesh_links_per_gpu or 0,
                   pcie_gen=row.pcie_gen or 0, nic_gbit_per_s=row.nic_gbit_per_s or 0.0,
                   topology_source=row.topology_source or "",
                   compute_capability=row.compute_capability or 0.0)
