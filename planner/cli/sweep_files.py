"""``planner sweep --out``: a sweep's table written to a .csv or .xlsx file.

Kept apart from :mod:`planner.cli.whatif` because the file rules (text cells a spreadsheet
would run as formulas, Excel's row limit, constant-memory writing) are their own concern.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from planner.core.errors import PlannerError, ValidationError

XLSX_MAX_ROWS = 1_048_575
"""Rows an .xlsx sheet holds under its header row (Excel's limit is 1,048,576 rows)."""


def progress_bar(total: int, label: str = "evaluating") -> Any:
    """A bar on stderr for long work (a terminal only), else ``None``."""
    if total < 300_000 or not sys.stderr.isatty():
        return None
    return click.progressbar(length=total, label=label, file=sys.stderr)


def check_out(path: Path, force: bool) -> None:
    """Refuse an ``--out`` that is not .csv/.xlsx, exists without ``--force``, or is in a
    folder that does not exist (before any work is done)."""
    if path.suffix.lower() not in (".csv", ".xlsx"):
        raise ValidationError("--out", "a file name ending in .csv or .xlsx", value=str(path))
    if path.exists() and not force:
        raise PlannerError(f"{path} exists; pass --force to overwrite it")
    if not path.parent.exists():
        raise PlannerError(f"cannot write {path}: folder {path.parent} does not exist")


def write(frame: Any, path: Path) -> None:
    """The sweep to ``path``: CSV by pandas (every text cell quoted, one that a spreadsheet
    would run as a formula prefixed with ``'``: :mod:`planner.io.textcells`), .xlsx row by
    row through openpyxl's write-only workbook (constant memory; names that start like a
    formula are written as text)."""
    try:
        if path.suffix.lower() == ".csv":
            _write_csv(frame, path)
        else:
            _write_xlsx(frame, path)
    except OSError as exc:
        raise PlannerError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _write_csv(frame: Any, path: Path) -> None:
    import pandas as pd

    # lazy: the text-cell rules of the report layer, only when a CSV is written
    from planner.io.textcells import CSV_QUOTING, csv_text

    texts = [c for c in frame.columns if not (pd.api.types.is_numeric_dtype(frame[c])
                                              or pd.api.types.is_bool_dtype(frame[c]))]
    safe = frame.assign(**{str(c): frame[c].map(csv_text) for c in texts})
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(map(str, frame.columns)) + "\n")  # the planner's column names
        safe.to_csv(fh, index=False, header=False, quoting=CSV_QUOTING)


def _write_xlsx(frame: Any, path: Path) -> None:
    if len(frame) > XLSX_MAX_ROWS:
        raise ValidationError("--out", f"an .xlsx sheet holds at most {XLSX_MAX_ROWS:,} rows; "
                              f"this sweep has {len(frame):,}: write a .csv instead",
                              value=str(path))
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    # lazy: as above
    from planner.io.textcells import ooxml_text

    # lazy: the workbook layer's text rules, only when an .xlsx is written
    from planner.io.xlsx.sheetxml import TEXT_TRIGGERS

    wb = Workbook(write_only=True)
    sheet = wb.create_sheet("Sweep")
    sheet.append([str(c) for c in frame.columns])

    def value(v: Any) -> Any:
        if isinstance(v, float) and v != v:
            return None
        if isinstance(v, str):
            v = ooxml_text(v)
        if isinstance(v, str) and v.startswith(TEXT_TRIGGERS):
            cell = WriteOnlyCell(sheet, value=v)
            cell.data_type = "s"  # text, never a formula
            cell.quotePrefix = True
            return cell
        return v

    bar = progress_bar(len(frame), label="writing")
    with bar if bar is not None else contextlib.nullcontext() as progress:
        for i, row in enumerate(frame.itertuples(index=False, name=None), 1):
            sheet.append([value(v) for v in row])
            if progress is not None and i % 10_000 == 0:
                progress.update(10_000)
    wb.save(path)
