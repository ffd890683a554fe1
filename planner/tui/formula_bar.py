"""The formula bar above the grid: the selected cell's value or formula, and the cell editor.

Like a spreadsheet's formula bar, it shows what is under the cursor: an input's value with its
unit and allowed range, or an output's formula. While a number or text cell is being edited
the bar draws the :class:`~planner.tui.editline.LineBuffer` with its cursor, and under it the
reason the value is refused (checked as you type) or the column's help. It never takes the
focus (see :mod:`planner.tui.editline` for why), and its height never changes, so redrawing it
costs two lines and no layout.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from planner.tui.editline import LineBuffer


class FormulaBar(Static):
    """Two lines: the cell (or the editor), then a hint or an error."""

    DEFAULT_CSS = """
    FormulaBar { height: 2; padding: 0 1; background: $boost; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.can_focus = False

    def show_cell(self, reference: str, content: str, hint: str = "") -> None:
        """Show the selected cell: ``reference`` (scenario and column), its value or formula."""
        line = Text.assemble((reference, "bold"), "  ", content, no_wrap=True,
                             overflow="ellipsis")
        self._show(line, Text(hint, style="dim"))

    def show_edit(self, reference: str, buffer: LineBuffer, error: str = "",
                  hint: str = "") -> None:
        """Show the editor: the text with its cursor, and the error (red) or the hint."""
        line = Text.assemble(("✎ ", "bold yellow"), (reference, "bold"), " = ",
                             no_wrap=True, overflow="ellipsis")
        shown = buffer.text + " "
        body = Text(shown, style="reverse" if buffer.fresh and buffer.text else "")
        body.stylize("reverse", buffer.cursor, buffer.cursor + 1)
        line.append_text(body)
        below = Text(error, style="bold red") if error else Text(
            hint + "  ·  Enter accepts, Esc cancels", style="dim")
        self._show(line, below)

    def _show(self, first: Text, second: Text) -> None:
        second.no_wrap, second.overflow = True, "ellipsis"
        self.update(Text("\n").join([first, second]), layout=False)
