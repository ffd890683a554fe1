"""A GPU as users write it: unit-suffixed figures (``memory_gib``, ``bf16_tflops``, …), the
form of ``seeds/gpus.toml``, checked field by field before it becomes a :class:`GpuSpec`.
"""

from __future__ import annotations

from typing import Any

from planner.core.errors import ValidationError, not_one_of
from planner.core.units import parse_number
from planner.service.fields import clean_name, clean_text, parse_bool
from planner.spec.catalog import gpu_from_record, gpu_record
from planner.spec.gpu import GpuSpec

GPU_FIELDS = ("vendor", "label", "memory_gib", "bf16_tflops", "fp16_tflops", "fp8_tflops",
              "int8_tops", "int4_tops", "nvfp4_tflops", "mxfp4_tflops",
              "memory_bandwidth_gb_per_s", "interconnect_gb_per_s",
              "power_w", "price_usd_per_hour", "price_is_example", "source",
              "usable_memory_gib", "matmul_efficiency", "matmul_efficiency_8bit",
              "bandwidth_efficiency", "runtime_context_gib", "serving_source",
              "nvlink_domain_gpus", "mesh_links_per_gpu", "pcie_gen", "nic_gbit_per_s",
              "topology_source", "compute_capability")
"""GPU fields a user sets, in the unit-suffixed form of ``seeds/gpus.toml``."""
_POSITIVE = ("memory_gib", "memory_bandwidth_gb_per_s")
_THROUGHPUT = ("bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "int4_tops",
               "nvfp4_tflops", "mxfp4_tflops")
_SHARES = ("matmul_efficiency", "matmul_efficiency_8bit", "bandwidth_efficiency")
_WHOLE = ("nvlink_domain_gpus", "mesh_links_per_gpu", "pcie_gen")
"""Topology counts: whole numbers (``pcie_gen`` 0 = unknown, else 3 to 6)."""


GPU_LIMITS: dict[str, tuple[float, float]] = {
    "memory_gib": (0.0, 1e6),
    "memory_bandwidth_gb_per_s": (0.0, 1e9),
    "bf16_tflops": (0.0, 1e9),
    "fp16_tflops": (0.0, 1e9),
    "fp8_tflops": (0.0, 1e9),
    "int8_tops": (0.0, 1e9),
    "int4_tops": (0.0, 1e9),
    "nvfp4_tflops": (0.0, 1e9),
    "mxfp4_tflops": (0.0, 1e9),
    "interconnect_gb_per_s": (0.0, 1e9),
    "power_w": (0.0, 1e7),
    "price_usd_per_hour": (0.0, 1e6),
    "nvlink_domain_gpus": (0.0, 1e6),
    "mesh_links_per_gpu": (0.0, 1024.0),
    "pcie_gen": (0.0, 6.0),
    "nic_gbit_per_s": (0.0, 1e7),
    "compute_capability": (0.0, 99.9),
}
"""Inclusive bounds of each GPU figure: wide enough for any real GPU, narrow enough that every
product of them stays finite (a 1e308 price would make costs infinite)."""


def gpu_number(field: str, value: Any, *, limit: str | None = None,
               positive: bool | None = None) -> float:
    """A GPU figure within :data:`GPU_LIMITS` of ``limit`` (default: ``field``), above 0 for
    memory and bandwidth (or as ``positive`` says); read by :func:`planner.core.units.parse_number`
    (``1,000`` and ``1_000`` group digits; ``1,5``, NaN and infinities are refused)."""
    key = limit or field
    low, high = GPU_LIMITS.get(key, (0.0, 1e12))
    positive = key in _POSITIVE if positive is None else positive
    number = parse_number(value if isinstance(value, (str, int, float)) else str(value))
    if (number is None or number > high or number < low
            or (positive and number == low)):
        raise ValidationError(field, f"must be {_allowed(low, high, positive)}", value=value)
    return number


def _allowed(low: float, high: float, positive: bool) -> str:
    """What a GPU figure must be, in words: above ``low`` (``positive``) or from it, at most
    ``high``."""
    if positive:
        return f"a number above {low:g} and at most {high:g}"
    return f"a number from {low:g} to {high:g}"


def spec_from_user(name: str, record: dict[str, Any]) -> GpuSpec:
    """The GPU ``record`` describes; :class:`ValidationError` naming the first bad field.

    Memory and bandwidth are required, and at least one throughput figure; a throughput of 0
    means the GPU lacks that dtype."""
    unknown = sorted(set(record) - set(GPU_FIELDS))
    if unknown:
        raise ValidationError(unknown[0], not_one_of(unknown[0], GPU_FIELDS, "is not a GPU field",
                                                     "`planner gpu show NAME --json` lists "
                                                     "them"))
    clean = {key: _clean_field(key, value) for key, value in record.items()}
    _check_figures(clean, record)
    clean = {k: v for k, v in clean.items() if not (k in _THROUGHPUT and v == 0)}
    return gpu_from_record(clean_name(name, "name"), clean)


def _clean_field(key: str, value: Any) -> Any:
    """One field of a user's GPU record parsed: text cleaned, the example-price flag a
    boolean, anything else a number in its range (:func:`gpu_number`)."""
    if key in ("vendor", "label", "source", "serving_source", "topology_source"):
        return clean_text(value, key)
    if key == "price_is_example":
        return parse_bool(key, value)
    return gpu_number(key, value)


def _check_figures(clean: dict[str, Any], record: dict[str, Any]) -> None:
    """Refuse a parsed GPU record without memory and bandwidth or any throughput, with a
    fractional count, an unknown PCIe generation or a share above 1 (``record``: the values
    as given, named in the message)."""
    _check_present(clean)
    _check_whole(clean, record)
    _check_codes(clean, record)
    for key in _SHARES:
        if clean.get(key, 0) > 1:
            raise ValidationError(key, "must be a share from 0 to 1 (0: the default)",
                                  value=record[key])


def _check_present(clean: dict[str, Any]) -> None:
    """Refuse a GPU record without memory and bandwidth, or without any throughput."""
    for key in _POSITIVE:
        if key not in clean:
            raise ValidationError(key, "is required (a number above 0)")
    if not any(clean.get(k) for k in _THROUGHPUT):
        raise ValidationError("bf16_tflops", "at least one of " + ", ".join(_THROUGHPUT)
                              + " must be a number above 0")


def _check_whole(clean: dict[str, Any], record: dict[str, Any]) -> None:
    """Refuse a fractional count (``record``: the values as given, named in the message)."""
    for key in _WHOLE:
        if key in clean and clean[key] != int(clean[key]):
            raise ValidationError(key, f"must be a whole number from {GPU_LIMITS[key][0]:g} to "
                                  f"{GPU_LIMITS[key][1]:g}", value=record[key])


def _check_codes(clean: dict[str, Any], record: dict[str, Any]) -> None:
    """Refuse a compute capability with more than one minor digit and an unknown PCIe
    generation."""
    capability = clean.get("compute_capability", 0.0)
    if abs(capability * 10 - round(capability * 10)) > 1e-9:
        raise ValidationError("compute_capability", "must be a CUDA compute capability "
                              "major.minor with one minor digit (10.0, 12.0; 0 = not CUDA)",
                              value=record["compute_capability"])
    if clean.get("pcie_gen", 0) not in (0, 3, 4, 5, 6):
        raise ValidationError("pcie_gen", "must be 0 (unknown) or a PCIe generation 3 to 6",
                              value=record["pcie_gen"])


def changed_spec(spec: GpuSpec, changes: dict[str, Any]) -> GpuSpec:
    """``spec`` with some user figures changed. A new price is a real one
    (``price_is_example`` false) unless the changes say otherwise; a throughput set to 0
    drops that dtype."""
    record = gpu_record(spec)
    if "price_usd_per_hour" in changes and "price_is_example" not in changes:
        changes = {**changes, "price_is_example": False}
    for key in _THROUGHPUT:
        if key in changes and gpu_number(key, changes[key]) == 0:
            record.pop(key, None)
    record.update({k: v for k, v in changes.items()
                   if not (k in _THROUGHPUT and gpu_number(k, v) == 0)})
    return spec_from_user(spec.name, record)
