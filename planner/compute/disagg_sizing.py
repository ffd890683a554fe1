"""Sizing a disaggregated deployment: the cheapest xPyD (prefill workers × decode workers, each
pool's tensor parallelism and GPU type) that carries the target rate within the SLO.

Why a search of its own: the aggregated capacity solve (:mod:`planner.compute.capacity`) varies
one GPU count; a disaggregated deployment has two pools whose counts and parallelism are chosen
apart, and a grid over both counts grows as their product (8 TP pairs × 64 × 64 workers is
32,768 deployments per GPU pair). The two pools' constraints separate:

* the decode pool alone sets TPOT and its own utilisation (its batch is the rate over its
  workers, :func:`planner.formulas.disagg_load.disagg_tpot_mean_s`), so the decode counts that can
  work are found by one scan over ``decode_workers`` per configuration;
* the prefill pool alone sets its utilisation (capacity is proportional to its workers), so
  the prefill counts that can work are found by one scan over ``prefill_workers``;
* TTFT joins them (prefill queue + prefill + KV transfer + the first decode step; the transfer
  link depends on whether both pools fit in one NVLink domain), so the answer is the cheapest
  pair of those counts that meets the whole SLO: pairs are tried in order of cost, a batch at
  a time, and the first that meets ``meets_slo`` is the cheapest — exact, with no assumption
  that TTFT falls as workers are added (tests/compute/test_disagg_sizing.py checks the integers
  against a brute-force search of every pair).

Every candidate is judged by the serving model's own columns (``meets_slo``,
``prefill_utilization``, ``decode_utilization``, ``cost_usd_per_month``) evaluated with
:func:`planner.compute.table.evaluate_table`, so an answer is a deployment the sheet, the
workbook and ``planner estimate`` give the same figures for.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from planner.compute import verdict
from planner.compute.capacity import check_question
from planner.compute.table import evaluate_table
from planner.core.errors import ValidationError
from planner.core.units import fmt_usd

if TYPE_CHECKING:
    from planner.compute.profiles import CalibrationFigures
    from planner.spec.architecture import ModelSpec
    from planner.spec.gpu import GpuSpec

POOL_TPS = (1, 2, 4, 8)
"""Tensor parallelism tried for each pool."""
MAX_WORKERS = 64
"""Workers per pool tried: 1..MAX_WORKERS."""
BATCH_PAIRS = 64
"""Pairs of worker counts judged per configuration in one vectorized evaluation."""
ANSWERS = 5
"""Answers listed: the cheapest configuration and four runners-up (distinct pool shapes)."""

WEIGHT_DTYPES = ("bf16", "fp8")
"""Weight dtypes tried, as the aggregated capacity preset does
(:data:`planner.compute.capacity.WEIGHT_DTYPES`); both pools serve the same checkpoint."""

POOL_COLUMNS = ("gpu", "decode_gpu", "prefill_tp", "decode_tp", "weight_dtype")
"""What one configuration fixes; the search then picks its two worker counts."""
VERDICT_COLUMNS = ("meets_slo", "cost_usd_per_month", "prefill_utilization",
                   "decode_utilization", "deployment_gpus", "ttft_p50_s", "ttft_p99_s",
                   "tpot_mean_s", "kv_transfer_s", "saturated", "engine_fits")
"""The serving model's columns an answer carries."""


@dataclass(frozen=True, slots=True)
class DisaggAnswer:
    """One disaggregated deployment that meets the SLO at the target rate."""

    changes: dict[str, Any]
    """The inputs that make it: ``serving_mode``, each pool's GPU, TP and workers (what is
    written as an option of a scenario)."""
    outputs: dict[str, Any]
    """The serving model's figures of it (:data:`VERDICT_COLUMNS`)."""


def _check(base: Mapping[str, Any], utilization_cap: float | None, max_workers: int) -> None:
    check_question(base, utilization_cap)
    if base.get("concurrency"):
        raise ValidationError("concurrency", "0 (the disaggregated solve sizes both pools for "
                              "a target rate, arrivals not a fixed number of clients)",
                              value=str(base.get("concurrency")))
    if not 1 <= max_workers <= 4096:
        raise ValidationError("max workers", "an integer from 1 to 4096",
                              value=str(max_workers))


def _evaluate(base: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], wanted: Sequence[str],
              models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
              profiles: Sequence[CalibrationFigures] | None) -> dict[str, np.ndarray]:
    """The serving model's ``wanted`` columns for ``rows`` (dicts of the varied inputs over
    ``base``), one vectorized call; every column as an array of ``len(rows)``."""
    table: dict[str, Any] = {**base, "serving_mode": "disaggregated"}
    for column in rows[0]:
        values = [r[column] for r in rows]
        table[column] = np.asarray(values, dtype=object if isinstance(values[0], str) else None)
    out = evaluate_table(table, models, gpus, "inference", list(wanted), profiles=profiles)
    return {k: np.broadcast_to(np.asarray(v), (len(rows),)) for k, v in out.items()}


def _pool_counts(base: Mapping[str, Any], configs: Sequence[dict[str, Any]], pool: str,
                 column: str, cap: float, max_workers: int,
                 models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                 profiles: Sequence[CalibrationFigures] | None
                 ) -> tuple[list[list[int]], list[float]]:
    """Per configuration, the worker counts of ``pool`` whose own constraints hold (its
    utilisation below ``cap`` and, for the decode pool, TPOT within ``slo_tpot_s``; the other
    pool held at ``max_workers``, which neither figure depends on for a target rate), and the
    monthly cost of one more worker of that pool (the model's ``cost_usd_per_month`` is linear
    in each pool's workers). One scan of 1..``max_workers``."""
    other = "decode_workers" if pool == "prefill" else "prefill_workers"
    counts = range(1, max_workers + 1)
    rows = [{**c, f"{pool}_workers": w, other: max_workers} for c in configs
            for w in (*counts, max_workers + 1)]
    out = _evaluate(base, rows, [column, "tpot_mean_s", "cost_usd_per_month"], models, gpus,
                    profiles)
    shape = (len(configs), max_workers + 1)
    ok = np.array((np.asarray(out[column], dtype=float) < cap).reshape(shape)[:, :-1])
    slo_tpot = float(base.get("slo_tpot_s") or 0)
    if pool == "decode" and slo_tpot > 0:
        tpot = np.asarray(out["tpot_mean_s"], dtype=float).reshape(shape)[:, :-1]
        ok &= tpot <= slo_tpot
    cost = np.asarray(out["cost_usd_per_month"], dtype=float).reshape(shape)
    unit = (cost[:, -1] - cost[:, -2]).tolist()
    return [[w for w, good in zip(counts, row, strict=True) if good] for row in ok], unit


def configurations(base: Mapping[str, Any], gpus: Mapping[str, GpuSpec], *,
                   prefill_gpus: Sequence[str] = (), decode_gpus: Sequence[str] = (),
                   prefill_tps: Sequence[int] = POOL_TPS,
                   decode_tps: Sequence[int] = POOL_TPS,
                   weight_dtypes: Sequence[str] = WEIGHT_DTYPES) -> list[dict[str, Any]]:
    """The pool shapes searched: prefill GPU (``prefill_gpus``, default the scenario's GPU) ×
    decode GPU (``decode_gpus``, default ``same``: each prefill GPU's own type) × prefill TP ×
    decode TP × weight dtype. Unknown GPU names are refused, naming the catalog."""
    pgpus = tuple(prefill_gpus) or (str(base["gpu"]),)
    dgpus = tuple(decode_gpus) or ("same",)
    for name in (*pgpus, *(d for d in dgpus if d != "same")):
        if name not in gpus:
            raise ValidationError("gpu", f"a GPU of the catalog ({', '.join(sorted(gpus))})",
                                  value=name)
    return [{"gpu": p, "decode_gpu": d, "prefill_tp": int(a), "decode_tp": int(b),
             "weight_dtype": w}
            for p, d, a, b, w in itertools.product(pgpus, dgpus, prefill_tps, decode_tps,
                                                   weight_dtypes)]


def size_disaggregated(base: Mapping[str, Any], models: Mapping[str, ModelSpec],
                       gpus: Mapping[str, GpuSpec], *, prefill_gpus: Sequence[str] = (),
                       decode_gpus: Sequence[str] = (), prefill_tps: Sequence[int] = POOL_TPS,
                       decode_tps: Sequence[int] = POOL_TPS,
                       weight_dtypes: Sequence[str] = WEIGHT_DTYPES,
                       max_workers: int = MAX_WORKERS,
                       utilization_cap: float | None = None,
                       count: int = ANSWERS,
                       profiles: Sequence[CalibrationFigures] | None = None
                       ) -> list[DisaggAnswer]:
    """The ``count`` cheapest disaggregated deployments of ``base`` (a scenario's inputs with
    a target rate and an SLO) that meet the SLO, one per pool shape, cheapest first (ties:
    fewer GPUs). The module docstring gives the search; ``utilization_cap`` (0 < cap <= 1)
    keeps both pools at or below that busy share."""
    _check(base, utilization_cap, max_workers)
    configs = configurations(base, gpus, prefill_gpus=prefill_gpus, decode_gpus=decode_gpus,
                             prefill_tps=prefill_tps, decode_tps=decode_tps,
                             weight_dtypes=weight_dtypes)
    cap = 1.0 if utilization_cap is None else float(utilization_cap) + 1e-12
    decode_ok, d_unit = _pool_counts(base, configs, "decode", "decode_utilization", cap,
                                     max_workers, models, gpus, profiles)
    prefill_ok, p_unit = _pool_counts(base, configs, "prefill", "prefill_utilization", cap,
                                      max_workers, models, gpus, profiles)
    pending: list[tuple[dict[str, Any], list[tuple[int, int]]]] = []
    for c, dws, pws, p_price, d_price in zip(configs, decode_ok, prefill_ok, p_unit, d_unit,
                                             strict=True):
        if dws and pws:
            pending.append((c, _by_cost(pws, dws, p_price, d_price)))
    best = _cheapest_meeting(base, pending, cap, models, gpus, profiles)
    best.sort(key=lambda t: (t[0], t[1]))
    picked = [row for _, _, row in best[:count]]
    if not picked:
        return []
    out = _evaluate(base, picked, VERDICT_COLUMNS, models, gpus, profiles)
    answers = []
    for k, row in enumerate(picked):
        figures = {name: _item(out[name][k]) for name in VERDICT_COLUMNS}
        figures["deployment_gpus"] = int(figures["deployment_gpus"])
        answers.append(DisaggAnswer({"serving_mode": "disaggregated", **row}, figures))
    return answers


def _cheapest_meeting(base: Mapping[str, Any],
                      pending: list[tuple[dict[str, Any], list[tuple[int, int]]]], cap: float,
                      models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                      profiles: Sequence[CalibrationFigures] | None
                      ) -> list[tuple[float, int, dict[str, Any]]]:
    """(USD per month, GPUs, row) of each configuration's cheapest worker pair that meets the
    SLO with both pools below ``cap``: its pairs (cheapest first) evaluated
    :data:`BATCH_PAIRS` at a time, every configuration still searching in one graph call."""
    best: list[tuple[float, int, dict[str, Any]]] = []
    start = 0
    while pending:
        rows, owners = [], []
        for i, (c, pairs) in enumerate(pending):
            for pw, dw in pairs[start:start + BATCH_PAIRS]:
                rows.append({**c, "prefill_workers": pw, "decode_workers": dw})
                owners.append(i)
        if not rows:
            break
        out = _evaluate(base, rows, ("meets_slo", "prefill_utilization",
                                     "decode_utilization", "cost_usd_per_month",
                                     "deployment_gpus"), models, gpus, profiles)
        meets = np.array(out["meets_slo"], dtype=bool)
        meets &= np.asarray(out["prefill_utilization"], dtype=float) < cap
        meets &= np.asarray(out["decode_utilization"], dtype=float) < cap
        found = set()
        for k, i in enumerate(owners):
            if i in found or not meets[k]:
                continue
            found.add(i)
            best.append((float(out["cost_usd_per_month"][k]), int(out["deployment_gpus"][k]),
                         rows[k]))
        pending = [p for i, p in enumerate(pending) if i not in found]
        start += BATCH_PAIRS
    return best


def _by_cost(prefill: Sequence[int], decode: Sequence[int], prefill_usd: float,
             decode_usd: float) -> list[tuple[int, int]]:
    """Every (prefill workers, decode workers) pair, cheapest first (then fewer workers):
    ``prefill_usd`` and ``decode_usd`` are one more worker's monthly cost in each pool."""
    def cost(pair: tuple[int, int]) -> tuple[float, int]:
        return pair[0] * prefill_usd + pair[1] * decode_usd, pair[0] + pair[1]

    return sorted(itertools.product(prefill, decode), key=cost)


def _item(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


ANSWER_HEADERS = ("#", "prefill", "decode", "dtype", "GPUs", "$/month", "TTFT p50",
                  "TTFT p99", "TPOT", "prefill util.", "decode util.")
"""The columns of a disaggregated answer list."""


def pool_text(gpu: str, tp: int, workers: int, gpus: Mapping[str, GpuSpec] | None = None
              ) -> str:
    """One pool as people write it: ``3 × h100-sxm TP4`` (workers × GPU, TP per worker), with
    `` *`` after a GPU whose serving efficiencies are unmeasured defaults
    (:func:`planner.compute.verdict.gpu_measured`)."""
    spec = None if gpus is None else gpus.get(gpu)
    flag = "" if spec is None or verdict.gpu_measured(spec) else " *"
    return f"{workers} × {gpu}{flag} TP{tp}"


def answer_cells(n: int, answer: DisaggAnswer, inputs: Mapping[str, Any],
                 gpus: Mapping[str, GpuSpec] | None = None) -> tuple[str, ...]:
    """Answer ``n``'s cells under :data:`ANSWER_HEADERS` (states in place of figures that are
    states, :func:`planner.compute.verdict.figure`; ``*`` marks unmeasured GPUs)."""
    c, o = answer.changes, answer.outputs
    shown = {**inputs, **c}
    decode_gpu = c["gpu"] if c["decode_gpu"] == "same" else c["decode_gpu"]
    return (str(n), pool_text(c["gpu"], c["prefill_tp"], c["prefill_workers"], gpus),
            pool_text(decode_gpu, c["decode_tp"], c["decode_workers"], gpus),
            str(c["weight_dtype"]),
            f"{o['deployment_gpus']:,}", fmt_usd(o["cost_usd_per_month"]),
            verdict.figure("ttft_p50_s", o, shown), verdict.figure("ttft_p99_s", o, shown),
            verdict.figure("tpot_mean_s", o, shown), f"{o['prefill_utilization']:.0%}",
            f"{o['decode_utilization']:.0%}")


_LISTS = ("gpu", "decode_gpu", "prefill_tp", "decode_tp", "weight_dtype", "workers")


def search_from_vary(vary: Sequence[str], gpus: Mapping[str, GpuSpec]) -> dict[str, Any]:
    """The disaggregated search's keyword arguments from ``--vary COLUMN=VALUES`` texts:
    ``gpu=a,b`` (the prefill GPUs; ``*`` every GPU), ``decode_gpu=same,c`` (the decode GPUs),
    ``prefill_tp=1,2,4,8``, ``decode_tp=...``, ``weight_dtype=bf16,fp8`` and ``workers=N``
    (1..N workers per pool).
    Anything else is refused, naming what the disaggregated solve varies."""
    out: dict[str, Any] = {}
    for text in vary:
        column, items, values = _vary_item(text)
        if column in ("gpu", "decode_gpu"):
            names = list(gpus) if items == ["*"] else items
            out["prefill_gpus" if column == "gpu" else "decode_gpus"] = tuple(names)
        elif column == "weight_dtype":
            out["weight_dtypes"] = _vary_dtypes(items)
        elif column == "workers":
            numbers = _vary_numbers(column, items, values)
            if len(numbers) != 1:
                raise ValidationError("--vary workers", "one number N (1..N workers per pool)",
                                      value=values)
            out["max_workers"] = numbers[0]
        else:
            out[f"{column}s"] = tuple(_vary_numbers(column, items, values))
    return out


def _vary_item(text: str) -> tuple[str, list[str], str]:
    """(column, its values, the values as written) of one ``--vary COLUMN=VALUES``; the
    column must be one the disaggregated solve varies."""
    column, sep, values = text.partition("=")
    column, items = column.strip(), [v.strip() for v in values.split(",") if v.strip()]
    if not sep or column not in _LISTS or not items:
        raise ValidationError("--vary", "in a disaggregated solve one of "
                              + ", ".join(f"{c}=..." for c in _LISTS), value=text)
    return column, items, values


def _vary_dtypes(items: Sequence[str]) -> tuple[str, ...]:
    """``--vary weight_dtype=...``: each a weight dtype choice of the scenario inputs."""
    # lazy: the input registry, only when a weight dtype is varied
    from planner.compute.inputs import WEIGHT_DTYPE_CHOICES

    bad = [v for v in items if v not in WEIGHT_DTYPE_CHOICES]
    if bad:
        raise ValidationError("--vary weight_dtype",
                              "one of " + ", ".join(WEIGHT_DTYPE_CHOICES), value=bad[0])
    return tuple(items)


def _vary_numbers(column: str, items: Sequence[str], values: str) -> list[int]:
    """``--vary COLUMN=1,2,4``: whole numbers from 1 to 4096 (``values``: as written)."""
    try:
        numbers = [int(v) for v in items]
    except ValueError:
        raise ValidationError(f"--vary {column}", "whole numbers separated by commas",
                              value=values) from None
    if any(n < 1 or n > 4096 for n in numbers):
        raise ValidationError(f"--vary {column}", "whole numbers from 1 to 4096",
                              value=values)
    return numbers
