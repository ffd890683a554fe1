"""Units, element sizes and display formatting: where bytes, FLOPs and dtypes are defined.

Everything inside the planner is in base units: bytes, FLOPs, seconds, US dollars. Precision is
kept in *bits* (`int4` is 4 bits), so `bytes = elements * bits / 8` is exact and int4 never weighs
zero bytes (the `bits // 8` bug of some calculators). Decimal and binary prefixes are distinct:
GB = 10**9 B, GiB = 2**30 B, and every formatted figure names which one it uses.
"""

from __future__ import annotations

import math
from typing import Final

from planner.errors import ValidationError

KB: Final = 10**3
MB: Final = 10**6
GB: Final = 10**9
TB: Final = 10**12
KiB: Final = 2**10
MiB: Final = 2**20
GiB: Final = 2**30
TiB: Final = 2**40

SECONDS_PER_HOUR: Final = 3600.0
HOURS_PER_MONTH: Final = 730.0
"""Average hours in a month (8760 h / 12), the usual cloud-billing convention."""

#: Storage size of one element, in bits, for each dtype the planner knows.
DTYPE_BITS: Final[dict[str, int]] = {
    "fp32": 32,
    "bf16": 16,
    "fp16": 16,
    "fp8": 8,
    "int8": 8,
    "fp4": 4,
    "int4": 4,
}

WEIGHT_DTYPES: Final = ("bf16", "fp16", "fp8", "int8", "int4")
KV_DTYPES: Final = ("bf16", "fp16", "fp8", "int8")


def dtype_bits(name: str, *, field: str = "dtype", allowed: tuple[str, ...] | None = None) -> int:
    """Bits per element of dtype ``name``; a clear :class:`ValidationError` when it is unknown."""
    choices = allowed if allowed is not None else tuple(DTYPE_BITS)
    key = name.strip().lower()
    if key not in choices:
        raise ValidationError(field, f"must be one of {', '.join(choices)}", value=name)
    return DTYPE_BITS[key]


def _scaled(value: float, unit: int, digits: int) -> str:
    return f"{value / unit:,.{digits}f}"


def fmt_bytes_gib(n_bytes: float, digits: int = 2) -> str:
    """``n_bytes`` in GiB (2**30 B), e.g. ``14.96 GiB``."""
    return f"{_scaled(n_bytes, GiB, digits)} GiB"


def fmt_bytes(n_bytes: float) -> str:
    """A byte count with a binary unit that keeps 1 to 4 integer digits: B, KiB, MiB, GiB, TiB."""
    if not math.isfinite(n_bytes):
        return f"{n_bytes} B"
    size = abs(n_bytes)
    for unit, name in ((TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if size >= unit:
            return f"{n_bytes / unit:,.2f} {name}"
    return f"{n_bytes:,.0f} B"


def fmt_flops(flops: float) -> str:
    """A FLOP count with a decimal prefix: GFLOPs, TFLOPs, PFLOPs, EFLOPs (10**9 ... 10**18)."""
    size = abs(flops)
    for unit, name in ((1e21, "ZFLOPs"), (1e18, "EFLOPs"), (1e15, "PFLOPs"), (1e12, "TFLOPs"),
                       (1e9, "GFLOPs"), (1e6, "MFLOPs")):
        if size >= unit:
            return f"{flops / unit:,.2f} {name}"
    return f"{flops:,.0f} FLOPs"


def fmt_seconds(seconds: float) -> str:
    """A duration in ms below one second, in s below an hour, then in h."""
    if not math.isfinite(seconds):
        return "∞ s"
    if abs(seconds) < 1:
        return f"{seconds * 1e3:,.2f} ms"
    if abs(seconds) < SECONDS_PER_HOUR:
        return f"{seconds:,.2f} s"
    return f"{seconds / SECONDS_PER_HOUR:,.2f} h"


def fmt_count(n: float) -> str:
    """An integer count with thousands separators."""
    return f"{n:,.0f}"


def fmt_usd(usd: float) -> str:
    """US dollars with cents."""
    return f"${usd:,.2f}"
