"""What every sheet of the workbook shares: the header colours and header cells, text cells
written as text (never a formula), cell notes, the explain text of
a computed column, and the print setup. Its own module so that each sheet's writer
(:mod:`planner.io.xlsx.workbook`, :mod:`planner.io.xlsx.summary`,
:mod:`planner.io.xlsx.plan`) reads them without importing the others.
"""

from __future__ import annotations

from typing import Any

from openpyxl.comments import Comment
from openpyxl.styles import Alignment, Font, PatternFill

from planner.compute.outputs import column_label
from planner.compute.symbolic import infix, symbolic
from planner.compute.table import graph
from planner.io.textcells import ooxml_text
from planner.io.xlsx.sheetxml import TEXT_TRIGGERS, xml_safe

HEADER_FONT = Font(bold=True, color="FFFFFF")
FILLS = {"meta": "305496", "input": "2F75B5", "output": "548235", "lookup": "7F7F7F"}
RED = PatternFill("solid", start_color="F8CBAD", end_color="F8CBAD")


def header_note(kind: str, key: str) -> str | None:
    """The explain text of a computed column: what it is, its unit and its formula in words
    (rendered from the estimator's own definition, as ``planner explain`` shows it)."""
    g = graph(kind)
    if not g.computes(key) or key not in g.formulas:
        return None
    label, unit = column_label(key)
    doc = (getattr(g.formulas[key], "__doc__", None) or "").strip().split("\n\n")[0]
    text = f"{label}" + (f" [{unit}]" if unit else "") + \
        f"\n= {infix(symbolic(g.formulas[key]))}"
    if doc:
        text += "\n\n" + " ".join(doc.split())
    return text[:2000]


def note(cell: Any, text: str | None, width: int = 360) -> None:
    """Attach ``text`` to ``cell`` as a note (nothing for no text)."""
    if text:
        comment = Comment(xml_safe(text), "planner")
        comment.width, comment.height = width, 160
        cell.comment = comment


def print_setup(ws: Any, area: str, titles: str | None = None) -> None:
    """Landscape, fitted to one page wide (as many tall as it takes), the used range as the
    print area and the header row(s) repeated on every page."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_options.gridLines = False
    ws.page_margins.left = ws.page_margins.right = 0.4
    ws.page_margins.top = ws.page_margins.bottom = 0.5
    ws.print_area = area
    if titles:
        ws.print_title_rows = titles


def write_text(cell: Any, value: Any) -> None:
    """Write ``value``; strings that a spreadsheet would read as a formula stay text,
    characters a workbook cannot hold become U+FFFD, and text that looks like an OOXML escape
    is escaped (:func:`planner.io.textcells.ooxml_text`), so it reads back as written."""
    if isinstance(value, str):
        value = ooxml_text(xml_safe(value))
    cell.value = value
    if isinstance(value, str) and value.startswith(TEXT_TRIGGERS):
        cell.data_type = "s"
        cell.quotePrefix = True


def header_cell(ws: Any, row: int, col: int, text: str, role: str) -> None:
    """Write a header cell: white bold text on the fill of its column role (meta, input,
    output, lookup), wrapped, top-aligned."""
    cell = ws.cell(row=row, column=col)
    write_text(cell, text)
    cell.font = HEADER_FONT
    cell.fill = PatternFill("solid", start_color=FILLS.get(role, "305496"),
                            end_color=FILLS.get(role, "305496"))
    cell.alignment = Alignment(wrap_text=True, vertical="top")


def col_index(letter: str) -> int:
    """The 1-based column number of a column letter (``A`` → 1)."""
    from openpyxl.utils import column_index_from_string

    return column_index_from_string(letter)
