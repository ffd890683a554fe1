"""The Frontier sheet: a frontier's points (:mod:`planner.compute.frontier`) and a native scatter
chart of them, tokens/s per user on x and output tokens/s per GPU on y, one series per
configuration plus the Pareto-optimal points as a line.

The three figures the frontier derives from the model's outputs are live formulas over the
point's own cells (``tokens/s/GPU = output / GPUs``, ``tokens/s/user = 1 / TPOT``, ``USD/M
output tokens = USD/h * 1e6 / (3600 * output)``), each with the planner's value as its cached
value, so an edit of a TPOT or a price in the sheet moves the chart. The model's figures are
values (the serving model's columns at each point). The sheet is written by
:func:`write_frontier`, which the report (:func:`planner.io.xlsx.workbook.build_workbook`)
and ``planner sweep --frontier --out x.xlsx``
(:func:`planner.io.xlsx.workbook.save_frontier`) both call.
"""

from __future__ import annotations

import math
from typing import Any

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.marker import Marker
from openpyxl.chart.shapes import GraphicalProperties
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from planner.io.textcells import ooxml_text
from planner.io.xlsx.sheetxml import TEXT_TRIGGERS
from planner.io.xlsx.style import FILLS, HEADER_FONT, print_setup

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
"""The Pareto block, below the chart from column A: the optimal points by tokens/s per user,
each a reference to its row of the point table (the chart's Pareto line reads it)."""
CHEAPEST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("level", "at least (tokens/s/user)"),
    ("configuration", "cheapest configuration"),
    ("concurrency", "concurrency (requests)"),
    ("output_tokens_per_s_per_gpu", "tokens/s/GPU"),
    ("cost_usd_per_million_output_tokens", "USD/M output tokens"),
)
"""The cheapest point meeting the SLO at each interactivity level, beside the Pareto block
after one empty column."""
CHEAPEST_FIRST = len(PARETO_COLUMNS) + 2
CHART_ROWS = 26
"""Rows the chart covers below the point table (13 cm high, about 26 rows)."""
SLO_COLUMNS: tuple[tuple[str, str], ...] = (
    ("x", "TPOT objective: tokens/s/user"),
    ("y", "TPOT objective: tokens/s/GPU"),
)
"""Two points on x = 1 / slo_tpot_s (y from 0 to the largest tokens/s/GPU): the chart's
vertical line, right of which points meet the TPOT objective. After the cheapest block."""
YES_NO = '"yes";"yes";"no"'
"""Number format of the flags: LibreOffice shows yes/no (TRUE is 1 there), Excel TRUE/FALSE."""
PALETTE = ("1F77B4", "D62728", "2CA02C", "9467BD", "FF7F0E", "8C564B", "E377C2", "7F7F7F",
           "BCBD22", "17BECF")
"""Series colours, one per configuration in order (matplotlib's tab10), so that LibreOffice
and Excel draw the same picture."""


def _number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _header(ws: Any, row: int, col: int, text: str) -> None:
    cell = ws.cell(row=row, column=col, value=text)
    cell.font = HEADER_FONT
    cell.fill = PatternFill("solid", start_color=FILLS["output"], end_color=FILLS["output"])
    cell.alignment = Alignment(wrap_text=True, vertical="top")


def _text(cell: Any, value: str) -> None:
    """``value`` in ``cell`` as text (OOXML-safe), never run as a formula."""
    value = ooxml_text(value)
    cell.value = value
    if value.startswith(TEXT_TRIGGERS):
        cell.data_type = "s"  # text, never a formula
        cell.quotePrefix = True


def _formulas(r: int) -> dict[str, str]:
    """The point table's live formulas on row ``r``, by column key: tokens/s/GPU = output /
    GPUs, tokens/s/user = 1 / TPOT, USD/M output tokens = USD/h * 1e6 / (3600 * output)."""
    out = f"{LETTER['output_tokens_per_s']}{r}"
    gpus, tpot = f"{LETTER['gpus']}{r}", f"{LETTER['tpot_mean_s']}{r}"
    return {"output_tokens_per_s_per_gpu": f"=IF({gpus}>0,{out}/{gpus},\"\")",
            "tokens_per_s_per_user": f"=IF(N({tpot})>0,1/{tpot},\"\")",
            "cost_usd_per_million_output_tokens": (
                f"=IF(N({out})>0,{LETTER['cost_usd_per_hour']}{r}*1000000/(3600*{out}),\"\")")}


POINT_FORMATS = {"output_tokens_per_s_per_gpu": "#,##0.0", "tokens_per_s_per_user": "#,##0.0",
                 "output_tokens_per_s": "#,##0.0", "tpot_mean_s": "0.0000",
                 "ttft_slo_percentile_s": "0.0000", "cost_usd_per_hour": "#,##0.000",
                 "cost_usd_per_million_output_tokens": "#,##0.000",
                 "meets_slo": YES_NO, "pareto": YES_NO}
"""The point table's number formats by column key (the flags centred)."""
TEXT_KEYS = ("configuration", "state")
"""The point table's text columns."""


def write_frontier(ws: Any, title: str, result: Any) -> dict[str, Any]:
    """The Frontier sheet of ``result`` on ``ws`` (title, SLO, point table, Pareto block,
    cheapest-at-level block, chart, print area). Returns the cached values of the formula
    cells it wrote (cell → value), for :func:`planner.io.xlsx.sheetxml.save`."""
    cached: dict[str, Any] = {}
    _title_rows(ws, title, result.slo)
    first = HEADER_ROW + 1
    rows = _point_table(ws, result, first, cached)
    last = first + len(result.points) - 1
    ws.row_dimensions[HEADER_ROW].height = 44
    chart_row = last + 2
    below = chart_row + CHART_ROWS + 1  # the Pareto and cheapest blocks' header row
    ws.row_dimensions[below].height = 44
    pareto = _pareto_block(ws, result, rows, below, cached)
    _cheapest_block(ws, result, rows, below, cached)
    slo_first = CHEAPEST_FIRST + len(CHEAPEST_COLUMNS) + 1
    slo_rows = _slo_block(ws, result, below, slo_first)
    for j, (key, _h) in enumerate(COLUMNS, 1):
        ws.column_dimensions[get_column_letter(j)].width = 24 if key == "configuration" else 13
    ws.freeze_panes = f"B{first}"
    write_chart(ws, title, result, first, (below + 1, len(pareto)), f"A{chart_row}",
                (below + 1, slo_first, slo_rows))
    end = below + max(len(pareto), len(result.cheapest), 1)
    print_setup(ws, f"A1:{get_column_letter(len(COLUMNS))}{end}", f"${HEADER_ROW}:${HEADER_ROW}")
    return cached


def _title_rows(ws: Any, title: str, slo: dict[str, Any]) -> None:
    """Rows 1 and 2: the sheet's title and the SLO and cost conventions in words."""
    _text(ws.cell(row=1, column=1), f"{title}: throughput against interactivity")
    ws.cell(row=1, column=1).font = Font(bold=True, size=13)
    ws.cell(row=2, column=1, value=(
        f"SLO: TTFT p{slo.get('slo_percentile')} <= {slo.get('slo_ttft_s') or 0:g} s (0: "
        f"none), TPOT <= {slo.get('slo_tpot_s') or 0:g} s (0: none). One engine per "
        "configuration (GPUs = TP x PP); concurrency = its closed-loop clients. Cost: all "
        "GPU time over output tokens."))


def _point_table(ws: Any, result: Any, first: int, cached: dict[str, Any]) -> dict[int, int]:
    """The point table: its headers on :data:`HEADER_ROW`, a row per point from ``first``
    (texts, values, and the three live formulas with the planner's values cached in
    ``cached``). Returns each point's row."""
    for j, (_key, head) in enumerate(COLUMNS, 1):
        _header(ws, HEADER_ROW, j, head)
    rows: dict[int, int] = {}
    for i, p in enumerate(result.points):
        r = first + i
        rows[i] = r
        formulas = _formulas(r)
        for j, (key, _h) in enumerate(COLUMNS, 1):
            cell = ws.cell(row=r, column=j)
            if key in TEXT_KEYS:
                _text(cell, str(getattr(p, key)))
            elif key in formulas:
                cell.value = formulas[key]
            else:
                cell.value = _number(getattr(p, key))
            if cell.data_type == "f":
                value = _number(getattr(p, key))
                cached[cell.coordinate] = "" if value is None else value
            if key in POINT_FORMATS:
                cell.number_format = POINT_FORMATS[key]
            if POINT_FORMATS.get(key) == YES_NO:
                cell.alignment = Alignment(horizontal="center")
    return rows


def _reference_format(key: str) -> str | None:
    """The number format of a block's reference to the point table's ``key`` column."""
    if key == "configuration":
        return None
    if key == "cost_usd_per_million_output_tokens":
        return "#,##0.000"
    return "#,##0.0" if key != "concurrency" else "#,##0"


def _pareto_block(ws: Any, result: Any, rows: dict[int, int], below: int,
                  cached: dict[str, Any]) -> list[int]:
    """The Pareto block from column A under the chart: the optimal points by tokens/s per
    user, each cell a reference to its point's row. Returns the points, in that order."""
    pareto = sorted((i for i, p in enumerate(result.points) if p.pareto),
                    key=lambda i: result.points[i].tokens_per_s_per_user)
    for j, (_key, head) in enumerate(PARETO_COLUMNS, 1):
        _header(ws, below, j, head)
    for k, i in enumerate(pareto, 1):
        for j, (key, _h) in enumerate(PARETO_COLUMNS, 1):
            cell = ws.cell(row=below + k, column=j, value=f"={LETTER[key]}{rows[i]}")
            cached[cell.coordinate] = _number(getattr(result.points[i], key))
            if (fmt := _reference_format(key)) is not None:
                cell.number_format = fmt
    return pareto


def _cheapest_block(ws: Any, result: Any, rows: dict[int, int], below: int,
                    cached: dict[str, Any]) -> None:
    """The cheapest point meeting the SLO at each interactivity level, beside the Pareto
    block: the level, then references to the point's row."""
    for j, (_key, head) in enumerate(CHEAPEST_COLUMNS):
        _header(ws, below, CHEAPEST_FIRST + j, head)
    for k, c in enumerate(result.cheapest, 1):
        ws.cell(row=below + k, column=CHEAPEST_FIRST, value=c.level_tokens_per_s_per_user
                ).number_format = "#,##0.0"
        for j, (key, _h) in enumerate(CHEAPEST_COLUMNS[1:], 1):
            cell = ws.cell(row=below + k, column=CHEAPEST_FIRST + j,
                           value=f"={LETTER[key]}{rows[c.point]}")
            cached[cell.coordinate] = _number(getattr(result.points[c.point], key))
            if (fmt := _reference_format(key)) is not None:
                cell.number_format = fmt


def _slo_block(ws: Any, result: Any, below: int, slo_first: int) -> int:
    """The TPOT objective's two points (x = 1 / slo_tpot_s, y from 0 to the largest
    tokens/s/GPU) from column ``slo_first``, when there is a TPOT objective and a usable
    point. Returns the rows written (2 or 0)."""
    tpot = float(result.slo.get("slo_tpot_s") or 0)
    tops = [p.output_tokens_per_s_per_gpu for p in result.points if p.usable]
    if not (tpot > 0 and tops):
        return 0
    for j, (_key, head) in enumerate(SLO_COLUMNS):
        _header(ws, below, slo_first + j, head)
    for k, y in enumerate((0.0, max(tops)), 1):
        ws.cell(row=below + k, column=slo_first, value=1 / tpot).number_format = "#,##0.0"
        ws.cell(row=below + k, column=slo_first + 1, value=y).number_format = "#,##0.0"
    return 2


def write_chart(ws: Any, title: str, result: Any, first: int, pareto: tuple[int, int],
                anchor: str, slo: tuple[int, int, int] = (0, 0, 0)) -> ScatterChart:
    """A scatter chart: one series per configuration (its points in concurrency order, x the
    tokens/s/user column, y the tokens/s/GPU column), the Pareto block (``pareto``: its
    first row and length) as a dashed line, and the TPOT objective (``slo``: first row,
    first column, rows) as a dotted vertical line."""
    chart = ScatterChart()
    chart.title = f"{title}: tokens/s/GPU against tokens/s/user"
    chart.style = 13
    chart.x_axis.title = "tokens/s per user (1 / TPOT)"
    chart.y_axis.title = "output tokens/s per GPU"
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    x_col = list(LETTER).index("tokens_per_s_per_user") + 1
    y_col = list(LETTER).index("output_tokens_per_s_per_gpu") + 1
    start = 0
    for k, label in enumerate(result.configurations):
        n = len(result.of(label))
        lo, hi = first + start, first + start + n - 1
        start += n
        xs = Reference(ws, min_col=x_col, min_row=lo, max_row=hi)
        ys = Reference(ws, min_col=y_col, min_row=lo, max_row=hi)
        series = Series(ys, xs, title=label)
        colour = PALETTE[k % len(PALETTE)]
        series.marker = Marker(symbol="circle", size=7)
        series.marker.graphicalProperties = GraphicalProperties(solidFill=colour)
        series.marker.graphicalProperties.line.solidFill = colour
        series.graphicalProperties.line.solidFill = colour
        series.graphicalProperties.line.width = 12700  # 1 pt (EMU): the configuration's curve
        chart.series.append(series)
    top, count = pareto
    if count:
        xs = Reference(ws, min_col=1, min_row=top, max_row=top + count - 1)
        ys = Reference(ws, min_col=2, min_row=top, max_row=top + count - 1)
        line = Series(ys, xs, title="Pareto-optimal")
        line.marker = Marker(symbol="none")
        line.graphicalProperties.line.solidFill = "000000"
        line.graphicalProperties.line.width = 22225  # 1.75 pt (EMU)
        line.graphicalProperties.line.dashStyle = "dash"
        chart.series.append(line)
    row, col, count = slo
    if count:
        xs = Reference(ws, min_col=col, min_row=row, max_row=row + count - 1)
        ys = Reference(ws, min_col=col + 1, min_row=row, max_row=row + count - 1)
        bound = Series(ys, xs, title="TPOT objective (meets it to the right)")
        bound.marker = Marker(symbol="none")
        bound.graphicalProperties.line.solidFill = "7F7F7F"
        bound.graphicalProperties.line.width = 15875  # 1.25 pt (EMU)
        bound.graphicalProperties.line.dashStyle = "sysDot"
        chart.series.append(bound)
    if chart.legend is not None:
        chart.legend.position = "r"
    chart.height, chart.width = 13, 33
    ws.add_chart(chart, anchor)
    return chart

