"""The Summary sheet: the page a finance reader signs.

It exists apart from :mod:`planner.report.export` because it is a report of its own, not a
table of columns: a title with the fleets, export date and planner version; Assumptions (the
GPUs used with their price, whether the catalog marks it as an example, efficiencies, GPUs
counted and their monthly cost; engines; hours per month; conventions); a roll-up per fleet
with a grand total; the plan of each fleet with a horizon (summarised from its Plan sheet);
the inference scenarios, each marked counted or not (an option that is not the chosen one of
its group is listed, greyed, and left out of every total: :func:`planner.compare.counted`),
with its verdict at the modelled load (meets its target, cost per million output tokens at
that load and the load's basis, TTFT and TPOT at the load) and a total of the counted rows;
the training runs and their total; then, after a page break, a memory and a cost chart.

Every figure is a live formula over the Scenarios, Training, GPUs and Plan sheets, written with
the value the planner computed (so a viewer that does not recalculate shows the numbers).
Totals that depend on a name (a fleet, a GPU) compare names for equality with ``EXACT`` inside
``SUMPRODUCT``, never through a ``SUMIFS``/``COUNTIFS`` criterion, which reads ``* ? ~`` as
wildcards and a leading ``< > =`` as an operator (issue 28).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from string import Formatter
from typing import Any, ClassVar
from xml.sax.saxutils import escape

import numpy as np
from openpyxl.chart import BarChart, Reference, Series
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from planner.domain import GpuInfo, Scenario
from planner.estimator.gpu import serving_figures
from planner.report.fastsheet import (
    Styles,
    cached,
    cell_xml,
    formula_column,
    rows_xml,
    value_column,
    xml_safe,
)
from planner.report.layout import GPU_SHEET, letters
from planner.report.plan_sheet import PlanLine
from planner.report.sheetkit import FILLS, RED, header_note, note, print_setup
from planner.sheet.table import inputs_of

CHUNK_ROWS = 2000
"""Summary rows rendered at a time (as the scenario sheets stream theirs)."""
YES_NO = '"yes";"yes";"no"'
"""Number format showing a flag (TRUE = 1, FALSE = 0) as yes or no."""
CONSTANTS = {"BytesPerGiB": 1073741824, "MsPerSecond": 1000, "SecondsPerDay": 86400,
             "SecondsPerHour": 3600, "TokensPerMillion": 1000000}
"""Constants the Summary's formulas use by name (defined names of the workbook)."""
CHART_ROWS = 40
"""Most scenarios a Summary chart shows (the first ones; the tables list every one)."""
USD = '"$"#,##0'
USD_CENTS = '"$"#,##0.00'
COUNTED, NOT_COUNTED = "yes", "no: option"
"""What the "counted" column shows for a scenario counted in totals, and for an option that is
not its group's chosen one."""

Compute = Callable[[Mapping[str, np.ndarray]], np.ndarray]


def _flag(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=bool)


def _num(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=float)


def _text(values: np.ndarray) -> np.ndarray:
    """Text results as Python strings (what the fast writer writes as cached text)."""
    return values.astype(object)


def _meets(v: Mapping[str, np.ndarray]) -> np.ndarray:
    asked = _num(v["target_requests_per_s"]) + _num(v["slo_ttft_s"]) + _num(v["slo_tpot_s"])
    return _text(np.where(asked > 0, np.where(_flag(v["meets_slo"]), "yes", "no"),
                          "no target"))


def _cost_at_load(v: Mapping[str, np.ndarray]) -> np.ndarray:
    out = _num(v["output_tokens_per_s"])
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = (_num(v["cost_usd_per_hour"]) * CONSTANTS["TokensPerMillion"]
                / (CONSTANTS["SecondsPerHour"] * out))
    if bool((out > 0).all()):
        return cost
    return np.where(out > 0, cost.astype(object), "n/a")


def _basis(v: Mapping[str, np.ndarray]) -> np.ndarray:
    mode = _num(v["serving_mode"])
    clients = [f"{int(c)} clients" for c in _num(v["concurrency"])]
    target = np.where(_flag(v["overloaded"]), "target rate, saturated", "target rate")
    return _text(np.where(mode == 1, target, np.where(mode == 2, np.array(clients, dtype=object)
                                                        if clients else "", "offline maximum")))


@dataclass(frozen=True, slots=True)
class SummaryColumn:
    """A column of the Summary's scenario table: an Excel formula over the scenario's row of
    the Scenarios sheet (``{column}`` stands for that column's cell) and the same figure in
    Python (``compute`` over the gathered columns it reads)."""

    header: str
    unit: str
    template: str
    compute: Compute | None
    """None: the Scenarios cell itself (a number or flag as gathered)."""
    number_format: str | None = None
    explain: str | None = None
    """The header's note; None: the explain text of the column the template names first."""
    text: bool = False
    """A text result (centred in its cell)."""

    @property
    def reads(self) -> tuple[str, ...]:
        """The Scenarios columns the formula reads, in order (constants are defined names)."""
        return tuple(dict.fromkeys(name for _t, name, _s, _c in Formatter().parse(self.template)
                                   if name))


def _ms(key: str) -> Compute:
    return lambda v: _num(v[key]) * CONSTANTS["MsPerSecond"]


def _gib(v: Mapping[str, np.ndarray], key: str) -> np.ndarray:
    return _num(v[key]) / CONSTANTS["BytesPerGiB"]


SCENARIO_COLUMNS = (
    SummaryColumn("counted", "in totals", f'IF({{chosen}},"{COUNTED}","{NOT_COUNTED}")',
                  lambda v: _text(np.where(_flag(v["chosen"]), COUNTED, NOT_COUNTED)),
                  explain="Counted in the totals: yes, or 'no: option' for an option of a "
                  "group that is not its chosen one (listed for comparison, greyed, never "
                  "added). = IF(chosen, \"yes\", \"no: option\")", text=True),
    SummaryColumn("GPU", "", "{gpu}", None, text=True),
    SummaryColumn("GPUs", "count", "{gpus}", None, "#,##0"),
    SummaryColumn("fits", "yes/no", "{fits}", None, YES_NO),
    SummaryColumn("target rate", "requests/s", "{target_requests_per_s}", None, "#,##0.00"),
    SummaryColumn("meets target", "SLO at load",
                  'IF({target_requests_per_s}+{slo_ttft_s}+{slo_tpot_s}>0,'
                  'IF({meets_slo},"yes","no"),"no target")', _meets,
                  explain="Meets its target: the serving model's meets_slo at the target rate "
                  "(TTFT at the SLO percentile and mean TPOT within the objectives, not "
                  "saturated, the engine starts); 'no target' when neither a rate nor an "
                  "objective is set.", text=True),
    SummaryColumn("cost", "USD/h", "{cost_usd_per_hour}", None, USD_CENTS),
    SummaryColumn("cost", "USD/month", "{cost_usd_per_month}", None, USD),
    SummaryColumn("cost at load", "USD/M output tokens",
                  'IF({output_tokens_per_s}>0,{cost_usd_per_hour}*TokensPerMillion/'
                  '(SecondsPerHour*{output_tokens_per_s}),"n/a")', _cost_at_load, '"$"#,##0.000',
                  explain="Cost per million output tokens at the modelled load: "
                  "cost_usd_per_hour × 10^6 / (3600 × output_tokens_per_s), every GPU-hour "
                  "billed to the output tokens the deployment delivers at the load its 'basis' "
                  "names (not at batch 1 on an idle server)."),
    SummaryColumn("basis", "load modelled",
                  'IF({serving_mode}=1,IF({overloaded},"target rate, saturated","target rate"),'
                  'IF({serving_mode}=2,{concurrency}&" clients","offline maximum"))', _basis,
                  explain="The load the figures at load are computed at: the target request "
                  "rate (saturated: the deployment serves less than offered), a number of "
                  "clients (concurrency), or, with neither, the engine's offline maximum.",
                  text=True),
    SummaryColumn("output", "tokens/s at load", "{output_tokens_per_s}", None, "#,##0"),
    SummaryColumn("TTFT", "ms at load, SLO pct.", "{ttft_slo_percentile_s}*MsPerSecond",
                  _ms("ttft_slo_percentile_s"), "#,##0.0"),
    SummaryColumn("TPOT", "ms at load, mean", "{tpot_mean_s}*MsPerSecond", _ms("tpot_mean_s"),
                  "#,##0.0"),
    SummaryColumn("weights", "GiB/GPU", "{weights_bytes_per_gpu}/BytesPerGiB",
                  lambda v: _gib(v, "weights_bytes_per_gpu"), "0.00"),
    SummaryColumn("KV in use", "GiB/GPU",
                  "MIN({kv_in_use_bytes_per_gpu},MAX({kv_budget_bytes},0))/BytesPerGiB",
                  lambda v: np.minimum(_num(v["kv_in_use_bytes_per_gpu"]),
                                       np.maximum(_num(v["kv_budget_bytes"]), 0))
                  / CONSTANTS["BytesPerGiB"], "0.00"),
    SummaryColumn("headroom", "GiB/GPU", "MAX({kv_headroom_bytes},0)/BytesPerGiB",
                  lambda v: np.maximum(_num(v["kv_headroom_bytes"]), 0)
                  / CONSTANTS["BytesPerGiB"], "0.00"),
    SummaryColumn("reserve", "GiB/GPU", "{reserve_bytes_per_gpu}/BytesPerGiB",
                  lambda v: _gib(v, "reserve_bytes_per_gpu"), "0.00"),
)
"""Columns of the Summary's scenario table (after the scenario name)."""
MEMORY_HEADERS = ("weights", "KV in use", "headroom", "reserve")
"""The scenario columns the memory chart stacks."""
SUMMARY_WIDTH = len(SCENARIO_COLUMNS) + 1
TRAINING_KEYS = (
    # header, unit, Training column, number format, formula over {c} (that column's cell)
    ("GPU", "", "gpu", None, "{c}"),
    ("GPUs", "count", "gpus", "#,##0", "{c}"),
    ("fits", "yes/no", "train_fits", YES_NO, "{c}"),
    ("tokens", "tokens", "train_tokens", "#,##0", "{c}"),
    ("GPU-hours", "GPU-h", "gpu_hours", "#,##0", "{c}"),
    ("time", "days", "train_time_s", "#,##0.0", "{c}/SecondsPerDay"),
    ("training cost", "USD", "train_cost_usd", USD, "{c}"),
)
"""Columns of the Summary's training table (after the run's name)."""


def _column_index(header: str, unit: str | None = None) -> int:
    """Sheet column number of a scenario-table column (the name is column 1)."""
    return next(j for j, c in enumerate(SCENARIO_COLUMNS, 2)
                if c.header == header and (unit is None or c.unit == unit))


class Gather:
    """The figures the Summary shows, gathered from the scenario sheets' evaluated chunks as
    they stream (a few columns of every row, not whole rows)."""

    KEYS: ClassVar[dict[str, tuple[str, ...]]] = {
        "inference": ("fits", "gpus", "cost_usd_per_hour", "cost_usd_per_month",
                      "output_tokens_per_s",
                      *(k for c in SCENARIO_COLUMNS for k in c.reads
                        if k not in ("gpu", "chosen"))),
        "training": ("gpus", "train_cost_usd", "gpu_hours",
                     *(k for _h, _u, k, _f, _t in TRAINING_KEYS if k != "gpu"))}

    def __init__(self, kind: str, scenarios: Sequence[Scenario]) -> None:
        self.kind = kind
        self.meta = [(sc.fleet, sc.name, sc.gpu) for sc in scenarios]
        self.chosen = [bool(sc.chosen) for sc in scenarios]
        """Counted in totals (:func:`planner.compare.counted`: the chosen option of a group)."""
        self.columns: dict[str, list[Any]] = {k: [] for k in dict.fromkeys(self.KEYS[kind])}
        self.columns["chosen"] = list(self.chosen)
        self._inputs = {c.name for c in inputs_of(kind)}

    def add(self, chunk: Sequence[Scenario], values: dict[str, Any]) -> None:
        """Keep the Summary's figures of one evaluated chunk (chunks come in row order)."""
        for key, out in self.columns.items():
            if key == "chosen":
                continue
            got = values.get(key)
            if got is None and key in self._inputs:
                got = [sc.inputs[key] for sc in chunk]
            out.extend(np.asarray(got).tolist() if got is not None else [None] * len(chunk))

    def value(self, key: str, i: int) -> Any:
        """Row ``i``'s ``key`` (None if it could not be evaluated, or not yet)."""
        column = self.columns[key]
        return column[i] if i < len(column) else None

    def total(self, key: str, rows: Sequence[int]) -> float:
        """Sum of ``key`` over ``rows`` (unevaluated rows count 0)."""
        return float(sum(self.value(key, i) or 0 for i in rows))

    def counted(self, fleet: str | None = None) -> list[int]:
        """Rows counted in totals (chosen), of ``fleet`` or of every fleet."""
        return [i for i, (f, _n, _g) in enumerate(self.meta)
                if self.chosen[i] and (fleet is None or f == fleet)]


@dataclass(slots=True)
class SummaryInfo:
    """What the Summary's heading, Assumptions and plan section state."""

    fleets: list[str]
    exported: str
    version: str
    gpus: list[GpuInfo]
    """The GPUs the exported scenarios use."""
    engines: dict[str, int]
    hours_per_month: list[float]
    plans: list[PlanLine] = field(default_factory=list)


class _Rows:
    """Row XML of a sheet written top to bottom (cells given by column number)."""

    def __init__(self, styles: Styles, *, dry: bool = False, ws: Any = None) -> None:
        self.styles = styles
        self.rows: list[str | Callable[[], Iterator[str]]] = []
        self.row = 0
        self.dry = dry
        """Only count rows (the layout pass: where each part goes)."""
        self.ws = ws
        """The sheet the layout pass sets row heights on (openpyxl writes its own element
        for a row holding a merge or a note, which a spreadsheet reads first)."""

    def add(self, cells: list[tuple[int, str]], height: float | None = None) -> int:
        """Append a row of ``(column, cell XML without its reference)``; returns its number."""
        self.row += 1
        r = self.row
        if self.dry:
            if height and self.ws is not None:
                self.ws.row_dimensions[r].height = height
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


def _formula_cell(formula: str, value: Any, style: str) -> str:
    t, v = cached(value)
    return f'<c r="\x00REF"{style}{t}><f>{escape(formula)}</f>{v}</c>'


def _exact_criterion(name: str, gpu_rows: dict[str, int]) -> str:
    """What a GPU ``name`` is compared with: a reference to its name cell on the GPUs sheet,
    so no user text is ever spliced into a formula (a quoted literal, its quotes doubled,
    only for a name missing from that sheet). Compared with ``EXACT``, so it is a name,
    never a pattern."""
    if name in gpu_rows:
        return f"GPUs!$A${gpu_rows[name]}"
    return '"' + xml_safe(name).replace('"', '""') + '"'


class _Looks:
    """The Summary's cell styles (registered once)."""

    def __init__(self, st: Styles) -> None:
        face = "Calibri"
        self.st = st
        self.bold = st.attr(look="bold", font=Font(name=face, bold=True))
        self.title = st.attr(look="title", font=Font(name=face, bold=True, size=16))
        self.section = st.attr(look="section", font=Font(name=face, bold=True, size=12,
                                                          color="305496"))
        self.head = st.attr(look="head", font=Font(name=face, bold=True, color="FFFFFF"),
                            fill=PatternFill("solid", start_color=FILLS["meta"],
                                             end_color=FILLS["meta"]),
                            alignment=Alignment(horizontal="center", vertical="center",
                                                wrap_text=True))
        self.unit = st.attr(look="unit", font=Font(name=face, italic=True, color="FFFFFF",
                                                   size=9),
                            fill=PatternFill("solid", start_color="8EA9DB",
                                             end_color="8EA9DB"),
                            alignment=Alignment(horizontal="center", wrap_text=True))
        self.warn = st.attr(look="warn", font=Font(name=face, bold=True, color="C00000"))
        self.wrap = st.attr(look="wrap", alignment=Alignment(wrap_text=True, vertical="top"))
        self.label = st.attr(look="label", font=Font(name=face, bold=True),
                             alignment=Alignment(vertical="top"))
        self.total_label = st.attr(look="total", font=Font(name=face, bold=True))
        self.centre = st.attr(look="centre", alignment=Alignment(horizontal="center"))
        self.total_centre = st.attr(look="total centre", font=Font(name=face, bold=True),
                                    alignment=Alignment(horizontal="center"))

    def fmt(self, number_format: str | None) -> str:
        return self.st.attr(number_format)

    def total(self, number_format: str | None) -> str:
        """A total's number format in bold."""
        return self.st.attr(number_format, look=f"total {number_format}",
                            font=Font(name="Calibri", bold=True))


class _Summary:
    """One rendering pass of the Summary: ``decorate`` (the layout pass, on the openpyxl
    sheet: merges, notes, charts, print setup) or the row XML pass."""

    def __init__(self, ws: Any, info: SummaryInfo, inference: Gather, training: Gather,
                 looks: _Looks, gpu_rows: dict[str, int], training_rows: int,
                 decorate: bool) -> None:
        self.ws, self.info, self.inference, self.training = ws, info, inference, training
        self.lk, self.st = looks, looks.st
        self.gpu_rows = gpu_rows
        self.decorate = decorate
        self.rows = _Rows(looks.st, dry=decorate, ws=ws)
        self.notes: dict[str, str] = {}
        self.col, self.tcol = letters("inference"), letters("training")
        self.n, self.m = len(inference.meta), len(training.meta)
        self.training_rows = training_rows

    # ------------------------------------------------------------------ ranges
    def rng(self, key: str) -> str:
        """The Scenarios sheet's column ``key`` over every scenario row."""
        return f"Scenarios!${self.col[key]}$2:${self.col[key]}${max(self.n + 1, 2)}"

    def trng(self, key: str) -> str:
        """The Training sheet's column ``key`` over every run row."""
        last = max(self.training_rows + 1, 2)
        return f"Training!${self.tcol[key]}$2:${self.tcol[key]}${last}"

    def counted_sum(self, match: str | None, values: str | None, *, training: bool = False,
                    extra: str = "") -> str:
        """``SUMPRODUCT`` over the counted rows whose ``match`` factor holds (an ``EXACT``
        name comparison; every counted row without), of ``values`` (or a count without)."""
        chosen = f"({self.trng('chosen') if training else self.rng('chosen')}=TRUE)"
        factors = [*([match] if match else []), chosen, *([extra] if extra else []),
                   *([values] if values else [])]
        return "SUMPRODUCT(" + "*".join(factors) + ")"

    # ------------------------------------------------------------------ pieces
    def headers(self, items: Sequence[tuple[str, str]],
                explain: Sequence[str | None] = ()) -> None:
        lk, st = self.lk, self.st
        r = self.rows.add([(j, _text_cell(h, lk.head, st)) for j, (h, _u) in enumerate(items, 1)],
                          height=30)
        for j, text in enumerate(explain, 1):
            if text:
                self.notes[f"{get_column_letter(j)}{r}"] = text
        self.rows.add([(j, _text_cell(u, lk.unit, st)) for j, (_h, u) in enumerate(items, 1)],
                      height=24 if any(len(u) > 14 for _h, u in items) else None)

    def section(self, text: str) -> None:
        self.rows.add([(1, _text_cell(text, self.lk.section, self.st))])

    def heading(self) -> None:
        lk, st, info = self.lk, self.st, self.info
        self.rows.add([(1, _text_cell("LLM capacity and cost report", lk.title, st))],
                      height=24)
        self.rows.add([(1, _text_cell(
            f"Fleet{'s' if len(info.fleets) != 1 else ''}: {', '.join(info.fleets) or '(none)'}"
            f"   ·   exported {info.exported}   ·   planner {info.version}", lk.bold, st))])
        self.rows.skip()

    def assumptions(self) -> None:
        lk, st, info = self.lk, self.st, self.info
        self.section("Assumptions")
        examples = [g.name for g in info.gpus if g.spec.price_is_example]
        if examples:
            self.rows.add([(1, _text_cell(
                "EXAMPLE PRICES: the prices of " + ", ".join(examples) + " are the catalog's "
                "examples, not quotes; replace them in the GPUs sheet (or planner gpu set) "
                "before using these costs.", lk.warn, st))])
        self.headers([("GPU", ""), ("price", "USD/GPU-h"), ("price is", ""),
                      ("matmul efficiency", "fraction"), ("bandwidth efficiency", "fraction"),
                      ("usable memory", "GiB"), ("GPUs in use", "count"),
                      ("cost", "USD/month")])
        for g in info.gpus:
            self.rows.add(self.gpu_row(g))
        self.statements()

    def gpu_row(self, g: GpuInfo) -> list[tuple[int, str]]:
        lk, st = self.lk, self.st
        gl = {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}
        gr = self.gpu_rows.get(g.name)
        serving = serving_figures(g.spec)
        cells = [(1, _text_cell(g.name, "", st))]
        if gr is not None:
            cells += [
                (2, _formula_cell(f"GPUs!{gl['price_usd_per_hour']}{gr}",
                                  g.spec.price_usd_per_hour, lk.fmt(USD_CENTS))),
                (3, _formula_cell(f'IF(GPUs!{gl["price_is_example"]}{gr},"example","set")',
                                  "example" if g.spec.price_is_example else "set",
                                  lk.warn if g.spec.price_is_example else "")),
                (4, _formula_cell(f"GPUs!{gl['matmul_efficiency']}{gr}",
                                  serving["gpu_matmul_efficiency_16bit"], lk.fmt("0.00"))),
                (5, _formula_cell(f"GPUs!{gl['bandwidth_efficiency']}{gr}",
                                  serving["gpu_bandwidth_efficiency"], lk.fmt("0.00"))),
                (6, _formula_cell(f"GPUs!{gl['usable_memory_gib']}{gr}",
                                  serving["gpu_usable_memory_bytes"] / 2**30, lk.fmt("0.0")))]
        match = f"EXACT({self.rng('gpu')},{_exact_criterion(g.name, self.gpu_rows)})"
        mine = [i for i in self.inference.counted() if self.inference.meta[i][2] == g.name]
        cells += [(7, _formula_cell(self.counted_sum(match, self.rng("gpus")),
                                    self.inference.total("gpus", mine), lk.fmt("#,##0"))),
                  (8, _formula_cell(self.counted_sum(match, self.rng("cost_usd_per_month")),
                                    self.inference.total("cost_usd_per_month", mine),
                                    lk.fmt(USD)))]
        return cells

    def statements(self) -> None:
        lk, st, info = self.lk, self.st, self.info
        engines = ", ".join(f"{e} ({k} scenario{'s' if k != 1 else ''})"
                            for e, k in sorted(info.engines.items())) or "(none)"
        hours = sorted(set(info.hours_per_month))
        month = (f"{hours[0]:g} hours (every scenario)" if len(hours) == 1 else
                 ", ".join(f"{h:g}" for h in hours) + " hours (per scenario)") if hours else "-"
        for label, text in (
                ("Serving engines", engines),
                ("A month", month),
                ("Conventions", CONVENTIONS)):
            self.rows.add([(1, _text_cell(label, lk.label, st)),
                           (2, _text_cell(text, lk.wrap if label == "Conventions" else "", st))],
                          height=50 if label == "Conventions" else None)
            if self.decorate:
                self.ws.merge_cells(start_row=self.rows.row, start_column=2,
                                    end_row=self.rows.row, end_column=SUMMARY_WIDTH)
        self.rows.skip()

    def rollup(self) -> None:
        self.section("Fleet roll-up")
        self.headers([("fleet", ""), ("scenarios", "counted"), ("not fitting", "count"),
                      ("GPUs", "count"), ("cost", "USD/h"), ("cost", "USD/month"),
                      ("training cost", "USD"), ("output", "M tokens/day at load"),
                      ("options", "not counted")],
                     [None, None, None, None, None,
                      header_note("inference", "cost_usd_per_month"),
                      header_note("training", "train_cost_usd"),
                      "Millions of output tokens per day at the modelled load of the counted "
                      "scenarios: output_tokens_per_s × 86400 / 10^6 (see 'basis' in the "
                      "scenario table).",
                      "Options of a group that are not its chosen one: listed for comparison, "
                      "never added to a total."])
        first = self.rows.row + 1
        for fleet in self.info.fleets:
            self.rows.add(self.fleet_row(fleet))
        last = self.rows.row
        if self.info.fleets:
            self.rows.add(self.total_row(first, last))
        self.rows.skip()

    def fleet_row(self, fleet: str) -> list[tuple[int, str]]:
        lk, st, inf, tr = self.lk, self.st, self.inference, self.training
        r = self.rows.row + 1
        match = f"EXACT({self.rng('fleet')},$A{r})"
        tmatch = f"EXACT({self.trng('fleet')},$A{r})"
        mine = inf.counted(fleet)
        options = sum(1 for i, (f, _n, _g) in enumerate(inf.meta)
                      if f == fleet and not inf.chosen[i])
        not_fitting = sum(1 for i in mine if inf.value("fits", i) is False)
        per_day = CONSTANTS["SecondsPerDay"]
        return [
            (1, _text_cell(fleet, "", st)),
            (2, _formula_cell(self.counted_sum(match, None), len(mine), lk.fmt("#,##0"))),
            (3, _formula_cell(self.counted_sum(match, None, extra=f"({self.rng('fits')}=FALSE)"),
                              not_fitting, lk.fmt("#,##0"))),
            (4, _formula_cell(self.counted_sum(match, self.rng("gpus")),
                              inf.total("gpus", mine), lk.fmt("#,##0"))),
            (5, _formula_cell(self.counted_sum(match, self.rng("cost_usd_per_hour")),
                              inf.total("cost_usd_per_hour", mine), lk.fmt(USD_CENTS))),
            (6, _formula_cell(self.counted_sum(match, self.rng("cost_usd_per_month")),
                              inf.total("cost_usd_per_month", mine), lk.fmt(USD))),
            (7, _formula_cell(self.counted_sum(tmatch, self.trng("train_cost_usd"),
                                               training=True),
                              tr.total("train_cost_usd", tr.counted(fleet)), lk.fmt(USD))),
            (8, _formula_cell(self.counted_sum(match, self.rng("output_tokens_per_s"))
                              + "*SecondsPerDay/TokensPerMillion",
                              inf.total("output_tokens_per_s", mine) * per_day
                              / CONSTANTS["TokensPerMillion"], lk.fmt("#,##0.0"))),
            (9, _formula_cell(f"SUMPRODUCT({match}*({self.rng('chosen')}=FALSE))", options,
                              lk.fmt("#,##0")))]

    def total_row(self, first: int, last: int) -> list[tuple[int, str]]:
        """The grand total of the roll-up: each column's sum over the fleet rows."""
        lk, st, inf, tr = self.lk, self.st, self.inference, self.training
        mine = inf.counted()
        values = [len(mine), sum(1 for i in mine if inf.value("fits", i) is False),
                  inf.total("gpus", mine), inf.total("cost_usd_per_hour", mine),
                  inf.total("cost_usd_per_month", mine),
                  tr.total("train_cost_usd", tr.counted()),
                  inf.total("output_tokens_per_s", mine) * CONSTANTS["SecondsPerDay"]
                  / CONSTANTS["TokensPerMillion"],
                  len(inf.chosen) - sum(inf.chosen)]
        formats = ("#,##0", "#,##0", "#,##0", USD_CENTS, USD, USD, "#,##0.0", "#,##0")
        cells = [(1, _text_cell("total, all fleets", lk.total_label, st))]
        for j, (value, number_format) in enumerate(zip(values, formats, strict=True), 2):
            c = get_column_letter(j)
            cells.append((j, _formula_cell(f"SUM({c}{first}:{c}{last})", value,
                                           lk.total(number_format))))
        return cells

    def plans(self) -> None:
        if not self.info.plans:
            return
        lk, st = self.lk, self.st
        self.section("Plan over months (from the Plan sheets: GPUs the serving model needs "
                     "at each month's demand)")
        self.headers([("fleet", ""), ("from", "month"), ("to", "month"), ("months", "count"),
                      ("pricing", ""), ("GPUs", "first month"), ("GPUs", "peak month"),
                      ("cost", "USD, first month"), ("cost", "USD, last month"),
                      ("total cost", "USD, all months")])
        for p in self.info.plans:
            cells = [(1, _text_cell(p.fleet, "", st)),
                     (2, _formula_cell(*p.first_month, lk.centre)),
                     (3, _formula_cell(*p.last_month, lk.centre)),
                     (4, cell_xml("\x00REF", p.months, lk.fmt("#,##0"), st)),
                     (5, _text_cell(p.pricing, lk.centre, st)),
                     (6, _formula_cell(*p.first_gpus, lk.fmt("#,##0"))),
                     (7, _formula_cell(*p.peak_gpus, lk.fmt("#,##0"))),
                     (8, _formula_cell(*p.first_cost, lk.fmt(USD))),
                     (9, _formula_cell(*p.last_cost, lk.fmt(USD))),
                     (10, _formula_cell(*p.total_cost, lk.total(USD)))]
            self.rows.add(cells)
        self.rows.skip()

    def scenarios(self) -> tuple[int, int]:
        """The inference table and its total row; returns its first and last scenario rows."""
        self.section("Inference scenarios (grey: an option not chosen, not counted; "
                     "red: does not fit)")
        self.headers([("scenario", ""), *((c.header, c.unit) for c in SCENARIO_COLUMNS)],
                     [None, *(c.explain or header_note("inference", c.reads[0])
                              for c in SCENARIO_COLUMNS)])
        top = self.rows.row + 1
        body = self.scenario_body(top)  # registers its styles in both passes
        if not self.rows.dry:
            self.rows.rows.append(body)  # rendered as the body streams, not held whole
        self.rows.row += self.n
        end = self.rows.row
        if self.n:
            self.rows.add(self.scenario_total(top, end))
        if self.n and self.decorate:
            fits = get_column_letter(_column_index("fits"))
            counted = get_column_letter(_column_index("counted"))
            area = f"A{top}:{get_column_letter(SUMMARY_WIDTH)}{end}"
            self.ws.conditional_formatting.add(area, FormulaRule(
                formula=[f"${fits}{top}=FALSE"], fill=RED))
            self.ws.conditional_formatting.add(area, FormulaRule(
                formula=[f'${counted}{top}<>"{COUNTED}"'],
                font=Font(italic=True, color="808080")))
        return top, end

    def scenario_body(self, top: int) -> Callable[[], Iterator[str]]:
        col, inf, lk, st, n = self.col, self.inference, self.lk, self.st, self.n
        cells_of = _Cells(col)
        plan = [(get_column_letter(j), j, escape(c.template.format_map(cells_of)),
                 lk.centre if c.text else lk.fmt(c.number_format), c)
                for j, c in enumerate(SCENARIO_COLUMNS, 2)]

        def table() -> Iterator[str]:  # column-wise, a chunk of rows at a time, shared
            for lo in range(0, n, CHUNK_ROWS):
                hi = min(n, lo + CHUNK_ROWS)
                numbers = [str(top + i) for i in range(lo, hi)]
                cells = [value_column("A", numbers, "", [
                    f"{fleet}/{name}" for fleet, name, _g in inf.meta[lo:hi]], st)]
                for letter, j, text, style, column in plan:
                    cells.append(formula_column(
                        letter, numbers, style, column_values(inf, column, lo, hi),
                        index=j, first=top, last=top + n - 1, template=text))
                yield rows_xml(numbers, cells)

        return table

    def scenario_total(self, top: int, end: int) -> list[tuple[int, str]]:
        """Totals of the counted rows of the table above (GPUs, cost, output at load) and
        their cost per million output tokens."""
        lk, st, inf = self.lk, self.st, self.inference
        mine = inf.counted()
        counted = get_column_letter(_column_index("counted"))
        flag = f'(${counted}${top}:${counted}${end}="{COUNTED}")'
        cells = [(1, _text_cell("total of counted scenarios", lk.total_label, st))]
        sums = {}
        for header, unit, key in (("GPUs", "count", "gpus"), ("cost", "USD/h", "cost_usd_per_hour"),
                                  ("cost", "USD/month", "cost_usd_per_month"),
                                  ("output", "tokens/s at load", "output_tokens_per_s")):
            j = _column_index(header, unit)
            c = get_column_letter(j)
            sums[key] = f"{c}{end + 1}"
            number_format = SCENARIO_COLUMNS[j - 2].number_format
            cells.append((j, _formula_cell(f"SUMPRODUCT({flag}*{c}{top}:{c}{end})",
                                           inf.total(key, mine), lk.total(number_format))))
        hour, out = inf.total("cost_usd_per_hour", mine), inf.total("output_tokens_per_s", mine)
        j = _column_index("cost at load")
        cells.append((j, _formula_cell(
            f'IF({sums["output_tokens_per_s"]}>0,{sums["cost_usd_per_hour"]}*TokensPerMillion/'
            f'(SecondsPerHour*{sums["output_tokens_per_s"]}),"n/a")',
            hour * CONSTANTS["TokensPerMillion"] / (CONSTANTS["SecondsPerHour"] * out)
            if out > 0 else "n/a", lk.total(SCENARIO_COLUMNS[j - 2].number_format))))
        cells.append((j + 1, _text_cell("blended", lk.total_centre, st)))
        return sorted(cells)

    def training_table(self) -> None:
        if not self.m:
            return
        lk, st, tr, tcol = self.lk, self.st, self.training, self.tcol
        self.rows.skip()
        self.section("Training runs")
        self.headers([("run", ""), *((h, u) for h, u, *_r in TRAINING_KEYS)],
                     [None, *(header_note("training", k) for _h, _u, k, _f, _t in TRAINING_KEYS)])
        for i, (fleet, name, gpu) in enumerate(tr.meta):
            cells = [(1, _text_cell(f"{fleet}/{name}", "", st))]
            for j, (_h, _u, key, number_format, template) in enumerate(TRAINING_KEYS, 2):
                value = gpu if key == "gpu" else tr.value(key, i)
                if value is not None and "SecondsPerDay" in template:
                    value = value / CONSTANTS["SecondsPerDay"]
                text = template.format(c=f"Training!{tcol[key]}{i + 2}")
                cells.append((j, _formula_cell(text, value, lk.fmt(number_format))))
            self.rows.add(cells)
        mine = tr.counted()
        cells = [(1, _text_cell("total of counted runs", lk.total_label, st))]
        for j, (_h, _u, key, number_format, _t) in enumerate(TRAINING_KEYS, 2):
            if key in ("gpu_hours", "train_cost_usd"):
                cells.append((j, _formula_cell(
                    self.counted_sum(None, self.trng(key), training=True),
                    tr.total(key, mine), lk.total(number_format))))
        self.rows.add(cells)

    def charts(self, top: int, last_text: int) -> int:
        """Memory and cost charts after a page break; returns the last row they cover."""
        shown = min(self.n, CHART_ROWS)
        if not (shown and self.decorate):
            return last_text
        ws, chart_row = self.ws, last_text + 3
        ws.row_breaks.append(Break(id=last_text + 1))
        suffix = f" (first {shown})" if shown < self.n else ""
        names = Reference(ws, min_col=1, min_row=top, max_row=top + shown - 1)
        memory = BarChart()
        memory.type, memory.grouping, memory.overlap = "bar", "stacked", 100
        memory.title = "Memory per GPU [GiB]" + suffix
        memory.y_axis.title = "GiB"
        for header in MEMORY_HEADERS:
            c = _column_index(header)
            memory.series.append(Series(Reference(ws, min_col=c, min_row=top,
                                                  max_row=top + shown - 1), title=header))
        memory.set_categories(names)
        cost = BarChart()
        cost.type = "bar"
        cost.title = "Cost per scenario [USD/month]" + suffix
        cost.y_axis.title = "USD/month"
        cost.series.append(Series(Reference(ws, min_col=_column_index("cost", "USD/month"),
                                            min_row=top, max_row=top + shown - 1),
                                  title="USD/month"))
        cost.set_categories(names)
        cost.legend = None
        for chart, anchor in ((memory, "A"), (cost, "I")):
            chart.height, chart.width = 11.0, 16
            chart.x_axis.delete = chart.y_axis.delete = False
            ws.add_chart(chart, f"{anchor}{chart_row}")
        return chart_row + 22

    def finish(self, last_row: int) -> None:
        """Notes, column widths and print setup (the layout pass)."""
        ws = self.ws
        for cell, text in self.notes.items():
            note(ws[cell], text)
        longest = max((len(f"{f}/{nm}") for f, nm, _g in (*self.inference.meta,
                                                          *self.training.meta)), default=0)
        ws.column_dimensions["A"].width = min(60, max(34, longest + 2))
        for j in range(2, SUMMARY_WIDTH + 1):
            ws.column_dimensions[get_column_letter(j)].width = 12.5
        ws.column_dimensions[get_column_letter(_column_index("basis"))].width = 19
        print_setup(ws, f"A1:{get_column_letter(SUMMARY_WIDTH)}{last_row}")
        ws.print_options.horizontalCentered = True
        ws.oddFooter.center.text = "&P / &N"

    def render(self) -> _Rows:
        self.heading()
        self.assumptions()
        self.rollup()
        self.plans()
        top, _end = self.scenarios()
        self.training_table()
        last_text = self.rows.row
        last_row = self.charts(top, last_text)
        if self.decorate:
            self.finish(last_row)
        return self.rows


CONVENTIONS = (
    "GiB = 2^30 bytes; cost per month = GPUs × price per GPU-hour × hours per month; totals add "
    "the counted scenarios only (an option that is not its group's chosen one is listed, greyed, "
    "and never added); 'meets target': the serving model's SLO verdict at the target rate "
    "(TTFT at the SLO percentile and mean TPOT within the objectives, not saturated); figures "
    "'at load' (cost per million output tokens, output, TTFT, TPOT) are the serving model's at "
    "the load named in 'basis'; efficiencies: the catalog's serving figures (or a calibration "
    "profile); every figure is a live formula over the Scenarios, Training, GPUs and Plan "
    "sheets (hover a header for its formula; the value shown before recalculation is the "
    "planner's).")


class _Cells(dict):  # type: ignore[type-arg]
    """``{column}`` of a Summary template → that column's cell on the Scenarios sheet (row 2,
    shifted per row by the shared formula)."""

    def __init__(self, col: dict[str, str]) -> None:
        super().__init__()
        self.col = col

    def __missing__(self, key: str) -> str:
        return f"Scenarios!{self.col[key]}2"


def column_values(gather: Gather, column: SummaryColumn, lo: int, hi: int) -> np.ndarray:
    """The values Python computes for rows ``lo:hi`` of a Summary scenario column (its
    formula over the gathered Scenarios figures), as one array; a row whose figures could not
    be evaluated gets None."""
    if column.reads == ("gpu",):
        return np.array([gpu for _f, _n, gpu in gather.meta[lo:hi]], dtype=object)
    n = hi - lo
    raw = {}
    bad = np.zeros(n, dtype=bool)
    for key in column.reads:
        got = gather.columns[key][lo:hi]
        got = got + [None] * (n - len(got))
        if None in got:
            bad |= np.fromiter((v is None for v in got), dtype=bool, count=n)
        raw[key] = got
    if bad.all():
        return np.full(n, None, dtype=object)
    if bad.any():
        raw = {k: [0 if v is None else v for v in got] for k, got in raw.items()}
    if column.compute is None:
        (key,) = column.reads
        out = np.asarray(raw[key])
        out = out.astype(bool) if key == "fits" else (
            out.astype(np.int64) if key == "gpus" else out.astype(float))
    else:
        out = column.compute({k: np.asarray(v) for k, v in raw.items()})
    if bad.any():
        out = out.astype(object)
        out[bad] = None
    return out


def write_summary(ws: Any, info: SummaryInfo, inference: Gather, training: Gather,
                  styles: Styles, gpu_rows: dict[str, int], training_rows: int
                  ) -> tuple[Iterator[str], int]:
    """The Summary (see the module's docstring) as a generator of row XML run after the
    scenario sheets have streamed (their figures are in ``inference`` and ``training``), and
    its last row. Printed landscape, one page wide."""
    looks = _Looks(styles)

    def render(decorate: bool) -> _Rows:
        return _Summary(ws, info, inference, training, looks, gpu_rows, training_rows,
                        decorate).render()

    last = len(render(True))

    def body() -> Iterator[str]:
        for part in render(False).rows:
            if callable(part):
                yield from part()
            else:
                yield part

    return body(), last
