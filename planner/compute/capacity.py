"""The capacity question as one solve: the cheapest GPU × TP × count × weight dtype that meets
the SLO at the target rate.

The UI's solve preset and ``planner solve`` run the same query: :func:`capacity_query` writes
it as the objective, the constraint and the ``--vary`` texts of the CLI
(``planner solve S --minimize cost_usd_per_month --subject-to meets_slo --vary gpu=...
--vary tp=1,2,4,8 --vary gpus=1..64 --vary weight_dtype=bf16,fp8``), and :func:`solve_capacity`
hands them to :func:`planner.compute.sweep.solve_best`, the function the CLI's ``solve`` and
``--as-options`` call. Each candidate is a whole deployment evaluated at the target rate,
so ``meets_slo`` is judged at the load and the GPU count that answer names, never by the idle
TTFT. A GPU filter (a name or vendor substring) and a utilisation cap narrow the search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from planner.compute import verdict
from planner.compute.outputs import output_columns
from planner.compute.sweep import parse_variation, solve_best
from planner.compute.table import evaluate_table, inputs_of
from planner.core.errors import ValidationError
from planner.core.units import fmt_usd

if TYPE_CHECKING:
    from planner.compute.profiles import CalibrationFigures
    from planner.spec.architecture import ModelSpec
    from planner.spec.gpu import GpuSpec

OBJECTIVE = "cost_usd_per_month"
"""What the preset minimises: the monthly cost of the candidate deployment."""

CONSTRAINT = "meets_slo"
"""What every answer satisfies: the deployment carries the target rate within the SLO
(``meets_slo`` is false when it does not fit or is saturated)."""

TPS = (1, 2, 4, 8)
WEIGHT_DTYPES = ("bf16", "fp8")
MAX_GPUS = 64
"""The search: tensor parallelism, weight dtypes and GPU counts 1..MAX_GPUS tried."""


@dataclass(frozen=True, slots=True)
class CapacityQuery:
    """A capacity solve: what ``planner solve`` is given."""

    objective: str
    constraint: str
    vary: tuple[str, ...]
    gpus: tuple[str, ...]

    def command(self, scenario: str) -> str:
        """The same solve as one CLI command."""
        varies = " ".join(f"--vary {v}" for v in self.vary)
        return (f'planner solve {scenario} --minimize {self.objective} '
                f'--subject-to "{self.constraint}" {varies}')


def gpu_matches(name: str, spec: GpuSpec, needle: str) -> bool:
    """Whether a GPU passes the filter: its name, label or vendor contains ``needle``
    (case-insensitive; an empty filter passes every GPU)."""
    needle = needle.strip().lower()
    return not needle or any(needle in str(t).lower() for t in (name, spec.label, spec.vendor))


def filtered_gpus(gpus: Mapping[str, GpuSpec], needle: str) -> tuple[str, ...]:
    """The GPU names that pass the filter (:func:`gpu_matches`); a filter that matches none
    is refused, naming it."""
    names = tuple(n for n, spec in gpus.items() if gpu_matches(n, spec, needle))
    if not names:
        raise ValidationError("GPU filter", "matches no GPU of the catalog", value=needle)
    return names


def check_question(base: Mapping[str, Any], utilization_cap: float | None) -> None:
    """Refuse a capacity question that has none: no target rate, no SLO, or a utilisation
    cap outside (0, 1] (the aggregated and the disaggregated solve ask the same)."""
    if not base.get("target_requests_per_s"):
        raise ValidationError("target_requests_per_s", "set a target request rate on the "
                              "scenario first (the capacity solve sizes for it)")
    if not (base.get("slo_ttft_s") or base.get("slo_tpot_s")):
        raise ValidationError("slo_ttft_s", "set slo_ttft_s or slo_tpot_s on the scenario "
                              "first (the answers must meet an SLO)")
    if utilization_cap is not None and not 0 < utilization_cap <= 1:
        raise ValidationError("utilization cap", "a fraction above 0 and at most 1",
                              value=str(utilization_cap))


ANSWERS = 5
"""Answers the capacity question lists: the cheapest and four runners-up."""


def capacity_query(base: Mapping[str, Any], gpus: Mapping[str, GpuSpec], *,
                   gpu_filter: str = "", utilization_cap: float | None = None,
                   max_gpus: int = MAX_GPUS, vary: Sequence[str] = (),
                   constraint: str | None = None) -> CapacityQuery:
    """The capacity solve of ``base`` (a scenario's inputs with ``model`` and ``gpu``): its
    GPUs filtered by ``gpu_filter``, and ``utilization <= utilization_cap`` added to the
    constraint when a cap (0 < cap <= 1) is given; ``constraint`` (an expression) is added to
    it too, and each of ``vary`` (``column=values``) replaces the default variation of its
    column or adds one. A scenario without a target rate or an SLO has no capacity question:
    refused, naming the inputs to set."""
    check_question(base, utilization_cap)
    names = filtered_gpus(gpus, gpu_filter)
    full = CONSTRAINT if utilization_cap is None else (
        f"{CONSTRAINT} and utilization <= {utilization_cap:g}")
    if constraint:
        full = f"{full} and ({constraint})"
    gpu_values = "*" if len(names) == len(gpus) else ",".join(names)
    defaults = {"gpu": f"gpu={gpu_values}", "tp": f"tp={','.join(map(str, TPS))}",
                "gpus": f"gpus=1..{max_gpus}",
                "weight_dtype": f"weight_dtype={','.join(WEIGHT_DTYPES)}"}
    for text in vary:
        defaults[text.split("=", 1)[0].strip()] = text.strip()
    return CapacityQuery(OBJECTIVE, full, tuple(defaults.values()), names)


@dataclass(frozen=True, slots=True)
class CapacityAnswer:
    """One deployment that meets the SLO, with the verdict's figures at the target rate."""

    changes: dict[str, Any]
    """The varied inputs' values: what is written as an option of the scenario."""
    outputs: dict[str, Any]
    """The verdict's columns (and ``saturated``, ``engine_fits``) of this deployment."""


def solve_capacity(base: Mapping[str, Any], query: CapacityQuery,
                   models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                   count: int = 5,
                   profiles: Sequence[CalibrationFigures] | None = None
                   ) -> list[CapacityAnswer]:
    """The ``count`` cheapest answers of ``query``, cheapest first, each evaluated once more
    (one vectorized call over the answers) for the verdict's figures."""
    columns = {c.name: c for c in inputs_of("inference")}
    variations = [parse_variation(v, gpus=list(gpus), models=list(models), columns=columns)
                  for v in query.vary]
    picked = solve_best(base, query.objective, "min", query.constraint, variations, models,
                        gpus, count, profiles=profiles)
    if not picked:
        return []
    varied = [v.column for v in variations]
    evaluated = _evaluate_answers(base, picked, varied, query.objective, models, gpus,
                                  profiles)
    integer = {k for k, c in output_columns().items() if c.integer}
    answers = []
    for i, p in enumerate(picked):
        out = {k: _item(np.asarray(v)[i] if np.ndim(v) else v) for k, v in evaluated.items()}
        out.update({k: int(v) for k, v in out.items() if k in integer})
        answers.append(CapacityAnswer({k: p[k] for k in varied}, out))
    return answers


def _evaluate_answers(base: Mapping[str, Any], picked: Sequence[Mapping[str, Any]],
                      varied: Sequence[str], objective: str, models: Mapping[str, ModelSpec],
                      gpus: Mapping[str, GpuSpec],
                      profiles: Sequence[CalibrationFigures] | None) -> dict[str, Any]:
    """The verdict's columns (and ``saturated``, ``engine_fits``, ``fits``, ``replicas``, the
    objective) of the picked answers, one row each, in one vectorized evaluation."""
    table: dict[str, Any] = dict(base)
    for column in varied:
        values = [p[column] for p in picked]
        table[column] = np.asarray(values, dtype=object if isinstance(values[0], str)
                                   else None)
    wanted = [*verdict.VERDICT, "saturated", "engine_fits", "fits", "replicas", objective]
    return evaluate_table(table, models, gpus, "inference", list(dict.fromkeys(wanted)),
                          profiles=profiles)


ANSWER_HEADERS = ("#", "GPU", "TP", "GPUs", "replicas", "dtype", "$/month", "TTFT p50",
                  "TTFT p99", "TPOT", "util.")
"""The columns of a capacity answer list (the UI's solve and ``planner solve``)."""


def answer_cells(n: int, answer: CapacityAnswer, gpus: Mapping[str, GpuSpec],
                 inputs: Mapping[str, Any]) -> tuple[str, ...]:
    """Answer ``n``'s cells under :data:`ANSWER_HEADERS`: the deployment (GPU, with `` *``
    where its serving efficiencies are unmeasured defaults, :func:`verdict.gpu_measured`),
    its monthly cost and the verdict's figures at the target rate (:func:`verdict.figure`:
    states in place of figures that are states). ``inputs``: the solved scenario's."""
    c, o = answer.changes, answer.outputs
    shown = {**inputs, **c}
    name = str(c.get("gpu", inputs.get("gpu", "")))
    spec = gpus.get(name)
    flag = "" if spec is None or verdict.gpu_measured(spec) else " *"
    return (str(n), name + flag, str(shown.get("tp", 1)), f"{int(shown.get('gpus', 1)):,}",
            f"{int(o.get('replicas', 0)):,}", str(shown.get("weight_dtype", "")),
            fmt_usd(o[OBJECTIVE]), verdict.figure("ttft_p50_s", o, shown),
            verdict.figure("ttft_p99_s", o, shown),
            verdict.figure("tpot_mean_s", o, shown), verdict.figure("utilization", o, shown))


def _item(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def one_deployment(base: Mapping[str, Any], grid: Any, columns: Sequence[str],
                   models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                   profiles: Sequence[CalibrationFigures] | None = None) -> bool:
    """Make each row of a sweep ``grid`` one deployment. A sweep that shows a sizing column
    (``gpus_needed``, ``replicas_needed``, ``cost_usd_per_month_needed``) beside other
    outputs would mix the deployment sized for the target rate with latencies and costs of
    the GPU count typed; here every other shown output (and the verdict's state columns) is
    evaluated again, in one vectorized call, at ``gpus = gpus_needed`` wherever that is a
    count, and ``grid.values["gpus"]`` says which count each row describes. True when the
    rows were re-evaluated. Rows whose sizing is a state (no target, does not fit, SLO
    unreachable) keep the typed deployment: their sizing shows as that state, not a count.
    A disaggregated row is evaluated at each pool's needed workers (:func:`_size_pools`), its
    count both pools' GPUs."""
    sizing = [c for c in columns if c in verdict.SIZING]
    others = [c for c in columns if c not in verdict.SIZING and c in grid.values]
    if not sizing or not others or "gpus_needed" not in grid.values:
        return False
    needed = np.asarray(grid.values["gpus_needed"], dtype=float)
    sized = grid.valid & np.isfinite(needed) & (needed > 0)
    typed = np.broadcast_to(np.asarray(grid.varied.get("gpus", base.get("gpus", 1)),
                                       dtype=float), needed.shape)
    count = np.where(sized, needed, typed)
    if sized.any():
        _resize(base, grid, others, sized, needed, typed, models, gpus, profiles)
    grid.values["gpus"] = count.astype(np.int64)
    return True


def _resize(base: Mapping[str, Any], grid: Any, others: Sequence[str], sized: np.ndarray,
            needed: np.ndarray, typed: np.ndarray, models: Mapping[str, ModelSpec],
            gpus: Mapping[str, GpuSpec], profiles: Sequence[CalibrationFigures] | None) -> None:
    """Evaluate ``others`` and the verdict's state inputs again on the ``sized`` rows at
    ``gpus = needed`` (a disaggregated row at each pool's needed workers,
    :func:`_size_pools`), in place in ``grid.values``."""
    table: dict[str, Any] = dict(base)
    for column, values in grid.varied.items():
        table[column] = np.asarray(values)[sized]
    table["gpus"] = needed[sized].astype(np.int64)
    _size_pools(table, typed[sized], models, gpus, profiles)
    wanted = list(dict.fromkeys([*others, *verdict.STATE_INPUTS]))
    wanted = [w for w in wanted if w in grid.values and w not in grid.varied]
    again = evaluate_table(table, models, gpus, "inference", wanted, profiles=profiles)
    for name in wanted:
        full = np.array(np.broadcast_to(np.asarray(grid.values[name]), needed.shape),
                        dtype=object if np.asarray(again[name]).dtype == object
                        else float)
        full[sized] = np.broadcast_to(np.asarray(again[name]), (int(sized.sum()),))
        grid.values[name] = full


def _size_pools(table: dict[str, Any], typed: np.ndarray, models: Mapping[str, ModelSpec],
                gpus: Mapping[str, GpuSpec],
                profiles: Sequence[CalibrationFigures] | None) -> None:
    """The disaggregated rows of ``table`` (sized rows of :func:`one_deployment`) as the
    deployment their ``gpus_needed`` counts: each pool at its needed workers
    (``disagg_prefill_workers_needed``, ``disagg_decode_workers_needed``) and the typed
    ``gpus`` kept (a pool's worker count, not ``gpus``, sizes a disaggregated deployment).
    Aggregated rows are left as they are."""
    mode = np.broadcast_to(np.asarray(table.get("serving_mode", "aggregated"), dtype=object),
                           typed.shape)
    pooled = mode == "disaggregated"
    if not pooled.any():
        return
    counts = evaluate_table({**table, "gpus": typed.astype(np.int64)}, models, gpus,
                            "inference", ["disagg_prefill_workers_needed",
                                          "disagg_decode_workers_needed"], profiles=profiles)
    table["gpus"] = np.where(pooled, typed, table["gpus"]).astype(np.int64)
    for pool in ("prefill", "decode"):
        now = np.broadcast_to(np.asarray(table.get(f"{pool}_workers", 0)), typed.shape)
        need = np.broadcast_to(np.asarray(counts[f"disagg_{pool}_workers_needed"]),
                               typed.shape)
        table[f"{pool}_workers"] = np.where(pooled, need, now).astype(np.int64)
