"""Measured runs against the serving model, and the fit of its efficiency figures (issue 12).

A *run* is one measured benchmark (:class:`Run`: model and GPU names, settings, figures, engine
settings by scenario input name). :func:`run_table` turns runs into one scenario table (the
mapping below) and the measured figures each can be compared with; :func:`predict` evaluates
that table with the planner's own vectorized formula graph (:func:`planner.sheet.table.
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
:mod:`planner.sheet.harness`): the steady-state throughput times ``n / (n + c d)``, the drain of
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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.errors import PlannerError
from planner.estimator.architecture import ModelSpec
from planner.estimator.gpu import GpuSpec, serving_figures
from planner.sheet.harness import finite_run_factor, finite_run_ttft
from planner.sheet.inputs import INFERENCE_INPUTS
from planner.sheet.profiles import CalibrationFigures, resolve
from planner.sheet.table import build_columns, graph


@dataclass(frozen=True, slots=True)
class Parameter:
    """One fitted efficiency figure: the formula column it replaces and its physical range."""

    name: str
    column: str
    low: float
    high: float
    unit: str
    help: str
    needs: str = ""
    """A metric the fitted runs must measure for this parameter to be fitted (else it keeps
    its starting value): the request latency only from measured TTFT, so it cannot stand in
    for prefill time in throughput-only runs."""


PARAMETERS: tuple[Parameter, ...] = (
    Parameter("matmul_efficiency", "gpu_matmul_efficiency_16bit", 0.1, 1.0, "fraction",
              "achievable share of the dense 16-bit tensor peak (the 8-bit share keeps its "
              "catalog ratio to it)"),
    Parameter("bandwidth_efficiency", "gpu_bandwidth_efficiency", 0.2, 1.0, "fraction",
              "achievable share of the memory bandwidth on streaming reads"),
    Parameter("engine_step_overhead_s", "engine_step_overhead_s", 1e-5, 0.05, "s",
              "fixed time per engine step outside the GPU kernels"),
    Parameter("collective_efficiency", "collective_efficiency", 0.05, 1.0, "fraction",
              "achievable share of the per-direction link bandwidth in an all-reduce"),
    Parameter("request_latency_s", "request_latency_s", 1e-3, 1.0, "s",
              "front-end latency one request adds to its TTFT (HTTP, template, tokenize)",
              needs="ttft"),
)
"""What a calibration fits, per GPU and engine, shared by every model: the GPU's achievable
matmul and bandwidth shares, the engine's per-step overhead and collective efficiency (the
serving model's efficiency figures), and the front end's latency per request, without which
the figures above absorb the TTFT offset of the HTTP path. On the development set's H100 + vLLM
runs (20 % held out, seeds 0-2) adding it takes the held-out TTFT error from 20 % to 11 % and
leaves throughput as it was; also fitting the front end's serialized work per request and per
streamed token (``request_overhead_s``, ``stream_overhead_s_per_token``) doubled the held-out
throughput error there (they trade off against the GPU figures on burst runs), so they keep
their scenario values."""
PARAMETER_NAMES: tuple[str, ...] = tuple(p.name for p in PARAMETERS)

AT_BOUND_TOLERANCE = 1e-3
"""Relative distance to a bound within which a fitted parameter counts as sitting on it."""


def at_bound(parameters: Mapping[str, float], fitted: Sequence[str]
             ) -> list[tuple[str, float, str, float]]:
    """(name, value, "lower" or "upper", bound) of each fitted parameter that sits on its
    physical range's bound (:data:`PARAMETERS`): the runs push it past what the range
    allows, so the fit is not a measurement of it and the figures it feeds are less sure."""
    ranges = {p.name: p for p in PARAMETERS}
    out = []
    for name in fitted:
        p, value = ranges.get(name), parameters.get(name)
        if p is None or value is None:
            continue
        for side, bound in (("lower", p.low), ("upper", p.high)):
            if abs(value - bound) <= AT_BOUND_TOLERANCE * bound:
                out.append((name, float(value), side, bound))
    return out
METRICS: tuple[str, ...] = ("throughput", "ttft", "tpot")
STEADY_MODES = ("concurrency", "single", "rate")
LOSS_SCALE = 0.1
"""``f_scale`` of the soft-L1 loss: residuals beyond ~10 % in log terms count linearly."""


@dataclass(frozen=True, slots=True)
class Run:
    """One measured run as the fit sees it (``None`` = unknown)."""

    id: int
    model: str
    gpu: str
    values: Mapping[str, Any]
    settings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunTable:
    """Scenario rows of the scorable runs and the figures to compare.

    ``pairs`` holds one ``(row, metric, measured)`` per scored figure (measured in tokens/s or
    seconds); ``skipped`` the runs that could not be scored, with the reason."""

    runs: list[Run]
    table: dict[str, Any]
    pairs: list[tuple[int, str, float]]
    skipped: list[tuple[int, str]]


def _round_tokens(value: Any) -> int | None:
    return None if value is None else max(1, round(float(value)))


def run_row(run: Run) -> tuple[dict[str, Any] | None, list[tuple[str, float]], str]:
    """The scenario inputs of one run, its scored figures, and why not when it cannot be
    scored (see the module docstring)."""
    v = run.values
    if v.get("engine") is None:
        return None, [], "engine unknown"
    prompt, output = _round_tokens(v.get("input_tokens")), _round_tokens(v.get("output_tokens"))
    if prompt is None or output is None:
        return None, [], "input or output tokens unknown"
    mode = v.get("mode")
    latency_only = mode in STEADY_MODES and (v.get("ttft_mean_ms") or v.get("tpot_mean_ms"))
    if v.get("output_tokens_per_s") is None and not latency_only:
        return None, [], "no measured throughput"
    tp, pp = int(v.get("tp") or 1), int(v.get("pp") or 1)
    row: dict[str, Any] = {
        "model": run.model, "gpu": run.gpu, "engine": v["engine"], "tp": tp, "pp": pp,
        "gpus": int(v.get("gpus") or tp * pp), "prompt_tokens": prompt,
        "output_tokens": output, "concurrency": 0, "target_requests_per_s": 0.0}
    for name in ("weight_dtype", "kv_dtype"):
        if v.get(name) is not None:
            row[name] = v[name]
    if mode == "burst":
        if not v.get("num_requests"):
            return None, [], "burst with an unknown number of requests"
        row["concurrency"] = int(v["num_requests"])
    elif mode in ("concurrency", "single"):
        row["concurrency"] = int(v.get("concurrency") or 1)
    elif mode == "rate":
        if not v.get("request_rate"):
            return None, [], "rate mode with an unknown request rate"
        row["target_requests_per_s"] = float(v["request_rate"])
    elif mode != "offline":
        return None, [], f"mode {mode!r} unknown"
    row.update(run.settings)
    # a steady-state run may publish latencies only (AIC silicon rows: mean TTFT and TPOT)
    pairs = ([] if v.get("output_tokens_per_s") is None
             else [("throughput", float(v["output_tokens_per_s"]))])
    if mode in STEADY_MODES:
        if v.get("ttft_mean_ms"):
            pairs.append(("ttft", float(v["ttft_mean_ms"]) / 1e3))
        if v.get("tpot_mean_ms"):
            pairs.append(("tpot", float(v["tpot_mean_ms"]) / 1e3))
    if any(value <= 0 for _, value in pairs):
        return None, [], "a measured figure is 0"
    return row, pairs, ""


def run_table(runs: Sequence[Run]) -> RunTable:
    """:class:`RunTable` of ``runs``: one scenario row per scorable run."""
    rows: list[dict[str, Any]] = []
    kept: list[Run] = []
    pairs: list[tuple[int, str, float]] = []
    skipped: list[tuple[int, str]] = []
    for run in runs:
        row, figures, why = run_row(run)
        if row is None:
            skipped.append((run.id, why))
            continue
        pairs += [(len(rows), metric, value) for metric, value in figures]
        rows.append(row)
        kept.append(run)
    names = sorted({k for r in rows for k in r})
    defaults = {c.name: c.default for c in INFERENCE_INPUTS}
    kinds = {c.name: c.kind for c in INFERENCE_INPUTS}
    table = {k: np.array([r.get(k, defaults.get(k)) for r in rows],
                         dtype=object if k in _TEXT or kinds.get(k) == "choice"
                         else bool if kinds.get(k) == "bool" else np.float64) for k in names}
    return RunTable(kept, table, pairs, skipped)


_TEXT = frozenset({"model", "gpu", "engine", "weight_dtype", "kv_dtype"})


_WORST = float(np.log(1e6))
"""Largest |ln(predicted / measured)| a pair counts with."""
OUTPUTS = ("output_tokens_per_s", "saturation_output_tokens_per_s", "ttft_mean_s",
           "tpot_mean_s", "e2e_mean_s", "closed_loop_batch", "replicas", "serving_step_0_s",
           "step_s", "wave_ttft_mean_s")
FINITE_MODES = ("concurrency",)
"""Modes whose measured throughput is scored as a finite run of ``num_requests`` requests
through ``closed_loop_batch`` slots (:mod:`planner.sheet.harness`): the closed loop of
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
        if not runs.runs:
            raise PlannerError("no run can be scored: "
                               + "; ".join(f"#{i}: {why}" for i, why in runs.skipped[:5]))
        self.graph = graph("inference")
        cols = build_columns(runs.table, models, gpus)
        fits = np.broadcast_to(np.asarray(
            self.graph.compute(cols, ["engine_fits"])["engine_fits"], dtype=bool),
            (len(runs.runs),))
        if not fits.all():  # a deployment the model says cannot start has no figures to fit
            kept = run_table([r for r, ok in zip(runs.runs, fits, strict=True) if ok])
            skipped = [*runs.skipped, *kept.skipped,
                       *((r.id, "the deployment does not fit in memory as the planner "
                                "computes it (check tp, gpus and dtypes)")
                         for r, ok in zip(runs.runs, fits, strict=True) if not ok)]
            runs = RunTable(kept.runs, kept.table, kept.pairs, skipped)
            if not runs.runs:
                raise PlannerError("no run can be scored: "
                                   + "; ".join(f"#{i}: {why}" for i, why in skipped[:5]))
            cols = build_columns(runs.table, models, gpus)
        n = len(runs.runs)
        # the front-end inputs default to 0 = the front end's figure
        # (planner.estimator.frontends): a fit starts from, and moves, the figure in effect
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
        """Throughput and TTFT pairs scored as a finite run (:mod:`planner.sheet.harness`:
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
    # lazy-loaded: scipy costs ~0.3 s and only a fit needs it
    from scipy.optimize import least_squares

    holdout_ids = holdout_ids or set()
    run_ids = np.array([r.id for r in predictor.runs.runs])[predictor.rows]
    held = np.isin(run_ids, sorted(holdout_ids))
    train = ~held
    if not train.any():
        raise PlannerError("every run is held out: nothing to fit")
    measured_metrics = set(predictor.metrics[train].tolist())
    every = predictor.parameters
    x_all = np.asarray(start if start is not None else predictor.start(), dtype=np.float64)
    free = np.array([not p.needs or p.needs in measured_metrics for p in every])
    free &= _identified(predictor, x_all, train)
    if not free.any():
        raise PlannerError("no parameter moves any prediction of these runs: nothing to fit")
    params = tuple(p for p, f in zip(every, free, strict=True) if f)
    n_figures = int(train.sum())
    if n_figures < len(params):  # an under-determined fit reports noise as fitted figures
        raise PlannerError(
            f"{n_figures} measured figure(s) cannot fit {len(params)} parameters "
            f"({', '.join(p.name for p in params)}): a fit needs at least one scored figure "
            "per parameter; import more runs of this GPU and engine (a steady-state run with "
            "TTFT and TPOT scores three figures) or hold fewer out (--holdout)")
    lows = np.log([p.low for p in params])
    highs = np.log([p.high for p in params])
    z0 = np.clip(np.log(np.maximum(x_all[free], 1e-30)), lows + 1e-9, highs - 1e-9)

    def full(z: np.ndarray) -> np.ndarray:
        x = x_all.copy()
        x[free] = np.exp(z)
        return x
    before_res = predictor.log_residuals(None)
    def residuals(z: np.ndarray) -> np.ndarray:
        return np.asarray(predictor.log_residuals(full(z))[train])

    # diff_step per parameter (a scalar would broadcast to the same steps; the stubs take 1-D)
    result = least_squares(residuals, z0, bounds=(lows, highs), loss="soft_l1",
                           f_scale=LOSS_SCALE, diff_step=np.full(z0.shape, 1e-3),
                           max_nfev=400)
    # a parameter the runs do not move (no TP > 1 run for the collective efficiency, no
    # TTFT for the request latency) keeps its starting value and is not reported as fitted
    fitted = [p.name for p, z, s in zip(params, result.x, z0, strict=True) if abs(z - s) > 1e-6]
    x, x0 = full(result.x), full(z0)
    after_res = predictor.log_residuals(x)
    runs = predictor.runs.runs
    rows = [{"id": int(run_ids[i]), "model": runs[predictor.rows[i]].model,
             "metric": str(predictor.metrics[i]), "measured": float(predictor.measured[i]),
             "predicted_before": float(predictor.measured[i] * np.exp(before_res[i])),
             "predicted": float(predictor.measured[i] * np.exp(after_res[i])),
             "log_residual": float(after_res[i]), "holdout": bool(held[i])}
            for i in range(len(run_ids))]
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
        residuals=rows, skipped=list(predictor.runs.skipped), iterations=int(result.nfev))


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
    (:class:`planner.sheet.calibration.Predictor`, the planner's formula graph) with the
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
