"""The Frontier sheet: a frontier's points (:mod:`planner.sheet.frontier`) and a native scatter
chart of them, tokens/s per user on x and output tokens/s per GPU on y, one series per
configuration plus the Pareto-optimal points as a line.

The three figures the frontier derives from the model's outputs are live formulas over the
point's own cells (``tokens/s/GPU = output / GPUs``, ``tokens/s/user = 1 / TPOT``, ``USD/M
output tokens = USD/h * 1e6 / (3600 * output)``), each with the planner's value as its cached
value, so an edit of a TPOT or a price in the sheet moves the chart. The model's figures are
values (the serving model's columns at each point). The sheet is written by
:func:`write_frontier`, which the report (:func:`planner.io.xlsx.workbook.build_workbook`)
and ``planner sweep --frontier --out x.xlsx`` (:func:`save_frontier`) both call.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.marker import Marker
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from planner.io.xlsx.style import HEADER_FONT, print_setup

SHEET = "Frontier"
HEADER_ROW = 4
"""Row of the point table's headers; the points start below it."""
COLUMNS: tuple[tuple[str, str], ...] = (
    ("configuration", "configuration"),
    ("concurrency", "concurrency (requests)"),
    ("gpus", "GPUs"),
    ("output_tokens_per_s", "output (tokens/s)"),
    ("tpot_mean_s", "TPOT (s)"),
    ("ttft_slo_percentile_s", "TTFT at the SLO percentile (s)"),
    ("cost_usd_per_hour", "cost (USD/h)"),
    ("output_tokens_per_s_per_gpu", "tokens/s/GPU"),
    ("tokens_per_s_per_user", "tokens/s/user"),
    ("cost_usd_per_million_output_tokens", "USD/M output tokens"),
    ("meets_slo", "meets SLO"),
    ("pareto", "Pareto-optimal"),
    ("state", "state"),
)
"""The point table's columns (key, header with unit), left to right from column A."""
LETTER = {key: get_column_letter(i) for i, (key, _h) in enumerate(COLUMNS, 1)}
PARETO_COLUMNS: tuple[tuple[str, str], ...] = (
    ("tokens_per_s_per_user", "Pareto: tokens/s/user"),
    ("output_tokens_per_s_per_gpu", "Pareto: tokens/s/GPU"),
    ("configuration", "Pareto: configuration"),
    ("concurrency", "Pareto: concurrency"),
)
"""The Pareto block, right of the point table after one empty column: the optimal points by
tokens/s per user, each a reference to its row of the point table."""
PARETO_FIRST = len(COLUMNS) + 2
CHEAPEST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("level", "at least (tokens/s/user)"),
    ("configuration", "cheapest configuration"),
    ("concurrency", "concurrency"),
    ("cost_usd_per_million_output_tokens", "USD/M output tokens"),
)
CHEAPEST_FIRST = PARETO_FIRST + len(PARETO_COLUMNS) + 1


def _number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _header(ws: Any, row: int, col: int, text: str) -> None:
    # lazy: the fills every sheet shares
    from openpyxl.styles import PatternFill

    from planner.io.xlsx.style import FILLS

    cell = ws.cell(row=row, column=col, value=text)
    cell.font = HEADER_FONT
    cell.fill = PatternFill("solid", start_color=FILLS["output"], end_color=FILLS["output"])


def write_frontier(ws: Any, title: str, result: Any) -> dict[str, Any]:
    """The Frontier sheet of ``result`` on ``ws`` (title, SLO, point table, Pareto block,
    cheapest-at-level block, chart, print area). Returns the cached values of the formula
    cells it wrote (cell → value), for :func:`planner.io.xlsx.sheetxml.save`."""
    # lazy: the text rule of the workbook, only here
    from planner.io.textcells import ooxml_text
    from planner.io.xlsx.sheetxml import TEXT_TRIGGERS

    def text(cell: Any, value: str) -> None:
        value = ooxml_text(value)
        cell.value = value
        if value.startswith(TEXT_TRIGGERS):
            cell.data_type = "s"  # text, never a formula
            cell.quotePrefix = True

    cached: dict[str, Any] = {}
    text(ws.cell(row=1, column=1), f"{title}: throughput against interactivity")
    ws.cell(row=1, column=1).font = Font(bold=True, size=13)
    slo = result.slo
    ws.cell(row=2, column=1, value=(
        f"SLO: TTFT p{slo.get('slo_percentile')} <= {slo.get('slo_ttft_s') or 0:g} s (0: "
        f"none), TPOT <= {slo.get('slo_tpot_s') or 0:g} s (0: none). One engine per "
        "configuration (GPUs = TP x PP); concurrency = its closed-loop clients. Cost: all "
        "GPU time over output tokens."))
    for j, (_key, head) in enumerate(COLUMNS, 1):
        _header(ws, HEADER_ROW, j, head)
    first = HEADER_ROW + 1
    rows: dict[int, int] = {}
    for i, p in enumerate(result.points):
        r = first + i
        rows[i] = r
        for j, (key, _h) in enumerate(COLUMNS, 1):
            cell = ws.cell(row=r, column=j)
            if key == "configuration" or key == "state":
                text(cell, str(getattr(p, key)))
            elif key == "output_tokens_per_s_per_gpu":
                cell.value = f"=IF({LETTER['gpus']}{r}>0,{LETTER['output_tokens_per_s']}{r}/" \
                             f"{LETTER['gpus']}{r},\"\")"
            elif key == "tokens_per_s_per_user":
                cell.value = f"=IF(N({LETTER['tpot_mean_s']}{r})>0,1/{LETTER['tpot_mean_s']}{r}," \
                             f"\"\")"
            elif key == "cost_usd_per_million_output_tokens":
                out = f"{LETTER['output_tokens_per_s']}{r}"
                cell.value = (f"=IF(N({out})>0,{LETTER['cost_usd_per_hour']}{r}*1000000/"
                              f"(3600*{out}),\"\")")
            else:
                cell.value = _number(getattr(p, key))
            if cell.data_type == "f":
                value = _number(getattr(p, key))
                cached[cell.coordinate] = "" if value is None else value
            if key in ("output_tokens_per_s_per_gpu", "tokens_per_s_per_user",
                       "output_tokens_per_s"):
                cell.number_format = "#,##0.0"
            elif key in ("tpot_mean_s", "ttft_slo_percentile_s"):
                cell.number_format = "0.0000"
            elif key in ("cost_usd_per_hour", "cost_usd_per_million_output_tokens"):
                cell.number_format = "#,##0.000"
    last = first + len(result.points) - 1
    # the Pareto block: references to the optimal rows, by tokens/s per user
    pareto = sorted((i for i, p in enumerate(result.points) if p.pareto),
                    key=lambda i: result.points[i].tokens_per_s_per_user)
    for j, (_key, head) in enumerate(PARETO_COLUMNS):
        _header(ws, HEADER_ROW, PARETO_FIRST + j, head)
    for k, i in enumerate(pareto):
        for j, (key, _h) in enumerate(PARETO_COLUMNS):
            cell = ws.cell(row=first + k, column=PARETO_FIRST + j,
                           value=f"={LETTER[key]}{rows[i]}")
            cached[cell.coordinate] = _number(getattr(result.points[i], key))
            if key != "configuration":
                cell.number_format = "#,##0.0"
    # the cheapest configuration at each interactivity level
    for j, (_key, head) in enumerate(CHEAPEST_COLUMNS):
        _header(ws, HEADER_ROW, CHEAPEST_FIRST + j, head)
    for k, c in enumerate(result.cheapest):
        ws.cell(row=first + k, column=CHEAPEST_FIRST, value=c.level_tokens_per_s_per_user
                ).number_format = "#,##0.0"
        for j, (key, _h) in enumerate(CHEAPEST_COLUMNS[1:], 1):
            cell = ws.cell(row=first + k, column=CHEAPEST_FIRST + j,
                           value=f"={LETTER[key]}{rows[c.point]}")
            cached[cell.coordinate] = _number(getattr(result.points[c.point], key))
            if key != "configuration":
                cell.number_format = "#,##0.000"
    for j, (key, _h) in enumerate(COLUMNS, 1):
        ws.column_dimensions[get_column_letter(j)].width = 24 if key == "configuration" else 13
    for col in range(PARETO_FIRST, CHEAPEST_FIRST + len(CHEAPEST_COLUMNS)):
        ws.column_dimensions[get_column_letter(col)].width = 14
    ws.freeze_panes = f"B{first}"
    chart_row = max(last, first + max(len(pareto), len(result.cheapest))) + 2
    write_chart(ws, title, result, first, pareto, f"A{chart_row}")
    print_setup(ws, f"A1:{get_column_letter(CHEAPEST_FIRST + len(CHEAPEST_COLUMNS) - 1)}"
                    f"{chart_row + CHART_ROWS}", f"${HEADER_ROW}:${HEADER_ROW}")
    return cached


CHART_ROWS = 30
"""Rows the chart covers (15 cm high, about 30 rows)."""


def write_chart(ws: Any, title: str, result: Any, first: int, pareto: list[int],
                anchor: str) -> ScatterChart:
    """A scatter chart: one series per configuration (its points in concurrency order, x the
    tokens/s/user column, y the tokens/s/GPU column), and the Pareto block as a line."""
    chart = ScatterChart()
    chart.title = f"{title}: tokens/s per GPU against tokens/s per user"
    chart.style = 13
    chart.x_axis.title = "tokens/s per user (1 / TPOT)"
    chart.y_axis.title = "output tokens/s per GPU"
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    x_col = list(LETTER).index("tokens_per_s_per_user") + 1
    y_col = list(LETTER).index("output_tokens_per_s_per_gpu") + 1
    start = 0
    for label in result.configurations:
        n = len(result.of(label))
        lo, hi = first + start, first + start + n - 1
        start += n
        xs = Reference(ws, min_col=x_col, min_row=lo, max_row=hi)
        ys = Reference(ws, min_col=y_col, min_row=lo, max_row=hi)
        series = Series(ys, xs, title=label)
        series.marker = Marker(symbol="circle", size=6)
        chart.series.append(series)
    if pareto:
        xs = Reference(ws, min_col=PARETO_FIRST, min_row=first, max_row=first + len(pareto) - 1)
        ys = Reference(ws, min_col=PARETO_FIRST + 1, min_row=first,
                       max_row=first + len(pareto) - 1)
        line = Series(ys, xs, title="Pareto-optimal")
        line.marker = Marker(symbol="none")
        line.graphicalProperties.line.width = 28575  # 2.25 pt, EMU
        line.graphicalProperties.line.dashStyle = "dash"
        chart.series.append(line)
    for s in chart.series[:len(result.configurations)]:
        s.graphicalProperties.line.noFill = True  # points only: a point set, not a curve
    chart.height, chart.width = 15, 26
    ws.add_chart(chart, anchor)
    return chart


def save_frontier(title: str, result: Any, path: Path) -> None:
    """A workbook holding the Frontier sheet alone, saved atomically (the report's save:
    :func:`planner.io.xlsx.workbook.save_workbook`); ``path`` was checked by the caller."""
    from openpyxl import Workbook

    from planner.io.xlsx.workbook import Built, save_workbook

    wb = Workbook()
    ws = wb.worksheets[0]
    ws.title = SHEET
    cached = write_frontier(ws, title, result)
    save_workbook(Built(wb, {}, {SHEET: cached}), path, force=True)
