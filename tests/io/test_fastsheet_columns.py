"""The column-wise row writer of large sheets (:func:`planner.io.xlsx.sheetxml.rows_xml` over
:func:`formula_column` and :func:`value_column`) writes exactly the XML of the cell-by-cell
functions it replaced (:func:`formula_cells`, :func:`value_cells`), for every kind of column:
numbers, flags, text that needs escaping or the quote prefix, mixed and missing values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from openpyxl import Workbook

from planner.io.xlsx.sheetxml import (
    Styles,
    formula_cells,
    formula_column,
    rows_xml,
    value_cells,
    value_column,
)

ROWS = [str(r) for r in range(40, 140)]
"""A chunk of 100 rows in the middle of a sheet whose first data row is 2."""


def _cell_by_cell(rows: list[str], cells: list[list[str]]) -> str:
    """What the sheet writers joined before: each cell a string, each row joined."""
    return "".join(f'<row r="{r}">{"".join(row)}</row>'
                   for r, row in zip(rows, zip(*cells, strict=True), strict=True))


FORMULA_VALUES: list[Any] = [
    np.arange(100) % 2 == 0,  # flags
    np.array([True] * 100),  # one flag throughout
    np.arange(100, dtype=np.int64) * 7,
    np.full(100, 3, dtype=np.int64),
    np.array([0.1 * (i % 4) for i in range(100)]),  # repeats: formatted once each
    np.array([i / 3 for i in range(100)]),
    np.array([0.0, -0.0] * 50),
    np.array([1.5, float("nan"), float("inf")] * 33 + [2.0]),  # non-finite: no cached value
    np.array(["a100 <&>", "yes", "no\r"] * 33 + ["x"], dtype=object),
    np.array([None, 1.5, "text", True] * 25, dtype=object),
    np.full(100, None, dtype=object),
]


@pytest.mark.parametrize("values", FORMULA_VALUES)
@pytest.mark.parametrize("first", [2, 40])
def test_formula_column_is_formula_cells(values: Any, first: int) -> None:
    args = {"index": 5, "first": first, "last": 200, "template": "B\x00*2&amp;C\x00"}
    expected = _cell_by_cell(ROWS, [formula_cells("D", ROWS, ' s="3"', values, **args)])
    got = rows_xml(ROWS, [formula_column("D", ROWS, ' s="3"', values, **args)])
    assert got == expected
    assert got.count("<row ") == 100 and got.count('<c r="D') == 100


VALUE_COLUMNS: list[list[Any]] = [
    list(range(100)),
    [7] * 100,
    [i / 7 for i in range(100)],
    [0.5 * (i % 3) for i in range(100)],
    [1, 2.5] * 50,  # ints and floats mixed
    [0.0, -0.0] * 50,
    ["bf16", "fp8", "int4", "bf16"] * 25,  # a choice column
    [f"s{i:03d}" for i in range(98)] + ["=1+1", "日本語 <b>&\r\x01"],  # names; hostile text
    [True, False] * 50,
    [False] * 100,
    [None, "x"] * 50,  # empty cells: cell by cell
    [1, "one", True, None] * 25,
]


@pytest.mark.parametrize("values", VALUE_COLUMNS)
def test_value_column_is_value_cells(values: list[Any]) -> None:
    styles = Styles(Workbook())
    expected = _cell_by_cell(ROWS, [value_cells("C", ROWS, ' s="4"', values, styles)])
    got = rows_xml(ROWS, [value_column("C", ROWS, ' s="4"', values, styles)])
    assert got == expected
    assert got.count("<row ") == 100


def test_rows_of_several_columns() -> None:
    styles = Styles(Workbook())
    values = [f"n{i}" for i in range(100)]
    numbers = np.array([i / 9 for i in range(100)])
    args = {"index": 2, "first": 2, "last": 200, "template": "A\x00"}
    expected = _cell_by_cell(ROWS, [value_cells("A", ROWS, "", values, styles),
                                    formula_cells("B", ROWS, ' s="1"', numbers, **args)])
    got = rows_xml(ROWS, [value_column("A", ROWS, "", values, styles),
                          formula_column("B", ROWS, ' s="1"', numbers, **args)])
    assert got == expected
    assert got.startswith('<row r="40"><c r="A40" t="inlineStr"><is><t xml:space="preserve">n0'
                          '</t></is></c><c r="B40" s="1"><f t="shared" si="2"/><v>0.0</v>'
                          '</c></row><row r="41">')
