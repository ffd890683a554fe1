"""What the workbook readers share: the errors naming each bad cell, the row plan an import
applies, the bounds on what is read (rows, part sizes, the file itself), the bounded sheet
read that turns a refused cell into a message, and how a cell's value is compared with what
is stored (15 significant digits, text as a workbook carries it back). Its own module so the
scenario reader (:mod:`planner.io.xlsx.read_scenarios`) and the GPUs reader
(:mod:`planner.io.xlsx.read_gpus`) share one definition of each.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl.utils import get_column_letter

from planner.core.errors import PlannerError
from planner.core.files import FileRefused, open_regular
from planner.io.xlsx.parts import SheetRefused, sheet_parts
from planner.io.xlsx.sheetxml import xml_safe
from planner.io.xlsx.stream import SheetColumns, read_columns


@dataclass(frozen=True, slots=True)
class CellError:
    """One bad cell."""

    sheet: str
    cell: str
    column: str
    reason: str

    def __str__(self) -> str:
        return f"{self.sheet}!{self.cell} ({self.column}): {self.reason}"


class ImportError_(PlannerError):  # avoids shadowing the builtin ImportError
    """A workbook that cannot be imported; lists every problem. Nothing was changed."""

    def __init__(self, path: Path, errors: list[CellError] | None = None,
                 problem: str = "") -> None:
        self.errors = errors or []
        lines = [problem] if problem else []
        lines += [str(e) for e in self.errors[:50]]
        if len(self.errors) > 50:
            lines.append(f"… and {len(self.errors) - 50} more")
        head = f"{path}: nothing imported"
        super().__init__(head + (":\n  " + "\n  ".join(lines) if lines else ""))


@dataclass(slots=True)
class RowPlan:
    """What one sheet row changes: an update of scenario ``id`` or a new scenario."""

    sheet: str
    row: int
    kind: str
    fleet: str
    name: str
    id: int | None
    version: int | None
    fields: dict[str, Any] = field(default_factory=dict)
    """For an update: only the fields that differ. For a new row: every field."""


MAX_ROWS = 1_048_575
"""Most scenario rows a sheet may hold: Excel's 1,048,576 rows less the header. The scenario
sheets are streamed (:mod:`planner.io.xlsx.stream`), so memory grows by about 13 bytes per
kept cell, never with the grid the used range spans."""
MAX_SHEET_BYTES = 1 << 34
"""Largest uncompressed sheet XML read (16 GiB: 100,000 exported scenarios take about 1.5 GB,
a sheet full to Excel's last row about 16 GB; streamed, so this bounds time, not memory)."""
MAX_STRINGS_BYTES = 256 << 20
"""Largest uncompressed shared-string table read."""
MAX_WORKBOOK_BYTES = 4 << 30
"""Largest .xlsx file opened (compressed; 100,000 exported scenarios take about 150 MB)."""


def too_big(path: Path, what: str, limit: int) -> ImportError_:
    """The refusal of a part larger than ``limit`` bytes uncompressed."""
    return ImportError_(path, problem=f"{what} is larger than {limit >> 20:,} MiB uncompressed; "
                        "a planner report is far smaller")


def read_sheet(z: zipfile.ZipFile, path: Path, sheet: str, keep: list[int], width: int,
                strings: list[str], dates: frozenset[int], max_rows: int = MAX_ROWS,
                rows_are: str = "scenario rows") -> SheetColumns:
    """The columns ``keep`` (1 is A) of sheet ``sheet``, streamed
    (:func:`planner.io.xlsx.stream.read_columns`); a sheet beyond the layout
    (``max_rows`` rows, ``width`` columns), larger than :data:`MAX_SHEET_BYTES` or not
    readable is refused naming the first cell outside or what is wrong."""
    limit = f"{get_column_letter(width)}{max_rows + 1}"
    try:
        member = sheet_parts(z).get(sheet)
        if member is None or member not in set(z.namelist()):
            raise ImportError_(path, problem=f"sheet {sheet} has no worksheet part")
        return read_columns(z, member, keep=keep, width=width, max_rows=max_rows,
                            max_bytes=MAX_SHEET_BYTES, strings=strings, dates=dates)
    except SheetRefused as exc:
        if exc.cell:
            raise ImportError_(path, problem=(
                f"{sheet}!{exc.cell}: outside the planner's layout (at most {max_rows:,} "
                f"{rows_are} and {width} columns, A1:{limit}); clear that cell (and the "
                "range up to it) and save again")) from None
        raise ImportError_(path, problem=f"sheet {sheet} {exc.what}") from None
    except (zipfile.BadZipFile, KeyError, OSError, EOFError, UnicodeError,
            zipfile.LargeZipFile, NotImplementedError) as exc:
        raise PlannerError(f"{path}: not a readable .xlsx workbook ({exc})") from exc


def part_size(z: zipfile.ZipFile, member: str | None) -> int:
    """The uncompressed size the zip states for ``member`` (0 if it has none)."""
    try:
        return z.getinfo(member).file_size if member else 0
    except KeyError:
        return 0


def open_workbook(path: Path) -> tuple[Any, zipfile.ZipFile]:
    """(file, zip) of the .xlsx at ``path``: a regular file of at most
    :data:`MAX_WORKBOOK_BYTES` (:func:`planner.core.files.open_regular`: a FIFO or device is
    refused before reading), opened as a zip; a :class:`PlannerError` naming it otherwise."""
    try:
        fh = open_regular(path, MAX_WORKBOOK_BYTES, "planner report (.xlsx)")
    except FileRefused as exc:
        raise PlannerError(str(exc)) from None
    try:
        return fh, zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        fh.close()
        raise PlannerError(f"{path}: not a readable .xlsx workbook ({exc})") from None


def integer(value: Any) -> int | None:
    """``value`` as an integer if it is one (an integral number, not a flag), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)


def carried_text(value: Any) -> str:
    """Text as a workbook carries it back: line breaks as LF (XML reads a raw CR as LF),
    characters XML cannot hold as U+FFFD (as export writes them), outer blanks dropped."""
    return xml_safe(str(value).replace("\r\n", "\n").replace("\r", "\n")).strip()


SIGNIFICANT_DIGITS = 15
"""Digits of a number that a spreadsheet keeps (Excel shows and LibreOffice writes 15): two
numbers equal to that many significant digits are the same value, so a tool that rewrites
floats (0.30000000000000004 as 0.3) changes nothing on import."""


def same_number(a: float, b: float) -> bool:
    """Whether ``a`` and ``b`` agree to :data:`SIGNIFICANT_DIGITS` significant digits."""
    return a == b or f"{a:.{SIGNIFICANT_DIGITS - 1}e}" == f"{b:.{SIGNIFICANT_DIGITS - 1}e}"


def same_value(a: Any, b: Any) -> bool:
    """Whether a stored value and a cell's are the same: flags as flags, integers exactly,
    other numbers to :data:`SIGNIFICANT_DIGITS` digits, anything else by equality."""
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return same_number(float(a), float(b))
    return a == b
