"""Units, element sizes and display formatting: where bytes, FLOPs and dtypes are defined.

Everything inside the planner is in base units: bytes, FLOPs, seconds, US dollars. Precision is
kept in *bits* (`int4` is 4 bits), so `bytes = elements * bits / 8` is exact and int4 never weighs
zero bytes (the `bits // 8` bug of some calculators). Decimal and binary prefixes are distinct:
GB = 10**9 B, GiB = 2**30 B, and every formatted figure names which one it uses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

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

@dataclass(frozen=True, slots=True)
class Dtype:
    """What the planner knows of one element dtype: adding a dtype is one entry in
    :data:`DTYPES`, and every choice list, bit lookup (Python and Excel) and compute path
    follows from it."""

    bits: int
    """Storage size of one element."""
    weight: bool = False
    """Offered as a weight dtype."""
    kv: bool = False
    """Offered as a KV-cache dtype."""
    group_size: int = 0
    """Weights per quantization scale by default (0: no per-group scales)."""
    compute: tuple[str, ...] = ()
    """Tensor-core dtypes tried for matmuls on weights of this dtype, best first: the first one
    the GPU lists sets the peak (16-bit falls back to the other 16-bit format; fp8/int8 run
    W8A8 where the part supports it; int4 is weight-only, dequantized to 16 bit)."""
    scale_bits: int = -1
    """Bits of one group scale when the format fixes it (MXFP4's E8M0 and NVFP4's FP8 E4M3
    scales: 8); -1 = the scenario's ``quant_scale_bits``."""
    activation_path: str = "16bit"
    """The matmul path under weight-and-activation quantization (``quant_mode``
    ``weight_activation``): the weights' own low-bit tensor path (fp8, int8, int4, fp4)."""

    @property
    def bits_per_weight(self) -> float:
        """Stored bits per weight with the format's own group scales: ``bits + scale/group``
        (MXFP4 4 + 8/32 = 4.25, NVFP4 4 + 8/16 = 4.5; formats whose scale width is the
        scenario's choice count ``bits`` only)."""
        if self.group_size and self.scale_bits >= 0:
            return self.bits + self.scale_bits / self.group_size
        return float(self.bits)


DTYPES: Final[dict[str, Dtype]] = {
    "fp32": Dtype(32),
    "bf16": Dtype(16, weight=True, kv=True, compute=("bf16", "fp16")),
    "fp16": Dtype(16, weight=True, kv=True, compute=("fp16", "bf16")),
    "fp8": Dtype(8, weight=True, kv=True, compute=("fp8", "bf16", "fp16"),
                 activation_path="fp8"),
    "int8": Dtype(8, weight=True, kv=True, compute=("int8", "bf16", "fp16"),
                  activation_path="int8"),
    "fp4": Dtype(4),
    "int4": Dtype(4, weight=True, group_size=128, compute=("bf16", "fp16"),
                  activation_path="int4"),
    "mxfp4": Dtype(4, weight=True, group_size=32, scale_bits=8, compute=("bf16", "fp16"),
                   activation_path="mxfp4"),
    "nvfp4": Dtype(4, weight=True, group_size=16, scale_bits=8, compute=("bf16", "fp16"),
                   activation_path="fp4"),
}
"""Every dtype the planner knows (int4's group of 128 weights per scale is GPTQ's and AWQ's
default). The FP4 formats: MXFP4 (OCP Microscaling v1.0) is E2M1 values with one E8M0 (8-bit
power-of-two) scale per 32; NVFP4 is E2M1 values with one FP8 E4M3 scale per 16 (and one fp32
scale per tensor, which a checkpoint's own count includes: :mod:`planner.spec.quant_config`).
MXFP4 runs weight-only (dequantized to 16 bit) unless the scenario asks for W4A4; NVFP4
runs W4A4 where the part has FP4 tensor cores (:data:`planner.spec.gpu.W4A4_BY_DEFAULT`)."""

WEIGHT_AUTO: Final = "auto"
"""The weight-dtype choice that takes the checkpoint's own ``quantization_config`` (16 bit when
the config has none)."""

#: Storage size of one element, in bits, for each dtype the planner knows.
DTYPE_BITS: Final[dict[str, int]] = {name: d.bits for name, d in DTYPES.items()}
WEIGHT_DTYPES: Final = tuple(name for name, d in DTYPES.items() if d.weight)
WEIGHT_DTYPE_CHOICES: Final = (WEIGHT_AUTO, *WEIGHT_DTYPES)
"""What a scenario's ``weight_dtype`` may be: ``auto`` (the checkpoint's) or a weight dtype."""
KV_DTYPES: Final = tuple(name for name, d in DTYPES.items() if d.kv)
DEFAULT_GROUP_SIZE: Final[dict[str, int]] = {name: d.group_size for name, d in DTYPES.items()}
FORMAT_SCALE_BITS: Final[dict[str, int]] = {name: d.scale_bits for name, d in DTYPES.items()}


_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")
"""A number whose integer part is grouped by thousands with commas: ``1,000``, ``-12,345.5``."""


def parse_number(raw: Any) -> float | None:
    """The finite number ``raw`` writes, or ``None``: the one rule every entry point (flags,
    ``key=value``, GPU figures, imported text cells, table columns) reads numbers by.

    Python's float syntax (``1e3``, ``1_000``), plus commas only as a valid thousands grouping
    (``1,000``, ``12,345,678.5``): ``1,5`` or ``1,0000`` is refused, never read as 15 or 10000.
    NaN and infinities are refused; so are booleans."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        try:
            value = float(raw)
        except OverflowError:
            return None
    else:
        text = str(raw).strip()
        if "," in text:
            if not _GROUPED.fullmatch(text):
                return None
            text = text.replace(",", "")
        try:
            value = float(text)
        except (ValueError, OverflowError):
            return None
    return value if math.isfinite(value) else None


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


def _fmt_number(unit: str, digits: int = 2) -> Callable[[float], str]:
    return lambda v: f"{v:,.{digits}f} {unit}"


FORMATS: dict[str, Callable[[Any], str]] = {
    "B": fmt_bytes,
    "FLOPs": fmt_flops,
    "s": fmt_seconds,
    "tokens": lambda v: f"{fmt_count(v)} tokens",
    "sequences": lambda v: f"{fmt_count(v)} sequences",
    "params": lambda v: f"{fmt_count(v)} params",
    "count": fmt_count,
    "GPUs": lambda v: f"{fmt_count(v)} GPUs",
    "bits": lambda v: f"{v:g} bits",
    "fraction": lambda v: f"{v:.4g}",
    "bool": lambda v: "yes" if v else "no",
    "tokens/s": _fmt_number("tokens/s", 1),
    "requests/s": _fmt_number("requests/s", 3),
    "tokens/day": lambda v: f"{fmt_count(v)} tokens/day",
    "FLOPs/token": lambda v: f"{fmt_flops(v)}/token",
    "USD": fmt_usd,
    "USD/h": lambda v: f"{fmt_usd(v)}/h",
    "USD/month": lambda v: f"{fmt_usd(v)}/month",
    "USD/Mtok": lambda v: f"{fmt_usd(v)}/M tokens",
    "GPU-h": _fmt_number("GPU-h", 1),
    "B/s": lambda v: f"{v / 1e9:,.0f} GB/s",
    "Gb/s": lambda v: f"{v:,.0f} Gb/s",
    "FLOP/s": lambda v: f"{v / 1e12:,.1f} TFLOP/s",
    "USD/GPU-h": lambda v: f"{fmt_usd(v)}/GPU-h",
    "elements": lambda v: f"{fmt_count(v)} elements",
    "FLOPs/pair": lambda v: f"{fmt_count(v)} FLOPs/pair",
    "code": lambda v: f"{v:g}",
    "σ": lambda v: f"{v:.3f} σ",
}
"""How a figure in each unit is shown: every displayed number says its unit (CLI, UI and
``explain`` all format through this table)."""


def float_reprs(values: Any) -> list[str]:
    """``float.__repr__`` of each value of a 1-D float array (Python's shortest round-trip
    text: ``'0.1'``, ``'1e-05'``, ``'nan'``, ``'inf'``), as a list.

    That repr costs 0.3-0.5 µs a value (it dominates writing a 100,000-scenario JSON list or
    workbook), so a column that repeats values is formatted once per distinct value: when a
    sample of its first 256 values is at least half repeats, the column's distinct bit
    patterns are found with one numpy sort (about 0.1 µs a value) and only those are
    formatted. Equal bits give equal text (``0.0`` and ``-0.0`` differ in bits, so they stay
    apart); the result is the same as formatting every value."""
    # lazy: this module is imported where numpy is not needed; a caller holds an array, so
    # numpy is loaded already
    import numpy as np

    array = np.ascontiguousarray(values, dtype=np.float64)
    if len(array) >= 64:
        bits = array.view(np.int64)
        sample = bits[:256]
        if len(np.unique(sample)) * 2 <= len(sample):
            distinct, inverse = np.unique(bits, return_inverse=True)
            if len(distinct) * 2 <= len(array):
                texts = np.array(list(map(float.__repr__, distinct.view(np.float64).tolist())),
                                 dtype=object)
                return texts[inverse].tolist()
    return list(map(float.__repr__, array.tolist()))
