"""The views :class:`planner.tui.widgets.grid.SheetTable` puts in place of DataTable's per-row
structures: the rows shown are one array of scenario ids (:class:`RowOrder`), and DataTable's
row store (``_row_locations``, ``_data``, ``rows``, ``ordered_rows``, ``_y_offsets``) is read
through views over it, so showing, filtering or sorting 100,000 rows costs one numpy array.
A drawn row's cells are formatted when read (:class:`LazyCells`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
from rich.text import Text
from textual.widgets._data_table import default_cell_formatter
from textual.widgets.data_table import ColumnKey, Row, RowKey

RowSource = Callable[[int], Mapping[Any, Any]]
"""A row's cells (column key to cell) from its id, asked for when the row is drawn."""

_EMPTY = Text(no_wrap=True, end="")
"""An empty cell, as DataTable draws one (its ``_EMPTY_TEXT``)."""


def row_id(key: Any) -> int | None:
    """The id in a row key (a RowKey or its text), or None."""
    value = getattr(key, "value", key)
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class RowOrder:
    """The rows shown, in display order, as an id array with its inverse (id to position):
    it stands in for DataTable's row locations (a two-way dict of row key and index)."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        size = int(self.ids.max()) + 1 if len(self.ids) else 0
        self._position = np.full(size, -1, dtype=np.int64)
        self._position[self.ids] = np.arange(len(self.ids), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None

    def __iter__(self) -> Iterator[RowKey]:
        return (RowKey(str(i)) for i in self.ids.tolist())

    def get(self, key: object, default: int | None = None) -> int | None:
        """The position of the row with this key."""
        sid = row_id(key)
        if sid is None or not 0 <= sid < len(self._position):
            return default
        position = int(self._position[sid])
        return default if position < 0 else position

    def get_key(self, index: int) -> RowKey | None:
        """The key of the row at this position."""
        if not 0 <= index < len(self.ids):
            return None
        return RowKey(str(int(self.ids[index])))


class RowsView(Mapping[RowKey, Row]):
    """DataTable's row metadata (``rows``) for a :class:`RowOrder`: every row one line."""

    def __init__(self, order: RowOrder) -> None:
        self.order = order

    def __getitem__(self, key: object) -> Row:
        if key not in self.order:
            raise KeyError(key)
        return Row(key if isinstance(key, RowKey) else RowKey(str(key)), 1)

    def __contains__(self, key: object) -> bool:
        return key in self.order

    def __iter__(self) -> Iterator[RowKey]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)


class DataView(Mapping[RowKey, Mapping[Any, Any]]):
    """DataTable's cell data (``_data``) for a :class:`RowOrder`, read from a callback."""

    def __init__(self, order: RowOrder, source: RowSource) -> None:
        self.order, self.source = order, source

    def __getitem__(self, key: object) -> Mapping[Any, Any]:
        sid = row_id(key)
        if sid is None or key not in self.order:
            raise KeyError(key)
        return self.source(sid)

    def __contains__(self, key: object) -> bool:
        return key in self.order

    def __iter__(self) -> Iterator[RowKey]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)


class OrderedRows(Sequence[Row]):
    """DataTable's ``ordered_rows`` (or, with ``offsets``, its ``_y_offsets``: one
    (row key, line) per line) for a :class:`RowOrder`, over a range of positions."""

    def __init__(self, order: RowOrder, span: range | None = None,
                 offsets: bool = False) -> None:
        self.order, self.offsets = order, offsets
        self.span = range(len(order)) if span is None else span

    def __len__(self) -> int:
        return len(self.span)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> OrderedRows: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return OrderedRows(self.order, self.span[index], self.offsets)
        key = self.order.get_key(self.span[index])
        assert key is not None
        return (key, 0) if self.offsets else Row(key, 1)

    def clear(self) -> None:
        """Nothing is held (DataTable's ``clear`` empties its offsets list)."""


class LazyCells(Sequence[Any]):
    """A drawn row's cells (DataTable's ``RowRenderables.cells``), each formatted the first time
    it is read. DataTable formats every cell of a row it draws; the grid renders only the
    columns in view (:meth:`planner.tui.widgets.grid.SheetTable._render_cell`), so about 10 of a
    row's 70-odd cells are ever read, and a frame of fresh rows (after a sort, a filter, a new
    or deleted row) formats those only. Reading every cell (DataTable measuring auto-width
    columns) formats them all, as DataTable does."""

    __slots__ = ("data", "done", "keys")

    def __init__(self, data: Mapping[Any, Any], keys: Sequence[ColumnKey]) -> None:
        self.data, self.keys = data, keys
        self.done: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.keys)))]
        if index < 0:
            index += len(self.keys)
        cell = self.done.get(index)
        if cell is None:
            key = self.keys[index]  # IndexError past the end, as a list's
            try:
                datum = self.data[key]
            except KeyError:
                datum = None
            cell = self.done[index] = (_EMPTY if datum is None else
                                       default_cell_formatter(datum, wrap=False, height=1)
                                       or _EMPTY)
        return cell
