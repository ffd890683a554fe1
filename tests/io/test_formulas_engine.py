"""The test-side ``formulas`` model that compiles each relative formula once
(:mod:`tests.formulas_engine`) computes every cell as the package's own model does, and
compiles as usual the formulas a shift could get wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import formulas
import openpyxl
import pytest
from openpyxl.workbook.defined_name import DefinedName

from planner.service import Workspace
from tests.formulas_engine import ShiftCompiledModel, relative_form
from tests.io.test_report import sheets_reached

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def solved(model: Any, path: Path) -> dict[str, str]:
    """Every node's value, as text (arrays and errors compare by their repr)."""
    solution = model.loads(str(path)).finish().calculate()
    return {k: repr(v.value.tolist() if hasattr(v, "value") else v)
            for k, v in solution.items()}


def test_relative_form_shifts_relative_parts_and_keeps_strings_functions_and_sheets() -> None:
    form, refs = relative_form(
        "=A2*2+SUM($A$2:$A$4)+INDEX(Look!$A$1:$A$4,MATCH(B2,'Look x'!B$1:$B4,0))"
        '+LOG10(A2)&"A5"', 2, 3)
    assert form == ("=R[0]C[-2]*2+SUM(R2C1:R4C1)+INDEX(Look!R1C1:R4C1,MATCH(R[0]C[-1],"
                    "'Look x'!R1C[-1]:R[2]C2,0))+LOG10(R[0]C[-2])&\"A5\"")
    assert refs == ["A2", "$A$2:$A$4", "Look!$A$1:$A$4", "B2", "'Look x'!B$1:$B4", "A2"]
    # row 3's formula is row 2's, one row down
    assert relative_form("=A3*2+SUM($A$2:$A$4)", 3, 3)[0] == relative_form(
        "=A2*2+SUM($A$2:$A$4)", 2, 3)[0]
    for positional in ("=ROW()+A2", "=COLUMN(A2)", "=OFFSET(A1,1,0)", "=INDIRECT(\"A1\")",
                       "=SUM(A:A)", "=SUM($2:$3)", "=@A1:A3"):
        assert relative_form(positional, 2, 3) is None, positional
    assert relative_form('="ROW(" & A2', 2, 3) is not None  # in a string it is text


def test_shifted_cells_compute_as_the_package_compiles_them(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    sheet = wb.active
    sheet.title = "Scen"
    look = wb.create_sheet("Look x")
    for r in range(1, 6):
        look.cell(row=r, column=1, value=r * 10)
        look.cell(row=r, column=2, value=f"k{r}")
    wb.defined_names["rate"] = DefinedName("rate", attr_text="'Look x'!$A$2")
    for r in range(2, 6):
        sheet.cell(row=r, column=1, value=r)
        sheet.cell(row=r, column=2, value=f"k{r - 1}")
        sheet.cell(row=r, column=3, value=(
            f"=A{r}*2+SUM($A$2:$A$5)+INDEX('Look x'!$A$1:$A$5,MATCH(B{r},'Look x'!$B$1:$B$5,0))"
            f'+IF(A{r}>3,LOG10(A{r}),0)+LEN("B5")+rate'))
        sheet.cell(row=r, column=4, value=f"=C{r}+A{r}+$A$3")  # A3 and $A$3 coincide in row 3
        sheet.cell(row=r, column=5, value=f"=ROW()*A{r}")  # positional: compiled each time
    path = tmp_path / "t.xlsx"
    wb.save(path)
    model = ShiftCompiledModel()
    assert solved(model, path) == solved(formulas.ExcelModel(), path)
    # C3:C5 from C2; D3 compiled (its A3 and $A$3 are one input), D4 and D5 from D2
    assert model.shifted == 3 + 2


@pytest.mark.slow
def test_an_exported_scenarios_sheet_computes_as_the_package_compiles_it(
        ws: Workspace, tmp_path: Path) -> None:
    """Two demo scenarios' Scenarios sheet (and the sheets it reads), every cell."""
    path = tmp_path / "r.xlsx"
    ws.export(path, ["demo"])
    wb = openpyxl.load_workbook(path)
    keep = sheets_reached(wb, ("Scenarios",))
    for title in [t for t in wb.sheetnames if t not in keep]:
        del wb[title]
    scenarios = wb["Scenarios"]
    scenarios.delete_rows(4, scenarios.max_row)
    pruned = tmp_path / "pruned.xlsx"
    wb.save(pruned)
    model = ShiftCompiledModel()
    assert solved(model, pruned) == solved(formulas.ExcelModel(), pruned)
    # every formula with a relative form seen before on its sheet was built from that one:
    # none fell back to compiling because its inputs did not pair
    repeated = 0
    for sheet in wb:
        seen = set()
        for row in sheet.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("="):
                    form = relative_form(c.value, c.row, c.column)
                    repeated += form is not None and form[0] in seen
                    seen.add(form and form[0])
    assert model.shifted == repeated >= sum(
        isinstance(c.value, str) and c.value.startswith("=") for c in scenarios[3])
