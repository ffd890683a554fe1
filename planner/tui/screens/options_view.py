"""The options view (issue 15.1): an option group side by side, and choosing one of it.

Opened from the grid (key ``a``) on any scenario of a group, it shows the group's scenarios as
``planner compare --options`` does (:func:`planner.service.compare.options_table`): GPU, GPUs, GPUs
needed for the target rate, USD per month, USD per million output tokens, fits, meets SLO;
✓ marks the chosen one (the one the fleet's totals count) and ★ the cheapest that fits and meets
the SLO. Enter on a row chooses it (one transaction, one undo step); Esc closes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from planner.present import cell
from planner.service.compare import OptionRow

COLUMNS = (("mark", "", False), ("name", "option", False), ("gpu", "GPU", False),
           ("gpus", "GPUs", True), ("gpus_needed", "GPUs needed", True),
           ("cost_usd_per_month", "$/month", True),
           ("cost_usd_per_million_output_tokens", "$/M output tokens", True),
           ("fits", "fits", False), ("meets_slo", "meets SLO", False))
"""(key, header, right-aligned) of the view's table."""


def row_cells(r: OptionRow) -> list[str]:
    """The table cells of one option, with units."""
    def flag(value: bool | None) -> str:
        return "–" if value is None else ("yes" if value else "no")

    return [("✓" if r.chosen else " ") + ("★" if r.cheapest_meeting_slo else " "),
            r.name + (" (base)" if r.base else ""), r.gpu, f"{r.gpus:,}",
            "–" if r.gpus_needed is None else f"{r.gpus_needed:,}",
            cell("cost_usd_per_month", r.cost_usd_per_month),
            cell("cost_usd_per_million_output_tokens", r.cost_usd_per_million_output_tokens),
            flag(r.fits), flag(r.meets_slo)]


class OptionsScreen(ModalScreen[str | None]):
    """An option group; returns the name of the option chosen with Enter (None: closed)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("enter", "choose", "Choose", priority=True),
    ]

    def __init__(self, fleet: str, rows: list[OptionRow], current: str) -> None:
        super().__init__()
        self.fleet = fleet
        self.rows = rows
        self.current = current

    def compose(self) -> ComposeResult:
        base = self.rows[0].name
        with Vertical():
            yield Label(f"[b]Options of {self.fleet}/{base}[/]  [dim]✓ chosen (counted in "
                        "the fleet's totals) · ★ cheapest that fits and meets the SLO · "
                        "Enter chooses · Esc closes[/]")
            yield DataTable(id="options-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table: DataTable[Any] = self.query_one("#options-table", DataTable)
        for key, header, _right in COLUMNS:
            table.add_column(header, key=key)
        for r in self.rows:
            table.add_row(*row_cells(r), key=r.name)
        names = [r.name for r in self.rows]
        table.move_cursor(row=names.index(self.current) if self.current in names else 0)
        table.focus()

    def selected(self) -> str:
        """The option under the cursor."""
        table: DataTable[Any] = self.query_one("#options-table", DataTable)
        return self.rows[table.cursor_row].name

    def action_choose(self) -> None:
        self.dismiss(self.selected())

    def action_close(self) -> None:
        self.dismiss(None)
