"""The workbook's Plan sheet (issue 15 item 2): a fleet's months × GPU types, and its
workloads month by month.

Layout (one sheet per fleet with a horizon, ``Plan`` or ``Plan FLEET``):

- row 1: what the sheet is (fleet, months, pricing, hours per month);
- the month table from row 3: one row per month; per GPU type its GPUs, price (USD per
  GPU-hour) and cost (USD), then the month's GPUs and cost. With on-demand or spot pricing the
  GPUs are live ``SUMPRODUCT`` formulas over the workload rows below and the costs are
  ``GPUs × price × hours per month`` (cell ``B2``); with reserved pricing the GPUs billed
  (commitments outlive a month's need) and their costs are values. Every formula carries its
  cached value, so a viewer that does not recalculate shows the numbers;
- under the month table, each GPU type's name in its GPUs column: the ``SUMPRODUCT`` compares
  with that cell, so a GPU name never becomes formula text;
- the workload table below it: per counted workload its model, GPU, basis and demand, then the
  GPUs it needs in each month and its requests/s in each month (values from the serving model).

The rows are rendered as SpreadsheetML (:mod:`planner.report.fastsheet`), so 10,000 workloads ×
24 months cost about a microsecond per cell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

from openpyxl.utils import get_column_letter

from planner.report.fastsheet import Styles, cell_xml, row_xml
from planner.sheet.plan import PlanResult


def sheet_title(fleet: str, single: bool) -> str:
    """``Plan`` for the only plan, else ``Plan FLEET`` without the characters a sheet title
    cannot hold, at most 31 characters."""
    return "Plan" if single else ("Plan " + re.sub(r"[\[\]:*?/\\']", "_", fleet))[:31]


def _formula(ref: str, formula: str, cached: float, style: str) -> str:
    """A formula cell with its cached value."""
    return f'<c r="{ref}"{style}><f>{escape(formula)}</f><v>{float(cached)!r}</v></c>'


def plan_rows(plan: PlanResult, styles: Styles) -> tuple[list[str], int, int]:
    """(row XML, last row, last column) of one plan's sheet."""
    usd = styles.attr("#,##0")
    price = styles.attr("0.00")
    count = styles.attr("#,##0")
    rate = styles.attr("0.000")
    types, months = plan.gpu_types, plan.months
    n_t, n_m, n_w = len(types), len(months), len(plan.workloads)
    live = plan.pricing != "reserved"
    rows: list[str] = []
    title = (f"Plan of fleet {plan.fleet}: {months[0]} to {months[-1]}, {plan.pricing} "
             f"pricing; cost = GPUs x USD per GPU-hour x hours per month (B2). Workload GPUs "
             "are the serving model's gpus_needed at each month's rate.")
    rows.append(row_xml(1, [cell_xml("A1", title, "", styles)]))
    rows.append(row_xml(2, [cell_xml("A2", "hours per month", "", styles),
                            cell_xml("B2", plan.hours_per_month, "", styles),
                            cell_xml("C2", "h (8760 / 12)", "", styles)]))
    head = 3
    first_m, last_m = head + 1, head + n_m
    w_head = last_m + 3
    first_w, last_w = w_head + 1, w_head + max(n_w, 1)
    # month table header: month | per type: GPUs, USD/GPU-h, cost USD | GPUs | cost USD
    header = ["month"]
    for t in types:
        header += [f"{t} GPUs" + ("" if live else " billed"), f"{t} USD/GPU-h",
                   f"{t} cost USD"]
    header += ["GPUs", "cost USD"]
    rows.append(row_xml(head, [cell_xml(f"{get_column_letter(i + 1)}{head}", h, "", styles)
                               for i, h in enumerate(header)]))
    w_gpu_col = "C"
    type_row = last_m + 1  # each GPU type's name under its GPUs column
    month_col0 = 6  # F: the first month's GPUs in the workload table
    for m, month in enumerate(months):
        r = first_m + m
        cells = [cell_xml(f"A{r}", month, "", styles)]
        gpu_refs, cost_refs = [], []
        for k in range(len(types)):
            g, p, c = (get_column_letter(2 + 3 * k + j) for j in range(3))
            gpus = int(plan.gpus_billed_by_type[k, m])
            cost = float(plan.cost_usd_by_type[k, m])
            if live:
                wcol = get_column_letter(month_col0 + m)
                # the type's name as a cell, never as formula text, compared for equality
                # (a SUMIF criterion would read a name starting with < > = or holding * ? ~
                # as an operator or a wildcard)
                crit = f"{g}${type_row}"
                cells.append(_formula(
                    f"{g}{r}", f"SUMPRODUCT((${w_gpu_col}${first_w}:${w_gpu_col}${last_w}"
                    f"={crit})*{wcol}${first_w}:{wcol}${last_w})", gpus, count))
                cells.append(cell_xml(f"{p}{r}",
                                      float(plan.price_usd_per_gpu_hour_by_type[k, m]), price,
                                      styles))
                cells.append(_formula(f"{c}{r}", f"{g}{r}*{p}{r}*$B$2", cost, usd))
            else:
                cells.append(cell_xml(f"{g}{r}", gpus, count, styles))
                cells.append(cell_xml(f"{p}{r}",
                                      float(plan.price_usd_per_gpu_hour_by_type[k, m]), price,
                                      styles))
                cells.append(cell_xml(f"{c}{r}", cost, usd, styles))
            gpu_refs.append(f"{g}{r}")
            cost_refs.append(f"{c}{r}")
        tg, tc = get_column_letter(2 + 3 * n_t), get_column_letter(3 + 3 * n_t)
        cells.append(_formula(f"{tg}{r}", "+".join(gpu_refs) or "0",
                              int(plan.total_gpus[m]), count))
        cells.append(_formula(f"{tc}{r}", "+".join(cost_refs) or "0",
                              float(plan.total_cost_usd[m]), usd))
        rows.append(row_xml(r, cells))
    if live and types:
        rows.append(row_xml(type_row, [cell_xml(f"A{type_row}", "GPU type (criterion)", "",
                                                styles)] + [
            cell_xml(f"{get_column_letter(2 + 3 * k)}{type_row}", t, "", styles)
            for k, t in enumerate(types)]))
    # workload table
    w_header = ["workload", "model", "gpu", "basis", "demand",
                *(f"{m} GPUs" for m in months), *(f"{m} requests/s" for m in months)]
    rows.append(row_xml(w_head, [cell_xml(f"{get_column_letter(i + 1)}{w_head}", h, "", styles)
                                 for i, h in enumerate(w_header)]))
    gpu_letters = [get_column_letter(month_col0 + m) for m in range(n_m)]
    rate_letters = [get_column_letter(month_col0 + n_m + m) for m in range(n_m)]
    gpus_list = plan.gpus.tolist()
    rates_list = plan.rate_requests_per_s.tolist()
    for w in range(n_w):
        r = first_w + w
        cells = [cell_xml(f"A{r}", plan.workloads[w], "", styles),
                 cell_xml(f"B{r}", plan.workload_models[w], "", styles),
                 cell_xml(f"C{r}", plan.workload_gpus[w], "", styles),
                 cell_xml(f"D{r}", plan.basis[w], "", styles),
                 cell_xml(f"E{r}", plan.demand[w] or None, "", styles)]
        g_row, r_row = gpus_list[w], rates_list[w]
        cells += [f'<c r="{col}{r}"{count}><v>{g_row[m]}</v></c>'
                  for m, col in enumerate(gpu_letters)]
        cells += [f'<c r="{col}{r}"{rate}><v>{r_row[m]!r}</v></c>'
                  for m, col in enumerate(rate_letters)]
        rows.append(row_xml(r, cells))
    return rows, last_w, max(len(header), len(w_header))


def write_plan_sheets(wb: Any, plans: Sequence[PlanResult], styles: Styles
                      ) -> dict[str, tuple[list[str], int, int]]:
    """One Plan sheet per plan (created empty here, its rows returned for
    :func:`planner.report.fastsheet.inject`), by sheet title."""
    bodies = {}
    for plan in plans:
        ws = wb.create_sheet(sheet_title(plan.fleet, len(plans) == 1))
        ws.column_dimensions["A"].width = 28
        ws.freeze_panes = "B4"
        bodies[ws.title] = plan_rows(plan, styles)
    return bodies
