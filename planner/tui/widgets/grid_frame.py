"""What every line of one frame of the scenario grid shares, looked up once per frame.

DataTable asks for the same things on every line it draws: the ordered columns (a new list
each time), each column's render width (the fill to the widget's width sums all 83), the
widget's rich style (a walk up the DOM), the fixed and zebra component styles and the
background the fill fades toward. A frame after a new, rename or delete at 100,000 scenarios
draws ~40 fresh lines, and those lookups were about a third of it (``BENCH_TUI_PROFILE`` of
``benchmarks/bench_tui.py``). :class:`Frame` holds them for one render pass
(:meth:`planner.tui.widgets.grid.SheetTable.render_lines`) and nothing is kept between passes,
so a style, theme or column change shows at the next frame, as it does in DataTable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.style import Style
from textual.color import Color

if TYPE_CHECKING:
    from textual.widgets import DataTable
    from textual.widgets.data_table import Column


@dataclass(slots=True)
class Frame:
    """One render pass's shared lookups of a grid (module docstring)."""

    base_style: Style
    """The widget's rich style: every line's base, as DataTable's ``render_line`` gives it."""
    columns: list[Column]
    """The columns in display order (DataTable's ``ordered_columns``)."""
    widths: list[int]
    """Each column's render width, cells, in display order."""
    fixed_columns: int
    fixed_rows: int
    fixed_style: Style
    """The ``datatable--fixed`` component style (fixed rows and columns)."""
    zebra: tuple[Style, Style] | None
    """The even and odd rows' component styles with zebra stripes on, else None."""
    fade_to: Color
    """The background a cell or column cursor's fill fades a quarter toward."""
    table_width: int
    """Cells the scrollable columns and the row labels take: the fill covers the rest."""

    @classmethod
    def of(cls, table: DataTable[Any]) -> Frame:
        """The lookups of ``table`` as it is now."""
        columns = table.ordered_columns
        widths = [column.get_render_width(table) for column in columns]
        fixed = table.fixed_columns
        zebra = None
        if table.zebra_stripes:
            zebra = (table.get_component_styles("datatable--even-row").rich_style,
                     table.get_component_styles("datatable--odd-row").rich_style)
        return cls(table.rich_style, columns, widths, fixed, table.fixed_rows,
                   table.get_component_styles("datatable--fixed").rich_style, zebra,
                   table.background_colors[1],
                   sum(widths[fixed:]) + table._row_label_column_width)

    def row_style(self, row_index: int, base_style: Style) -> Style:
        """A body row's style, as DataTable's ``_get_row_style`` gives it: fixed rows',
        zebra stripes', else ``base_style``."""
        if row_index < self.fixed_rows:
            return self.fixed_style
        if self.zebra is not None:
            return self.zebra[row_index % 2]
        return base_style

    def fill(self, row_index: int, row_style: Style, width: int) -> list[Segment]:
        """DataTable's fill of a body line to the widget's ``width`` (a cell or column
        cursor: the row's colours, its background faded a quarter toward the widget's)."""
        if row_style.bgcolor is not None:
            faded = Color.from_rich_color(row_style.bgcolor).blend(self.fade_to, factor=0.25)
            style = Style.from_color(color=row_style.color, bgcolor=faded.rich_color)
        else:
            style = Style.from_color(row_style.color, row_style.bgcolor)
        style += Style.from_meta({"row": row_index, "column": 0, "out_of_bounds": True})
        return [Segment(" " * max(0, width - self.table_width), style)]
