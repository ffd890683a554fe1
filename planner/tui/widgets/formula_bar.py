"""The formula bar above the grid: the selected cell's value or formula, and the cell editor.

Like a spreadsheet's formula bar, it shows what is under the cursor: an input's value with its
unit and allowed range, or an output's formula. While a number or text cell is being edited
the bar draws the :class:`~planner.tui.state.editline.LineBuffer` with its cursor, and under it the
reason the value is refused (checked as you type) or the column's help. It never takes the
focus (see :mod:`planner.tui.state.editline` for why), and its height never changes, so redrawing it
costs two lines and no layout.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from planner.spec.domain import Scenario
from planner.tui.state import cells
from planner.tui.state.editline import LineBuffer
from planner.tui.state.rows import Outputs, input_column


class FormulaBar(Static):
    """Two lines: the cell (or the editor), then a hint or an error."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.can_focus = False

    def show_cell(self, reference: str, content: str, hint: str = "") -> None:
        """Show the selected cell: ``reference`` (scenario and column), its value or formula."""
        line = Text.assemble((reference, "bold"), "  ", content, no_wrap=True,
                             overflow="ellipsis")
        self._show(line, Text(hint, style="dim"))

    def show_scenario(self, sc: Scenario, outputs: Outputs, key: str, role: str | None,
                      formula: str = "") -> None:
        """Show column ``key`` of a scenario: an output's value and ``formula`` (read-only), an
        input's value with its unit, help and allowed range, or a name or catalog choice."""
        reference = f"{sc.name} · {key}"
        if role == "group":
            group = key.removeprefix("group:")
            self.show_cell(f"{sc.name} · {group} (folded)", "…",
                           f"the {group} columns, folded · g or Enter unfolds them")
            return
        if role == "output":
            shown = cells.format_value(key, outputs.get(key))
            self.show_cell(reference, f"{shown}   = {formula}" if formula else shown,
                           "computed, read-only · x explains it with the values it used")
            return
        column = input_column(sc.kind, key)
        if column is None:
            hint = {"name": "Enter renames", "lora_targets": "modules LoRA adapts; Enter edits"
                    }.get(key, "Enter chooses from the catalog")
            self.show_cell(reference, str(getattr(sc, key)), hint)
            return
        unit = f" {column.measured_unit}" if column.measured_unit else ""
        self.show_cell(reference, f"{cells.cell(sc, outputs, key, 'input')}{unit}",
                       f"{column.help} · {column.allowed()} · Enter edits")

    def show_edit(self, reference: str, buffer: LineBuffer, error: str = "",
                  hint: str = "") -> None:
        """Show the editor: the text with its cursor, and the error (red) or the hint."""
        below = Text(error, style="bold red") if error else Text(
            hint + "  ·  Enter accepts, Esc cancels", style="dim")
        self._show(self._typed(reference, buffer), below)

    def show_choices(self, reference: str, buffer: LineBuffer, shown: list[str], index: int,
                     error: str = "") -> None:
        """Show a choice editor: the filter typed so far with the error or the keys, then the
        matching choices in a row with the highlighted one in reverse video."""
        first = self._typed(reference, buffer)
        first.append("  ")
        first.append(error or "type to filter · ← → choose · Enter accepts · Esc cancels",
                     style="bold red" if error else "dim")
        self._show(first, choice_row(shown, index, max(20, self.size.width - 2)))

    @staticmethod
    def _typed(reference: str, buffer: LineBuffer) -> Text:
        line = Text.assemble(("✎ ", "bold yellow"), (reference, "bold"), " = ",
                             no_wrap=True, overflow="ellipsis")
        body = Text(buffer.text + " ", style="reverse" if buffer.fresh and buffer.text else "")
        body.stylize("reverse", buffer.cursor, buffer.cursor + 1)
        line.append_text(body)
        return line

    def _show(self, first: Text, second: Text) -> None:
        second.no_wrap, second.overflow = True, "ellipsis"
        self.update(Text("\n").join([first, second]), layout=False)


def _window(shown: list[str], index: int, width: int) -> tuple[int, int]:
    """The first and last choice shown around ``index``: grown on both sides, one choice at
    a time, while the choices (each with two cells of padding) fit in ``width - 4`` cells."""
    first = last = index
    used = len(shown[index]) + 2
    while True:  # grow the window on both sides while it fits
        grew = False
        for side in (-1, 1):
            at = (first - 1) if side < 0 else (last + 1)
            if 0 <= at < len(shown) and used + len(shown[at]) + 2 <= width - 4:
                used += len(shown[at]) + 2
                first, last = (at, last) if side < 0 else (first, at)
                grew = True
        if not grew:
            return first, last


def choice_row(shown: list[str], index: int, width: int) -> Text:
    """The choices around the highlighted one that fit in ``width`` cells, with ``…`` where
    some are cut off."""
    if not shown:
        return Text("no choice matches what is typed", style="bold red")
    index = min(index, len(shown) - 1)
    first, last = _window(shown, index, width)
    row = Text("… " if first > 0 else "  ", style="dim")
    for i in range(first, last + 1):
        row.append(f" {shown[i]} ", style="reverse bold" if i == index else "")
        row.append(" ")
    if last < len(shown) - 1:
        row.append("…", style="dim")
    return row
