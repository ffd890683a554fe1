"""Tables of new scenarios from files: CSV, Excel (.xlsx) and Parquet, read whole as columns.

The first row (line) is the header: ``name,model,gpu`` then any of ``kind``, ``notes``,
``lora_targets`` and the scenario input columns (:mod:`planner.sheet.inputs`). Every cell is
read as the file holds it (text in CSV, typed values in .xlsx and Parquet); the validation
(:func:`planner.sheet.checks.check_table`) parses each column once. Data row ``i`` (from 0)
is line ``i + 2`` of the file, as the header is line 1 (a CSV row is one line; a sheet row is
its row number).

Parquet needs ``pyarrow`` (``pip install 'planner[parquet]'``); it is imported only then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from planner.errors import PlannerError

FORMATS = {".csv": "CSV", ".xlsx": "Excel", ".parquet": "Parquet"}
"""The file types a table of scenarios may come in, by suffix."""

MAX_FILE_BYTES = 2 << 30
"""Largest file read (100,000 scenarios with every input column take about 60 MB as CSV)."""


def read_table(path: Path | str) -> pd.DataFrame:
    """The file at ``path`` as a DataFrame with its header as column names; a file that
    cannot be read is a :class:`PlannerError` naming it (an empty file is a table with no
    columns). Column names are kept as written (stripped); the validation judges them."""
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise PlannerError(f"{path}: unknown file type {path.suffix or '(none)'!r}; give a "
                           + ", ".join(FORMATS) + " file")
    if not path.is_file():
        raise PlannerError(f"{path}: no such file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise PlannerError(f"{path}: larger than {MAX_FILE_BYTES >> 30} GiB")
    if path.stat().st_size == 0:
        return pd.DataFrame()
    try:
        if kind == "CSV":
            frame = _csv(path)
        elif kind == "Excel":
            frame = _xlsx(path)
        else:
            frame = _parquet(path)
    except PlannerError:
        raise
    except Exception as exc:  # a damaged file: say which and why, change nothing
        raise PlannerError(f"{path}: not a readable {kind} file ({str(exc).strip()})") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _csv(path: Path) -> pd.DataFrame:
    """Every cell as text (an empty cell as ''), so each column is parsed by its own rule."""
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False,
                           skip_blank_lines=True, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _xlsx(path: Path) -> pd.DataFrame:
    """The first sheet, through calamine (typed cells; formulas as their cached values)."""
    import python_calamine

    wb = python_calamine.CalamineWorkbook.from_path(str(path))
    if not wb.sheet_names:
        return pd.DataFrame()
    rows = wb.get_sheet_by_index(0).to_python(skip_empty_area=False)
    if not rows:
        return pd.DataFrame()
    header = [("" if h is None else str(h)) for h in rows[0]]
    while header and not header[-1].strip():  # trailing empty header cells
        header.pop()
    width = len(header)
    body = rows[1:]
    while body and all(v in (None, "") for v in body[-1]):  # trailing empty rows
        body.pop()
    columns = {}
    for i, name in enumerate(header):
        key = name if name.strip() else f"Unnamed: {i}"
        columns[key] = pd.Series([r[i] if i < len(r) else None for r in body], dtype=object)
    extra = any(any(v not in (None, "") for v in r[width:]) for r in body)
    if extra:
        columns[f"Unnamed: {width}"] = pd.Series([None] * len(body), dtype=object)
    return pd.DataFrame(columns)


def _parquet(path: Path) -> pd.DataFrame:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise PlannerError(f"{path}: reading Parquet needs pyarrow "
                           "(pip install 'planner[parquet]')") from None
    frame: pd.DataFrame = pq.read_table(path).to_pandas()
    return frame


def columns_of(frame: pd.DataFrame) -> dict[str, Any]:
    """A DataFrame's columns by name, for :func:`planner.sheet.checks.check_table`."""
    return {str(k): frame[k] for k in frame.columns}
