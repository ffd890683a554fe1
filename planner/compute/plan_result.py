"""A fleet's plan as computed (:class:`PlanResult`), as plain data and as text.

Why a module of its own: the CLI (``--json``, the table and the chart), the UI's plan tab and
the workbook's plan sheets read a :class:`PlanResult`; none of them needs the evaluation
(:func:`planner.compute.plan.evaluate_plan`) that builds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.compute.plan_inputs import PLAN_HOURS_PER_MONTH


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
