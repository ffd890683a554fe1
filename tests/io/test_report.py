"""Excel reports: structure, text safety, live formulas recomputed by independent engines
(the `formulas` package, LibreOffice headless), edits that flow, and import back."""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from openpyxl.utils import get_column_letter

from planner.compute.fleet import evaluate_scenarios
from planner.compute.table import graph
from planner.io.xlsx.calibration import prediction_columns
from planner.io.xlsx.layout import GPU_SHEET, letters, scenario_columns
from planner.io.xlsx.read_scenarios import ImportError_
from planner.service import Workspace
from planner.service.compare import counted
from planner.spec.gpu import GpuSpec
from tests.helpers import run
from tests.libreoffice import recalculate, soffice
from tests.store_fixtures import dump

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
N_INFERENCE = len(graph("inference").outputs)
N_TRAINING = len(graph("training").outputs)


def _close(got: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return bool(got) == bool(expected)
    if isinstance(expected, float) and math.isnan(expected):
        return got is None
    return got is not None and math.isclose(float(got), float(expected), rel_tol=1e-9,
                                            abs_tol=1e-9)


def compare_outputs(values: dict[tuple[str, str], Any], scenarios: list, outputs: list,
                    sheet: str = "Scenarios", kind: str = "inference") -> int:
    """Every output cell of every row against the planner's value; returns cells compared."""
    col = letters(kind)
    checked = 0
    for i, (sc, out) in enumerate(zip(scenarios, outputs, strict=True)):
        for name in graph(kind).outputs:
            cell = f"{col[name]}{i + 2}"
            got = values[(sheet, cell)]
            assert _close(got, out[name]), (sc.name, name, got, out[name])
            checked += 1
    return checked


def sheets_reached(wb: Any, sheets: tuple[str, ...]) -> set[str]:
    """The sheets of ``wb`` that the formulas of ``sheets`` read, directly or through other
    sheets and defined names (a name in a formula that matches a sheet's title, quoted or
    not, counts as a read: a superset is harmless, a miss shows as a missing value)."""
    names = {n: d.attr_text for n, d in wb.defined_names.items()}
    titles = wb.sheetnames
    reached, todo = set(sheets), list(sheets)

    def reads(text: str) -> set[str]:
        found = {t for t in titles if f"{t}!" in text or f"'{t}'!" in text}
        for name, target in names.items():
            if name in text:
                found |= {t for t in titles if t in target}
        return found

    while todo:
        sheet = wb[todo.pop()]
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    for t in reads(cell.value) - reached:
                        reached.add(t)
                        todo.append(t)
    return reached


def formulas_values(path: Path, sheets: tuple[str, ...] | None = None
                    ) -> dict[tuple[str, str], Any]:
    """Every cell's value as the ``formulas`` package computes the workbook at ``path``.

    ``sheets``: compute only those and the sheets they read (:func:`sheets_reached`), on a
    copy without the others; the package parses every formula of a workbook it loads (about
    10 s per 1,000 formula cells, a fifth of that for each further row of a formula that
    :class:`tests.formulas_engine.ShiftCompiledModel` builds from the first), so a test of
    one sheet need not pay for the Scenarios sheet."""
    from tests.formulas_engine import ShiftCompiledModel

    if sheets is not None:
        wb = openpyxl.load_workbook(path)
        keep = sheets_reached(wb, sheets)
        for title in [t for t in wb.sheetnames if t not in keep]:
            del wb[title]
        for name, defined in list(wb.defined_names.items()):
            if not any(t in defined.attr_text for t in keep):
                del wb.defined_names[name]
        path = path.with_name(path.stem + "-pruned.xlsx")
        wb.save(path)
    solution = ShiftCompiledModel().loads(str(path)).finish().calculate()
    out = {}
    for key, value in solution.items():
        if "!" not in key:
            continue
        sheet, cell = key.split("!")
        sheet = sheet.split("]")[-1].strip("'")
        v = value.value[0][0] if hasattr(value, "value") else value
        out[(sheet.capitalize() if sheet != "GPUS" else "GPUs", cell)] = (
            v.item() if hasattr(v, "item") else v)
    return out


def workbook_values(path: Path) -> dict[tuple[str, str], Any]:
    wb = openpyxl.load_workbook(path, data_only=True)
    out = {(ws.title, c.coordinate): c.value for ws in wb for row in ws.iter_rows()
           for c in row}
    wb.close()
    return out


def rollup_row(values: dict[tuple[str, str], Any], fleet: str) -> int:
    """The Summary row of ``fleet`` in the roll-up (below its "Fleet roll-up" title, a header
    row and a unit row)."""
    title = next(int(cell[1:]) for (sheet, cell), v in values.items()
                 if sheet == "Summary" and cell[0] == "A" and cell[1:].isdigit()
                 and v == "Fleet roll-up")
    return next(r for r in range(title + 3, title + 1000)
                if values.get(("Summary", f"A{r}")) == fleet)


def test_structure(ws: Workspace, tmp_path: Path) -> None:
    ws.set_scenario("demo", "llama3-8b-24gib-6x8k", {"notes": "=HYPERLINK(\"x\")",
                                                    "batch": 7})
    ws.new_fleet("+ops")
    ws.new_scenario("+ops", "@chat", model="llama-3-8b", gpu="l4", notes="-1 or +1")
    path = tmp_path / "r.xlsx"
    report = ws.export(path)
    assert report.sheets == ["Summary", "Scenarios", "Training", "Models", "GPUs", "Lists",
                             "Plan"]  # the demo fleet has a horizon
    wb = openpyxl.load_workbook(path)
    sc = wb["Scenarios"]
    headers = [c.value for c in sc[1]]
    assert headers == [c.header for c in scenario_columns("inference")]
    assert "batch [sequences]" in headers and "kv_budget_bytes [B]" in headers
    assert sc.freeze_panes == "D2" and sc.auto_filter.ref.startswith("A1:")
    col = letters("inference")
    # user text that looks like a formula stays text
    texts = {sc[f"{col['name']}{r}"].value: r for r in range(2, sc.max_row + 1)}
    row = texts["@chat"]
    assert sc[f"{col['fleet']}{row}"].value == "+ops"
    assert sc[f"{col['fleet']}{row}"].data_type == "s"
    assert sc[f"{col['notes']}{row}"].value == "-1 or +1"
    notes = [sc[f"{col['notes']}{r}"] for r in range(2, sc.max_row + 1)]
    hyper = next(c for c in notes if c.value == '=HYPERLINK("x")')
    assert hyper.data_type == "s" and hyper.quotePrefix
    # outputs are formulas; inputs are values; lookups go through INDEX/MATCH
    assert sc[f"{col['fits']}2"].value.startswith("=")
    assert isinstance(sc[f"{col['batch']}2"].value, int)
    assert sc[f"{col['gpu_memory_bytes']}2"].value == (  # a name's wildcards escaped
        f"=INDEX(GPU_memory_bytes,MATCH(SUBSTITUTE(SUBSTITUTE(SUBSTITUTE({col['gpu']}2,"
        '"~","~~"),"*","~*"),"?","~?"),GpuNames,0))')
    assert wb.defined_names["GPU_memory_bytes"].attr_text == "GPUs!$O$2:$O$28"
    formulas_text = " ".join(str(c.value) for row in sc.iter_rows() for c in row)
    for banned in ("XLOOKUP", "LET(", "FILTER(", "IFS(", "SWITCH(", "FLOOR.MATH"):
        assert banned not in formulas_text
    # Excel refuses a cell whose formula is longer than 8,192 characters ("Excel
    # specifications and limits"); LibreOffice and the formulas engine would not notice
    longest = max((len(c.value), sheet.title, c.coordinate) for sheet in wb
                  for row in sheet.iter_rows() for c in row
                  if isinstance(c.value, str) and c.value.startswith("="))
    assert 1000 < longest[0] <= 8192, longest
    assert sc[f"{col['prefill_flops']}2"].number_format == "0.000E+00"
    assert sc[f"{col['cost_usd_per_hour']}2"].number_format == '"$"#,##0.00'
    validated = {str(dv.sqref).split(":")[0] for dv in sc.data_validations.dataValidation}
    for key in ("model", "gpu", "weight_dtype", "kv_dtype", "batch", "mfu"):
        assert f"{col[key]}2" in validated, key
    assert wb.defined_names["ModelNames"].attr_text == "Models!$A$2:$A$8"
    assert wb.defined_names["GpuNames"].attr_text == "GPUs!$A$2:$A$28"
    assert len(sc.conditional_formatting) == 2
    assert len(wb["Summary"]._charts) == 2
    assert wb["GPUs"]["A1"].value == "name" and wb["GPUs"]["O2"].value == "=D2*1073741824"


@pytest.mark.slow
def test_formulas_engine_recomputes_every_output(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    values = formulas_values(path)
    scenarios = ws.scenarios()
    inference = [s for s in scenarios if s.kind == "inference"]
    training = [s for s in scenarios if s.kind == "training"]
    assert compare_outputs(values, inference, ws.evaluate_many(inference)) == 8 * N_INFERENCE
    assert compare_outputs(values, training, ws.evaluate_many(training), "Training",
                           "training") == 2 * N_TRAINING


def _edit_and_expect(ws: Workspace, path: Path) -> tuple[list, list]:
    """Edit the exported workbook (a batch, a GPU choice, a GPU's price and memory) and return
    the scenarios and outputs the planner computes for the same edits."""
    wb = openpyxl.load_workbook(path)
    sc, gpus = wb["Scenarios"], wb["GPUs"]
    col = letters("inference")
    scenarios = [s for s in ws.scenarios() if s.kind == "inference"]
    edits = {scenarios[0].name: {"batch": 3}, scenarios[2].name: {"gpu": "l40s"}}
    for r, s in enumerate(scenarios, 2):
        for key, value in edits.get(s.name, {}).items():
            sc[f"{col[key]}{r}"] = value
    g_row = {gpus[f"A{r}"].value: r for r in range(2, gpus.max_row + 1)}
    gl = {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}
    gpus[f"{gl['price_usd_per_hour']}{g_row['h100-sxm']}"] = 3.25
    gpus[f"D{g_row['rtx-4090']}"] = 32               # memory_gib
    wb.save(path)
    specs = ws.gpu_specs()
    specs["h100-sxm"] = dataclasses.replace(specs["h100-sxm"], price_usd_per_hour=3.25)
    specs["rtx-4090"] = dataclasses.replace(specs["rtx-4090"], memory_bytes=32 * 2**30)
    edited = []
    for s in scenarios:
        change = edits.get(s.name, {})
        edited.append(dataclasses.replace(
            s, gpu=change.get("gpu", s.gpu),
            inputs={**s.inputs, **{k: v for k, v in change.items() if k != "gpu"}}))
    return edited, evaluate_scenarios(edited, ws.model_specs(), specs)


@pytest.mark.slow
def test_edits_in_the_workbook_flow_formulas_engine(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    edited, expected = _edit_and_expect(ws, path)
    values = formulas_values(path)
    assert compare_outputs(values, edited, expected) == 8 * N_INFERENCE
    six = next(o for s, o in zip(edited, expected, strict=True)
               if s.name == "llama3-8b-24gib-6x8k")
    assert six["max_concurrent_sequences"] == 14  # its RTX 4090 now has 32 GiB
    mixtral = next(o for s, o in zip(edited, expected, strict=True)
                   if s.name == "mixtral-8x7b-2xh100-tp2")
    assert mixtral["cost_usd_per_hour"] == 2 * 3.25


@pytest.mark.libreoffice
def test_libreoffice_recomputes_the_demo_fleet_and_edits(ws: Workspace, tmp_path: Path) -> None:
    assert soffice() is not None, "LibreOffice is required: .ci/run installs libreoffice-calc"
    path = tmp_path / "demo.xlsx"
    ws.export(path)
    values = workbook_values(recalculate(path, tmp_path / "lo1"))
    scenarios = ws.scenarios()
    inference = [s for s in scenarios if s.kind == "inference"]
    training = [s for s in scenarios if s.kind == "training"]
    assert compare_outputs(values, inference, ws.evaluate_many(inference)) == 8 * N_INFERENCE
    assert compare_outputs(values, training, ws.evaluate_many(training), "Training",
                           "training") == 2 * N_TRAINING
    # the Summary adds the counted scenarios only: the option group's chosen base, not its
    # H200 and MI300X options (planner.service.compare.counted)
    outputs = ws.evaluate_many(inference)
    assert values[("Summary", f"E{rollup_row(values, 'demo')}")] == pytest.approx(sum(
        outputs[i]["cost_usd_per_hour"] for i in counted(inference)))
    assert values[("Summary", f"E{rollup_row(values, 'demo')}")] == pytest.approx(sum(
        o["cost_usd_per_hour"] for o in outputs) - 8 * 3.5 - 12 * 2.5)  # 8 × H200, 12 × MI300X
    edited, expected = _edit_and_expect(ws, path)
    values = workbook_values(recalculate(path, tmp_path / "lo2"))
    assert compare_outputs(values, edited, expected) == 8 * N_INFERENCE


@pytest.mark.slow
def test_export_refuses_overwrite_and_bad_paths(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    assert run("export", "--out", str(path))[0] == 0
    code, _, err = run("export", "--out", str(path))
    assert code == 2 and "exists; pass --force" in err
    assert run("export", "--out", str(path), "--force")[0] == 0
    code, _, err = run("export", "--out", str(tmp_path / "missing" / "r.xlsx"))
    assert code == 2 and "folder" in err and "does not exist" in err
    code, _, err = run("export", "--out", str(tmp_path / "r.csv"))
    assert code == 2 and "must be an .xlsx file" in err
    code, _, err = run("export", "--fleet", "nope", "--out", str(tmp_path / "x.xlsx"))
    assert code == 2 and "unknown fleet 'nope'" in err
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o500)
    try:
        if os.geteuid() != 0:  # root can write anywhere
            code, _, err = run("export", "--out", str(tmp_path / "ro" / "r.xlsx"))
            assert code == 2 and "cannot write" in err
    finally:
        (tmp_path / "ro").chmod(0o700)


@pytest.mark.slow
def test_sweep_sheet_with_chart(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "s.xlsx"
    code, _, err = run("export", "--out", str(path), "--fleet", "demo", "--sweep",
                         "demo/llama3-8b-request-1024+128:batch=1,2,4,...,64")
    assert code == 0, err
    wb = openpyxl.load_workbook(path)
    sweep = wb["Sweep 1"]
    col = letters("inference")
    assert [sweep[f"{col['batch']}{r}"].value for r in range(2, 9)] == [1, 2, 4, 8, 16, 32, 64]
    assert len(sweep._charts) == 1
    values = formulas_values(path, sheets=("Sweep 1",))
    base = ws.scenario("demo", "llama3-8b-request-1024+128")
    rows = [dataclasses.replace(base, inputs={**base.inputs, "batch": b})
            for b in (1, 2, 4, 8, 16, 32, 64)]
    expected = evaluate_scenarios(rows, ws.model_specs(), ws.gpu_specs())
    assert compare_outputs(values, rows, expected, "Sweep 1") == 7 * N_INFERENCE


def test_import_round_trip_changes_nothing(ws: Workspace, tmp_path: Path,
                                           isolated_data_dir: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    url = f"sqlite:///{isolated_data_dir / 'planner.db'}"
    before = dump(url)
    plans = ws.import_workbook(path)
    assert len(plans) == 10 and all(not p.fields for p in plans)
    assert dump(url) == before


@pytest.mark.slow
def test_import_applies_edits_and_new_rows(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    wb = openpyxl.load_workbook(path)
    sc = wb["Scenarios"]
    col = letters("inference")
    sc[f"{col['batch']}3"] = 5
    sc[f"{col['notes']}3"] = "edited in Excel"
    new = sc.max_row + 1
    for c in scenario_columns("inference"):
        if c.role in ("meta", "input"):
            sc[f"{col[c.key]}{new}"] = sc[f"{col[c.key]}3"].value
    sc[f"{col['id']}{new}"] = None
    sc[f"{col['version']}{new}"] = None
    sc[f"{col['name']}{new}"] = "from-excel"
    wb.save(path)
    code, out, err = run("import", str(path), "--dry-run")
    assert code == 0, err
    assert "would create demo/from-excel" in out and "batch=5" in out
    assert ws.scenario("demo", sc[f"{col['name']}3"].value).inputs["batch"] != 5
    code, out, err = run("import", str(path))
    assert code == 0, err
    edited = ws.scenario("demo", sc[f"{col['name']}3"].value)
    assert (edited.inputs["batch"], edited.notes) == (5, "edited in Excel")
    assert ws.scenario("demo", "from-excel").inputs["batch"] == 5
    history = ws.history("demo", edited.name)
    assert {c.field for c in history} == {"batch", "notes"}


@pytest.mark.slow
def test_import_lists_every_bad_cell_and_changes_nothing(ws: Workspace, tmp_path: Path,
                                                         isolated_data_dir: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    wb = openpyxl.load_workbook(path)
    sc = wb["Scenarios"]
    col = letters("inference")
    sc[f"{col['batch']}2"] = 0
    sc[f"{col['mfu']}3"] = "fast"
    sc[f"{col['gpu']}4"] = "h900"
    sc[f"{col['tp']}5"] = 3
    sc[f"{col['prompt_tokens']}6"] = 2048  # a valid edit must not land either
    wb.save(path)
    url = f"sqlite:///{isolated_data_dir / 'planner.db'}"
    before = dump(url)
    with pytest.raises(ImportError_) as err:
        ws.import_workbook(path)
    assert [str(e) for e in err.value.errors] == [
        f"Scenarios!{col['batch']}2 (batch): must be an integer from 1 to 10,000,000",
        f"Scenarios!{col['mfu']}3 (mfu): must be a number above 0 and at most 1",
        f"Scenarios!{col['gpu']}4 (gpu): unknown GPU 'h900'",
        f"Scenarios!{col['tp']}5 (tp): must divide the 64 attention heads of llama-3-70b "
        "(got 3)"]
    assert dump(url) == before
    code, _, stderr = run("import", str(path))
    assert code == 2 and "nothing imported" in stderr and "Scenarios!" in stderr


@pytest.mark.slow
def test_import_refuses_unknown_sheets_headers_and_stale_rows(ws: Workspace,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    ws.export(path)
    wb = openpyxl.load_workbook(path)
    wb.create_sheet("My notes")
    wb.save(tmp_path / "extra.xlsx")
    with pytest.raises(ImportError_, match="unknown sheet\\(s\\) My notes"):
        ws.import_workbook(tmp_path / "extra.xlsx")
    wb = openpyxl.load_workbook(path)
    wb["Scenarios"]["R1"] = "bacth"
    wb.save(tmp_path / "header.xlsx")
    with pytest.raises(ImportError_, match="Scenarios!R1: unexpected header 'bacth'"):
        ws.import_workbook(tmp_path / "header.xlsx")
    # someone changes the scenario after the export: the import is refused, nothing lands
    wb = openpyxl.load_workbook(path)
    col = letters("inference")
    name = wb["Scenarios"][f"{col['name']}2"].value
    wb["Scenarios"][f"{col['batch']}2"] = 99
    wb.save(path)
    ws.set_scenario("demo", name, {"batch": 2})
    with pytest.raises(ImportError_, match=f"Scenarios!{col['version']}2 \\(version\\): "
                       "scenario .* was changed by someone else"):
        ws.import_workbook(path)
    assert ws.scenario("demo", name).inputs["batch"] == 2
    with pytest.raises(Exception, match=r"not a readable \.xlsx"):
        (tmp_path / "junk.xlsx").write_text("not a zip")
        ws.import_workbook(tmp_path / "junk.xlsx")


def test_custom_gpu_spec_compute_dtype_rule_matches() -> None:
    """The workbook's compute-dtype formula mirrors compute_dtype for every dtype."""
    from planner.compute.symbolic import excel, symbolic
    from planner.formulas.derived import gpu_flops_per_s
    from planner.spec.gpu import COMPUTE_DTYPES, compute_dtype

    at = {"matmul_path_code": "P", **{f"gpu_{d}_peak": d.upper() for d in
                                      ("bf16", "fp16", "fp8", "int8", "int4", "nvfp4",
                                       "mxfp4")}}
    formula = excel(symbolic(gpu_flops_per_s), at.__getitem__)
    for code in (1, 2, 3, 4, 5):  # fp8, int8, int4, NVFP4, MXFP4 paths; 0 the 16-bit peak
        assert f"P={code}" in formula
    t4 = GpuSpec("t4", 16 * 2**30, {"fp16": 65e12, "int8": 130e12}, 320e9)
    assert compute_dtype(t4, "bf16") == "fp16" and compute_dtype(t4, "fp8") == "fp16"
    assert [compute_dtype(t4, d) for d in COMPUTE_DTYPES] == [
        "fp16", "fp16", "fp16", "int8", "fp16", "fp16", "fp16"]  # bf16 … int4, mxfp4, nvfp4
    assert compute_dtype(t4, "int8", "weight_only") == "fp16"


@pytest.mark.libreoffice
def test_serving_engines_recompute_in_excel_engines(ws: Workspace, tmp_path: Path) -> None:
    """Scenarios on each serving engine, open loop, closed loop and offline, an MoE model under
    expert parallelism and an SLO: every output the workbook computes (the fixed-point
    iterations and queueing included) equals Python's, in the formulas engine and in
    LibreOffice."""
    ws.new_fleet("engines")
    cases = {
        "vllm-open": dict(model="llama-3-8b", gpu="h100-sxm", engine="vllm", gpus=2,
                          target_requests_per_s=12, slo_ttft_s=0.5, slo_tpot_s=0.03),
        "sglang-closed": dict(model="llama-3-8b", gpu="a100-80gb", engine="sglang",
                              concurrency=64, kv_dtype="fp8"),
        "trtllm-offline": dict(model="mixtral-8x7b", gpu="h100-sxm", engine="trtllm", gpus=2,
                               tp=2, ep=2, weight_dtype="fp8"),
        "vllm-v0-pp": dict(model="llama-3-70b", gpu="h100-sxm", engine="vllm", gpus=4, tp=2,
                           pp=2, vllm_v0_accounting=True, chunked_prefill=False,
                           max_model_len=8192, target_requests_per_s=3, slo_percentile="50",
                           slo_ttft_s=2),
        # attention DP: the MoE gather/scatter on an HGX board, the all-to-all on NVL72
        "trtllm-adp-gather": dict(model="mixtral-8x7b", gpu="h100-sxm", engine="trtllm",
                                  gpus=2, tp=2, ep=2, attention_dp=True, concurrency=32),
        "trtllm-adp-a2a": dict(model="mixtral-8x7b", gpu="gb200", engine="trtllm", gpus=4,
                               tp=4, ep=4, attention_dp=True, weight_dtype="fp8",
                               target_requests_per_s=20),
    }
    for name, fields in cases.items():
        ws.new_scenario("engines", name, **fields)
    path = tmp_path / "engines.xlsx"
    ws.export(path, ["engines"])
    scenarios = ws.scenarios("engines")
    expected = ws.evaluate_many(scenarios)
    assert compare_outputs(formulas_values(path), scenarios, expected) == 6 * N_INFERENCE
    recalculated = recalculate(path, tmp_path / "lo")
    assert compare_outputs(workbook_values(recalculated), scenarios, expected) == \
        6 * N_INFERENCE


@pytest.mark.libreoffice
def test_calibrated_scenarios_and_calibration_sheet(tmp_path: Path,
                                                    isolated_data_dir: Path) -> None:
    """After planner calibrate on the development set's H100 + vLLM runs: a calibrated
    scenario's exported outputs equal the planner's, the uncalibrated twin's and a row with
    its own request latency too (formulas engine and LibreOffice); the Calibration sheet lists
    the profile and one row per scored H100 + vLLM run with measured, predicted and |error|,
    and a scatter chart on log axes; import ignores it."""
    from tests.io.test_measurements import PLAN_SCENARIO, calibrated_plan, dev_workspace

    db = tmp_path / "c.db"
    with dev_workspace(db) as ws:
        profile = calibrated_plan(ws)
        ws.new_scenario("plan", "own-latency", **PLAN_SCENARIO, request_latency_s=0.1)
        scenarios = ws.scenarios("plan")
        expected = ws.evaluate_many(scenarios)
        assert [o["calibration_profile"] for o in expected] == ["h100-sxm-vllm v1", "",
                                                                "h100-sxm-vllm v1"]
        path = tmp_path / "cal.xlsx"
        report = ws.export(path, ["plan"])
        assert report.sheets[-2:] == ["Calibration", "Calibration runs"]
        values = formulas_values(path)
        assert compare_outputs(values, scenarios, expected) == 3 * N_INFERENCE
        recalculated = workbook_values(recalculate(path, tmp_path / "lo"))
        assert compare_outputs(recalculated, scenarios, expected) == 3 * N_INFERENCE
        # the calibrated TTFT differs from the catalog one (83.4 ms vs 136.7 ms, see
        # tests/compute/test_calibration.py; 48.0 and 62.9 ms before issue 23's prefill cohorts), so
        # the profile really reached the formulas
        col = letters("inference")
        ttft = [values[("Scenarios", f"{col['ttft_mean_s']}{r}")] for r in (2, 3)]
        assert ttft[0] == pytest.approx(0.1367, abs=5e-4)
        assert ttft[1] == pytest.approx(0.0834, abs=5e-4)
        wb = openpyxl.load_workbook(path)
        sheet = wb["Calibration"]
        assert sheet["A4"].value == "h100-sxm-vllm v1"
        headers = [c.value for c in sheet[3]]
        assert sheet.cell(row=4, column=headers.index("request_latency_s") + 1).value == \
            pytest.approx(profile.parameters["request_latency_s"])
        assert wb["Scenarios"][f"{col['gpu_bandwidth_efficiency']}2"].value == \
            "=Calibration!$E$4"
        runs = [m for m in ws.measurements(gpu="h100-sxm", engine="vllm")]
        scored = {r["id"] for r in profile.residuals}
        top = 7
        assert sheet.cell(row=top, column=1).value == "run"
        listed = [sheet.cell(row=r, column=1).value for r in range(top + 1, sheet.max_row + 1)
                  if sheet.cell(row=r, column=1).value is not None]
        assert sorted(listed) == sorted(scored) and len(listed) == len(runs) - len(
            profile.errors["skipped"])
        # every row: its measured figures are the stored run's, its predicted ones live
        # formulas on the Calibration runs sheet that compute the fit's own predictions (the
        # profile's residuals) in the formulas engine and in LibreOffice; |error| live too
        scale = {"throughput": 1.0, "ttft": 1e3, "tpot": 1e3}
        first_col = {"throughput": 7, "ttft": 10, "tpot": 13}
        row_of = {sheet.cell(row=r, column=1).value: r
                  for r in range(top + 1, top + 1 + len(listed))}
        checked = 0
        for res in profile.residuals:
            r, c = row_of[res["id"]], first_col[res["metric"]]
            m, p = get_column_letter(c), get_column_letter(c + 1)
            assert sheet.cell(row=r, column=c).value == pytest.approx(
                res["measured"] * scale[res["metric"]])
            formula = sheet.cell(row=r, column=c + 1).value
            assert formula.startswith("=") and "'Calibration runs'!" in formula
            assert sheet.cell(row=r, column=c + 2).value == f"=ABS({p}{r}/{m}{r}-1)"
            for computed in (values, recalculated):
                assert computed[("Calibration", f"{p}{r}")] == pytest.approx(
                    res["predicted"] * scale[res["metric"]], rel=1e-6), (res, computed is values)
            assert values[("Calibration", get_column_letter(c + 2) + str(r))] == \
                pytest.approx(abs(res["predicted"] / res["measured"] - 1), rel=1e-6, abs=1e-9)
            checked += 1
        assert checked == len(profile.residuals) == 21 + 6 + 2 * (3 + 1)
        chart, = sheet._charts
        assert chart.x_axis.scaling.logBase == 10 and chart.y_axis.scaling.logBase == 10
        assert len(chart.series) == 3
        # the Calibration runs sheet keeps the Scenarios layout and writes only the
        # predictions' chain: a computed column outside it is hidden and empty
        runs_ws, g = wb["Calibration runs"], graph("inference")
        kept = prediction_columns()
        for j, c in enumerate(scenario_columns("inference"), 1):
            letter = get_column_letter(j)
            cells = [runs_ws.cell(row=r, column=j).value for r in range(2, len(listed) + 2)]
            dropped = g.computes(c.key) and c.key not in kept
            assert runs_ws.column_dimensions[letter].hidden == dropped, c.key
            if g.computes(c.key):  # a formula in every row, or nothing at all
                assert all((v is None) if dropped else str(v).startswith("=")
                           for v in cells), c.key
        assert 0 < len(kept & set(g.outputs)) < len(g.outputs)
        plans = ws.import_workbook(path)
        assert len(plans) == 3 and all(not p.fields for p in plans)
