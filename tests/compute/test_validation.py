"""One validation path: the same bad input value gives the same words at every entry point.

The CLI (a flag), the UI (a cell edit, checked by the service as it is typed), the bulk import
(a CSV), the workbook import and a plan (its workloads' inputs, evaluated as a table) each say
:func:`planner.compute.validation.refusal` of the value, with only where it was in front
(``tp``, ``tp:``, ``line 2 (tp):``, the cell reference, the row).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from planner.compute.checks import Problems, check_column
from planner.compute.inputs import input_columns
from planner.compute.plan import evaluate_plan
from planner.compute.table import KINDS, RowError, inputs_of, validate
from planner.compute.validation import check_array, parse_cell, parse_value, refusal
from planner.core.errors import ValidationError
from planner.formulas.ops import Coded
from planner.io.xlsx.layout import letters
from planner.io.xlsx.read_scenarios import ImportError_
from planner.service import Workspace
from planner.service.bulk import BulkImportError
from planner.service.edits import check_edit
from planner.tui.state.rows import cell_edit
from tests.helpers import run

BAD = [  # (input, flag, a bad value as typed, what every entry point says of it)
    ("tp", "--tp", "0", "must be an integer from 1 to 1,024 (got '0')"),
    ("kv_dtype", "--kv-dtype", "fp7", "must be one of auto, bf16, fp16, fp8, int8 (got 'fp7')"),
    ("target_requests_per_s", "--target-requests-per-s", "-5/min",
     "must be a number from 0 to 1,000,000,000 (got '-5/min')"),
]
"""The rate is read as a rate first (-5/min = -1/12 requests/s), then refused, showing what
was written."""


def _base(ws: Workspace) -> tuple[str, dict[str, str]]:
    """A demo scenario's name and the CSV fields that make a valid copy of it."""
    sc = next(s for s in ws.scenarios("demo") if s.kind == "inference" and s.model == "llama-3-8b")
    return sc.name, {"model": sc.model, "gpu": sc.gpu}


@pytest.mark.parametrize(("key", "flag", "raw", "said"), BAD)
def test_refusal_is_the_rule_of_the_column(key: str, flag: str, raw: str, said: str) -> None:
    column = input_columns()[key]
    with pytest.raises(ValidationError) as exc:
        parse_value(column, raw)
    assert str(exc.value) == f"{key}: {said}"
    assert refusal(column, exc.value.value) == said
    with pytest.raises(RowError) as row:  # a table: the same words, the row named
        check_array(column, np.array([str(column.default), raw], dtype=object), 2, ["a", "b"])
    assert str(row.value) == f"{key} (row b): {said}"
    problems = Problems()
    check_column(column, pd.Series([str(column.default), raw], dtype=object), problems)
    assert [(p.row, p.column, p.message) for p in problems.items] == [(1, key, said)]


@pytest.mark.parametrize(("key", "flag", "raw", "said"), BAD)
@pytest.mark.slow
def test_the_same_bad_value_is_refused_alike_everywhere(ws: Workspace, tmp_path: Path, key: str,
                                                        flag: str, raw: str, said: str) -> None:
    # the CLI: a flag of planner estimate
    code, _, stderr = run("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", flag, raw)
    assert code == 2 and f"{key} {said}" in stderr
    # the UI: the formula bar's parse, then the service's check of the edit as it is typed
    name, fields = _base(ws)
    sc = ws.scenario("demo", name)
    edit = cell_edit(sc, ws.evaluate(sc), key, [], [])
    if edit.choices is None:
        with pytest.raises(ValidationError) as exc:
            edit.parse(raw)
        assert str(exc.value) == f"{key}: {said}"
    models, gpus = ws._evaluation.catalog_specs()
    with pytest.raises(ValidationError) as exc:
        check_edit(sc, {key: raw}, models, gpus)
    assert str(exc.value) == f"{key}: {said}"
    # the bulk import: a CSV, each bad cell on its line
    csv = tmp_path / "bad.csv"
    csv.write_text(f"name,model,gpu,{key}\nnew,{fields['model']},{fields['gpu']},{raw}\n")
    ws.new_fleet("bulk")
    with pytest.raises(BulkImportError) as bulk:
        ws.import_scenarios("bulk", csv)
    assert [line.split(" ", 1)[1] for line in bulk.value.lines] == [f"({key}): {said}"]
    # the workbook import: the same words, without the value (the cell holds it)
    path = tmp_path / "w.xlsx"
    ws.export(path, ["demo"])
    wb = openpyxl.load_workbook(path)
    sheet = wb["Scenarios"]
    row = next(r for r in range(2, sheet.max_row + 1)
               if sheet[f"{letters('inference')['name']}{r}"].value == name)
    cell = f"{letters('inference')[key]}{row}"
    sheet[cell] = raw
    wb.save(path)
    with pytest.raises(ImportError_) as book:
        ws.import_workbook(path)
    assert [str(e) for e in book.value.errors] == [
        f"Scenarios!{cell} ({key}): {refusal(input_columns()[key], show=False)}"]
    assert said.startswith(refusal(input_columns()[key], show=False) + " (got ")
    # a plan: its workloads' inputs are validated as one table, each row named fleet/name
    bad = dataclasses.replace(sc, inputs={**sc.inputs, key: raw})
    with pytest.raises(RowError) as plan:
        evaluate_plan("demo", [bad], {}, ["2027-01"], "2027-01", models, gpus, [], "on-demand")
    assert str(plan.value) == f"{key} (row demo/{name}): {said}"


def test_one_value_and_a_column_agree() -> None:
    """What a table holds for a column of one value is :func:`parse_cell` of it, for every
    input of both kinds (its default, written as text)."""
    for kind in KINDS:
        for column in inputs_of(kind):
            one = parse_cell(column, str(column.default))
            got = validate({column.name: np.array([str(column.default)] * 3, dtype=object)},
                           kind)[column.name]
            values = got.texts() if isinstance(got, Coded) else np.asarray(got).tolist()
            assert list(values) == [one] * 3, column.name
