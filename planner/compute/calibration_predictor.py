"""Predictions of measured runs by the planner's formula graph, for any efficiency figures.

:class:`Predictor` builds a run table's formula columns once (validation, model and GPU
figures) and then evaluates them with any parameter vector in one vectorized graph call: the
fit (:func:`planner.compute.calibration.fit`) calls it hundreds of times, the workbook's
Calibration sheet once per GPU and engine (:func:`predict_runs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.compute.calibration_parameters import PARAMETERS, Parameter
from planner.compute.calibration_runs import Run, RunTable, run_table
from planner.compute.harness import finite_run_factor, finite_run_ttft
from planner.compute.profiles import CalibrationFigures, resolve
from planner.compute.table import build_columns, graph
from planner.core.errors import PlannerError
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec

_WORST = float(np.log(1e6))
"""Largest |ln(predicted / measured)| a pair counts with."""


OUTPUTS = ("output_tokens_per_s", "saturation_output_tokens_per_s", "ttft_mean_s",
           "tpot_mean_s", "e2e_mean_s", "closed_loop_batch", "replicas", "serving_step_0_s",
           "step_s", "wave_ttft_mean_s")


FINITE_MODES = ("concurrency",)
"""Modes whose measured throughput is scored as a finite run of ``num_requests`` requests
through ``closed_loop_batch`` slots (:mod:`planner.compute.harness`): the closed loop of
``c <= B_max`` clients, where the slots are exactly the clients. Not bursts and offline runs:
there the engine admits by the KV blocks in use *now* (prompts first), so the running batch
starts above the mean-occupancy ``B_max`` and falls below it in the drain; with the drain
modelled at ``c = B_max`` the fitted runs' median throughput error rose from 9 % to 14 %
(H100 + vLLM) and from 15 % to 30 % (H100 + SGLang) on the development set, so they keep the
steady-state rate. ``single`` is one slot (no drain); ``rate`` is an open loop."""


class Predictor:
    """Predictions of a :class:`RunTable` for any parameter vector: the formula columns are
    built once (validation, model and GPU figures); each call replaces the fitted columns and
    runs the graph."""

    def __init__(self, runs: RunTable, models: Mapping[str, ModelSpec],
                 gpus: Mapping[str, GpuSpec],
                 parameters: tuple[Parameter, ...] = PARAMETERS) -> None:
        self.graph = graph("inference")
        runs, cols = _deployments_that_start(runs, models, gpus)
        n = len(runs.runs)
        # the front-end inputs default to 0 = the front end's figure
        # (planner.formulas.frontends): a fit starts from, and moves, the figure in effect
        effective = np.broadcast_to(np.asarray(self.graph.compute(
            cols, ["request_latency_effective_s"])["request_latency_effective_s"],
            dtype=np.float64), (n,))
        cols = {**cols, "request_latency_s": effective.copy()}
        self.runs = runs
        self.parameters = parameters
        self.cols = cols
        base = self.cols
        self.eight_bit_ratio = (np.broadcast_to(base["gpu_matmul_efficiency_8bit"], (n,))
                                / np.broadcast_to(base["gpu_matmul_efficiency_16bit"], (n,)))
        self.rows = np.array([p[0] for p in runs.pairs], dtype=np.intp)
        self.metrics = np.array([p[1] for p in runs.pairs])
        self.measured = np.array([p[2] for p in runs.pairs], dtype=np.float64)
        modes = np.array([r.values.get("mode") for r in runs.runs], dtype=object)
        self.offline = (modes == "offline")[self.rows]
        self.single = (modes == "single")[self.rows]
        self.output_tokens = np.asarray(runs.table["output_tokens"], dtype=np.float64)[self.rows]
        requests = np.array([float(r.values.get("num_requests") or 0) for r in runs.runs])
        self.finite = (np.isin(modes, FINITE_MODES) & (requests > 0))[self.rows]
        """Throughput and TTFT pairs scored as a finite run (:mod:`planner.compute.harness`:
        the drain of its last requests, the first wave's wait for each other's prefill)."""
        self.requests = requests[self.rows]
        cv = runs.table.get("output_tokens_cv")
        self.output_tokens_cv = (np.zeros(n) if cv is None
                                 else np.asarray(cv, dtype=np.float64))[self.rows]

    def start(self) -> np.ndarray:
        """The parameters the table evaluates with before calibration (per row the GPU's
        catalog figures and the scenario inputs; their mean over rows)."""
        n = len(self.runs.runs)
        return np.array([float(np.mean(np.broadcast_to(self.cols[p.column], (n,))))
                         for p in self.parameters])

    def columns(self, params: Sequence[float] | np.ndarray | None) -> dict[str, Any]:
        """The formula columns with ``params`` in place (``None``: as built)."""
        if params is None:
            return self.cols
        cols = dict(self.cols)
        for p, value in zip(self.parameters, params, strict=True):
            cols[p.column] = float(value)
            if p.name == "matmul_efficiency":
                cols["gpu_matmul_efficiency_8bit"] = float(value) * self.eight_bit_ratio
        return cols

    def predict(self, params: Sequence[float] | np.ndarray | None) -> np.ndarray:
        """Predicted figure of every scored pair (tokens/s or seconds)."""
        out = self.graph.compute(self.columns(params), OUTPUTS)
        n = len(self.runs.runs)
        col = {k: np.broadcast_to(np.asarray(out[k], dtype=np.float64), (n,))[self.rows]
               for k in OUTPUTS}
        throughput = np.where(self.offline, col["saturation_output_tokens_per_s"],
                              np.where(self.single, self.output_tokens / col["e2e_mean_s"],
                                       col["output_tokens_per_s"]))
        replicas = np.maximum(col["replicas"], 1.0)
        factor = finite_run_factor(np.maximum(self.requests, 1.0) / replicas,
                                   col["closed_loop_batch"], self.output_tokens_cv,
                                   col["serving_step_0_s"] / col["step_s"])
        throughput = np.where(self.finite, throughput * factor, throughput)
        ttft = np.where(self.finite, finite_run_ttft(
            col["ttft_mean_s"], col["wave_ttft_mean_s"],
            np.maximum(self.requests, 1.0) / replicas, col["closed_loop_batch"]),
            col["ttft_mean_s"])
        return np.where(self.metrics == "throughput", throughput,
                        np.where(self.metrics == "ttft", ttft, col["tpot_mean_s"]))

    def log_residuals(self, params: Sequence[float] | np.ndarray | None) -> np.ndarray:
        """``ln(predicted / measured)`` of every scored pair (a prediction that is not a
        finite positive number counts as ``±ln(10^6)``, so one degenerate row cannot stop a
        fit)."""
        with np.errstate(all="ignore"):
            ratio = np.log(np.maximum(self.predict(params), 1e-300) / self.measured)
        return np.nan_to_num(ratio, nan=_WORST, posinf=_WORST, neginf=-_WORST).clip(
            -_WORST, _WORST)


def _nothing_to_score(skipped: Sequence[tuple[int, str]]) -> PlannerError:
    """The refusal when no run is left to score, naming the first five and why."""
    return PlannerError("no run can be scored: "
                        + "; ".join(f"#{i}: {why}" for i, why in skipped[:5]))


def _deployments_that_start(runs: RunTable, models: Mapping[str, ModelSpec],
                            gpus: Mapping[str, GpuSpec]) -> tuple[RunTable, dict[str, Any]]:
    """``runs`` and their formula columns, without the runs whose deployment the planner
    says cannot start (``engine_fits`` false): they have no figures to fit, and are skipped
    with the reason."""
    if not runs.runs:
        raise _nothing_to_score(runs.skipped)
    cols = build_columns(runs.table, models, gpus)
    fits = np.broadcast_to(np.asarray(
        graph("inference").compute(cols, ["engine_fits"])["engine_fits"], dtype=bool),
        (len(runs.runs),))
    if fits.all():
        return runs, cols
    kept = run_table([r for r, ok in zip(runs.runs, fits, strict=True) if ok])
    skipped = [*runs.skipped, *kept.skipped,
               *((r.id, "the deployment does not fit in memory as the planner "
                        "computes it (check tp, gpus and dtypes)")
                 for r, ok in zip(runs.runs, fits, strict=True) if not ok)]
    runs = RunTable(kept.runs, kept.table, kept.pairs, skipped)
    if not runs.runs:
        raise _nothing_to_score(skipped)
    return runs, build_columns(runs.table, models, gpus)


_SCALE = {"throughput": 1.0, "ttft": 1e3, "tpot": 1e3}
"""Predictor figure (tokens/s, s) → the sheet's unit (tokens/s, ms)."""


@dataclass(slots=True)
class RunPrediction:
    """One measured run on the Calibration sheet: measured and predicted figures per metric
    (tokens/s for throughput, ms for TTFT and TPOT; ``None`` where not scored)."""

    run: Run
    profile: str
    measured: dict[str, float]
    predicted: dict[str, float]


def predict_runs(runs: Sequence[Run], models: dict[str, ModelSpec], gpus: dict[str, GpuSpec],
                 profiles: Sequence[CalibrationFigures]) -> list[RunPrediction]:
    """Measured vs predicted of every scorable run: predictions by the fit's own predictor
    (:class:`planner.compute.calibration.Predictor`, the planner's formula graph) with the
    parameters of the profile ``auto`` picks for the run's GPU and engine (the catalog's
    figures and the scenario defaults when there is none). Runs that cannot be scored are
    left out."""
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.gpu, str(run.values.get("engine"))), []).append(run)
    out: list[RunPrediction] = []
    for (gpu, engine), group in sorted(groups.items()):
        try:
            predictor = Predictor(run_table(group), models, gpus)
        except PlannerError:  # nothing in this group can be scored
            continue
        profile = resolve("auto", gpu, engine, profiles)
        start = predictor.start()
        params = None if profile is None else [
            profile.parameters.get(p.name, float(x))
            for p, x in zip(predictor.parameters, start, strict=True)]
        predicted = predictor.predict(params)
        per_run: dict[int, RunPrediction] = {}
        for i, row in enumerate(predictor.rows):
            run = predictor.runs.runs[int(row)]
            entry = per_run.setdefault(run.id, RunPrediction(
                run, profile.label if profile else "", {}, {}))
            metric = str(predictor.metrics[i])
            entry.measured[metric] = float(predictor.measured[i]) * _SCALE[metric]
            entry.predicted[metric] = float(predicted[i]) * _SCALE[metric]
        out += sorted(per_run.values(), key=lambda e: e.run.id)
    return out
