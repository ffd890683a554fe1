"""Tables of new scenarios from files: CSV, Excel (.xlsx) and Parquet, read whole as columns.

The first row (line) is the header: ``name,model,gpu`` then any of ``kind``, ``notes``,
``lora_targets`` and the scenario input columns (:mod:`planner.compute.inputs`). Every cell is
read as the file holds it (text in CSV, typed values in .xlsx and Parquet); the validation
(:func:`planner.compute.checks.check_table`) parses each column once. Data row ``i`` (from 0)
is line ``i + 2`` of the file, as the header is line 1 (a CSV row is one line; a sheet row is
its row number).

Parquet needs ``pyarrow`` (``pip install 'planner[parquet]'``); it is imported only then.

Nothing in the file is trusted. The file is opened as a regular file of at most
:data:`MAX_FILE_BYTES` (:mod:`planner.core.files`: a FIFO or a device is refused before reading)
and handed to the reader as that open file. A table is at most :data:`MAX_TABLE_ROWS` rows
and :data:`MAX_TABLE_COLUMNS` columns (checked before the rows are read: from the Parquet
metadata, the sheet's cell references, the CSV's first line). An .xlsx is streamed by the
bounded reader of the scenario sheets (:mod:`planner.io.xlsx.stream`, never a library
that builds the sheet's whole grid), so a far cell, a row past the limit or a zip bomb is
refused by name; a date, an error value (``#DIV/0!``) or a NaN in any cell, and a Parquet
column of nested (struct, list, map), binary or date/time values or holding a NaN, are refused
naming the cell or column: never coerced to a number, a default or the text ``b'...'``.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

from planner.core.errors import PlannerError
from planner.core.files import FileRefused, open_regular
from planner.io.xlsx.parts import SheetRefused, date_styles, shared_strings, sheet_parts
from planner.io.xlsx.stream import read_columns

FORMATS = {".csv": "CSV", ".xlsx": "Excel", ".parquet": "Parquet"}
"""The file types a table of scenarios may come in, by suffix."""

MAX_FILE_BYTES = 2 << 30
"""Largest file read (100,000 scenarios with every input column take about 60 MB as CSV)."""
MAX_TABLE_ROWS = 1_048_575
"""Most data rows a table may hold (Excel's 1,048,576 rows less the header)."""
MAX_TABLE_COLUMNS = 512
"""Most columns a table may hold (a scenario has about 120 input and meta columns)."""
MAX_TABLE_CELLS = 64_000_000
"""Most cells (rows × columns) a table may span: about 512 MB of cell references."""
MAX_SHEET_BYTES = 16 << 30
"""Largest uncompressed sheet XML streamed (bounds time; memory is per kept cell)."""
MAX_STRINGS_BYTES = 256 << 20
"""Largest uncompressed shared-string table read."""
MAX_LISTED = 20
"""Refused cells listed in one message (with the total count)."""


def read_table(path: Path | str) -> pd.DataFrame:
    """The file at ``path`` as a DataFrame with its header as column names; a file that
    cannot be read is a :class:`PlannerError` naming it (an empty file is a table with no
    columns). Column names are kept as written (stripped); the validation judges them."""
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise PlannerError(f"{path}: unknown file type {path.suffix or '(none)'!r}; give a "
                           + ", ".join(FORMATS) + " file")
    try:
        fh = open_regular(path, MAX_FILE_BYTES, f"{kind} table of scenarios")
    except FileRefused as exc:
        raise PlannerError(str(exc)) from None
    with fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return pd.DataFrame()
        frame = _read_frame(fh, path, kind)
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _read_frame(fh: BinaryIO, path: Path, kind: str) -> pd.DataFrame:
    """The open file read by its kind's reader; any failure but a :class:`PlannerError` is one."""
    try:
        return _READERS[kind](fh, path)
    except PlannerError:
        raise
    except MemoryError:
        raise PlannerError(f"{path}: too large to read in this machine's memory") from None
    except Exception as exc:  # a damaged file: say which and why, change nothing
        raise PlannerError(f"{path}: not a readable {kind} file "
                           f"({_short(str(exc).strip())})") from exc


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _too_many(path: Path, rows: int | None = None, columns: int | None = None) -> PlannerError:
    if rows is not None:
        return PlannerError(f"{path}: more than {MAX_TABLE_ROWS:,} data rows; split the file")
    return PlannerError(f"{path}: {columns:,} columns, more than the {MAX_TABLE_COLUMNS} a "
                        "table of scenarios may have")


def _csv(fh: BinaryIO, path: Path) -> pd.DataFrame:
    """Every cell as text (an empty cell as ''), so each column is parsed by its own rule."""
    first = fh.readline(1 << 20)
    if first.count(b",") + 1 > MAX_TABLE_COLUMNS:
        raise _too_many(path, columns=first.count(b",") + 1)
    fh.seek(0)
    try:
        frame = pd.read_csv(fh, dtype=str, keep_default_na=False, na_filter=False,
                            skip_blank_lines=True, encoding="utf-8-sig",
                            nrows=MAX_TABLE_ROWS + 1)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    if len(frame) > MAX_TABLE_ROWS:
        raise _too_many(path, rows=len(frame))
    return frame


def _xlsx(fh: BinaryIO, path: Path) -> pd.DataFrame:
    """The first sheet, streamed (:func:`planner.io.xlsx.stream.read_columns`): typed
    cells, formulas as their cached values, a constant flag formula as its flag; a date, an
    error value or a NaN refused naming its cell."""
    with zipfile.ZipFile(fh) as z:
        cols = _first_sheet(z, path)
    if cols is None:
        return pd.DataFrame()
    header = [("" if h is None else str(h)) for h in cols.header]
    while header and not header[-1].strip():  # trailing empty header cells
        header.pop()
    width = len(header)
    rows = cols.rows
    if not width and not len(rows):
        return pd.DataFrame()
    n = int(rows[-1]) - 1 if len(rows) else 0  # data rows 2..last, blank ones kept as lines
    if n * (width + 1) > MAX_TABLE_CELLS:
        raise PlannerError(f"{path}: the sheet spans {n:,} rows × {width} columns, more than "
                           f"{MAX_TABLE_CELLS:,} cells; a table of scenarios is far smaller")
    _refuse_marked(path, cols, header, width)
    return _sheet_frame(cols, header, n)


def _first_sheet(z: zipfile.ZipFile, path: Path) -> Any:
    """The workbook's first sheet streamed (at most :data:`MAX_TABLE_COLUMNS` columns and
    :data:`MAX_TABLE_ROWS` rows), ``None`` when it has no sheet; a cell outside those bounds
    or a sheet too large refused naming it."""
    try:
        sheets = sheet_parts(z)
        if not sheets:
            return None
        name, member = next(iter(sheets.items()))
        strings = shared_strings(z, MAX_STRINGS_BYTES, lambda: PlannerError(
            f"{path}: the shared string table is larger than "
            f"{MAX_STRINGS_BYTES >> 20} MiB uncompressed"))
        return read_columns(z, member, keep=range(1, MAX_TABLE_COLUMNS + 1),
                            width=MAX_TABLE_COLUMNS, max_rows=MAX_TABLE_ROWS,
                            max_bytes=MAX_SHEET_BYTES, strings=strings, dates=date_styles(z))
    except SheetRefused as exc:
        if exc.cell:
            raise PlannerError(
                f"{path}: cell {name}!{exc.cell} is outside a table of scenarios (at most "
                f"{MAX_TABLE_ROWS:,} data rows and {MAX_TABLE_COLUMNS} columns); clear it "
                "and save again") from None
        raise PlannerError(f"{path}: sheet {name} {exc.what}") from None


def _sheet_frame(cols: Any, header: list[str], n: int) -> pd.DataFrame:
    """The sheet's ``n`` data rows as a frame of Python values (blank rows kept as empty
    lines), a column per header cell (``Unnamed: i`` for an empty one) and one more when
    cells lie past the header."""
    rows = cols.rows
    width = len(header)
    at = rows - 2
    columns: dict[str, pd.Series] = {}
    for i, title in enumerate(header):
        key = title if title.strip() else f"Unnamed: {i}"
        out = np.full(n, None, dtype=object)
        if len(rows):
            values, _formulas = cols.values(i, numeric=False, strip=False)
            out[at] = values.to_numpy(dtype=object)
        columns[key] = pd.Series(out, dtype=object)
    if any(cols.cells_in(j) for j in range(width, MAX_TABLE_COLUMNS)):  # past the header
        columns[f"Unnamed: {width}"] = pd.Series([None] * n, dtype=object)
    return pd.DataFrame(columns)


def _refuse_marked(path: Path, cols: Any, header: list[str], width: int) -> None:
    """A :class:`PlannerError` listing every date, error value or NaN cell (the first
    :data:`MAX_LISTED`, and how many in all) as ``FILE:line (column): reason``."""
    found: list[tuple[int, int, str]] = []
    for j in range(width):
        found += [(int(cols.rows[i]), j, m.reason()) for i, m in cols.marked(j).items()]
    if not found:
        return
    found.sort()
    lines = [f"{path}:{r} ({header[j] or f'column {j + 1}'}): {why}"
             for r, j, why in found[:MAX_LISTED]]
    more = len(found) - len(lines)
    tail = [f"… and {more:,} more ({len(found):,} problems in all)"] if more > 0 else []
    raise PlannerError(f"{path}: nothing imported, {len(found):,} problem"
                       f"{'s' if len(found) != 1 else ''}:\n  " + "\n  ".join([*lines, *tail]))


def _parquet(fh: BinaryIO, path: Path) -> pd.DataFrame:
    """The table, its shape and column types checked from the metadata before any row is
    read: nested, binary and date/time columns are refused by name, and so is a NaN in a
    number column (Parquet keeps NaN apart from an empty cell; pandas would not)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise PlannerError(f"{path}: reading Parquet needs pyarrow "
                           "(pip install 'planner[parquet]')") from None
    meta = pq.ParquetFile(fh)
    if meta.metadata.num_rows > MAX_TABLE_ROWS:
        raise _too_many(path, rows=meta.metadata.num_rows)
    schema = meta.schema_arrow
    if len(schema) > MAX_TABLE_COLUMNS:
        raise _too_many(path, columns=len(schema))
    for f in schema:
        t = f.type.value_type if pa.types.is_dictionary(f.type) else f.type
        what = _refused_type(pa, t)
        if what is not None:
            raise PlannerError(f"{path}: column {_short(f.name, 80)!r} holds {what} values "
                               f"({t}); a table of scenarios holds numbers, text and flags")
    table = meta.read()
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
            row = int(pc.index(pc.is_nan(column), True).as_py())
            raise PlannerError(f"{path}:{row + 2} ({_short(name, 80)}): is NaN, not a finite "
                               "number (leave the cell empty for the default)")
    frame: pd.DataFrame = table.to_pandas()
    return frame


_READERS: dict[str, Callable[[BinaryIO, Path], pd.DataFrame]] = {
    "CSV": _csv, "Excel": _xlsx, "Parquet": _parquet}
"""Each table kind's reader of an open, non-empty file."""


def _refused_type(pa: Any, t: Any) -> str | None:
    """What a Parquet column type is, in words, when a table of scenarios cannot hold it
    (nested, binary, date or time); ``None`` for numbers, text and flags."""
    if pa.types.is_nested(t):
        return "nested (struct, list or map)"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_temporal(t):
        return "date or time"
    return None


def columns_of(frame: pd.DataFrame) -> dict[str, Any]:
    """A DataFrame's columns by name, for :func:`planner.compute.checks.check_table`."""
    return {str(k): frame[k] for k in frame.columns}
