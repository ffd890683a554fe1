"""The Summary and Plan a finance reader signs (issue 24 item 4) and totals that never match a
name by pattern (issue 28): every figure checked twice, as the planner cached it and as
LibreOffice recomputes it, against the planner's own evaluated outputs (never literals of
serving figures, which the serving model's revisions move)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.service import Workspace
from planner.service.compare import counted
from tests.io.test_report import workbook_values
from tests.io.test_workbook_finance import formula_cells, same
from tests.libreoffice import recalculate, soffice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
Values = dict[tuple[str, str], Any]


def exported(ws: Workspace, tmp_path: Path, fleets: list[str] | None = None
             ) -> tuple[Path, Values, Values]:
    """Export, then (path, cached values, LibreOffice's values), after checking that every
    formula of the Summary and Plan sheets recomputes in LibreOffice to its cached value."""
    assert soffice() is not None, "LibreOffice is required: .ci/run installs libreoffice-calc"
    path = tmp_path / "r.xlsx"
    ws.export(path, fleets)
    cached = workbook_values(path)
    lo = workbook_values(recalculate(path, tmp_path / "lo"))
    formulas = [k for k in formula_cells(path) if k[0] == "Summary" or k[0].startswith("Plan")]
    assert len(formulas) > 50
    differ = [(k, cached[k], lo.get(k)) for k in formulas if not same(cached[k], lo.get(k))]
    assert differ == [], differ[:10]
    return path, cached, lo


def find_row(values: Values, sheet: str, text: str, after: int = 0) -> int:
    """The first row after ``after`` whose column A starts with ``text``."""
    return min(int(cell[1:]) for (s, cell), v in values.items()
               if s == sheet and cell[0] == "A" and cell[1:].isdigit()
               and int(cell[1:]) > after and str(v or "").startswith(text))


def table(values: Values, title: str, end: str | None = None
          ) -> tuple[dict[tuple[str, str], str], dict[str, int]]:
    """A Summary table below its section ``title``: ((header, unit) → column letter,
    column A's text → row) of its body rows (up to a row starting with ``end``)."""
    top = find_row(values, "Summary", title)
    while values.get(("Summary", f"B{top + 1}")) in (None, ""):  # a warning line: not yet
        top += 1
    columns = {}
    for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        head = values.get(("Summary", f"{letter}{top + 1}"))
        if head:
            columns[(head, values.get(("Summary", f"{letter}{top + 2}")) or "")] = letter
    rows = {}
    r = top + 3
    while (name := values.get(("Summary", f"A{r}"))) not in (None, ""):
        rows[name] = r
        if end and str(name).startswith(end):
            break
        r += 1
    return columns, rows


@pytest.mark.libreoffice
def test_summary_marks_options_and_totals_the_counted_scenarios(ws: Workspace,
                                                               tmp_path: Path) -> None:
    """Two fleets (the demo and a copy): the option group's two unchosen options are marked
    "no: option", the scenario table's total adds the rows marked "yes" only, each fleet's
    roll-up equals its counted scenarios and the grand total both fleets, in the planner's
    cached values and in LibreOffice's recomputation."""
    ws.copy_fleet("demo", "what-if")
    _, cached, lo = exported(ws, tmp_path)
    inference = [s for s in ws.scenarios() if s.kind == "inference"]
    outputs = ws.evaluate_many(inference)
    chosen = counted(inference)
    month = {f"{s.fleet}/{s.name}": o["cost_usd_per_month"] for s, o in zip(inference, outputs,
                                                                              strict=True)}
    want_total = sum(outputs[i]["cost_usd_per_month"] for i in chosen)
    assert len(inference) == 16 and len(chosen) == 12
    assert sum(month.values()) > want_total + 1000  # adding every row would overstate it
    for values in (cached, lo):
        columns, rows = table(values, "Inference scenarios", end="total")
        mark, usd = columns[("counted", "in totals")], columns[("cost", "USD/month")]
        marks = {name: values[("Summary", f"{mark}{r}")] for name, r in rows.items()
                 if name != "total of counted scenarios"}
        assert marks == {f"{s.fleet}/{s.name}": "yes" if s.chosen else "no: option"
                         for s in inference}
        assert sorted(n for n, v in marks.items() if v != "yes") == [
            f"{f}/llama3-70b-chat-{g}" for f in ("demo", "what-if")
            for g in ("h200-tp2", "mi300x-tp2")]
        total = values[("Summary", f"{usd}{rows['total of counted scenarios']}")]
        assert total == pytest.approx(want_total, rel=1e-12)
        assert total == pytest.approx(sum(month[n] for n, v in marks.items() if v == "yes"),
                                      rel=1e-12)
        columns, rows = table(values, "Fleet roll-up", end="total")
        usd = columns[("cost", "USD/month")]
        per_fleet = {f: values[("Summary", f"{usd}{rows[f]}")] for f in ("demo", "what-if")}
        assert per_fleet == pytest.approx({f: want_total / 2 for f in per_fleet}, rel=1e-12)
        assert values[("Summary", f"{usd}{rows['total, all fleets']}")] == pytest.approx(
            want_total, rel=1e-12)
        assert [values[("Summary", f"{columns[key]}{rows['total, all fleets']}")]
                for key in (("scenarios", "counted"), ("options", "not counted"))] == [12, 4]


@pytest.mark.libreoffice
def test_summary_verdict_is_meets_slo_and_cost_at_the_modelled_load(ws: Workspace,
                                                                    tmp_path: Path) -> None:
    """"meets target" is the serving model's meets_slo (a scenario meeting its SLO at
    10 requests/s though the idle-server throughput says the rate is not met); the cost per
    million output tokens is the deployment's hourly cost over the output it delivers at the
    modelled load, with that load named: the target rate (saturated when the deployment
    serves less than offered), a number of clients, or the offline maximum."""
    ws.new_fleet("load", "")
    ws.new_scenario("load", "clients", model="llama-3-8b", gpu="h100-sxm", engine="vllm",
                    concurrency=16)
    ws.new_scenario("load", "flooded", model="llama-3-8b", gpu="h100-sxm", engine="vllm",
                    target_requests_per_s=5000.0)
    # the demo flagship as it was before it ran on vLLM: the idle roofline at batch 1 says the
    # rate is not met, though the serving model meets the SLO at it
    ws.new_scenario("load", "idle-rate", model="llama-3-70b", gpu="h100-sxm", gpus=12, tp=4,
                    prompt_tokens=2048, output_tokens=256, target_requests_per_s=10.0,
                    slo_ttft_s=1.0, slo_tpot_s=0.05)
    _, cached, lo = exported(ws, tmp_path, ["demo", "load"])
    inference = [s for s in ws.scenarios("demo") + ws.scenarios("load")
                 if s.kind == "inference"]
    outputs = {f"{s.fleet}/{s.name}": o for s, o in zip(inference, ws.evaluate_many(inference),
                                                        strict=True)}
    idle = outputs["load/idle-rate"]
    assert idle["meets_slo"] and not idle["meets_target_rate"]
    for values in (cached, lo):
        columns, rows = table(values, "Inference scenarios", end="total")
        meets, cost = columns[("meets target", "SLO at load")], columns[
            ("cost at load", "USD/M output tokens")]
        basis = columns[("basis", "load modelled")]
        got = {name: (values[("Summary", f"{meets}{r}")], values[("Summary", f"{cost}{r}")],
                      values[("Summary", f"{basis}{r}")]) for name, r in rows.items()
               if name in outputs}
        assert len(got) == len(outputs) == 11
        for name, (verdict, usd, _basis) in got.items():
            out, sc = outputs[name], next(s for s in inference if f"{s.fleet}/{s.name}" == name)
            asked = sc.inputs["target_requests_per_s"] + sc.inputs["slo_ttft_s"] + \
                sc.inputs["slo_tpot_s"]
            assert verdict == (("yes" if out["meets_slo"] else "no") if asked else
                               "no target"), name
            assert usd == pytest.approx(out["cost_usd_per_hour"] * 1e6 /
                                        (3600 * out["output_tokens_per_s"]), rel=1e-12), name
        assert got["demo/llama3-70b-chat-h100-tp4"][0] == "yes"
        assert got["demo/llama3-70b-chat-h100-tp4"][2] == "target rate"
        assert got["load/idle-rate"][:3:2] == ("yes", "target rate")
        # not the idle-server figure at batch 1
        assert got["load/idle-rate"][1] < idle["cost_usd_per_million_output_tokens"] / 5
        assert got["demo/deepseek-v3-fp8-8xh200"][2] == "offline maximum"
        assert got["load/clients"][2] == "16 clients"
        assert outputs["load/flooded"]["overloaded"]
        assert got["load/flooded"][:3:2] == ("no", "target rate, saturated")


HOSTILE = ("h*", "h?", "~h", "<h", ">h", "=h", "h~*")
"""GPU and fleet names a SUMIFS/COUNTIFS criterion reads as a pattern or an operator."""


@pytest.mark.libreoffice
def test_summary_totals_match_hostile_names_exactly(ws: Workspace, tmp_path: Path) -> None:
    """Each hostile GPU and fleet name's totals count its own rows only, when LibreOffice
    recomputes (before: SUMIFS read ``h*`` as every GPU starting with h, ``<h`` as every name
    sorting before h)."""
    from tests.core.test_hostile_input import GPU

    for k, name in enumerate(HOSTILE, 1):
        ws.add_gpu(name, GPU)
        ws.new_fleet(f"f{name}", "")
        ws.new_scenario(f"f{name}", "a", model="llama-3-8b", gpu=name, gpus=k)
    _, cached, lo = exported(ws, tmp_path, [f"f{name}" for name in HOSTILE])
    for values in (cached, lo):
        columns, rows = table(values, "Assumptions")
        in_use = columns[("GPUs in use", "count")]
        assert {name: values[("Summary", f"{in_use}{rows[name]}")] for name in HOSTILE} == {
            name: k for k, name in enumerate(HOSTILE, 1)}
        columns, rows = table(values, "Fleet roll-up")
        gpus, count = columns[("GPUs", "count")], columns[("scenarios", "counted")]
        assert {name: (values[("Summary", f"{gpus}{rows[f'f{name}']}")],
                       values[("Summary", f"{count}{rows[f'f{name}']}")]) for name in HOSTILE} \
            == {name: (k, 1) for k, name in enumerate(HOSTILE, 1)}


@pytest.mark.libreoffice
def test_plan_sheet_is_formatted_totalled_and_priced_from_the_gpus_sheet(
        ws: Workspace, tmp_path: Path) -> None:
    """The demo plan's sheet: two header rows holding each GPU type's name (no helper row),
    headers no wider than their columns, currency formats, a 12-month total equal to the
    plan's, catalog prices as references to the GPUs sheet (edit one there and LibreOffice
    moves the plan) and scheduled prices as values; the Summary's plan line reads the
    sheet's total."""
    import openpyxl

    from tests.io.test_workbook_finance import GPU_COL

    path, cached, lo = exported(ws, tmp_path, ["demo"])
    plan = ws.plan("demo")
    n = len(plan.gpu_types)
    wb = openpyxl.load_workbook(path)
    sheet = wb["Plan"]
    assert [sheet.cell(3, 2 + 3 * k).value for k in range(n)] == plan.gpu_types
    assert not any("criterion" in str(c.value) for c in sheet["A"])
    widths = {j: sheet.column_dimensions[chr(64 + j)].width for j in range(1, 3 + 3 * n + 1)}
    for j in range(2, 3 + 3 * n + 1):  # a sub-header wraps onto at most two lines
        assert len(str(sheet.cell(4, j).value or "")) <= 2 * widths[j], (j, widths[j])
    for k, name in enumerate(plan.gpu_types):  # a name fits its three merged columns
        assert len(name) <= widths[2 + 3 * k] + widths[3 + 3 * k] + widths[4 + 3 * k]
    total_row = 5 + 12
    assert str(sheet[f"A{total_row}"].value).startswith("total, 12 months")
    cost_col = chr(ord("A") + 2 + 3 * n)
    assert sheet[f"{cost_col}{total_row}"].value == f"=SUM({cost_col}5:{cost_col}16)"
    assert sheet[f"{cost_col}5"].number_format == '"$"#,##0'
    gpu_rows = {wb["GPUs"][f"A{r}"].value: r for r in range(2, wb["GPUs"].max_row + 1)}
    scheduled = []
    for k, name in enumerate(plan.gpu_types):
        for m in range(12):
            cell = sheet.cell(5 + m, 3 + 3 * k)
            assert cell.number_format == '"$"#,##0.00'
            if plan.price_usd_per_gpu_hour_by_type[k, m] == ws.gpu(name).spec.price_usd_per_hour:
                assert cell.value == f"=GPUs!${GPU_COL['price_usd_per_hour']}${gpu_rows[name]}"
            else:
                scheduled.append((name, plan.months[m], cell.value))
    assert scheduled == [("h100-sxm", f"2027-{m:02d}", 2.25) for m in range(7, 13)]
    for values in (cached, lo):
        assert values[("Plan", f"{cost_col}{total_row}")] == pytest.approx(
            plan.total_cost_usd.sum(), rel=1e-12)
        columns, rows = table(values, "Plan over months")
        assert values[("Summary", f"{columns[('total cost', 'USD, all months')]}"
                                  f"{rows['demo']}")] == pytest.approx(
            plan.total_cost_usd.sum(), rel=1e-12)
        assert values[("Summary", f"{columns[('GPUs', 'peak month')]}{rows['demo']}")] == \
            plan.total_gpus.max()
    # the A100's price edited on the GPUs sheet moves the plan's A100 costs
    a100 = plan.gpu_types.index("a100-80gb")
    wb["GPUs"][f"{GPU_COL['price_usd_per_hour']}{gpu_rows['a100-80gb']}"] = 3.0
    wb.save(path)
    again = workbook_values(recalculate(path, tmp_path / "lo2"))
    assert [again[("Plan", f"{chr(ord('A') + 3 + 3 * a100)}{5 + m}")] for m in range(12)] == \
        pytest.approx((plan.gpus_billed_by_type[a100] * 3.0 * 730).tolist())


@pytest.mark.libreoffice
def test_data_sheets_print_their_key_columns_and_the_sweep_its_chart(
        ws: Workspace, tmp_path: Path) -> None:
    """LibreOffice's PDF of the Scenarios sheet is one page (its identity columns, id to
    notes: the figures print on the Summary), not 8 pages wide at 3 pt; a sweep prints its
    key block (name, the varied column, verdict and cost) on one page with its chart inside
    the print area, and the block's references equal the sheet's own cells."""
    import openpyxl
    import pypdf
    from openpyxl.utils import column_index_from_string, range_boundaries

    from planner.io.xlsx.layout import letters
    from planner.io.xlsx.sweep import key_block
    from tests.helpers import run
    from tests.libreoffice import sheet_pdf

    path = tmp_path / "s.xlsx"
    code, _, err = run("export", "--out", str(path), "--fleet", "demo", "--sweep",
                       "demo/llama3-8b-request-1024+128:batch=1,2,4,...,64")
    assert code == 0, err
    wb = openpyxl.load_workbook(path)
    names = wb.sheetnames
    col = letters("inference")
    assert wb["Scenarios"].print_area == f"'Scenarios'!$A$1:${col['notes']}$9"
    sweep = wb["Sweep 1"]
    block = key_block(["batch"])
    assert [key for _l, key in block][:3] == ["name", "batch", "fits"]
    lo_col, lo_row, hi_col, hi_row = range_boundaries(sweep.print_area.split("!")[1])
    assert (lo_col, hi_col) == (column_index_from_string(block[0][0]),
                                column_index_from_string(block[-1][0]))
    (chart,) = sweep._charts
    anchor = chart.anchor._from
    assert lo_col <= anchor.col + 1 <= hi_col and lo_row <= anchor.row + 1 <= hi_row
    assert anchor.row + 1 + 20 <= hi_row  # the chart's 10 cm (about 20 rows) inside
    values = workbook_values(path)
    for letter, key in block:
        assert [values[("Sweep 1", f"{letter}{r}")] for r in range(2, 9)] == \
            [values[("Sweep 1", f"{col[key]}{r}")] for r in range(2, 9)], key
    scenarios = pypdf.PdfReader(sheet_pdf(path, tmp_path / "p0", names.index("Scenarios")))
    assert len(scenarios.pages) == 1
    assert "llama3-70b-chat-h100-tp4"[:10] in scenarios.pages[0].extract_text()
    printed = pypdf.PdfReader(sheet_pdf(path, tmp_path / "p1", names.index("Sweep 1")))
    assert len(printed.pages) == 1
    text = printed.pages[0].extract_text()
    assert "throughput against batch" in text and "batch=64" in text


@pytest.mark.slow
def test_summary_flags_gpus_whose_serving_efficiencies_are_defaults(ws: Workspace,
                                                                    tmp_path: Path) -> None:
    """Issue 24 (estimates say how sure they are): the Summary names the GPUs in use whose
    serving efficiencies are the planner's defaults (MI355X in the catalog), and only those."""
    from planner.compute.verdict import gpu_measured

    gpus = {g.name: g.spec for g in ws.gpus()}
    assert not gpu_measured(gpus["mi355x"]) and gpu_measured(gpus["h100-sxm"])
    ws.new_fleet("sure", "")
    for name, gpu in (("on-mi355x", "mi355x"), ("on-h100", "h100-sxm")):
        ws.new_scenario("sure", name, model="llama-3-8b", gpu=gpu, engine="vllm",
                        target_requests_per_s=2.0)
    path = tmp_path / "sure.xlsx"
    ws.export(path, ["sure"])
    texts = [str(v) for (sheet, _cell), v in workbook_values(path).items()
             if sheet == "Summary" and isinstance(v, str) and v.startswith("LESS SURE")]
    assert len(texts) == 1 and "mi355x" in texts[0] and "h100-sxm" not in texts[0]
    demo = tmp_path / "demo.xlsx"
    ws.export(demo, ["demo"])  # every demo GPU has measured efficiencies: no such line
    assert not any(isinstance(v, str) and v.startswith("LESS SURE")
                   for (sheet, _c), v in workbook_values(demo).items() if sheet == "Summary")
