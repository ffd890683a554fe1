"""The scenario sheets (Scenarios, Training, each sweep's sheet and Calibration runs): header,
formats, validation and conditional formats through openpyxl, and the body, every input as a
value and every output and derived input as a live formula rendered from the estimator's own
definition (:mod:`planner.compute.symbolic`) with the value Python computed as its cache, written
as row XML a chunk at a time (:mod:`planner.io.xlsx.sheetxml`). User text never enters a
formula: formulas reference the cells that hold it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
from openpyxl.formatting.rule import ColorScaleRule, FormulaRule
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from planner.compute.profiles import CalibrationFigures
from planner.compute.symbolic import excel, symbolic
from planner.compute.table import KINDS, evaluate_table, graph, inputs_of
from planner.core.errors import PlannerError
from planner.io.xlsx.layout import (
    input_column,
    letters,
    scenario_columns,
)
from planner.io.xlsx.lookups import Ranges, catalog_formula
from planner.io.xlsx.sheetxml import (
    ROW,
    Segment,
    Styles,
    formula_column,
    formula_template,
    formula_xml,
    rows_xml,
    value_column,
)
from planner.io.xlsx.style import (
    RED,
    col_index,
    header_cell,
    header_note,
    note,
    print_setup,
)
from planner.io.xlsx.summary_columns import YES_NO, Gather
from planner.spec.domain import GpuInfo, ModelInfo, Scenario

if TYPE_CHECKING:
    from planner.io.xlsx.calibration import CalibrationCells


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
        return _row_by_row(run, kind, rows)

    return evaluate


def _row_by_row(run: Callable[[str, Sequence[Scenario]], dict[str, Any]], kind: str,
                rows: Sequence[Scenario]) -> dict[str, Any]:
    """A chunk with an invalid row evaluated a row at a time: every column an object array
    of the rows' values, ``None`` for a row that cannot be evaluated."""
    single: list[dict[str, Any] | None] = []
    for sc in rows:
        try:
            single.append(run(kind, [sc]))
        except (PlannerError, KeyError):
            single.append(None)
    keys = next((list(v) for v in single if v is not None), [])
    return {k: np.array([v[k][0] if v is not None else None for v in single],
                        dtype=object) for k in keys}


Plan = list[tuple[str, str, str, str]]
"""A scenario sheet's columns as written: (letter, role, key or formula template, style)."""


def write_scenario_sheet(ws: Any, kind: str, scenarios: Sequence[Scenario], ranges: Ranges,
                         models: dict[str, ModelInfo], styles: Styles, *,
                         evaluate: Evaluate,
                         lora_dims: dict[tuple[str, str], int] | None = None,
                         progress: Callable[[int], None] | None = None,
                         calibration: CalibrationCells | None = None,
                         gather: Gather | None = None,
                         block: Sequence[tuple[str, str]] = (),
                         only: frozenset[str] | None = None) -> Iterator[str]:
    """Header, formats, validation, print setup and conditional formatting through openpyxl;
    returns the body (inputs as values, outputs as formulas with their cached values) as a
    generator of row-XML chunks of :data:`CHUNK_ROWS` rows for :func:`sheetxml.save`,
    which evaluates and writes them one chunk at a time. ``gather`` collects the figures the
    Summary needs as the chunks stream. ``block``: (column letter, column key) of extra
    columns right of the sheet's own, each a reference to the row's cell of that column (a
    sweep's key figures, :mod:`planner.io.xlsx.sweep`).

    With ``calibration``, the rows whose ``calibration`` input picks a profile get per-row
    formulas in the columns that profile changes (see :class:`CalibrationCells`).

    With ``only``, the computed columns outside it are left empty and hidden: the layout (and
    so every formula's references) stays the full sheet's, and the formulas written are those
    ``only`` needs (the Calibration runs sheet keeps the chain of its predictions)."""
    columns = scenario_columns(kind)
    picked, overridden = _calibration_picks(calibration, kind, scenarios)
    _write_headers(ws, kind, columns)
    plan = _column_plan(kind, ranges, styles, only)
    plan += _block_plan(ws, kind, styles, block)
    body = _Body(kind, scenarios, plan, [c.key for c in columns] + [k for _l, k in block],
                 {c.key: c.kind for c in columns}, styles, ranges, evaluate, lora_dims or {},
                 picked, overridden, calibration, gather, progress)
    _format_sheet(ws, kind, len(scenarios) + 1, len(models))
    for letter, role, _payload, _style in plan:
        if role == "omitted":
            ws.column_dimensions[letter].hidden = True
    return body.chunks()


def _calibration_picks(calibration: CalibrationCells | None, kind: str,
                       scenarios: Sequence[Scenario]
                       ) -> tuple[list[CalibrationFigures | None], frozenset[str]]:
    """The calibration profile each row picks (``None`` for none) and the columns the
    profiles change (none when no row picks one)."""
    picked: list[CalibrationFigures | None] = (
        [calibration.pick(sc) for sc in scenarios]
        if calibration is not None and kind == "inference" else [None] * len(scenarios))
    overridden = (calibration.columns(kind) if calibration is not None and any(picked)
                  else frozenset())
    return picked, overridden


def _write_headers(ws: Any, kind: str, columns: Sequence[Any]) -> None:
    """The header row of the sheet's own columns, each output's with its note."""
    for j, c in enumerate(columns, 1):
        header_cell(ws, 1, j, c.header, c.role)
        if c.role == "output":
            note(ws.cell(row=1, column=j), header_note(kind, c.key))


def _column_plan(kind: str, ranges: Ranges, styles: Styles,
                 only: frozenset[str] | None = None) -> Plan:
    """The sheet's own columns: a computed column (an output or a derived input) its one
    definition rendered as a formula template (``omitted`` when ``only`` leaves it out), a
    catalog lookup its INDEX/MATCH formula, every other column its key (a value written as it
    is)."""
    col = letters(kind)
    g = graph(kind)
    plan: Plan = []
    for j, c in enumerate(scenario_columns(kind), 1):
        letter = get_column_letter(j)
        style = styles.attr(c.number_format if c.role != "meta" else None)
        if g.computes(c.key) and only is not None and c.key not in only:
            plan.append((letter, "omitted", c.key, style))
        elif g.computes(c.key):
            text = "=" + excel(symbolic(g.formula(c.key)), lambda name: f"{col[name]}{ROW}")
            plan.append((letter, "formula", formula_template(text), style))
        elif c.role == "lookup" and c.key != "model_lora_dims":
            text = catalog_formula(c.key, {"model": f"{col['model']}{ROW}",
                                           "gpu": f"{col['gpu']}{ROW}",
                                           "decode_gpu": f"{col.get('decode_gpu')}{ROW}",
                                           "spec_draft_model": f"{col.get('spec_draft_model')}"
                                                               f"{ROW}"}, ranges)
            plan.append((letter, "formula", formula_template(text), style))
        else:
            plan.append((letter, c.role if c.key != "model_lora_dims" else "dims", c.key,
                         style))
    return plan


def _block_plan(ws: Any, kind: str, styles: Styles, block: Sequence[tuple[str, str]]) -> Plan:
    """The key-figure block's columns (headers written here): references to the row's own
    cells, never a calibrated formula."""
    col = letters(kind)
    by_key = {c.key: c for c in scenario_columns(kind)}
    plan: Plan = []
    for letter, key in block:
        header_cell(ws, 1, col_index(letter), by_key[key].header, "output")
        shown = (None if by_key[key].role == "meta" else
                 YES_NO if by_key[key].unit == "bool" else by_key[key].number_format)
        plan.append((letter, "reference", formula_template(f"={col[key]}{ROW}"),
                     styles.attr(shown)))
    return plan


@dataclass(slots=True)
class _Body:
    """A scenario sheet's body, rendered a chunk of :data:`CHUNK_ROWS` rows at a time: each
    chunk evaluated once (:data:`Evaluate`), gathered for the Summary, and written column-wise
    (:func:`sheetxml.rows_xml`)."""

    kind: str
    scenarios: Sequence[Scenario]
    plan: Plan
    keys: list[str]
    kinds: dict[str, str]
    styles: Styles
    ranges: Ranges
    evaluate: Evaluate
    lora_dims: dict[tuple[str, str], int]
    picked: list[CalibrationFigures | None]
    overridden: frozenset[str]
    calibration: CalibrationCells | None
    gather: Gather | None
    progress: Callable[[int], None] | None

    def chunks(self) -> Iterator[str]:
        """Row XML, one string per chunk."""
        n = len(self.scenarios)
        for lo in range(0, n, CHUNK_ROWS):
            chunk = self.scenarios[lo:lo + CHUNK_ROWS]
            rows = [str(lo + 2 + i) for i in range(len(chunk))]
            values = self.evaluate(self.kind, chunk)
            if self.gather is not None:
                self.gather.add(chunk, values)
            cells = [self._column(j, entry, lo, chunk, rows, values)
                     for j, entry in enumerate(self.plan)]
            yield rows_xml(rows, cells)
            if self.progress:
                self.progress(len(chunk))

    def _column(self, j: int, entry: tuple[str, str, str, str], lo: int,
                chunk: Sequence[Scenario], rows: list[str], values: dict[str, Any]
                ) -> list[Segment]:
        """One column's cells of a chunk, by its role in the plan."""
        letter, role, payload, style = entry
        if role == "omitted":
            return []
        if role in ("reference", "formula"):
            return self._formula(j, entry, lo, chunk, rows, values)
        return value_column(letter, rows, style, self._values(role, payload, chunk),
                            self.styles)

    def _formula(self, j: int, entry: tuple[str, str, str, str], lo: int,
                 chunk: Sequence[Scenario], rows: list[str], values: dict[str, Any]
                 ) -> list[Segment]:
        """A reference or formula column's cells of a chunk (a calibrated one per row)."""
        letter, role, payload, style = entry
        key = self.keys[j]
        last = len(self.scenarios) + 1
        if role == "reference":
            return formula_column(letter, rows, style, _block_values(key, values, chunk),
                                  index=j, first=2, last=last, template=payload)
        if key in self.overridden:
            return self._calibrated(letter, key, payload, style, lo, rows, values.get(key))
        got = values.get(key)
        return formula_column(
            letter, rows, style,
            got if got is not None else np.full(len(rows), None, dtype=object),
            index=j, first=2, last=last, template=payload)

    def _values(self, role: str, payload: str, chunk: Sequence[Scenario]) -> list[Any]:
        """A value column's values for a chunk: a meta field, an input (a flag as a bool)
        or the LoRA dimensions of the row's model and targets."""
        if role == "meta":
            return list(map(_META[payload], chunk))
        if role == "input":
            vals = list(map(itemgetter(payload), (sc.inputs for sc in chunk)))
            if self.kinds[payload] == "bool":
                vals = [bool(v) for v in vals]
            return vals
        return [self.lora_dims.get((sc.model, sc.lora_targets), 0) for sc in chunk]

    def _calibrated(self, letter: str, key: str, template: str, style: str, lo: int,
                    rows: list[str], got: Any) -> list[Segment]:
        """A column a calibration profile changes: one formula per row, the picked profile's
        (:meth:`CalibrationCells.template`) or the column's own."""
        cells = []
        for i, r in enumerate(rows):
            profile = self.picked[lo + i]
            text = (self.calibration.template(self.kind, key, profile, self.ranges)
                    if profile is not None and self.calibration is not None else template)
            cells.append(formula_xml(f"{letter}{r}", text, int(r), style,
                                     got[i] if got is not None else None))
        return [cells]


def _format_sheet(ws: Any, kind: str, last: int, n_models: int) -> None:
    """Frozen panes, filter, widths, validation lists and ranges, the conditional formats
    (a row that does not fit in red; KV headroom as a colour scale) and the print setup of a
    scenario sheet whose last row is ``last``."""
    columns = scenario_columns(kind)
    col = letters(kind)
    width = get_column_letter(len(columns))
    ws.freeze_panes = "D2"
    ws.auto_filter.ref = f"A1:{width}{max(last, 2)}"
    for j, c in enumerate(columns, 1):
        ws.column_dimensions[get_column_letter(j)].width = max(10, min(28, len(c.header) + 2))
    ws.row_dimensions[1].height = 48  # headers wrap to at most three lines: units stay seen
    _validations(ws, kind, col, last, n_models)
    if last >= 2:
        fits = col["fits" if kind == "inference" else "train_fits"]
        ws.conditional_formatting.add(f"A2:{width}{last}",
                                      FormulaRule(formula=[f"${fits}2=FALSE"], fill=RED))
    if kind == "inference" and last >= 2:
        head = col["kv_headroom_bytes"]
        ws.conditional_formatting.add(
            f"{head}2:{head}{last}",
            ColorScaleRule(start_type="num", start_value=0, start_color="F8696B",
                           mid_type="percentile", mid_value=50, mid_color="FFEB84",
                           end_type="max", end_color="63BE7B"))
    # 282 columns print nowhere legibly: the sheet prints what each row is (id to notes); its
    # figures print on the Summary (a sweep prints its key block instead: sweep)
    print_setup(ws, f"A1:{col['notes']}{max(last, 2)}", "$1:$1")


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


def _validations(ws: Any, kind: str, col: dict[str, str], last: int, n_models: int) -> None:
    """The drop-down lists (model, GPU, each choice input), then the allowed range of each
    bounded number input, over the first ``max(last, 1000)`` rows."""
    rows = max(last, 1000)
    _list_validations(ws, kind, col, rows)
    _range_validations(ws, kind, col, rows)


def _list_validations(ws: Any, kind: str, col: dict[str, str], rows: int) -> None:
    """A drop-down list for the model, the GPU and each choice input, to row ``rows``."""
    specs = [("model", "=ModelNames"), ("gpu", "=GpuNames")]
    specs += [(c.name, '"' + ",".join(c.choices) + '"') for c in inputs_of(kind)
              if c.kind == "choice"]
    for key, formula in specs:
        dv = DataValidation(type="list", formula1=formula, allow_blank=False,
                            showErrorMessage=True, errorTitle=f"Invalid {key}",
                            error=f"Choose a {key} from the list.")
        dv.add(f"{col[key]}2:{col[key]}{rows}")
        ws.add_data_validation(dv)


def _range_validations(ws: Any, kind: str, col: dict[str, str], rows: int) -> None:
    """The allowed range of each number input with both bounds, to row ``rows``."""
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
