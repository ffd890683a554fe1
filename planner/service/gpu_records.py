"""A GPU as users write it: unit-suffixed figures (``memory_gib``, ``bf16_tflops``, …), the
form of ``seeds/gpus.toml``, checked field by field before it becomes a :class:`GpuSpec`.
"""

from __future__ import annotations

from typing import Any

from planner.catalog import gpu_from_record, gpu_record
from planner.errors import ValidationError
from planner.estimator.gpu import GpuSpec
from planner.service.fields import clean_name, clean_text, parse_bool

GPU_FIELDS = ("vendor", "label", "memory_gib", "bf16_tflops", "fp16_tflops", "fp8_tflops",
              "int8_tops", "int4_tops", "memory_bandwidth_gb_per_s", "interconnect_gb_per_s",
              "power_w", "price_usd_per_hour", "price_is_example", "source")
"""GPU fields a user sets, in the unit-suffixed form of ``seeds/gpus.toml``."""
_POSITIVE = ("memory_gib", "memory_bandwidth_gb_per_s")
_THROUGHPUT = ("bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "int4_tops")


def gpu_number(field: str, value: Any) -> float:
    """A figure of at least 0 (above 0 for memory and bandwidth); ``_`` and ``,`` may group
    digits."""
    try:
        number = float(str(value).replace("_", "").replace(",", ""))
    except ValueError:
        number = float("nan")
    if not number == number or number in (float("inf"), float("-inf")) or number < 0:
        raise ValidationError(field, "must be a number of at least 0", value=value)
    if field in _POSITIVE and number == 0:
        raise ValidationError(field, "must be a number above 0", value=value)
    return number


def spec_from_user(name: str, record: dict[str, Any]) -> GpuSpec:
    """The GPU ``record`` describes; :class:`ValidationError` naming the first bad field.

    Memory and bandwidth are required, and at least one throughput figure; a throughput of 0
    means the GPU lacks that dtype."""
    unknown = sorted(set(record) - set(GPU_FIELDS))
    if unknown:
        raise ValidationError(unknown[0], "is not a GPU field; fields are "
                              + ", ".join(GPU_FIELDS))
    clean: dict[str, Any] = {}
    for key, value in record.items():
        if key in ("vendor", "label", "source"):
            clean[key] = clean_text(value, key)
        elif key == "price_is_example":
            clean[key] = parse_bool(key, value)
        else:
            clean[key] = gpu_number(key, value)
    for key in _POSITIVE:
        if key not in clean:
            raise ValidationError(key, "is required (a number above 0)")
    if not any(clean.get(k) for k in _THROUGHPUT):
        raise ValidationError("bf16_tflops", "at least one of " + ", ".join(_THROUGHPUT)
                              + " must be a number above 0")
    clean = {k: v for k, v in clean.items() if not (k in _THROUGHPUT and v == 0)}
    return gpu_from_record(clean_name(name, "name"), clean)


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
