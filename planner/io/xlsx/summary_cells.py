"""The Summary sheet's building blocks: the row writer that places its cells (or only counts
them, so a layout can be planned before it is written), cell XML for its texts and formulas,
the SUMPRODUCT/EXACT criterion that matches a GPU by name (never as a pattern), and the
Summary's cell styles. Its own module so :mod:`planner.io.xlsx.summary` reads as the page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from xml.sax.saxutils import escape

from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from planner.io.xlsx.sheetxml import (
    Styles,
    cached,
    cell_xml,
    xml_safe,
)
from planner.io.xlsx.style import FILLS


class Rows:
    """Row XML of a sheet written top to bottom (cells given by column number)."""

    def __init__(self, styles: Styles, *, dry: bool = False, ws: Any = None) -> None:
        self.styles = styles
        self.rows: list[str | Callable[[], Iterator[str]]] = []
        self.row = 0
        self.dry = dry
        """Only count rows (the layout pass: where each part goes)."""
        self.ws = ws
        """The sheet the layout pass sets row heights on (openpyxl writes its own element
        for a row holding a merge or a note, which a spreadsheet reads first)."""

    def add(self, cells: list[tuple[int, str]], height: float | None = None) -> int:
        """Append a row of ``(column, cell XML without its reference)``; returns its number."""
        self.row += 1
        r = self.row
        if self.dry:
            if height and self.ws is not None:
                self.ws.row_dimensions[r].height = height
            return r
        ht = f' ht="{height}" customHeight="1"' if height else ""
        body = "".join(xml.replace("\x00REF", f"{get_column_letter(j)}{r}")
                       for j, xml in cells)
        self.rows.append(f'<row r="{r}"{ht}>{body}</row>')
        return r

    def skip(self, n: int = 1) -> None:
        """Leave ``n`` empty rows."""
        self.row += n

    def __len__(self) -> int:
        return self.row


def text_cell(text: str, style: str, styles: Styles) -> str:
    return cell_xml("\x00REF", text, style, styles)


def formula_cell(formula: str, value: Any, style: str) -> str:
    t, v = cached(value)
    return f'<c r="\x00REF"{style}{t}><f>{escape(formula)}</f>{v}</c>'


def exact_criterion(name: str, gpu_rows: dict[str, int]) -> str:
    """What a GPU ``name`` is compared with: a reference to its name cell on the GPUs sheet,
    so no user text is ever spliced into a formula (a quoted literal, its quotes doubled,
    only for a name missing from that sheet). Compared with ``EXACT``, so it is a name,
    never a pattern."""
    if name in gpu_rows:
        return f"GPUs!$A${gpu_rows[name]}"
    return '"' + xml_safe(name).replace('"', '""') + '"'


class Looks:
    """The Summary's cell styles (registered once)."""

    def __init__(self, st: Styles) -> None:
        face = "Calibri"
        self.st = st
        self.bold = st.attr(look="bold", font=Font(name=face, bold=True))
        self.title = st.attr(look="title", font=Font(name=face, bold=True, size=16))
        self.section = st.attr(look="section", font=Font(name=face, bold=True, size=12,
                                                          color="305496"))
        self.head = st.attr(look="head", font=Font(name=face, bold=True, color="FFFFFF"),
                            fill=PatternFill("solid", start_color=FILLS["meta"],
                                             end_color=FILLS["meta"]),
                            alignment=Alignment(horizontal="center", vertical="center",
                                                wrap_text=True))
        self.unit = st.attr(look="unit", font=Font(name=face, italic=True, color="FFFFFF",
                                                   size=9),
                            fill=PatternFill("solid", start_color="8EA9DB",
                                             end_color="8EA9DB"),
                            alignment=Alignment(horizontal="center", wrap_text=True))
        self.warn = st.attr(look="warn", font=Font(name=face, bold=True, color="C00000"))
        self.wrap = st.attr(look="wrap", alignment=Alignment(wrap_text=True, vertical="top"))
        self.label = st.attr(look="label", font=Font(name=face, bold=True),
                             alignment=Alignment(vertical="top"))
        self.total_label = st.attr(look="total", font=Font(name=face, bold=True))
        self.centre = st.attr(look="centre", alignment=Alignment(horizontal="center"))
        self.total_centre = st.attr(look="total centre", font=Font(name=face, bold=True),
                                    alignment=Alignment(horizontal="center"))

    def fmt(self, number_format: str | None) -> str:
        return self.st.attr(number_format)

    def total(self, number_format: str | None) -> str:
        """A total's number format in bold."""
        return self.st.attr(number_format, look=f"total {number_format}",
                            font=Font(name="Calibri", bold=True))


CONVENTIONS = (
    "GiB = 2^30 bytes; cost per month = GPUs × price per GPU-hour × hours per month; totals add "
    "the counted scenarios only (an option that is not its group's chosen one is listed, greyed, "
    "and never added); 'meets target': the serving model's SLO verdict at the target rate "
    "(TTFT at the SLO percentile and mean TPOT within the objectives, not saturated); figures "
    "'at load' (cost per million output tokens, output, TTFT, TPOT) are the serving model's at "
    "the load named in 'basis'; efficiencies: the catalog's serving figures (or a calibration "
    "profile); every figure is a live formula over the Scenarios, Training, GPUs and Plan "
    "sheets (hover a header for its formula; the value shown before recalculation is the "
    "planner's).")
