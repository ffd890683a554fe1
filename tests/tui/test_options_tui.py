"""The options view of the terminal UI (issue 15.1), driven with Textual's Pilot on the seeded
demo fleet's option group (Llama-3-70B chat on 12 H100, options on 8 H200 and 8 MI300X)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import DataTable

from planner.tui.app import create_app
from planner.tui.screens.options_view import OptionsScreen
from planner.tui.state import cells
from tests.tui.test_tui import SIZE, db, goto, ready, settle

BASE = "llama3-70b-chat-h100-tp4"
H200 = "llama3-70b-chat-h200-tp2"
MI300X = "llama3-70b-chat-mi300x-tp2"


def table_rows(screen: OptionsScreen) -> list[list[str]]:
    table: DataTable[Any] = screen.query_one("#options-table", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.mark.slow
async def test_options_view_shows_the_group_and_enter_chooses_in_one_undo_step() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = goto(app, H200, "batch")
        # the grid marks option rows: ↳ before the name, dim while not chosen
        name_cell = cells.cell(app.scenarios[sid], app.outputs[sid], "name", "meta")
        assert name_cell.plain == f"↳ {H200}"
        await pilot.press("a")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OptionsScreen)
        rows = table_rows(screen)
        # 730 h × example prices (seeds/gpus.toml): 12 × $2.50, 8 × $3.50, 12 × $2.50 per hour
        assert [(r[0], r[1], r[2], r[3], r[5]) for r in rows] == [
            ("✓ ", f"{BASE} (base)", "h100-sxm", "12", "$21,900.00/month"),
            (" ★", H200, "h200", "8", "$20,440.00/month"),
            ("  ", MI300X, "mi300x", "12", "$21,900.00/month")]
        assert [r[8] for r in rows] == ["yes", "yes", "yes"]  # all meet TTFT 1 s, TPOT 50 ms
        assert screen.selected() == H200  # the cursor starts on the row it was opened from
        await pilot.press("down", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, OptionsScreen)
        chosen = {s.name: s.chosen for s in app.scenarios.values() if s.name.startswith(
            "llama3-70b-chat")}
        assert chosen == {BASE: False, H200: False, MI300X: True}
        with db() as ws:
            changes = ws.history("demo", MI300X)
            assert [(c.field, c.old_value, c.new_value) for c in changes] == [
                ("chosen", False, True)]
        await pilot.press("ctrl+z")  # one undo step puts the choice back on the base
        await settle(pilot)
        chosen = {s.name: s.chosen for s in app.scenarios.values() if s.name.startswith(
            "llama3-70b-chat")}
        assert chosen == {BASE: True, H200: False, MI300X: False}


async def test_options_key_on_a_scenario_in_no_group_says_so() -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("a")
        await pilot.pause()
        assert not isinstance(app.screen, OptionsScreen)
        assert any("no one's option and has no options" in n.message
                   for n in app._notifications)

