"""The terminal UI through Textual's Pilot: every action, asserting on the database and on
what the screen shows. The database is the seeded demo copy every test gets."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable, Static

from planner.cli import cli
from planner.compute import verdict
from planner.service import Workspace
from planner.tui.app import PlannerApp, create_app
from planner.tui.screens.dialogs import EditDialog, TextScreen
from planner.tui.screens.views import SolveScreen, SweepScreen
from planner.tui.state import cells
from planner.tui.widgets.grid import SheetTable
from tests.helpers import until

os.environ["TEXTUAL_ANIMATIONS"] = "none"  # deterministic snapshots: no tab underline slide
SIZE = (160, 48)
COLUMNS = [k for k, _h, _r in cells.grid_columns("inference")]


async def ready(pilot: Any) -> None:
    app = pilot.app
    while not app.loaded:
        await pilot.pause(0.02)
    await app.workers.wait_for_complete()
    await pilot.pause(0.05)


async def steady(pilot: Any) -> None:
    """Let every refresh and animation finish (for snapshots)."""
    for _ in range(3):
        await pilot.pause(0.1)
        await pilot.wait_for_scheduled_animations()


async def settle(pilot: Any) -> None:
    await pilot.pause(0.05)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.05)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.05)


async def caught_up(pilot: Any) -> None:
    """Wait until the sheet shows every row of its fleet at the version the database holds
    (what its poll, every ``POLL_S``, brings about), however long that takes on a loaded
    machine, then :func:`settle`."""
    sheet = pilot.app.sheet
    with Workspace.open() as ws:
        await until(pilot, lambda: ws.scenario_versions(sheet.fleet) == {
            i: sc.version for i, sc in sheet.scenarios.items()},
            "the sheet's poll to show the rows the database holds")
    await settle(pilot)


def goto(app: PlannerApp, name: str, column: str) -> int:
    grid = app.query_one("#grid", DataTable)
    ids = [int(k.value) for k in grid.rows]
    sid = next(i for i in ids if app.scenarios[i].name == name)
    grid.move_cursor(row=ids.index(sid), column=COLUMNS.index(column))
    return sid


def db() -> Workspace:
    return Workspace.open()


def text(widget: Static) -> str:
    """What a Static shows, as plain text."""
    from rich.console import Console

    console = Console(width=300, color_system=None)
    with console.capture() as captured:
        console.print(widget.content)
    return captured.get()


def bar(app: PlannerApp) -> str:
    """What the formula bar shows."""
    return text(app.query_one("#bar", Static))


def shown(app: PlannerApp, sid: int, column: str) -> str:
    """A grid cell's value; when the cell is in view, also checks that the grid draws it
    (a stale render cache would show the old value while the data holds the new one)."""
    grid = app.query_one("#grid", SheetTable)
    value = str(grid.get_cell(str(sid), column))
    drawn = grid.drawn_cell(str(sid), column)
    assert drawn is None or (drawn and value.strip().startswith(drawn)), (value, drawn)
    return value


def drawn(app: PlannerApp, sid: int, column: str) -> str | None:
    """What the grid draws for a cell (None when it is out of view)."""
    return app.query_one("#grid", SheetTable).drawn_cell(str(sid), column)


async def test_edit_a_cell_recomputes_and_saves() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.pause()
        assert "llama3-8b-24gib-6x8k · batch  6 sequences" in bar(app)
        await pilot.press("enter")  # edits in the formula bar; the grid keeps the focus
        assert app.editing is not None and app.focused is app.query_one("#grid")
        assert "✎ llama3-8b-24gib-6x8k · batch [sequences] = 6" in bar(app)
        await pilot.press("ctrl+u", "7")
        assert "= 7" in bar(app) and "Enter accepts" in bar(app)
        await pilot.press("enter")
        assert app.editing is None
        assert drawn(app, sid, "batch") == "7"  # drawn at once, before the save
        await settle(pilot)
        assert shown(app, sid, "batch") == "7"
        assert shown(app, sid, "fits") == "no"
        assert shown(app, sid, "name") == "✗ llama3-8b-24gib-6x8k"
        details = text(app.query_one("#details", Static))
        assert "short" in details and "per GPU" in details
    with db() as ws:
        sc = ws.scenario("demo", "llama3-8b-24gib-6x8k")
        assert (sc.inputs["batch"], sc.version) == (7, 2)
        assert [c.field for c in ws.history("demo", sc.name)] == ["batch"]


async def test_paste_into_the_cell_being_edited() -> None:
    from textual import events

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "prompt_tokens")
        await pilot.press("enter")
        app.post_message(events.Paste("4096\n"))  # as the driver delivers a paste
        await pilot.pause()
        assert "= 4096" in bar(app)
        await pilot.press("enter")
        await settle(pilot)
        assert shown(app, sid, "prompt_tokens") == "4,096"
    with db() as ws:
        assert ws.scenario("demo", "llama3-8b-24gib-6x8k").inputs["prompt_tokens"] == 4096


async def test_sheet_actions_wait_while_a_dialog_is_open() -> None:
    """Keys typed ahead of a dialog (Enter, a name, Enter) reach the app's bindings until the
    dialog's field has the focus; the sheet's actions refuse to run then, so no second dialog
    opens over the first."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        goto(app, "llama3-8b-24gib-6x8k", "name")
        app.action_rename()  # the dialog is pushed; nothing has the focus yet
        assert len(app.screen_stack) == 2
        assert await app.run_action("edit") is False and await app.run_action("new") is False
        await pilot.pause()
        assert len(app.screen_stack) == 2 and isinstance(app.screen, EditDialog)
        assert app.check_action("quit", ()) is True
        await pilot.press("escape")
        assert len(app.screen_stack) == 1 and app.check_action("new", ()) is True


async def test_grid_draws_the_cells_in_view_after_scrolling() -> None:
    """Only the columns in view are rendered; scrolling sideways and back redraws them."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", DataTable)

        def line(sid: int) -> str:  # the row as drawn, fixed name column included
            y = grid.header_height + grid.get_row_index(str(sid)) - round(grid.scroll_y)
            return grid.render_line(y).text

        sid = goto(app, "mixtral-8x7b-2xh100-tp2", "cost_usd_per_million_output_tokens")
        await pilot.pause(0.1)
        assert grid.scroll_x > 0
        cost = cells.format_value("cost_usd_per_million_output_tokens",
                                   app.outputs[sid]["cost_usd_per_million_output_tokens"])
        assert "mixtral-8x7b-2xh100-tp2" in line(sid) and cost in line(sid)
        assert "h100-sxm" not in line(sid)  # the GPU column is scrolled out of view
        grid.scroll_to(x=0, animate=False)  # scrolled back, the cursor where it was
        await pilot.pause(0.1)
        # "fits" is pinned, in view; the GPU column is back
        assert grid.scroll_x == 0 and "yes" in line(sid) and cost not in line(sid)


async def test_invalid_value_shows_the_reason_and_changes_nothing() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("e", "ctrl+u", "0")  # checked as you type
        assert "batch: must be an integer from 1 to 10,000,000" in bar(app)
        await pilot.press("enter")
        assert app.editing is not None  # still editing, with the reason shown
        assert "batch: must be an integer from 1 to 10,000,000" in bar(app)
        await pilot.press("escape")
        assert app.editing is None and "Enter edits" in bar(app)
        goto(app, "llama3-8b-24gib-6x8k", "tp")
        await pilot.press("e", "ctrl+u", "3", "enter")  # the whole scenario is checked
        assert "tp: must divide the 32 attention heads" in bar(app)
        await pilot.press("escape")
        goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("1", "2")  # a digit starts editing and replaces the value
        assert app.editing is not None and "= 12" in bar(app)
        goto(app, "llama3-8b-24gib-6x8k", "tp")  # leaving the cell drops the edit
        await pilot.pause()
        assert app.editing is None
        await settle(pilot)
        assert shown(app, sid, "batch") == "6"
    with db() as ws:
        assert ws.scenario("demo", "llama3-8b-24gib-6x8k").version == 1


async def test_choice_editor_and_read_only_outputs() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "gpu")
        await pilot.press("enter")  # the choices show in the formula bar, current highlighted
        edit = app.editing
        assert edit is not None and edit.choices is not None and len(edit.choices) == 27
        assert edit.shown[edit.index] == "rtx-4090"
        assert "h100-sxm" in bar(app) and "← → choose" in bar(app)
        await pilot.press("z", "z")  # a filter that matches nothing
        assert "no choice matches" in bar(app)
        await pilot.press("enter")
        assert app.editing is not None and "gpu: must be one of a10, a100-40gb" in bar(app)
        await pilot.press("backspace", "backspace", "h", "1")  # the three H100s
        assert app.editing.shown == ["h100-nvl", "h100-pcie", "h100-sxm"]
        start = app.editing.index
        await pilot.press("right", "right", "right")  # wraps round to where it started
        assert app.editing.index == start
        await pilot.press("right")
        assert app.editing.index == (start + 1) % 3
        await pilot.press("ctrl+u", *"h200", "enter")
        assert app.editing is None
        await settle(pilot)
        assert shown(app, sid, "gpu") == "h200" and shown(app, sid, "fits") == "yes"
        goto(app, "llama3-8b-24gib-6x8k", "weight_dtype")  # a dtype: the same editor
        await pilot.press("enter", "right", "right", "escape")  # looked, changed nothing
        assert app.editing is None and shown(app, sid, "weight_dtype") == "auto"
        await pilot.press("e", "i", "n", "t", "4", "enter")
        await settle(pilot)
        assert shown(app, sid, "weight_dtype") == "int4"
        goto(app, "llama3-8b-24gib-6x8k", "ttft_s")
        await pilot.press("enter")
        assert not isinstance(app.screen, EditDialog)
        await pilot.press("x")
        assert isinstance(app.screen, TextScreen)
        assert "= max(ttft_compute_s, ttft_memory_s)" in text(
            app.screen.query_one("#body", Static))
    with db() as ws:
        sc = ws.scenario("demo", "llama3-8b-24gib-6x8k")
        assert (sc.gpu, sc.inputs["weight_dtype"], sc.version) == ("h200", "int4", 3)


async def test_new_duplicate_rename_delete() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        goto(app, "llama3-8b-request-1024+128", "batch")
        await pilot.press("n")
        await pilot.press(*"chat-bot", "enter")
        await settle(pilot)
        await pilot.press("d", "ctrl+u", *"chat-bot-b", "enter")
        await settle(pilot)
        await pilot.press("r", "ctrl+u", *"chat-bot-c", "enter")
        await settle(pilot)
        names = {s.name for s in app.scenarios.values()}
        assert {"chat-bot", "chat-bot-c"} <= names and "chat-bot-b" not in names
        goto(app, "chat-bot", "batch")
        await pilot.press("delete", "y")
        await settle(pilot)
        assert "chat-bot" not in {s.name for s in app.scenarios.values()}
    with db() as ws:
        names = {s.name for s in ws.scenarios("demo")}
        assert "chat-bot-c" in names and "chat-bot" not in names
        assert ws.scenario("demo", "chat-bot-c").model == "llama-3-8b"


async def test_undo_redo_sort_filter() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("enter", "ctrl+u", "2", "enter")
        await settle(pilot)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert shown(app, sid, "batch") == "6"
        with db() as ws:
            assert ws.scenario("demo", "llama3-8b-24gib-6x8k").inputs["batch"] == 6
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert shown(app, sid, "batch") == "2"
        goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("s")
        grid = app.query_one("#grid", DataTable)
        batches = [app.scenarios[int(k.value)].inputs["batch"] for k in grid.rows]
        assert batches == sorted(batches)
        await pilot.press("s")
        batches = [app.scenarios[int(k.value)].inputs["batch"] for k in grid.rows]
        assert batches == sorted(batches, reverse=True)
        await pilot.press("slash", *"llama3")
        await pilot.pause()
        assert grid.row_count == 5  # two llama3-8b rows and the llama3-70b option group
        await pilot.press("escape")
        await pilot.pause()
        assert grid.row_count == 8


async def test_quick_edits_of_one_row_are_all_saved_in_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A second edit made while the first is still being saved is neither refused as a
    conflict nor overtaken: both are written, in order, and the row shows the last."""
    slow = Workspace.set_scenario

    def set_scenario(self: Workspace, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.2)  # a slow database: the next edit arrives before this save ends
        return slow(self, *args, **kwargs)

    monkeypatch.setattr(Workspace, "set_scenario", set_scenario)
    app = create_app()
    notes: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("enter", "ctrl+u", "2", "enter")
        await pilot.press("enter", "ctrl+u", "3", "enter")
        goto(app, "llama3-8b-24gib-6x8k", "gpu")
        await pilot.press("enter", *"h200", "enter")
        assert shown(app, sid, "batch") == "3" and shown(app, sid, "gpu") == "h200"
        await settle(pilot)
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        assert shown(app, sid, "batch") == "3" and shown(app, sid, "gpu") == "h200"
    assert notes == []  # no "changed elsewhere"
    with db() as ws:
        sc = ws.scenario("demo", "llama3-8b-24gib-6x8k")
        assert (sc.inputs["batch"], sc.gpu, sc.version) == (3, "h200", 4)
        assert [c.field for c in ws.history("demo", sc.name)] == ["batch", "batch", "gpu"]


async def test_fleet_objects_are_frozen_and_cyclic_garbage_is_still_freed() -> None:
    """The loaded fleet is kept out of the cyclic collector's way (gc.freeze), and a reload
    collects first, so garbage that existed at the last freeze is not kept for good."""
    import gc
    import weakref

    class Node:
        pass

    from planner.tui.state import gc_policy

    normal = gc.get_threshold()
    app = create_app()
    assert gc.get_threshold() == gc_policy.LOADING_THRESHOLDS  # while the fleet loads
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert gc.get_freeze_count() > 0 and gc.get_threshold() == normal
        node = Node()
        node.self = node  # type: ignore[attr-defined]  # a cycle: only the collector frees it
        alive = weakref.ref(node)
        del node
        gc.freeze()  # as if it had been frozen with the fleet
        app.load_fleet(app.fleet)
        await settle(pilot)
        await pilot.pause(0.2)
        assert alive() is None and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # the app hands everything back when it closes


async def test_a_row_action_holds_collection_until_its_frame_and_a_failed_one_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Automatic garbage collection is off from the key that confirms a row action until
    the frame showing its row, then on again; an action whose frame never comes (a name
    taken) turns it on again within gc_policy.HOLD_S."""
    import gc

    from planner.tui.state import gc_policy

    holds: list[int] = []
    hold = gc_policy.hold

    def counted_hold() -> None:
        holds.append(1)
        hold()

    monkeypatch.setattr(gc_policy, "hold", counted_hold)
    monkeypatch.setattr(gc_policy, "HOLD_S", 20.0)  # the frame comes first, however loaded
    app = create_app()
    held: list[bool] = []
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert gc.isenabled()
        original = app.sheet._redraw_rows

        def seen(*args: Any) -> None:  # collection while the row is put in place
            held.append(gc.isenabled())
            original(*args)

        app.sheet._redraw_rows = seen  # type: ignore[method-assign]
        goto(app, "llama3-8b-request-1024+128", "batch")
        await pilot.press("n", *"held-row", "enter")
        await until(pilot, lambda: held and gc.isenabled(), "the new row's frame")
        assert held == [False] and "held-row" in {s.name for s in app.scenarios.values()}
        assert len(holds) == 1
        monkeypatch.setattr(gc_policy, "HOLD_S", 0.5)
        await pilot.press("n", *"held-row", "enter")  # taken: an error, no row
        await until(pilot, lambda: len(holds) == 2, "the second action's hold")
        await until(pilot, gc.isenabled, "the hold's time limit", 10 * gc_policy.HOLD_S)
        assert held == [False]
    gc_policy.hold()
    gc_policy.stopped()  # a closing app turns it back on too
    assert gc.isenabled()
    gc.disable()
    try:  # off already (an embedding program): left off
        gc_policy.hold()
        gc_policy.resume()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_undo_survives_a_restart() -> None:
    """Undo is the database's change log, not the UI's memory."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("enter", "ctrl+u", "3", "enter")
        await settle(pilot)
    app = create_app()  # a new session on the same database
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        assert shown(app, sid, "batch") == "3"
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert shown(app, sid, "batch") == "6"
    with db() as ws:
        assert ws.scenario("demo", "llama3-8b-24gib-6x8k").inputs["batch"] == 6


async def test_fleet_switch_and_create() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f", "tab", *"what-if", "enter")
        await settle(pilot)
        assert app.fleet == "what-if" and app.query_one("#grid", DataTable).row_count == 0
        await pilot.press("f")
        await pilot.press("enter")  # the highlighted fleet (what-if); then switch to demo
        await settle(pilot)
        await pilot.press("f", "up", "enter")
        await settle(pilot)
        assert app.fleet == "demo" and app.query_one("#grid", DataTable).row_count == 8
    with db() as ws:
        assert {f.name for f in ws.fleets()} == {"demo", "what-if"}


async def test_compare_sweep_solve() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("space")
        goto(app, "llama3-8b-request-1024+128", "batch")
        await pilot.press("space", "c")
        assert isinstance(app.screen, TextScreen)
        body = text(app.screen.query_one("#body", Static))
        assert "rtx-4090" in body and "h100-sxm" in body and "%" in body
        await pilot.press("escape")
        goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("w")
        assert isinstance(app.screen, SweepScreen)
        await pilot.pause()
        table = text(app.screen.query_one("#table", Static))
        assert "256" in table and "throughput_tokens_per_s" in table
        assert "█" in text(app.screen.query_one("#chart", Static))
        await pilot.press("escape")
        await pilot.press("o")
        assert isinstance(app.screen, SolveScreen)
        await pilot.press("down", "down", "enter")   # largest batch that fits
        answer = text(app.screen.query_one("#answer", Static))
        assert "batch = 6 sequences" in answer
        app.screen.query_one("#apply").press()
        await settle(pilot)
    with db() as ws:
        assert ws.scenario("demo", "llama3-8b-24gib-6x8k").inputs["batch"] == 6


@pytest.mark.slow
async def test_export_with_progress_and_errors_as_notifications(tmp_path: Path) -> None:
    app = create_app()
    target = tmp_path / "fleet.xlsx"
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+e", "ctrl+u", *str(target), "enter")
        await settle(pilot)
        assert target.exists()
        assert str(target) in text(app.query_one("#status", Static))
        await pilot.press("ctrl+e", "ctrl+u", *"/nonexistent/x.xlsx", "enter")
        await settle(pilot)
        assert any("does not exist" in n.message for n in app._notifications)
        assert app.is_running


async def test_models_and_gpus_tabs(tmp_path: Path) -> None:
    config = tmp_path / "tiny-qwen3" / "config.json"
    config.parent.mkdir()
    config.write_text((Path(__file__).parents[1] / "fixtures/hf_configs/qwen3-qk-norm.json")
                      .read_text())
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("i", *str(config.parent), "enter")
        await settle(pilot)
        models = app.query_one("#models-table", DataTable)
        assert "tiny-qwen3" in [k.value for k in models.rows]
        app.query_one("#tabs").active = "gpus"
        await pilot.pause()
        gpus = app.query_one("#gpus-table", DataTable)
        gpus.focus()
        row = [k.value for k in gpus.rows].index("h100-sxm")
        gpus.move_cursor(row=row, column=6)  # price
        await pilot.press("enter", "ctrl+u", *"4", "enter")
        await settle(pilot)
        assert "4.00" in str(gpus.get_cell("h100-sxm", "price_usd_per_hour"))
        sid = next(i for i, s in app.scenarios.items()
                   if s.name == "llama3-8b-request-1024+128")
        assert app.outputs[sid]["cost_usd_per_hour"] == 4.0
    with db() as ws:
        assert ws.gpu("h100-sxm").spec.price_usd_per_hour == 4.0
        assert ws.model("tiny-qwen3").params_total == 366_400


async def test_another_clients_change_is_not_overwritten() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        app.sheet.poll_timer.pause()  # the row stays stale until the edit is saved
        with db() as other:  # another terminal edits the same scenario
            other.set_scenario("demo", "llama3-8b-24gib-6x8k", {"batch": 5, "notes": "theirs"})
        await pilot.press("enter", "ctrl+u", "2", "enter")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("changed by someone else" in m and "batch = 5" in m and "notes = 'theirs'"
                   in m for m in messages)
        assert shown(app, sid, "batch") == "5"
    with db() as ws:
        sc = ws.scenario("demo", "llama3-8b-24gib-6x8k")
        assert (sc.inputs["batch"], sc.notes) == (5, "theirs")


async def test_help_palette_theme() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, TextScreen)
        body = text(app.screen.query_one("#body", Static))
        for phrase in ("edit the cell", "undo", "export this fleet", "command palette"):
            assert phrase in body
        await pilot.press("escape")
        theme = app.theme
        await pilot.press("ctrl+t")
        assert app.theme != theme
        commands = [c.title for c in app.get_system_commands(app.screen)]
        for title in ("Edit", "New", "Undo", "Redo", "Sort", "Filter", "Fleet", "Compare",
                      "Sweep", "Solve", "Export", "Help", "Delete", "Duplicate", "Rename"):
            assert title in commands, title


@pytest.mark.parametrize("size", [SIZE])
def test_main_screen_snapshot(snap_compare: Any, size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        goto(pilot.app, "llama3-8b-24gib-6x8k", "name")  # no horizontal scroll
        await steady(pilot)

    assert snap_compare(create_app(), terminal_size=size, run_before=run_before)


def test_edit_dialog_snapshot(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        await steady(pilot)  # let the grid size its columns before a dialog covers it
        goto(pilot.app, "llama3-8b-24gib-6x8k", "name")  # the rename editor
        await pilot.press("enter", "ctrl+u")
        from textual.widgets import Input

        pilot.app.screen.query_one(Input).cursor_blink = False
        await steady(pilot)

    assert snap_compare(create_app(), terminal_size=SIZE, run_before=run_before)


def test_formula_bar_editor_snapshot(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        await steady(pilot)
        goto(pilot.app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("e", "ctrl+u", "0")  # an invalid value: the reason shows in red
        await steady(pilot)

    assert snap_compare(create_app(), terminal_size=SIZE, run_before=run_before)


def test_choice_editor_snapshot(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        await steady(pilot)
        goto(pilot.app, "llama3-8b-24gib-6x8k", "gpu")
        await pilot.press("enter", "h")  # the GPUs with an h, rtx-4090 no longer shown
        await steady(pilot)

    assert snap_compare(create_app(), terminal_size=SIZE, run_before=run_before)


def test_help_snapshot(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        await steady(pilot)
        await pilot.press("question_mark")
        await steady(pilot)

    assert snap_compare(create_app(), terminal_size=SIZE, run_before=run_before)


def test_gpus_tab_snapshot(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        pilot.app.query_one("#tabs").active = "gpus"
        await steady(pilot)

    assert snap_compare(create_app(), terminal_size=SIZE, run_before=run_before)


async def test_an_edit_is_parsed_and_evaluated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Typing 7 on a number cell and pressing Enter, through the save: the value is parsed by
    its column once and the row evaluated once (the check made while typing is reused on
    Enter, and the save writes the checked values and returns those outputs)."""
    from planner.compute.graph import FormulaGraph
    from planner.compute.inputs import InputColumn

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.pause()
        calls = {"parse": 0, "compute": 0}
        parse, compute = InputColumn.parse, FormulaGraph.compute

        def counting_parse(self: InputColumn, raw: Any) -> Any:
            calls["parse"] += 1
            return parse(self, raw)

        def counting_compute(self: FormulaGraph, *args: Any, **kwargs: Any) -> Any:
            calls["compute"] += 1
            return compute(self, *args, **kwargs)

        monkeypatch.setattr(InputColumn, "parse", counting_parse)
        monkeypatch.setattr(FormulaGraph, "compute", counting_compute)
        await pilot.press("7", "enter")
        await settle(pilot)
        assert calls == {"parse": 1, "compute": 1}
        assert shown(app, sid, "batch") == "7"
        assert app.scenarios[sid].version == 2
    with db() as ws:
        assert ws.scenario("demo", "llama3-8b-24gib-6x8k").inputs["batch"] == 7


async def test_a_target_rate_typed_per_minute() -> None:
    """The formula bar takes a rate as ``2000/min`` and stores it per second."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "mixtral-8x7b-2xh100-tp2", "target_requests_per_s")
        await pilot.pause()
        await pilot.press("enter", "ctrl+u", *"2000/min", "enter")
        await settle(pilot)
        assert app.scenarios[sid].inputs["target_requests_per_s"] == pytest.approx(2000 / 60)


async def test_solve_apply_is_one_validated_change_and_one_undo() -> None:
    """Issue 16 #21: the answer (gpus, tp) is applied as one change checked as a whole: a GPU
    count is not refused against the row's old tp=8, and one undo restores both fields.
    Issue 24: the preset judges the SLO at the target rate (``meets_slo``), so its answer is
    what ``planner solve --minimize gpus --subject-to meets_slo`` gives, read here from the
    CLI's JSON, not a roofline count at batch 1."""
    with db() as ws:
        ws.set_scenario("demo", "llama3-8b-request-1024+128",
                        {"gpus": 8, "tp": 8, "target_requests_per_s": 20, "engine": "vllm",
                         "slo_ttft_s": 0.5})
    result = CliRunner().invoke(cli, ["solve", "demo/llama3-8b-request-1024+128",
                                      "--minimize", "gpus", "--subject-to", "meets_slo",
                                      "--vary", "gpus=1..256", "--vary", "tp=1,2,4,8",
                                      "--json"])
    assert result.exit_code == 0, result.output
    cli_answer = json.loads(result.stdout)["values"]
    expected = {"gpus": cli_answer["gpus"], "tp": cli_answer["tp"]}
    assert cli_answer["meets_slo"] and expected["gpus"] != 8 and expected["tp"] != 8
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-request-1024+128", "batch")
        await pilot.press("o")
        assert isinstance(app.screen, SolveScreen)
        await pilot.press("down", "down", "down", "enter")  # fewest GPUs meeting the SLO
        answer = app.screen.changes
        assert answer == expected
        app.screen.query_one("#apply").press()
        await settle(pilot)
        assert {k: app.scenarios[sid].inputs[k] for k in ("gpus", "tp")} == expected
        assert not [n for n in app._notifications if n.severity == "error"]
        assert str(app.outputs[sid]["meets_slo"]) == "True"  # the applied row meets it
    with db() as ws:
        sc = ws.scenario("demo", "llama3-8b-request-1024+128")
        assert {k: sc.inputs[k] for k in ("gpus", "tp")} == expected
        last = ws.history("demo", sc.name)[-2:]
        assert {c.field for c in last} == {"gpus", "tp"}
        assert len({c.change_set for c in last}) == 1  # one change set: one undo step
        ws.undo("demo")
        sc = ws.scenario("demo", "llama3-8b-request-1024+128")
        assert (sc.inputs["gpus"], sc.inputs["tp"]) == (8, 8)


async def test_focus_returns_to_the_grid_after_a_dialog_and_catalog_edits_are_explicit(
        ) -> None:
    """Issue 16 #22: on the Training tab reached through the tab strip, after the new and
    rename dialogs the focus is on the training grid, not the tab strip; keys typed next
    (Enter q w e n Enter on the model cell) act on the grid and never edit a model's notes.
    Enter on the tab strip of the Models tab only enters the table."""
    from textual.widgets import Tabs

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("tab", "right")  # the tab strip, then Training
        await pilot.pause()
        assert app.query_one("#tabs").active == "training"
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"tune-2", "enter")
        await settle(pilot)
        assert app.focused is app.query_one("#train-grid")
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("ctrl+u", *"tune-3", "enter")
        await settle(pilot)
        assert app.focused is app.query_one("#train-grid")
        app.query_one("#train-grid", SheetTable).move_cursor(
            column=TRAIN_COLUMNS.index("model"))
        await pilot.press("enter", *"qwen", "enter")
        await settle(pilot)
        await pilot.press("escape")
        assert app.query_one("#tabs").active == "training"
        assert "tune-3" in {s.name for s in app.scenarios.values()}
        app.query_one("#tabs").active = "models"
        await pilot.pause()
        app.query_one("#tabs").query_one(Tabs).focus()
        await pilot.pause()
        await pilot.press("enter")  # on the tab strip: into the table, no dialog
        assert len(app.screen_stack) == 1
        assert app.focused is app.query_one("#models-table")
    with db() as ws:
        assert all(not m.notes.startswith("qwen") and "qwen" not in m.notes
                   for m in ws.models())


async def test_new_scenario_asks_for_model_and_gpu() -> None:
    """Issue 16 #23: the new-scenario dialog asks for model and GPU, each by typing a
    filter, starting at the current row's (not always the catalog's first, which may not
    fit)."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        goto(app, "llama3-8b-request-1024+128", "batch")
        await pilot.press("n")
        await pilot.pause()
        dialog = app.screen
        assert type(dialog).__name__ == "NewScenarioDialog"
        assert (dialog.chosen("model"), dialog.chosen("gpu")) == (  # type: ignore[attr-defined]
            "llama-3-8b", "h100-sxm")
        await pilot.press(*"moe", "tab", *"mixtral", "tab", *"h200")
        await pilot.pause()
        assert dialog.chosen("gpu") == "h200"  # type: ignore[attr-defined]
        await pilot.press("z", "z", "enter")  # a GPU filter that matches nothing
        assert app.screen is dialog and "no GPU" in text(dialog.query_one("#error", Static))
        await pilot.press("ctrl+u", *"h1")  # the three H100s: the default stays chosen
        assert dialog.chosen("gpu") == "h100-sxm"  # type: ignore[attr-defined]
        await pilot.press("down", "enter")  # h100-sxm is the last: wraps round to h100-nvl
        await settle(pilot)
        assert len(app.screen_stack) == 1
    with db() as ws:
        sc = ws.scenario("demo", "moe")
        assert (sc.model, sc.gpu) == ("mixtral-8x7b", "h100-nvl")


async def test_undo_names_the_scenario_field_values_and_author() -> None:
    """Issue 16 #25: an undo that reverts another client's edit (a CLI `scenario set` on
    another scenario) says which scenario, which field, old → new, and who made it."""
    import getpass

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        goto(app, "llama3-8b-24gib-6x8k", "batch")
        with db() as other:  # the CLI, on another scenario
            other.set_scenario("demo", "llama3-8b-request-1024+128", {"batch": 8})
        await pilot.press("ctrl+z")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("llama3-8b-request-1024+128" in m and "batch 8 → 1" in m
                   and getpass.getuser() in m for m in messages), messages
    with db() as ws:
        assert ws.scenario("demo", "llama3-8b-request-1024+128").inputs["batch"] == 1
        assert ws.history("demo", "llama3-8b-request-1024+128")[-1].author == getpass.getuser()


TRAIN_COLUMNS = [k for k, _h, _r in cells.grid_columns("training")]


async def test_training_grid_sweep_chart_lora_targets_and_export_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16 #26: the training grid draws whole numbers (no `1,000,000,00`, `79.28 EFLO`,
    `176.5 GPU-`), the sweep chart writes values with their unit (no `1.066e+04`),
    `lora_targets` is not editable at `lora_rank` 0, and export proposes the documents
    folder, not the current directory."""
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DOCUMENTS_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.query_one("#tabs").active = "training"
        await pilot.pause()
        grid = app.query_one("#train-grid", SheetTable)
        ids = [k.value for k in grid.rows]
        for column in ("train_tokens", "trainable_params", "train_flops", "gpu_hours",
                       "train_time_s", "train_cost_usd", "train_memory_bytes_per_gpu"):
            grid.move_cursor(row=0, column=TRAIN_COLUMNS.index(column))
            await pilot.pause(0.05)
            for sid in ids:
                full = str(grid.get_cell(str(sid), column)).strip()
                assert grid.drawn_cell(str(sid), column) == full, (column, full)
        full_training = next(i for i in ids if app.scenarios[int(i)].inputs["lora_rank"] == 0)
        grid.move_cursor(row=ids.index(full_training),
                         column=TRAIN_COLUMNS.index("lora_targets"))
        await pilot.pause()
        assert "rank 0" in str(grid.get_cell(full_training, "lora_targets"))
        await pilot.press("enter")
        assert app.editing is None
        assert any("lora_rank" in n.message for n in app._notifications)
        app.query_one("#tabs").active = "scenarios"
        await pilot.pause()
        app.query_one("#grid").focus()
        goto(app, "llama3-8b-request-1024+128", "batch")
        await pilot.press("w")
        await pilot.pause(0.2)
        chart = text(app.screen.query_one("#chart", Static))
        assert "tokens/s" in chart and "e+0" not in chart
        assert any(line.strip().startswith("256 ") for line in chart.splitlines())
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+e")
        await pilot.pause()
        from textual.widgets import Input

        proposed = app.screen.query_one(Input).value
        assert proposed == str(home / "Documents" / "planner-demo.xlsx")


async def test_other_clients_changes_show_without_restart_and_an_edit_is_kept() -> None:
    """Issue 16 #24: another client's change shows without a restart (the sheet polls the
    fleet's version counters); an edit of a row that went stale meanwhile is not discarded:
    of another field, it is saved on top of theirs; of the same field, it stays in the bar
    with the conflict shown, and Enter saves it."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        with db() as other:
            other.set_scenario("demo", "llama3-8b-24gib-6x8k", {"batch": 5})
        await until(pilot, lambda: shown(app, sid, "batch") == "5",
                    "the poll to show the other client's batch")
        assert shown(app, sid, "batch") == "5" and app.scenarios[sid].version == 2
        assert app.sheet.poll_timer is not None
        app.sheet.poll_timer.pause()  # from here the row goes stale before each edit
        with db() as other:  # another field
            other.set_scenario("demo", "llama3-8b-24gib-6x8k", {"notes": "theirs"})
        await pilot.press("e", "ctrl+u", "4", "enter")
        await settle(pilot)
        await settle(pilot)
        assert shown(app, sid, "batch") == "4" and app.scenarios[sid].notes == "theirs"
        assert any("applied on top" in n.message for n in app._notifications)
        with db() as other:  # the same field
            other.set_scenario("demo", "llama3-8b-24gib-6x8k", {"batch": 9})
        await pilot.press("e", "ctrl+u", "3", "enter")
        await settle(pilot)
        assert app.editing is not None  # theirs shown, yours kept in the bar
        assert shown(app, sid, "batch") == "9"
        assert "= 3" in bar(app) and "batch = 9" in bar(app)
        await pilot.press("enter")
        await settle(pilot)
        assert app.editing is None and shown(app, sid, "batch") == "3"
    with db() as ws:
        sc = ws.scenario("demo", "llama3-8b-24gib-6x8k")
        assert (sc.inputs["batch"], sc.notes) == (3, "theirs")


async def test_grid_opens_on_the_verdicts_with_labelled_headers_pins_and_folds() -> None:
    """Issue 16 #27: the verdicts (issue 24: fits, then meets SLO, GPUs and replicas needed,
    their cost, TTFT p50/p99 and TPOT at the load, utilisation, saturation rate) come
    right after the scenario name and are drawn when the grid opens; headers are labels with
    units, not cut column names; `p` pins another output, `g` folds a column group."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, "llama3-8b-24gib-6x8k", "name")
        await pilot.pause()
        # issue 24: the capacity verdict leads (planner.compute.verdict.VERDICT), after fits
        assert cells.PINNED["inference"] == ("fits", *verdict.VERDICT)
        for column in ("fits", "meets_slo", "gpus_needed", "replicas_needed",
                       "cost_usd_per_month_needed"):
            assert drawn(app, sid, column), column  # in view without scrolling
        # a roofline row with no target rate and no SLO has no verdict: a dash, not "no"
        assert drawn(app, sid, "meets_slo") == "–"
        # no target rate: the GPUs it needs read "no target", not "0 GPUs"
        assert app.scenarios[sid].inputs["target_requests_per_s"] == 0
        assert app.outputs[sid]["gpus_needed"] == 0
        assert drawn(app, sid, "gpus_needed") == "– no target"
        grid = app.query_one("#grid", SheetTable)
        head = "\n".join(grid.render_line(y).text for y in range(grid.header_height))
        assert "Meets SLO" in head and "[USD/month]" in head  # drawn at once
        labels = {c.key.value: " ".join(str(c.label).split()) for c in grid.columns.values()}
        assert labels["ttft_s"] == "TTFT [s]"
        assert labels["cost_usd_per_month"] == "Cost per month [USD/month]"
        assert labels["quant_group_size"] == "Quant group [weights]"
        assert all(len(line) <= c.width for c in grid.columns.values()
                   for line in str(c.label).split("\n"))  # no header cut to fit
        goto(app, "llama3-8b-24gib-6x8k", "tpot_s")
        await pilot.press("p")  # pinned: now right after the pinned verdicts
        keys = [c.key.value for c in grid.ordered_columns]
        pins = 1 + len(cells.PINNED["inference"])  # after the name and the pinned verdicts
        assert keys.index("tpot_s") == pins and grid.cursor_column == pins
        assert drawn(app, sid, "tpot_s")
        grid.move_cursor(column=keys.index("batch"))
        await pilot.press("g")  # fold the inputs
        keys = [c.key.value for c in grid.ordered_columns]
        assert "group:inputs" in keys and "batch" not in keys and "model" not in keys
        assert keys[grid.cursor_column] == "group:inputs"
        await pilot.press("g")  # and unfold them
        keys = [c.key.value for c in grid.ordered_columns]
        assert "batch" in keys and "group:inputs" not in keys


BENCH = Path(__file__).parents[1] / "fixtures" / "benchruns"
BENCH_FILES = ("vllm-json/068-gpustack-qwen3-8b-h100-latency-vllm-bf16-tp1-sharegpt-c1.json",
               "vllm-json/071-gpustack-qwen3-8b-h100-latency-vllm-bf16-tp1-sharegpt-c8.json",
               "vllm-text/084-gpustack-qwen3-14b-h100-vllm-bf16-tp1-sharegpt-burst.txt",
               "vllm-text/085-gpustack-qwen3-14b-h100-vllm-bf16-tp1-rand32K.txt")


def import_bench_runs() -> list[Any]:
    """Two GPUStack H100 + vLLM fixtures (Qwen3-8B at 1 and 8 clients) and the Qwen3-14B burst
    files (1 ShareGPT run with output_tokens_cv = 1, 4 random-length runs), imported through
    the service with the manifest's flags."""
    import json

    manifest = {e["file"]: e for e in json.loads((BENCH / "manifest.json").read_text())}
    configs = Path(__file__).parents[1] / "fixtures" / "serving_configs"
    with db() as ws:
        ws.import_models([(name, (configs / f"{name}.json").read_text(), "fixture")
                          for name in ("qwen3-8b", "qwen3-14b")])
        added = []
        for file in BENCH_FILES:
            entry = manifest[file]
            added += ws.import_measurements([BENCH / file], entry["flags"],
                                            entry["settings"]).added
    return added


def test_scatter_text_places_points_on_log_axes() -> None:
    from planner.tui.widgets.measurements_tab import scatter_text

    # measured 10 → predicted 10 (on the diagonal), measured 100 → predicted 1000: the axes
    # span 1e1..1e3; with width 21 and height 11 a decade is 10 columns and 5 rows
    lines = scatter_text([(10, 10, "T"), (100, 1000, "F")], width=21, height=11).splitlines()
    grid = [line.split("│", 1)[1] for line in lines[:11]]
    assert grid[10][0] == "T"       # bottom-left: (1e1, 1e1)
    assert grid[0][10] == "F"       # top row (1e3), middle column (1e2)
    assert grid[5][10] == "·"       # the diagonal at (1e2, 1e2)
    assert lines[0].startswith("1e3 │") and lines[10].startswith("1e1 │")
    assert scatter_text([]) == "no scored runs to plot"


@pytest.mark.slow
async def test_measurements_tab_fit_and_chart() -> None:
    """The Measurements tab lists the imported runs with measured vs predicted and |error|;
    F fits H100 + vLLM in a worker, the dialog shows the before/after medians of the stored
    profile, and the table then predicts with the profile (the fit's own residuals)."""
    added = import_bench_runs()
    assert len(added) == 7
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.query_one("#tabs").active = "measurements"
        await settle(pilot)
        table = app.query_one("#measurements-table", DataTable)
        assert table.row_count == 7
        c1 = next(m for m in added if m.values.get("concurrency") == 1)
        row = [str(c) for c in table.get_row(str(c1.id))]
        assert row[1:6] == ["qwen3-8b", "h100-sxm", "vllm", "single", "catalog"]
        measured = c1.values["output_tokens_per_s"]
        assert row[6] == (f"{measured:,.1f}" if measured >= 100 else f"{measured:,.2f}")
        before_row = row
        assert row[9] != "–" and row[12] != "–"  # TTFT and TPOT scored (one client)
        chart = text(app.query_one("#measurements-chart", Static))
        assert "T" in chart and "measured → (log)" in chart
        table.focus()
        await pilot.press("F")
        await settle(pilot)
        await settle(pilot)
        assert isinstance(app.screen, TextScreen)
        body = text(app.screen.query_one("#body", Static))
        with db() as ws:
            profile, = ws.calibration_profiles()
        assert profile.name == "h100-sxm-vllm" and profile.version == 1
        after = profile.errors["after"]["throughput_median_abs_error"]
        before = profile.errors["before"]["throughput_median_abs_error"]
        assert f"{before:.1%} / " in body and f"{after:.1%} / " in body
        assert "fit runs before" in body and "held out after" in body
        await pilot.press("escape")
        await settle(pilot)
        row = [str(c) for c in table.get_row(str(c1.id))]
        assert row[5] == "h100-sxm-vllm v1"
        fitted = next(r for r in profile.residuals
                      if r["id"] == c1.id and r["metric"] == "throughput")

        def figure(value: float) -> str:
            return f"{value:,.1f}" if value >= 100 else f"{value:,.2f}"

        # before the fit the tab predicted what the fit started from, after it what it ended at
        assert before_row[7] == figure(fitted["predicted_before"])
        assert before_row[8] == f"{abs(fitted['predicted_before'] / measured - 1):.1%}"
        assert row[7] == figure(fitted["predicted"])
        assert row[8] == f"{abs(fitted['predicted'] / measured - 1):.1%}"


def test_measurements_tab_snapshot(snap_compare: Any) -> None:
    import_bench_runs()

    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        pilot.app.query_one("#tabs").active = "measurements"
        await settle(pilot)
        await steady(pilot)

    assert snap_compare(create_app(), terminal_size=SIZE, run_before=run_before)


async def test_a_row_action_dialog_closes_with_the_frame_showing_its_result() -> None:
    """Issue 27 item 8: the dialog of a row action stays up, deaf to keys, until the row is
    in place, and goes in the same handler that puts it there (one frame, not one without
    the dialog and another with the row); a second Enter creates nothing more, and a failed
    action closes its dialog too."""
    from planner.tui.screens.dialogs import AnswerDialog

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        count = len(app.scenarios)
        await pilot.press("n")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, AnswerDialog)
        await pilot.press(*"held-1", "enter", "enter", "escape")
        assert dialog.answered  # answered, and still the screen until the row is shown
        await settle(pilot)
        assert len(app.screen_stack) == 1 and not dialog.is_current
        assert len(app.scenarios) == count + 1
        assert "held-1" in {s.name for s in app.scenarios.values()}
        goto(app, "held-1", "batch")
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("ctrl+u", *"llama3-8b-request-1024+128", "enter")  # a name in use
        await settle(pilot)
        assert len(app.screen_stack) == 1
        assert {s.name for s in app.scenarios.values()} >= {"held-1"}
    with db() as ws:
        assert [s.name for s in ws.scenarios("demo")].count("held-1") == 1


async def test_a_held_dialog_under_another_screen_closes_when_that_screen_goes() -> None:
    """A held dialog asked to close while another screen is over it (an app key pushed one
    while the action ran) stays until that screen goes, then closes itself: ``dismiss`` would
    pop whichever screen is on top, here the wrong one. The screen over it is modal, so the
    dialog is still drawn (``is_current``) without being the top screen (``is_active``)."""
    from textual.screen import ModalScreen

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        dialog = EditDialog("Rename", "x")
        app.push_screen(dialog)
        await pilot.pause()
        over: ModalScreen[None] = ModalScreen()  # the dialog stays drawn under it
        app.push_screen(over)
        await pilot.pause()
        dialog.close()
        await pilot.pause()
        assert app.screen is over and dialog in app.screen_stack  # the screen over it stays
        app.pop_screen()
        await until(pilot, lambda: dialog not in app.screen_stack, "the held dialog to close")
        assert len(app.screen_stack) == 1
