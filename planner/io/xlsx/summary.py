"""The Summary sheet: the page a finance reader signs.

It exists apart from :mod:`planner.io.xlsx.workbook` because it is a report of its own, not a
table of columns: a title with the fleets, export date and planner version; Assumptions (the
GPUs used with their price, whether the catalog marks it as an example, efficiencies, GPUs
counted and their monthly cost; engines; hours per month; conventions); a roll-up per fleet
with a grand total; the plan of each fleet with a horizon (summarised from its Plan sheet);
the inference scenarios, each marked counted or not (an option that is not the chosen one of
its group is listed, greyed, and left out of every total: :func:`planner.service.compare.counted`),
with its verdict at the modelled load (meets its target, cost per million output tokens at
that load and the load's basis, TTFT and TPOT at the load) and a total of the counted rows;
the training runs and their total; then, after a page break, a memory and a cost chart
(:mod:`planner.io.xlsx.summary_charts`).

Every figure is a live formula over the Scenarios, Training, GPUs and Plan sheets, written with
the value the planner computed (so a viewer that does not recalculate shows the numbers).
Totals that depend on a name (a fleet, a GPU) compare names for equality with ``EXACT`` inside
``SUMPRODUCT``, never through a ``SUMIFS``/``COUNTIFS`` criterion, which reads ``* ? ~`` as
wildcards and a leading ``< > =`` as an operator (issue 28).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from planner.compute.verdict import UNMEASURED_NOTE, gpu_measured
from planner.io.xlsx.layout import GPU_SHEET, letters
from planner.io.xlsx.plan import PlanLine
from planner.io.xlsx.sheetxml import (
    Styles,
    cell_xml,
    formula_column,
    rows_xml,
    value_column,
)
from planner.io.xlsx.style import RED, header_note, note, print_setup
from planner.io.xlsx.summary_cells import (
    CONVENTIONS,
    Looks,
    Rows,
    exact_criterion,
    formula_cell,
    text_cell,
)
from planner.io.xlsx.summary_charts import add_charts
from planner.io.xlsx.summary_columns import (
    CHUNK_ROWS,
    CONSTANTS,
    COUNTED,
    SCENARIO_COLUMNS,
    SUMMARY_WIDTH,
    TRAINING_KEYS,
    USD,
    USD_CENTS,
    Cells,
    Gather,
    column_index,
    column_values,
)
from planner.spec.domain import GpuInfo
from planner.spec.gpu import serving_figures


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


class _Summary:
    """One rendering pass of the Summary: ``decorate`` (the layout pass, on the openpyxl
    sheet: merges, notes, charts, print setup) or the row XML pass."""

    def __init__(self, ws: Any, info: SummaryInfo, inference: Gather, training: Gather,
                 looks: Looks, gpu_rows: dict[str, int], training_rows: int,
                 decorate: bool) -> None:
        self.ws, self.info, self.inference, self.training = ws, info, inference, training
        self.lk, self.st = looks, looks.st
        self.gpu_rows = gpu_rows
        self.decorate = decorate
        self.rows = Rows(looks.st, dry=decorate, ws=ws)
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
        r = self.rows.add([(j, text_cell(h, lk.head, st)) for j, (h, _u) in enumerate(items, 1)],
                          height=30)
        for j, text in enumerate(explain, 1):
            if text:
                self.notes[f"{get_column_letter(j)}{r}"] = text
        self.rows.add([(j, text_cell(u, lk.unit, st)) for j, (_h, u) in enumerate(items, 1)],
                      height=24 if any(len(u) > 14 for _h, u in items) else None)

    def section(self, text: str) -> None:
        self.rows.add([(1, text_cell(text, self.lk.section, self.st))])

    def heading(self) -> None:
        lk, st, info = self.lk, self.st, self.info
        self.rows.add([(1, text_cell("LLM capacity and cost report", lk.title, st))],
                      height=24)
        self.rows.add([(1, text_cell(
            f"Fleet{'s' if len(info.fleets) != 1 else ''}: {', '.join(info.fleets) or '(none)'}"
            f"   ·   exported {info.exported}   ·   planner {info.version}", lk.bold, st))])
        self.rows.skip()

    def assumptions(self) -> None:
        lk, st, info = self.lk, self.st, self.info
        self.section("Assumptions")
        examples = [g.name for g in info.gpus if g.spec.price_is_example]
        if examples:
            self.rows.add([(1, text_cell(
                "EXAMPLE PRICES: the prices of " + ", ".join(examples) + " are the catalog's "
                "examples, not quotes; replace them in the GPUs sheet (or planner gpu set) "
                "before using these costs.", lk.warn, st))])
        unmeasured = [g.name for g in info.gpus if not gpu_measured(g.spec)]
        if unmeasured:
            self.rows.add([(1, text_cell(
                "LESS SURE: the serving efficiencies of " + ", ".join(unmeasured) + " are the "
                "planner's defaults, not measured on the part (" + UNMEASURED_NOTE + "); "
                "their latencies and GPU counts are less sure than the others'.", lk.warn,
                st))])
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
        cells = [(1, text_cell(g.name, "", st))]
        if gr is not None:
            cells += [
                (2, formula_cell(f"GPUs!{gl['price_usd_per_hour']}{gr}",
                                  g.spec.price_usd_per_hour, lk.fmt(USD_CENTS))),
                (3, formula_cell(f'IF(GPUs!{gl["price_is_example"]}{gr},"example","set")',
                                  "example" if g.spec.price_is_example else "set",
                                  lk.warn if g.spec.price_is_example else "")),
                (4, formula_cell(f"GPUs!{gl['matmul_efficiency']}{gr}",
                                  serving["gpu_matmul_efficiency_16bit"], lk.fmt("0.00"))),
                (5, formula_cell(f"GPUs!{gl['bandwidth_efficiency']}{gr}",
                                  serving["gpu_bandwidth_efficiency"], lk.fmt("0.00"))),
                (6, formula_cell(f"GPUs!{gl['usable_memory_gib']}{gr}",
                                  serving["gpu_usable_memory_bytes"] / 2**30, lk.fmt("0.0")))]
        name = exact_criterion(g.name, self.gpu_rows)
        match = f"EXACT({self.rng('gpu')},{name})"
        inf = self.inference
        mine = [i for i in inf.counted() if inf.meta[i][2] == g.name
                and not inf.disaggregated(i)]
        # a disaggregated deployment's pools count on their own types: the prefill pool on
        # the row's GPU, the decode pool on decode_gpu (the row's GPU where it is "same")
        pool_gpus, pool_cost = inf.pool_gpus_on(g.name, inf.counted())
        aggregated = f"({self.rng('serving_mode_code')}<>1)"
        pooled = f"({self.rng('serving_mode_code')}=1)"
        decode_match = (f"(({self.rng('decode_gpu_same')}=1)*{match}"
                        f"+({self.rng('decode_gpu_same')}=0)*EXACT({self.rng('decode_gpu')},"
                        f"{name}))")
        hours = self.rng("hours_per_month")
        gpus = "+".join((
            self.counted_sum(match, self.rng("gpus"), extra=aggregated),
            self.counted_sum(match, self.rng("prefill_gpus"), extra=pooled),
            self.counted_sum(decode_match, self.rng("decode_gpus"), extra=pooled)))
        cost = "+".join((
            self.counted_sum(match, self.rng("cost_usd_per_month"), extra=aggregated),
            self.counted_sum(match, f"{self.rng('prefill_gpus')}*"
                             f"{self.rng('price_usd_per_gpu_hour')}*{hours}", extra=pooled),
            self.counted_sum(decode_match, f"{self.rng('decode_gpus')}*"
                             f"{self.rng('decode_gpu_price_usd_per_gpu_hour')}*{hours}",
                             extra=pooled)))
        cells += [(7, formula_cell(gpus, inf.total("gpus", mine) + pool_gpus,
                                    lk.fmt("#,##0"))),
                  (8, formula_cell(cost, inf.total("cost_usd_per_month", mine) + pool_cost,
                                    lk.fmt(USD)))]
        return cells

    def statements(self) -> None:
        lk, st, info = self.lk, self.st, self.info
        for label, text in (
                ("Serving engines", _engines_text(info.engines)),
                ("A month", _month_text(info.hours_per_month)),
                ("Conventions", CONVENTIONS)):
            self.rows.add([(1, text_cell(label, lk.label, st)),
                           (2, text_cell(text, lk.wrap if label == "Conventions" else "", st))],
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
            (1, text_cell(fleet, "", st)),
            (2, formula_cell(self.counted_sum(match, None), len(mine), lk.fmt("#,##0"))),
            (3, formula_cell(self.counted_sum(match, None, extra=f"({self.rng('fits')}=FALSE)"),
                              not_fitting, lk.fmt("#,##0"))),
            (4, formula_cell(self.counted_sum(match, self.rng("deployment_gpus")),
                              inf.total("deployment_gpus", mine), lk.fmt("#,##0"))),
            (5, formula_cell(self.counted_sum(match, self.rng("cost_usd_per_hour")),
                              inf.total("cost_usd_per_hour", mine), lk.fmt(USD_CENTS))),
            (6, formula_cell(self.counted_sum(match, self.rng("cost_usd_per_month")),
                              inf.total("cost_usd_per_month", mine), lk.fmt(USD))),
            (7, formula_cell(self.counted_sum(tmatch, self.trng("train_cost_usd"),
                                               training=True),
                              tr.total("train_cost_usd", tr.counted(fleet)), lk.fmt(USD))),
            (8, formula_cell(self.counted_sum(match, self.rng("output_tokens_per_s"))
                              + "*SecondsPerDay/TokensPerMillion",
                              inf.total("output_tokens_per_s", mine) * per_day
                              / CONSTANTS["TokensPerMillion"], lk.fmt("#,##0.0"))),
            (9, formula_cell(f"SUMPRODUCT({match}*({self.rng('chosen')}=FALSE))", options,
                              lk.fmt("#,##0")))]

    def total_row(self, first: int, last: int) -> list[tuple[int, str]]:
        """The grand total of the roll-up: each column's sum over the fleet rows."""
        lk, st, inf, tr = self.lk, self.st, self.inference, self.training
        mine = inf.counted()
        values = [len(mine), sum(1 for i in mine if inf.value("fits", i) is False),
                  inf.total("deployment_gpus", mine), inf.total("cost_usd_per_hour", mine),
                  inf.total("cost_usd_per_month", mine),
                  tr.total("train_cost_usd", tr.counted()),
                  inf.total("output_tokens_per_s", mine) * CONSTANTS["SecondsPerDay"]
                  / CONSTANTS["TokensPerMillion"],
                  len(inf.chosen) - sum(inf.chosen)]
        formats = ("#,##0", "#,##0", "#,##0", USD_CENTS, USD, USD, "#,##0.0", "#,##0")
        cells = [(1, text_cell("total, all fleets", lk.total_label, st))]
        for j, (value, number_format) in enumerate(zip(values, formats, strict=True), 2):
            c = get_column_letter(j)
            cells.append((j, formula_cell(f"SUM({c}{first}:{c}{last})", value,
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
            cells = [(1, text_cell(p.fleet, "", st)),
                     (2, formula_cell(*p.first_month, lk.centre)),
                     (3, formula_cell(*p.last_month, lk.centre)),
                     (4, cell_xml("\x00REF", p.months, lk.fmt("#,##0"), st)),
                     (5, text_cell(p.pricing, lk.centre, st)),
                     (6, formula_cell(*p.first_gpus, lk.fmt("#,##0"))),
                     (7, formula_cell(*p.peak_gpus, lk.fmt("#,##0"))),
                     (8, formula_cell(*p.first_cost, lk.fmt(USD))),
                     (9, formula_cell(*p.last_cost, lk.fmt(USD))),
                     (10, formula_cell(*p.total_cost, lk.total(USD)))]
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
            fits = get_column_letter(column_index("fits"))
            counted = get_column_letter(column_index("counted"))
            area = f"A{top}:{get_column_letter(SUMMARY_WIDTH)}{end}"
            self.ws.conditional_formatting.add(area, FormulaRule(
                formula=[f"${fits}{top}=FALSE"], fill=RED))
            self.ws.conditional_formatting.add(area, FormulaRule(
                formula=[f'${counted}{top}<>"{COUNTED}"'],
                font=Font(italic=True, color="808080")))
        return top, end

    def scenario_body(self, top: int) -> Callable[[], Iterator[str]]:
        col, inf, lk, st, n = self.col, self.inference, self.lk, self.st, self.n
        cells_of = Cells(col)
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
        counted = get_column_letter(column_index("counted"))
        flag = f'(${counted}${top}:${counted}${end}="{COUNTED}")'
        cells = [(1, text_cell("total of counted scenarios", lk.total_label, st))]
        sums = {}
        for header, unit, key in (("GPUs", "count", "deployment_gpus"),
                                  ("cost", "USD/h", "cost_usd_per_hour"),
                                  ("cost", "USD/month", "cost_usd_per_month"),
                                  ("output", "tokens/s at load", "output_tokens_per_s")):
            j = column_index(header, unit)
            c = get_column_letter(j)
            sums[key] = f"{c}{end + 1}"
            number_format = SCENARIO_COLUMNS[j - 2].number_format
            cells.append((j, formula_cell(f"SUMPRODUCT({flag}*{c}{top}:{c}{end})",
                                           inf.total(key, mine), lk.total(number_format))))
        hour, out = inf.total("cost_usd_per_hour", mine), inf.total("output_tokens_per_s", mine)
        j = column_index("cost at load")
        cells.append((j, formula_cell(
            f'IF({sums["output_tokens_per_s"]}>0,{sums["cost_usd_per_hour"]}*TokensPerMillion/'
            f'(SecondsPerHour*{sums["output_tokens_per_s"]}),"n/a")',
            hour * CONSTANTS["TokensPerMillion"] / (CONSTANTS["SecondsPerHour"] * out)
            if out > 0 else "n/a", lk.total(SCENARIO_COLUMNS[j - 2].number_format))))
        cells.append((j + 1, text_cell("blended", lk.total_centre, st)))
        return sorted(cells)

    def training_table(self) -> None:
        if not self.m:
            return
        lk, st, tr = self.lk, self.st, self.training
        self.rows.skip()
        self.section("Training runs")
        self.headers([("run", ""), *((h, u) for h, u, *_r in TRAINING_KEYS)],
                     [None, *(header_note("training", k) for _h, _u, k, _f, _t in TRAINING_KEYS)])
        for i, (fleet, name, gpu) in enumerate(tr.meta):
            self.rows.add([(1, text_cell(f"{fleet}/{name}", "", st)),
                           *self._training_cells(i, gpu)])
        mine = tr.counted()
        cells = [(1, text_cell("total of counted runs", lk.total_label, st))]
        for j, (_h, _u, key, number_format, _t) in enumerate(TRAINING_KEYS, 2):
            if key in ("gpu_hours", "train_cost_usd"):
                cells.append((j, formula_cell(
                    self.counted_sum(None, self.trng(key), training=True),
                    tr.total(key, mine), lk.total(number_format))))
        self.rows.add(cells)

    def _training_cells(self, i: int, gpu: str) -> list[tuple[int, str]]:
        """Training run ``i``'s figures (its GPU, durations in days), each a reference."""
        cells: list[tuple[int, str]] = []
        for j, (_h, _u, key, number_format, template) in enumerate(TRAINING_KEYS, 2):
            value = gpu if key == "gpu" else self.training.value(key, i)
            if value is not None and "SecondsPerDay" in template:
                value = float(value) / CONSTANTS["SecondsPerDay"]
            text = template.format(c=f"Training!{self.tcol[key]}{i + 2}")
            cells.append((j, formula_cell(text, value, self.lk.fmt(number_format))))
        return cells

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
        ws.column_dimensions[get_column_letter(column_index("basis"))].width = 19
        print_setup(ws, f"A1:{get_column_letter(SUMMARY_WIDTH)}{last_row}")
        ws.print_options.horizontalCentered = True
        ws.oddFooter.center.text = "&P / &N"

    def render(self) -> Rows:
        self.heading()
        self.assumptions()
        self.rollup()
        self.plans()
        top, _end = self.scenarios()
        self.training_table()
        last_text = self.rows.row
        last_row = add_charts(self.ws, top, last_text, self.n, all(self.inference.chosen)) \
            if self.decorate else last_text
        if self.decorate:
            self.finish(last_row)
        return self.rows


def _engines_text(engines: dict[str, int]) -> str:
    """The serving engines in use with their scenario counts, by name; ``(none)`` if none."""
    return ", ".join(f"{e} ({k} scenario{'s' if k != 1 else ''})"
                     for e, k in sorted(engines.items())) or "(none)"


def _month_text(hours_per_month: list[float]) -> str:
    """The hours in a month: the one every scenario uses, or each used; ``-`` if none."""
    hours = sorted(set(hours_per_month))
    return (f"{hours[0]:g} hours (every scenario)" if len(hours) == 1 else
            ", ".join(f"{h:g}" for h in hours) + " hours (per scenario)") if hours else "-"


def write_summary(ws: Any, info: SummaryInfo, inference: Gather, training: Gather,
                  styles: Styles, gpu_rows: dict[str, int], training_rows: int
                  ) -> tuple[Iterator[str], int]:
    """The Summary (see the module's docstring) as a generator of row XML run after the
    scenario sheets have streamed (their figures are in ``inference`` and ``training``), and
    its last row. Printed landscape, one page wide."""
    looks = Looks(styles)

    def render(decorate: bool) -> Rows:
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
