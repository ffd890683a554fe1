"""The Summary's two charts: memory per GPU and cost per scenario, after a page break.

Why this module exists: the charts are openpyxl objects over the scenario table's ranges, drawn
only in the Summary's layout pass (:mod:`planner.io.xlsx.summary`); the row XML pass never
sees them, so they live apart from the table's cells.
"""

from __future__ import annotations

from typing import Any

from openpyxl.chart import BarChart, Reference, Series
from openpyxl.worksheet.pagebreak import Break

from planner.io.xlsx.summary_columns import CHART_ROWS, MEMORY_HEADERS, column_index


def add_charts(ws: Any, top: int, last_text: int, scenarios: int, all_chosen: bool) -> int:
    """Memory and cost charts of the first :data:`CHART_ROWS` of ``scenarios`` rows of the
    Summary's scenario table (starting at row ``top``), after a page break below
    ``last_text``; returns the last row they cover (``last_text`` with no scenario).
    ``all_chosen`` false says in the cost chart's title that options not chosen are included."""
    shown = min(scenarios, CHART_ROWS)
    if not shown:
        return last_text
    chart_row = last_text + 3
    ws.row_breaks.append(Break(id=last_text + 1))
    suffix = f" (first {shown})" if shown < scenarios else ""
    names = Reference(ws, min_col=1, min_row=top, max_row=top + shown - 1)
    memory = BarChart()
    memory.type, memory.grouping, memory.overlap = "bar", "stacked", 100
    memory.title = "Memory per GPU [GiB]" + suffix
    memory.y_axis.title = "GiB"
    for header in MEMORY_HEADERS:
        c = column_index(header)
        memory.series.append(Series(Reference(ws, min_col=c, min_row=top,
                                              max_row=top + shown - 1), title=header))
    memory.set_categories(names)
    cost = BarChart()
    cost.type = "bar"
    cost.title = "Cost per scenario [USD/month]" + suffix + (
        ", options not chosen included" if not all_chosen else "")
    cost.y_axis.title = "USD/month"
    cost.series.append(Series(Reference(ws, min_col=column_index("cost", "USD/month"),
                                        min_row=top, max_row=top + shown - 1),
                              title="USD/month"))
    cost.set_categories(names)
    cost.legend = None
    for chart, anchor in ((memory, "A"), (cost, "I")):
        chart.height, chart.width = 11.0, 16
        chart.x_axis.delete = chart.y_axis.delete = False
        ws.add_chart(chart, f"{anchor}{chart_row}")
    return chart_row + 22
