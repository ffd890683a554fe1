"""Excel reports that still compute: every output cell is a live formula.

The workbook is built from domain objects (scenarios, models, GPUs) with openpyxl. Output
formulas are rendered from the estimator's own definitions (:mod:`planner.compute.symbolic`), so
Python and Excel share one definition of every figure; model and GPU figures are fetched from
their sheets with INDEX/MATCH. Only functions Excel and LibreOffice both evaluate are used (IF,
MIN, MAX, INT, INDEX, MATCH, SUBSTITUTE, EXACT, SUM, SUMPRODUCT). User text (names, notes)
never enters a formula: formulas reference the cells that hold it, and compare it as a name,
never as a pattern (MATCH's wildcards escaped, totals by EXACT). The Summary, Plan, Frontier
and sweep print blocks have modules of their own (summary, plan, frontier, sweep); so do the
scenario sheets (scenarios), Calibration (calibration) and the catalog sheets (catalog_sheets).
Text starting with ``= + - @``, a tab or a carriage return is written as text (quote prefix),
never as a formula.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName

from planner.compute.calibration import (
    Run,
    RunPrediction,
    predict_runs,
)
from planner.compute.profiles import CalibrationFigures, resolve
from planner.core.errors import PlannerError
from planner.io.xlsx.calibration import (
    CALIBRATION_RUNS,
    CalibrationCells,
    prediction_columns,
    run_scenarios,
    write_calibration,
)
from planner.io.xlsx.catalog_sheets import write_gpus, write_lists, write_models
from planner.io.xlsx.frontier import SHEET as FRONTIER_SHEET
from planner.io.xlsx.frontier import write_frontier
from planner.io.xlsx.layout import (
    GPU_SHEET,
    SCENARIO_SHEETS,
    scenario_columns,
)
from planner.io.xlsx.lookups import Ranges
from planner.io.xlsx.plan import CatalogPrice, PlanLine, write_plan_sheets
from planner.io.xlsx.scenarios import evaluator, write_scenario_sheet
from planner.io.xlsx.sheetxml import (
    Styles,
    save,
)
from planner.io.xlsx.summary import SummaryInfo, write_summary
from planner.io.xlsx.summary_columns import CONSTANTS, SUMMARY_WIDTH, Gather
from planner.io.xlsx.sweep import key_block, sweep_print
from planner.spec.domain import GpuInfo, ModelInfo, Scenario
from planner.spec.params import lora_dims


@dataclass(slots=True)
class Sweep:
    """A sweep to include: the base scenario and its varied rows (full scenario rows)."""

    title: str
    varied: list[str]
    rows: list[Scenario]


@dataclass(slots=True)
class ExportReport:
    """What an export wrote."""

    path: Path
    scenarios: int
    training: int
    models: int
    gpus: int
    sweeps: int = 0
    sheets: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Built:
    """A workbook and the generated sheet bodies its one save streams into it
    (:func:`planner.io.xlsx.sheetxml.save`)."""

    workbook: Workbook
    bodies: Bodies
    cached: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Sheet → cell → the value of a formula openpyxl wrote (written as its cache)."""


Bodies = dict[str, tuple[Iterable[str], int, int]]
"""Sheet title → (its row-XML chunks, last row, last column), streamed in at save."""


@dataclass(slots=True)
class _Context:
    """What every sheet writer of one export shares."""

    wb: Workbook
    styles: Styles
    ranges: Ranges
    by_name: dict[str, ModelInfo]
    evaluate: Any
    cells: CalibrationCells
    progress: Callable[[int], None] | None
    bodies: Bodies = field(default_factory=dict)
    cached: dict[str, dict[str, Any]] = field(default_factory=dict)


def build_workbook(scenarios: Sequence[Scenario], models: Sequence[ModelInfo],
                   gpus: Sequence[GpuInfo], *, sweeps: Sequence[Sweep] = (),
                   progress: Callable[[int], None] | None = None,
                   profiles: Sequence[CalibrationFigures] = (),
                   runs: Sequence[Run] = (), plans: Sequence[Any] = (),
                   frontiers: Sequence[tuple[str, Any]] = ()) -> Built:
    """The whole report (saved by :func:`save_workbook`). ``profiles``: the calibration
    profiles scenarios may pick (their figures reach the formulas through the Calibration
    sheet); ``runs``: measured runs, of which those on an exported scenario's GPU and engine
    are listed on the Calibration sheet; ``frontiers``: (title, frontier) pairs, each a
    Frontier sheet (:mod:`.frontier`)."""
    wb = Workbook()
    styles = Styles(wb)
    summary = wb.worksheets[0]
    summary.title = "Summary"
    ranges = Ranges(len(models), len(gpus))
    inference = [s for s in scenarios if s.kind == "inference"]
    training = [s for s in scenarios if s.kind == "training"]
    ctx = _Context(wb, styles, ranges, {m.name: m for m in models},
                   evaluator(models, gpus, profiles), CalibrationCells(profiles), progress)
    gathered = {"inference": Gather("inference", inference),
                "training": Gather("training", training)}
    predictions = _predictions(inference, models, gpus, profiles, runs, ctx.cells)
    _scenario_sheets(ctx, inference, training, gathered)
    write_models(wb.create_sheet("Models"), models)
    ctx.cached["GPUs"] = write_gpus(wb.create_sheet("GPUs"), gpus)
    write_lists(wb.create_sheet("Lists"))
    _sweep_sheets(ctx, sweeps)
    _frontier_sheets(ctx, frontiers)
    _calibration_sheets(ctx, predictions)
    plan_lines = _plan_sheets(ctx, plans, gpus)
    info = _summary_info(scenarios, inference, gpus, plan_lines)
    body, last = write_summary(summary, info, gathered["inference"], gathered["training"],
                               styles, {g.name: row for row, g in enumerate(gpus, 2)},
                               len(training))
    ctx.bodies["Summary"] = (body, last, SUMMARY_WIDTH)
    styles.close()
    _defined_names(wb, ranges)
    wb.calculation.fullCalcOnLoad = True
    return Built(wb, ctx.bodies, ctx.cached)


def _frontier_sheets(ctx: _Context, frontiers: Sequence[tuple[str, Any]]) -> None:
    """A Frontier sheet per (title, frontier) pair (numbered when there are several)."""
    for k, (title, result) in enumerate(frontiers, 1):
        ws = ctx.wb.create_sheet(FRONTIER_SHEET if len(frontiers) == 1
                                 else f"{FRONTIER_SHEET} {k}")
        ctx.cached[ws.title] = write_frontier(ws, title, result)


def _plan_sheets(ctx: _Context, plans: Sequence[Any],
                 gpus: Sequence[GpuInfo]) -> list[PlanLine]:
    """The Plan sheets (their bodies streamed at save), each GPU's catalog price a reference
    to its GPUs sheet cell; returns the plan lines the Summary shows."""
    price_col = get_column_letter(next(j for j, (key, *_r) in enumerate(GPU_SHEET, 1)
                                       if key == "price_usd_per_hour"))
    plan_bodies, plan_lines = write_plan_sheets(ctx.wb, plans, ctx.styles, {
        g.name: CatalogPrice(g.spec.price_usd_per_hour, f"GPUs!${price_col}${row}")
        for row, g in enumerate(gpus, 2)})
    ctx.bodies.update(plan_bodies)
    return plan_lines


def _defined_names(wb: Workbook, ranges: Ranges) -> None:
    """The workbook's defined names: the catalog ranges the formulas read and the planner's
    constants."""
    for name, target in ranges.names().items():
        wb.defined_names[name] = DefinedName(name, attr_text=target)
    for name, value in CONSTANTS.items():
        wb.defined_names[name] = DefinedName(name, attr_text=str(value))


def _predictions(inference: Sequence[Scenario], models: Sequence[ModelInfo],
                 gpus: Sequence[GpuInfo], profiles: Sequence[CalibrationFigures],
                 runs: Sequence[Run], cells: CalibrationCells) -> list[RunPrediction]:
    """The measured runs on an exported scenario's GPU and engine, predicted as the fit
    predicts them; the profile each run is predicted with is listed in ``cells``."""
    pairs = {(s.gpu.lower(), str(s.inputs.get("engine"))) for s in inference}
    shown = [r for r in runs if (r.gpu.lower(), str(r.values.get("engine"))) in pairs]
    predictions = predict_runs(shown, {m.name: m.spec for m in models},
                               {g.name: g.spec for g in gpus}, profiles) if shown else []
    for entry in predictions:
        picked = resolve("auto", entry.run.gpu, str(entry.run.values.get("engine")), profiles)
        if picked is not None:
            cells.add(picked)
    return predictions


def _scenario_sheets(ctx: _Context, inference: Sequence[Scenario],
                     training: Sequence[Scenario], gathered: dict[str, Gather]) -> None:
    """The Scenarios and Training sheets (their bodies streamed at save)."""
    rows = write_scenario_sheet(ctx.wb.create_sheet(SCENARIO_SHEETS["inference"]), "inference",
                                inference, ctx.ranges, ctx.by_name, ctx.styles,
                                evaluate=ctx.evaluate, progress=ctx.progress,
                                calibration=ctx.cells, gather=gathered["inference"])
    ctx.bodies["Scenarios"] = (rows, len(inference) + 1, len(scenario_columns("inference")))
    dims = {(s.model, s.lora_targets): lora_dims(ctx.by_name[s.model].spec, s.lora_targets)
            for s in training if s.inputs.get("lora_rank")}
    rows = write_scenario_sheet(ctx.wb.create_sheet(SCENARIO_SHEETS["training"]), "training",
                                training, ctx.ranges, ctx.by_name, ctx.styles,
                                evaluate=ctx.evaluate, lora_dims=dims, progress=ctx.progress,
                                gather=gathered["training"])
    ctx.bodies["Training"] = (rows, len(training) + 1, len(scenario_columns("training")))


def _sweep_sheets(ctx: _Context, sweeps: Sequence[Sweep]) -> None:
    """One ``Sweep k`` sheet per sweep: its rows as a scenario sheet, with its key block."""
    width = len(scenario_columns("inference"))
    for k, sweep in enumerate(sweeps, 1):
        ws = ctx.wb.create_sheet(f"Sweep {k}")
        block = key_block(sweep.varied)
        rows = write_scenario_sheet(ws, "inference", sweep.rows, ctx.ranges, ctx.by_name,
                                    ctx.styles, evaluate=ctx.evaluate, calibration=ctx.cells,
                                    block=block)
        ctx.bodies[ws.title] = (rows, len(sweep.rows) + 1, width + 1 + len(block))
        sweep_print(ws, sweep.title, sweep.varied, len(sweep.rows))


def _calibration_sheets(ctx: _Context, predictions: Sequence[RunPrediction]) -> None:
    """Calibration (when a scenario picks a profile or a run is listed) and Calibration runs
    (one scenario row per listed run: the predictions' live formulas, the columns that do not
    lead to a prediction empty and hidden, :func:`prediction_columns`)."""
    if not (ctx.cells.rows or predictions):
        return
    calibration_ws = ctx.wb.create_sheet("Calibration")
    if predictions:
        ws = ctx.wb.create_sheet(CALIBRATION_RUNS)
        rows = write_scenario_sheet(ws, "inference", run_scenarios(predictions), ctx.ranges,
                                    ctx.by_name, ctx.styles, evaluate=ctx.evaluate,
                                    calibration=ctx.cells, only=prediction_columns())
        ctx.bodies[ws.title] = (rows, len(predictions) + 1, len(scenario_columns("inference")))
    ctx.cached["Calibration"] = write_calibration(
        calibration_ws, ctx.cells, predictions, list(range(2, len(predictions) + 2)))


def _summary_info(scenarios: Sequence[Scenario], inference: Sequence[Scenario],
                  gpus: Sequence[GpuInfo], plan_lines: Any) -> SummaryInfo:
    """The Summary's title and assumptions: fleets, export time (UTC), planner version, the
    GPUs in use (a disaggregated scenario's decode GPU too), scenarios per engine, hours per
    month and the plans' lines."""
    used = _gpus_used(scenarios, inference)
    return SummaryInfo(sorted({s.fleet for s in scenarios}),
                       datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                       _version(), [g for g in gpus if g.name in used],
                       _engine_counts(inference),
                       [float(s.inputs["hours_per_month"]) for s in inference
                        if "hours_per_month" in s.inputs], plan_lines)


def _gpus_used(scenarios: Sequence[Scenario], inference: Sequence[Scenario]) -> set[str]:
    """The names of the GPUs the scenarios run on, a disaggregated one's decode GPU too."""
    used = {s.gpu for s in scenarios}
    # a disaggregated deployment's decode pool runs on its decode GPU (issue 25)
    used |= {str(s.inputs.get("decode_gpu")) for s in inference
             if s.inputs.get("serving_mode") == "disaggregated"
             and s.inputs.get("decode_gpu") not in (None, "", "same")}
    return used


def _engine_counts(inference: Sequence[Scenario]) -> dict[str, int]:
    """How many inference scenarios run on each engine, in order of first use."""
    engines: dict[str, int] = {}
    for s in inference:
        engine = str(s.inputs.get("engine"))
        engines[engine] = engines.get(engine, 0) + 1
    return engines


def _version() -> str:
    """The installed planner's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("planner")
    except PackageNotFoundError:
        return "unknown"


def save_workbook(built: Built, path: Path, *, force: bool = False) -> None:
    """Save atomically (a temporary file renamed into place); refuse to overwrite without
    ``force``; a clear error for an unwritable path."""
    path = Path(path)
    if path.suffix.lower() != ".xlsx":
        raise PlannerError(f"{path}: the report must be an .xlsx file")
    if path.exists() and not force:
        raise PlannerError(f"{path} exists; pass --force to overwrite it")
    if not path.parent.exists():
        raise PlannerError(f"cannot write {path}: folder {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        save(built.workbook, tmp, built.bodies, built.cached)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PlannerError(f"cannot write {path}: {exc.strerror or exc}") from exc


def save_frontier(title: str, result: Any, path: Path) -> None:
    """A workbook holding the Frontier sheet alone
    (:func:`~planner.io.xlsx.frontier.write_frontier`), saved atomically as the report is
    (:func:`save_workbook`); ``path`` was checked by the caller. Here, not in the frontier
    module: this module imports that one."""
    wb = Workbook()
    ws = wb.worksheets[0]
    ws.title = FRONTIER_SHEET
    cached = write_frontier(ws, title, result)
    save_workbook(Built(wb, {}, {FRONTIER_SHEET: cached}), path, force=True)
