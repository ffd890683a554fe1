"""What a capacity plan is given: months, demands, prices and pricing, parsed and checked.

Why a module of its own: the CLI, the service, the seeds and the workbook import read a plan's
inputs by these rules (:func:`demand_spec`, :func:`month_index`, the ``check_*`` functions) and
build :class:`Horizon`, :class:`Demand` and :class:`GpuPrice` records; the evaluation of a plan
(:mod:`planner.compute.plan`) and its conventions are apart. A bad value gets a
:class:`~planner.core.errors.ValidationError` naming the field and the allowed range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from planner.compute.inputs import input_columns
from planner.compute.validation import rate_unit
from planner.core.errors import ValidationError
from planner.core.units import HOURS_PER_MONTH, parse_number

PLAN_HOURS_PER_MONTH = HOURS_PER_MONTH
"""Hours billed per GPU per month in a plan: 730 h = 8760 h / 12, whatever the month's length
(the scenario's own ``hours_per_month`` input is not used by plans)."""


PRICINGS = ("on-demand", "reserved", "spot")
"""Which price a plan bills GPUs at."""


RATE_UNITS: dict[str, float] = {"s": 1.0, "min": 60.0, "day": 86_400.0}
"""Seconds per unit of a request rate written ``N/unit`` (requests/s, /min, /day)."""


MAX_RATE_REQUESTS_PER_S = float(input_columns()["target_requests_per_s"].maximum or 0)
"""Largest rate a demand may name: the bound of the ``target_requests_per_s`` input (1e9),
which each month's rate becomes."""


MAX_HORIZON_MONTHS = 120
"""Longest horizon: ten years of months."""


GROWTH_RANGE = (-0.99, 10.0)
"""Monthly growth fraction bounds: a fall of at most 99% to a rise of at most 1000% a month."""


MAX_PRICE_USD_PER_GPU_HOUR = 10_000.0


MAX_TERM_MONTHS = 120


_MONTH = re.compile(r"^\s*(\d{4})-(\d{1,2})\s*$")


_RATE = re.compile(r"^\s*([^/\s]+)\s*(?:(?:requests?|req)?\s*/\s*([a-z]+))?\s*$", re.IGNORECASE)


def month_index(text: Any, field_name: str = "month") -> int:
    """``year * 12 + month - 1`` of a ``YYYY-MM`` text (years 2000 to 2199)."""
    m = _MONTH.match(str(text))
    if not m or not (2000 <= int(m.group(1)) <= 2199 and 1 <= int(m.group(2)) <= 12):
        raise ValidationError(field_name, "a month written YYYY-MM (2000-01 to 2199-12)",
                              value=text)
    return int(m.group(1)) * 12 + int(m.group(2)) - 1


def month_text(index: int) -> str:
    """The ``YYYY-MM`` text of a month index."""
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def parse_unit(text: Any, field_name: str = "unit") -> str:
    """``s``, ``min`` or ``day`` from a unit name (``/s``, ``minute``, ``requests/day``...),
    read as a scenario's rate input reads it (:func:`planner.compute.validation.rate_unit`);
    a plan keeps the unit for display, so only those three."""
    unit = rate_unit(str(text))
    if unit not in RATE_UNITS:
        raise ValidationError(field_name, "one of /s, /min, /day (requests per second, minute "
                              "or day)", value=text)
    return unit


def parse_rate(text: Any, field_name: str = "rate", unit: str | None = None
               ) -> tuple[float, str]:
    """(requests/s, unit given) of a rate such as ``5``, ``5/s``, ``300/min``, ``1.2e6/day``;
    a bare number is in ``unit`` (default requests/s). From 0 to 1e9 requests/s."""
    m = _RATE.match(str(text))
    number = parse_number(m.group(1)) if m else None
    allowed = ("a request rate from 0 to 1e9 requests/s, written N, N/s, N/min or N/day")
    if number is None or number < 0:
        raise ValidationError(field_name, allowed, value=text)
    given = parse_unit(m.group(2), field_name) if m and m.group(2) else (unit or "s")
    per_s = number / RATE_UNITS[given]
    if per_s > MAX_RATE_REQUESTS_PER_S:
        raise ValidationError(field_name, allowed, value=text)
    return per_s, given


def parse_growth(text: Any, field_name: str = "growth") -> float:
    """Monthly growth as a fraction: ``8%`` is 0.08, ``0.08`` is 0.08, ``-5%`` is -0.05.
    A bare number above 1 is refused as ambiguous (write ``8%`` or ``0.08``)."""
    raw = str(text).strip()
    percent = raw.endswith("%")
    number = parse_number(raw[:-1] if percent else raw)
    low, high = GROWTH_RANGE
    allowed = f"a monthly growth from {low:.0%} to {high:.0%}, written 8% or 0.08"
    if number is None:
        raise ValidationError(field_name, allowed, value=text)
    if not percent and abs(number) > 1:
        raise ValidationError(field_name, f"{allowed} ({raw} is ambiguous: write {raw}% or "
                              f"{number / 100:g})", value=text)
    fraction = number / 100 if percent else number
    if not low <= fraction <= high:
        raise ValidationError(field_name, allowed, value=text)
    return fraction


def parse_series(text: Any, unit: str = "s", field_name: str = "series") -> dict[str, float]:
    """``{month: requests/s}`` of ``2027-01=5,2027-02=6/min,...`` (a bare value is in
    ``unit``); months in any order, each at most once."""
    out: dict[int, float] = {}
    parts = [p for p in str(text).split(",") if p.strip()]
    if not parts:
        raise ValidationError(field_name, "month=rate pairs such as 2027-01=5,2027-02=6",
                              value=text)
    for part in parts:
        month, sep, rate = part.partition("=")
        if not sep:
            raise ValidationError(field_name, "month=rate pairs such as 2027-01=5,2027-02=6",
                                  value=part.strip())
        index = month_index(month, field_name)
        if index in out:
            raise ValidationError(field_name, "each month at most once", value=month.strip())
        out[index] = parse_rate(rate, f"{field_name} {month_text(index)}", unit)[0]
    return {month_text(k): out[k] for k in sorted(out)}


def check_horizon_months(months: Any) -> int:
    """The number of months of a horizon: an integer from 1 to 120."""
    value = parse_number(months)
    if value is None or value != int(value) or not 1 <= value <= MAX_HORIZON_MONTHS:
        raise ValidationError("months", f"an integer from 1 to {MAX_HORIZON_MONTHS}",
                              value=months)
    return int(value)


def check_pricing(pricing: Any) -> str:
    """One of :data:`PRICINGS`."""
    value = str(pricing).strip().lower().replace("_", "-").replace("ondemand", "on-demand")
    if value not in PRICINGS:
        raise ValidationError("pricing", f"one of {', '.join(PRICINGS)}", value=pricing)
    return value


def check_price(value: Any, field_name: str) -> float:
    """A price in USD per GPU-hour, from 0 to 10,000."""
    number = parse_number(value)
    if number is None or not 0 <= number <= MAX_PRICE_USD_PER_GPU_HOUR:
        raise ValidationError(field_name, "a number from 0 to 10,000 (USD per GPU-hour)",
                              value=value)
    return number


def check_term(value: Any) -> int:
    """A reserved commitment term in months, an integer from 1 to 120."""
    number = parse_number(value)
    if number is None or number != int(number) or not 1 <= number <= MAX_TERM_MONTHS:
        raise ValidationError("term", f"an integer from 1 to {MAX_TERM_MONTHS} (months)",
                              value=value)
    return int(number)


def demand_spec(*, start_rate: Any = None, growth: Any = None, series: Any = None,
                unit: Any = None, start_month: Any = None) -> dict[str, Any]:
    """The validated fields of a demand from what a user typed: ``start_rate`` (``5/s``,
    ``300/min``) with ``growth`` (``8%``), or ``series`` (``2027-01=5,2027-02=6``); ``unit``
    is the unit of bare numbers (default requests/s)."""
    given_unit = parse_unit(unit) if unit is not None else None
    if series is not None:
        if start_rate is not None or growth is not None or start_month is not None:
            raise ValidationError("series", "a series or a start rate with growth, not both")
        return _series_spec(series, given_unit)
    if start_rate is None:
        raise ValidationError("start_rate", "a start rate (e.g. 5/s) with --growth, or "
                              "--series month=rate,...")
    rate, rate_unit = parse_rate(start_rate, "start_rate", given_unit)
    return {"kind": "growth", "unit": given_unit or rate_unit,
            "start_requests_per_s": rate,
            "growth_fraction_per_month": parse_growth(growth) if growth is not None else 0.0,
            "start_month": (month_text(month_index(start_month, "start_month"))
                            if start_month is not None else None)}


def _series_spec(series: Any, given_unit: str | None) -> dict[str, Any]:
    """A series demand's fields: its points in requests/s, and the unit to show them in
    (the one given, else the one its values were written in, else per second)."""
    points = parse_series(series, given_unit or "s")
    return {"kind": "series", "unit": given_unit or _series_unit(series) or "s",
            "points": points}


def _series_unit(series: Any) -> str | None:
    """The unit the series' values were written in, when they all name the same one."""
    units = {parse_unit(v.rsplit("/", 1)[1]) for v in str(series).split(",") if "/" in v}
    return units.pop() if len(units) == 1 else None


@dataclass(frozen=True, slots=True)
class Horizon:
    """A fleet's planning horizon and the pricing it plans with."""

    fleet: str
    start_month: str
    months: int
    pricing: str = "on-demand"

    @property
    def month_list(self) -> list[str]:
        """Every month of the horizon, ``YYYY-MM``."""
        start = month_index(self.start_month)
        return [month_text(start + k) for k in range(self.months)]


@dataclass(frozen=True, slots=True)
class Demand:
    """A workload's demand: a growth from a start rate, or a series of monthly rates."""

    fleet: str
    scenario: str
    unit: str
    """The unit the user gave rates in (``s``, ``min``, ``day``), for display."""
    start_month: str | None = None
    """Growth: the month the start rate applies to (None: the horizon's first month)."""
    start_requests_per_s: float | None = None
    growth_fraction_per_month: float | None = None
    series_requests_per_s: dict[str, float] = field(default_factory=dict)
    """Series: ``{YYYY-MM: requests/s}``, each holding until the next."""

    @property
    def kind(self) -> str:
        """``growth`` or ``series``."""
        return "series" if self.series_requests_per_s else "growth"

    def describe(self) -> str:
        """The demand in the unit it was given: ``5/s from 2027-01, +8.0%/month``."""
        scale = RATE_UNITS[self.unit]
        if self.kind == "series":
            return ", ".join(f"{m}={v * scale:g}/{self.unit}"
                             for m, v in self.series_requests_per_s.items())
        start = f" from {self.start_month}" if self.start_month else ""
        return (f"{(self.start_requests_per_s or 0) * scale:g}/{self.unit}{start}, "
                f"{self.growth_fraction_per_month or 0:+.1%}/month")


@dataclass(frozen=True, slots=True)
class GpuPrice:
    """Prices of one GPU from a month on (``month`` None: from the start); None = not set."""

    gpu: str
    month: str | None = None
    on_demand_usd_per_gpu_hour: float | None = None
    reserved_usd_per_gpu_hour: float | None = None
    reserved_term_months: int | None = None
    spot_usd_per_gpu_hour: float | None = None
