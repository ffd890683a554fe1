"""What a plan's GPUs cost each month: the price in force and reserved commitments.

The conventions are :mod:`planner.compute.plan`'s: a price row applies from its month on (or from
the start), on-demand falls back to the catalog's hourly price, reserved GPUs are committed for
one term at the price of the month they are reserved in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from planner.compute.plan_inputs import PLAN_HOURS_PER_MONTH, GpuPrice, month_index, month_text
from planner.core.errors import ValidationError


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
        _check_priced(name, usd[g], term[g], months, pricing)
    return usd, term


def _check_priced(name: str, usd: np.ndarray, term: np.ndarray, months: np.ndarray,
                  pricing: str) -> None:
    """Refuse, naming the GPU, the first month and the command that sets it, a month without
    a price at ``pricing`` (reserved: without a price and a term)."""
    missing = np.isnan(usd) | ((term < 1) if pricing == "reserved" else False)
    if not missing.any():
        return
    month = month_text(int(months[int(np.argmax(missing))]))
    what = "reserved price and term" if pricing == "reserved" else f"{pricing} price"
    flags = "--reserved USD --term MONTHS" if pricing == "reserved" else "--spot USD"
    raise ValidationError("pricing", f"no {what} for GPU {name} in {month}; set one "
                          f"with `planner gpu price {name} {flags}` or plan with "
                          "--pricing on-demand", value=pricing)


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
