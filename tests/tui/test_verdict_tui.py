"""Issue 24 in the terminal UI, through Pilot: the details pane and the grid show the verdict
every text screen shows (:mod:`planner.compute.verdict`), saturated rows say so and sort last by
cost, the capacity solve is the CLI's, the details pane hides below 120 columns and on ``v``,
and ``:`` goes to a column by name.

The task of the issue: Llama-3-70B at 2,000 requests/min, 1,000 + 250 tokens, p50 TTFT under
1 s, TPOT under 50 ms, vLLM, typed as 4 × H100 TP 4 (saturated there). Figures are read from
the model's outputs, never pinned.
"""

from __future__ import annotations

import json
import os
from typing import Any

from click.testing import CliRunner
from textual.widgets import DataTable, Static

from planner.cli import cli
from planner.compute import capacity, verdict
from planner.service import Workspace
from planner.tui.app import create_app
from planner.tui.screens.column_jump import ColumnJump, matches
from planner.tui.screens.solve_view import SolveScreen
from planner.tui.state import cells
from tests.tui.test_tui import ready, settle

os.environ["TEXTUAL_ANIMATIONS"] = "none"
SIZE = (160, 48)
TASK = {"gpus": 4, "tp": 4, "engine": "vllm", "target_requests_per_s": 2000 / 60,
        "prompt_tokens": 1000, "output_tokens": 250, "slo_ttft_s": 1.0,
        "slo_percentile": "50", "slo_tpot_s": 0.05}


def add_task(name: str = "task70b", **changes: Any) -> None:
    with Workspace.open() as ws:
        ws.new_scenario("demo", name, model="llama-3-70b", gpu="h100-sxm",
                        **{**TASK, **changes})


def text(widget: Any) -> str:
    from rich.console import Console

    console = Console(width=300, color_system=None)
    with console.capture() as captured:
        console.print(widget.content if hasattr(widget, "content") else widget)
    return captured.get()


def select(app: Any, name: str) -> int:
    grid = app.query_one("#grid", DataTable)
    ids = [int(k.value) for k in grid.rows]
    sid = next(i for i in ids if app.scenarios[i].name == name)
    grid.move_cursor(row=ids.index(sid), column=0)
    return sid


async def test_details_pane_and_grid_lead_with_the_same_verdict() -> None:
    """Issue 24, "Why" 1 and 3 in the UI: the details pane starts with the verdict lines
    ``estimate`` prints (one function, :func:`verdict.rows`), "saturated" in place of the
    capped TTFT, the engine's memory accounting only, and the grid's pinned verdict cells
    say the same."""
    add_task()
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = select(app, "task70b")
        await settle(pilot)
        sc, out = app.scenarios[sid], app.outputs[sid]
        pane = text(app.query_one("#details", Static))
        for label, shown in verdict.rows(out, sc.inputs):
            assert label in pane and shown.split(",")[0] in pane, (label, shown)
        assert pane.index("Verdict") < pane.index("Memory per GPU") < pane.index(
            "Idle-server bounds")
        assert "saturated on 4 GPUs" in pane and "277.78 h" not in pane
        assert "KV pool" in pane and "reserve" not in pane  # vLLM's accounting only
        grid = app.query_one("#grid", DataTable)
        assert str(grid.get_cell(str(sid), "ttft_p50_s")) == verdict.SATURATED
        assert str(grid.get_cell(str(sid), "meets_slo")) == "no"
        assert str(grid.get_cell(str(sid), "gpus_needed")) == f"{out['gpus_needed']:,} GPUs"


async def test_saturated_and_not_fitting_rows_sort_last_by_cost() -> None:
    """Issue 24, "Why" 3: sorting by a cost column ranks deployments that can serve; a
    saturated row (and one that does not fit) comes after them, whatever its cost."""
    add_task("cheap-saturated", gpus=1, tp=1, weight_dtype="fp8")
    add_task("sized", gpus=16)
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", DataTable)
        keys = [k for k, _h, _r in cells.grid_columns("inference")]
        grid.move_cursor(row=0, column=keys.index("cost_usd_per_month"))
        await pilot.press("s")
        await settle(pilot)
        order = [app.scenarios[int(k.value)].name for k in grid.rows]
        saturated = app.outputs[next(i for i, s in app.scenarios.items()
                                     if s.name == "cheap-saturated")]
        assert verdict.is_saturated(saturated)
        usable = [n for n in order if verdict.usable(app.outputs[next(
            i for i, s in app.scenarios.items() if s.name == n)])]
        assert order[:len(usable)] == usable and "cheap-saturated" not in usable
        assert order.index("sized") < order.index("cheap-saturated")


async def test_capacity_solve_in_the_ui_is_the_cli_solve_and_adds_options() -> None:
    """Issue 24, "Why" 2: the first solve preset answers the capacity question with the
    answer ``planner solve --minimize cost_usd_per_month --subject-to meets_slo`` gives (the
    same --vary texts, read from the screen's own command line), lists the answers with
    their verdict figures, and "Add as options" writes them as options of the scenario, not
    chosen."""
    add_task()
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        select(app, "task70b")
        await pilot.press("o")
        assert isinstance(app.screen, SolveScreen)
        await pilot.press("tab", *"nvidia", "tab", *"0.9", "enter")  # filter, cap, solve
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SolveScreen) and screen.answers, text(
            screen.query_one("#answer", Static))
        query = screen.command
        assert "--subject-to \"meets_slo and utilization <= 0.9\"" in query
        vary = [part.split(" ", 1)[0] for part in query.split("--vary ")[1:]]
        result = CliRunner().invoke(cli, ["solve", "demo/task70b", "--minimize",
                                          "cost_usd_per_month", "--subject-to",
                                          "meets_slo and utilization <= 0.9",
                                          *(x for v in vary for x in ("--vary", v)),
                                          "--json"])
        assert result.exit_code == 0, result.output
        best = json.loads(result.stdout)["values"]
        first = screen.answers[0]
        assert {k: best[k] for k in first.changes} == first.changes
        shown = text(screen.query_one("#answer", Static))
        assert first.changes["gpu"] in shown and "meets_slo" in shown
        assert all(a.outputs["utilization"] <= 0.9 for a in screen.answers)
        count = len(screen.answers)
        screen.query_one("#add-options").press()
        await settle(pilot)
        await settle(pilot)
    with Workspace.open() as ws:
        options = [s for s in ws.scenarios("demo") if s.option_of == "task70b"]
        assert len(options) == count and not any(s.chosen for s in options)
        assert {(s.gpu, s.inputs["gpus"], s.inputs["tp"]) for s in options} == {
            (a.changes["gpu"], a.changes["gpus"], a.changes["tp"]) for a in screen.answers}


async def test_old_presets_judge_the_slo_at_the_load_not_the_idle_ttft() -> None:
    """Issue 24, "Why" 2: "cheapest GPU type" answers a GPU that meets the SLO at the target
    rate at this TP and count (``meets_slo``), as ``planner solve --vary gpu=*`` does."""
    add_task("task-tp8", gpus=16, tp=4)
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        select(app, "task-tp8")
        await pilot.press("o")
        await pilot.press("down", "down", "down", "down", "enter")
        await settle(pilot)
        answer = app.screen.changes
    result = CliRunner().invoke(cli, ["solve", "demo/task-tp8", "--minimize",
                                      "cost_usd_per_hour", "--subject-to", "meets_slo",
                                      "--vary", "gpu=*", "--json"])
    best = json.loads(result.stdout)["values"]
    assert answer == {"gpu": best["gpu"]} and best["meets_slo"]


async def test_details_pane_hides_below_120_columns_and_v_cycles_it() -> None:
    """Issue 24, "Why" 8: at 80 × 24 the grid has the screen (pinned verdicts in view); ``v``
    cycles the pane wide → narrow → hidden; at 160 columns it starts wide."""
    app = create_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        details = app.query_one("#details", Static)
        assert not details.display or details.has_class("hidden")
        grid = app.query_one("#grid", DataTable)
        assert grid.size.width >= 78
        await pilot.press("v")  # hidden → wide
        await pilot.pause()
        assert app.sheet.details_mode() == "wide" and details.display
        await pilot.press("v")
        await pilot.pause()
        assert app.sheet.details_mode() == "narrow" and details.outer_size.width == 44
        await pilot.press("v")
        await pilot.pause()
        assert app.sheet.details_mode() == "hidden"
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.sheet.details_mode() == "wide"


async def test_go_to_column_by_name() -> None:
    """Issue 24, "Why" 8: ``:`` opens a filterable list of the grid's columns; typing "slo
    ttft" and Enter puts the cursor on ``slo_ttft_s``, forty columns from the name."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("colon")
        assert isinstance(app.screen, ColumnJump)
        await pilot.press(*"slo ttft", "enter")
        await settle(pilot)
        grid = app.query_one("#grid", DataTable)
        keys = [c.key.value for c in grid.ordered_columns]
        assert keys[grid.cursor_column] == "slo_ttft_s"
        assert keys.index("slo_ttft_s") > 30
        await pilot.press("ctrl+g", *"zzz-nothing", "enter")  # no match: nothing moves
        await settle(pilot)
        assert keys[grid.cursor_column] == "slo_ttft_s"


def test_column_matches_every_word_in_key_or_label() -> None:
    choices = [("slo_ttft_s", "TTFT objective [s]"), ("ttft_p99_s", "TTFT p99 under load [s]"),
               ("engine", "Engine")]
    assert matches(choices, "slo ttft") == [choices[0]]
    assert matches(choices, "TTFT") == choices[:2]
    assert matches(choices, "p99 load") == [choices[1]]
    assert matches(choices, "") == choices


def test_capacity_preset_names_its_cli_command() -> None:
    with Workspace.open() as ws:
        gpus = ws.gpu_specs()
    base = {"model": "llama-3-70b", "gpu": "h100-sxm", **TASK}
    query = capacity.capacity_query(base, gpus)
    assert query.command("demo/x").startswith(
        'planner solve demo/x --minimize cost_usd_per_month --subject-to "meets_slo" '
        "--vary gpu=* --vary tp=1,2,4,8")


async def test_grid_marks_gpus_whose_efficiencies_are_defaults() -> None:
    """Issue 24, "Why" 7: the grid's GPU cell of a scenario on an unmeasured part reads
    ``NAME *``; a measured part's is its name."""
    with Workspace.open() as ws:
        specs = ws.gpu_specs()
    unmeasured = next(n for n, s in sorted(specs.items()) if not verdict.gpu_measured(s))
    with Workspace.open() as ws:
        ws.new_scenario("demo", "on-unmeasured", model="llama-3-8b", gpu=unmeasured)
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", DataTable)
        sid = select(app, "on-unmeasured")
        assert str(grid.get_cell(str(sid), "gpu")) == f"{unmeasured} *"
        other = select(app, "llama3-8b-request-1024+128")
        assert str(grid.get_cell(str(other), "gpu")) == "h100-sxm"


async def test_ui_sweep_of_a_scenario_with_a_verdict_shows_the_verdict_and_states() -> None:
    """Issue 24, "Why" 3 (the UI's sweep): a scenario with an engine, a target and an SLO is
    swept on the verdict's figures; 4 GPUs read "saturated", 16 GPUs the TTFT an estimate
    at 16 GPUs gives."""
    from planner import service
    from planner.tui.screens.views import SweepScreen

    add_task()
    with Workspace.open() as ws:
        sc = ws.scenario("demo", "task70b")
        sized = service.estimate(ws.model(sc.model).spec, ws.gpu(sc.gpu).spec,
                                 {**TASK, "gpus": 16})
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        select(app, "task70b")
        grid = app.query_one("#grid", DataTable)
        keys = [c.key.value for c in grid.ordered_columns]
        grid.move_cursor(column=keys.index("gpus"))
        await pilot.press("w")
        assert isinstance(app.screen, SweepScreen)
        await pilot.press("ctrl+u", *"4,16", "enter")
        await settle(pilot)
        table = text(app.screen.query_one("#table", Static))
        four = next(line for line in table.splitlines() if "│ 4 " in line or " 4 │" in line)
        sixteen = next(line for line in table.splitlines() if " 16 " in line)
        assert "saturated" in four and "no" in four
        assert verdict.figure("ttft_p50_s", sized, sized["inputs"]) in sixteen
        assert "saturated" not in sixteen and "yes" in sixteen
