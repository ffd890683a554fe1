"""A DataTable for thousands of rows that change one at a time.

- :meth:`SheetTable.set_rows` adds many rows at once. Each row is one mapping of column key to
  cell (the grid's are formatted only when drawn), instead of DataTable's per-row ``add_row``,
  which re-validates the cursor and bumps counters each time.
- :meth:`SheetTable.update_row` replaces one row. Textual's ``update_cell`` bumps a table-wide
  counter that is part of every render-cache key, so one edited row would re-render every
  visible cell (~0.5 s here). This drops only that row's cached cells and lines and refreshes
  its region, so an edit costs one row.
- Column widths are fixed, so new rows are not measured (see ``_update_dimensions``).
- Only the columns in view are rendered. DataTable renders every cell of a row and then crops
  it to the window; with 35 columns of which about 10 fit, the first frame of a full grid cost
  ~0.19 s, mostly on cells nobody sees. Off-screen cells become blanks of the right width
  (never cached), and the assembled rows are dropped whenever the window moves.

These rely on DataTable's private structures of textual 8 (pinned in pyproject); each falls
back to the public API if they change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import DuplicateKey, Row, RowKey


class SheetTable(DataTable):
    """The scenario grid."""

    _window: tuple[int, int, int] = (-1, -1, -1)
    """(scroll x, width, DataTable's change counter) that ``_in_view`` was computed for."""
    _in_view: frozenset[int] = frozenset()

    def set_rows(self, rows: Iterable[tuple[str, Mapping[Any, Any]]]) -> None:
        """Append rows: (row key, mapping of column key to cell), each of height 1."""
        try:
            locations, data, metadata, new = (self._row_locations, self._data, self.rows,
                                              self._new_rows)
        except AttributeError:  # a future DataTable without these internals
            keys = list(self.columns)
            for key, cells in rows:
                self.add_row(*(cells[k.value] for k in keys), key=key)
            return
        for key, cells in rows:
            row_key = RowKey(key)
            if row_key in locations:
                raise DuplicateKey(f"The row key {row_key!r} already exists.")
            locations[row_key] = len(metadata)
            data[row_key] = cells  # type: ignore[assignment]
            metadata[row_key] = Row(row_key, 1)
            new.add(row_key)
        # what add_row does after each row, once
        self._require_update_dimensions = True
        self.cursor_coordinate = self.cursor_coordinate
        if self.row_count and self.columns and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()
        self._update_count += 1
        self.check_idle()

    def update_row(self, row_key: str, cells: Mapping[Any, Any]) -> None:
        """Replace one row's cells and re-render only that row."""
        try:
            data = self._data
            caches = (self._cell_render_cache, self._row_render_cache)
            renderables, line_cache = self._row_renderable_cache, self._line_cache
        except AttributeError:  # a future DataTable without these internals
            for column in self.columns:
                self.update_cell(row_key, column, cells[column.value])
            return
        data[RowKey(row_key)] = cells  # type: ignore[assignment]
        index = self.get_row_index(row_key)
        # the row's formatted cells (keyed by row index), its rendered cells and rows (keyed
        # by row key), then its lines (keyed by y, the header included)
        for key in [k for k in renderables.keys() if k[1] == index]:  # noqa: SIM118
            renderables.discard(key)
        for cache in caches:
            for key in [k for k in cache.keys() if k[0] == row_key]:  # noqa: SIM118
                cache.discard(key)
        header = self.header_height if self.show_header else 0
        if self._total_row_height == self.row_count:  # every row one line high
            lines = {header + index}
        else:
            lines = {header + y for y, (key, _) in enumerate(self._y_offsets) if key == row_key}
        for key in [k for k in line_cache.keys() if k[0] in lines]:  # noqa: SIM118
            line_cache.discard(key)
        self.refresh_row(index)

    def drawn_cell(self, row_key: str, column_key: str) -> str | None:
        """The text the grid draws for a cell right now (stripped), or None when the cell is
        out of view: what the user sees, for tests and benchmarks, as opposed to
        ``get_cell``, which reads the data behind it."""
        row, columns = self.get_row_index(row_key), self.ordered_columns
        index = next(i for i, c in enumerate(columns) if c.key.value == column_key)
        y = (self.header_height if self.show_header else 0) + row - round(self.scroll_y)
        if not 0 <= y < self.size.height:
            return None
        widths = [c.get_render_width(self) for c in columns]
        if index < self.fixed_columns:
            start = sum(widths[:index])
        else:
            start = sum(widths[:index]) - round(self.scroll_x)
            if start < sum(widths[:self.fixed_columns]):
                return None
        if start + widths[index] > self.size.width:
            return None
        return self.render_line(y).text[start:start + widths[index]].strip()

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

    # ---- render only the columns in view
    def _render_line_in_row(self, row_key: Any, line_no: int, base_style: Style,
                            cursor_location: Any, hover_location: Any) -> Any:
        # the counter moves when columns (and their widths) are replaced, not on a row update
        window = (round(self.scroll_x), self.size.width, self._update_count)
        if window != self._window:  # rows assembled for another window have blanks in view
            self._row_render_cache.clear()
            self._window, self._in_view = window, self._columns_in_view()
        return super()._render_line_in_row(row_key, line_no, base_style, cursor_location,
                                           hover_location)

    def _columns_in_view(self) -> frozenset[int]:
        """Indexes of the columns that show, in whole or in part, at the current scroll. A
        row's scrollable part is cropped to [scroll_x + fixed width, scroll_x + width)."""
        columns = self.ordered_columns
        fixed = sum(c.get_render_width(self) for c in columns[:self.fixed_columns])
        left, right = round(self.scroll_x) + fixed, round(self.scroll_x) + self.size.width
        shown, start = set(range(self.fixed_columns)), 0
        for index, column in enumerate(columns):
            end = start + column.get_render_width(self)
            if end > left and start < right:
                shown.add(index)
            start = end
        return frozenset(shown)

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False) -> Any:
        if row_index >= 0 and column_index >= 0 and column_index not in self._in_view:
            row = self.rows.get(self._row_locations.get_key(row_index))
            blank = [Segment(" " * width, base_style)]  # cropped away: never seen
            return [blank] * (row.height if row is not None and row.height else 1)
        return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
