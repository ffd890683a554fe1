"""Excel reports that still compute: every output cell is a live formula.

The workbook is built from domain objects (scenarios, models, GPUs) with openpyxl. Output
formulas are rendered from the estimator's own definitions (:mod:`planner.sheet.symbolic`), so
Python and Excel share one definition of every figure; model and GPU figures are fetched from
their sheets with INDEX/MATCH. Only functions Excel and LibreOffice both evaluate are used (IF,
MIN, MAX, INT, INDEX, MATCH, SUBSTITUTE, EXACT, SUM, SUMPRODUCT). User text (names, notes)
never enters a formula: formulas reference the cells that hold it, and compare it as a name,
never as a pattern (MATCH's wildcards escaped, totals by EXACT). The Summary, Plan and sweep
print blocks have modules of their own (summary_sheet, plan_sheet, sweep_sheet). Text starting
with ``= + - @``, a tab or a carriage return is written as text (quote prefix), never as a
formula.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from openpyxl import Workbook
from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.formatting.rule import ColorScaleRule, FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from planner.domain import GpuInfo, ModelInfo, Scenario
from planner.errors import PlannerError
from planner.estimator.figures import model_figures
from planner.estimator.params import lora_dims
from planner.report.fastsheet import (
    ROW,
    TEXT_TRIGGERS,
    Segment,
    Styles,
    formula_column,
    formula_template,
    formula_xml,
    inject,
    rows_xml,
    value_column,
    xml_safe,
)
from planner.report.layout import (
    GPU_FIGURE_SOURCE,
    GPU_SHEET,
    MODEL_FIGURES,
    MODEL_META,
    SCENARIO_SHEETS,
    gpu_sheet_record,
    input_column,
    letters,
    scenario_columns,
)
from planner.report.plan_sheet import CatalogPrice, write_plan_sheets
from planner.report.sheetkit import FILLS, HEADER_FONT, RED, header_note, note, print_setup
from planner.report.summary_columns import CONSTANTS, SUMMARY_WIDTH, YES_NO, Gather
from planner.report.summary_sheet import SummaryInfo, write_summary
from planner.report.sweep_sheet import key_block, sweep_print
from planner.report.textcells import ooxml_text
from planner.sheet.calibration import (
    FINITE_MODES,
    PARAMETERS,
    Run,
    RunPrediction,
    predict_runs,
    run_row,
)
from planner.sheet.harness import finite_run_factor_formula, finite_run_ttft_formula
from planner.sheet.inputs import input_columns
from planner.sheet.profiles import INPUT_REPLACED, CalibrationFigures, resolve
from planner.sheet.symbolic import excel, symbolic
from planner.sheet.table import KINDS, evaluate_table, graph, inputs_of
from planner.units import DTYPE_BITS


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


def write_text(cell: Any, value: Any) -> None:
    """Write ``value``; strings that a spreadsheet would read as a formula stay text,
    characters a workbook cannot hold become U+FFFD, and text that looks like an OOXML escape
    is escaped (:func:`planner.report.textcells.ooxml_text`), so it reads back as written."""
    if isinstance(value, str):
        value = ooxml_text(xml_safe(value))
    cell.value = value
    if isinstance(value, str) and value.startswith(TEXT_TRIGGERS):
        cell.data_type = "s"
        cell.quotePrefix = True


def _header(ws: Any, row: int, col: int, text: str, role: str) -> None:
    cell = ws.cell(row=row, column=col)
    write_text(cell, text)
    cell.font = HEADER_FONT
    cell.fill = PatternFill("solid", start_color=FILLS.get(role, "305496"),
                            end_color=FILLS.get(role, "305496"))
    cell.alignment = Alignment(wrap_text=True, vertical="top")


class _Ranges:
    """The lookup tables' columns as defined names, shared by every formula: ``GPU_<column>``
    (a column of the GPUs sheet), ``Model_<column>`` (of the Models sheet), matched by name
    against ``GpuNames`` and ``ModelNames``. A catalog lookup then reads
    ``INDEX(GPU_price_usd_per_hour,MATCH(E2,GpuNames,0))``: what it fetches, in words, with
    the name's wildcards escaped (:func:`literal`), so a name is matched as written."""

    def __init__(self, models: int, gpus: int) -> None:
        self.model_last = models + 1
        self.gpu_last = gpus + 1
        self.gpu_letters = {key: get_column_letter(i) for i, (key, *_rest) in
                            enumerate(GPU_SHEET, 1)}
        self.model_letters = {key: get_column_letter(i) for i, key in
                              enumerate((*MODEL_META, *MODEL_FIGURES), 1)}

    def names(self) -> dict[str, str]:
        """Every defined name → the absolute range it stands for."""
        out = {f"GPU_{key}": f"GPUs!${c}$2:${c}${max(self.gpu_last, 2)}"
               for key, c in self.gpu_letters.items() if key != "name"}
        out.update({f"Model_{key}": f"Models!${c}$2:${c}${max(self.model_last, 2)}"
                    for key, c in self.model_letters.items() if key != "name"})
        out["ModelNames"] = f"Models!$A$2:$A${max(self.model_last, 2)}"
        out["GpuNames"] = f"GPUs!$A$2:$A${max(self.gpu_last, 2)}"
        return out

    def model(self, key: str, name_cell: str) -> str:
        return f"INDEX(Model_{key},MATCH({literal(name_cell)},ModelNames,0))"

    def gpu(self, key: str, name_cell: str) -> str:
        return f"INDEX(GPU_{key},MATCH({literal(name_cell)},GpuNames,0))"


def literal(cell: str) -> str:
    """The text of ``cell`` as a MATCH lookup value that matches itself only: MATCH(…, 0)
    reads ``*``, ``?`` and ``~`` as wildcards, so a GPU named ``h*`` would fetch the first GPU
    starting with h; each is escaped with ``~`` (``~`` first). Issue 28."""
    return f'SUBSTITUTE(SUBSTITUTE(SUBSTITUTE({cell},"~","~~"),"*","~*"),"?","~?")'


def _catalog_formula(key: str, name_cell: dict[str, str], ranges: _Ranges) -> str:
    """The INDEX/MATCH formula fetching a model or GPU figure from its catalog sheet."""
    if key in MODEL_FIGURES:
        return "=" + ranges.model(key, name_cell["model"])
    return "=" + ranges.gpu(GPU_FIGURE_SOURCE[key], name_cell["gpu"])


CHUNK_ROWS = 2000
"""Scenario rows evaluated and written at a time: memory holds one chunk's cell text."""

Evaluate = Callable[[str, Sequence[Scenario]], dict[str, Any]]
"""(kind, scenarios) → every column's value for those rows (see :func:`evaluator`)."""


def evaluator(models: Sequence[ModelInfo], gpus: Sequence[GpuInfo],
              profiles: Sequence[CalibrationFigures] = ()) -> Evaluate:
    """Evaluates scenario rows with the planner's vectorized path (:func:`evaluate_table`),
    returning every column a scenario sheet shows (inputs, outputs, derived inputs, model and
    GPU figures), so each formula cell is written with the value Python computed. A chunk with
    an invalid row is evaluated row by row; an invalid row gets no cached values (None)."""
    model_specs = {m.name: m.spec for m in models}
    gpu_specs = {g.name: g.spec for g in gpus}

    def table(kind: str, rows: Sequence[Scenario]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": np.array([sc.model for sc in rows], dtype=object),
            "gpu": np.array([sc.gpu for sc in rows], dtype=object),
            "lora_targets": np.array([sc.lora_targets for sc in rows], dtype=object)}
        inputs = [sc.inputs for sc in rows]
        for column in inputs_of(kind):
            out[column.name] = np.array(list(map(itemgetter(column.name), inputs)),
                                        dtype=object if column.kind in ("choice", "text")
                                        else None)
        return out

    def run(kind: str, rows: Sequence[Scenario]) -> dict[str, Any]:
        return evaluate_table(table(kind, rows), model_specs, gpu_specs, kind,
                              labels=[f"{sc.fleet}/{sc.name}" for sc in rows],
                              profiles=profiles if kind == "inference" else None)

    flags = {k: [c.key for c in scenario_columns(k) if c.unit == "bool"] for k in KINDS}

    def evaluate(kind: str, rows: Sequence[Scenario]) -> dict[str, Any]:
        if not rows:
            return {}
        try:
            values = dict(run(kind, rows))
        except (PlannerError, KeyError):
            pass
        else:  # flags computed as 0/1 are written as the TRUE/FALSE their formulas yield
            for key in flags[kind]:
                if key in values and np.asarray(values[key]).dtype != object:
                    values[key] = np.asarray(values[key]).astype(bool)
            return values
        single: list[dict[str, Any] | None] = []
        for sc in rows:
            try:
                single.append(run(kind, [sc]))
            except (PlannerError, KeyError):
                single.append(None)
        keys = next((list(v) for v in single if v is not None), [])
        return {k: np.array([v[k][0] if v is not None else None for v in single],
                            dtype=object) for k in keys}

    return evaluate


def write_scenario_sheet(ws: Any, kind: str, scenarios: Sequence[Scenario], ranges: _Ranges,
                         models: dict[str, ModelInfo], styles: Styles, *,
                         evaluate: Evaluate,
                         lora_dims: dict[tuple[str, str], int] | None = None,
                         progress: Callable[[int], None] | None = None,
                         calibration: CalibrationCells | None = None,
                         gather: Gather | None = None,
                         block: Sequence[tuple[str, str]] = ()) -> Iterator[str]:
    """Header, formats, validation, print setup and conditional formatting through openpyxl;
    returns the body (inputs as values, outputs as formulas with their cached values) as a
    generator of row-XML chunks of :data:`CHUNK_ROWS` rows for :func:`fastsheet.inject`,
    which evaluates and writes them one chunk at a time. ``gather`` collects the figures the
    Summary needs as the chunks stream. ``block``: (column letter, column key) of extra
    columns right of the sheet's own, each a reference to the row's cell of that column (a
    sweep's key figures, :mod:`planner.report.sweep_sheet`).

    With ``calibration``, the rows whose ``calibration`` input picks a profile get per-row
    formulas in the columns that profile changes (see :class:`CalibrationCells`)."""
    columns = scenario_columns(kind)
    col = letters(kind)
    g = graph(kind)
    picked = ([calibration.pick(sc) for sc in scenarios] if calibration is not None
              and kind == "inference" else [None] * len(scenarios))
    overridden = (calibration.columns(kind) if calibration is not None and any(picked)
                  else frozenset())
    for j, c in enumerate(columns, 1):
        _header(ws, 1, j, c.header, c.role)
        if c.role == "output":
            note(ws.cell(row=1, column=j), header_note(kind, c.key))
    plan: list[tuple[str, str, str, str]] = []  # (letter, role, key or template, style)
    for j, c in enumerate(columns, 1):
        letter = get_column_letter(j)
        style = styles.attr(c.number_format if c.role != "meta" else None)
        if g.computes(c.key):  # an output or a derived input: its one definition, rendered
            text = "=" + excel(symbolic(g.formula(c.key)), lambda name: f"{col[name]}{ROW}")
            plan.append((letter, "formula", formula_template(text), style))
        elif c.role == "lookup" and c.key != "model_lora_dims":
            text = _catalog_formula(c.key, {"model": f"{col['model']}{ROW}",
                                            "gpu": f"{col['gpu']}{ROW}"}, ranges)
            plan.append((letter, "formula", formula_template(text), style))
        else:
            plan.append((letter, c.role if c.key != "model_lora_dims" else "dims", c.key,
                         style))
    by_key = {c.key: c for c in columns}
    for letter, key in block:  # references to the row's own cells: never a calibrated formula
        _header(ws, 1, _col_index(letter), by_key[key].header, "output")
        shown = (None if by_key[key].role == "meta" else
                 YES_NO if by_key[key].unit == "bool" else by_key[key].number_format)
        plan.append((letter, "reference", formula_template(f"={col[key]}{ROW}"),
                     styles.attr(shown)))
    keys = [c.key for c in columns] + [key for _letter, key in block]
    kinds = {c.key: c.kind for c in columns}
    n = len(scenarios)
    first, last_row = 2, n + 1

    def body() -> Iterator[str]:
        for lo in range(0, n, CHUNK_ROWS):
            chunk = scenarios[lo:lo + CHUNK_ROWS]
            rows = [str(lo + 2 + i) for i in range(len(chunk))]
            values = evaluate(kind, chunk)
            if gather is not None:
                gather.add(chunk, values)
            inputs = [sc.inputs for sc in chunk]
            cells: list[list[Segment]] = []
            for j, (letter, role, payload, style) in enumerate(plan):
                key = keys[j]
                if role == "reference":
                    cells.append(formula_column(
                        letter, rows, style, _block_values(key, values, chunk),
                        index=j, first=first, last=last_row, template=payload))
                elif role == "formula" and key in overridden:  # one formula per row
                    got = values.get(key)
                    cells.append([[formula_xml(
                        f"{letter}{r}",
                        calibration.template(kind, key, picked[lo + i], ranges)  # type: ignore
                        if picked[lo + i] is not None else payload, int(r), style,
                        got[i] if got is not None else None)
                        for i, r in enumerate(rows)]])
                elif role == "formula":
                    got = values.get(key)
                    cells.append(formula_column(
                        letter, rows, style,
                        got if got is not None else np.full(len(rows), None, dtype=object),
                        index=j, first=first, last=last_row, template=payload))
                elif role == "meta":
                    vals = list(map(_META[payload], chunk))
                    cells.append(value_column(letter, rows, style, vals, styles))
                elif role == "input":
                    vals = list(map(itemgetter(payload), inputs))
                    if kinds[payload] == "bool":
                        vals = [bool(v) for v in vals]
                    cells.append(value_column(letter, rows, style, vals, styles))
                else:
                    vals = [(lora_dims or {}).get((sc.model, sc.lora_targets), 0)
                            for sc in chunk]
                    cells.append(value_column(letter, rows, style, vals, styles))
            yield rows_xml(rows, cells)
            if progress:
                progress(len(chunk))

    last = len(scenarios) + 1
    ws.freeze_panes = "D2"
    ws.auto_filter.ref = f"A1:{get_column_letter(len(columns))}{max(last, 2)}"
    for j, c in enumerate(columns, 1):
        ws.column_dimensions[get_column_letter(j)].width = max(10, min(28, len(c.header) + 2))
    ws.row_dimensions[1].height = 48  # headers wrap to at most three lines: units stay seen
    _validations(ws, kind, col, last, len(models))
    if kind == "inference" and last >= 2:
        fits = col["fits"]
        ws.conditional_formatting.add(
            f"A2:{get_column_letter(len(columns))}{last}",
            FormulaRule(formula=[f"${fits}2=FALSE"], fill=RED))
        head = col["kv_headroom_bytes"]
        ws.conditional_formatting.add(
            f"{head}2:{head}{last}",
            ColorScaleRule(start_type="num", start_value=0, start_color="F8696B",
                           mid_type="percentile", mid_value=50, mid_color="FFEB84",
                           end_type="max", end_color="63BE7B"))
    if kind == "training" and last >= 2:
        fits = col["train_fits"]
        ws.conditional_formatting.add(
            f"A2:{get_column_letter(len(columns))}{last}",
            FormulaRule(formula=[f"${fits}2=FALSE"], fill=RED))
    # 282 columns print nowhere legibly: the sheet prints what each row is (id to notes); its
    # figures print on the Summary (a sweep prints its key block instead: sweep_sheet)
    print_setup(ws, f"A1:{col['notes']}{max(last, 2)}", "$1:$1")
    return body()


def _block_values(key: str, values: dict[str, Any], chunk: Sequence[Scenario]) -> Any:
    """The values of column ``key`` for a chunk's rows (evaluated, or its meta or inputs)."""
    got = values.get(key)
    if got is not None:
        return got
    if key in _META:
        return np.array([_META[key](sc) for sc in chunk], dtype=object)
    return np.array([sc.inputs.get(key) for sc in chunk], dtype=object)


_META: dict[str, Callable[[Scenario], Any]] = {
    "id": lambda sc: sc.id or None, "fleet": attrgetter("fleet"), "name": attrgetter("name"),
    "model": attrgetter("model"), "gpu": attrgetter("gpu"),
    "version": lambda sc: sc.version or None, "notes": attrgetter("notes"),
    "lora_targets": attrgetter("lora_targets"), "option_of": attrgetter("option_of"),
    "chosen": attrgetter("chosen")}
"""A meta column's value of a scenario, by column key (what its cell shows)."""


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
                    excel(symbolic(g.formula(c.key)), lambda n, seen=names: seen.add(n) or n)
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

    def template(self, kind: str, key: str, profile: CalibrationFigures, ranges: _Ranges
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


def _validations(ws: Any, kind: str, col: dict[str, str], last: int, n_models: int) -> None:
    rows = max(last, 1000)
    specs = [("model", "=ModelNames"), ("gpu", "=GpuNames")]
    specs += [(c.name, '"' + ",".join(c.choices) + '"') for c in inputs_of(kind)
              if c.kind == "choice"]
    for key, formula in specs:
        dv = DataValidation(type="list", formula1=formula, allow_blank=False,
                            showErrorMessage=True, errorTitle=f"Invalid {key}",
                            error=f"Choose a {key} from the list.")
        dv.add(f"{col[key]}2:{col[key]}{rows}")
        ws.add_data_validation(dv)
    for c in scenario_columns(kind):
        if c.role != "input" or c.kind not in ("int", "float"):
            continue
        spec = input_column(kind, c.key)
        if spec is None or spec.minimum is None or spec.maximum is None:
            continue
        dv = DataValidation(type="whole" if spec.kind == "int" else "decimal",
                            operator="between", formula1=str(spec.minimum),
                            formula2=str(spec.maximum), showErrorMessage=True,
                            errorTitle=f"Invalid {spec.name}",
                            error=f"{spec.name} must be {spec.allowed()}.")
        dv.add(f"{col[c.key]}2:{col[c.key]}{rows}")
        ws.add_data_validation(dv)


def write_models(ws: Any, models: Sequence[ModelInfo]) -> None:
    """One row per model: config fields, parameter counts, and the figures scenarios use."""
    for j, key in enumerate((*MODEL_META, *MODEL_FIGURES), 1):
        _header(ws, 1, j, key, "meta" if key in MODEL_META else "lookup")
    for i, m in enumerate(models, 2):
        attn = m.spec.attention
        meta = {"name": m.name, "model_type": m.model_type, "source": m.source,
                "hidden_size": m.spec.hidden_size, "layers": m.spec.num_layers,
                "attention_heads": attn.num_heads, "kv_heads": attn.kv_cache_heads,
                "head_dim": attn.head_dim, "vocab_size": m.spec.vocab_size,
                "params_total": m.params_total, "params_active": m.params_active}
        figures = model_figures(m.spec).as_dict()
        for j, key in enumerate((*MODEL_META, *MODEL_FIGURES), 1):
            cell = ws.cell(row=i, column=j)
            write_text(cell, meta[key] if key in meta else figures[key])
            if isinstance(cell.value, int) and not isinstance(cell.value, bool):
                cell.number_format = "#,##0"
    ws.freeze_panes = "B2"
    for j in range(1, len(MODEL_META) + len(MODEL_FIGURES) + 1):
        ws.column_dimensions[get_column_letter(j)].width = 16
    print_setup(ws, f"A1:{get_column_letter(len(MODEL_META) + len(MODEL_FIGURES))}"
                f"{len(models) + 1}", "$1:$1")


def write_gpus(ws: Any, gpus: Sequence[GpuInfo]) -> dict[str, Any]:
    """One row per GPU: editable datasheet figures (GiB, TFLOP/s, GB/s, USD) and the base-unit
    columns scenarios look up, computed from them; returns each formula cell's value
    (``{column}*factor`` of the figure it reads; an empty figure reads as 0)."""
    out: dict[str, Any] = {}
    letter = {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}
    for j, (_key, header, kind, _fmt) in enumerate(GPU_SHEET, 1):
        _header(ws, 1, j, header, "input" if kind == "value" else "lookup")
    for i, g in enumerate(gpus, 2):
        record = gpu_sheet_record(g.spec, g.version)
        for j, (key, _header_text, kind, fmt) in enumerate(GPU_SHEET, 1):
            cell = ws.cell(row=i, column=j)
            if kind == "value":
                value = record.get(key)
                write_text(cell, value if value not in (None, "") or key in ("vendor", "label",
                                                                              "source") else None)
            else:
                cell.value = kind.format(**{k: f"{v}{i}" for k, v in letter.items()})
                source, factor = kind.removeprefix("={").split("}*")
                figure = record.get(source)
                out[cell.coordinate] = float(figure or 0) * float(factor)
            if fmt:
                cell.number_format = fmt
    ws.freeze_panes = "B2"
    for j in range(1, len(GPU_SHEET) + 1):
        ws.column_dimensions[get_column_letter(j)].width = 18
    print_setup(ws, f"A1:{get_column_letter(len(GPU_SHEET))}{len(gpus) + 1}", "$1:$1")
    return out


def write_lists(ws: Any) -> None:
    """Lookup tables: dtype → bits."""
    _header(ws, 1, 1, "dtype", "meta")
    _header(ws, 1, 2, "bits", "meta")
    for i, (name, bits) in enumerate(DTYPE_BITS.items(), 2):
        ws.cell(row=i, column=1, value=name)
        ws.cell(row=i, column=2, value=bits)
    print_setup(ws, f"A1:B{len(DTYPE_BITS) + 1}", "$1:$1")


def _col_index(letter: str) -> int:
    from openpyxl.utils import column_index_from_string

    return column_index_from_string(letter)


RUN_HEADERS = ("run", "model", "gpu", "engine", "mode", "profile",
               "measured output [tokens/s]", "predicted output [tokens/s]",
               "throughput |error| [fraction]",
               "measured TTFT mean [ms]", "predicted TTFT mean [ms]", "TTFT |error| [fraction]",
               "measured TPOT mean [ms]", "predicted TPOT mean [ms]", "TPOT |error| [fraction]")
"""Columns of the Calibration sheet's run table."""
CALIBRATION_RUNS = "Calibration runs"
"""The sheet holding one scenario row per measured run: the live formulas the Calibration
sheet's predicted figures read."""


def run_scenarios(predictions: Sequence[RunPrediction]) -> list[Scenario]:
    """One inference scenario per listed run: the inputs the fit scores it with
    (:func:`planner.sheet.calibration.run_row`: per-request token means, TP/PP/GPUs, dtypes,
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


def _prediction_formulas(entry: RunPrediction, r: int) -> dict[str, str]:
    """Live formulas of one run's predicted figures (tokens/s; ms), reading its row ``r`` of
    the Calibration runs sheet, scored as the fit scores it: ``offline`` on the saturation
    rate, ``single`` as output tokens / mean end-to-end latency, the other modes on the
    output rate at the run's load, a closed loop of known request count times its finite-run
    factor (:func:`planner.sheet.harness.finite_run_factor_formula`) and its mean TTFT with
    the first wave (:func:`planner.sheet.harness.finite_run_ttft_formula`); TTFT and TPOT
    means in ms."""
    col = letters("inference")
    sheet = f"'{CALIBRATION_RUNS}'!"

    def ref(key: str) -> str:
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
    out: dict[str, Any] = {}
    bold = Font(bold=True)
    ws.cell(row=1, column=1, value="Calibration profiles (fitted parameters; scenario "
            "sheets read these cells)").font = bold
    for j, header in enumerate(PROFILE_HEADERS, 1):
        _header(ws, PROFILE_TOP, j, header, "input" if j > 3 else "meta")
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
    top = run_top(len(cells.rows))
    ws.cell(row=top - 1, column=1, value="Measured runs (predicted: live formulas on the "
            f"'{CALIBRATION_RUNS}' sheet, one scenario row per run, with the profile auto "
            "picks)").font = bold
    for j, header in enumerate(RUN_HEADERS, 1):
        _header(ws, top, j, header, "output" if j > 6 else "meta")
    for i, entry in enumerate(runs, top + 1):
        v = entry.run.values
        for j, value in enumerate((entry.run.id, entry.run.model, entry.run.gpu,
                                   v.get("engine"), v.get("mode"), entry.profile), 1):
            write_text(ws.cell(row=i, column=j), value)
        formulas = _prediction_formulas(entry, run_rows[i - top - 1])
        for k, metric in enumerate(("throughput", "ttft", "tpot")):
            first = 7 + 3 * k
            if metric not in entry.measured:
                continue
            m, p = get_column_letter(first), get_column_letter(first + 1)
            ws.cell(row=i, column=first, value=entry.measured[metric])
            ws.cell(row=i, column=first + 1, value=formulas[metric])
            ws.cell(row=i, column=first + 2, value=f"=ABS({p}{i}/{m}{i}-1)")
            out[f"{p}{i}"] = entry.predicted[metric]
            if entry.measured[metric]:
                out[f"{get_column_letter(first + 2)}{i}"] = abs(
                    entry.predicted[metric] / entry.measured[metric] - 1)
            for j, fmt in ((first, "#,##0.00"), (first + 1, "#,##0.00"), (first + 2, "0.0%")):
                ws.cell(row=i, column=j).number_format = fmt
    if runs:
        end = top + len(runs)
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
    ws.column_dimensions["A"].width = 22
    for j in range(2, len(RUN_HEADERS) + 1):
        ws.column_dimensions[get_column_letter(j)].width = 16
    ws.freeze_panes = f"A{top + 1}"
    print_setup(ws, f"A1:{get_column_letter(len(RUN_HEADERS) + 12)}{max(top + len(runs), 30)}")
    return out


def run_top(n_profiles: int) -> int:
    """Header row of the Calibration sheet's run table below ``n_profiles`` profiles."""
    return PROFILE_TOP + max(n_profiles, 1) + 3


@dataclass(slots=True)
class Built:
    """A workbook and the fast-written sheet bodies to splice in when it is saved."""

    workbook: Workbook
    bodies: dict[str, tuple[Iterator[str], int, int]]
    cached: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Sheet → cell → the value of a formula openpyxl wrote (spliced in as its cache)."""


def build_workbook(scenarios: Sequence[Scenario], models: Sequence[ModelInfo],
                   gpus: Sequence[GpuInfo], *, sweeps: Sequence[Sweep] = (),
                   progress: Callable[[int], None] | None = None,
                   profiles: Sequence[CalibrationFigures] = (),
                   runs: Sequence[Run] = (), plans: Sequence[Any] = ()) -> Built:
    """The whole report (saved by :func:`save_workbook`). ``profiles``: the calibration
    profiles scenarios may pick (their figures reach the formulas through the Calibration
    sheet); ``runs``: measured runs, of which those on an exported scenario's GPU and engine
    are listed on the Calibration sheet."""
    wb = Workbook()
    styles = Styles(wb)
    summary = wb.active
    summary.title = "Summary"
    ranges = _Ranges(len(models), len(gpus))
    by_name = {m.name: m for m in models}
    inference = [s for s in scenarios if s.kind == "inference"]
    training = [s for s in scenarios if s.kind == "training"]
    bodies: dict[str, tuple[Iterator[str], int, int]] = {}
    width = {k: len(scenario_columns(k)) for k in SCENARIO_SHEETS}
    cells = CalibrationCells(profiles)
    evaluate = evaluator(models, gpus, profiles)
    gathered = {"inference": Gather("inference", inference),
                "training": Gather("training", training)}
    cached_values: dict[str, dict[str, Any]] = {}
    pairs = {(s.gpu.lower(), str(s.inputs.get("engine"))) for s in inference}
    shown = [r for r in runs if (r.gpu.lower(), str(r.values.get("engine"))) in pairs]
    predictions = predict_runs(shown, {m.name: m.spec for m in models},
                               {g.name: g.spec for g in gpus}, profiles) if shown else []
    for entry in predictions:  # list the profile each run is predicted with
        picked = resolve("auto", entry.run.gpu, str(entry.run.values.get("engine")), profiles)
        if picked is not None:
            cells.add(picked)
    rows = write_scenario_sheet(wb.create_sheet(SCENARIO_SHEETS["inference"]), "inference",
                                inference, ranges, by_name, styles, evaluate=evaluate,
                                progress=progress, calibration=cells,
                                gather=gathered["inference"])
    bodies["Scenarios"] = (rows, len(inference) + 1, width["inference"])
    dims = {(s.model, s.lora_targets): lora_dims(by_name[s.model].spec, s.lora_targets)
            for s in training if s.inputs.get("lora_rank")}
    rows = write_scenario_sheet(wb.create_sheet(SCENARIO_SHEETS["training"]), "training",
                                training, ranges, by_name, styles, evaluate=evaluate,
                                lora_dims=dims, progress=progress, gather=gathered["training"])
    bodies["Training"] = (rows, len(training) + 1, width["training"])
    write_models(wb.create_sheet("Models"), models)
    cached_values["GPUs"] = write_gpus(wb.create_sheet("GPUs"), gpus)
    write_lists(wb.create_sheet("Lists"))
    for k, sweep in enumerate(sweeps, 1):
        ws = wb.create_sheet(f"Sweep {k}")
        block = key_block(sweep.varied)
        rows = write_scenario_sheet(ws, "inference", sweep.rows, ranges, by_name, styles,
                                    evaluate=evaluate, calibration=cells, block=block)
        bodies[ws.title] = (rows, len(sweep.rows) + 1, width["inference"] + 1 + len(block))
        sweep_print(ws, sweep.title, sweep.varied, len(sweep.rows))
    if cells.rows or predictions:
        calibration_ws = wb.create_sheet("Calibration")
        if predictions:
            ws = wb.create_sheet(CALIBRATION_RUNS)
            rows = write_scenario_sheet(ws, "inference", run_scenarios(predictions), ranges,
                                        by_name, styles, evaluate=evaluate, calibration=cells)
            bodies[ws.title] = (rows, len(predictions) + 1, width["inference"])
        cached_values["Calibration"] = write_calibration(
            calibration_ws, cells, predictions, list(range(2, len(predictions) + 2)))
    price_col = get_column_letter(next(j for j, (key, *_r) in enumerate(GPU_SHEET, 1)
                                       if key == "price_usd_per_hour"))
    plan_bodies, plan_lines = write_plan_sheets(wb, plans, styles, {
        g.name: CatalogPrice(g.spec.price_usd_per_hour, f"GPUs!${price_col}${row}")
        for row, g in enumerate(gpus, 2)})
    bodies.update(plan_bodies)
    fleets = sorted({s.fleet for s in scenarios})
    used = {s.gpu for s in scenarios}
    engines: dict[str, int] = {}
    for s in inference:
        engine = str(s.inputs.get("engine"))
        engines[engine] = engines.get(engine, 0) + 1
    info = SummaryInfo(fleets, datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                       _version(), [g for g in gpus if g.name in used], engines,
                       [float(s.inputs["hours_per_month"]) for s in inference
                        if "hours_per_month" in s.inputs], plan_lines)
    body, last = write_summary(summary, info, gathered["inference"], gathered["training"],
                               styles, {g.name: row for row, g in enumerate(gpus, 2)},
                               len(training))
    bodies["Summary"] = (body, last, SUMMARY_WIDTH)
    styles.close()
    for name, target in ranges.names().items():
        wb.defined_names[name] = DefinedName(name, attr_text=target)
    for name, value in CONSTANTS.items():
        wb.defined_names[name] = DefinedName(name, attr_text=str(value))
    wb.calculation.fullCalcOnLoad = True
    return Built(wb, bodies, cached_values)


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
        built.workbook.save(tmp)
        inject(tmp, built.bodies, built.cached)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PlannerError(f"cannot write {path}: {exc.strerror or exc}") from exc
