"""Excel reports that still compute: every output cell is a live formula.

The workbook is built from domain objects (scenarios, models, GPUs) with openpyxl. Output
formulas are rendered from the estimator's own definitions (:mod:`planner.sheet.symbolic`), so
Python and Excel share one definition of every figure; model and GPU figures are fetched from
their sheets with INDEX/MATCH. Only functions Excel and LibreOffice both evaluate are used (IF,
MIN, MAX, INT, INDEX, MATCH, SUMIFS, COUNTIFS). User text (names, notes) never enters a formula:
formulas reference the cells that hold it. Text starting with ``= + - @``, a tab or a carriage
return is written as text (quote prefix), never as a formula.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, ClassVar
from xml.sax.saxutils import escape

import numpy as np
from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference, ScatterChart, Series
from openpyxl.comments import Comment
from openpyxl.formatting.rule import ColorScaleRule, FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.pagebreak import Break

from planner.domain import GpuInfo, ModelInfo, Scenario
from planner.errors import PlannerError
from planner.estimator.figures import model_figures
from planner.estimator.gpu import serving_figures
from planner.estimator.params import lora_dims
from planner.report.fastsheet import (
    ROW,
    TEXT_TRIGGERS,
    Segment,
    Styles,
    cached,
    cell_xml,
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
from planner.report.plan_sheet import write_plan_sheets
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
from planner.sheet.outputs import column_label
from planner.sheet.profiles import INPUT_REPLACED, CalibrationFigures, resolve
from planner.sheet.symbolic import excel, infix, symbolic
from planner.sheet.table import KINDS, evaluate_table, graph, inputs_of
from planner.units import DTYPE_BITS

HEADER_FONT = Font(bold=True, color="FFFFFF")
FILLS = {"meta": "305496", "input": "2F75B5", "output": "548235", "lookup": "7F7F7F"}
RED = PatternFill("solid", start_color="F8CBAD", end_color="F8CBAD")


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
    """Write ``value``; strings that a spreadsheet would read as a formula stay text, and
    characters a workbook cannot hold become U+FFFD."""
    if isinstance(value, str):
        value = xml_safe(value)
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
    ``INDEX(GPU_price_usd_per_hour,MATCH(E2,GpuNames,0))``: what it fetches, in words."""

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
        return f"INDEX(Model_{key},MATCH({name_cell},ModelNames,0))"

    def gpu(self, key: str, name_cell: str) -> str:
        return f"INDEX(GPU_{key},MATCH({name_cell},GpuNames,0))"


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


def header_note(kind: str, key: str) -> str | None:
    """The explain text of a computed column: what it is, its unit and its formula in words
    (rendered from the estimator's own definition, as ``planner explain`` shows it)."""
    g = graph(kind)
    if not g.computes(key) or key not in g.formulas:
        return None
    label, unit = column_label(key)
    doc = (getattr(g.formulas[key], "__doc__", None) or "").strip().split("\n\n")[0]
    text = f"{label}" + (f" [{unit}]" if unit else "") + \
        f"\n= {infix(symbolic(g.formulas[key]))}"
    if doc:
        text += "\n\n" + " ".join(doc.split())
    return text[:2000]


def _note(cell: Any, text: str | None, width: int = 360) -> None:
    if text:
        comment = Comment(xml_safe(text), "planner")
        comment.width, comment.height = width, 160
        cell.comment = comment


def write_scenario_sheet(ws: Any, kind: str, scenarios: Sequence[Scenario], ranges: _Ranges,
                         models: dict[str, ModelInfo], styles: Styles, *,
                         evaluate: Evaluate,
                         lora_dims: dict[tuple[str, str], int] | None = None,
                         progress: Callable[[int], None] | None = None,
                         calibration: CalibrationCells | None = None,
                         gather: Gather | None = None) -> Iterator[str]:
    """Header, formats, validation, print setup and conditional formatting through openpyxl;
    returns the body (inputs as values, outputs as formulas with their cached values) as a
    generator of row-XML chunks of :data:`CHUNK_ROWS` rows for :func:`fastsheet.inject`,
    which evaluates and writes them one chunk at a time. ``gather`` collects the figures the
    Summary needs as the chunks stream.

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
            _note(ws.cell(row=1, column=j), header_note(kind, c.key))
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
                key = columns[j].key
                if role == "formula" and key in overridden:  # one formula per row
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
    print_setup(ws, f"A1:{get_column_letter(len(columns))}{max(last, 2)}", "$1:$1")
    return body()


_META: dict[str, Callable[[Scenario], Any]] = {
    "id": lambda sc: sc.id or None, "fleet": attrgetter("fleet"), "name": attrgetter("name"),
    "model": attrgetter("model"), "gpu": attrgetter("gpu"),
    "version": lambda sc: sc.version or None, "notes": attrgetter("notes"),
    "lora_targets": attrgetter("lora_targets"), "option_of": attrgetter("option_of"),
    "chosen": attrgetter("chosen")}
"""A meta column's value of a scenario, by column key (what its cell shows)."""


def print_setup(ws: Any, area: str, titles: str | None = None) -> None:
    """Landscape, fitted to one page wide (as many tall as it takes), the used range as the
    print area and the header row(s) repeated on every page."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_options.gridLines = False
    ws.page_margins.left = ws.page_margins.right = 0.4
    ws.page_margins.top = ws.page_margins.bottom = 0.5
    ws.print_area = area
    if titles:
        ws.print_title_rows = titles


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


YES_NO = '"yes";"yes";"no"'
"""Number format showing a flag (TRUE = 1, FALSE = 0) as yes or no."""
SUMMARY_KEYS = (
    # header, unit, Scenarios column, number format, formula over {c} (that column's cell)
    ("GPU", "", "gpu", None, "{c}"),
    ("GPUs", "count", "gpus", "#,##0", "{c}"),
    ("fits", "yes/no", "fits", YES_NO, "{c}"),
    ("target rate", "requests/s", "target_requests_per_s", "#,##0.00", "{c}"),
    ("meets target", "", "meets_target_rate", None,
     'IF({t}>0,IF({c},"yes","no"),"no target")'),
    ("cost", "USD/h", "cost_usd_per_hour", '"$"#,##0.00', "{c}"),
    ("cost", "USD/month", "cost_usd_per_month", '"$"#,##0', "{c}"),
    ("cost", "USD/M output tokens", "cost_usd_per_million_output_tokens", '"$"#,##0.000',
     "{c}"),
    ("output", "tokens/s", "throughput_tokens_per_s", "#,##0", "{c}"),
    ("TTFT", "ms", "ttft_s", "#,##0.0", "{c}*MsPerSecond"),
    ("TPOT", "ms", "tpot_s", "#,##0.0", "{c}*MsPerSecond"),
    ("weights", "GiB/GPU", "weights_bytes_per_gpu", "0.00", "{c}/BytesPerGiB"),
    ("KV in use", "GiB/GPU", "kv_in_use_bytes_per_gpu", "0.00",
     "MIN({c},{budget})/BytesPerGiB"),
    ("headroom", "GiB/GPU", "kv_headroom_bytes", "0.00", "MAX({c},0)/BytesPerGiB"),
    ("reserve", "GiB/GPU", "reserve_bytes_per_gpu", "0.00", "{c}/BytesPerGiB"),
)
"""Columns of the Summary's scenario table (after the scenario name)."""
TRAINING_KEYS = (
    ("GPU", "", "gpu", None, "{c}"),
    ("GPUs", "count", "gpus", "#,##0", "{c}"),
    ("fits", "yes/no", "train_fits", YES_NO, "{c}"),
    ("tokens", "tokens", "train_tokens", "#,##0", "{c}"),
    ("GPU-hours", "GPU-h", "gpu_hours", "#,##0", "{c}"),
    ("time", "days", "train_time_s", "#,##0.0", "{c}/SecondsPerDay"),
    ("training cost", "USD", "train_cost_usd", '"$"#,##0', "{c}"),
)
"""Columns of the Summary's training table (after the scenario name)."""
SUMMARY_WIDTH = len(SUMMARY_KEYS) + 1
CONSTANTS = {"BytesPerGiB": 1073741824, "MsPerSecond": 1000, "SecondsPerDay": 86400}
"""Fleet-wide constants the Summary's formulas use by name (defined names on the Summary)."""
CHART_ROWS = 40
"""Most scenarios a Summary chart shows (the first ones; the tables list every one)."""


class Gather:
    """The figures the Summary shows, gathered from the scenario sheets' evaluated chunks as
    they stream (a few columns of every row, not whole rows)."""

    KEYS: ClassVar[dict[str, tuple[str, ...]]] = {
        "inference": ("fits", "gpus", "cost_usd_per_hour", "cost_usd_per_month",
                      "tokens_per_day", "kv_budget_bytes",
                      *(k for _h, _u, k, _f, _t in SUMMARY_KEYS if k != "gpu")),
        "training": ("gpus", "train_cost_usd",
                     *(k for _h, _u, k, _f, _t in TRAINING_KEYS if k != "gpu"))}

    def __init__(self, kind: str, scenarios: Sequence[Scenario]) -> None:
        self.kind = kind
        self.meta = [(sc.fleet, sc.name, sc.gpu) for sc in scenarios]
        self.chosen = [bool(sc.chosen) for sc in scenarios]
        """Counted in totals (:func:`planner.compare.counted`: the chosen option of a group)."""
        self.columns: dict[str, list[Any]] = {k: [] for k in dict.fromkeys(self.KEYS[kind])}

    def add(self, chunk: Sequence[Scenario], values: dict[str, Any]) -> None:
        """Keep the Summary's figures of one evaluated chunk (chunks come in row order)."""
        for key, out in self.columns.items():
            got = values.get(key)
            if got is None and key in inputs_by_name(self.kind):
                got = [sc.inputs[key] for sc in chunk]
            out.extend(np.asarray(got).tolist() if got is not None else [None] * len(chunk))

    def value(self, key: str, i: int) -> Any:
        """Row ``i``'s ``key`` (None if it could not be evaluated, or not yet)."""
        column = self.columns[key]
        return column[i] if i < len(column) else None

    def total(self, key: str, rows: Sequence[int]) -> float:
        """Sum of ``key`` over ``rows`` (as SUMIFS adds: unevaluated rows count 0)."""
        return float(sum(self.value(key, i) or 0 for i in rows))


def inputs_by_name(kind: str) -> set[str]:
    """Names of the input columns of ``kind``."""
    return {c.name for c in inputs_of(kind)}


def _text_criterion(name: str, gpu_rows: dict[str, int]) -> str:
    """A SUMIFS criterion matching the GPU ``name``: a reference to its name cell on the GPUs
    sheet, so no user text is ever spliced into a formula (a quoted literal, its quotes
    doubled, only for a name missing from that sheet)."""
    if name in gpu_rows:
        return f"GPUs!$A${gpu_rows[name]}"
    return '"' + xml_safe(name).replace('"', '""') + '"'


@dataclass(slots=True)
class SummaryInfo:
    """What the Summary's heading and Assumptions block state."""

    fleets: list[str]
    exported: str
    version: str
    gpus: list[GpuInfo]
    """The GPUs the exported scenarios use."""
    engines: dict[str, int]
    hours_per_month: list[float]


class _Rows:
    """Row XML of a sheet written top to bottom (cells given by column number)."""

    def __init__(self, styles: Styles, *, dry: bool = False) -> None:
        self.styles = styles
        self.rows: list[str | Callable[[], Iterator[str]]] = []
        self.row = 0
        self.dry = dry
        """Only count rows (the layout pass: where each part goes)."""

    def add(self, cells: list[tuple[int, str]], height: float | None = None) -> int:
        """Append a row of ``(column, cell XML without its reference)``; returns its number."""
        self.row += 1
        r = self.row
        if self.dry:
            return r
        ht = f' ht="{height}" customHeight="1"' if height else ""
        body = "".join(xml.replace("\x00REF", f"{get_column_letter(j)}{r}")
                       for j, xml in cells)
        self.rows.append(f'<row r="{r}"{ht}>{body}</row>')
        return r

    def skip(self, n: int = 1) -> None:
        """Leave ``n`` empty rows."""
        self.row += n

    def __len__(self) -> int:
        return self.row


def _text_cell(text: str, style: str, styles: Styles) -> str:
    return cell_xml("\x00REF", text, style, styles)


def _value_cell(value: Any, style: str) -> str:
    if isinstance(value, bool):
        return f'<c r="\x00REF" t="b"{style}><v>{int(value)}</v></c>'
    return f'<c r="\x00REF"{style}><v>{value!r}</v></c>'


def _formula_cell(formula: str, value: Any, style: str) -> str:
    t, v = cached(value)
    return f'<c r="\x00REF"{style}{t}><f>{escape(formula)}</f>{v}</c>'


def write_summary(ws: Any, info: SummaryInfo, inference: Gather, training: Gather,
                  styles: Styles, gpu_rows: dict[str, int], training_rows: int
                  ) -> tuple[Iterator[str], int]:
    """The page finance reads, as a generator of row XML run after the scenario sheets have
    streamed (their figures are in ``inference`` and ``training``): a title with the fleets,
    export date and planner version; Assumptions (the GPUs used with their price, whether the
    catalog marks it as an example, and efficiencies; engines; hours per month; conventions);
    a roll-up per fleet (scenarios, not fitting, GPUs, USD/h, USD/month, training cost,
    tokens/day); the inference scenarios (GPU, GPUs, fits, target rate and whether it is met,
    cost per hour and per month, USD per million output tokens, TTFT, TPOT, memory per GPU);
    the training runs (GPU-hours, days, cost); then, after a page break, two charts. Every
    figure is a live formula over the scenario sheets with the planner's value cached; units
    have their own header row. Printed landscape, one page wide."""
    st = styles
    face = "Calibri"
    bold = st.attr(look="bold", font=Font(name=face, bold=True))
    title = st.attr(look="title", font=Font(name=face, bold=True, size=16))
    section = st.attr(look="section", font=Font(name=face, bold=True, size=12, color="305496"))
    head = st.attr(look="head", font=Font(name=face, bold=True, color="FFFFFF"),
                   fill=PatternFill("solid", start_color=FILLS["meta"],
                                    end_color=FILLS["meta"]),
                   alignment=Alignment(horizontal="center", vertical="center", wrap_text=True))
    unit = st.attr(look="unit", font=Font(name=face, italic=True, color="FFFFFF", size=9),
                   fill=PatternFill("solid", start_color="8EA9DB", end_color="8EA9DB"),
                   alignment=Alignment(horizontal="center", wrap_text=True))
    warn = st.attr(look="warn", font=Font(name=face, bold=True, color="C00000"))
    wrap = st.attr(look="wrap", alignment=Alignment(wrap_text=True, vertical="top"))
    def render(decorate: bool) -> _Rows:
        col = letters("inference")
        tcol = letters("training")
        n, m = len(inference.meta), len(training.meta)
        rows = _Rows(st, dry=decorate)
        notes: dict[str, str] = {}

        def fmt(number_format: str | None) -> str:
            return st.attr(number_format)

        def headers(items: Sequence[tuple[str, str]], explain: Sequence[str | None] = ()) -> None:
            r = rows.add([(j, _text_cell(h, head, st)) for j, (h, _u) in enumerate(items, 1)],
                     height=30)
            for j, text in enumerate(explain, 1):
                if text:
                    notes[f"{get_column_letter(j)}{r}"] = text
            rows.add([(j, _text_cell(u, unit, st)) for j, (_h, u) in enumerate(items, 1)],
                 height=24 if any(len(u) > 14 for _h, u in items) else None)

        def rng(key: str, sheet: str = "Scenarios", cols: dict[str, str] = col,
                last: int = n + 1) -> str:
            return f"{sheet}!${cols[key]}$2:${cols[key]}${max(last, 2)}"

        chosen = f"{rng('chosen')},TRUE"  # totals add chosen scenarios only (compare.counted)

        rows.add([(1, _text_cell("LLM capacity and cost report", title, st))], height=24)
        rows.add([(1, _text_cell(
            f"Fleet{'s' if len(info.fleets) != 1 else ''}: {', '.join(info.fleets) or '(none)'}"
            f"   ·   exported {info.exported}   ·   planner {info.version}", bold, st))])
        rows.skip()
        rows.add([(1, _text_cell("Assumptions", section, st))])
        examples = [g.name for g in info.gpus if g.spec.price_is_example]
        if examples:
            rows.add([(1, _text_cell(
                "EXAMPLE PRICES: the prices of " + ", ".join(examples) + " are the catalog's "
                "examples, not quotes; replace them in the GPUs sheet (or planner gpu set) "
                "before using these costs.", warn, st))])
        gpu_items = [("GPU", ""), ("price", "USD/GPU-h"), ("price is", ""),
                     ("matmul efficiency", "fraction"), ("bandwidth efficiency", "fraction"),
                     ("usable memory", "GiB"), ("GPUs in use", "count"), ("cost", "USD/month")]
        headers(gpu_items)
        gl = {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}
        by_gpu: dict[str, list[int]] = {}
        for i, (_f, _n, gpu) in enumerate(inference.meta):
            if inference.chosen[i]:  # totals add chosen scenarios only (compare.counted)
                by_gpu.setdefault(gpu, []).append(i)
        for g in info.gpus:
            gr = gpu_rows.get(g.name)
            serving = serving_figures(g.spec)
            crit = _text_criterion(g.name, gpu_rows)
            cells = [(1, _text_cell(g.name, "", st))]
            if gr is not None:
                cells += [
                    (2, _formula_cell(f"GPUs!{gl['price_usd_per_hour']}{gr}",
                                      g.spec.price_usd_per_hour, fmt('"$"#,##0.00'))),
                    (3, _formula_cell(f'IF(GPUs!{gl["price_is_example"]}{gr},"example","set")',
                                      "example" if g.spec.price_is_example else "set",
                                      warn if g.spec.price_is_example else "")),
                    (4, _formula_cell(f"GPUs!{gl['matmul_efficiency']}{gr}",
                                      serving["gpu_matmul_efficiency_16bit"], fmt("0.00"))),
                    (5, _formula_cell(f"GPUs!{gl['bandwidth_efficiency']}{gr}",
                                      serving["gpu_bandwidth_efficiency"], fmt("0.00"))),
                    (6, _formula_cell(f"GPUs!{gl['usable_memory_gib']}{gr}",
                                      serving["gpu_usable_memory_bytes"] / 2**30, fmt("0.0")))]
            mine = by_gpu.get(g.name, [])
            cells += [(7, _formula_cell(f"SUMIFS({rng('gpus')},{rng('gpu')},{crit},{chosen})",
                                        inference.total("gpus", mine), fmt("#,##0"))),
                      (8, _formula_cell(f"SUMIFS({rng('cost_usd_per_month')},{rng('gpu')},{crit},"
                                        f"{chosen})",
                                        inference.total("cost_usd_per_month", mine),
                                        fmt('"$"#,##0')))]
            rows.add(cells)
        engines = ", ".join(f"{e} ({k} scenario{'s' if k != 1 else ''})"
                            for e, k in sorted(info.engines.items())) or "(none)"
        hours = sorted(set(info.hours_per_month))
        month = (f"{hours[0]:g} hours (every scenario)" if len(hours) == 1 else
                 ", ".join(f"{h:g}" for h in hours) + " hours (per scenario)") if hours else "-"
        for label, text in (
                ("Serving engines", engines),
                ("A month", month),
                ("Conventions", "GiB = 2^30 bytes; cost per month = GPUs × price per GPU-hour × "
                 "hours per month; TTFT and TPOT at each scenario's SLO percentile; 'meets "
                 "target': sustains its target request rate with the GPUs it has; efficiencies: "
                 "the catalog's serving figures (or a calibration profile); every figure is a live "
                 "formula over the Scenarios, Training and GPUs sheets (hover a header for its "
                 "formula; the value shown before recalculation is the planner's).")):
            rows.add([(1, _text_cell(label, bold, st)),
                      (2, _text_cell(text, wrap if label == "Conventions" else "", st))],
                     height=45 if label == "Conventions" else None)
            if decorate:
                ws.merge_cells(start_row=rows.row, start_column=2, end_row=rows.row,
                               end_column=SUMMARY_WIDTH)
        rows.skip()
        rows.add([(1, _text_cell("Fleet roll-up", section, st))])
        headers([("fleet", ""), ("scenarios", "count"), ("not fitting", "count"),
                 ("GPUs", "count"), ("cost", "USD/h"), ("cost", "USD/month"),
                 ("training cost", "USD"), ("output", "tokens/day")],
                [None, None, None, None, None, header_note("inference", "cost_usd_per_month"),
                 header_note("training", "train_cost_usd"), None])
        fleet_all: dict[str, list[int]] = {}
        fleet_index: dict[str, list[int]] = {}  # chosen only: what totals add
        for i, (fleet, _n, _g) in enumerate(inference.meta):
            fleet_all.setdefault(fleet, []).append(i)
            if inference.chosen[i]:
                fleet_index.setdefault(fleet, []).append(i)
        train_index: dict[str, list[int]] = {}
        for i, (fleet, _n, _g) in enumerate(training.meta):
            if training.chosen[i]:
                train_index.setdefault(fleet, []).append(i)
        tchosen = f"{rng('chosen', 'Training', tcol, training_rows + 1)},TRUE"
        trng = lambda key: rng(key, "Training", tcol, training_rows + 1)  # noqa: E731
        for fleet in info.fleets:
            mine = fleet_index.get(fleet, [])
            r = rows.row + 1
            f = f"$A{r}"
            not_fitting = sum(1 for i in mine if inference.value("fits", i) is False)
            rows.add([
                (1, _text_cell(fleet, "", st)),
                (2, _formula_cell(f"COUNTIFS({rng('fleet')},{f})", len(fleet_all.get(fleet, [])),
                                  fmt("#,##0"))),
                (3, _formula_cell(f"COUNTIFS({rng('fleet')},{f},{rng('fits')},FALSE,{chosen})",
                                  not_fitting, fmt("#,##0"))),
                (4, _formula_cell(f"SUMIFS({rng('gpus')},{rng('fleet')},{f},{chosen})",
                                  inference.total("gpus", mine), fmt("#,##0"))),
                (5, _formula_cell(f"SUMIFS({rng('cost_usd_per_hour')},{rng('fleet')},{f},{chosen})",
                                  inference.total("cost_usd_per_hour", mine),
                                  fmt('"$"#,##0.00'))),
                (6, _formula_cell(f"SUMIFS({rng('cost_usd_per_month')},{rng('fleet')},{f},"
                                  f"{chosen})",
                                  inference.total("cost_usd_per_month", mine), fmt('"$"#,##0'))),
                (7, _formula_cell(f"SUMIFS({trng('train_cost_usd')},{trng('fleet')},{f},"
                                  f"{tchosen})",
                                  training.total("train_cost_usd", train_index.get(fleet, [])),
                                  fmt('"$"#,##0'))),
                (8, _formula_cell(f"SUMIFS({rng('tokens_per_day')},{rng('fleet')},{f},{chosen})",
                                  inference.total("tokens_per_day", mine), fmt("#,##0")))])
        rows.skip()
        rows.add([(1, _text_cell("Inference scenarios (red: does not fit)", section, st))])
        headers([("scenario", ""), *((h, u) for h, u, *_r in SUMMARY_KEYS)],
                [None, *(header_note("inference", k) for _h, _u, k, _f, _t in SUMMARY_KEYS)])
        top = rows.row + 1
        plan = []
        for j, (_h, _u, key, number_format, template) in enumerate(SUMMARY_KEYS, 2):
            text = template.format(c=f"Scenarios!{col[key]}2",
                                   t=f"Scenarios!{col['target_requests_per_s']}2",
                                   budget=f"MAX(Scenarios!{col['kv_budget_bytes']}2,0)")
            plan.append((get_column_letter(j), j, escape(text), fmt(number_format), key,
                         template))
        def table() -> Iterator[str]:  # column-wise, a chunk of rows at a time, shared
            for lo in range(0, n, CHUNK_ROWS):
                hi = min(n, lo + CHUNK_ROWS)
                numbers = [str(top + i) for i in range(lo, hi)]
                cells = [value_column("A", numbers, "", [
                    f"{fleet}/{name}" for fleet, name, _g in inference.meta[lo:hi]], st)]
                for letter, j, text, style, key, template in plan:
                    cells.append(formula_column(
                        letter, numbers, style, _summary_column(inference, key, template, lo,
                                                                hi),
                        index=j, first=top, last=top + n - 1, template=text))
                yield rows_xml(numbers, cells)

        if not rows.dry:
            rows.rows.append(table)  # rendered as the body streams, not held whole
        rows.row += n
        end = rows.row
        if n and decorate:
            ws.conditional_formatting.add(
                f"A{top}:{get_column_letter(SUMMARY_WIDTH)}{end}",
                FormulaRule(formula=[f"$D{top}=FALSE"], fill=RED))
        if m:
            rows.skip()
            rows.add([(1, _text_cell("Training runs", section, st))])
            headers([("run", ""), *((h, u) for h, u, *_r in TRAINING_KEYS)],
                    [None, *(header_note("training", k) for _h, _u, k, _f, _t in TRAINING_KEYS)])
            for i, (fleet, name, gpu) in enumerate(training.meta):
                src = str(i + 2)
                cells = [(1, _text_cell(f"{fleet}/{name}", "", st))]
                for j, (_h, _u, key, number_format, template) in enumerate(TRAINING_KEYS, 2):
                    value = (gpu if key == "gpu" else training.value(key, i))
                    if value is not None and "SecondsPerDay" in template:
                        value = value / CONSTANTS["SecondsPerDay"]
                    text = template.format(c=f"Training!{tcol[key]}{src}")
                    cells.append((j, _formula_cell(text, value, fmt(number_format))))
                rows.add(cells)
        last_text = rows.row
        shown = min(n, CHART_ROWS)
        chart_row = last_text + 3
        if shown and decorate:
            ws.row_breaks.append(Break(id=last_text + 1))
            height = 11.0
            memory = BarChart()
            memory.type, memory.grouping, memory.overlap = "bar", "stacked", 100
            memory.title = "Memory per GPU [GiB]" + (f" (first {shown})" if shown < n else "")
            memory.y_axis.title = "GiB"
            for c in range(13, 17):
                series = Series(Reference(ws, min_col=c, min_row=top, max_row=top + shown - 1),
                                title=SUMMARY_KEYS[c - 2][0])
                memory.series.append(series)
            memory.set_categories(Reference(ws, min_col=1, min_row=top, max_row=top + shown - 1))
            memory.height, memory.width = height, 16
            memory.x_axis.delete = memory.y_axis.delete = False
            ws.add_chart(memory, f"A{chart_row}")
            cost = BarChart()
            cost.type = "bar"
            cost.title = "Cost per scenario [USD/month]" + (f" (first {shown})" if shown < n
                                                             else "")
            cost.y_axis.title = "USD/month"
            cost.series.append(Series(Reference(ws, min_col=8, min_row=top,
                                                max_row=top + shown - 1), title="USD/month"))
            cost.set_categories(Reference(ws, min_col=1, min_row=top, max_row=top + shown - 1))
            cost.height, cost.width = height, 16
            cost.x_axis.delete = cost.y_axis.delete = False
            cost.legend = None
            ws.add_chart(cost, f"I{chart_row}")
            last_row = chart_row + 22
        else:
            last_row = last_text
        if not decorate:
            return rows
        for cell, text in notes.items():
            _note(ws[cell], text)
        longest = max((len(f"{f}/{nm}") for f, nm, _g in (*inference.meta, *training.meta)),
                      default=0)
        ws.column_dimensions["A"].width = min(60, max(34, longest + 2))
        for j in range(2, SUMMARY_WIDTH + 1):
            ws.column_dimensions[get_column_letter(j)].width = 12.5
        ws.column_dimensions["B"].width = 14
        print_setup(ws, f"A1:{get_column_letter(SUMMARY_WIDTH)}{last_row}")
        ws.print_options.horizontalCentered = True
        ws.oddFooter.center.text = "&P / &N"
        return rows

    last = len(render(True))

    def body() -> Iterator[str]:
        for part in render(False).rows:
            if callable(part):
                yield from part()
            else:
                yield part

    return body(), last

def _summary_column(gather: Gather, key: str, template: str, lo: int, hi: int) -> Any:
    """The values Python computes for rows ``lo:hi`` of a Summary scenario column (its
    template's formula over the gathered Scenarios figures), as one array."""
    if key == "gpu":
        return np.array([gpu for _f, _n, gpu in gather.meta[lo:hi]], dtype=object)
    raw = gather.columns[key][lo:hi] + [None] * max(0, hi - lo - len(gather.columns[key][lo:hi]))
    if template.startswith("IF("):
        targets = gather.columns["target_requests_per_s"][lo:hi]
        return np.array([None if v is None else ("yes" if v else "no") if (t or 0) > 0
                         else "no target" for v, t in zip(raw, targets, strict=True)],
                        dtype=object)
    if any(v is None for v in raw):
        return np.array(raw, dtype=object)
    if key == "fits":
        return np.array(raw, dtype=bool)
    values = np.array(raw, dtype=float)
    if "MsPerSecond" in template:
        return values * CONSTANTS["MsPerSecond"]
    if template.startswith("MIN("):
        budget = np.array(gather.columns["kv_budget_bytes"][lo:hi], dtype=float)
        return np.minimum(values, np.maximum(budget, 0)) / CONSTANTS["BytesPerGiB"]
    if template.startswith("MAX("):
        return np.maximum(values, 0) / CONSTANTS["BytesPerGiB"]
    if "BytesPerGiB" in template:
        return values / CONSTANTS["BytesPerGiB"]
    if key == "gpus":
        return np.array(raw, dtype=np.int64)
    return values


def write_sweep_chart(ws: Any, sweep: Sweep) -> None:
    """Throughput against the first varied column of a sweep sheet."""
    col = letters("inference")
    x = sweep.varied[0] if sweep.varied else "batch"
    n = len(sweep.rows)
    chart = LineChart()
    chart.title = f"{sweep.title}: output throughput against {x}"
    chart.y_axis.title, chart.x_axis.title = "tokens/s", x
    tput = _col_index(col["throughput_tokens_per_s"])
    chart.add_data(Reference(ws, min_col=tput, min_row=1, max_row=n + 1), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=_col_index(col[x]) if x in col else 1,
                                   min_row=2, max_row=n + 1))
    ws.add_chart(chart, "H" + str(n + 4))


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
        rows = write_scenario_sheet(ws, "inference", sweep.rows, ranges, by_name, styles,
                                    evaluate=evaluate, calibration=cells)
        bodies[ws.title] = (rows, len(sweep.rows) + 1, width["inference"])
        write_sweep_chart(ws, sweep)
    if cells.rows or predictions:
        calibration_ws = wb.create_sheet("Calibration")
        if predictions:
            ws = wb.create_sheet(CALIBRATION_RUNS)
            rows = write_scenario_sheet(ws, "inference", run_scenarios(predictions), ranges,
                                        by_name, styles, evaluate=evaluate, calibration=cells)
            bodies[ws.title] = (rows, len(predictions) + 1, width["inference"])
        cached_values["Calibration"] = write_calibration(
            calibration_ws, cells, predictions, list(range(2, len(predictions) + 2)))
    plan_bodies = write_plan_sheets(wb, plans, styles)
    for title, (_rows, n_rows, n_cols) in plan_bodies.items():  # printed like every sheet
        print_setup(wb[title], f"A1:{get_column_letter(max(n_cols, 1))}{max(n_rows, 1)}",
                    titles="1:3")
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
                        if "hours_per_month" in s.inputs])
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
