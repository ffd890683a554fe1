"""Capacity plans over time: demand by month, evaluated by the serving model, priced by month.

A plan is scenarios × months. Each counted inference scenario (a *workload*) has a request rate
per month (its demand); every month's rate replaces the scenario's ``target_requests_per_s``
and the row is evaluated by the same formula graph as any scenario
(:func:`planner.sheet.table.build_columns` once per workload, then one vectorized
:class:`~planner.sheet.graph.FormulaGraph` call for every workload and distinct monthly rate),
so ``replicas_needed`` and ``gpus_needed`` of a month are exactly what a single estimate at that
rate gives. Cost per month is ``gpus × price_usd_per_gpu_hour(month) × PLAN_HOURS_PER_MONTH``.

Conventions:

- Months are ``YYYY-MM`` texts, indexed as ``year * 12 + month - 1``.
- Rates are stored in requests/s; a demand keeps the unit it was given in (``s``, ``min`` or
  ``day``) for display only.
- A *growth* demand is ``start_rate * (1 + growth) ** (month - start_month)`` from its start
  month (default: the horizon's first month). A *series* holds each given month's rate until
  the next given month. Before a demand starts the workload carries no demand (0 requests/s,
  0 GPUs: a launch later in the year).
- A counted inference scenario without a demand plans at its ``target_requests_per_s`` every
  month (basis ``target``); without a target either, it keeps its configured ``gpus`` (basis
  ``configured``), as the fleet roll-up counts it.
- Prices: per GPU, rows effective from a month (or from the start, month ``None``); the price
  in force in month ``m`` is the latest row at or before ``m`` that sets it. On-demand falls
  back to the GPU's catalog hourly price; reserved and spot have no fallback (a plan that needs
  one and has none is refused, naming the GPU).
- Reserved: GPUs are committed for the reserved term (months) at the price of the month they
  are reserved in. Each month, per GPU type, when the GPUs needed exceed the GPUs under
  commitment, the difference is reserved from that month for one term. GPUs billed are those
  under commitment (at least the GPUs needed); a commitment that runs past the horizon is
  reported as GPU-months committed beyond it. On-demand and spot bill the GPUs needed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.domain import Scenario
from planner.errors import ValidationError
from planner.estimator.architecture import ModelSpec
from planner.estimator.disagg import DECODE_GPU_SAME, DISAGGREGATED
from planner.estimator.gpu import GpuSpec
from planner.estimator.ops import Coded
from planner.sheet.inputs import input_columns
from planner.sheet.profiles import CalibrationFigures
from planner.sheet.table import build_columns, graph, inputs_of
from planner.sheet.validation import rate_unit
from planner.units import HOURS_PER_MONTH, parse_number

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
    read as a scenario's rate input reads it (:func:`planner.sheet.validation.rate_unit`);
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
        points = parse_series(series, given_unit or "s")
        return {"kind": "series", "unit": given_unit or _series_unit(series) or "s",
                "points": points}
    if start_rate is None:
        raise ValidationError("start_rate", "a start rate (e.g. 5/s) with --growth, or "
                              "--series month=rate,...")
    rate, rate_unit = parse_rate(start_rate, "start_rate", given_unit)
    return {"kind": "growth", "unit": given_unit or rate_unit,
            "start_requests_per_s": rate,
            "growth_fraction_per_month": parse_growth(growth) if growth is not None else 0.0,
            "start_month": (month_text(month_index(start_month, "start_month"))
                            if start_month is not None else None)}


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


def demand_rates(demand: Demand | None, target_requests_per_s: float, months: np.ndarray,
                 horizon_start: int) -> np.ndarray:
    """Requests/s in each month (``months``: month indices) by the conventions above."""
    if demand is None:
        return np.full(len(months), float(target_requests_per_s))
    if demand.kind == "series":
        keys = np.array([month_index(m) for m in demand.series_requests_per_s])
        values = np.array(list(demand.series_requests_per_s.values()), dtype=np.float64)
        at = np.searchsorted(keys, months, side="right") - 1
        return np.where(at >= 0, values[np.maximum(at, 0)], 0.0)
    start = month_index(demand.start_month) if demand.start_month else horizon_start
    steps = months - start
    rate = (demand.start_requests_per_s or 0.0) * (
        1.0 + (demand.growth_fraction_per_month or 0.0)) ** np.maximum(steps, 0)
    return np.where(steps >= 0, rate, 0.0)


def price_matrix(gpu_names: Sequence[str], months: np.ndarray, prices: Sequence[GpuPrice],
                 catalog_usd_per_gpu_hour: Mapping[str, float], pricing: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(USD per GPU-hour, reserved term in months) per GPU type (rows) and month (columns) at
    ``pricing``; the term is 0 unless reserved. A price that is not set anywhere refuses."""
    attr = {"on-demand": "on_demand_usd_per_gpu_hour", "reserved": "reserved_usd_per_gpu_hour",
            "spot": "spot_usd_per_gpu_hour"}[pricing]
    usd = np.full((len(gpu_names), len(months)), np.nan)
    term = np.zeros((len(gpu_names), len(months)), dtype=np.int64)
    by_gpu: dict[str, list[GpuPrice]] = {}
    for p in prices:
        by_gpu.setdefault(p.gpu, []).append(p)
    for g, name in enumerate(gpu_names):
        if pricing == "on-demand":
            usd[g, :] = catalog_usd_per_gpu_hour[name]
        rows = sorted(by_gpu.get(name, ()), key=lambda p: -1 if p.month is None
                      else month_index(p.month))
        for p in rows:
            begin = -1 if p.month is None else month_index(p.month)
            after = months >= begin
            if getattr(p, attr) is not None:
                usd[g, after] = getattr(p, attr)
            if pricing == "reserved" and p.reserved_term_months is not None:
                term[g, after] = p.reserved_term_months
        missing = np.isnan(usd[g]) | ((term[g] < 1) if pricing == "reserved" else False)
        if missing.any():
            month = month_text(int(months[int(np.argmax(missing))]))
            what = "reserved price and term" if pricing == "reserved" else f"{pricing} price"
            flags = "--reserved USD --term MONTHS" if pricing == "reserved" else "--spot USD"
            raise ValidationError("pricing", f"no {what} for GPU {name} in {month}; set one "
                                  f"with `planner gpu price {name} {flags}` or plan with "
                                  "--pricing on-demand", value=pricing)
    return usd, term


def reserve(needed: np.ndarray, usd: np.ndarray, term: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, int]:
    """(GPUs billed per month, cost per month in USD, GPU-months committed past the last
    month) of one GPU type under reserved pricing: each month the GPUs needed above those under
    commitment are reserved for one term at that month's price."""
    n = len(needed)
    billed = np.zeros(n, dtype=np.int64)
    cost = np.zeros(n)
    beyond = 0
    for m in range(n):
        short = int(needed[m]) - int(billed[m])
        if short > 0:
            end = m + int(term[m])
            billed[m:min(end, n)] += short
            cost[m:min(end, n)] += short * usd[m] * PLAN_HOURS_PER_MONTH
            beyond += short * max(end - n, 0)
    return billed, cost, beyond


PLAN_OUTPUTS = ("replicas_needed", "gpus_needed", "slo_requests_per_s_replica",
                "serving_mode_code", "disagg_prefill_workers_needed",
                "disagg_decode_workers_needed", "disagg_prefill_gpus_needed",
                "disagg_decode_gpus_needed", "disagg_prefill_slo_requests_per_s_worker",
                "disagg_decode_slo_requests_per_s_worker", "prefill_workers_effective",
                "decode_workers_effective", "prefill_gpus", "decode_gpus")
"""The serving model's columns a plan reads at each month's rate (the ``disagg_*`` and pool
columns for disaggregated workloads, whose two pools are planned as two rows)."""

POOLS = ("prefill", "decode")
"""The pools of a disaggregated workload, each one row of a plan."""


@dataclass(slots=True)
class PlanResult:
    """A fleet's plan: per workload and month (arrays ``workloads × months``) and per GPU type
    and month (arrays ``types × months``)."""

    fleet: str
    months: list[str]
    pricing: str
    workloads: list[str]
    workload_gpus: list[str]
    workload_models: list[str]
    basis: list[str]
    """``demand``, ``target`` or ``configured`` (see the module's conventions)."""
    demand: list[str]
    """The demand as the user wrote it (empty for target and configured)."""
    rate_requests_per_s: np.ndarray
    replicas: np.ndarray
    gpus: np.ndarray
    capacity_requests_per_s: np.ndarray
    """``replicas × slo_requests_per_s_replica``: what the replicas carry within the SLO."""
    cost_usd: np.ndarray
    """``gpus × price(month) × 730`` (the GPUs needed at the plan's price)."""
    gpu_types: list[str]
    gpus_by_type: np.ndarray
    gpus_billed_by_type: np.ndarray
    price_usd_per_gpu_hour_by_type: np.ndarray
    cost_usd_by_type: np.ndarray
    committed_gpu_months_beyond: dict[str, int]
    """Reserved: GPU-months of commitments that run past the last month, by GPU type."""
    excluded: list[tuple[str, str]] = field(default_factory=list)
    """(scenario, why it is not in the plan): training, or not the chosen option."""
    hours_per_month: float = PLAN_HOURS_PER_MONTH
    scenarios: list[str] = field(default_factory=list)
    """The scenario of each row (``workloads`` is its label: a disaggregated scenario's two
    pools are two rows, ``NAME (prefill pool)`` on its GPU and ``NAME (decode pool)`` on the
    decode GPU); empty: the labels are the scenarios."""
    pools: list[str] = field(default_factory=list)
    """Each row's pool: ``prefill``, ``decode``, or empty for an aggregated workload."""

    @property
    def headroom_requests_per_s(self) -> np.ndarray:
        """Capacity minus demand (requests/s); negative where the demand is unmet."""
        return self.capacity_requests_per_s - self.rate_requests_per_s

    @property
    def unmet(self) -> list[tuple[str, str]]:
        """(workload, first month) where a demand above 0 gets no replica: the engine does
        not start or the objectives cannot be met at any replica count."""
        bad = (self.rate_requests_per_s > 0) & (self.replicas == 0)
        names = self.scenarios or self.workloads
        out: dict[str, str] = {}
        for w in np.flatnonzero(bad.any(axis=1)):  # a scenario's two pools are one workload
            out.setdefault(names[w], self.months[int(np.argmax(bad[w]))])
        return list(out.items())

    @property
    def total_gpus(self) -> np.ndarray:
        """GPUs billed per month, all types."""
        return self.gpus_billed_by_type.sum(axis=0)

    @property
    def total_cost_usd(self) -> np.ndarray:
        """Cost per month, all types (USD)."""
        return self.cost_usd_by_type.sum(axis=0)


def _scenario_table(rows: Sequence[Scenario]) -> dict[str, Any]:
    """The input table of scenarios, one row each (as :mod:`planner.sheet.fleet` builds it)."""
    table: dict[str, Any] = {
        "model": np.array([sc.model for sc in rows], dtype=object),
        "gpu": np.array([sc.gpu for sc in rows], dtype=object),
        "lora_targets": np.array([sc.lora_targets for sc in rows], dtype=object),
    }
    for column in inputs_of("inference"):
        table[column.name] = np.array([sc.inputs[column.name] for sc in rows],
                                      dtype=object if column.kind in ("choice", "text")
                                      else None)
    return table


def evaluate_plan(fleet: str, workloads: Sequence[Scenario], demands: Mapping[str, Demand],
                  months: Sequence[str], horizon_start: str, models: Mapping[str, ModelSpec],
                  gpus: Mapping[str, GpuSpec], prices: Sequence[GpuPrice], pricing: str,
                  profiles: Sequence[CalibrationFigures] | None = None,
                  excluded: Sequence[tuple[str, str]] = ()) -> PlanResult:
    """The plan of ``workloads`` (counted inference scenarios; ``demands`` by scenario name)
    over ``months``: one formula-graph call over every distinct (workload, rate)."""
    month_ix = np.array([month_index(m) for m in months], dtype=np.int64)
    n_w, n_m = len(workloads), len(months)
    start = month_index(horizon_start, "start")
    rates = np.zeros((n_w, n_m))
    basis: list[str] = []
    described: list[str] = []
    # each workload is validated and looked up once (build_columns over the workloads, the
    # one validation path: a bad input names its row), then its columns are taken once per
    # distinct rate; only the rate differs
    cols = build_columns(_scenario_table(workloads), models, gpus, "inference",
                         labels=[f"{fleet}/{sc.name}" for sc in workloads],
                         profiles=profiles) if n_w else {}
    targets = np.broadcast_to(np.asarray(cols.get("target_requests_per_s", 0.0),
                                         dtype=np.float64), (n_w,))
    for w, sc in enumerate(workloads):
        d = demands.get(sc.name)
        target = float(targets[w])
        rates[w] = demand_rates(d, target, month_ix, start)
        basis.append("demand" if d else "target" if target > 0 else "configured")
        described.append(d.describe() if d else "")
    replicas = np.zeros((n_w, n_m), dtype=np.int64)
    gpus_needed = np.zeros((n_w, n_m), dtype=np.int64)
    capacity = np.zeros((n_w, n_m))
    pooled = np.zeros(n_w, dtype=bool)
    pool_values: dict[str, np.ndarray] = {}
    if n_w:
        # one row per distinct (workload, rate): a flat demand is evaluated once
        pairs = np.stack([np.repeat(np.arange(n_w), n_m).astype(np.float64), rates.ravel()],
                         axis=1)
        unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        owner = unique[:, 0].astype(np.int64)
        rows = {k: (v[owner] if isinstance(v, Coded) or (isinstance(v, np.ndarray)
                                                         and v.ndim == 1 and len(v) == n_w)
                    else v) for k, v in cols.items()}
        rows["target_requests_per_s"] = unique[:, 1]
        values = graph("inference").compute(rows, PLAN_OUTPUTS)
        def column(name: str) -> np.ndarray:  # a column that reads no array is a scalar
            flat = np.broadcast_to(np.asarray(values[name], dtype=np.float64), (len(unique),))
            return flat[inverse].reshape(n_w, n_m)

        per_replica = column("slo_requests_per_s_replica")
        replicas = column("replicas_needed").astype(np.int64)
        gpus_needed = column("gpus_needed").astype(np.int64)
        pooled = column("serving_mode_code")[:, 0] == DISAGGREGATED
        pool_values = {name: column(name) for name in PLAN_OUTPUTS[4:]}
        configured = np.array([b == "configured" for b in basis])
        if configured.any():
            size = np.array([int(sc.inputs["tp"]) * int(sc.inputs["pp"]) for sc in workloads])
            count = np.array([int(sc.inputs["gpus"]) for sc in workloads])
            gpus_needed[configured] = count[configured, None]
            replicas[configured] = (count // size)[configured, None]
        # within the SLO the replicas carry at least the rate they are sized for (the replica
        # search's count meets it) and at least their wait-free rate each
        capacity = np.maximum(replicas * per_replica,
                              np.where(replicas > 0, rates, 0.0))
    # a disaggregated workload is two rows, one per pool, each on its own GPU type
    scenario_of: list[int] = []
    pool_of: list[str] = []
    for w in range(n_w):
        for pool in (POOLS if pooled[w] else ("",)):
            scenario_of.append(w)
            pool_of.append(pool)
    ix = np.array(scenario_of, dtype=np.int64)
    row_gpus = [_pool_gpu(workloads[w], pool) for w, pool in zip(ix, pool_of, strict=True)]
    rates_rows = rates[ix] if n_w else rates
    replicas_rows, gpus_rows, capacity_rows = replicas[ix], gpus_needed[ix], capacity[ix]
    for r, (w, pool) in enumerate(zip(ix, pool_of, strict=True)):
        if not pool:
            continue
        if basis[w] == "configured":  # the scenario's own pools
            workers = pool_values[f"{pool}_workers_effective"][w]
            held = pool_values[f"{pool}_gpus"][w]
            sized = np.ones(n_m, dtype=bool)
        else:
            workers = pool_values[f"disagg_{pool}_workers_needed"][w]
            held = pool_values[f"disagg_{pool}_gpus_needed"][w]
            sized = gpus_needed[w] > 0  # both pools have a count
        replicas_rows[r] = np.where(sized, workers, 0).astype(np.int64)
        gpus_rows[r] = np.where(sized, held, 0).astype(np.int64)
        carried = replicas_rows[r] * pool_values[f"disagg_{pool}_slo_requests_per_s_worker"][w]
        capacity_rows[r] = np.maximum(carried, np.where(replicas_rows[r] > 0, rates[w], 0.0))
    types = sorted(set(row_gpus))
    type_of = np.array([types.index(g) for g in row_gpus], dtype=np.int64)
    needed_by_type = np.zeros((len(types), n_m), dtype=np.int64)
    np.add.at(needed_by_type, type_of, gpus_rows)
    usd, term = price_matrix(types, month_ix, prices,
                             {t: gpus[t].price_usd_per_hour for t in types}, pricing)
    cost = gpus_rows * (usd[type_of] if len(ix) else np.zeros((0, n_m))) * PLAN_HOURS_PER_MONTH
    beyond: dict[str, int] = {}
    if pricing == "reserved":
        billed = np.zeros_like(needed_by_type)
        cost_by_type = np.zeros((len(types), n_m))
        for t, name in enumerate(types):
            billed[t], cost_by_type[t], beyond[name] = reserve(needed_by_type[t], usd[t], term[t])
    else:
        billed = needed_by_type
        cost_by_type = needed_by_type * usd * PLAN_HOURS_PER_MONTH
    labels = [workloads[w].name + (f" ({pool} pool)" if pool else "")
              for w, pool in zip(ix, pool_of, strict=True)]
    return PlanResult(
        fleet=fleet, months=list(months), pricing=pricing,
        workloads=labels, workload_gpus=row_gpus,
        workload_models=[workloads[w].model for w in ix], basis=[basis[w] for w in ix],
        demand=[described[w] for w in ix],
        rate_requests_per_s=rates_rows, replicas=replicas_rows, gpus=gpus_rows,
        capacity_requests_per_s=capacity_rows, cost_usd=cost, gpu_types=types,
        gpus_by_type=needed_by_type, gpus_billed_by_type=billed,
        price_usd_per_gpu_hour_by_type=usd, cost_usd_by_type=cost_by_type,
        committed_gpu_months_beyond=beyond, excluded=list(excluded),
        scenarios=[workloads[w].name for w in ix], pools=pool_of)


def _pool_gpu(sc: Scenario, pool: str) -> str:
    """The GPU type of a plan row: the scenario's GPU, the decode GPU for a decode pool
    (``decode_gpu``, ``same`` meaning the scenario's)."""
    decode = str(sc.inputs.get("decode_gpu") or DECODE_GPU_SAME)
    return decode if pool == "decode" and decode != DECODE_GPU_SAME else sc.gpu


def plan_record(plan: PlanResult) -> dict[str, Any]:
    """The plan as plain data (the ``--json`` document; keys in :data:`JSON_KEYS`)."""
    months = []
    for m, month in enumerate(plan.months):
        price = plan.price_usd_per_gpu_hour_by_type
        months.append({
            "month": month,
            "gpus": int(plan.total_gpus[m]),
            "cost_usd": float(plan.total_cost_usd[m]),
            "by_gpu": {t: {"gpus_needed": int(plan.gpus_by_type[k, m]),
                           "gpus_billed": int(plan.gpus_billed_by_type[k, m]),
                           "price_usd_per_gpu_hour": float(price[k, m]),
                           "cost_usd": float(plan.cost_usd_by_type[k, m])}
                       for k, t in enumerate(plan.gpu_types)},
        })
    workloads = []
    for w, name in enumerate(plan.workloads):
        workloads.append({
            "scenario": plan.scenarios[w] if plan.scenarios else name,
            "pool": plan.pools[w] if plan.pools else "",
            "model": plan.workload_models[w], "gpu": plan.workload_gpus[w],
            "basis": plan.basis[w], "demand": plan.demand[w],
            "months": [{"month": month,
                        "requests_per_s": float(plan.rate_requests_per_s[w, m]),
                        "replicas": int(plan.replicas[w, m]),
                        "gpus": int(plan.gpus[w, m]),
                        "capacity_requests_per_s": float(plan.capacity_requests_per_s[w, m]),
                        "headroom_requests_per_s": float(plan.headroom_requests_per_s[w, m]),
                        "cost_usd": float(plan.cost_usd[w, m])}
                       for m, month in enumerate(plan.months)],
        })
    return {
        "fleet": plan.fleet, "pricing": plan.pricing, "hours_per_month": plan.hours_per_month,
        "months": months, "workloads": workloads,
        "total_cost_usd": float(plan.total_cost_usd.sum()),
        "committed_gpu_months_beyond_horizon": plan.committed_gpu_months_beyond,
        "unmet": [{"scenario": s, "first_month": m} for s, m in plan.unmet],
        "excluded": [{"scenario": s, "reason": r} for s, r in plan.excluded],
    }


JSON_KEYS = {
    "fleet": "the fleet's name",
    "pricing": "on-demand, reserved or spot",
    "hours_per_month": "hours billed per GPU per month (730 = 8760/12)",
    "months": "per month: month (YYYY-MM), gpus (billed, all types), cost_usd, and by_gpu: "
              "{GPU: {gpus_needed, gpus_billed, price_usd_per_gpu_hour, cost_usd}}",
    "workloads": "per counted inference scenario (a disaggregated one once per pool): "
                 "scenario, pool (prefill, decode, or empty: aggregated), model, gpu (the "
                 "pool's), basis (demand, target or configured), demand (as written), and "
                 "months: [{month, requests_per_s, replicas (a pool's workers), gpus, "
                 "capacity_requests_per_s, headroom_requests_per_s, cost_usd}]",
    "total_cost_usd": "cost over every month of the plan",
    "committed_gpu_months_beyond_horizon": "reserved: {GPU: GPU-months committed after the "
                                           "last month}",
    "unmet": "[{scenario, first_month}] where demand gets no replica (engine does not start or "
             "the SLO cannot be met)",
    "excluded": "[{scenario, reason}]: training scenarios and options not chosen",
}
"""The keys of :func:`plan_record`'s document, documented for ``planner fleet plan --json``."""


def _bars(values: Sequence[float], width: int) -> list[str]:
    top = max(max(values, default=0.0), 0.0)
    return ["█" * (round(v / top * width) if top > 0 else 0) for v in values]


def plan_table_lines(plan: PlanResult) -> list[str]:
    """The month × GPU-type table as plain text lines: per type its GPUs (billed) and cost in
    USD, then the month's GPUs and cost."""
    head = ["month"]
    for t in plan.gpu_types:
        head += [f"{t} GPUs", f"{t} USD"]
    head += ["GPUs", "cost USD"]
    rows = []
    for m, month in enumerate(plan.months):
        row = [month]
        for k in range(len(plan.gpu_types)):
            row += [f"{int(plan.gpus_billed_by_type[k, m]):,}",
                    f"{plan.cost_usd_by_type[k, m]:,.0f}"]
        rows.append([*row, f"{int(plan.total_gpus[m]):,}", f"{plan.total_cost_usd[m]:,.0f}"])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths, strict=True)))
    return [fmt(head), "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)]


def plan_chart_lines(plan: PlanResult, width: int = 40) -> list[str]:
    """A character chart of GPUs and cost by month: two bars per month."""
    gpus = [float(v) for v in plan.total_gpus]
    cost = [float(v) for v in plan.total_cost_usd]
    g_bars, c_bars = _bars(gpus, width), _bars(cost, width)
    lines = []
    for m, month in enumerate(plan.months):
        lines.append(f"{month} GPUs {g_bars[m]:<{width}} {int(gpus[m]):,}")
        lines.append(f"{'':7} USD  {c_bars[m].replace('█', '▒'):<{width}} {cost[m]:,.0f}")
    return lines
