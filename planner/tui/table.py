"""A DataTable that can replace one row's cells without re-rendering the whole table.

Textual's ``DataTable.update_cell`` bumps a table-wide counter that is part of every render
cache key, so one edited row re-renders every visible cell (about 1,500 on a wide screen,
~0.5 s here). :meth:`SheetTable.update_row` instead drops only that row's cached cells and rows
and lines, and refreshes that row's region: an edit costs one row. It relies on DataTable's
private caches of textual 8 (pinned in pyproject), with the public ``update_cell`` as fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from textual import events
from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey


class SheetTable(DataTable):
    """The scenario grid.

    ``key_handler`` sees every key before the table's own bindings and the app's; when it
    returns True the key is consumed. The formula bar's editor uses it so that the grid keeps
    the focus while a cell is edited (see :mod:`planner.tui.editline`)."""

    key_handler: Callable[[events.Key], bool] | None = None

    def _on_key(self, event: events.Key) -> None:
        # Textual calls each class's _on_key in turn; prevent_default skips the base ones
        if self.key_handler is not None and self.key_handler(event):
            event.stop()
            event.prevent_default()

    def update_row(self, row_key: str, values: Mapping[str, Any]) -> None:
        """Set several cells of one row and re-render only that row."""
        try:
            data = self._data[RowKey(row_key)]
            caches = (self._cell_render_cache, self._row_render_cache)
            line_cache = self._line_cache
        except AttributeError:  # a future DataTable without these internals
            for column, value in values.items():
                self.update_cell(row_key, column, value)
            return
        for column, value in values.items():
            data[ColumnKey(column)] = value
        for cache in caches:
            for key in [k for k in cache.keys() if k[0] == row_key]:  # noqa: SIM118
                cache.discard(key)
        # the row's lines (line-cache keys start with the line's y, header included)
        header = self.header_height if self.show_header else 0
        lines = {header + y for y, (key, _) in enumerate(self._y_offsets) if key == row_key}
        for key in [k for k in line_cache.keys() if k[0] in lines]:  # noqa: SIM118
            line_cache.discard(key)
        self.refresh_row(self.get_row_index(row_key))

    def _update_dimensions(self, new_rows: Any) -> None:
        """Skip measuring every new cell when every column has a fixed width: DataTable would
        otherwise format and measure all 170,000 cells of a 5,000-row grid before its first
        paint (about 6 s here) only to learn widths that are already set."""
        if not (self.columns and all(not c.auto_width for c in self.columns.values())):
            super()._update_dimensions(new_rows)
            return
        # the rest of DataTable._update_dimensions: the scrollable size from the set widths
        width = sum(c.get_render_width(self) for c in self.columns.values())
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(width + self._row_label_column_width,
                                 self._total_row_height + header)
