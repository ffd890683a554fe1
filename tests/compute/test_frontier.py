"""The throughput–interactivity frontier (issue 25 item 6): the library's points against the
serving model evaluated one scenario at a time, the Pareto marks and the cheapest point per
level against brute force, ``planner sweep --frontier`` (text, JSON, CSV, errors, help) and
the Frontier sheet's chart read back with openpyxl (and recalculated by LibreOffice)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import service
from planner.compute import frontier as fr
from planner.compute.sweep import Variation
from planner.compute.table import inputs_of
from planner.core.errors import ValidationError
from planner.service import Workspace
from tests.helpers import run

SCENARIO = ("demo", "llama3-70b-chat-h100-tp4")
"""Llama-3-70B on vLLM, TP 4, 2,048+256 tokens, SLO TTFT p99 1 s and TPOT 50 ms (the demo
fleet's option-group base)."""
GPUS = ("h100-sxm", "b200")
LEVELS = (1, 8, 64)


def _inputs(ws: Workspace) -> dict[str, Any]:
    """The scenario's inference inputs (what ``planner sweep`` takes of it)."""
    names = {c.name for c in inputs_of("inference")}
    return {k: v for k, v in ws.scenario(*SCENARIO).inputs.items() if k in names}


def _base(ws: Workspace) -> dict[str, Any]:
    sc = ws.scenario(*SCENARIO)
    return {"model": sc.model, "gpu": sc.gpu, "lora_targets": sc.lora_targets, **_inputs(ws)}


def _frontier(ws: Workspace, **kwargs: Any) -> fr.Frontier:
    return fr.frontier(_base(ws), [Variation("gpu", GPUS)], ws.model_specs(), ws.gpu_specs(),
                       concurrency=kwargs.pop("concurrency", LEVELS),
                       profiles=ws.calibration_figures(), **kwargs)


def _dominated_brute(x: list[float], y: list[float], usable: list[bool]) -> list[bool]:
    """The Pareto definition point by point: optimal when usable and no usable point is at
    least as good on both axes and better on one, and no earlier usable point is identical."""
    out = []
    for i in range(len(x)):
        if not usable[i]:
            out.append(False)
            continue
        beaten = any(usable[j] and x[j] >= x[i] and y[j] >= y[i] and (x[j] > x[i] or y[j] > y[i])
                     for j in range(len(x)))
        twin = any(usable[j] and x[j] == x[i] and y[j] == y[i] for j in range(i))
        out.append(not beaten and not twin)
    return out


def test_pareto_mask_by_hand() -> None:
    """(1,5) loses to (1,6); (2,4) is kept and its twin dropped; (3,1) likewise; the unusable
    (10,10) neither counts nor beats anything."""
    x = np.array([1, 2, 3, 2, 3, 1, 10], float)
    y = np.array([5, 4, 1, 4, 1, 6, 10], float)
    usable = np.array([True] * 6 + [False])
    assert fr.pareto_mask(x, y, usable).tolist() == [False, True, True, False, False, True,
                                                    False]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.booleans()), min_size=1,
                max_size=30))
def test_pareto_mask_is_the_definition(points: list[tuple[int, int, bool]]) -> None:
    x = [float(p[0]) for p in points]
    y = [float(p[1]) for p in points]
    usable = [p[2] for p in points]
    got = fr.pareto_mask(np.array(x), np.array(y), np.array(usable, dtype=bool)).tolist()
    assert got == _dominated_brute(x, y, usable)


def test_points_are_the_serving_model_at_each_concurrency(ws: Workspace) -> None:
    """Each point is the scenario estimated alone as one engine (gpus = tp = 4) at that
    concurrency: tokens/s/GPU = output_tokens_per_s / 4, tokens/s/user = 1 / tpot_mean_s,
    the TTFT at the SLO's percentile, meets_slo, and USD/M output tokens =
    cost_usd_per_hour * 1e6 / (3600 * output_tokens_per_s)."""
    result = _frontier(ws)
    assert result.configurations == ["gpu=h100-sxm", "gpu=b200"]
    assert [(p.configuration, p.concurrency) for p in result.points] == [
        (f"gpu={g}", c) for g in GPUS for c in LEVELS]
    sc = ws.scenario(*SCENARIO)
    for p in result.points:
        gpu = p.configuration.removeprefix("gpu=")
        one = service.estimate(ws.model(sc.model).spec, ws.gpu(gpu).spec,
                               {**_inputs(ws), "gpus": 4, "concurrency": p.concurrency},
                               profiles=ws.calibration_figures())
        assert p.gpus == 4
        assert p.output_tokens_per_s == pytest.approx(one["output_tokens_per_s"], rel=1e-12)
        assert p.output_tokens_per_s_per_gpu == pytest.approx(one["output_tokens_per_s"] / 4,
                                                              rel=1e-12)
        assert p.tokens_per_s_per_user == pytest.approx(1 / one["tpot_mean_s"], rel=1e-12)
        assert p.ttft_slo_percentile_s == pytest.approx(one["ttft_slo_percentile_s"],
                                                        rel=1e-12)
        assert p.meets_slo is bool(one["meets_slo"])
        assert p.cost_usd_per_million_output_tokens == pytest.approx(
            one["cost_usd_per_hour"] * 1e6 / (3600 * one["output_tokens_per_s"]), rel=1e-12)
        assert p.state == ("meets SLO" if one["meets_slo"] else "misses SLO")
    # the price per GPU-hour of each catalog GPU, times the 4 GPUs of the engine
    assert {p.configuration: p.cost_usd_per_hour for p in result.points} == {
        f"gpu={g}": 4 * ws.gpu(g).spec.price_usd_per_hour for g in GPUS}


def test_pareto_and_cheapest_match_brute_force(ws: Workspace) -> None:
    result = _frontier(ws, concurrency=fr.CONCURRENCY_GRID)
    points = result.points
    assert len(points) == 2 * 11
    x = [p.tokens_per_s_per_user for p in points]
    y = [p.output_tokens_per_s_per_gpu for p in points]
    assert [p.pareto for p in points] == _dominated_brute(x, y, [p.usable for p in points])
    levels = sorted({p.tokens_per_s_per_user for p in points if p.pareto and p.meets_slo})
    assert [c.level_tokens_per_s_per_user for c in result.cheapest] == levels
    for c in result.cheapest:
        fast = [p for p in points if p.usable and p.meets_slo
                and p.tokens_per_s_per_user >= c.level_tokens_per_s_per_user]
        best = min(p.cost_usd_per_million_output_tokens for p in fast)
        assert points[c.point].cost_usd_per_million_output_tokens == best
        assert points[c.point] in fast


def test_cheapest_at_given_levels_and_a_level_no_point_reaches(ws: Workspace) -> None:
    result = _frontier(ws, levels=[10, 50, 1e6])
    assert [c.level_tokens_per_s_per_user for c in result.cheapest] == [10.0, 50.0]
    for c in result.cheapest:
        p = result.points[c.point]
        assert p.meets_slo and p.tokens_per_s_per_user >= c.level_tokens_per_s_per_user


def test_tp_configurations_are_one_engine_each(ws: Workspace) -> None:
    """Varying TP varies the engine's GPUs (gpus = tp * pp), never an invalid gpus count."""
    result = fr.frontier(_base(ws), [Variation("tp", (2, 8))], ws.model_specs(),
                         ws.gpu_specs(), concurrency=(4,), profiles=ws.calibration_figures())
    assert [(p.configuration, p.gpus) for p in result.points] == [("tp=2", 2), ("tp=8", 8)]
    assert all(p.state in ("meets SLO", "misses SLO", "does not fit") for p in result.points)


def test_a_disaggregated_frontier_divides_by_both_pools(ws: Workspace) -> None:
    """A disaggregated configuration holds 2 prefill workers at TP 2 and 1 decode worker at
    TP 4: 2 * 2 + 1 * 4 = 8 GPUs (not the scenario's tp * pp = 4), so tokens/s/GPU is the
    deployment's output over 8 and the hourly cost 8 GPUs' (the estimate of that deployment
    at each concurrency)."""
    pools = {"serving_mode": "disaggregated", "prefill_workers": 2, "prefill_tp": 2,
             "decode_workers": 1, "decode_tp": 4}
    result = fr.frontier({**_base(ws), **pools}, [Variation("gpu", ("h100-sxm",))],
                         ws.model_specs(), ws.gpu_specs(), concurrency=(4, 64),
                         profiles=ws.calibration_figures())
    sc = ws.scenario(*SCENARIO)
    for p in result.points:
        one = service.estimate(ws.model(sc.model).spec, ws.gpu("h100-sxm").spec,
                               {**_inputs(ws), **pools, "gpus": 4,
                                "concurrency": p.concurrency},
                               profiles=ws.calibration_figures())
        assert one["deployment_gpus"] == 8 and p.gpus == 8
        assert p.output_tokens_per_s_per_gpu == pytest.approx(one["output_tokens_per_s"] / 8,
                                                              rel=1e-12)
        assert p.cost_usd_per_hour == pytest.approx(8 * ws.gpu("h100-sxm").spec.price_usd_per_hour)


@pytest.mark.parametrize(("kwargs", "variations", "message"), [
    ({"concurrency": (0, 4)}, [], "concurrency: must be an integer from 1 to 100,000,000"),
    ({"concurrency": ("many",)}, [], "concurrency:"),
    ({"levels": (-1,)}, [], "--levels: numbers of tokens/s per user above 0 (got -1)"),
    ({}, [Variation("gpus", (4, 8))], "gpus: is tp * pp in a frontier (one engine)"),
    ({}, [Variation("concurrency", (4, 8))], "concurrency: is the frontier's axis"),
    ({}, [Variation("gpu", GPUS), Variation("gpu", GPUS)], "gpu: is varied twice"),
])
def test_bad_input_names_the_field_and_range(ws: Workspace, kwargs: dict[str, Any],
                                             variations: list[Variation],
                                             message: str) -> None:
    with pytest.raises(ValidationError) as err:
        fr.frontier(_base(ws), variations, ws.model_specs(), ws.gpu_specs(),
                    **{"concurrency": LEVELS, **kwargs})
    assert message in str(err.value)


ARGS = ("sweep", "/".join(SCENARIO), "--frontier", "--vary", "gpu=h100-sxm,b200",
        "--concurrency", "1,8,64")


def test_cli_text_has_units_and_marks_the_pareto_points(ws: Workspace) -> None:
    result = _frontier(ws)
    code, out, err = run(*ARGS)
    assert code == 0, err
    lines = out.splitlines()
    header = lines[1]
    for head in ("configuration", "concurrency (requests)", "tokens/s/GPU", "tokens/s/user",
                 "TTFT p99 (ms)", "TPOT (ms)", "USD/M output tokens", "cost (USD/h)",
                 "Pareto"):
        assert head in header
    rows = [line for line in lines[3:3 + len(result.points)]]
    assert len(rows) == 6 and all(r.startswith("gpu=") for r in rows)
    assert [r.rstrip().endswith(fr.PARETO_MARK) for r in rows] == [
        p.pareto for p in result.points]
    assert "Cheapest configuration meeting the SLO at each interactivity level" in out
    assert "at least (tokens/s/user)" in out


def test_cli_json_and_csv_are_the_library_figures(tmp_path: Path, ws: Workspace) -> None:
    result = _frontier(ws)
    out_csv = tmp_path / "frontier.csv"
    code, out, err = run(*ARGS, "--json", "--out", str(out_csv))
    assert code == 0, err
    data = json.loads(out)
    assert data["points"] == fr.records(result)
    assert data["concurrency"] == list(LEVELS)
    assert [c["gpu"] for c in data["configurations"]] == list(GPUS)
    assert [c["point"] for c in data["cheapest"]] == [c.point for c in result.cheapest]
    with out_csv.open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == [name for name, _unit in fr.FIELDS]
    assert len(rows) == 1 + len(result.points)
    for row, point in zip(rows[1:], result.points, strict=True):
        got = dict(zip(rows[0], row, strict=True))
        assert got["configuration"] == point.configuration
        assert float(got["output_tokens_per_s_per_gpu"]) == point.output_tokens_per_s_per_gpu
        assert float(got["tokens_per_s_per_user"]) == point.tokens_per_s_per_user
        assert got["pareto"] == str(point.pareto)


@pytest.mark.parametrize(("extra", "message"), [
    (("--concurrency", "0,1"), "concurrency: must be an integer from 1 to 100,000,000"),
    (("--concurrency", "many"), "concurrency: must be an integer from 1 to 100,000,000 "
                                "(closed-loop clients of one engine) (got 'many')"),
    (("--concurrency", "1..300000"), "--vary/--concurrency: the frontier has 300,000 points "
                                     "(configurations x concurrencies); at most 200,000"),
    (("--concurrency", "1,2,4,...,100"), "does not reach 100"),
    (("--levels", "fast"), "--levels: numbers of tokens/s per user above 0 (got 'fast')"),
    (("--vary", "gpus=4,8"), "gpus: is tp * pp in a frontier"),
    (("--vary", "gpu=h900"), "gpu: must be one of"),
])
def test_cli_bad_input_is_one_line_exit_2(extra: tuple[str, ...], message: str) -> None:
    code, out, err = run("sweep", "/".join(SCENARIO), "--frontier", *extra)
    assert code == 2 and out == ""
    assert message in " ".join(err.split()) and "Traceback" not in err


def test_sweep_without_frontier_keeps_its_rules() -> None:
    code, _, err = run("sweep", "/".join(SCENARIO))
    assert code == 2 and "--vary: give one or two variations" in err
    code, _, err = run("sweep", "/".join(SCENARIO), "--vary", "batch=1,2", "--levels", "5")
    assert code == 2 and "--concurrency/--levels: work with --frontier" in err


def test_sweep_help_documents_the_frontier() -> None:
    code, out, _ = run("sweep", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "--frontier" in text and "tokens/s per user (1/TPOT)" in text
    assert "--concurrency VALUES" in text and "[default: 1,2,4,...,1024]" in text
    assert "--levels TOKENS_PER_S_PER_USER" in text
    assert "planner sweep demo/llama3-70b-chat-h100-tp4 --frontier --vary gpu=h100-sxm,b200" \
        in text


def _xlsx(tmp_path: Path) -> Path:
    path = tmp_path / "frontier.xlsx"
    code, _, err = run(*ARGS, "--out", str(path))
    assert code == 0, err
    return path


def test_frontier_sheet_chart_reads_back(tmp_path: Path, ws: Workspace) -> None:
    """The scatter chart's series: one per GPU over its 3 rows of the point table (x the
    tokens/s/user column I, y the tokens/s/GPU column H), the Pareto block (A/B under the
    chart) and the TPOT objective's two points (L/M); the cells hold the library's values."""
    from openpyxl import load_workbook

    from planner.io.xlsx import frontier as sheet

    result = _frontier(ws)
    path = _xlsx(tmp_path)
    wb = load_workbook(path)
    assert wb.sheetnames == ["Frontier"]
    frontier_ws = wb["Frontier"]
    charts = frontier_ws._charts
    assert len(charts) == 1
    series = charts[0].series
    refs = [(s.tx.v, s.xVal.numRef.f, s.yVal.numRef.f) for s in series]
    below = 5 + 6 - 1 + 2 + sheet.CHART_ROWS + 1  # last point row + 2, the chart, one row
    n = sum(p.pareto for p in result.points)
    assert refs == [
        ("gpu=h100-sxm", "'Frontier'!$I$5:$I$7", "'Frontier'!$H$5:$H$7"),
        ("gpu=b200", "'Frontier'!$I$8:$I$10", "'Frontier'!$H$8:$H$10"),
        ("Pareto-optimal", f"'Frontier'!$A${below + 1}:$A${below + n}",
         f"'Frontier'!$B${below + 1}:$B${below + n}"),
        ("TPOT objective (meets it to the right)", f"'Frontier'!$L${below + 1}:$L${below + 2}",
         f"'Frontier'!$M${below + 1}:$M${below + 2}")]
    assert frontier_ws["I5"].value == "=IF(N(E5)>0,1/E5,\"\")"
    assert frontier_ws["H5"].value == "=IF(C5>0,D5/C5,\"\")"
    assert frontier_ws[f"L{below + 1}"].value == pytest.approx(1 / 0.05)
    cached = load_workbook(path, data_only=True)["Frontier"]
    for i, p in enumerate(result.points):
        r = 5 + i
        assert cached[f"A{r}"].value == p.configuration
        assert cached[f"B{r}"].value == p.concurrency
        assert cached[f"H{r}"].value == pytest.approx(p.output_tokens_per_s_per_gpu)
        assert cached[f"I{r}"].value == pytest.approx(p.tokens_per_s_per_user)
        assert cached[f"L{r}"].value is p.pareto
    pareto = sorted((p for p in result.points if p.pareto),
                    key=lambda p: p.tokens_per_s_per_user)
    assert [cached[f"A{below + 1 + k}"].value for k in range(n)] == pytest.approx(
        [p.tokens_per_s_per_user for p in pareto])


@pytest.mark.libreoffice
def test_frontier_sheet_formulas_recalculate_in_libreoffice(tmp_path: Path,
                                                             ws: Workspace) -> None:
    """LibreOffice's own results for the live cells equal the planner's."""
    from openpyxl import load_workbook

    from tests.libreoffice import recalculate

    result = _frontier(ws)
    again = load_workbook(recalculate(_xlsx(tmp_path), tmp_path), data_only=True)["Frontier"]
    for i, p in enumerate(result.points):
        r = 5 + i
        assert again[f"H{r}"].value == pytest.approx(p.output_tokens_per_s_per_gpu, rel=1e-12)
        assert again[f"I{r}"].value == pytest.approx(p.tokens_per_s_per_user, rel=1e-12)
        assert again[f"J{r}"].value == pytest.approx(p.cost_usd_per_million_output_tokens,
                                                     rel=1e-12)
        assert math.isfinite(again[f"J{r}"].value)


def test_ui_frontier_state_without_a_terminal(ws: Workspace) -> None:
    """The UI's frontier view: the library's points as text rows, the Pareto flags the
    library's, the cheapest table one row per level; concurrency in the fields is the axis;
    a bad value is the one-line error."""
    from planner.tui.state.frontier import frontier_view

    sc = ws.scenario(*SCENARIO)
    models = {m.name: m.spec for m in ws.models()}
    gpus = {g.name: g.spec for g in ws.gpus()}
    profiles = ws.calibration_figures()
    result = fr.frontier(_base(ws), [Variation("gpu", GPUS)], models, gpus,
                         profiles=profiles)
    view = frontier_view(sc, "gpu", "h100-sxm,b200", models, gpus, profiles)
    assert view.error == ""
    assert view.headers == fr.headers(result) and "TTFT p99 (ms)" in view.headers
    assert view.rows == [[fr.text_cells(p)[k] for k in fr.HEADERS] for p in result.points]
    assert view.pareto == [p.pareto for p in result.points] and any(view.pareto)
    assert len(view.cheapest) == len(result.cheapest)
    assert view.title.startswith(f"Frontier of {sc.name}: SLO TTFT p99 <= 1000 ms and TPOT "
                                 "<= 50 ms")
    axis = frontier_view(sc, "concurrency", "1,8,64", models, gpus, profiles)
    assert [row[:2] for row in axis.rows] == [["base", "1"], ["base", "8"], ["base", "64"]]
    bad = frontier_view(sc, "concurrency", "0,4", models, gpus, profiles)
    assert bad.rows == [] and bad.error.startswith("concurrency: must be an integer from 1")
    assert frontier_view(sc, "gpus", "4,8", models, gpus, profiles).error.startswith(
        "gpus: is tp * pp in a frontier")


@pytest.mark.slow
async def test_ui_sweep_shows_the_frontier_with_the_pareto_points_marked() -> None:
    """In the sweep (w), ctrl+f turns it into the frontier of the fields' configurations:
    each row of the table is a point, the Pareto ones end in the mark, as the library says;
    ctrl+f again is the sweep."""
    from textual.widgets import Input, Static

    from planner.tui.app import create_app
    from planner.tui.screens.views import SweepScreen
    from tests.tui.test_tui import ready, settle
    from tests.tui.test_verdict_tui import SIZE, select, text

    with Workspace.open() as ws:
        result = _frontier(ws, concurrency=fr.CONCURRENCY_GRID)
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        select(app, SCENARIO[1])
        await pilot.press("w")
        assert isinstance(app.screen, SweepScreen)
        screen = app.screen
        screen.query_one("#column", Input).value = "gpu"
        screen.query_one("#values", Input).value = "h100-sxm,b200"
        await pilot.press("ctrl+f")
        await settle(pilot)
        table = text(screen.query_one("#table", Static))
        rows = [line for line in table.splitlines() if line.startswith("│ gpu=")]
        assert len(rows) == len(result.points) == 22
        marked = [line.rstrip(" │").endswith(fr.PARETO_MARK) for line in rows]
        assert marked == [p.pareto for p in result.points]
        assert "TTFT p99 (ms)" in table and "tokens/s/user" in table
        cheapest = text(screen.query_one("#chart", Static))
        assert "Cheapest configuration meeting the SLO" in cheapest
        assert sum(line.startswith("│ ") for line in cheapest.splitlines()) == len(
            result.cheapest)
        await pilot.press("ctrl+f")
        await settle(pilot)
        assert not screen.frontier
        assert "Pareto" not in text(screen.query_one("#table", Static))


@pytest.mark.slow
def test_report_export_adds_the_frontier_sheet_and_imports_back_unchanged(
        tmp_path: Path, ws: Workspace) -> None:
    """``planner export --frontier`` writes the same sheet through the report's writer
    (build_workbook): its chart has a series per GPU plus the Pareto and TPOT lines, its
    cached values are the library's; importing the report changes nothing."""
    from openpyxl import load_workbook

    result = _frontier(ws, concurrency=fr.CONCURRENCY_GRID)
    path = tmp_path / "report.xlsx"
    code, out, err = run("export", "--fleet", "demo", "--out", str(path), "--frontier",
                         "/".join(SCENARIO) + ":gpu=h100-sxm,b200", "--json")
    assert code == 0, err
    assert "Frontier" in json.loads(out)["sheets"]
    sheet = load_workbook(path)["Frontier"]
    titles = [s.tx.v for s in sheet._charts[0].series]
    assert titles == ["gpu=h100-sxm", "gpu=b200", "Pareto-optimal",
                      "TPOT objective (meets it to the right)"]
    assert sheet._charts[0].series[1].xVal.numRef.f == "'Frontier'!$I$16:$I$26"
    cached = load_workbook(path, data_only=True)["Frontier"]
    assert [cached[f"H{5 + i}"].value for i in range(22)] == pytest.approx(
        [p.output_tokens_per_s_per_gpu for p in result.points])
    code, out, err = run("import", str(path), "--dry-run")
    assert code == 0, err
    assert out.strip() == "no changes"


def test_a_training_scenario_has_no_frontier(tmp_path: Path) -> None:
    code, _, err = run("sweep", "demo/llama2-7b-lora-r8-qv", "--frontier")
    assert code == 2
    assert "SCENARIO: must be an inference scenario" in " ".join(err.split())
    out = tmp_path / "x.xlsx"
    code, _, err = run("export", "--out", str(out), "--frontier", "demo/llama2-7b-lora-r8-qv")
    assert code == 2 and "--frontier: must be an inference scenario" in " ".join(err.split())
    assert not out.exists()
