"""Presentation shared by the CLI and the terminal UI: figures with their units, and the tables
both show (rich renderables). Formatting by unit itself is :data:`planner.core.units.FORMATS`. User
text in a table (names) is markup-escaped, so ``[/x]`` prints as itself."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from planner.compute.outputs import format_value


def cell(name: str, value: Any) -> str:
    """``value`` of column ``name`` with its unit; a dash for a missing or undefined value."""
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float) and name in ("fits", "train_fits", "meets_target_rate"):
        value = bool(value)
    return format_value(name, value)


def comparison_table(scenarios: list[Any], rows: list[Any]) -> Table:
    """Scenarios side by side, with absolute and relative deltas against the first."""
    table = Table(title="Comparison (Δ against the first)")
    table.add_column("column")
    for i, s in enumerate(scenarios):
        table.add_column(escape(f"{s.fleet}/{s.name}"), justify="right")
        if i:
            table.add_column("Δ", justify="right")
    for r in rows:
        cells = []
        for i, value in enumerate(r.values):
            cells.append(escape(value) if isinstance(value, str) else cell(r.column, value))
            if i:
                if r.deltas[i] is None:
                    cells.append("")
                else:
                    pct = f" ({r.ratios[i]:+.1%})" if r.ratios[i] is not None else ""
                    sign = "+" if r.deltas[i] >= 0 else "−"
                    cells.append(f"{sign}{cell(r.column, abs(r.deltas[i]))}{pct}")
        table.add_row(r.column, *cells)
    return table


def options_table(title: str, rows: list[Any]) -> Table:
    """An option group side by side (:func:`planner.service.compare.options_table`): ✓ marks
    the chosen option (the one counted), ★ the cheapest that fits and meets the SLO."""
    table = Table(title=title)
    for header, justify in (("", "left"), ("option", "left"), ("GPU", "left"),
                            ("GPUs", "right"), ("GPUs needed", "right"),
                            ("$/month", "right"), ("$/M output tokens", "right"),
                            ("fits", "left"), ("meets SLO", "left")):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        mark = ("✓" if r.chosen else " ") + ("★" if r.cheapest_meeting_slo else " ")
        table.add_row(mark, escape(r.name + (" (base)" if r.base else "")), escape(r.gpu),
                      f"{r.gpus:,}", "–" if r.gpus_needed is None else f"{r.gpus_needed:,}",
                      cell("cost_usd_per_month", r.cost_usd_per_month),
                      cell("cost_usd_per_million_output_tokens",
                           r.cost_usd_per_million_output_tokens),
                      "–" if r.fits is None else ("yes" if r.fits else "no"),
                      "–" if r.meets_slo is None else ("yes" if r.meets_slo else "no"))
    return table
