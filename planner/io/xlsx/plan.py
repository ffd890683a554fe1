"""The workbook's Plan sheet (issue 15 item 2, laid out for print in issue 24): a fleet's
months × GPU types, its total over the horizon, and its workloads month by month.

Layout (one sheet per fleet with a horizon, ``Plan`` or ``Plan FLEET``):

- row 1: what the sheet is (fleet, months, pricing); row 2: hours per month (``B2``) and the
  conventions;
- the month table: a two-row header (row 3: each GPU type's name over its three columns, row 4:
  GPUs, price in USD per GPU-hour, cost in USD; then the month's GPUs and cost over all
  types), one row per month from row 5, then a total row (GPU-months and USD over the
  horizon). With on-demand or spot pricing the GPUs are live ``SUMPRODUCT`` formulas over
  the workload rows below, comparing each workload's GPU with the type's name cell of row 3
  by ``EXACT`` (a name is never formula text, nor a pattern), and the costs are
  ``GPUs × price × hours per month``; with reserved pricing the GPUs billed (commitments
  outlive a month's need) and their costs are values. A price that is the GPU's catalog
  price is a reference to its cell on the GPUs sheet (edit it there and the plan follows); a
  price from the GPU's price schedule (``planner gpu price``) is a value, in blue. Every
  formula carries its cached value, so a viewer that does not recalculate shows the numbers;
- the workload tables below it: per counted workload its model, GPU, basis and demand, then
  the GPUs it needs in each month, and in a second table its requests/s in each month (values
  from the serving model).

The rows are rendered as SpreadsheetML (:mod:`planner.io.xlsx.sheetxml`), so 10,000 workloads ×
24 months cost about a microsecond per cell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from planner.compute.plan import PlanResult
from planner.io.xlsx.sheetxml import Styles, cell_xml, row_xml
from planner.io.xlsx.style import FILLS, print_setup

HEAD_ROW, SUB_ROW, FIRST_MONTH_ROW = 3, 4, 5
"""The month table's header rows and its first month's row."""
WORKLOAD_MONTH_COL = 6
"""Column of the first month in the workload tables (F; A to E describe the workload)."""
DEMAND_WIDTH = 26
"""Width of the demand column (characters); a longer demand wraps onto more lines."""


@dataclass(frozen=True, slots=True)
class PlanLine:
    """One fleet's plan as the Summary shows it: formulas over its Plan sheet (without the
    leading ``=``) with the values the plan computed."""

    fleet: str
    pricing: str
    months: int
    first_month: tuple[str, str]
    last_month: tuple[str, str]
    first_gpus: tuple[str, int]
    peak_gpus: tuple[str, int]
    first_cost: tuple[str, float]
    last_cost: tuple[str, float]
    total_cost: tuple[str, float]


@dataclass(frozen=True, slots=True)
class CatalogPrice:
    """A GPU's on-demand catalog price and its cell on the GPUs sheet (``GPUs!$K$12``)."""

    usd_per_gpu_hour: float
    cell: str


def sheet_title(fleet: str, single: bool) -> str:
    """``Plan`` for the only plan, else ``Plan FLEET`` without the characters a sheet title
    cannot hold, at most 31 characters."""
    return "Plan" if single else ("Plan " + re.sub(r"[\[\]:*?/\\']", "_", fleet))[:31]


def _formula(ref: str, formula: str, cached: float | str, style: str) -> str:
    """A formula cell with its cached value."""
    value = (f' t="str"><f>{escape(formula)}</f><v>{escape(cached)}</v></c>'
             if isinstance(cached, str) else
             f"><f>{escape(formula)}</f><v>{float(cached)!r}</v></c>")
    return f'<c r="{ref}"{style}' + value


class _Looks:
    """The Plan sheet's cell styles, the Summary's looks (registered once per workbook)."""

    def __init__(self, st: Styles) -> None:
        face = "Calibri"
        self.st = st
        blue = PatternFill("solid", start_color=FILLS["meta"], end_color=FILLS["meta"])
        light = PatternFill("solid", start_color="8EA9DB", end_color="8EA9DB")
        centre = Alignment(horizontal="center", vertical="center", wrap_text=True)
        self.title = st.attr(look="plan title", font=Font(name=face, bold=True, size=14))
        self.section = st.attr(look="section", font=Font(name=face, bold=True, size=12,
                                                          color="305496"))
        self.head = st.attr(look="head", font=Font(name=face, bold=True, color="FFFFFF"),
                            fill=blue, alignment=centre)
        self.sub = st.attr(look="plan sub", font=Font(name=face, bold=True, color="FFFFFF",
                                                      size=9), fill=light, alignment=centre)
        self.wrap = st.attr(look="plan wrap", alignment=Alignment(wrap_text=True,
                                                                  vertical="bottom"))
        self.bold = st.attr(look="bold", font=Font(name=face, bold=True))
        self.count = st.attr("#,##0")
        self.price = st.attr('"$"#,##0.00')
        self.scheduled = st.attr('"$"#,##0.00', look="scheduled price",
                                 font=Font(name=face, color="2F75B5", bold=True))
        self.usd = st.attr('"$"#,##0')
        self.rate = st.attr("#,##0.00")
        self.total_count = st.attr("#,##0", look="total #,##0", font=Font(name=face, bold=True))
        self.total_usd = st.attr('"$"#,##0', look='total "$"#,##0',
                                 font=Font(name=face, bold=True))

    def text(self, ref: str, value: Any, style: str = "") -> str:
        return cell_xml(ref, value, style, self.st)


@dataclass(slots=True)
class _Layout:
    """Where each part of one plan's sheet goes."""

    n_types: int
    n_months: int
    n_workloads: int

    @property
    def last_month_row(self) -> int:
        return FIRST_MONTH_ROW + self.n_months - 1

    @property
    def total_row(self) -> int:
        return self.last_month_row + 1

    @property
    def gpus_head(self) -> int:
        """Header row of the workloads' GPUs table (a section title above it)."""
        return self.total_row + 3

    @property
    def rates_head(self) -> int:
        return self.gpus_head + max(self.n_workloads, 1) + 3

    @property
    def last_row(self) -> int:
        return self.rates_head + max(self.n_workloads, 1)

    def type_letters(self, k: int) -> tuple[str, str, str]:
        """(GPUs, price, cost) columns of GPU type ``k``."""
        return tuple(get_column_letter(2 + 3 * k + j) for j in range(3))  # type: ignore

    @property
    def total_letters(self) -> tuple[str, str]:
        """(GPUs, cost) columns of the month's total."""
        return get_column_letter(2 + 3 * self.n_types), get_column_letter(3 + 3 * self.n_types)

    @property
    def last_column(self) -> int:
        return max(3 + 3 * self.n_types, WORKLOAD_MONTH_COL + self.n_months - 1)


def _price_cell(ref: str, plan: PlanResult, k: int, m: int,
                catalog: Mapping[str, CatalogPrice], lk: _Looks) -> str:
    """A month's price of GPU type ``k``: a reference to the GPUs sheet when it is the
    catalog's on-demand price, else the scheduled price as a value (blue)."""
    usd = float(plan.price_usd_per_gpu_hour_by_type[k, m])
    listed = catalog.get(plan.gpu_types[k])
    if plan.pricing == "on-demand" and listed is not None and listed.usd_per_gpu_hour == usd:
        return _formula(ref, listed.cell, usd, lk.price)
    return lk.text(ref, usd, lk.scheduled)


def _month_row(plan: PlanResult, m: int, lay: _Layout, catalog: Mapping[str, CatalogPrice],
               lk: _Looks) -> str:
    r = FIRST_MONTH_ROW + m
    live = plan.pricing != "reserved"
    first_w, last_w = lay.gpus_head + 1, lay.gpus_head + max(lay.n_workloads, 1)
    wcol = get_column_letter(WORKLOAD_MONTH_COL + m)
    cells = [lk.text(f"A{r}", plan.months[m], lk.bold)]
    for k in range(lay.n_types):
        g, p, c = lay.type_letters(k)
        gpus = int(plan.gpus_billed_by_type[k, m])
        if live:  # the type's name cell of row 3, compared exactly (never a criterion)
            cells.append(_formula(f"{g}{r}", f"SUMPRODUCT(EXACT($C${first_w}:$C${last_w},"
                                  f"{g}${HEAD_ROW})*{wcol}${first_w}:{wcol}${last_w})", gpus,
                                  lk.count))
        else:
            cells.append(lk.text(f"{g}{r}", gpus, lk.count))
        cells.append(_price_cell(f"{p}{r}", plan, k, m, catalog, lk))
        cost = float(plan.cost_usd_by_type[k, m])
        cells.append(_formula(f"{c}{r}", f"{g}{r}*{p}{r}*$B$2", cost, lk.usd) if live
                     else lk.text(f"{c}{r}", cost, lk.usd))
    tg, tc = lay.total_letters
    gpu_refs = "+".join(f"{lay.type_letters(k)[0]}{r}" for k in range(lay.n_types)) or "0"
    cost_refs = "+".join(f"{lay.type_letters(k)[2]}{r}" for k in range(lay.n_types)) or "0"
    cells.append(_formula(f"{tg}{r}", gpu_refs, int(plan.total_gpus[m]), lk.count))
    cells.append(_formula(f"{tc}{r}", cost_refs, float(plan.total_cost_usd[m]), lk.usd))
    return row_xml(r, cells)


def _month_table(plan: PlanResult, lay: _Layout, catalog: Mapping[str, CatalogPrice],
                 lk: _Looks) -> list[str]:
    """Header rows, month rows and the total row of the month table."""
    head = [lk.text(f"A{HEAD_ROW}", "month", lk.head)]
    sub = [lk.text(f"A{SUB_ROW}", "", lk.sub)]
    for k, name in enumerate(plan.gpu_types):
        g, p, c = lay.type_letters(k)
        head += [lk.text(f"{g}{HEAD_ROW}", name, lk.head), lk.text(f"{p}{HEAD_ROW}", "", lk.head),
                 lk.text(f"{c}{HEAD_ROW}", "", lk.head)]
        sub += [lk.text(f"{g}{SUB_ROW}", "GPUs" if plan.pricing != "reserved" else
                        "GPUs billed", lk.sub),
                lk.text(f"{p}{SUB_ROW}", "price [USD/GPU-h]", lk.sub),
                lk.text(f"{c}{SUB_ROW}", "cost [USD]", lk.sub)]
    tg, tc = lay.total_letters
    head += [lk.text(f"{tg}{HEAD_ROW}", "all GPU types", lk.head),
             lk.text(f"{tc}{HEAD_ROW}", "", lk.head)]
    sub += [lk.text(f"{tg}{SUB_ROW}", "GPUs", lk.sub), lk.text(f"{tc}{SUB_ROW}", "cost [USD]",
                                                                 lk.sub)]
    rows = [row_xml(HEAD_ROW, head), row_xml(SUB_ROW, sub)]
    rows += [_month_row(plan, m, lay, catalog, lk) for m in range(lay.n_months)]
    rows.append(_total_row(plan, lay, lk))
    return rows


def _total_row(plan: PlanResult, lay: _Layout, lk: _Looks) -> str:
    """Sums over the horizon: GPU-months and USD per type and in all."""
    r, first, last = lay.total_row, FIRST_MONTH_ROW, lay.last_month_row
    cells = [lk.text(f"A{r}", f"total, {lay.n_months} months (GPUs: GPU-months)", lk.bold)]
    columns = [(*lay.type_letters(k)[::2], plan.gpus_billed_by_type[k].sum(),
                plan.cost_usd_by_type[k].sum()) for k in range(lay.n_types)]
    columns.append((*lay.total_letters, plan.total_gpus.sum(), plan.total_cost_usd.sum()))
    for g, c, gpu_months, usd in columns:
        cells.append(_formula(f"{g}{r}", f"SUM({g}{first}:{g}{last})", int(gpu_months),
                              lk.total_count))
        cells.append(_formula(f"{c}{r}", f"SUM({c}{first}:{c}{last})", float(usd),
                              lk.total_usd))
    return row_xml(r, cells)


def _workload_table(plan: PlanResult, head: int, title: str, values: list[list[Any]],
                    style: str, lk: _Looks) -> list[str]:
    """A section title, a header row and one row per workload of ``values`` by month."""
    rows = [row_xml(head - 1, [lk.text(f"A{head - 1}", title, lk.section)])]
    header = ["workload", "model", "GPU", "basis", "demand", *plan.months]
    rows.append(row_xml(head, [lk.text(f"{get_column_letter(i)}{head}", h, lk.head)
                               for i, h in enumerate(header, 1)]))
    letters = [get_column_letter(WORKLOAD_MONTH_COL + m) for m in range(len(plan.months))]
    for w, row_values in enumerate(values):
        r = head + 1 + w
        cells = [lk.text(f"A{r}", plan.workloads[w]), lk.text(f"B{r}", plan.workload_models[w]),
                 lk.text(f"C{r}", plan.workload_gpus[w]), lk.text(f"D{r}", plan.basis[w]),
                 lk.text(f"E{r}", plan.demand[w] or None, lk.wrap)]
        cells += [f'<c r="{col}{r}"{style}><v>{v!r}</v></c>'
                  for col, v in zip(letters, row_values, strict=True)]
        rows.append(row_xml(r, cells))
    return rows


def plan_rows(plan: PlanResult, styles: Styles,
              catalog: Mapping[str, CatalogPrice] | None = None
              ) -> tuple[list[str], int, int]:
    """(row XML, last row, last column) of one plan's sheet."""
    lk = _Looks(styles)
    lay = _Layout(len(plan.gpu_types), len(plan.months), len(plan.workloads))
    months = plan.months
    title = (f"Plan of fleet {plan.fleet}: {months[0]} to {months[-1]} ({len(months)} months),"
             f" {plan.pricing} pricing")
    rows = [row_xml(1, [lk.text("A1", title, lk.title)]),
            row_xml(2, [lk.text("A2", "hours per month", lk.bold),
                        lk.text("B2", plan.hours_per_month, lk.count),
                        lk.text("C2", "h per GPU (8760 / 12). Cost = GPUs × price × hours per "
                                "month. GPUs: the serving model's gpus_needed at each month's "
                                "rate. Prices: the GPUs sheet's; in blue, a scheduled price "
                                "(planner gpu price).")])]
    rows += _month_table(plan, lay, catalog or {}, lk)
    rows += _workload_table(plan, lay.gpus_head, "GPUs needed by workload and month "
                            "(counted workloads)", [[int(v) for v in row]
                                                    for row in plan.gpus.tolist()],
                            lk.count, lk)
    rows += _workload_table(plan, lay.rates_head, "Demand by workload and month "
                            "[requests/s]", plan.rate_requests_per_s.tolist(), lk.rate, lk)
    return rows, lay.last_row, lay.last_column


def plan_line(plan: PlanResult, title: str) -> PlanLine:
    """The Summary's line of one plan: references into its sheet with the plan's values."""
    lay = _Layout(len(plan.gpu_types), len(plan.months), len(plan.workloads))
    sheet = "'" + title.replace("'", "''") + "'!"
    tg, tc = lay.total_letters
    first, last = FIRST_MONTH_ROW, lay.last_month_row
    gpus, cost = plan.total_gpus, plan.total_cost_usd
    return PlanLine(
        plan.fleet, plan.pricing, len(plan.months),
        (f"{sheet}$A${first}", plan.months[0]), (f"{sheet}$A${last}", plan.months[-1]),
        (f"{sheet}${tg}${first}", int(gpus[0])),
        (f"MAX({sheet}${tg}${first}:${tg}${last})", int(gpus.max())),
        (f"{sheet}${tc}${first}", float(cost[0])), (f"{sheet}${tc}${last}", float(cost[-1])),
        (f"{sheet}${tc}${lay.total_row}", float(cost.sum())))


def _decorate(ws: Any, plan: PlanResult, n_rows: int, n_cols: int) -> None:
    """Merged type headers, column widths, frozen panes and the print setup."""
    lay = _Layout(len(plan.gpu_types), len(plan.months), len(plan.workloads))
    for k in range(lay.n_types):
        g, _p, c = lay.type_letters(k)
        ws.merge_cells(f"{g}{HEAD_ROW}:{c}{HEAD_ROW}")
    tg, tc = lay.total_letters
    ws.merge_cells(f"{tg}{HEAD_ROW}:{tc}{HEAD_ROW}")
    ws.merge_cells(f"A{HEAD_ROW}:A{SUB_ROW}")
    longest = max((len(w) for w in plan.workloads), default=10)
    ws.column_dimensions["A"].width = min(44, max(36, longest + 2))
    for j in range(2, n_cols + 1):
        ws.column_dimensions[get_column_letter(j)].width = 12
    ws.column_dimensions["E"].width = DEMAND_WIDTH  # the demand, wrapped
    ws.row_dimensions[SUB_ROW].height = 26
    for w, demand in enumerate(plan.demand):
        lines = -(-len(demand or "") // int(DEMAND_WIDTH * 0.75))  # wraps at word breaks
        if lines > 1:
            for head in (lay.gpus_head, lay.rates_head):
                ws.row_dimensions[head + 1 + w].height = 12.75 * lines
    ws.freeze_panes = f"B{FIRST_MONTH_ROW}"
    print_setup(ws, f"A1:{get_column_letter(n_cols)}{n_rows}")
    ws.print_options.horizontalCentered = True


def write_plan_sheets(wb: Any, plans: Sequence[PlanResult], styles: Styles,
                      catalog: Mapping[str, CatalogPrice] | None = None
                      ) -> tuple[dict[str, tuple[list[str], int, int]], list[PlanLine]]:
    """One Plan sheet per plan (created empty here, its rows returned for
    :func:`planner.io.xlsx.sheetxml.save`), by sheet title, and each plan's Summary line.
    ``catalog``: each GPU's catalog price and its cell on the GPUs sheet."""
    bodies, lines = {}, []
    for plan in plans:
        ws = wb.create_sheet(sheet_title(plan.fleet, len(plans) == 1))
        bodies[ws.title] = plan_rows(plan, styles, catalog)
        _decorate(ws, plan, bodies[ws.title][1], bodies[ws.title][2])
        lines.append(plan_line(plan, ws.title))
    return bodies, lines
