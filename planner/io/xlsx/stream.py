"""Read the first columns of a worksheet streamed, one compact array per column.

A planner export of 100,000 scenarios has a Scenarios sheet of about 1.5 GB of XML and 28
million cells, most of them computed outputs the import does not read. Loading it whole
(calamine's grid, then a Python object per cell) takes gigabytes; this module instead streams
the sheet's XML from the zip once, in 1 MiB pieces, and keeps only the cells of the columns
``keep`` (a scenario sheet's meta and input columns), each as numbers in a float64
array, texts and flags as codes into one table of distinct values, and a formula flag. Memory
is about 13 bytes per kept cell plus one copy of each distinct text, whatever the sheet's size.

Each run of kept columns is cut out of a row with plain string searches (for the cells
``<c r="{letter}{row}"`` around it), and the cells of a whole piece
are matched with one regular expression; each distinct (type, content) pair is decoded once.

Nothing in the file is trusted: a row number beyond ``max_rows + 1`` (the header is row 1),
a cell beyond column ``width`` (the last cell of each row and the ``<dimension>`` are checked;
cells are in column order in a valid sheet), a part larger than ``max_bytes``, a single row
larger than :data:`MAX_ROW_BYTES`, and a cell without its ``r`` reference are refused with
:class:`SheetRefused` naming what is wrong, before anything is kept for them.

Nothing is coerced either: a number styled as a date, an error value (``#DIV/0!``) and a
number that is not finite (``NaN``) are kept as :class:`Marked` cells, which the reader's
caller refuses by cell name (:meth:`SheetColumns.marked`), never as a number or an empty cell.
A formula that is a constant flag (``TRUE()``, ``FALSE()``: how LibreOffice writes a boolean)
is read as that flag, not as a formula.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from planner.io.xlsx.parts import (
    CHUNK_BYTES,
    Decoder,
    Marked,
    SheetRefused,
    column_letters,
    column_number,
)

MAX_ROW_BYTES = 16 << 20
"""Largest XML of one row (a planner row of 281 columns is about 15 KB)."""
MAX_COLUMN = 16_384
"""Excel's last column (XFD)."""

_DIM = re.compile(r'<(?:\w+:)?dimension\b[^>]*\bref="(?:[A-Z]+[0-9]+:)?([A-Z]{1,3})([0-9]{1,7})"')
_LAST_REF = re.compile(r'\s*r="([A-Z]{1,3})([0-9]{1,7})"')
_SHEETDATA = re.compile(r"<(\w+:)?sheetData\b")
_ROW_NUMBER = re.compile(r'\br="([0-9]{1,7})"')
_TYPE = re.compile(r'\bt="(\w+)"')


_STYLE = re.compile(r'\bs="(\d+)"')
@dataclass(slots=True)
class SheetColumns:
    """The columns ``keep`` of a sheet: ``header`` (row 1, every column), ``rows`` (the
    sheet row number of each data row: a row with a non-empty or formula cell among the kept
    columns), and per kept column (0-based) its cells."""

    header: list[Any]
    rows: np.ndarray
    texts: list[Any]
    """Distinct texts and flags (False and True first); a cell's code indexes it."""
    _cells: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    """Per kept column (0-based column index): (sheet rows, numbers, text codes, formula
    flags) of its cells."""

    @property
    def n(self) -> int:
        """Data rows."""
        return len(self.rows)

    def column(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(numbers: NaN where none, text codes: -1 where none, formula flags) of kept column
        ``index`` for every data row."""
        rows, num, code, formula = self._cells[index]
        n = len(self.rows)
        out_num = np.full(n, np.nan)
        out_code = np.full(n, -1, dtype=np.int32)
        out_formula = np.zeros(n, dtype=bool)
        at = np.searchsorted(self.rows, rows)
        out_num[at], out_code[at], out_formula[at] = num, code, formula
        return out_num, out_code, out_formula

    def cells_in(self, index: int) -> int:
        """Non-empty (or formula) cells of kept column ``index``."""
        return len(self._cells[index][0])

    def marked(self, index: int) -> dict[int, Marked]:
        """The :class:`Marked` cells (a date, an error value, a NaN) of kept column ``index``,
        by data-row index."""
        _num, code, _formula = self.column(index)
        marks = {c for c, v in enumerate(self.texts) if isinstance(v, Marked)}
        if not marks:
            return {}
        at = np.flatnonzero(np.isin(code, list(marks)))
        return {int(i): self.texts[int(code[i])] for i in at}

    def values(self, index: int, *, strip: bool = True, numeric: bool = True
               ) -> tuple[pd.Series, np.ndarray]:
        """(cells of kept column ``index`` as a Series, formula flags): with ``numeric``, a
        float64 Series (NaN: empty) when the column holds only numbers; else an object Series
        of numbers (integral ones as int), texts (``strip``: without outer blanks) and flags,
        with None for an empty cell or empty text."""
        num, code, formula = self.column(index)
        if numeric and not (code >= 0).any():
            return pd.Series(num), formula
        used, inverse = np.unique(code, return_inverse=True)
        out = self._shown(used.tolist(), strip)[inverse.reshape(-1)]
        numbers = np.flatnonzero(code < 0)
        if len(numbers):
            out[numbers] = _boxed(num[numbers])
        return pd.Series(out, dtype=object), formula

    def _shown(self, used: list[int], strip: bool) -> np.ndarray:
        """What each text code in ``used`` shows, as an object array: ``None`` for a number
        (code -1) or an empty text, a text (``strip``: without outer blanks), a flag."""
        shown: list[Any] = []
        for c in used:
            if c < 0:
                shown.append(None)
                continue
            v = self.texts[c]
            if isinstance(v, str):
                v = v.strip() if strip else v
                v = v if v != "" else None
            shown.append(v)
        table = np.empty(len(shown), dtype=object)
        table[:] = shown
        return table


def read_columns(z: zipfile.ZipFile, member: str, *, keep: Sequence[int], width: int,
                 max_rows: int,
                 max_bytes: int, strings: list[str],
                 dates: frozenset[int] = frozenset()) -> SheetColumns:
    """Stream worksheet ``member`` of ``z``; see the module docstring. ``keep``: the
    column numbers kept (1 is A); ``width``: the last column a cell may be in;
    ``max_rows``: data rows (below the header) a cell may be in; ``dates``: the style
    indexes that show a date (:func:`date_styles`), whose numbers are kept as
    :class:`Marked`. Raises :class:`SheetRefused`."""
    reader = _Reader(keep, width, max_rows + 1, Decoder(strings), dates)
    total = 0
    rest = ""
    with z.open(member) as fh:
        while True:
            chunk = fh.read(CHUNK_BYTES)
            total += len(chunk)
            if total > max_bytes:
                raise SheetRefused(f"is larger than {max_bytes >> 20:,} MiB uncompressed")
            text = rest + chunk.decode("utf-8", "replace") if chunk else rest
            if reader.prefix is None:
                body = reader.start(text)
                if body is None:
                    if not chunk:
                        break
                    if len(text) > MAX_ROW_BYTES:
                        raise SheetRefused("has no sheetData element in its first "
                                           f"{MAX_ROW_BYTES >> 20} MiB")
                    rest = text
                    continue
                text = body
            rest = reader.feed(text)
            if not chunk:
                break
    return reader.columns()


class _Reader:
    """The state of one streamed sheet: the kept columns' cells so far (``pieces``, per
    0-based column), the rows that hold one, the header row, and the sheet's XML namespace
    prefix once its ``<sheetData>`` is found."""

    def __init__(self, keep: Sequence[int], width: int, last_row: int, decoder: Decoder,
                 dates: frozenset[int]) -> None:
        self.width, self.last_row, self.decoder, self.dates = width, last_row, decoder, dates
        self.col_of = {column_letters(i): i - 1 for i in keep}
        self.pieces: dict[int, list[tuple[np.ndarray, ...]]] = {i - 1: [] for i in keep}
        self.blocks = _blocks(sorted(set(keep)))
        self.data_rows: list[np.ndarray] = []
        self.header: list[Any] = []
        self.prefix: str | None = None
        self.cell_re: re.Pattern[str] = _cell_pattern("")
        self.pair_cache: dict[tuple[str, ...], tuple[float, int, bool, bool]] = {}

    def start(self, text: str) -> str | None:
        """The XML after ``<sheetData>`` (None while not yet read); a ``<dimension>`` beyond
        the bounds is refused."""
        m = _SHEETDATA.search(text)
        if m is None:
            return None
        dim = _DIM.search(text, 0, m.start())
        if dim and (int(dim.group(2)) > self.last_row
                    or column_number(dim.group(1)) > self.width):
            raise SheetRefused("outside", f"{dim.group(1)}{dim.group(2)}")
        self.prefix = m.group(1) or ""
        self.cell_re = _cell_pattern(self.prefix)
        return text[m.end():]

    def feed(self, text: str) -> str:
        """Keep the cells of the whole rows in ``text``; returns the partial row left over."""
        kept, pos = self._rows(text)
        rest = text[pos:]
        if len(rest) > MAX_ROW_BYTES:
            raise SheetRefused(f"has a row larger than {MAX_ROW_BYTES >> 20} MiB")
        if kept:
            _take("".join(kept), self.prefix or "", self.cell_re, self.col_of, self.decoder,
                  self.pair_cache, self.pieces, self.data_rows, self.dates)
        if len(self.pair_cache) > 1_000_000:
            self.pair_cache.clear()
        return rest

    def _rows(self, text: str) -> tuple[list[str], int]:
        """(the kept segments of each whole row in ``text``, where the first partial row
        starts); row 1 is read as the header, a row or cell beyond the bounds refused."""
        prefix = self.prefix or ""
        open_row, close_row, open_cell = f"<{prefix}row", f"</{prefix}row>", f"<{prefix}c "
        pos = 0
        kept: list[str] = []
        while True:
            start = text.find(open_row, pos)
            if start < 0:
                return kept, (len(text) if text.rfind("<", pos) < 0 else text.rfind("<", pos))
            found = _row_at(text, start, open_row, close_row)
            if found is None:
                return kept, start
            r, body, pos = found
            if body:
                self._row(body, r, open_cell, kept)

    def _row(self, body: str, r: int, open_cell: str, kept: list[str]) -> None:
        """Row ``r``'s XML ``body``: its last cell and row number checked against the
        bounds, then read as the header (row 1) or its kept segments added to ``kept``."""
        last = body.rfind(open_cell)
        ref = _LAST_REF.match(body, last + len(open_cell) - 1) if last >= 0 else None
        if ref and column_number(ref.group(1)) > self.width:
            raise SheetRefused("outside", f"{ref.group(1)}{r}")
        if r > self.last_row:
            raise SheetRefused("outside", f"{ref.group(1) if ref else 'A'}{r}")
        if r == 1:
            self.header = _header(body, self.cell_re, self.decoder)
        else:
            kept.append(_segments(body, self.blocks, open_cell, str(r), self.width))

    def columns(self) -> SheetColumns:
        """The kept cells, per column, and the rows that hold them."""
        rows = (np.unique(np.concatenate(self.data_rows)) if self.data_rows
                else np.zeros(0, dtype=np.int64))
        cells = {}
        for index, column in self.pieces.items():
            if column:
                cells[index] = tuple(np.concatenate([p[i] for p in column]) for i in range(4))
            else:
                cells[index] = (np.zeros(0, dtype=np.int64), np.zeros(0),
                                np.zeros(0, dtype=np.int32), np.zeros(0, dtype=bool))
        return SheetColumns(self.header, rows, self.decoder.texts, cells)  # type: ignore[arg-type]


def _boxed(values: np.ndarray) -> np.ndarray:
    """Numbers as an object array: an integral one as int, a NaN or infinity as ``None``."""
    boxed = np.empty(len(values), dtype=object)
    finite = np.isfinite(values)
    integral = finite & (values == np.floor(np.where(finite, values, 0)))
    boxed[:] = [int(v) if i else (v if f else None) for v, i, f in
                zip(values.tolist(), integral.tolist(), finite.tolist(), strict=True)]
    return boxed


def _row_at(text: str, start: int, open_row: str, close_row: str) -> tuple[int, str, int] | None:
    """(row number, body XML, where the next search starts) of the row tag at ``start``;
    ``None`` when the row is not whole in ``text``. Another tag whose name starts with
    ``row`` (``rowBreaks`` …) is row 0 with no body."""
    head_end = text.find(">", start)
    if head_end < 0:
        return None
    attrs = text[start + len(open_row):head_end]
    if attrs and not attrs[0].isspace() and attrs[0] not in "/":
        return 0, "", head_end + 1  # another tag starting with "row" (rowBreaks …)
    number = _ROW_NUMBER.search(attrs)
    if number is None:
        raise SheetRefused("has a row without its r= number; save it again with "
                           "Excel or LibreOffice")
    r = int(number.group(1))
    if attrs.endswith("/"):
        return r, "", head_end + 1
    end = text.find(close_row, head_end)
    if end < 0:
        return None
    return r, text[head_end + 1:end], end + len(close_row)


def _blocks(columns: list[int]) -> list[tuple[str, ...]]:
    """Runs of consecutive column numbers, each as the letters of the columns whose cell may
    start it (its first, then up to two before) and of the column after it ("" at the end)."""
    out: list[tuple[str, ...]] = []
    start = prev = columns[0]
    for c in [*columns[1:], 0]:
        if c == prev + 1:
            prev = c
            continue
        starts = tuple(column_letters(x) for x in range(start, max(start - 3, 0), -1))
        out.append((column_letters(prev + 1), *starts))
        start = prev = c
    return out


def _segments(body: str, blocks: list[tuple[str, ...]], open_cell: str, row: str,
              width: int) -> str:
    """The parts of a row's XML that hold the kept columns (from the cell of a run's first
    column, or one of the two before it, to the cell after the run); the whole row if a
    run's start cannot be found (a sparse row: slower, same cells)."""
    parts = []
    for after, *starts in blocks:
        if starts[0] == "A":
            begin = 0
        else:
            begin = -1
            for letters in starts:
                begin = body.find(f'{open_cell}r="{letters}{row}"')
                if begin >= 0:
                    break
            if begin < 0:
                return body
        end = body.find(f'{open_cell}r="{after}{row}"', begin)
        parts.append(body[begin:] if end < 0 else body[begin:end])
    return "".join(parts)


def _cell_pattern(prefix: str) -> re.Pattern[str]:
    """A cell with its reference first: groups (column letters, row, other attributes, value
    of a plain ``<v>`` cell, text of a plain inline string, any other content)."""
    return re.compile(
        rf'<{prefix}c r="([A-Z]{{1,3}})([0-9]{{1,7}})"([^>]*?)(?:/>'
        rf"|><{prefix}v>([^<]*)</{prefix}v></{prefix}c>"
        rf'|><{prefix}is><{prefix}t(?: xml:space="preserve")?>([^<]*)</{prefix}t></{prefix}is>'
        rf"</{prefix}c>"
        rf"|>(.*?)</{prefix}c>)", re.S)


def _content(v: str, t: str, content: str) -> str:
    """A cell's content from the groups of :func:`_cell_pattern`."""
    if content:
        return content
    if v:
        return f"<v>{v}</v>"
    return f"<is><t>{t}</t></is>" if t else ""


def _header(body: str, cell_re: re.Pattern[str], decoder: Decoder) -> list[Any]:
    """Row 1's values by column (None where no cell)."""
    out: list[Any] = []
    for letters, _r, attrs, v, t, content in cell_re.findall(body):
        kind = _TYPE.search(attrs)
        num, code, _f, _ne = decoder.decode(kind.group(1) if kind else "n",
                                            _content(v, t, content))
        i = column_number(letters) - 1
        out.extend([None] * (i + 1 - len(out)))
        out[i] = decoder.texts[code] if code >= 0 else (None if num != num else num)
    return out


def _any_order(xml: str, prefix: str) -> list[tuple[str, str, str, str, str, str]]:
    """The cells of ``xml`` as :func:`_take` matches them, whatever the order of their
    attributes (slower: the reference is searched in each cell's attributes)."""
    out = []
    for attrs, content in re.findall(rf"<{prefix}c\b([^>]*?)(?:/>|>(.*?)</{prefix}c>)", xml,
                                     re.S):
        ref = re.search(r'\br="([A-Z]{1,3})([0-9]{1,7})"', attrs)
        if ref is None:
            raise SheetRefused("has a cell without its r= reference; save it again with Excel "
                               "or LibreOffice")
        out.append((ref.group(1), ref.group(2), attrs[:ref.start()] + attrs[ref.end():],
                    "", "", content))
    return out


def _take(xml: str, prefix: str, cell_re: re.Pattern[str], col_of: dict[str, int],
          decoder: Decoder,
          cache: dict[tuple[str, ...], tuple[float, int, bool, bool]],
          pieces: dict[int, list[tuple[np.ndarray, ...]]], data_rows: list[np.ndarray],
          dates: frozenset[int] = frozenset()) -> None:
    """The kept cells of a run of rows, appended to ``pieces`` per column (a number whose
    style is in ``dates`` decoded as a date)."""
    found = cell_re.findall(xml)
    tags = xml.count(f"<{prefix}c ") + xml.count(f"<{prefix}c>") + xml.count(f"<{prefix}c/")
    if tags != len(found):  # a cell whose r= is not its first attribute, or has none
        found = _any_order(xml, prefix)
    if not found:
        return
    letters, rows, attrs, plain_v, plain_t, contents = (
        np.array(x, dtype=object) for x in zip(*found, strict=True))
    l_codes, l_uniques = pd.factorize(letters)
    columns = np.array([col_of.get(x, -1) for x in l_uniques], dtype=np.int64)[l_codes]
    row_numbers = rows.astype(np.int64)
    a_codes, a_uniques = pd.factorize(attrs)
    kinds = _kinds(a_uniques.tolist(), dates)
    numeric = np.array([k == "n" for k in kinds], dtype=bool)[a_codes]
    count = len(found)
    num = np.full(count, np.nan)
    code = np.full(count, -1, dtype=np.int32)
    formula = np.zeros(count, dtype=bool)
    present = np.zeros(count, dtype=bool)
    other = contents != ""
    slow = ~numeric | other
    at = np.flatnonzero(numeric & ~other & (plain_v != ""))
    if len(at):  # plain numbers (<v>…</v>, no formula) converted at C speed
        values = pd.to_numeric(pd.Series(plain_v[at], dtype=object), errors="coerce"
                               ).to_numpy(dtype=np.float64, na_value=np.nan)
        done = np.isfinite(values)
        num[at[done]] = values[done]
        present[at[done]] = True
        slow[at[~done]] = True
    _decode_rest(np.flatnonzero(slow), a_codes, kinds, plain_v, plain_t, contents, cache,
                 decoder, (num, code, formula, present))
    present &= columns >= 0
    if not present.any():
        return
    data_rows.append(np.unique(row_numbers[present]))
    _append_by_column(present, columns, pieces, (row_numbers, num, code, formula))


def _kinds(attributes: list[str], dates: frozenset[int]) -> list[str]:
    """Each distinct cell attribute text's kind: its ``t=`` type (``n`` without one), and
    ``date`` for a number whose ``s=`` style is in ``dates``."""
    kinds = [m.group(1) if (m := _TYPE.search(a)) else "n" for a in attributes]
    if dates:
        kinds = ["date" if k == "n" and (m := _STYLE.search(a)) and int(m.group(1)) in dates
                 else k for k, a in zip(kinds, attributes, strict=True)]
    return kinds


def _append_by_column(present: np.ndarray, columns: np.ndarray,
                      pieces: dict[int, list[tuple[np.ndarray, ...]]],
                      arrays: tuple[np.ndarray, ...]) -> None:
    """The present cells' ``arrays`` (rows, numbers, text codes, formula flags) appended to
    ``pieces`` a column at a time (one stable sort by column, then a split per column)."""
    order = np.argsort(columns[present], kind="stable")
    at = np.flatnonzero(present)[order]
    cols = columns[at]
    bounds = np.flatnonzero(np.diff(cols)) + 1
    for group in np.split(at, bounds):
        pieces[int(columns[group[0]])].append(tuple(a[group] for a in arrays))


def _decode_rest(rest: np.ndarray, a_codes: np.ndarray, kinds: list[str], plain_v: np.ndarray,
                 plain_t: np.ndarray, contents: np.ndarray,
                 cache: dict[tuple[str, ...], tuple[float, int, bool, bool]],
                 decoder: Decoder, out: tuple[np.ndarray, ...]) -> None:
    """The cells at ``rest`` that are not plain numbers: each distinct (type, content)
    decoded once, into ``out`` (numbers, text codes, formula flags, non-empty flags)."""
    if not len(rest):
        return
    num, code, formula, present = out
    k_codes = a_codes[rest]
    for j, (k, v, t, c) in enumerate(zip(k_codes.tolist(), plain_v[rest].tolist(),
                                         plain_t[rest].tolist(), contents[rest].tolist(),
                                         strict=True)):
        key = (kinds[k], v, t, c)
        d = cache.get(key)
        if d is None:
            d = cache[key] = decoder.decode(kinds[k], _content(v, t, c))
        i = rest[j]
        num[i], code[i], formula[i], present[i] = d
