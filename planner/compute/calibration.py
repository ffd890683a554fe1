"""Measured runs against the serving model, and the fit of its efficiency figures (issue 12).

A *run* is one measured benchmark (:class:`Run`: model and GPU names, settings, figures, engine
settings by scenario input name). :func:`run_table` turns runs into one scenario table (the
mapping below) and the measured figures each can be compared with; :func:`predict` evaluates
that table with the planner's own vectorized formula graph (:func:`planner.compute.table.
build_columns` once, then one graph call per parameter vector), so a fit over hundreds of runs
costs milliseconds per step.

Mapping of a run to a scenario (explicit, never silent; runs that cannot be scored are returned
with the reason):

* model, GPU, engine, TP, PP, weight and KV dtype as stored; an unknown TP or PP is the engines'
  default 1, unknown GPUs ``tp * pp`` (one replica), unknown dtypes the scenario defaults
  (bf16, the engines' default KV dtype for bf16 checkpoints); an unknown engine cannot be
  scored;
* prompt and output tokens: the run's per-request means, rounded (unknown: not scored);
* mode ``offline``: the saturation rate (``saturation_output_tokens_per_s``), no front end;
  ``single`` (one client): ``G / e2e_mean_s``, one request after another;
  ``burst``: a closed loop of ``num_requests`` clients; ``concurrency`` and ``single``: a closed
  loop of ``concurrency`` clients; ``rate``: open loop at ``request_rate``;
* engine settings (``max_num_seqs``, ``mem_fraction_static``, ...) as stored.

A run's ``output_tokens_cv`` (its dataset's output-length spread) is an engine setting like the
others (``--set output_tokens_cv=X`` at import; unknown: 0). A ``concurrency`` run whose request
count is known is scored as the finite run it is (:data:`FINITE_MODES`,
:mod:`planner.compute.harness`): the steady-state throughput times ``n / (n + c d)``, the drain of
its last requests included.

Scored figures: output tokens/s always; mean TTFT and mean TPOT only in the steady-state modes
(``concurrency``, ``single``, ``rate``): in a burst or an offline run TTFT is mostly queueing
for the whole burst.

The fit (:func:`fit`): parameters :data:`PARAMETERS`, bounded to physical ranges and searched
on a log scale, minimize the robust (``soft_l1``, scale 0.1) sum of squared
``ln(predicted / measured)`` over every scored figure by ``scipy.optimize.least_squares``
(trust-region reflective, finite-difference Jacobian). Parameters the data do
not move (a zero gradient, e.g. collective efficiency without TP > 1 runs) keep their starting
value and are reported as not fitted.

The pieces live beside this module: the fitted figures in
:mod:`planner.compute.calibration_parameters`, runs as scenario rows in
:mod:`planner.compute.calibration_runs`, their predictions in
:mod:`planner.compute.calibration_predictor` (all importable from here as before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.compute.calibration_parameters import PARAMETER_NAMES as PARAMETER_NAMES
from planner.compute.calibration_parameters import PARAMETERS as PARAMETERS  # re-exported
from planner.compute.calibration_parameters import Parameter as Parameter
from planner.compute.calibration_parameters import at_bound as at_bound
from planner.compute.calibration_predictor import FINITE_MODES as FINITE_MODES
from planner.compute.calibration_predictor import Predictor
from planner.compute.calibration_predictor import RunPrediction as RunPrediction
from planner.compute.calibration_predictor import predict_runs as predict_runs
from planner.compute.calibration_runs import METRICS
from planner.compute.calibration_runs import Run as Run
from planner.compute.calibration_runs import RunTable as RunTable
from planner.compute.calibration_runs import run_row as run_row
from planner.compute.calibration_runs import run_table as run_table
from planner.core.errors import PlannerError
from planner.spec.gpu import GpuSpec, serving_figures

LOSS_SCALE = 0.1
"""``f_scale`` of the soft-L1 loss: residuals beyond ~10 % in log terms count linearly."""


def error_summary(log_residuals: np.ndarray, metrics: np.ndarray, mask: np.ndarray | None = None
                  ) -> dict[str, float | int | None]:
    """Median and p90 of ``|predicted/measured - 1|`` per metric (fractions; ``None`` when no
    figure of that metric is in ``mask``), and the count."""
    keep = np.ones(len(metrics), dtype=bool) if mask is None else mask
    out: dict[str, float | int | None] = {}
    for metric in METRICS:
        sel = keep & (metrics == metric)
        errors = np.abs(np.expm1(log_residuals[sel]))
        out[f"{metric}_median_abs_error"] = float(np.median(errors)) if errors.size else None
        out[f"{metric}_p90_abs_error"] = (float(np.percentile(errors, 90)) if errors.size
                                          else None)
        out[f"{metric}_n"] = int(sel.sum())
    return out


def holdout_split(runs: Sequence[Run], fraction: float, seed: int = 0) -> set[int]:
    """The ids held out: in each mode (offline, burst, concurrency, single, rate) separately,
    ``round(fraction * n)`` of its runs drawn by a seeded permutation of the sorted ids, so the
    held-out runs cover the modes the fit sees (and TTFT/TPOT runs are held out too) and the
    same data, fraction and seed always hold out the same runs."""
    if not 0 <= fraction < 1:
        raise PlannerError(f"holdout must be a fraction from 0 to below 1 (got {fraction})")
    strata: dict[str, list[int]] = {}
    for run in runs:
        strata.setdefault(str(run.values.get("mode")), []).append(run.id)
    rng = np.random.default_rng(seed)
    held: set[int] = set()
    for mode in sorted(strata):
        ids = sorted(strata[mode])
        order = rng.permutation(len(ids))
        held |= {ids[i] for i in order[:round(fraction * len(ids))]}
    return held


@dataclass(frozen=True, slots=True)
class FitResult:
    """A fit: the parameters, which of them the data constrained, and the errors."""

    parameters: dict[str, float]
    start: dict[str, float]
    fitted: list[str]
    fit_ids: list[int]
    holdout_ids: list[int]
    before: dict[str, Any]
    after: dict[str, Any]
    holdout_before: dict[str, Any]
    holdout: dict[str, Any]
    residuals: list[dict[str, Any]]
    skipped: list[tuple[int, str]]
    iterations: int


IDENTIFY_STEP = 0.05
"""Relative change (5 %) of one parameter that must move at least one fitted prediction for the
parameter to be fitted at all."""


def _identified(predictor: Predictor, x: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Which parameters move any prediction of the training runs: each is raised (or, at its
    upper bound, lowered) by :data:`IDENTIFY_STEP` alone and the log residuals compared. One
    that moves none (collective efficiency when no run spans GPUs, as tp = 1 everywhere) is
    not identified by these runs: it keeps its starting value and is not reported as fitted.
    Without this check the bounded solver could drift such a parameter along a flat direction
    and report it as fitted."""
    base = np.asarray(predictor.log_residuals(x))[train]
    moved = np.zeros(len(x), dtype=bool)
    for j, p in enumerate(predictor.parameters):
        trial = x.copy()
        up = x[j] * (1 + IDENTIFY_STEP)
        trial[j] = up if up <= p.high else x[j] * (1 - IDENTIFY_STEP)
        changed = np.asarray(predictor.log_residuals(trial))[train]
        moved[j] = bool(np.nanmax(np.abs(changed - base), initial=0.0) > 1e-9)
    return moved


def fit(predictor: Predictor, holdout_ids: set[int] | None = None,
        start: Sequence[float] | None = None) -> FitResult:
    """Fit the predictor's parameters to the runs not held out (see the module docstring)."""
    holdout_ids = holdout_ids or set()
    run_ids = np.array([r.id for r in predictor.runs.runs])[predictor.rows]
    held = np.isin(run_ids, sorted(holdout_ids))
    train = ~held
    if not train.any():
        raise PlannerError("every run is held out: nothing to fit")
    every = predictor.parameters
    x_all = np.asarray(start if start is not None else predictor.start(), dtype=np.float64)
    free = _free_parameters(predictor, x_all, train)
    before_res = predictor.log_residuals(None)
    x, x0, fitted, iterations = _least_squares(predictor, x_all, free, train)
    after_res = predictor.log_residuals(x)
    return FitResult(
        parameters={p.name: float(v) for p, v in zip(every, x, strict=True)},
        start={p.name: float(v) for p, v in zip(every, x0, strict=True)},
        fitted=fitted,
        fit_ids=sorted({int(i) for i in run_ids[train]}),
        holdout_ids=sorted({int(i) for i in run_ids[held]}),
        before=error_summary(before_res, predictor.metrics, train),
        after=error_summary(after_res, predictor.metrics, train),
        holdout_before=error_summary(before_res, predictor.metrics, held),
        holdout=error_summary(after_res, predictor.metrics, held),
        residuals=_residual_rows(predictor, run_ids, held, before_res, after_res),
        skipped=list(predictor.runs.skipped), iterations=iterations)


def _least_squares(predictor: Predictor, x_all: np.ndarray, free: np.ndarray,
                   train: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str], int]:
    """(fitted parameters, starting parameters, names of those the fit moved, function
    evaluations): the ``free`` parameters searched on a log scale within their bounds by
    ``scipy.optimize.least_squares`` (soft-L1 loss) on the training figures' log residuals."""
    # lazy-loaded: scipy costs ~0.3 s and only a fit needs it
    from scipy.optimize import least_squares

    params = tuple(p for p, f in zip(predictor.parameters, free, strict=True) if f)
    lows = np.log([p.low for p in params])
    highs = np.log([p.high for p in params])
    z0 = np.clip(np.log(np.maximum(x_all[free], 1e-30)), lows + 1e-9, highs - 1e-9)

    def full(z: np.ndarray) -> np.ndarray:
        x = x_all.copy()
        x[free] = np.exp(z)
        return x

    def residuals(z: np.ndarray) -> np.ndarray:
        return np.asarray(predictor.log_residuals(full(z))[train])

    # diff_step per parameter (a scalar would broadcast to the same steps; the stubs take 1-D)
    result = least_squares(residuals, z0, bounds=(lows, highs), loss="soft_l1",
                           f_scale=LOSS_SCALE, diff_step=np.full(z0.shape, 1e-3),
                           max_nfev=400)
    # a parameter the runs do not move (no TP > 1 run for the collective efficiency, no
    # TTFT for the request latency) keeps its starting value and is not reported as fitted
    fitted = [p.name for p, z, s in zip(params, result.x, z0, strict=True) if abs(z - s) > 1e-6]
    return full(result.x), full(z0), fitted, int(result.nfev)


def _free_parameters(predictor: Predictor, x_all: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Which parameters the training runs can fit: those whose needed metric they measure
    (:attr:`Parameter.needs`) and that move a prediction (:func:`_identified`). Refuses when
    none can, or when fewer figures are scored than parameters would be fitted."""
    measured_metrics = set(predictor.metrics[train].tolist())
    free = np.array([not p.needs or p.needs in measured_metrics for p in predictor.parameters])
    free &= _identified(predictor, x_all, train)
    if not free.any():
        raise PlannerError("no parameter moves any prediction of these runs: nothing to fit")
    params = [p for p, f in zip(predictor.parameters, free, strict=True) if f]
    n_figures = int(train.sum())
    if n_figures < len(params):  # an under-determined fit reports noise as fitted figures
        raise PlannerError(
            f"{n_figures} measured figure(s) cannot fit {len(params)} parameters "
            f"({', '.join(p.name for p in params)}): a fit needs at least one scored figure "
            "per parameter; import more runs of this GPU and engine (a steady-state run with "
            "TTFT and TPOT scores three figures) or hold fewer out (--holdout)")
    return free


def _residual_rows(predictor: Predictor, run_ids: np.ndarray, held: np.ndarray,
                   before_res: np.ndarray, after_res: np.ndarray) -> list[dict[str, Any]]:
    """One record per scored figure: its run, metric, measured value, predictions before and
    after the fit (``measured * exp(log residual)``), and whether it was held out."""
    runs = predictor.runs.runs
    return [{"id": int(run_ids[i]), "model": runs[predictor.rows[i]].model,
             "metric": str(predictor.metrics[i]), "measured": float(predictor.measured[i]),
             "predicted_before": float(predictor.measured[i] * np.exp(before_res[i])),
             "predicted": float(predictor.measured[i] * np.exp(after_res[i])),
             "log_residual": float(after_res[i]), "holdout": bool(held[i])}
            for i in range(len(run_ids))]


def calibrated_gpu_figures(gpu: GpuSpec, parameters: Mapping[str, float]) -> dict[str, float]:
    """The GPU's serving figures with a profile's fitted efficiencies in place (the 8-bit GEMM
    share keeps its catalog ratio to the 16-bit share)."""
    figures = serving_figures(gpu)
    out: dict[str, float] = {}
    if "matmul_efficiency" in parameters:
        ratio = figures["gpu_matmul_efficiency_8bit"] / figures["gpu_matmul_efficiency_16bit"]
        out["gpu_matmul_efficiency_16bit"] = parameters["matmul_efficiency"]
        out["gpu_matmul_efficiency_8bit"] = parameters["matmul_efficiency"] * ratio
    if "bandwidth_efficiency" in parameters:
        out["gpu_bandwidth_efficiency"] = parameters["bandwidth_efficiency"]
    return out
