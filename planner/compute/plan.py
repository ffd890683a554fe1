"""Capacity plans over time: demand by month, evaluated by the serving model, priced by month.

A plan is scenarios × months. Each counted inference scenario (a *workload*) has a request rate
per month (its demand); every month's rate replaces the scenario's ``target_requests_per_s``
and the row is evaluated by the same formula graph as any scenario
(:func:`planner.compute.table.build_columns` once per workload, then one vectorized
:class:`~planner.compute.graph.FormulaGraph` call for every workload and distinct monthly rate),
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

Beside it: a plan's inputs parsed and checked in :mod:`planner.compute.plan_inputs`, its prices
in :mod:`planner.compute.plan_pricing`, the result and its JSON and text in
:mod:`planner.compute.plan_result` (their names importable from here as before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.compute.fleet import scenario_table
from planner.compute.plan_inputs import PLAN_HOURS_PER_MONTH, Demand, GpuPrice, month_index
from planner.compute.plan_inputs import Horizon as Horizon  # re-exported: their old home
from planner.compute.plan_inputs import check_horizon_months as check_horizon_months
from planner.compute.plan_inputs import check_price as check_price
from planner.compute.plan_inputs import check_pricing as check_pricing
from planner.compute.plan_inputs import check_term as check_term
from planner.compute.plan_inputs import demand_spec as demand_spec
from planner.compute.plan_inputs import month_text as month_text
from planner.compute.plan_inputs import parse_growth as parse_growth
from planner.compute.plan_inputs import parse_rate as parse_rate
from planner.compute.plan_inputs import parse_series as parse_series
from planner.compute.plan_pricing import price_matrix
from planner.compute.plan_pricing import reserve as reserve
from planner.compute.plan_result import JSON_KEYS as JSON_KEYS
from planner.compute.plan_result import PlanResult
from planner.compute.plan_result import plan_chart_lines as plan_chart_lines
from planner.compute.plan_result import plan_record as plan_record
from planner.compute.plan_result import plan_table_lines as plan_table_lines
from planner.compute.profiles import CalibrationFigures
from planner.compute.table import build_columns, graph
from planner.formulas.disagg_inputs import DECODE_GPU_SAME, DISAGGREGATED
from planner.formulas.ops import Coded
from planner.spec.architecture import ModelSpec
from planner.spec.domain import Scenario
from planner.spec.gpu import GpuSpec


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


POOL_OUTPUTS = ("disagg_prefill_workers_needed", "disagg_decode_workers_needed",
                "disagg_prefill_gpus_needed", "disagg_decode_gpus_needed",
                "disagg_prefill_slo_requests_per_s_worker",
                "disagg_decode_slo_requests_per_s_worker", "prefill_workers_effective",
                "decode_workers_effective", "prefill_gpus", "decode_gpus")
"""The pool columns a plan reads for a disaggregated workload, whose two pools are planned as
two rows."""
PLAN_OUTPUTS = ("replicas_needed", "gpus_needed", "slo_requests_per_s_replica",
                "serving_mode_code", *POOL_OUTPUTS)
"""The serving model's columns a plan reads at each month's rate."""

POOLS = ("prefill", "decode")
"""The pools of a disaggregated workload, each one row of a plan."""


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
    # each workload is validated and looked up once (build_columns over the workloads, the
    # one validation path: a bad input names its row), then its columns are taken once per
    # distinct rate; only the rate differs
    cols = build_columns(scenario_table(workloads), models, gpus, "inference",
                         labels=[f"{fleet}/{sc.name}" for sc in workloads],
                         profiles=profiles) if n_w else {}
    rates, basis, described = _workload_rates(workloads, demands, cols, month_ix, start)
    replicas = np.zeros((n_w, n_m), dtype=np.int64)
    gpus_needed = np.zeros((n_w, n_m), dtype=np.int64)
    capacity = np.zeros((n_w, n_m))
    pooled = np.zeros(n_w, dtype=bool)
    pool_values: dict[str, np.ndarray] = {}
    if n_w:
        replicas, gpus_needed, capacity, pooled, pool_values = _size_workloads(
            cols, rates, workloads, basis)
    rows = _pool_rows(workloads, basis, rates, (replicas, gpus_needed, capacity), pooled,
                      pool_values)
    bill = _bill(rows.gpu_types, rows.gpus, month_ix, prices, gpus, pricing)
    ix = rows.scenario
    return PlanResult(
        fleet=fleet, months=list(months), pricing=pricing,
        workloads=[workloads[w].name + (f" ({pool} pool)" if pool else "")
                   for w, pool in zip(ix, rows.pools, strict=True)],
        workload_gpus=rows.gpu_types, workload_models=[workloads[w].model for w in ix],
        basis=[basis[w] for w in ix], demand=[described[w] for w in ix],
        rate_requests_per_s=rows.rates, replicas=rows.replicas, gpus=rows.gpus,
        capacity_requests_per_s=rows.capacity, cost_usd=bill.cost, gpu_types=bill.types,
        gpus_by_type=bill.needed_by_type, gpus_billed_by_type=bill.billed,
        price_usd_per_gpu_hour_by_type=bill.usd, cost_usd_by_type=bill.cost_by_type,
        committed_gpu_months_beyond=bill.beyond, excluded=list(excluded),
        scenarios=[workloads[w].name for w in ix], pools=list(rows.pools))


def _workload_rates(workloads: Sequence[Scenario], demands: Mapping[str, Demand],
                    cols: Mapping[str, Any], month_ix: np.ndarray, start: int
                    ) -> tuple[np.ndarray, list[str], list[str]]:
    """(requests/s per workload and month, each workload's basis, its demand as written): a
    demand's rates, else the scenario's ``target_requests_per_s`` (basis ``target``), else
    none (basis ``configured``)."""
    n_w = len(workloads)
    rates = np.zeros((n_w, len(month_ix)))
    basis: list[str] = []
    described: list[str] = []
    targets = np.broadcast_to(np.asarray(cols.get("target_requests_per_s", 0.0),
                                         dtype=np.float64), (n_w,))
    for w, sc in enumerate(workloads):
        d = demands.get(sc.name)
        target = float(targets[w])
        rates[w] = demand_rates(d, target, month_ix, start)
        basis.append("demand" if d else "target" if target > 0 else "configured")
        described.append(d.describe() if d else "")
    return rates, basis, described


def _size_workloads(cols: Mapping[str, Any], rates: np.ndarray, workloads: Sequence[Scenario],
                    basis: Sequence[str]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                               dict[str, np.ndarray]]:
    """(replicas, GPUs needed, capacity in requests/s) per workload and month: the serving
    model at each distinct (workload, rate), once each; ``configured`` workloads keep their
    configured GPUs. Then which workloads are disaggregated, and their pool columns
    (:data:`POOL_OUTPUTS`) per workload and month."""
    n_w, n_m = rates.shape
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
    pool_values = {name: column(name) for name in POOL_OUTPUTS}
    configured = np.array([b == "configured" for b in basis])
    if configured.any():
        size = np.array([int(sc.inputs["tp"]) * int(sc.inputs["pp"]) for sc in workloads])
        count = np.array([int(sc.inputs["gpus"]) for sc in workloads])
        gpus_needed[configured] = count[configured, None]
        replicas[configured] = (count // size)[configured, None]
    # within the SLO the replicas carry at least the rate they are sized for (the replica
    # search's count meets it) and at least their wait-free rate each
    capacity = np.maximum(replicas * per_replica, np.where(replicas > 0, rates, 0.0))
    return replicas, gpus_needed, capacity, pooled, pool_values


@dataclass(frozen=True, slots=True)
class _Rows:
    """A plan's rows: one per aggregated workload, two (prefill, decode) per disaggregated
    one; ``scenario`` indexes the workloads, ``pools`` is empty text for an aggregated row."""

    scenario: np.ndarray
    pools: list[str]
    gpu_types: list[str]
    rates: np.ndarray
    replicas: np.ndarray
    gpus: np.ndarray
    capacity: np.ndarray


def _pool_rows(workloads: Sequence[Scenario], basis: Sequence[str], rates: np.ndarray,
               sized: tuple[np.ndarray, np.ndarray, np.ndarray], pooled: np.ndarray,
               pool_values: Mapping[str, np.ndarray]) -> _Rows:
    """The plan's rows: a disaggregated workload is two, each pool on its own GPU type
    (:func:`_pool_gpu`) with its needed workers and GPUs (``disagg_<pool>_workers_needed``,
    ``disagg_<pool>_gpus_needed``; a ``configured`` workload its own pools), carrying at least
    its workers x the rate each carries within the SLO."""
    replicas, gpus_needed, capacity = sized
    scenario_of = [w for w in range(len(workloads)) for _ in (POOLS if pooled[w] else ("",))]
    pool_of = [p for w in range(len(workloads)) for p in (POOLS if pooled[w] else ("",))]
    ix = np.array(scenario_of, dtype=np.int64)
    rows = _Rows(scenario=ix, pools=pool_of,
                 gpu_types=[_pool_gpu(workloads[w], p) for w, p in zip(ix, pool_of, strict=True)],
                 rates=rates[ix], replicas=replicas[ix], gpus=gpus_needed[ix],
                 capacity=capacity[ix])
    for r, (w, pool) in enumerate(zip(ix, pool_of, strict=True)):
        if not pool:
            continue
        if basis[w] == "configured":  # the scenario's own pools
            workers = pool_values[f"{pool}_workers_effective"][w]
            held = pool_values[f"{pool}_gpus"][w]
            counted = np.ones(rates.shape[1], dtype=bool)
        else:
            workers = pool_values[f"disagg_{pool}_workers_needed"][w]
            held = pool_values[f"disagg_{pool}_gpus_needed"][w]
            counted = gpus_needed[w] > 0  # both pools have a count
        rows.replicas[r] = np.where(counted, workers, 0).astype(np.int64)
        rows.gpus[r] = np.where(counted, held, 0).astype(np.int64)
        carried = rows.replicas[r] * pool_values[f"disagg_{pool}_slo_requests_per_s_worker"][w]
        rows.capacity[r] = np.maximum(carried, np.where(rows.replicas[r] > 0, rates[w], 0.0))
    return rows


def _pool_gpu(sc: Scenario, pool: str) -> str:
    """The GPU type of a plan row: the scenario's GPU, the decode GPU for a decode pool
    (``decode_gpu``, ``same`` meaning the scenario's)."""
    decode = str(sc.inputs.get("decode_gpu") or DECODE_GPU_SAME)
    return decode if pool == "decode" and decode != DECODE_GPU_SAME else sc.gpu


@dataclass(frozen=True, slots=True)
class _Bill:
    """A plan's GPUs and cost: per workload and month (``cost``), and per GPU type and month."""

    types: list[str]
    needed_by_type: np.ndarray
    billed: np.ndarray
    usd: np.ndarray
    cost: np.ndarray
    cost_by_type: np.ndarray
    beyond: dict[str, int]


def _bill(row_gpus: Sequence[str], gpus_needed: np.ndarray, month_ix: np.ndarray,
          prices: Sequence[GpuPrice], gpus: Mapping[str, GpuSpec], pricing: str) -> _Bill:
    """The GPUs needed summed by GPU type, priced each month at ``pricing``
    (:func:`~planner.compute.plan_pricing.price_matrix`), reserved ones committed by term
    (:func:`~planner.compute.plan_pricing.reserve`); cost = GPUs x USD/GPU-h x 730 h."""
    n_w, n_m = len(row_gpus), len(month_ix)
    types = sorted(set(row_gpus))
    type_of = np.array([types.index(g) for g in row_gpus], dtype=np.int64)
    needed_by_type = np.zeros((len(types), n_m), dtype=np.int64)
    np.add.at(needed_by_type, type_of, gpus_needed)
    usd, term = price_matrix(types, month_ix, prices,
                             {t: gpus[t].price_usd_per_hour for t in types}, pricing)
    cost = gpus_needed * (usd[type_of] if n_w else np.zeros((0, n_m))) * PLAN_HOURS_PER_MONTH
    beyond: dict[str, int] = {}
    if pricing == "reserved":
        billed = np.zeros_like(needed_by_type)
        cost_by_type = np.zeros((len(types), n_m))
        for t, name in enumerate(types):
            billed[t], cost_by_type[t], beyond[name] = reserve(needed_by_type[t], usd[t], term[t])
    else:
        billed = needed_by_type
        cost_by_type = needed_by_type * usd * PLAN_HOURS_PER_MONTH
    return _Bill(types=types, needed_by_type=needed_by_type, billed=billed, usd=usd, cost=cost,
                 cost_by_type=cost_by_type, beyond=beyond)
