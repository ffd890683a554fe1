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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

CHUNK_BYTES = 1 << 20
"""Bytes of compressed-then-inflated XML read at a time."""
MAX_ROW_BYTES = 16 << 20
"""Largest XML of one row (a planner row of 281 columns is about 15 KB)."""
MAX_COLUMN = 16_384
"""Excel's last column (XFD)."""

_DIM = re.compile(r'<(?:\w+:)?dimension\b[^>]*\bref="(?:[A-Z]+[0-9]+:)?([A-Z]{1,3})([0-9]{1,7})"')
_LAST_REF = re.compile(r'\s*r="([A-Z]{1,3})([0-9]{1,7})"')
_SHEETDATA = re.compile(r"<(\w+:)?sheetData\b")
_ROW_NUMBER = re.compile(r'\br="([0-9]{1,7})"')
_TYPE = re.compile(r'\bt="(\w+)"')
_VALUE = re.compile(r"<(?:\w+:)?v>([^<]*)</(?:\w+:)?v>")
_TEXT = re.compile(r"<(?:\w+:)?t(?:\s[^>]*)?>([^<]*)</(?:\w+:)?t>")
_PHONETIC = re.compile(r"<(?:\w+:)?rPh\b.*?</(?:\w+:)?rPh>", re.S)
_SI = re.compile(r"<(?:\w+:)?si>(.*?)</(?:\w+:)?si>|<(?:\w+:)?si/>", re.S)
_ENTITY = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);")
_OOXML_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


class SheetRefused(Exception):
    """The sheet is outside the bounds the reader accepts; ``cell`` names where (``A1``
    style) when one cell is the reason, ``what`` says what is wrong."""

    def __init__(self, what: str, cell: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.cell = cell


@dataclass(frozen=True, slots=True)
class Marked:
    """A cell that is neither text, a number nor a flag the planner reads: ``kind`` is
    ``"date"`` (a number styled as a date or time), ``"error"`` (an error value such as
    ``#DIV/0!``) or ``"nan"`` (a number that is not finite); ``text`` is what it holds."""

    kind: str
    text: str

    def reason(self) -> str:
        """Why the cell is refused, for a message naming the cell."""
        if self.kind == "date":
            return (f"is a date or time cell (serial {self.text}); type the number as a plain "
                    "number, not formatted as a date")
        if self.kind == "error":
            return f"is the error value {self.text}; type a value"
        return f"is {self.text}, not a finite number"

    def __str__(self) -> str:
        return self.text


BUILTIN_DATE_FORMATS = frozenset({*range(14, 23), *range(27, 37), *range(45, 48),
                                  *range(50, 59)})
"""Built-in number format ids that show a date or time (ECMA-376 Part 1, 18.8.30, with the
East Asian ids 27-36 and 50-58)."""
_NUMFMT = re.compile(r'<(?:\w+:)?numFmt\b[^>]*?numFmtId="(\d+)"[^>]*?formatCode="([^"]*)"')
_CELLXFS = re.compile(r"<(?:\w+:)?cellXfs\b[^>]*>(.*?)</(?:\w+:)?cellXfs>", re.S)
_XF = re.compile(r"<(?:\w+:)?xf\b([^>]*)")
_NUMFMT_ID = re.compile(r'\bnumFmtId="(\d+)"')
_STYLE = re.compile(r'\bs="(\d+)"')
_CONSTANT_FLAG = re.compile(r"<(?:\w+:)?f(?:\s[^>]*)?>\s*=?\s*(TRUE|FALSE)\s*(?:\(\s*\))?\s*"
                            r"</(?:\w+:)?f>", re.I)
MAX_STYLES_BYTES = 64 << 20
"""Largest uncompressed styles part read."""


def is_date_format(code: str) -> bool:
    """Whether number format ``code`` shows a date or time: a ``d``, ``m``, ``y``, ``h`` or
    ``s`` outside quoted text, escapes and ``[...]`` sections (colours, conditions)."""
    code = re.sub(r'"[^"]*"|\\.|_.|\*.', "", unescape(code))
    code = re.sub(r"\[(?![hms]+\])[^\]]*\]", "", code, flags=re.I)
    return re.search(r"[dmyhs]", code, re.I) is not None and code.lower() != "general"


def date_styles(z: zipfile.ZipFile, max_bytes: int = MAX_STYLES_BYTES) -> frozenset[int]:
    """Indexes of the cell styles (``s=``) whose number format shows a date or time, from
    ``xl/styles.xml`` (none if it is missing or larger than ``max_bytes``)."""
    names = set(z.namelist())
    if "xl/styles.xml" not in names or z.getinfo("xl/styles.xml").file_size > max_bytes:
        return frozenset()
    with z.open("xl/styles.xml") as fh:
        xml = fh.read(max_bytes + 1).decode("utf-8", "replace")
    if len(xml) > max_bytes:
        return frozenset()
    custom = {int(i) for i, code in _NUMFMT.findall(xml) if is_date_format(code)}
    xfs = _CELLXFS.search(xml)
    if xfs is None:
        return frozenset()
    out = set()
    for index, attrs in enumerate(_XF.findall(xfs.group(1))):
        m = _NUMFMT_ID.search(attrs)
        fmt = int(m.group(1)) if m else 0
        if fmt in BUILTIN_DATE_FORMATS or fmt in custom:
            out.add(index)
    return frozenset(out)


def column_number(letters: str) -> int:
    """``"A"`` → 1, ``"JU"`` → 281."""
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def column_letters(number: int) -> str:
    """1 → ``"A"``, 281 → ``"JU"``."""
    out = ""
    while number:
        number, rest = divmod(number - 1, 26)
        out = chr(65 + rest) + out
    return out


def unescape(text: str) -> str:
    """XML character and entity references replaced by their characters."""
    if "&" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        ref = m.group(1)
        if ref.startswith("#x"):
            return chr(int(ref[2:], 16))
        if ref.startswith("#"):
            return chr(int(ref[1:]))
        return _NAMED[ref]
    return _ENTITY.sub(one, text)


def _rich_text(xml: str) -> str:
    """The text of an ``<is>`` or ``<si>`` element: its ``<t>`` runs, phonetic runs left out,
    and ``_xHHHH_`` escapes (how Excel writes a control character such as CR) decoded."""
    if "<rPh" in xml or ":rPh" in xml:
        xml = _PHONETIC.sub("", xml)
    text = unescape("".join(_TEXT.findall(xml)))
    if "_x" in text:
        text = _OOXML_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return text


MAX_PART_BYTES = 16 << 20
"""Largest workbook.xml or its relationships part read (a workbook of 1,000 sheets needs
about 100 KiB)."""
_SHEET = re.compile(r"<(?:\w+:)?sheet\b([^>]*?)/?>")
_RELATIONSHIP = re.compile(r"<(?:\w+:)?Relationship\b([^>]*?)/?>")
_ATTR = re.compile(r'([\w:]+)="([^"]*)"')


def small_part(z: zipfile.ZipFile, name: str, max_bytes: int = MAX_PART_BYTES) -> str:
    """The text of part ``name`` of ``z``; :class:`SheetRefused` if it is missing or larger
    than ``max_bytes`` uncompressed (checked as it is read, whatever the zip header says)."""
    try:
        with z.open(name) as fh:
            data = fh.read(max_bytes + 1)
    except KeyError:
        raise SheetRefused(f"has no {name} part (not an .xlsx workbook)") from None
    if len(data) > max_bytes:
        raise SheetRefused(f"has a {name} larger than {max_bytes >> 20} MiB uncompressed")
    return data.decode("utf-8", "replace")


def sheet_parts(z: zipfile.ZipFile) -> dict[str, str]:
    """The worksheet part of each sheet, by sheet name, in the workbook's order (from
    ``xl/workbook.xml`` and its relationships, each read bounded by :func:`small_part`)."""
    workbook = small_part(z, "xl/workbook.xml")
    rels = small_part(z, "xl/_rels/workbook.xml.rels")
    targets = {}
    for attrs in _RELATIONSHIP.findall(rels):
        a = dict(_ATTR.findall(attrs))
        if "Id" in a and "Target" in a:
            targets[a["Id"]] = unescape(a["Target"])
    out: dict[str, str] = {}
    for attrs in _SHEET.findall(workbook):
        a = dict(_ATTR.findall(attrs))
        rid = a.get("r:id") or next((v for k, v in a.items() if k.endswith(":id")), None)
        if "name" not in a or rid not in targets:
            continue
        target = targets[rid]
        target = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        out[unescape(a["name"])] = target
    return out


def shared_strings(z: zipfile.ZipFile, max_bytes: int, too_big: Callable[[], Exception]
                   ) -> list[str]:
    """The workbook's shared string table (empty if it has none), refusing (``too_big()``)
    a table larger than ``max_bytes`` uncompressed before reading it whole."""
    if "xl/sharedStrings.xml" not in set(z.namelist()):
        return []
    parts = []
    total = 0
    with z.open("xl/sharedStrings.xml") as fh:
        while chunk := fh.read(CHUNK_BYTES):
            total += len(chunk)
            if total > max_bytes:
                raise too_big()
            parts.append(chunk)
    xml = b"".join(parts).decode("utf-8", "replace")
    return [_rich_text(m.group(1)) if m.group(1) is not None else "" for m in _SI.finditer(xml)]


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
        shown: list[Any] = []
        for c in used.tolist():
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
        out = table[inverse.reshape(-1)]
        numbers = np.flatnonzero(code < 0)
        if len(numbers):
            values = num[numbers]
            boxed = np.empty(len(numbers), dtype=object)
            finite = np.isfinite(values)
            integral = finite & (values == np.floor(np.where(finite, values, 0)))
            boxed[:] = [int(v) if i else (v if f else None) for v, i, f in
                        zip(values.tolist(), integral.tolist(), finite.tolist(), strict=True)]
            out[numbers] = boxed
        return pd.Series(out, dtype=object), formula


class _Decoder:
    """Decodes (type attribute, cell content) pairs into number, text code, formula and
    non-empty flags, each distinct pair once."""

    def __init__(self, strings: list[str]) -> None:
        self.texts: list[Any] = [False, True]
        self.strings = strings
        self.shared_at: dict[int, int] = {}
        self.text_at: dict[str, int] = {}

    def text(self, value: str) -> int:
        code = self.text_at.get(value)
        if code is None:
            code = self.text_at[value] = len(self.texts)
            self.texts.append(value)
        return code

    def mark(self, kind: str, text: str) -> int:
        """The text code of a :class:`Marked` cell."""
        return self.text(Marked(kind, text))  # type: ignore[arg-type]

    def decode(self, kind: str, content: str) -> tuple[float, int, bool, bool]:
        """(number or NaN, text code or -1, formula, non-empty) of one cell. ``kind`` is the
        cell's ``t=`` type, or ``"date"`` for a number whose style shows a date."""
        formula = "<f" in content or (":f" in content
                                      and re.search(r"<\w+:f\b", content) is not None)
        if formula and (flag := _CONSTANT_FLAG.search(content)) is not None:
            return np.nan, int(flag.group(1).upper() == "TRUE"), False, True  # =TRUE()
        m = _VALUE.search(content)
        raw = m.group(1) if m else None
        if kind == "inlineStr":
            text = _rich_text(content)
            return np.nan, self.text(text), formula, formula or bool(text.strip())
        if raw is None:
            return np.nan, -1, formula, formula
        if kind == "s":
            try:
                text = self.strings[int(raw)]
            except (ValueError, IndexError):
                text = f"#REF (shared string {raw})"
            return np.nan, self.text(text), formula, formula or bool(text.strip())
        if kind == "b":
            return np.nan, 1 if raw.strip() in ("1", "true") else 0, formula, True
        if kind == "e":
            return np.nan, self.mark("error", unescape(raw).strip()), formula, True
        if kind == "d":  # an ISO 8601 date cell
            return np.nan, self.mark("date", unescape(raw).strip()), formula, True
        if kind == "str":
            text = unescape(raw)
            return np.nan, self.text(text), formula, formula or bool(text.strip())
        try:
            number = float(raw)
        except ValueError:
            text = unescape(raw)
            return np.nan, self.text(text), formula, formula or bool(text.strip())
        if not np.isfinite(number):
            return np.nan, self.mark("nan", raw.strip()), formula, True
        if kind == "date":
            return np.nan, self.mark("date", raw.strip()), formula, True
        return number, -1, formula, True


def read_columns(z: zipfile.ZipFile, member: str, *, keep: Sequence[int], width: int,
                 max_rows: int,
                 max_bytes: int, strings: list[str],
                 dates: frozenset[int] = frozenset()) -> SheetColumns:
    """Stream worksheet ``member`` of ``z``; see the module docstring. ``keep``: the
    column numbers kept (1 is A); ``width``: the last column a cell may be in;
    ``max_rows``: data rows (below the header) a cell may be in; ``dates``: the style
    indexes that show a date (:func:`date_styles`), whose numbers are kept as
    :class:`Marked`. Raises :class:`SheetRefused`."""
    decoder = _Decoder(strings)
    last_row = max_rows + 1
    col_of = {column_letters(i): i - 1 for i in keep}
    pieces: dict[int, list[tuple[np.ndarray, ...]]] = {i - 1: [] for i in keep}
    blocks = _blocks(sorted(set(keep)))
    data_rows: list[np.ndarray] = []
    header: list[Any] = []
    prefix: str | None = None
    cell_re: re.Pattern[str] | None = None
    pair_cache: dict[tuple[str, ...], tuple[float, int, bool, bool]] = {}
    total = 0
    rest = ""
    started = False
    with z.open(member) as fh:
        while True:
            chunk = fh.read(CHUNK_BYTES)
            total += len(chunk)
            if total > max_bytes:
                raise SheetRefused(f"is larger than {max_bytes >> 20:,} MiB uncompressed")
            text = rest + chunk.decode("utf-8", "replace") if chunk else rest
            if not started:
                m = _SHEETDATA.search(text)
                if m is None:
                    if not chunk:
                        break
                    if len(text) > MAX_ROW_BYTES:
                        raise SheetRefused("has no sheetData element in its first "
                                           f"{MAX_ROW_BYTES >> 20} MiB")
                    rest = text
                    continue
                dim = _DIM.search(text, 0, m.start())
                if dim and (int(dim.group(2)) > last_row
                            or column_number(dim.group(1)) > width):
                    raise SheetRefused("outside", f"{dim.group(1)}{dim.group(2)}")
                prefix = m.group(1) or ""
                cell_re = _cell_pattern(prefix)
                text = text[m.end():]
                started = True
            assert cell_re is not None and prefix is not None
            open_row, close_row = f"<{prefix}row", f"</{prefix}row>"
            open_cell = f"<{prefix}c "
            pos = 0
            kept: list[str] = []
            while True:
                start = text.find(open_row, pos)
                if start < 0:
                    pos = len(text) if text.rfind("<", pos) < 0 else text.rfind("<", pos)
                    break
                head_end = text.find(">", start)
                if head_end < 0:
                    pos = start
                    break
                attrs = text[start + len(open_row):head_end]
                if attrs and not attrs[0].isspace() and attrs[0] not in "/":
                    pos = head_end + 1  # another tag starting with "row" (rowBreaks …)
                    continue
                number = _ROW_NUMBER.search(attrs)
                if number is None:
                    raise SheetRefused("has a row without its r= number; save it again with "
                                       "Excel or LibreOffice")
                r = int(number.group(1))
                if attrs.endswith("/"):
                    body, pos = "", head_end + 1
                else:
                    end = text.find(close_row, head_end)
                    if end < 0:
                        pos = start
                        break
                    body, pos = text[head_end + 1:end], end + len(close_row)
                if not body:
                    continue
                last = body.rfind(open_cell)
                ref = _LAST_REF.match(body, last + len(open_cell) - 1) if last >= 0 else None
                if ref and column_number(ref.group(1)) > width:
                    raise SheetRefused("outside", f"{ref.group(1)}{r}")
                if r > last_row:
                    raise SheetRefused("outside", f"{ref.group(1) if ref else 'A'}{r}")
                if r == 1:
                    header = _header(body, cell_re, decoder)
                    continue
                kept.append(_segments(body, blocks, open_cell, str(r), width))
            rest = text[pos:]
            if len(rest) > MAX_ROW_BYTES:
                raise SheetRefused(f"has a row larger than {MAX_ROW_BYTES >> 20} MiB")
            if kept:
                _take("".join(kept), prefix, cell_re, col_of, decoder, pair_cache, pieces,
                      data_rows, dates)
            if len(pair_cache) > 1_000_000:
                pair_cache.clear()
            if not chunk:
                break
    rows = np.unique(np.concatenate(data_rows)) if data_rows else np.zeros(0, dtype=np.int64)
    cells = {}
    for index, column in pieces.items():
        if column:
            cells[index] = tuple(np.concatenate([p[i] for p in column]) for i in range(4))
        else:
            cells[index] = (np.zeros(0, dtype=np.int64), np.zeros(0),
                            np.zeros(0, dtype=np.int32), np.zeros(0, dtype=bool))
    return SheetColumns(header, rows, decoder.texts, cells)  # type: ignore[arg-type]


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


def _header(body: str, cell_re: re.Pattern[str], decoder: _Decoder) -> list[Any]:
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
          decoder: _Decoder,
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
    kinds = [m.group(1) if (m := _TYPE.search(a)) else "n" for a in a_uniques.tolist()]
    if dates:
        kinds = ["date" if k == "n" and (m := _STYLE.search(a)) and int(m.group(1)) in dates
                 else k for k, a in zip(kinds, a_uniques.tolist(), strict=True)]
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
        values = pd.to_numeric(pd.Series(plain_v[at], dtype=object), errors="coerce")
        values = values.to_numpy(dtype=np.float64, na_value=np.nan)
        done = np.isfinite(values)
        num[at[done]] = values[done]
        present[at[done]] = True
        slow[at[~done]] = True
    rest = np.flatnonzero(slow)
    if len(rest):  # everything else: each distinct (type, content) decoded once
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
    present &= columns >= 0
    if not present.any():
        return
    data_rows.append(np.unique(row_numbers[present]))
    order = np.argsort(columns[present], kind="stable")
    at = np.flatnonzero(present)[order]
    cols = columns[at]
    bounds = np.flatnonzero(np.diff(cols)) + 1
    for group in np.split(at, bounds):
        pieces[int(columns[group[0]])].append(
            (row_numbers[group], num[group], code[group], formula[group]))
