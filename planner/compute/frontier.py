"""The throughput–interactivity frontier: output tokens/s per GPU against tokens/s per user.

Every published serving result (InferenceX, AIConfigurator, vendor blogs) is read on this
plane: a deployment serves more users per GPU by batching more, and each user then waits
longer per token. This module sweeps the closed-loop clients of one engine (``concurrency``,
default 1, 2, 4, ..., 1024) for each candidate configuration (the product of the given
variations: GPU types, TP, weight dtype, ...) of a scenario and reads, by name, the serving
model's figures at each point:

* ``output_tokens_per_s`` / ``deployment_gpus``: output tokens/s per GPU (tokens/s/GPU;
  a disaggregated deployment's GPUs are both pools');
* ``1 / tpot_mean_s``: tokens/s per user, the decode rate one client sees (tokens/s/user);
* ``ttft_slo_percentile_s`` (TTFT at the SLO's percentile) and ``tpot_mean_s``;
* ``meets_slo``, ``engine_fits``, ``saturated``: the verdict's state of the point;
* ``cost_usd_per_hour * 1e6 / (3600 * output_tokens_per_s)``: USD per million output
  tokens, all GPU time charged to output tokens (so points compare at equal output; the
  model's ``cost_usd_per_million_output_tokens`` splits GPU time by the idle batch's prefill
  share, which does not follow the concurrency).

Each configuration is evaluated as one engine (``gpus = tp * pp``), the unit a frontier is
published for, so ``concurrency`` is the clients of that engine; a disaggregated configuration
is its prefill and decode workers (``prefill_workers × prefill_tp × pp + decode_workers ×
decode_tp × pp`` GPUs, one worker a pool unless the scenario sets them), and every figure per
GPU divides by those. A point is Pareto-optimal
when no other usable point (it fits, its queue is not saturated) is at least as good on both
axes and better on one; of identical points the first (lowest concurrency, first
configuration) is kept. For each interactivity level (tokens/s/user, by default those of the
Pareto points that meet the SLO) the cheapest point meeting the SLO at that level or faster
is the answer (ties: more tokens/s/GPU, then the first).

UI-free: numpy over :func:`planner.compute.sweep.build_grid`; the CLI, the UI and the
workbook render its :class:`Frontier`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from planner.compute.inputs import input_columns
from planner.compute.profiles import CalibrationFigures
from planner.compute.sweep import Variation, build_grid
from planner.compute.table import graph
from planner.core.errors import ValidationError
from planner.core.units import SECONDS_PER_HOUR
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec

AXIS = "concurrency"
"""The swept input: closed-loop clients of one engine (``vllm bench serve
--max-concurrency``)."""
CONCURRENCY_GRID: tuple[int, ...] = tuple(2 ** k for k in range(11))
"""The default concurrencies, 1, 2, 4, ..., 1024: the powers of two published sweeps use
(InferenceX runs 4 to 512 on this ladder)."""
MAX_POINTS = 200_000
"""Largest frontier (configurations × concurrencies) one call evaluates."""
READ: tuple[str, ...] = ("output_tokens_per_s", "tpot_mean_s", "ttft_slo_percentile_s",
                         "meets_slo", "engine_fits", "saturated", "cost_usd_per_hour",
                         "deployment_gpus")
"""The model's columns a frontier reads, by name."""
CONFIG_COLUMNS_FORBIDDEN = {
    "gpus": "is tp * pp in a frontier (one engine): vary tp or pp instead",
    AXIS: "is the frontier's axis: give its values with --concurrency"}
"""Variations a frontier refuses, and why."""
PER_MILLION = 1e6

MEETS, MISSES, SATURATED, DOES_NOT_FIT = "meets SLO", "misses SLO", "saturated", "does not fit"


@dataclass(frozen=True, slots=True)
class FrontierPoint:
    """One (configuration, concurrency) point: the model's figures and the frontier's."""

    configuration: str
    """The configuration's label, e.g. ``gpu=b200 tp=4`` (``base`` when nothing varies)."""
    concurrency: int
    """Closed-loop clients of the engine (requests)."""
    gpus: int
    """GPUs of the engine: ``tp * pp``."""
    output_tokens_per_s: float
    output_tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    """``1 / tpot_mean_s`` (tokens/s)."""
    ttft_slo_percentile_s: float
    tpot_mean_s: float
    meets_slo: bool
    state: str
    """meets SLO, misses SLO, saturated, does not fit, or why the row is invalid."""
    cost_usd_per_hour: float
    cost_usd_per_million_output_tokens: float
    """All GPU time over output tokens (USD per 1e6 tokens)."""
    pareto: bool = False
    usable: bool = False
    """It fits, is valid and not saturated, with a positive throughput and TPOT."""


@dataclass(frozen=True, slots=True)
class Cheapest:
    """The cheapest point that meets the SLO at ``level`` tokens/s per user or faster."""

    level_tokens_per_s_per_user: float
    point: int
    """Index into :attr:`Frontier.points`."""


@dataclass(slots=True)
class Frontier:
    """The points of every configuration, in configuration then concurrency order."""

    configurations: list[str]
    changes: list[dict[str, Any]]
    """Each configuration's varied values (column → value), in :attr:`configurations` order."""
    concurrency: tuple[int, ...]
    points: list[FrontierPoint]
    cheapest: list[Cheapest] = field(default_factory=list)
    slo: dict[str, Any] = field(default_factory=dict)
    """The scenario's objectives: ``slo_ttft_s``, ``slo_percentile``, ``slo_tpot_s``."""

    def pareto_points(self) -> list[FrontierPoint]:
        """The Pareto-optimal points, by tokens/s per user ascending."""
        return sorted((p for p in self.points if p.pareto),
                      key=lambda p: (p.tokens_per_s_per_user, -p.output_tokens_per_s_per_gpu))

    def of(self, configuration: str) -> list[FrontierPoint]:
        """The points of one configuration, by concurrency."""
        return [p for p in self.points if p.configuration == configuration]


def concurrency_allowed() -> str:
    """What a frontier's concurrency may be: the input's range without its 0 (open loop)."""
    return (f"an integer from 1 to {int(input_columns()[AXIS].maximum or 0):,} (closed-loop "
            "clients of one engine)")


def parse_concurrency(values: Sequence[Any]) -> tuple[int, ...]:
    """Concurrencies as distinct positive integers in ascending order; a clear error naming
    ``concurrency`` and its range otherwise."""
    column = input_columns()[AXIS]
    out: list[int] = []
    for raw in values:
        try:
            value = column.parse(raw)
        except ValidationError:
            value = 0
        if value < 1:
            raise ValidationError(AXIS, concurrency_allowed(), value=raw)
        out.append(int(value))
    if not out:
        raise ValidationError(AXIS, "at least one value")
    return tuple(sorted(set(out)))


def parse_levels(values: Sequence[Any]) -> tuple[float, ...]:
    """Interactivity levels (tokens/s per user), each a finite number above 0."""
    out = []
    for raw in values:
        try:
            value = float(raw)
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            raise ValidationError("--levels", "numbers of tokens/s per user above 0",
                                  value=raw)
        out.append(value)
    return tuple(sorted(set(out)))


def _label(changes: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in changes.items()) or "base"


def _configurations(variations: Sequence[Variation]) -> list[dict[str, Any]]:
    for v in variations:
        if v.column in CONFIG_COLUMNS_FORBIDDEN:
            raise ValidationError(v.column, CONFIG_COLUMNS_FORBIDDEN[v.column])
    seen: set[str] = set()
    for v in variations:
        if v.column in seen:
            raise ValidationError(v.column, "is varied twice")
        seen.add(v.column)
    return [dict(zip((v.column for v in variations), combo, strict=True))
            for combo in itertools.product(*(v.values for v in variations))]


def _state(valid: bool, reason: str, fits: bool, saturated: bool, meets: bool) -> str:
    if not valid:
        return reason or "invalid"
    if not fits:
        return DOES_NOT_FIT
    if saturated:
        return SATURATED
    return MEETS if meets else MISSES


def pareto_mask(x: np.ndarray, y: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Points of ``usable`` that no other usable point matches on both ``x`` and ``y`` and
    beats on one; of identical points the first is kept. Sorted by ``x`` then ``y``
    descending, a point is optimal iff its ``y`` beats every ``y`` before it (O(n log n))."""
    idx = np.flatnonzero(usable)
    out = np.zeros(len(x), dtype=bool)
    if not len(idx):
        return out
    order = idx[np.lexsort((idx, -y[idx], -x[idx]))]
    best = -np.inf
    for i in order:
        if y[i] > best:
            out[i] = True
            best = y[i]
    return out


def cheapest_at(points: Sequence[FrontierPoint], levels: Sequence[float]) -> list[Cheapest]:
    """For each level, the point that meets the SLO at ``tokens_per_s_per_user >= level``
    with the lowest cost per million output tokens (ties: more tokens/s per GPU, then the
    first); levels no point reaches are left out."""
    out = []
    for level in levels:
        best: int | None = None
        for i, p in enumerate(points):
            if not (p.usable and p.meets_slo and p.tokens_per_s_per_user >= level):
                continue
            if best is None or ((p.cost_usd_per_million_output_tokens,
                                 -p.output_tokens_per_s_per_gpu)
                                < (points[best].cost_usd_per_million_output_tokens,
                                   -points[best].output_tokens_per_s_per_gpu)):
                best = i
        if best is not None:
            out.append(Cheapest(float(level), best))
    return out


def frontier(base: Mapping[str, Any], variations: Sequence[Variation],
             models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec], *,
             concurrency: Sequence[int] = CONCURRENCY_GRID,
             levels: Sequence[float] | None = None,
             profiles: Sequence[CalibrationFigures] | None = None) -> Frontier:
    """The frontier of ``base`` over the configurations ``variations`` make (see the module
    docstring). ``levels``: the interactivity levels (tokens/s per user) to find the
    cheapest configuration at; default those of the Pareto points that meet the SLO."""
    concurrency = parse_concurrency(concurrency)
    configurations = _configurations(variations)
    _check_frontier(len(configurations) * len(concurrency))
    points: list[FrontierPoint] = []
    for changes in configurations:
        points += _configuration_points({**base, **changes}, _label(changes), concurrency,
                                        models, gpus, profiles)
    points = _with_pareto(points)
    if levels is None:
        levels = sorted({p.tokens_per_s_per_user for p in points if p.pareto and p.meets_slo})
    else:
        levels = parse_levels(levels)
    slo = {k: base.get(k) for k in ("slo_ttft_s", "slo_percentile", "slo_tpot_s")}
    return Frontier([_label(c) for c in configurations], configurations, concurrency, points,
                    cheapest_at(points, levels), slo)


def _check_frontier(total: int) -> None:
    """At most :data:`MAX_POINTS` points, and a serving model with every column of
    :data:`READ`."""
    if total > MAX_POINTS:
        raise ValidationError("--vary/--concurrency", f"the frontier has {total:,} points "
                              f"(configurations x concurrencies); at most {MAX_POINTS:,}")
    formulas = graph("inference").formulas
    missing = [c for c in READ if c not in formulas]
    if missing:
        raise ValidationError("frontier", f"needs the serving model's columns "
                              f"{', '.join(READ)}; this model has no {', '.join(missing)}")


def _with_pareto(points: list[FrontierPoint]) -> list[FrontierPoint]:
    """The points with :attr:`FrontierPoint.pareto` set (:func:`pareto_mask` over the usable
    points: tokens/s per user against output tokens/s per GPU)."""
    x = np.array([p.tokens_per_s_per_user for p in points], dtype=float)
    y = np.array([p.output_tokens_per_s_per_gpu for p in points], dtype=float)
    usable = np.array([p.usable for p in points], dtype=bool)
    mask = pareto_mask(np.nan_to_num(x), np.nan_to_num(y), usable)
    return [replace(p, pareto=bool(m)) for p, m in zip(points, mask, strict=True)]


def _configuration_points(row: dict[str, Any], label: str, concurrency: tuple[int, ...],
                          models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                          profiles: Sequence[CalibrationFigures] | None
                          ) -> list[FrontierPoint]:
    """The points of one configuration (``row``: one replica, ``gpus = tp * pp``) at every
    concurrency, in one grid evaluation."""
    tp, pp = int(row.get("tp", 1)), int(row.get("pp", 1))
    row["gpus"] = tp * pp
    grid = build_grid(row, [Variation(AXIS, concurrency)], models, gpus, outputs=list(READ),
                      profiles=profiles)
    n = len(grid)

    def column(name: str) -> np.ndarray:
        value = grid.values.get(name, np.full(n, np.nan))
        return np.broadcast_to(np.asarray(value, dtype=float), (n,))

    out_tps, tpot, ttft, cost_h, held = (column(c) for c in (
        "output_tokens_per_s", "tpot_mean_s", "ttft_slo_percentile_s", "cost_usd_per_hour",
        "deployment_gpus"))
    # the GPUs the deployment holds: tp * pp aggregated, both pools disaggregated
    held = np.where(np.isfinite(held) & (held > 0), held, row["gpus"])
    meets, fits, saturated = (np.nan_to_num(column(c)) > 0
                              for c in ("meets_slo", "engine_fits", "saturated"))
    points = []
    for k in range(n):
        valid = bool(grid.valid[k])
        ok = bool(valid and fits[k] and not saturated[k] and out_tps[k] > 0 and tpot[k] > 0)
        per_gpu, per_user, cost_m = _rates(valid, out_tps[k], tpot[k], cost_h[k], held[k])
        points.append(FrontierPoint(
            label, int(concurrency[k]), int(held[k]), float(out_tps[k]),
            float(per_gpu), float(per_user), float(ttft[k]), float(tpot[k]),
            bool(meets[k]) and ok,
            _state(valid, str(grid.reasons[k]), bool(fits[k]), bool(saturated[k]),
                   bool(meets[k])),
            float(cost_h[k]), float(cost_m), usable=ok))
    return points


def _rates(valid: bool, out_tps: float, tpot: float, cost_h: float, gpus: float
           ) -> tuple[float, float, float]:
    """(output tokens/s per GPU, tokens/s per user = 1 / TPOT, USD per million output
    tokens = cost per hour x 1e6 / (3600 x output tokens/s)) of one point; NaN where not
    defined."""
    per_gpu = out_tps / gpus if valid else math.nan
    per_user = 1.0 / tpot if valid and tpot > 0 else math.nan
    cost_m = (cost_h * PER_MILLION / (SECONDS_PER_HOUR * out_tps)
              if valid and out_tps > 0 else math.nan)
    return per_gpu, per_user, cost_m


FIELDS: tuple[tuple[str, str], ...] = (
    ("configuration", ""),
    ("concurrency", "requests"),
    ("gpus", "GPUs"),
    ("output_tokens_per_s_per_gpu", "tokens/s/GPU"),
    ("tokens_per_s_per_user", "tokens/s/user"),
    ("ttft_slo_percentile_s", "s"),
    ("tpot_mean_s", "s"),
    ("output_tokens_per_s", "tokens/s"),
    ("cost_usd_per_hour", "USD/h"),
    ("cost_usd_per_million_output_tokens", "USD/Mtok"),
    ("meets_slo", ""),
    ("pareto", ""),
    ("state", ""),
)
"""A point's fields in the order every output lists them, with their units."""


def records(result: Frontier) -> list[dict[str, Any]]:
    """The points as plain dicts (JSON/CSV rows), NaN as ``None``, in :data:`FIELDS` order."""
    out = []
    for p in result.points:
        row = {}
        for name, _unit in FIELDS:
            value = getattr(p, name)
            row[name] = None if isinstance(value, float) and not math.isfinite(value) else value
        out.append(row)
    return out


HEADERS: dict[str, str] = {
    "configuration": "configuration",
    "concurrency": "concurrency (requests)",
    "gpus": "GPUs",
    "output_tokens_per_s_per_gpu": "tokens/s/GPU",
    "tokens_per_s_per_user": "tokens/s/user",
    "ttft_slo_percentile_s": "TTFT {p} (ms)",
    "tpot_mean_s": "TPOT (ms)",
    "output_tokens_per_s": "output (tokens/s)",
    "cost_usd_per_hour": "cost (USD/h)",
    "cost_usd_per_million_output_tokens": "USD/M output tokens",
    "state": "state",
    "pareto": "Pareto",
}
"""Text headers of a point table (the CLI's and the UI's), each with its unit; ``{p}`` is the
SLO's TTFT percentile."""
PARETO_MARK = "*"
"""How a text table marks a Pareto-optimal point."""


def headers(result: Frontier) -> list[str]:
    """:data:`HEADERS` with the TTFT percentile filled in."""
    percentile = f"p{result.slo.get('slo_percentile') or 50}"
    return [h.format(p=percentile) for h in HEADERS.values()]


def _ms(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value * 1e3:,.1f}"


def number_text(value: float, digits: int = 1) -> str:
    """``value`` with thousands separators and ``digits`` decimals; a dash for none."""
    return "–" if not math.isfinite(value) else f"{value:,.{digits}f}"


def text_cells(point: FrontierPoint) -> dict[str, str]:
    """A point's figures as text for :data:`HEADERS` (ms for latencies, a dash for none)."""
    return {
        "configuration": point.configuration,
        "concurrency": f"{point.concurrency:,}",
        "gpus": f"{point.gpus:,}",
        "output_tokens_per_s_per_gpu": number_text(point.output_tokens_per_s_per_gpu),
        "tokens_per_s_per_user": number_text(point.tokens_per_s_per_user),
        "ttft_slo_percentile_s": _ms(point.ttft_slo_percentile_s),
        "tpot_mean_s": _ms(point.tpot_mean_s),
        "output_tokens_per_s": number_text(point.output_tokens_per_s),
        "cost_usd_per_hour": number_text(point.cost_usd_per_hour, 2),
        "cost_usd_per_million_output_tokens": number_text(
            point.cost_usd_per_million_output_tokens, 3),
        "state": point.state,
        "pareto": PARETO_MARK if point.pareto else "",
    }


def slo_text(slo: Mapping[str, Any]) -> str:
    """The scenario's objectives in words, e.g. ``TTFT p99 <= 1000 ms and TPOT <= 50 ms``."""
    parts = []
    if slo.get("slo_ttft_s"):
        parts.append(f"TTFT p{slo.get('slo_percentile')} <= {float(slo['slo_ttft_s']) * 1e3:g} ms")
    if slo.get("slo_tpot_s"):
        parts.append(f"TPOT <= {float(slo['slo_tpot_s']) * 1e3:g} ms")
    return " and ".join(parts) or "no SLO set"


