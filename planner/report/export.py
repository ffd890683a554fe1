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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference, ScatterChart, Series
from openpyxl.formatting.rule import ColorScaleRule, FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from planner.catalog import gpu_record
from planner.domain import GpuInfo, ModelInfo, Scenario
from planner.errors import PlannerError
from planner.estimator.figures import model_figures
from planner.estimator.gpu import serving_figures
from planner.estimator.params import lora_dims
from planner.report.fastsheet import (
    ROW,
    TEXT_TRIGGERS,
    Styles,
    cell_xml,
    formula_template,
    formula_xml,
    inject,
    row_xml,
    shared_formula_xml,
    xml_safe,
)
from planner.report.layout import (
    GPU_FIGURE_SOURCE,
    GPU_SHEET,
    MODEL_FIGURES,
    MODEL_META,
    SCENARIO_SHEETS,
    input_column,
    letters,
    scenario_columns,
)
from planner.sheet.calibration import PARAMETERS, Run, RunPrediction, predict_runs
from planner.sheet.inputs import input_columns
from planner.sheet.profiles import INPUT_REPLACED, CalibrationFigures, resolve
from planner.sheet.symbolic import excel, symbolic
from planner.sheet.table import graph, inputs_of
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
    """Absolute ranges of the lookup tables, shared by every formula."""

    def __init__(self, models: int, gpus: int) -> None:
        self.model_last = models + 1
        self.gpu_last = gpus + 1
        self.gpu_letters = {key: get_column_letter(i) for i, (key, *_rest) in
                            enumerate(GPU_SHEET, 1)}
        self.model_letters = {key: get_column_letter(i) for i, key in
                              enumerate((*MODEL_META, *MODEL_FIGURES), 1)}

    def model(self, key: str, name_cell: str) -> str:
        col = self.model_letters[key]
        return (f"INDEX(Models!${col}$2:${col}${self.model_last},"
                f"MATCH({name_cell},Models!$A$2:$A${self.model_last},0))")

    def gpu(self, key: str, name_cell: str) -> str:
        col = self.gpu_letters[key]
        return (f"INDEX(GPUs!${col}$2:${col}${self.gpu_last},"
                f"MATCH({name_cell},GPUs!$A$2:$A${self.gpu_last},0))")


def _catalog_formula(key: str, name_cell: dict[str, str], ranges: _Ranges) -> str:
    """The INDEX/MATCH formula fetching a model or GPU figure from its catalog sheet."""
    if key in MODEL_FIGURES:
        return "=" + ranges.model(key, name_cell["model"])
    return "=" + ranges.gpu(GPU_FIGURE_SOURCE[key], name_cell["gpu"])


def write_scenario_sheet(ws: Any, kind: str, scenarios: Sequence[Scenario], ranges: _Ranges,
                         models: dict[str, ModelInfo], styles: Styles, *,
                         lora_dims: dict[tuple[str, str], int] | None = None,
                         progress: Callable[[int], None] | None = None,
                         calibration: CalibrationCells | None = None) -> list[str]:
    """Header, formats, validation and conditional formatting through openpyxl; returns the
    body rows (inputs as values, outputs as formulas) as XML for :func:`fastsheet.inject`.

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
    rows: list[str] = []
    for i, sc in enumerate(scenarios):
        r = i + 2
        meta = {"id": sc.id or None, "fleet": sc.fleet, "name": sc.name, "model": sc.model,
                "gpu": sc.gpu, "version": sc.version or None, "notes": sc.notes,
                "lora_targets": sc.lora_targets, "option_of": sc.option_of,
                "chosen": sc.chosen}
        cells = []
        for j, (letter, role, payload, style) in enumerate(plan):
            ref = f"{letter}{r}"
            key = columns[j].key
            if role == "formula" and key in overridden:  # one formula per row, not shared
                profile = picked[i]
                template = (calibration.template(kind, key, profile, ranges)  # type: ignore
                            if profile is not None else payload)
                cells.append(formula_xml(ref, template, r, style))
            elif role == "formula":
                cells.append(shared_formula_xml(ref, payload, r, style, j, 2,
                                                len(scenarios) + 1))
            elif role == "meta":
                cells.append(cell_xml(ref, meta[payload], style, styles))
            elif role == "input":
                value = sc.inputs[payload]
                cells.append(cell_xml(ref, bool(value) if kinds[payload] == "bool" else value,
                                      style, styles))
            else:
                cells.append(cell_xml(ref, (lora_dims or {}).get((sc.model, sc.lora_targets),
                                                                  0), style, styles))
        rows.append(row_xml(r, cells))
        if progress:
            progress(1)
    last = len(scenarios) + 1
    ws.freeze_panes = "D2"
    ws.auto_filter.ref = f"A1:{get_column_letter(len(columns))}{max(last, 2)}"
    for j, c in enumerate(columns, 1):
        ws.column_dimensions[get_column_letter(j)].width = max(10, min(28, len(c.header) + 2))
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
    return rows


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


def write_gpus(ws: Any, gpus: Sequence[GpuInfo]) -> None:
    """One row per GPU: editable datasheet figures (GiB, TFLOP/s, GB/s, USD) and the base-unit
    columns scenarios look up, computed from them."""
    letter = {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}
    for j, (_key, header, kind, _fmt) in enumerate(GPU_SHEET, 1):
        _header(ws, 1, j, header, "input" if kind == "value" else "lookup")
    for i, g in enumerate(gpus, 2):
        serving = serving_figures(g.spec)
        record = {"name": g.name, **gpu_record(g.spec),
                  "usable_memory_gib": serving["gpu_usable_memory_bytes"] / 2**30,
                  "matmul_efficiency": serving["gpu_matmul_efficiency_16bit"],
                  "matmul_efficiency_8bit": serving["gpu_matmul_efficiency_8bit"],
                  "bandwidth_efficiency": serving["gpu_bandwidth_efficiency"],
                  "interconnect_gb_per_s": serving["gpu_interconnect_bytes_per_s"] / 1e9,
                  "runtime_context_gib": serving["gpu_runtime_context_bytes"] / 2**30}
        for j, (key, _header_text, kind, fmt) in enumerate(GPU_SHEET, 1):
            cell = ws.cell(row=i, column=j)
            if kind == "value":
                value = record.get(key)
                write_text(cell, value if value not in (None, "") or key in ("vendor", "label",
                                                                              "source") else None)
            else:
                cell.value = kind.format(**{k: f"{v}{i}" for k, v in letter.items()})
            if fmt:
                cell.number_format = fmt
    ws.freeze_panes = "B2"
    for j in range(1, len(GPU_SHEET) + 1):
        ws.column_dimensions[get_column_letter(j)].width = 18


def write_lists(ws: Any) -> None:
    """Lookup tables: dtype → bits."""
    _header(ws, 1, 1, "dtype", "meta")
    _header(ws, 1, 2, "bits", "meta")
    for i, (name, bits) in enumerate(DTYPE_BITS.items(), 2):
        ws.cell(row=i, column=1, value=name)
        ws.cell(row=i, column=2, value=bits)


SUMMARY_KEYS = (
    ("fits", "fits", None, "{c}"),
    ("shortfall [GiB]", "shortfall_bytes", "0.00", "{c}/1073741824"),
    ("weights/GPU [GiB]", "weights_bytes_per_gpu", "0.00", "{c}/1073741824"),
    ("KV in use/GPU [GiB]", "kv_in_use_bytes_per_gpu", "0.00", "MIN({c},{budget})/1073741824"),
    ("headroom/GPU [GiB]", "kv_headroom_bytes", "0.00", "MAX({c},0)/1073741824"),
    ("reserve/GPU [GiB]", "reserve_bytes_per_gpu", "0.00", "{c}/1073741824"),
    ("max sequences", "max_concurrent_sequences", "#,##0", "{c}"),
    ("TTFT [ms]", "ttft_s", "#,##0.00", "{c}*1000"),
    ("TPOT [ms]", "tpot_s", "#,##0.00", "{c}*1000"),
    ("output [tokens/s]", "throughput_tokens_per_s", "#,##0.0", "{c}"),
    ("cost [USD/h]", "cost_usd_per_hour", '"$"#,##0.00', "{c}"),
    ("cost [USD/M output tokens]", "cost_usd_per_million_output_tokens", '"$"#,##0.0000', "{c}"),
)


def _text_criterion(name: str, gpu_rows: dict[str, int]) -> str:
    """A SUMIFS criterion matching the GPU ``name``: a reference to its name cell on the GPUs
    sheet, so no user text is ever spliced into a formula (a quoted literal, its quotes
    doubled, only for a name missing from that sheet)."""
    if name in gpu_rows:
        return f"GPUs!$A${gpu_rows[name]}"
    return '"' + xml_safe(name).replace('"', '""') + '"'


def write_summary(ws: Any, scenarios: Sequence[Scenario], fleets: list[str],
                  gpu_names: list[str], styles: Styles,
                  gpu_rows: dict[str, int] | None = None) -> list[str]:
    """Fleet roll-up (live SUMIFS over the Scenarios sheet), key figures per scenario in
    display units (GiB, ms, USD), and charts. ``gpu_rows`` gives each GPU's row on the GPUs
    sheet: the per-GPU columns match on that name cell."""
    col = letters("inference")
    n = len(scenarios)
    last = n + 1
    ws["A1"] = "Fleet roll-up"
    ws["A1"].font = Font(bold=True, size=14)
    headers = ["fleet", "scenarios", "not fitting", "GPUs", "cost [USD/h]", "cost [USD/month]",
               "output tokens/day", *[f"{g} [GPUs]" for g in gpu_names]]
    for j, h in enumerate(headers, 1):
        _header(ws, 2, j, h, "meta")
    rng = lambda key: f"Scenarios!${col[key]}$2:${col[key]}${max(last, 2)}"  # noqa: E731
    chosen = f"{rng('chosen')},TRUE"  # totals add chosen scenarios only (compare.counted)
    for i, fleet in enumerate(fleets, 3):
        write_text(ws.cell(row=i, column=1), fleet)
        f = f"$A{i}"
        ws.cell(row=i, column=2, value=f"=COUNTIFS({rng('fleet')},{f})")
        ws.cell(row=i, column=3,
                value=f"=COUNTIFS({rng('fleet')},{f},{rng('fits')},FALSE,{chosen})")
        ws.cell(row=i, column=4, value=f"=SUMIFS({rng('gpus')},{rng('fleet')},{f},{chosen})")
        ws.cell(row=i, column=5,
                value=f"=SUMIFS({rng('cost_usd_per_hour')},{rng('fleet')},{f},{chosen})")
        ws.cell(row=i, column=6,
                value=f"=SUMIFS({rng('cost_usd_per_month')},{rng('fleet')},{f},{chosen})")
        ws.cell(row=i, column=7,
                value=f"=SUMIFS({rng('tokens_per_day')},{rng('fleet')},{f},{chosen})")
        for j, g in enumerate(gpu_names, 8):
            criterion = _text_criterion(g, gpu_rows or {})
            ws.cell(row=i, column=j, value=f'=SUMIFS({rng("gpus")},{rng("fleet")},{f},'
                                           f'{rng("gpu")},{criterion},{chosen})')
        for j, fmt in ((5, '"$"#,##0.00'), (6, '"$"#,##0.00'), (7, "#,##0")):
            ws.cell(row=i, column=j).number_format = fmt
    top = len(fleets) + 5
    ws.cell(row=top - 1, column=1, value="Scenarios (red: does not fit)").font = Font(bold=True)
    _header(ws, top, 1, "scenario", "meta")
    for j, (label, *_rest) in enumerate(SUMMARY_KEYS, 2):
        _header(ws, top, j, label, "output")
    plan = []
    for j, (_label, key, fmt, template) in enumerate(SUMMARY_KEYS, 2):
        text = template.format(c=f"Scenarios!{col[key]}{ROW}",
                               budget=f"MAX(Scenarios!{col['kv_budget_bytes']}{ROW},0)")
        plan.append((get_column_letter(j), formula_template(text), styles.attr(fmt)))
    body = []
    for i, sc in enumerate(scenarios):
        r, src = top + 1 + i, i + 2
        cells = [cell_xml(f"A{r}", f"{sc.fleet}/{sc.name}", "", styles)]
        cells += [formula_xml(f"{letter}{r}", t.replace(ROW, str(src)), r, style)
                  for letter, t, style in plan]
        body.append(row_xml(r, cells))
    if n:
        end = top + n
        ws.conditional_formatting.add(
            f"A{top + 1}:{get_column_letter(len(SUMMARY_KEYS) + 1)}{end}",
            FormulaRule(formula=[f"$B{top + 1}=FALSE"], fill=RED))
        memory = BarChart()
        memory.type, memory.grouping, memory.overlap = "bar", "stacked", 100
        memory.title, memory.y_axis.title = "Memory per GPU [GiB]", "GiB"
        memory.add_data(Reference(ws, min_col=4, max_col=7, min_row=top, max_row=end),
                        titles_from_data=True)
        memory.set_categories(Reference(ws, min_col=1, min_row=top + 1, max_row=end))
        memory.height, memory.width = max(7.5, 0.6 * n + 3), 18
        ws.add_chart(memory, f"{get_column_letter(len(SUMMARY_KEYS) + 3)}2")
        cost = BarChart()
        cost.type, cost.title, cost.y_axis.title = "bar", "Cost per scenario [USD/h]", "USD/h"
        cost.add_data(Reference(ws, min_col=12, min_row=top, max_row=end),
                      titles_from_data=True)
        cost.set_categories(Reference(ws, min_col=1, min_row=top + 1, max_row=end))
        cost.height, cost.width = max(7.5, 0.6 * n + 3), 18
        ws.add_chart(cost, f"{get_column_letter(len(SUMMARY_KEYS) + 3)}{int(max(18, n * 1.3))}")
    ws.column_dimensions["A"].width = 40
    for j in range(2, len(headers) + 2):
        ws.column_dimensions[get_column_letter(j)].width = 16
    ws.freeze_panes = "B3"
    return body


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
def write_calibration(ws: Any, cells: CalibrationCells, runs: Sequence[RunPrediction]) -> None:
    """The Calibration sheet: the profiles the scenarios use (their fitted parameters, which
    the scenario sheets' calibrated cells reference) and one row per measured run with the
    measured and predicted figures (predicted: computed values, see :func:`predict_runs`)
    and ``|error| = ABS(predicted / measured - 1)`` as a live formula; a scatter chart of
    predicted against measured on log axes, one series per figure."""
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
    ws.cell(row=top - 1, column=1, value="Measured runs (predicted: computed by the planner "
            "at export with the profile auto picks; |error|: live formula)").font = bold
    for j, header in enumerate(RUN_HEADERS, 1):
        _header(ws, top, j, header, "output" if j > 6 else "meta")
    for i, entry in enumerate(runs, top + 1):
        v = entry.run.values
        for j, value in enumerate((entry.run.id, entry.run.model, entry.run.gpu,
                                   v.get("engine"), v.get("mode"), entry.profile), 1):
            write_text(ws.cell(row=i, column=j), value)
        for k, metric in enumerate(("throughput", "ttft", "tpot")):
            first = 7 + 3 * k
            if metric not in entry.measured:
                continue
            m, p = get_column_letter(first), get_column_letter(first + 1)
            ws.cell(row=i, column=first, value=entry.measured[metric])
            ws.cell(row=i, column=first + 1, value=entry.predicted[metric])
            ws.cell(row=i, column=first + 2, value=f"=ABS({p}{i}/{m}{i}-1)")
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


def run_top(n_profiles: int) -> int:
    """Header row of the Calibration sheet's run table below ``n_profiles`` profiles."""
    return PROFILE_TOP + max(n_profiles, 1) + 3


@dataclass(slots=True)
class Built:
    """A workbook and the fast-written sheet bodies to splice in when it is saved."""

    workbook: Workbook
    bodies: dict[str, tuple[list[str], int, int]]


def build_workbook(scenarios: Sequence[Scenario], models: Sequence[ModelInfo],
                   gpus: Sequence[GpuInfo], *, sweeps: Sequence[Sweep] = (),
                   progress: Callable[[int], None] | None = None,
                   profiles: Sequence[CalibrationFigures] = (),
                   runs: Sequence[Run] = ()) -> Built:
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
    bodies: dict[str, tuple[list[str], int, int]] = {}
    width = {k: len(scenario_columns(k)) for k in SCENARIO_SHEETS}
    cells = CalibrationCells(profiles)
    pairs = {(s.gpu.lower(), str(s.inputs.get("engine"))) for s in inference}
    shown = [r for r in runs if (r.gpu.lower(), str(r.values.get("engine"))) in pairs]
    predictions = predict_runs(shown, {m.name: m.spec for m in models},
                               {g.name: g.spec for g in gpus}, profiles) if shown else []
    for entry in predictions:  # list the profile each run is predicted with
        picked = resolve("auto", entry.run.gpu, str(entry.run.values.get("engine")), profiles)
        if picked is not None:
            cells.add(picked)
    rows = write_scenario_sheet(wb.create_sheet(SCENARIO_SHEETS["inference"]), "inference",
                                inference, ranges, by_name, styles, progress=progress,
                                calibration=cells)
    bodies["Scenarios"] = (rows, len(inference) + 1, width["inference"])
    dims = {(s.model, s.lora_targets): lora_dims(by_name[s.model].spec, s.lora_targets)
            for s in training if s.inputs.get("lora_rank")}
    rows = write_scenario_sheet(wb.create_sheet(SCENARIO_SHEETS["training"]), "training",
                                training, ranges, by_name, styles, lora_dims=dims,
                                progress=progress)
    bodies["Training"] = (rows, len(training) + 1, width["training"])
    write_models(wb.create_sheet("Models"), models)
    write_gpus(wb.create_sheet("GPUs"), gpus)
    write_lists(wb.create_sheet("Lists"))
    for k, sweep in enumerate(sweeps, 1):
        ws = wb.create_sheet(f"Sweep {k}")
        rows = write_scenario_sheet(ws, "inference", sweep.rows, ranges, by_name, styles,
                                    calibration=cells)
        bodies[ws.title] = (rows, len(sweep.rows) + 1, width["inference"])
        write_sweep_chart(ws, sweep)
    if cells.rows or predictions:
        write_calibration(wb.create_sheet("Calibration"), cells, predictions)
    fleets = sorted({s.fleet for s in scenarios})
    body = write_summary(summary, inference, fleets, sorted({s.gpu for s in inference}), styles,
                         {g.name: row for row, g in enumerate(gpus, 2)})
    bodies["Summary"] = (body, len(fleets) + 5 + len(inference), len(SUMMARY_KEYS) + 1 +
                         len({s.gpu for s in inference}) + 7)
    styles.close()
    wb.defined_names["ModelNames"] = DefinedName(
        "ModelNames", attr_text=f"Models!$A$2:$A${max(len(models) + 1, 2)}")
    wb.defined_names["GpuNames"] = DefinedName(
        "GpuNames", attr_text=f"GPUs!$A$2:$A${max(len(gpus) + 1, 2)}")
    wb.calculation.fullCalcOnLoad = True
    return Built(wb, bodies)


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
        inject(tmp, built.bodies)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PlannerError(f"cannot write {path}: {exc.strerror or exc}") from exc
