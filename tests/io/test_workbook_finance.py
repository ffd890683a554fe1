"""The workbook finance signs (issue 15 item 3): cached values beside every formula equal to
Python's figures and to LibreOffice's recalculation, a Summary that prints on two pages, print
setup on every sheet, header notes and defined names, and GPUs-sheet edits that import
(validated, one transaction) or are refused naming the cell."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from openpyxl.utils import get_column_letter

from planner.compute.table import graph
from planner.io.xlsx.layout import GPU_SHEET, letters
from planner.io.xlsx.read_scenarios import ImportError_
from planner.service import Workspace
from planner.service.compare import counted
from tests.io.test_report import compare_outputs, rollup_row, workbook_values
from tests.libreoffice import recalculate, sheet_pdf, soffice
from tests.store_fixtures import dump

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
GPU_COL = {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}


def formula_cells(path: Path) -> dict[tuple[str, str], str]:
    """Every formula cell of the workbook (sheet, cell) → its formula."""
    wb = openpyxl.load_workbook(path)
    out = {(sheet.title, c.coordinate): c.value for sheet in wb for row in sheet.iter_rows()
           for c in row if isinstance(c.value, str) and c.value.startswith("=")
           and c.data_type == "f"}
    wb.close()
    return out


def same(got: Any, expected: Any) -> bool:
    """Cached against recalculated: flags as flags, numbers to 1e-9, text exactly."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return bool(got) == bool(expected)
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(float(got), float(expected), rel_tol=1e-9, abs_tol=1e-9)
    return got == expected


@pytest.mark.libreoffice
def test_cached_values_equal_python_and_libreoffice(ws: Workspace, tmp_path: Path) -> None:
    """A viewer that does not recalculate (openpyxl data_only, pandas, previews) sees every
    formula's value: the planner's figures, and the same as LibreOffice computes."""
    assert soffice() is not None, "LibreOffice is required: .ci/run installs libreoffice-calc"
    path = tmp_path / "demo.xlsx"
    ws.export(path)
    formulas = formula_cells(path)
    cached = workbook_values(path)  # openpyxl data_only=True: the <v> of each formula cell
    scenarios = ws.scenarios()
    inference = [s for s in scenarios if s.kind == "inference"]
    training = [s for s in scenarios if s.kind == "training"]
    n_inf, n_train = len(graph("inference").outputs), len(graph("training").outputs)
    assert compare_outputs(cached, inference, ws.evaluate_many(inference)) == \
        len(inference) * n_inf
    assert len(inference) == 8  # the demo fleet: 5 workloads and an option group of 3
    assert compare_outputs(cached, training, ws.evaluate_many(training), "Training",
                           "training") == 2 * n_train
    outputs = ws.evaluate_many(inference)
    row = rollup_row(cached, "demo")
    chosen = counted(inference)  # the option group adds its chosen scenario only
    assert len(chosen) == 6
    assert cached[("Summary", f"E{row}")] == pytest.approx(
        sum(outputs[i]["cost_usd_per_hour"] for i in chosen), rel=1e-12)
    assert cached[("Summary", f"F{row}")] == pytest.approx(
        sum(outputs[i]["cost_usd_per_month"] for i in chosen), rel=1e-12)
    assert cached[("Summary", f"F{row}")] == pytest.approx(49_421.0)  # 67.70 USD/h × 730 h
    train = ws.evaluate_many(training)
    assert cached[("Summary", f"G{row}")] == pytest.approx(
        sum(o["train_cost_usd"] for o in train), rel=1e-12)
    empty = sorted(k for k in formulas if cached.get(k) is None)
    assert empty == [], empty[:10]  # every formula of the demo workbook has its value
    recalculated = workbook_values(recalculate(path, tmp_path / "lo"))
    differ = [(k, cached[k], recalculated.get(k)) for k in formulas
              if not same(cached[k], recalculated.get(k))]
    assert differ == [], differ[:10]
    assert len(formulas) > 5 * n_inf + 2 * n_train + 100


@pytest.mark.libreoffice
def test_summary_prints_on_two_pages_with_its_assumptions(ws: Workspace,
                                                          tmp_path: Path) -> None:
    """LibreOffice's PDF of the demo fleet's Summary: two pages, the tables on the first
    (title, fleet, date, version, example-price warning, assumptions, roll-up, scenarios,
    training), the two charts whole on the second."""
    import pypdf

    path = tmp_path / "demo.xlsx"
    ws.export(path)
    pdf = pypdf.PdfReader(sheet_pdf(path, tmp_path / "print"))
    assert len(pdf.pages) == 2
    first, second = (p.extract_text() for p in pdf.pages)
    from planner.io.xlsx.workbook import _version

    for text in ("LLM capacity and cost report", "Fleet: demo", f"planner {_version()}",
                 "EXAMPLE PRICES", "a100-80gb, h100-sxm, h200, mi300x, rtx-4090", "Assumptions",
                 "Serving engines", "roofline (5 scenarios), vllm (3 scenarios)",
                 "730 hours (every scenario)",
                 "Fleet roll-up", "$49,421", "Inference scenarios", "no target",
                 "demo/mixtral-8x7b-2xh100-tp2", "Training runs",
                 "demo/llama2-7b-lora-r8-qv", "USD/month", "GiB/GPU"):
        assert text in first, text
    assert "Memory per GPU [GiB]" in second and "Cost per scenario [USD/month]" in second
    assert "Memory per GPU" not in first


@pytest.mark.slow
def test_print_setup_notes_and_names(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "demo.xlsx"
    ws.export(path)
    wb = openpyxl.load_workbook(path)
    for sheet in wb:
        assert sheet.page_setup.orientation == "landscape", sheet.title
        assert sheet.page_setup.fitToWidth == 1 and sheet.page_setup.fitToHeight == 0
        assert sheet.sheet_properties.pageSetUpPr.fitToPage, sheet.title
        assert sheet.print_area, sheet.title
    for title in ("Scenarios", "Training", "Models", "GPUs"):
        assert wb[title].print_title_rows == "$1:$1"
    # 282 columns print nowhere legibly: the sheet prints what each row is (id to notes)
    assert wb["Scenarios"].print_area == "'Scenarios'!$A$1:$G$9"
    summary = wb["Summary"]
    assert [b.id for b in summary.row_breaks.brk] == [summary.max_row + 1]
    col = letters("inference")
    note = wb["Scenarios"][f"{col['cost_usd_per_month']}1"].comment.text
    assert note == ("Cost per month [USD/month]\n= cost_usd_per_hour * hours_per_month\n\n"
                    "``cost_usd_per_hour * hours_per_month`` (730 h by default).")
    assert wb["Scenarios"][f"{col['batch']}1"].comment is None  # inputs carry no formula
    top = next(c.row for c in summary["A"] if str(c.value).startswith("Inference scenarios"))
    headers = {c.value: c for c in summary[top + 1]}  # its header row
    assert headers["meets target"].comment.text.startswith("Meets its target: the serving "
                                                           "model's meets_slo")
    assert {n: wb.defined_names[n].attr_text for n in ("BytesPerGiB", "MsPerSecond",
                                                        "SecondsPerDay")} == {
        "BytesPerGiB": "1073741824", "MsPerSecond": "1000", "SecondsPerDay": "86400"}
    kv = next(c for c in summary[top + 3] if c.column == 16).value
    assert kv == (f"=MIN(Scenarios!{col['kv_in_use_bytes_per_gpu']}2,"
                  f"MAX(Scenarios!{col['kv_budget_bytes']}2,0))/BytesPerGiB")
    assert [c.value for c in summary[top + 2]][:6] == ["", "in totals", "", "count", "yes/no",
                                                       "requests/s"]


def _gpu_rows(sheet: Any) -> dict[str, int]:
    return {sheet[f"A{r}"].value: r for r in range(2, sheet.max_row + 1)}


@pytest.mark.slow
def test_gpu_sheet_price_edit_round_trips(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    wb = openpyxl.load_workbook(path)
    gpus = wb["GPUs"]
    row = _gpu_rows(gpus)["h100-sxm"]
    assert gpus[f"{GPU_COL['price_usd_per_hour']}{row}"].value == 2.5
    gpus[f"{GPU_COL['price_usd_per_hour']}{row}"] = 3.25
    wb.save(path)
    before = ws.gpu("h100-sxm")
    plans = ws.import_workbook(path, dry_run=True)
    assert [(p.kind, p.name, p.fields) for p in plans if p.kind == "gpu"] == [
        ("gpu", "h100-sxm", {"price_usd_per_hour": 3.25})]
    assert ws.gpu("h100-sxm").spec.price_usd_per_hour == 2.5  # the dry run changed nothing
    ws.import_workbook(path)
    after = ws.gpu("h100-sxm")
    assert after.spec.price_usd_per_hour == 3.25
    assert after.spec.price_is_example is False  # a price set by hand is not an example
    assert after.version == before.version + 1
    # exported again, the workbook carries the new price and its costs
    again = tmp_path / "again.xlsx"
    ws.export(again)
    values = workbook_values(again)
    assert values[("GPUs", f"{GPU_COL['price_usd_per_hour']}{row}")] == 3.25
    mixtral = next(i for i, s in enumerate(ws.scenarios()) if s.gpu == "h100-sxm"
                   and s.name == "mixtral-8x7b-2xh100-tp2")
    col = letters("inference")
    inference = [s for s in ws.scenarios() if s.kind == "inference"]
    r = next(i for i, s in enumerate(inference, 2) if s.name == "mixtral-8x7b-2xh100-tp2")
    assert mixtral >= 0 and values[("Scenarios", f"{col['cost_usd_per_month']}{r}")] == \
        pytest.approx(2 * 3.25 * 730)
    assert "h100-sxm" not in str(values[("Summary", "A5")])  # no longer an example price
    # and importing it unedited changes nothing
    assert [p for p in ws.import_workbook(again) if p.kind == "gpu" or p.fields] == []


@pytest.mark.slow
def test_bad_gpu_sheet_edits_are_refused_naming_the_cell(ws: Workspace, tmp_path: Path,
                                                         isolated_data_dir: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    wb = openpyxl.load_workbook(path)
    gpus = wb["GPUs"]
    rows = _gpu_rows(gpus)
    price, memory = GPU_COL["price_usd_per_hour"], GPU_COL["memory_gib"]
    bytes_col = GPU_COL["memory_bytes"]
    gpus[f"{price}{rows['h100-sxm']}"] = -1
    gpus[f"{memory}{rows['h200']}"] = "lots"
    gpus[f"{bytes_col}{rows['l4']}"] = 1e9          # a computed column typed over
    gpus[f"A{gpus.max_row + 1}"] = "h900"           # not in the catalog
    gpus[f"{price}{rows['a100-80gb']}"] = 1.5       # a valid edit must not land either
    col = letters("inference")
    wb["Scenarios"][f"{col['batch']}2"] = 3         # nor a valid scenario edit
    wb.save(path)
    url = f"sqlite:///{isolated_data_dir / 'planner.db'}"
    before = dump(url)
    with pytest.raises(ImportError_) as err:
        ws.import_workbook(path)
    assert [str(e) for e in err.value.errors] == [
        f"GPUs!{bytes_col}{rows['l4']} (memory_bytes): memory_bytes [B] is computed from "
        f"memory_gib; edit {memory}{rows['l4']} instead and keep this cell's formula",
        f"GPUs!A{gpus.max_row} (name): unknown GPU 'h900'; the GPUs sheet edits the "
        "catalog's GPUs (add a GPU with planner gpu add)"]
    assert dump(url) == before
    # with the layout errors fixed, the figures are validated (all listed, nothing applied)
    wb = openpyxl.load_workbook(path)
    wb["GPUs"][f"{bytes_col}{rows['l4']}"] = f"={memory}{rows['l4']}*1073741824"
    wb["GPUs"].delete_rows(wb["GPUs"].max_row)
    wb.save(path)
    with pytest.raises(ImportError_) as err:
        ws.import_workbook(path)
    assert [str(e) for e in err.value.errors] == [  # in sheet order
        f"GPUs!{price}{rows['h100-sxm']} (price_usd_per_hour): must be a number from 0 to "
        "1e+06 (got -1.0)",
        f"GPUs!{memory}{rows['h200']} (memory_gib): must be a number above 0 and at most "
        "1e+06 (got 'lots')"]
    assert "nothing imported" in str(err.value)
    assert dump(url) == before
    # someone changes the GPU after the export: the edit is refused, not silently lost
    wb = openpyxl.load_workbook(path)
    wb["GPUs"][f"{price}{rows['h100-sxm']}"] = 3.0
    wb["GPUs"][f"{memory}{rows['h200']}"] = 141
    wb.save(path)
    ws.set_gpu("a100-80gb", {"price_usd_per_hour": 1.7})
    with pytest.raises(ImportError_, match=f"GPUs!{GPU_COL['version']}{rows['a100-80gb']} "
                       r"\(version\): GPU 'a100-80gb' was changed since the export"):
        ws.import_workbook(path)
    assert ws.gpu("a100-80gb").spec.price_usd_per_hour == 1.7
    assert ws.gpu("h100-sxm").spec.price_usd_per_hour == 2.5


def test_gpu_text_with_carriage_returns_round_trips(ws: Workspace, tmp_path: Path,
                                                   isolated_data_dir: Path) -> None:
    """Found by the hostile-names property test: a vendor or source with a CR (read back as
    LF) is not an edit."""
    from tests.core.test_hostile_input import GPU

    ws.add_gpu("cr-gpu", {**GPU, "vendor": "~?ZQJ\r$\r", "label": "plain",
                          "source": "x\r\ny"})
    path = tmp_path / "r.xlsx"
    ws.export(path)
    url = f"sqlite:///{isolated_data_dir / 'planner.db'}"
    before = dump(url)
    assert [p for p in ws.import_workbook(path) if p.kind == "gpu"] == []
    assert dump(url) == before
