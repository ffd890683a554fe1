"""A DataTable that can replace one row's cells without re-rendering the whole table.

Textual's ``DataTable.update_cell`` bumps a table-wide counter that is part of every render
cache key, so one edited row re-renders every visible cell (about 1,500 on a wide screen,
~0.5 s here). :meth:`SheetTable.update_row` instead drops only that row's cached cells and rows
(and the cheap line cache) and refreshes: an edit costs one row. It relies on DataTable's
private caches of textual 8 (pinned in pyproject), with the public ``update_cell`` as fallback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey


class SheetTable(DataTable):
    """The scenario grid."""

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
        line_cache.clear()
        self.refresh()

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
