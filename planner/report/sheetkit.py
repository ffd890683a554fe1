"""What every sheet of the workbook shares: the header colours, cell notes, the explain text of
a computed column, and the print setup. Its own module so that each sheet's writer
(:mod:`planner.report.export`, :mod:`planner.report.summary_sheet`,
:mod:`planner.report.plan_sheet`) reads them without importing the others.
"""

from __future__ import annotations

from typing import Any

from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill

from planner.report.fastsheet import xml_safe
from planner.sheet.outputs import column_label
from planner.sheet.symbolic import infix, symbolic
from planner.sheet.table import graph

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
