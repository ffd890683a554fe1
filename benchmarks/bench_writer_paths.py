"""Benchmark: the two ways the big sheet bodies could be written, per cell, in one process.

Issue 27 asks for one writer path. The workbook's small sheets, headers, validation, charts and
styles go through openpyxl; the bodies of the scenario and Summary sheets are SpreadsheetML row
XML rendered column-wise (:mod:`planner.io.xlsx.sheetxml`) and streamed into the same archive
in the same save (:func:`planner.io.xlsx.sheetxml.save`). The alternative, openpyxl's write-only
mode for the big sheets too, is measured here on the same grid: ``rows`` rows of ``cols``
columns, half formulas (one template per column), half numbers. CPU seconds of this process
(``time.process_time``, so a busy machine does not count), per cell and per 100,000-scenario
Scenarios sheet (282 columns).

    python -m benchmarks.bench_writer_paths [--rows 2000] [--cols 282]

openpyxl's write-only cells carry no cached value for a formula (it never writes one), so on
top of the time it would also lose what a viewer that does not recalculate shows.
"""

from __future__ import annotations

import argparse
import io
import time

import numpy as np


def openpyxl_write_only(rows: int, cols: int) -> float:
    """CPU seconds to write the grid through openpyxl's write-only worksheet and save it."""
    from openpyxl import Workbook
    from openpyxl.utils import get_column_letter

    letters = [get_column_letter(j + 1) for j in range(cols)]
    start = time.process_time()
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Scenarios")
    for r in range(2, rows + 2):
        ws.append([f"={letters[j - 1]}{r}*2" if j % 2 else float(r * j) for j in range(cols)])
    wb.save(io.BytesIO())
    return time.process_time() - start


def sheetxml_columns(rows: int, cols: int) -> float:
    """CPU seconds to render the same grid column-wise with cached values (no compression:
    that runs in a second thread in the export, overlapping this)."""
    from openpyxl import Workbook
    from openpyxl.utils import get_column_letter

    from planner.io.xlsx.sheetxml import (
        ROW,
        Styles,
        formula_column,
        formula_template,
        rows_xml,
        value_column,
    )

    styles = Styles(Workbook())
    letters = [get_column_letter(j + 1) for j in range(cols)]
    start = time.process_time()
    numbers = [np.arange(2, rows + 2, dtype=float) * j for j in range(cols)]
    row_texts = [str(r) for r in range(2, rows + 2)]
    columns = []
    for j in range(cols):
        if j % 2:
            columns.append(formula_column(
                letters[j], row_texts, "", numbers[j] * 2, index=j, first=2, last=rows + 1,
                template=formula_template(f"={letters[j - 1]}{ROW}*2")))
        else:
            columns.append(value_column(letters[j], row_texts, "", numbers[j].tolist(), styles))
    rows_xml(row_texts, columns)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--cols", type=int, default=282)
    args = parser.parse_args()
    cells = args.rows * args.cols
    for name, run in (("openpyxl write-only", openpyxl_write_only),
                      ("sheetxml column-wise", sheetxml_columns)):
        seconds = min(run(args.rows, args.cols) for _ in range(3))
        print(f"{name:22s} {seconds:7.2f} s CPU for {cells:,} cells = "
              f"{seconds / cells * 1e6:5.2f} µs/cell; a 100,000 x 282 sheet: "
              f"{seconds / cells * 100_000 * 282:6.0f} s")


if __name__ == "__main__":
    main()
