"""Fast bodies for large sheets: cell XML generated directly, injected into openpyxl's file.

openpyxl builds the workbook (headers, styles, validation, conditional formats, charts, defined
names) but spends about 7 µs per cell, so 10,000 scenarios of 125 columns would take 10 s or
more. The bodies of the big sheets are instead rendered here as SpreadsheetML row XML, about
1 µs per cell: a formula is rendered once per column with a row placeholder, XML-escaped once,
and stamped with each row number. After openpyxl saves, :func:`inject` splices the rows into
each sheet's ``<sheetData>`` and fixes its ``<dimension>``.

Styles come from openpyxl's own style table (``Workbook._cell_styles``), so number formats and
the quote prefix that keeps user text from becoming a formula are the ones openpyxl would write.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from openpyxl.cell import Cell
from openpyxl.utils import get_column_letter

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
        self.cache: dict[tuple[str | None, bool], str] = {}

    def attr(self, number_format: str | None = None, quote_prefix: bool = False) -> str:
        """`` s="N"`` for a cell with this format (empty for the default style)."""
        key = (number_format, quote_prefix)
        if key not in self.cache:
            if number_format is None and not quote_prefix:
                self.cache[key] = ""
            else:
                cell = Cell(self.scratch, row=1, column=1)
                if number_format:
                    cell.number_format = number_format
                if quote_prefix:
                    cell.quotePrefix = True
                self.cache[key] = f' s="{self.wb._cell_styles.add(cell._style)}"'
        return self.cache[key]

    def close(self) -> None:
        """Remove the scratch sheet (its styles stay registered)."""
        self.wb.remove(self.scratch)


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
    body = escape(text).replace("\r", "&#13;")
    return (f'<c r="{ref}" t="inlineStr"{style}><is><t xml:space="preserve">{body}'
            "</t></is></c>")


def formula_xml(ref: str, template: str, row: int, style: str) -> str:
    """One formula cell from a template."""
    return f'<c r="{ref}"{style}><f>{template.replace(ROW, str(row))}</f></c>'


def shared_formula_xml(ref: str, template: str, row: int, style: str, index: int,
                       first: int, last: int) -> str:
    """One cell of a column whose rows share one formula (Excel's shared formulas): the first
    row holds the formula and the range it covers, the others refer to it by ``index``. The
    text is written once per column instead of once per row, which keeps a workbook with long
    formulas small and quick to write; Excel, LibreOffice and openpyxl expand it per row."""
    if row == first:
        column = ref.rstrip("0123456789")
        return (f'<c r="{ref}"{style}><f t="shared" ref="{column}{first}:{column}{last}" '
                f'si="{index}">{template.replace(ROW, str(row))}</f></c>')
    return f'<c r="{ref}"{style}><f t="shared" si="{index}"/></c>'


def row_xml(row: int, cells: Iterable[str]) -> str:
    """A ``<row>`` element."""
    return f'<row r="{row}">{"".join(cells)}</row>'


def _sheet_paths(z: zipfile.ZipFile) -> dict[str, str]:
    workbook = z.read("xl/workbook.xml").decode()
    rels = z.read("xl/_rels/workbook.xml.rels").decode()
    targets = dict(re.findall(r'<Relationship[^>]*Id="([^"]+)"[^>]*Target="([^"]+)"', rels))
    targets.update({k: v for v, k in re.findall(
        r'<Relationship[^>]*Target="([^"]+)"[^>]*Id="([^"]+)"', rels)})
    out = {}
    for name, rid in re.findall(r'<sheet [^>]*name="([^"]+)"[^>]*r:id="([^"]+)"', workbook):
        target = targets[rid].lstrip("/")
        out[_unescape(name)] = target if target.startswith("xl/") else f"xl/{target}"
    return out


def _unescape(text: str) -> str:
    return (text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
            .replace("&apos;", "'").replace("&amp;", "&"))


def inject(path: Path, bodies: dict[str, tuple[list[str], int, int]]) -> None:
    """Append generated rows to sheets of the saved workbook at ``path``.

    ``bodies`` maps a sheet title to (row XML strings, last row, last column)."""
    tmp = path.with_name(path.name + ".inject")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        paths = _sheet_paths(src)
        wanted = {paths[title]: title for title in bodies}
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename in wanted:
                rows, last_row, last_col = bodies[wanted[item.filename]]
                xml = data.decode("utf-8")
                body = "".join(rows)
                if "<sheetData/>" in xml:
                    xml = xml.replace("<sheetData/>", f"<sheetData>{body}</sheetData>", 1)
                else:
                    xml = xml.replace("</sheetData>", body + "</sheetData>", 1)
                ref = f"A1:{get_column_letter(max(last_col, 1))}{max(last_row, 1)}"
                xml = re.sub(r'<dimension ref="[^"]*"\s*/>', f'<dimension ref="{ref}"/>', xml,
                             count=1)
                data = xml.encode("utf-8")
            dst.writestr(item, data)
    os.replace(tmp, path)
