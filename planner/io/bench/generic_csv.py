"""The generic benchmark CSV (``csv``): the documented header :data:`CSV_HEADER` exactly, one
row per run, an empty cell unknown. For any engine or harness the planner has no parser for.
"""

from __future__ import annotations

import csv
import io

from planner.io.bench.records import (
    CSV_HEADER,
    ENGINES,
    INT_FIELDS,
    MODES,
    TEXT_FIELDS,
    BenchFileError,
    RunRecord,
    checked_number,
)


def parse_csv(text: str, name: str) -> list[RunRecord]:
    """Rows of the generic CSV (exact :data:`CSV_HEADER`); every bad cell names FILE:line."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or tuple(h.strip() for h in header) != CSV_HEADER:
        raise BenchFileError(f"{name}:1: the header must be exactly {','.join(CSV_HEADER)}")
    records: list[RunRecord] = []
    for row in reader:
        where = f"{name}:{reader.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(CSV_HEADER):
            raise BenchFileError(f"{where}: {len(row)} cells, the header has {len(CSV_HEADER)}")
        values = _row_values(row, where)
        _check_row(values, where)
        records.append(RunRecord(where, "csv", values))
    return records


def _row_values(row: list[str], where: str) -> dict[str, str | int | float | None]:
    """One CSV row's cells by column: empty as ``None``, text fields as text, the others
    checked numbers (integers where the field counts)."""
    values: dict[str, str | int | float | None] = {}
    for column, cell in zip(CSV_HEADER, row, strict=True):
        cell = cell.strip()
        if not cell:
            values[column] = None
        elif column in TEXT_FIELDS:
            values[column] = cell
        else:
            values[column] = checked_number(cell, column, where, column in INT_FIELDS)
    return values


def _check_row(values: dict[str, str | int | float | None], where: str) -> None:
    """Refuse a row without a model or GPU, or with an engine or mode not in the lists."""
    for column in ("model", "gpu"):
        if values[column] is None:
            raise BenchFileError(f"{where}: {column} is required")
    if values["engine"] is not None and values["engine"] not in ENGINES:
        raise BenchFileError(f"{where}: engine {values['engine']!r} is not one of "
                             f"{', '.join(ENGINES)}")
    if values["mode"] is not None and values["mode"] not in MODES:
        raise BenchFileError(f"{where}: mode {values['mode']!r} is not one of "
                             f"{', '.join(MODES)}")
