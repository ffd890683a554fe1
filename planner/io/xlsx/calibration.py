"""The Calibration sheet and what the scenario sheets take from it: the profiles the exported
scenarios use (fitted parameters, which calibrated scenario cells reference), one row per
measured run with its measured figures and the predicted ones as live formulas on the
Calibration runs sheet, and each prediction's |error|, with a predicted-against-measured chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from planner.compute.calibration import (
    FINITE_MODES,
    PARAMETERS,
    RunPrediction,
    run_row,
)
from planner.compute.harness import finite_run_factor_formula, finite_run_ttft_formula
from planner.compute.inputs import input_columns
from planner.compute.profiles import INPUT_REPLACED, CalibrationFigures, resolve
from planner.compute.symbolic import excel, symbolic
from planner.compute.table import graph, inputs_of
from planner.core.errors import PlannerError
from planner.io.xlsx.layout import (
    GPU_FIGURE_SOURCE,
    letters,
    scenario_columns,
)
from planner.io.xlsx.lookups import Ranges
from planner.io.xlsx.sheetxml import (
    ROW,
    formula_template,
)
from planner.io.xlsx.style import (
    header_cell,
    print_setup,
    write_text,
)
from planner.spec.domain import Scenario

GPU_CALIBRATED = ("gpu_matmul_efficiency_16bit", "gpu_matmul_efficiency_8bit",
                  "gpu_bandwidth_efficiency")
"""GPU figure columns of a scenario sheet a calibration profile replaces."""
PROFILE_HEADERS = ("profile", "gpu", "engine", *(p.name for p in PARAMETERS),
                   "holdout throughput |error| [fraction]")
PROFILE_TOP = 3
"""Header row of the Calibration sheet's profile table (its profiles follow)."""


def _excel_number(value: float) -> str:
    return repr(float(value)).replace("e+", "E+").replace("e-", "E-")


class CalibrationCells:
    """Where the workbook takes a calibration profile's figures from: the profile table of the
    Calibration sheet (one row per profile, one column per fitted parameter).

    A scenario row whose ``calibration`` input picks a profile (resolved at export, as
    evaluation resolves it) gets its own formulas in the columns the profile changes:

    * ``gpu_matmul_efficiency_16bit`` = the profile's ``matmul_efficiency`` cell,
      ``gpu_matmul_efficiency_8bit`` = that cell × the GPU's 8-bit / 16-bit catalog shares
      (INDEX/MATCH on the GPUs sheet), ``gpu_bandwidth_efficiency`` = the profile's cell;
    * every formula that reads ``engine_step_overhead_s``, ``collective_efficiency`` or
      ``request_latency_s`` reads ``IF(input = default, profile cell, input)``: the profile
      replaces an input left at its default, a value the user set wins (as in evaluation).

    So the workbook computes the calibrated figures live, and editing a profile cell flows
    into every scenario that uses it. The input cells keep the stored values, so a round trip
    import changes nothing."""

    def __init__(self, profiles: Sequence[CalibrationFigures]) -> None:
        self.profiles = list(profiles)
        self.rows: dict[str, int] = {}
        self._templates: dict[tuple[str, str, str], str] = {}
        self._reads: dict[str, dict[str, frozenset[str]]] = {}
        self.param_letter = {name: get_column_letter(j) for j, name in
                             enumerate(PROFILE_HEADERS, 1) if name in
                             {p.name for p in PARAMETERS}}

    def pick(self, sc: Scenario) -> CalibrationFigures | None:
        """The profile the scenario's ``calibration`` input picks (registered in the table)."""
        profile = resolve(str(sc.inputs.get("calibration", "auto")), sc.gpu,
                          str(sc.inputs.get("engine")), self.profiles)
        if profile is not None:
            self.add(profile)
        return profile

    def add(self, profile: CalibrationFigures) -> int:
        """The profile's row in the table (added on first use)."""
        if profile.label not in self.rows:
            self.rows[profile.label] = PROFILE_TOP + 1 + len(self.rows)
        return self.rows[profile.label]

    def used(self) -> list[CalibrationFigures]:
        """The profiles in the table, in row order."""
        by_label = {p.label: p for p in self.profiles}
        return [by_label[label] for label in sorted(self.rows, key=self.rows.__getitem__)]

    def reads(self, kind: str) -> dict[str, frozenset[str]]:
        """Computed column → the replaced inputs its formula reads directly."""
        if kind not in self._reads:
            g = graph(kind)
            found: dict[str, frozenset[str]] = {}
            for c in scenario_columns(kind):
                if g.computes(c.key):
                    names: set[str] = set()

                    def seen(name: str, names: set[str] = names) -> str:
                        names.add(name)
                        return name
                    excel(symbolic(g.formula(c.key)), seen)
                    hit = names & set(INPUT_REPLACED)
                    if hit:
                        found[c.key] = frozenset(hit)
            self._reads[kind] = found
        return self._reads[kind]

    def columns(self, kind: str) -> frozenset[str]:
        """Every column a profile may change on a sheet of ``kind``."""
        return frozenset(self.reads(kind)) | frozenset(GPU_CALIBRATED)

    def cell(self, profile: CalibrationFigures, parameter: str) -> str:
        """Absolute reference of a profile's parameter cell."""
        return f"Calibration!${self.param_letter[parameter]}${self.add(profile)}"

    def template(self, kind: str, key: str, profile: CalibrationFigures, ranges: Ranges
                 ) -> str:
        """The formula template of column ``key`` for a row calibrated with ``profile``."""
        cache_key = (kind, key, profile.label)
        if cache_key in self._templates:
            return self._templates[cache_key]
        col = letters(kind)
        p = profile.parameters
        gpu_cell = f"{col['gpu']}{ROW}"

        def lookup(column: str) -> str:
            return ranges.gpu(GPU_FIGURE_SOURCE[column], gpu_cell)

        if key == "gpu_matmul_efficiency_16bit" and "matmul_efficiency" in p:
            text = "=" + self.cell(profile, "matmul_efficiency")
        elif key == "gpu_matmul_efficiency_8bit" and "matmul_efficiency" in p:
            text = (f"={self.cell(profile, 'matmul_efficiency')}*"
                    f"{lookup('gpu_matmul_efficiency_8bit')}/"
                    f"{lookup('gpu_matmul_efficiency_16bit')}")
        elif key == "gpu_bandwidth_efficiency" and "bandwidth_efficiency" in p:
            text = "=" + self.cell(profile, "bandwidth_efficiency")
        elif key in GPU_CALIBRATED:
            text = "=" + lookup(key)
        else:
            defaults = input_columns()

            def ref(name: str) -> str:
                own = f"{col[name]}{ROW}"
                if name in INPUT_REPLACED and name in p:
                    return (f"IF({own}={_excel_number(defaults[name].default)},"
                            f"{self.cell(profile, name)},{own})")
                return own
            text = "=" + excel(symbolic(graph(kind).formula(key)), ref)
        self._templates[cache_key] = formula_template(text)
        return self._templates[cache_key]


RUN_HEADERS = ("run", "model", "gpu", "engine", "mode", "profile",
               "measured output [tokens/s]", "predicted output [tokens/s]",
               "throughput |error| [fraction]",
               "measured TTFT mean [ms]", "predicted TTFT mean [ms]", "TTFT |error| [fraction]",
               "measured TPOT mean [ms]", "predicted TPOT mean [ms]", "TPOT |error| [fraction]")
"""Columns of the Calibration sheet's run table."""
CALIBRATION_RUNS = "Calibration runs"
"""The sheet holding one scenario row per measured run: the live formulas the Calibration
sheet's predicted figures read (and those they need; the other computed columns are empty
and hidden)."""


def run_scenarios(predictions: Sequence[RunPrediction]) -> list[Scenario]:
    """One inference scenario per listed run: the inputs the fit scores it with
    (:func:`planner.compute.calibration.run_row`: per-request token means, TP/PP/GPUs, dtypes,
    engine settings; every other input at its default) and ``calibration = auto``, which picks
    the profile :func:`predict_runs` predicts with (the newest for the run's GPU and engine)."""
    defaults = {c.name: c.default for c in inputs_of("inference")}
    out: list[Scenario] = []
    for entry in predictions:
        row, _, _ = run_row(entry.run)
        if row is None:  # predict_runs lists scorable runs only
            raise PlannerError(f"run {entry.run.id} cannot be scored")
        inputs = {**defaults, **{k: v for k, v in row.items() if k not in ("model", "gpu")},
                  "calibration": "auto"}
        out.append(Scenario(0, "", f"run {entry.run.id}", "inference", row["model"],
                            row["gpu"], inputs, "", "", 0))
    return out


PREDICTION_READS = ("saturation_output_tokens_per_s", "output_tokens", "e2e_mean_s",
                    "output_tokens_per_s", "ttft_mean_s", "replicas", "closed_loop_batch",
                    "output_tokens_cv", "serving_step_0_s", "step_s", "wave_ttft_mean_s",
                    "tpot_mean_s")
"""The Calibration runs sheet's columns the predicted figures read (:func:`_prediction_formulas`
refuses any other)."""


def prediction_columns() -> frozenset[str]:
    """The computed columns the Calibration runs sheet writes: the predictions' reads and
    every column their formulas need, directly or not (the graph's closure). The others, a
    run row's cost, memory report or SLO search, say nothing about the fit; left out, a
    sheet of a few hundred runs stays a few hundred columns of formulas narrower."""
    return frozenset(graph("inference").closure(PREDICTION_READS)) | frozenset(PREDICTION_READS)


def _prediction_formulas(entry: RunPrediction, r: int) -> dict[str, str]:
    """Live formulas of one run's predicted figures (tokens/s; ms), reading its row ``r`` of
    the Calibration runs sheet, scored as the fit scores it: ``offline`` on the saturation
    rate, ``single`` as output tokens / mean end-to-end latency, the other modes on the
    output rate at the run's load, a closed loop of known request count times its finite-run
    factor (:func:`planner.compute.harness.finite_run_factor_formula`) and its mean TTFT with
    the first wave (:func:`planner.compute.harness.finite_run_ttft_formula`); TTFT and TPOT
    means in ms."""
    col = letters("inference")
    sheet = f"'{CALIBRATION_RUNS}'!"

    def ref(key: str) -> str:
        if key not in PREDICTION_READS:  # the Calibration runs sheet would leave it empty
            raise KeyError(f"{key} is not in PREDICTION_READS")
        return f"{sheet}{col[key]}{r}"

    mode = entry.run.values.get("mode")
    throughput = (ref("saturation_output_tokens_per_s") if mode == "offline" else
                  f"{ref('output_tokens')}/{ref('e2e_mean_s')}" if mode == "single" else
                  ref("output_tokens_per_s"))
    requests = float(entry.run.values.get("num_requests") or 0)
    ttft = ref("ttft_mean_s")
    if mode in FINITE_MODES and requests > 0:  # a finite run: its makespan's drain
        per_replica = f"{requests!r}/MAX({ref('replicas')},1)"
        factor = finite_run_factor_formula(
            per_replica, ref("closed_loop_batch"),
            ref("output_tokens_cv"), f"{ref('serving_step_0_s')}/{ref('step_s')}")
        throughput = f"{throughput}*{factor}"
        # and its first wave's wait for each other's prefill (harness.finite_run_ttft)
        ttft = finite_run_ttft_formula(ttft, ref("wave_ttft_mean_s"), per_replica,
                                       ref("closed_loop_batch"))
    return {"throughput": f"={throughput}", "ttft": f"=1000*({ttft})",
            "tpot": f"=1000*{ref('tpot_mean_s')}"}


def write_calibration(ws: Any, cells: CalibrationCells, runs: Sequence[RunPrediction],
                      run_rows: Sequence[int] = ()) -> dict[str, Any]:
    """The Calibration sheet: the profiles the scenarios use (their fitted parameters, which
    the scenario sheets' calibrated cells reference) and one row per measured run with the
    measured figures, the predicted ones as live formulas reading the run's row
    ``run_rows[i]`` on the Calibration runs sheet (which reads the profile cells above, so
    editing a fitted parameter moves every prediction), and ``|error| = ABS(predicted /
    measured - 1)``; a scatter chart of predicted against measured on log axes, one series
    per figure. Returns each formula cell's value (the fit's own predictions)."""
    _profile_table(ws, cells)
    top = run_top(len(cells.rows))
    out = _run_table(ws, top, runs, run_rows)
    if runs:
        _run_chart(ws, top, top + len(runs))
    ws.column_dimensions["A"].width = 22
    for j in range(2, len(RUN_HEADERS) + 1):
        ws.column_dimensions[get_column_letter(j)].width = 16
    ws.freeze_panes = f"A{top + 1}"
    print_setup(ws, f"A1:{get_column_letter(len(RUN_HEADERS) + 12)}{max(top + len(runs), 30)}")
    return out


def _profile_table(ws: Any, cells: CalibrationCells) -> None:
    """The profile table from row :data:`PROFILE_TOP`: label, GPU, engine, each fitted
    parameter (dimensionless fractions and seconds, as fitted) and the holdout error."""
    ws.cell(row=1, column=1, value="Calibration profiles (fitted parameters; scenario "
            "sheets read these cells)").font = Font(bold=True)
    for j, text in enumerate(PROFILE_HEADERS, 1):
        header_cell(ws, PROFILE_TOP, j, text, "input" if j > 3 else "meta")
    for profile in cells.used():
        r = cells.rows[profile.label]
        write_text(ws.cell(row=r, column=1), profile.label)
        write_text(ws.cell(row=r, column=2), profile.gpu)
        write_text(ws.cell(row=r, column=3), profile.engine)
        for j, name in enumerate(PROFILE_HEADERS[3:-1], 4):
            if name in profile.parameters:
                ws.cell(row=r, column=j, value=float(profile.parameters[name]))
                ws.cell(row=r, column=j).number_format = "0.000000"
        if profile.holdout_throughput_error is not None:
            ws.cell(row=r, column=len(PROFILE_HEADERS), value=profile.holdout_throughput_error)
            ws.cell(row=r, column=len(PROFILE_HEADERS)).number_format = "0.0%"


def _run_table(ws: Any, top: int, runs: Sequence[RunPrediction], run_rows: Sequence[int]
               ) -> dict[str, Any]:
    """The run table under its header row ``top``: what each run is, then per figure
    (output tokens/s, TTFT ms, TPOT ms) measured, predicted (a live formula) and |error|.
    Returns each formula cell's value."""
    out: dict[str, Any] = {}
    ws.cell(row=top - 1, column=1, value="Measured runs (predicted: live formulas on the "
            f"'{CALIBRATION_RUNS}' sheet, one scenario row per run, with the profile auto "
            "picks)").font = Font(bold=True)
    for j, text in enumerate(RUN_HEADERS, 1):
        header_cell(ws, top, j, text, "output" if j > 6 else "meta")
    for i, entry in enumerate(runs, top + 1):
        v = entry.run.values
        for j, value in enumerate((entry.run.id, entry.run.model, entry.run.gpu,
                                   v.get("engine"), v.get("mode"), entry.profile), 1):
            write_text(ws.cell(row=i, column=j), value)
        formulas = _prediction_formulas(entry, run_rows[i - top - 1])
        for k, metric in enumerate(("throughput", "ttft", "tpot")):
            if metric in entry.measured:
                out.update(_figure_cells(ws, i, 7 + 3 * k, entry, metric, formulas[metric]))
    return out


def _figure_cells(ws: Any, i: int, first: int, entry: RunPrediction, metric: str,
                  formula: str) -> dict[str, Any]:
    """Measured, predicted and |error| of one figure of the run in row ``i`` from column
    ``first``; returns the formula cells' values."""
    out: dict[str, Any] = {}
    m, p = get_column_letter(first), get_column_letter(first + 1)
    ws.cell(row=i, column=first, value=entry.measured[metric])
    ws.cell(row=i, column=first + 1, value=formula)
    ws.cell(row=i, column=first + 2, value=f"=ABS({p}{i}/{m}{i}-1)")
    out[f"{p}{i}"] = entry.predicted[metric]
    if entry.measured[metric]:
        out[f"{get_column_letter(first + 2)}{i}"] = abs(
            entry.predicted[metric] / entry.measured[metric] - 1)
    for j, fmt in ((first, "#,##0.00"), (first + 1, "#,##0.00"), (first + 2, "0.0%")):
        ws.cell(row=i, column=j).number_format = fmt
    return out


def _run_chart(ws: Any, top: int, end: int) -> None:
    """Predicted against measured on log axes, one series per figure, right of the table."""
    chart = ScatterChart()
    chart.title = "Predicted against measured (log axes)"
    chart.style = 13
    chart.x_axis.title, chart.y_axis.title = "measured", "predicted"
    chart.x_axis.scaling.logBase = 10
    chart.y_axis.scaling.logBase = 10
    chart.x_axis.delete = chart.y_axis.delete = False
    for k, label in enumerate(("output [tokens/s]", "TTFT [ms]", "TPOT [ms]")):
        first = 7 + 3 * k
        series = Series(Reference(ws, min_col=first + 1, min_row=top + 1, max_row=end),
                        Reference(ws, min_col=first, min_row=top + 1, max_row=end),
                        title=label)
        series.marker.symbol = "circle"
        series.graphicalProperties.line.noFill = True
        chart.series.append(series)
    chart.height, chart.width = 12, 18
    ws.add_chart(chart, f"{get_column_letter(len(RUN_HEADERS) + 2)}{top}")


def run_top(n_profiles: int) -> int:
    """Header row of the Calibration sheet's run table below ``n_profiles`` profiles."""
    return PROFILE_TOP + max(n_profiles, 1) + 3
