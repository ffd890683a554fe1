"""Cell XML for the large sheet bodies, and the one save that writes the whole workbook.

One writer path: :func:`save` writes the workbook once, into one archive. openpyxl's writer
puts every part in it (headers, styles, validation, conditional formats, charts, defined
names, the small sheets); the bodies of the big sheets (Scenarios, Training, sweeps,
Calibration runs, Summary, Plan) are SpreadsheetML row XML rendered here and streamed into
their ``<sheetData>`` in the same archive, a chunk at a time, compressed in a second thread.

Why the bodies are not openpyxl cells (``python -m benchmarks.bench_writer_paths``, CPU
seconds, 2-core box, 2026-12-01, 1,000 rows x 282 columns): openpyxl's write-only mode
19.4 µs a cell (547 s for a 100,000-scenario Scenarios sheet, compression included), the
column-wise XML here 0.80 µs (23 s, compression overlapped in a second thread); and openpyxl
writes no cached value for a formula cell, which every formula cell here carries. So the
faster renderer is the one path for the bodies that need it: a formula is rendered once per
column with a row placeholder, XML-escaped once, and stamped with each row number.

The scenario and Summary bodies are written column-wise (:func:`formula_column`,
:func:`value_column`, :func:`rows_xml`): a cell's text is literal text around its row number and
its value's text, so a chunk of rows is one ``str.join`` over those pieces; no string is built
per cell, a value's text is made once per distinct value (floats through
:func:`planner.core.units.float_reprs`), and the XML is byte for byte what the cell-by-cell
functions (:func:`formula_cells`, :func:`value_cells`) write.

Styles come from openpyxl's own style table (``Workbook._cell_styles``), so number formats and
the quote prefix that keeps user text from becoming a formula are the ones openpyxl would write.
"""

from __future__ import annotations

import itertools
import math
import queue
import re
import threading
import zipfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np
from openpyxl.cell import Cell
from openpyxl.utils import get_column_letter

from planner.core.units import float_reprs
from planner.io.textcells import ooxml_text

ROW = "\x00"
"""Placeholder for the row number inside a formula template."""
TEXT_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""Text starting with one of these is read as a formula (or mangled) by a spreadsheet: such
text is written with the quote prefix, so it stays text."""
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (C0 controls other than tab and
    line breaks, lone surrogates, U+FFFE, U+FFFF), each replaced by U+FFFD. Input refuses them;
    this keeps an export of rows stored before that rule readable."""
    return _NOT_XML.sub("\ufffd", text)


class Styles:
    """Style indexes for (number format, quote prefix), registered with the workbook."""

    def __init__(self, wb: Any) -> None:
        self.wb = wb
        self.scratch = wb.create_sheet("__styles__")
        self.cache: dict[tuple[str | None, bool, str | None], str] = {}
        self.closed = False
        self.attr(None, quote_prefix=True)  # text cells may need it while the bodies stream

    def attr(self, number_format: str | None = None, quote_prefix: bool = False,
             look: str | None = None, **looks: Any) -> str:
        """`` s="N"`` for a cell with this format (empty for the default style); ``look``
        names a further look (font, fill, alignment, border given as ``looks``), registered
        the first time that name is used."""
        key = (number_format, quote_prefix, look)
        if key not in self.cache and self.closed:
            raise RuntimeError(f"style {key} asked for after the workbook's styles were "
                               "written; register it before saving")
        if key not in self.cache:
            if number_format is None and not quote_prefix and look is None:
                self.cache[key] = ""
            else:
                cell = Cell(self.scratch, row=1, column=1)
                if number_format:
                    cell.number_format = number_format
                if quote_prefix:
                    cell.quotePrefix = True
                for name, value in looks.items():
                    setattr(cell, name, value)
                style = cell._style  # type: ignore[attr-defined]  # openpyxl's stubs omit it
                self.cache[key] = f' s="{self.wb._cell_styles.add(style)}"'
        return self.cache[key]

    def close(self) -> None:
        """Remove the scratch sheet (its styles stay registered); no new style after this."""
        self.wb.remove(self.scratch)
        self.closed = True


def formula_template(formula: str) -> str:
    """Escaped ``<f>`` body of a formula whose row references use :data:`ROW`."""
    return escape(formula.removeprefix("="))


def cell_xml(ref: str, value: Any, style: str, styles: Styles) -> str:
    """One value cell; strings that look like formulas get the quote-prefix style."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return f'<c r="{ref}" t="b"{style}><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)):
        return f'<c r="{ref}"{style}><v>{value!r}</v></c>'
    text = xml_safe(str(value))
    if text.startswith(TEXT_TRIGGERS):
        style = styles.attr(None, quote_prefix=True)
    # a raw CR would be read back as LF (XML end-of-line handling): write it as a reference
    body = escape(ooxml_text(text)).replace("\r", "&#13;")
    return (f'<c r="{ref}" t="inlineStr"{style}><is><t xml:space="preserve">{body}'
            "</t></is></c>")


def cached(value: Any) -> tuple[str, str]:
    """The type attribute and ``<v>`` element of a formula cell's cached value (what a viewer
    that does not recalculate shows): numbers as Python's shortest round-trip text, flags as
    ``t="b"``, text as ``t="str"``; nothing for a missing or non-finite number (the formula
    yields an error there, which the viewer computes itself)."""
    if value is None:
        return "", ""
    if isinstance(value, (bool, np.bool_)):
        return ' t="b"', f"<v>{int(value)}</v>"
    if isinstance(value, (int, np.integer)):
        return "", f"<v>{int(value)}</v>"
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return ("", f"<v>{number!r}</v>") if math.isfinite(number) else ("", "")
    text = escape(xml_safe(str(value))).replace("\r", "&#13;")
    return ' t="str"', f"<v>{text}</v>"


def value_texts(values: Any) -> tuple[str, list[str]]:
    """A column of cached values as (type attribute, ``<v>`` elements) at about 0.2 µs a cell:
    one numpy pass decides the column's type; a column mixing types (object) goes cell by
    cell through :func:`cached` and returns type attributes inside its elements instead
    (``'"' + t + '>'`` is never needed: see :func:`formula_cells`)."""
    array = np.asarray(values)
    if array.dtype == bool:
        return ' t="b"', ["<v>1</v>" if v else "<v>0</v>" for v in array.tolist()]
    if array.dtype.kind in "iu":
        return "", [f"<v>{v}</v>" for v in array.tolist()]
    if array.dtype.kind == "f":
        return "", _float_texts(array)
    return "\x01", [t + "\x02" + v for t, v in map(cached, array.tolist())]


def _float_texts(array: np.ndarray) -> list[str]:
    """The ``<v>`` elements of a float column, a NaN or infinity as no element."""
    if bool(np.isfinite(array).all()):
        return [f"<v>{v!r}</v>" for v in array.tolist()]
    return [f"<v>{v!r}</v>" if math.isfinite(v) else "" for v in array.tolist()]


def formula_cells(letter: str, rows: list[str], style: str, values: Any, *, index: int,
                  first: int, last: int, template: str) -> list[str]:
    """The cells of a shared-formula column for ``rows`` (row numbers as text), each with its
    cached value: the sheet's ``first`` row holds the formula text and the range it covers,
    the others refer to it by ``index`` (Excel's shared formulas: the text is written once per
    column; Excel, LibreOffice and openpyxl expand it per row)."""
    kind, texts = value_texts(values)
    shared = f'<f t="shared" si="{index}"/>'
    out: list[str] = []
    if kind == "\x01":
        for r, tv in zip(rows, texts, strict=True):
            t, v = tv.split("\x02", 1)
            f = (shared if int(r) != first else
                 f'<f t="shared" ref="{letter}{first}:{letter}{last}" si="{index}">'
                 f'{template.replace(ROW, r)}</f>')
            out.append(f'<c r="{letter}{r}"{style}{t}>{f}{v}</c>')
        return out
    head = f'<c r="{letter}'
    mid = f'"{style}{kind}>{shared}'
    out = [f"{head}{r}{mid}{v}</c>" for r, v in zip(rows, texts, strict=True)]
    if rows and int(rows[0]) == first:
        out[0] = (f'{head}{first}"{style}{kind}><f t="shared" ref="{letter}{first}:{letter}'
                  f'{last}" si="{index}">{template.replace(ROW, rows[0])}</f>{texts[0]}</c>')
    return out


def value_cells(letter: str, rows: list[str], style: str, values: list[Any],
                styles: Styles) -> list[str]:
    """The cells of a value column for ``rows``: numbers at about 0.2 µs a cell, anything
    else through :func:`cell_xml` (text that looks like a formula stays text)."""
    if values and all(type(v) is int or type(v) is float for v in values):
        head = f'<c r="{letter}'
        mid = f'"{style}><v>'
        return [f"{head}{r}{mid}{v!r}</v></c>" for r, v in zip(rows, values, strict=True)]
    head = f'<c r="{letter}'
    memo: dict[Any, str] = {}  # choice columns repeat a few values: render each once
    out = []
    for r, v in zip(rows, values, strict=True):
        key = (type(v), v)
        rest = memo.get(key)
        if rest is None:
            xml = cell_xml("\x00", v, style, styles)
            rest = memo[key] = xml.removeprefix('<c r="\x00') if xml else ""
        out.append(f"{head}{r}{rest}" if rest else "")
    return out


class _RowNumber:
    """The type of :data:`ROW_NUMBER`."""

    def __repr__(self) -> str:
        return "ROW_NUMBER"


ROW_NUMBER = _RowNumber()
"""In a column's segments (:func:`rows_xml`): the row's number."""

Segment = str | list[str] | _RowNumber
"""A piece of every row's XML: the same text in every row (``str``), one text per row
(``list``), or the row's number (:data:`ROW_NUMBER`)."""


def _same(texts: list[str]) -> str | list[str]:
    """``texts``, or its one text when every row holds the same (folded into the literal)."""
    return texts[0] if texts and texts.count(texts[0]) == len(texts) else texts


def formula_column(letter: str, rows: list[str], style: str, values: Any, *, index: int,
                   first: int, last: int, template: str) -> list[Segment]:
    """:func:`formula_cells` as segments for :func:`rows_xml`: the same text, but a column of
    numbers or flags is the literal cell text around one column of value texts (floats
    through :func:`planner.core.units.float_reprs`, once per distinct value), with no string built
    per cell. In the chunk holding the ``first`` row, that row's cell carries the formula text
    and the range it covers: the formula elements are then a column of their own, that one
    and the shared reference repeated. A column of mixed or non-finite values goes cell by
    cell through :func:`formula_cells`."""
    array = np.asarray(values)
    column = _result_texts(array) if rows and len(array) == len(rows) else None
    if column is None:
        return [formula_cells(letter, rows, style, values, index=index, first=first,
                              last=last, template=template)]
    texts, attr = column
    shared = f'<f t="shared" si="{index}"/>'
    if int(rows[0]) != first:
        return [f'<c r="{letter}', ROW_NUMBER, f'"{style}{attr}>{shared}<v>', texts, "</v></c>"]
    head = (f'<f t="shared" ref="{letter}{first}:{letter}{last}" si="{index}">'
            f'{template.replace(ROW, rows[0])}</f>')
    return [f'<c r="{letter}', ROW_NUMBER, f'"{style}{attr}>',
            [head, *itertools.repeat(shared, len(rows) - 1)], "<v>", texts, "</v></c>"]


def _result_texts(array: np.ndarray) -> tuple[str | list[str], str] | None:
    """A formula column's cached values as value texts and the cells' type attribute:
    flags, integers, finite floats, or texts (a GPU's name, "yes"/"no": each distinct text
    escaped once); ``None`` for a column of mixed or non-finite values."""
    kind = array.dtype.kind
    if kind == "b":
        return _same(np.where(array, "1", "0").tolist()), ' t="b"'
    if kind in "iu":
        return _same(list(map(int.__repr__, array.tolist()))), ""
    if kind == "f" and bool(np.isfinite(array).all()):
        return _same(float_reprs(array)), ""
    if kind == "O" and set(map(type, items := array.tolist())) == {str}:
        memo = {v: escape(xml_safe(v)).replace("\r", "&#13;") for v in dict.fromkeys(items)}
        return _same(list(map(memo.__getitem__, items))), ' t="str"'
    return None


def value_column(letter: str, rows: list[str], style: str, values: list[Any],
                 styles: Styles) -> list[Segment]:
    """:func:`value_cells` as segments for :func:`rows_xml` (the same text): numbers as one
    column of texts between literal cell text, other values as the text after each cell's
    reference, rendered once per distinct value; a column with empty cells (``None``) cell
    by cell."""
    head = f'<c r="{letter}'
    types = set(map(type, values))
    if types and types <= {int, float}:
        return [head, ROW_NUMBER, f'"{style}><v>', _number_texts(values, types), "</v></c>"]
    if types == {str} or types == {bool}:  # one type: each distinct value's cell text once
        memo = {v: cell_xml("\x00", v, style, styles).removeprefix('<c r="\x00')
                for v in dict.fromkeys(values)}
        return [head, ROW_NUMBER, _same(list(map(memo.__getitem__, values)))]
    return _mixed_column(letter, rows, style, values, styles)


def _number_texts(values: list[Any], types: set[type]) -> str | list[str]:
    """A column of numbers' texts (floats by :func:`float_reprs`, else each ``repr``)."""
    if types == {float}:
        return _same(float_reprs(np.array(values, dtype=float)))
    return _same(list(map(repr, values)))


def _mixed_column(letter: str, rows: list[str], style: str, values: list[Any],
                  styles: Styles) -> list[Segment]:
    """:func:`value_column` of values of mixed types, each distinct one rendered once; a
    column with an empty cell (``None``) cell by cell."""
    head = f'<c r="{letter}'
    memo: dict[Any, str] = {}  # choice columns repeat a few values: render each once
    rests: list[str] = []
    for v in values:
        key = (type(v), v)
        rest = memo.get(key)
        if rest is None:
            xml = cell_xml("\x00", v, style, styles)
            rest = memo[key] = xml.removeprefix('<c r="\x00') if xml else ""
        if not rest:
            return [value_cells(letter, rows, style, values, styles)]
        rests.append(rest)
    return [head, ROW_NUMBER, _same(rests)]


def rows_xml(rows: list[str], columns: Iterable[list[Segment]]) -> str:
    """The ``<row>`` elements of ``rows`` (row numbers as text) whose cells are ``columns``,
    each a list of segments: literal texts are merged, and the chunk is one ``str.join`` over
    the segments row by row (no string per cell or per row)."""
    merged: list[Segment] = []
    for part in ['<row r="', ROW_NUMBER, '">', *(s for c in columns for s in c), "</row>"]:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    seqs = [itertools.repeat(p) if isinstance(p, str) else rows if p is ROW_NUMBER else p
            for p in merged]
    return "".join(itertools.chain.from_iterable(zip(*seqs, strict=False)))


def formula_xml(ref: str, template: str, row: int, style: str, value: Any = None) -> str:
    """One formula cell from a template, with its cached ``value``."""
    t, v = cached(value)
    return f'<c r="{ref}"{style}{t}><f>{template.replace(ROW, str(row))}</f>{v}</c>'


def shared_formula_xml(ref: str, template: str, row: int, style: str, index: int,
                       first: int, last: int, value: Any = None) -> str:
    """One cell of a column whose rows share one formula, with its cached ``value`` (see
    :func:`formula_cells`)."""
    t, v = cached(value)
    if row == first:
        column = ref.rstrip("0123456789")
        return (f'<c r="{ref}"{style}{t}><f t="shared" ref="{column}{first}:{column}{last}" '
                f'si="{index}">{template.replace(ROW, str(row))}</f>{v}</c>')
    return f'<c r="{ref}"{style}{t}><f t="shared" si="{index}"/>{v}</c>'


def row_xml(row: int, cells: Iterable[str]) -> str:
    """A ``<row>`` element."""
    return f'<row r="{row}">{"".join(cells)}</row>'


_FORMULA_CELL = re.compile(
    r'<c r="([A-Z]+[0-9]+)"([^>]*)><f>([^<]*)</f>(?:<v\s*/>|<v>[^<]*</v>)?</c>')


def patch_cached(xml: str, values: dict[str, Any]) -> str:
    """``xml`` (a sheet openpyxl wrote) with the cached value of each formula cell named in
    ``values`` (openpyxl writes formulas without one)."""
    if not values:
        return xml

    def put(m: re.Match[str]) -> str:
        ref, attrs, formula = m.group(1), m.group(2), m.group(3)
        if ref not in values:
            return m.group(0)
        t, v = cached(values[ref])
        attrs = re.sub(r'\s+t="[^"]*"', "", attrs)
        return f'<c r="{ref}"{attrs}{t}><f>{formula}</f>{v}</c>'

    return _FORMULA_CELL.sub(put, xml)


def _write_behind(out: Any, head: str, chunks: Iterable[str], tail: str) -> None:
    """Write ``head``, each chunk and ``tail`` to ``out`` (a compressing zip stream) from a
    second thread, while this one renders the next chunk: zlib and the CRC release the GIL,
    so compression (a third of an export's time) overlaps the Python that builds the XML.
    At most four chunks wait, so memory stays a few chunks."""
    pending: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
    failed: list[BaseException] = []

    def drain() -> None:
        try:
            while (data := pending.get()) is not None:
                out.write(data)
        except BaseException as exc:  # re-raised in the caller's thread
            failed.append(exc)
            while pending.get() is not None:  # let the producer finish
                pass

    writer = threading.Thread(target=drain, name="xlsx-writer", daemon=True)
    writer.start()
    try:
        pending.put(head.encode("utf-8"))
        for chunk in chunks:
            pending.put(chunk.encode("utf-8"))
        pending.put(tail.encode("utf-8"))
    finally:
        pending.put(None)
        writer.join()
    if failed:
        raise failed[0]


Body = tuple[Iterable[str], int, int]
"""A sheet's generated rows: (row XML chunks, last row, last column)."""


class _Archive(zipfile.ZipFile):
    """The one archive a workbook is saved into. openpyxl's writer puts every part in it; a
    worksheet with a generated body is held back (openpyxl wrote it with an empty
    ``<sheetData>``: a few kB) until :meth:`bodies` streams its rows into it, and a worksheet
    whose formula cells openpyxl wrote without a cached value is patched as it goes in
    (:func:`patch_cached`). So the file is written once, with no second pass over it."""

    def __init__(self, path: Path, held: dict[str, str], cached: dict[str, dict[str, Any]]
                 ) -> None:
        super().__init__(path, "w", zipfile.ZIP_DEFLATED, allowZip64=True, compresslevel=1)
        self.held = held
        """Part name → sheet title, for the sheets whose body is generated."""
        self.cached = cached
        """Part name → cell → cached value, for the sheets to patch."""
        self.kept: dict[str, str] = {}

    def write(self, filename: Any, arcname: Any = None, *args: Any, **kwargs: Any) -> None:
        """A worksheet openpyxl wrote to a temporary file: held, patched or stored."""
        if arcname in self.held or arcname in self.cached:
            with open(filename, encoding="utf-8") as fh:
                xml = fh.read()
            if arcname in self.held:
                self.kept[arcname] = xml
            else:
                self.writestr(arcname, patch_cached(xml, self.cached[arcname]))
            return
        super().write(filename, arcname, *args, **kwargs)

    def bodies(self, bodies: dict[str, Body]) -> None:
        """Stream each held sheet's rows into its ``<sheetData>``, in the order of
        ``bodies`` (a body may use figures an earlier one gathered while it streamed: the
        Summary totals those of the scenario sheets), with its ``<dimension>`` fixed."""
        by_title = {title: name for name, title in self.held.items()}
        for title, (chunks, last_row, last_col) in bodies.items():
            name = by_title[title]
            head, tail = _around_rows(self.kept.pop(name), last_row, last_col)
            info = zipfile.ZipInfo(name, date_time=datetime.now().timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            for attr in ("_compresslevel", "compress_level"):  # 3.11 / 3.13 spelling
                if attr in zipfile.ZipInfo.__slots__:
                    setattr(info, attr, 1)
            with self.open(info, "w", force_zip64=True) as out:
                _write_behind(out, head, chunks, tail)


def _around_rows(xml: str, last_row: int, last_col: int) -> tuple[str, str]:
    """The sheet XML before and after where its rows go, its ``<dimension>`` set to
    ``A1:{last_col}{last_row}``."""
    ref = f"A1:{get_column_letter(max(last_col, 1))}{max(last_row, 1)}"
    xml = re.sub(r'<dimension ref="[^"]*"\s*/>', f'<dimension ref="{ref}"/>', xml, count=1)
    if "<sheetData/>" in xml:
        head, tail = xml.split("<sheetData/>", 1)
        return head + "<sheetData>", "</sheetData>" + tail
    head, tail = xml.split("</sheetData>", 1)
    return head, "</sheetData>" + tail


def save(workbook: Any, path: Path, bodies: dict[str, Body],
         cached: dict[str, dict[str, Any]] | None = None) -> None:
    """Save ``workbook`` to ``path`` in one pass: openpyxl writes every part (headers,
    styles, validation, conditional formats, charts, defined names), and the generated rows
    of the sheets in ``bodies`` (by title) stream into the same archive, each chunk
    compressed as it is produced, so memory holds a few chunks, not a sheet. ``cached``
    gives the cached values of formula cells openpyxl wrote, by sheet title and cell."""
    from openpyxl.writer.excel import ExcelWriter

    for index, ws in enumerate(workbook.worksheets, 1):  # the ids openpyxl's writer gives
        ws._id = index
    parts = {ws.title: ws.path.lstrip("/") for ws in workbook.worksheets}
    held = {parts[title]: title for title in bodies}
    patch = {parts[title]: v for title, v in (cached or {}).items() if title in parts}
    workbook.properties.modified = datetime.now(UTC).replace(tzinfo=None)
    with _Archive(path, held, patch) as archive:
        ExcelWriter(workbook, archive).write_data()
        archive.bodies(bodies)
