"""A sweep sheet's printed page: its key figures and its chart.

A sweep sheet holds every column of a scenario sheet (282 of them), which no page prints
legibly. So beside its own columns, after one empty column, it gets a block of key figures,
each a reference to the row's cell (the name, the varied inputs, whether it fits and meets its
target, GPUs, output at load, TTFT and TPOT at load, cost), and its print area is that block
with the throughput chart below it: one page wide, landscape, header row repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openpyxl.chart import LineChart, Reference
from openpyxl.utils import column_index_from_string, get_column_letter

from planner.report.layout import letters, scenario_columns
from planner.report.sheetkit import print_setup

SWEEP_KEYS = ("fits", "meets_slo", "gpus", "gpus_needed", "throughput_tokens_per_s",
              "output_tokens_per_s", "ttft_slo_percentile_s", "tpot_mean_s",
              "cost_usd_per_hour", "cost_usd_per_month", "cost_usd_per_month_needed")
"""The figures a sweep prints for each of its rows (after its name and varied columns)."""
CHART_ROWS = 20
"""Rows the chart covers below the key block (its height is 10 cm, about 20 rows)."""


def key_block(varied: Sequence[str]) -> list[tuple[str, str]]:
    """(column letter, column key) of a sweep sheet's key block: the name, the varied columns
    and :data:`SWEEP_KEYS`, starting two columns right of the sheet's last column."""
    col = letters("inference")
    keys = list(dict.fromkeys(["name", *(v for v in varied if v in col), *SWEEP_KEYS]))
    start = len(scenario_columns("inference")) + 2
    return [(get_column_letter(start + i), key) for i, key in enumerate(keys)]


SHEET_MAX_ROW = 1_048_576
"""A worksheet's last row (Excel and LibreOffice)."""
CHART_MAX_ROW = 1_000_000
"""The last sheet row a chart's data reference may reach (openpyxl's ``Reference`` limit)."""


def write_sweep_chart(ws: Any, title: str, varied: Sequence[str], rows: int,
                      anchor: str) -> None:
    """Throughput against the first varied column of a sweep sheet of ``rows`` rows (its
    first 999,999 rows when it has more: a chart's reference ends at row
    :data:`CHART_MAX_ROW`)."""
    col = letters("inference")
    x = varied[0] if varied else "batch"
    n = min(rows, CHART_MAX_ROW - 1)
    chart = LineChart()
    chart.title = f"{title}: output throughput against {x}" + (
        f" (first {n:,} rows)" if n < rows else "")
    chart.y_axis.title, chart.x_axis.title = "tokens/s", x
    tput = column_index_from_string(col["throughput_tokens_per_s"])
    chart.add_data(Reference(ws, min_col=tput, min_row=1, max_row=n + 1), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=column_index_from_string(col[x]) if x in col
                                   else 1, min_row=2, max_row=n + 1))
    chart.height, chart.width = 10, 20
    ws.add_chart(chart, anchor)


def sweep_print(ws: Any, title: str, varied: Sequence[str], n: int) -> None:
    """The key block's widths, the chart below it and the print area over both."""
    block = key_block(varied)
    first, last = block[0][0], block[-1][0]
    for letter, key in block:
        ws.column_dimensions[letter].width = 40 if key == "name" else 13
    top = min(n + 3, SHEET_MAX_ROW - CHART_ROWS)  # the chart stays on the sheet
    write_sweep_chart(ws, title, varied, n, f"{first}{top}")
    print_setup(ws, f"{first}1:{last}{top + CHART_ROWS}", "$1:$1")
