"""A DataTable for 100,000 rows that change one at a time.

- :meth:`SheetTable.show_rows` shows rows without holding them: the grid's rows are an
  array of scenario ids in display order, and a row's cells are asked of a callback when the
  row is drawn. DataTable keeps three per-row structures (row locations, data, row metadata)
  and rebuilds per-row lists (ordered rows, y offsets) after every change; here they are
  views over the id array (:mod:`planner.tui.widgets.grid_rows`), so showing 100,000 rows,
  filtering them or sorting them costs one numpy array, and inserting or deleting one row one
  array copy.
- :meth:`SheetTable.update_row` replaces one row. Textual's ``update_cell`` bumps a table-wide
  counter that is part of every render-cache key, so one edited row would re-render every
  visible cell (~0.5 s here). This drops only that row's cached cells and lines and refreshes
  its region, so an edit costs one row.
- Column widths are fixed, so new rows are not measured (see ``_update_dimensions``).
- Only the columns in view are rendered. DataTable renders every cell of a row and then crops
  it to the window; with 35 columns of which about 10 fit, the first frame of a full grid cost
  ~0.19 s, mostly on cells nobody sees. Off-screen cells become blanks of the right width
  (never cached), and the assembled rows are dropped whenever the window moves.
- Only the cells in view are formatted: DataTable formats a whole row to draw it
  (``_compute_row_renderables``); here a drawn row's cells are formatted when read
  (:class:`~planner.tui.widgets.grid_rows.LazyCells`), so a frame of fresh rows (a sort, a
  filter, a new or deleted row) formats about 10 cells a row instead of 70-odd.

The subclass contract. DataTable has no public API for rows it does not hold, so this is a
documented subclass of textual 8.2's DataTable (pinned below 8.3 in pyproject). It relies on
the internals named in :data:`INTERNALS`, and on nothing else private:

- state it replaces with views over the id array: ``_row_locations`` and ``_data`` (the row
  store), ``rows`` (public, replaced), ``_new_rows``; ``ordered_rows`` (public) and
  ``_y_offsets`` are overridden;
- caches it drops selectively (:meth:`SheetTable.update_row`, :meth:`SheetTable.show_rows`):
  ``_row_renderable_cache``, ``_cell_render_cache``, ``_row_render_cache``, ``_line_cache``,
  ``_clear_caches`` and the change counter ``_update_count`` that keys them;
- the layout flags it sets as ``add_row`` does: ``_require_update_dimensions``,
  ``_highlight_cursor``; the row-label width ``_row_label_column_width`` and
  ``_should_render_row_labels`` it reads;
- the rendering hooks it overrides, each calling DataTable's for what it does not handle:
  ``_get_cell_region``, ``_get_row_region``, ``_update_dimensions``,
  ``_compute_row_renderables``, ``_render_line_in_row`` (for the rows of ``show_rows``
  replaced: it assembles a line as DataTable does, with one blank per run of columns out of
  view), ``_render_cell``, and those it calls: ``_get_row_renderables``,
  ``_get_styles_to_render_cell``, ``_show_hover_cursor``, ``_pseudo_class_state``,
  ``_render_line`` (public ``render_line``, ``render_lines`` and ``ordered_columns`` are
  overridden to share one frame's lookups, :mod:`~planner.tui.widgets.grid_frame`); from
  the private module, ``RowRenderables`` and ``default_cell_formatter``.

:func:`missing_internals` lists those the installed Textual lacks; when any is missing the grid
falls back to DataTable's public API (``add_row``, ``update_cell``: correct, slower at scale),
and ``tests/tui/test_tui_state.py`` fails on the pinned version, naming them, so an upgrade of
Textual is a matter of that list. Everything else goes through the public API (``columns``,
``ordered_columns``, ``rows``, ``cursor_coordinate``, ``move_cursor``, ``refresh_row``...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.geometry import Region, Size
from textual.renderables.styled import Styled
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets._data_table import RowRenderables
from textual.widgets.data_table import ColumnKey

from planner.tui.widgets.grid_frame import Frame
from planner.tui.widgets.grid_rows import (
    DataView,
    LazyCells,
    OrderedRows,
    RowOrder,
    RowSource,
    RowsView,
)

INTERNALS = ("_row_locations", "_data", "_new_rows", "_y_offsets", "_row_renderable_cache",
             "_cell_render_cache", "_row_render_cache", "_line_cache", "_clear_caches",
             "_update_count", "_require_update_dimensions", "_highlight_cursor",
             "_row_label_column_width", "_should_render_row_labels", "_get_cell_region",
             "_get_row_region", "_update_dimensions", "_compute_row_renderables",
             "_render_line_in_row", "_render_cell", "_get_row_renderables",
             "_get_styles_to_render_cell", "_show_hover_cursor", "_pseudo_class_state",
             "_render_line")
"""The private names of DataTable that :class:`SheetTable` reads, sets or overrides (the
module docstring says what each is for)."""

K = TypeVar("K")

def _discard(cache: LRUCache[K, Any], drop: Callable[[K], bool]) -> None:
    """Drop the entries of one of DataTable's render caches whose key ``drop`` picks."""
    for key in [k for k in cache.keys() if drop(k)]:  # noqa: SIM118
        cache.discard(key)


def _highlighted(cursor: Coordinate, cell: Coordinate, cursor_type: str) -> bool:
    """Whether a cursor of ``cursor_type`` (cell, column or none; a row cursor's lines are
    DataTable's) at ``cursor`` highlights ``cell``, as DataTable decides it."""
    if cursor_type == "cell":
        return cursor == cell
    return cursor_type == "column" and cursor.column == cell.column


def missing_internals(table: DataTable[Any] | None = None) -> list[str]:
    """The names of :data:`INTERNALS` that the installed Textual's DataTable lacks (checked
    on ``table``, or on a new DataTable): [] on the version pinned in pyproject."""
    probe = DataTable() if table is None else table
    return [name for name in INTERNALS if not hasattr(probe, name)]


class SheetTable(DataTable):
    """The scenario grid."""

    _window: tuple[int, int, int] = (-1, -1, -1)
    """(scroll x, width, DataTable's change counter) that ``_in_view`` was computed for."""
    _in_view: frozenset[int] = frozenset()
    _column_keys: list[ColumnKey] = []
    """The columns' keys in display order, for the window of ``_in_view``."""
    _order: RowOrder | None = None
    """The rows shown by :meth:`show_rows` (None: DataTable's own row store)."""
    _source: RowSource | None = None

    def show_rows(self, ids: np.ndarray, source: RowSource,
                  cursor_row: int | None = None) -> None:
        """Show the rows of ``ids`` (scenario ids, in display order) in place of those shown,
        each row's cells read from ``source`` when it is drawn. The columns stay; the cursor
        goes to ``cursor_row`` (default: it stays at its index, clamped)."""
        if self._public_only():
            self.clear()
            self.set_rows((str(i), source(int(i))) for i in ids)
            return
        order = RowOrder(ids)
        self._order, self._source = order, source
        self._row_locations = order  # type: ignore[assignment]
        self.rows = RowsView(order)  # type: ignore[assignment]
        self._data = DataView(order, source)  # type: ignore[assignment]
        self._new_rows.clear()
        self._changed(cursor_row)

    _missing: list[str] | None = None
    """:func:`missing_internals` for this grid, found on its first :meth:`show_rows`."""

    def _public_only(self) -> bool:
        """Whether this Textual lacks an internal the grid relies on: then it shows its rows
        through DataTable's public API (every row added, every cell formatted)."""
        if self._missing is None:
            self._missing = missing_internals(self)
        return bool(self._missing)

    def _changed(self, cursor_row: int | None = None) -> None:
        """After the rows shown changed: drop what was rendered for the old ones, lay out
        and put the cursor back in range."""
        self._clear_caches()
        self._update_count += 1
        self._require_update_dimensions = True
        row = self.cursor_coordinate.row if cursor_row is None else cursor_row
        self.cursor_coordinate = self.cursor_coordinate._replace(
            row=max(0, min(row, self.row_count - 1)))
        if self.row_count and self.columns and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()
        self.refresh()
        self.check_idle()

    @property
    def shown_ids(self) -> np.ndarray:
        """The ids of the rows shown, in display order."""
        if self._order is not None:
            return self._order.ids
        return np.fromiter((int(k.value or 0) for k in self.rows), dtype=np.int64,
                           count=len(self.rows))

    def clear(self, columns: bool = False) -> Any:
        if self._order is not None:  # back to DataTable's own (empty) row store
            self._order = self._source = None
            self._data, self.rows = {}, {}
        return super().clear(columns)

    _frame: Frame | None = None
    """The lookups the lines of the frame being rendered share (None between frames)."""

    def render_lines(self, crop: Region) -> list[Strip]:
        """DataTable's, the lookups every line shares made once for the frame
        (:class:`~planner.tui.widgets.grid_frame.Frame`)."""
        self._frame = Frame.of(self)
        try:
            lines: list[Strip] = super().render_lines(crop)
            return lines
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        """DataTable's, with the frame's base style (DataTable looks it up on every line)."""
        frame = self._frame
        if frame is None or self.fixed_rows:
            line: Strip = super().render_line(y)
            return line
        scroll_x, scroll_y = self.scroll_offset
        if y >= self._header_lines():
            y += scroll_y
        strip: Strip = self._render_line(y, scroll_x, scroll_x + self.size.width,
                                         frame.base_style)
        return strip

    @property
    def ordered_columns(self) -> Any:
        if self._frame is not None:  # DataTable builds a new list on every call
            return self._frame.columns
        return super().ordered_columns

    @property
    def ordered_rows(self) -> Any:
        if self._order is not None:
            return OrderedRows(self._order)
        return super().ordered_rows

    @property
    def _y_offsets(self) -> Any:
        if self._order is not None:
            return OrderedRows(self._order, offsets=True)
        return super()._y_offsets

    # DataTable finds a row's y by adding up the heights of every row above it; with
    # one-line rows it is the row's index
    def _get_cell_region(self, coordinate: Any) -> Region:
        if self._order is None:
            region: Region = super()._get_cell_region(coordinate)
            return region
        if not self.is_valid_coordinate(coordinate):
            return Region(0, 0, 0, 0)
        row, column = coordinate
        columns = self.ordered_columns
        x = sum(c.get_render_width(self) for c in columns[:column]) + \
            self._row_label_column_width
        return Region(x, row + self._header_lines(), columns[column].get_render_width(self), 1)

    def _get_row_region(self, row_index: int) -> Region:
        if self._order is None:
            region: Region = super()._get_row_region(row_index)
            return region
        if not self.is_valid_row_index(row_index):
            return Region(0, 0, 0, 0)
        width = sum(c.get_render_width(self) for c in self.columns.values()) + \
            self._row_label_column_width
        return Region(0, row_index + self._header_lines(), max(self.size.width, width), 1)

    def _header_lines(self) -> int:
        return self.header_height if self.show_header else 0

    def set_rows(self, rows: Iterable[tuple[str, Mapping[Any, Any]]]) -> None:
        """Append rows: (row key, mapping of column key to cell), through ``add_row``."""
        if self._order is not None:  # rows of show_rows: DataTable's own store again
            self.clear()
        keys = list(self.columns)
        for key, cells in rows:
            self.add_row(*(cells[k.value] for k in keys), key=key)

    def update_row(self, row_key: str, cells: Mapping[Any, Any]) -> None:
        """Replace one row's cells and re-render only that row (rows of :meth:`show_rows`;
        DataTable's own rows go through ``update_cell``)."""
        if self._order is None:
            for column in self.columns:
                self.update_cell(row_key, column, cells[column.value])
            return
        index = self.get_row_index(row_key)
        # the row's formatted cells (keyed by row index), its rendered cells and rows (keyed
        # by row key), then its line (keyed by y, the header included)
        _discard(self._row_renderable_cache, lambda k: k[1] == index)
        _discard(self._cell_render_cache, lambda k: k[0] == row_key)
        _discard(self._row_render_cache, lambda k: k[0] == row_key)
        line = self._header_lines() + index
        _discard(self._line_cache, lambda k: k[0] == line)
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
        if self._order is None or not (
                self.columns and all(not c.auto_width for c in self.columns.values())):
            super()._update_dimensions(new_rows)
            return
        # the rest of DataTable._update_dimensions: the scrollable size from the set widths,
        # every row of show_rows one line
        width = sum(c.get_render_width(self) for c in self.columns.values())
        self.virtual_size = Size(width + self._row_label_column_width,
                                 len(self._order) + self._header_lines())

    # ---- render only the columns in view
    def _compute_row_renderables(self, row_index: int) -> Any:
        """A shown row's cells as :class:`LazyCells`: formatted when drawn, not all at
        once (header rows, row labels and DataTable's own row store keep DataTable's way).
        Every row of :meth:`show_rows` is one line, so cells are formatted as DataTable
        formats a one-line row (no wrap, height 1)."""
        if row_index < 0 or self._order is None or self._should_render_row_labels:
            return super()._compute_row_renderables(row_index)
        if row_index >= len(self._order) or self._source is None:
            return RowRenderables(None, [])
        data = self._source(int(self._order.ids[row_index]))
        keys = [column.key for column in self.ordered_columns]
        return RowRenderables(None, LazyCells(data, keys))  # type: ignore[arg-type]

    def _render_line_in_row(self, row_key: Any, line_no: int, base_style: Style,
                            cursor_location: Any, hover_location: Any) -> Any:
        # the counter moves when columns (and their widths) are replaced, not on a row update
        window = (round(self.scroll_x), self.size.width, self._update_count)
        if window != self._window:  # rows assembled for another window have blanks in view
            self._row_render_cache.clear()
            self._window, self._in_view = window, self._columns_in_view()
            self._column_keys = [column.key for column in self.ordered_columns]
        if (self._order is None or row_key not in self._row_locations  # the header
                or self._should_render_row_labels or self.cursor_type == "row"):
            return super()._render_line_in_row(row_key, line_no, base_style, cursor_location,
                                               hover_location)
        return self._render_body_line(row_key, line_no, base_style, cursor_location,
                                      hover_location)

    def _render_body_line(self, row_key: Any, line_no: int, base_style: Style,
                          cursor_location: Any, hover_location: Any) -> Any:
        """A line of a row of :meth:`show_rows`, as DataTable's ``_render_line_in_row``
        assembles it (same cache, same cells, same fill to the widget's width), except that
        each run of columns out of view is one blank of their width instead of one blank
        cell per column: with 35 columns of which about 10 show, a frame of fresh rows
        (a new, deleted or renamed row moves every row below it) rendered 25 blank cells a
        line, each with its cursor and hover tests, only for them to be cropped away."""
        cursor_type = self.cursor_type
        cache_key = (row_key, line_no, base_style, cursor_location, hover_location, cursor_type,
                     self.show_cursor, self._show_hover_cursor, self._update_count,
                     self._pseudo_class_state)
        hit = self._row_render_cache.get(cache_key)
        if hit is not None:
            return hit
        row_index = self._row_locations.get(row_key)
        assert row_index is not None  # _render_line_in_row sends only rows of show_rows here
        highlight = _highlighted
        frame = self._frame or Frame.of(self)
        fixed_row = self._fixed_cells(frame, row_index, line_no, cursor_location,
                                      hover_location)
        row_style = frame.row_style(row_index, base_style)
        scrollable_row: list[list[Segment]] = []
        in_view, blank = self._in_view, 0
        for column_index, width in enumerate(frame.widths):
            if column_index not in in_view:
                blank += width
                continue
            if blank:
                scrollable_row.append([Segment(" " * blank, row_style)])
                blank = 0
            at = Coordinate(row_index, column_index)
            scrollable_row.append(self._render_cell(
                row_index, column_index, row_style, width,
                cursor=highlight(cursor_location, at, cursor_type),
                hover=highlight(hover_location, at, cursor_type))[line_no])
        if blank:
            scrollable_row.append([Segment(" " * blank, row_style)])
        scrollable_row.append(frame.fill(row_index, row_style, self.size.width))
        row_pair = (fixed_row, scrollable_row)
        self._row_render_cache[cache_key] = row_pair
        return row_pair

    def _fixed_cells(self, frame: Frame, row_index: int, line_no: int, cursor_location: Any,
                     hover_location: Any) -> list[list[Segment]]:
        """Line ``line_no`` of each fixed column's cell of a body row, in DataTable's fixed
        style (with its ``fixed`` metadata), cursor and hover as DataTable tests them."""
        if not frame.fixed_columns:
            return []
        cursor_type = self.cursor_type
        fixed_style = frame.fixed_style + Style.from_meta({"fixed": True})
        fixed_row = []
        for column_index in range(frame.fixed_columns):
            at = Coordinate(row_index, column_index)
            fixed_row.append(self._render_cell(
                row_index, column_index, fixed_style, frame.widths[column_index],
                cursor=_highlighted(cursor_location, at, cursor_type),
                hover=_highlighted(hover_location, at, cursor_type))[line_no])
        return fixed_row

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
        if row_index >= -1 and column_index >= 0 and column_index not in self._in_view:
            # cropped away: never seen (the header's too: every row action that moves rows
            # re-renders the header line, which drew all 83 headers through rich for ~7 shown)
            return self._blank_cell(row_index, base_style, width)
        if row_index < 0 or column_index < 0 or self._order is None:
            return super()._render_cell(row_index, column_index, base_style, width, cursor,
                                        hover)
        return self._render_body_cell(row_index, column_index, base_style, width, cursor,
                                      hover)

    def _blank_cell(self, row_index: int, base_style: Style, width: int
                    ) -> list[list[Segment]]:
        """A cell cropped out of view: blank lines, as many as its row (or the header) has."""
        blank = [Segment(" " * width, base_style)]
        if row_index == -1:
            height = self.header_height
        elif self._order is not None or row_index >= self.row_count:
            height = 1
        else:
            height = self.ordered_rows[row_index].height or 1
        return [blank] * height

    SHARED_CELLS = 20_000
    """Cells rendered without their position kept for reuse (:meth:`_render_body_cell`)."""
    _shared: LRUCache[Any, list[list[Segment]]] | None = None

    def _render_body_cell(self, row_index: int, column_index: int, base_style: Style,
                          width: int, cursor: bool, hover: bool) -> Any:
        """A one-line cell of the rows shown by :meth:`show_rows`, as DataTable renders it,
        but through a second cache keyed by what the cell shows (its text and styles, width,
        the row's style, cursor and hover) instead of where: a row action moves every row
        below it, and DataTable's own cache, keyed by row, is emptied then; most cells of the
        rows that moved (a model, a GPU, a dtype, a yes/no) look like cells rendered before.
        The position (DataTable's row and column metadata, read by mouse clicks) is added to
        the reused lines' styles, which is what DataTable's rendering gives them too."""
        row_key = self._order.get_key(row_index) if self._order is not None else None
        if row_key is None:  # no row at this index: rendered as DataTable renders it
            return super()._render_cell(row_index, column_index, base_style, width, cursor,
                                        hover)
        keys = self._column_keys
        column_key = keys[column_index] if column_index < len(keys) else \
            self.ordered_columns[column_index].key
        cache_key = (row_key, column_key, base_style, cursor, hover, self._show_hover_cursor,
                     self._update_count, self._pseudo_class_state)
        lines = self._cell_render_cache.get(cache_key)
        if lines is not None:
            return lines
        cell = self._get_row_renderables(row_index).cells[column_index]
        if not isinstance(cell, Text):
            return super()._render_cell(row_index, column_index, base_style, width, cursor,
                                        hover)
        fixed = row_index < self.fixed_rows or column_index < self.fixed_columns
        bare = self._bare_lines(cell, base_style, width, fixed, cursor, hover)
        where = Style.from_meta({"row": row_index, "column": column_index})
        lines = [[Segment(text, where if style is None else style + where, control)
                  for text, style, control in line] for line in bare]
        self._cell_render_cache[cache_key] = lines
        return lines

    def _bare_lines(self, cell: Text, base_style: Style, width: int, fixed: bool,
                    cursor: bool, hover: bool) -> list[list[Segment]]:
        """A body cell's lines without its position, rendered once per look (its text and
        styles, width, the row's style, cursor and hover) and kept in :attr:`_shared`."""
        component_style, post_style = self._get_styles_to_render_cell(
            False, False, fixed, hover, cursor, self.show_cursor, self._show_hover_cursor,
            self.cursor_foreground_priority == "css", self.cursor_background_priority == "css")
        shared = self._shared
        if shared is None:
            shared = self._shared = LRUCache(self.SHARED_CELLS)
        look = (cell.plain, cell.style, cell.justify, cell.overflow, cell.no_wrap, cell.end,
                cell.tab_size, tuple(cell.spans), width, self.cell_padding, base_style,
                component_style, post_style)
        bare = shared.get(look)
        if bare is None:
            options = self.app.console_options.update_dimensions(width, 1).update(no_wrap=True)
            bare = self.app.console.render_lines(
                Styled(Padding(cell, (0, self.cell_padding)),
                       pre_style=base_style + component_style, post_style=post_style),
                options)
            shared[look] = bare
        return bare
