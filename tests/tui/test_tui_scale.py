"""The UI's data path at scale (issue 14 item 3): filter and sort on arrays give exactly the
rows and order of the row-by-row rule; the grid's virtual rows behave as DataTable rows; row
actions update the grid in place and leave it as a fresh reload would; typing in the filter
of a big fleet is debounced. No timing is asserted (benchmarks/bench_tui.py measures)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from planner.service import Workspace
from planner.spec.domain import Scenario
from planner.tui.app import PlannerApp, create_app
from planner.tui.state import rows
from planner.tui.widgets.grid import SheetTable
from tests.helpers import until
from tests.tui.test_tui import SIZE, caught_up, goto, ready, settle

os.environ["TEXTUAL_ANIMATIONS"] = "none"

MODELS = ("llama-3-8b", "Mixtral-8x7b", "qwen2-7b")
GPUS = ("h100-sxm", "a100-80gb", "L40S", "h200")


def fleet(count: int) -> tuple[dict[int, Scenario], dict[int, dict[str, Any]]]:
    """A deterministic fleet: ids shuffled against names, repeated values (ties), mixed-case
    names, notes, and an output that is a number for some rows and text for others."""
    scenarios, outputs = {}, {}
    for k in range(count):
        sid = (k * 7919) % 10007 + 1  # ids in no relation to name order
        name = f"{'Run' if k % 3 else 'run'}-{(k * 37) % count:04d}"
        scenarios[sid] = Scenario(
            id=sid, fleet="f", name=name, kind="training" if k % 5 == 0 else "inference",
            model=MODELS[k % 3], gpu=GPUS[k % 4],
            inputs={"batch": (k * 13) % 7, "prompt_tokens": 128 * (1 + k % 4),
                    "weight_dtype": ("bf16", "fp8", "int4")[k % 3], "offload": k % 2 == 0},
            lora_targets="q,v", notes="Chat ☕" if k % 11 == 0 else "", version=1)
        outputs[sid] = {"decode_tokens_per_s": float((k * 31) % 17) / 3,
                        "verdict": (k % 4) * 1.5 if k % 6 else f"no fit {k % 3}",
                        "fits": k % 3 != 0}
    return scenarios, outputs


NEEDLES = ("", "run", "RUN-00", "7b", "h1", "chat ☕", "x", "00", "run-001", "-")
SORTS = (None, ("name", False), ("name", True), ("model", False), ("gpu", True),
         ("batch", False), ("batch", True), ("weight_dtype", False), ("offload", True),
         ("decode_tokens_per_s", False), ("decode_tokens_per_s", True), ("verdict", False),
         ("verdict", True), ("fits", False), ("missing_column", False))


@pytest.mark.parametrize("kind", ["inference", "training"])
def test_array_filter_and_sort_match_the_row_rule(kind: str) -> None:
    """Every filter (typed on, narrowed, widened) and every sort gives exactly the ids, in
    exactly the order, of :func:`rows.visible`: ties in name order, descending keeping ties in
    name order, numbers before text, text case-insensitive on name/model/GPU."""
    scenarios, outputs = fleet(600)
    index = rows.KindIndex([s for s in scenarios.values() if s.kind == kind])
    assert index.names == sorted(index.names)
    for sort_key in SORTS:
        for needle in NEEDLES:  # in this order: narrowing, widening, unrelated
            got = index.visible(needle, sort_key, scenarios, outputs).tolist()
            assert got == rows.visible(scenarios, outputs, kind, needle, sort_key), \
                (needle, sort_key)
    expected = rows.visible(scenarios, outputs, kind, "run-00", ("batch", True))
    # the names run-0000 to run-0099 of this kind, counted from the fleet's formula
    assert len(expected) == sum((k * 37) % 600 < 100 and (k % 5 == 0) == (kind == "training")
                                for k in range(600)) > 0
    assert [scenarios[i].inputs["batch"] for i in expected] == sorted(
        (scenarios[i].inputs["batch"] for i in expected), reverse=True)


def test_array_index_follows_added_removed_and_renamed_rows() -> None:
    """Rows added, removed and renamed keep the arrays in name order; the filter and sort
    caches follow (a cached filter is not served after a row changed)."""
    scenarios, outputs = fleet(300)
    index = rows.KindIndex([s for s in scenarios.values() if s.kind == "inference"])
    assert index.visible("zz", None, scenarios, outputs).tolist() == []
    base = next(iter(scenarios.values()))
    added = replace(base, id=20_000, name="zz-new" + "é" * 300, kind="inference",
                    notes="a note wider than any haystack")
    scenarios[added.id], outputs[added.id] = added, dict(outputs[base.id])
    index.add(added)
    removed = [i for i in index.ids.tolist()][5]
    index.remove(removed)
    del scenarios[removed], outputs[removed]
    renamed_id = index.ids.tolist()[0]
    renamed = replace(scenarios[renamed_id], name="Run-9999 renamed")
    scenarios[renamed_id] = renamed
    index.replace(renamed)
    assert index.remove(123_456) is False
    assert len(index) == sum(s.kind == "inference" for s in scenarios.values())
    for sort_key in SORTS:
        for needle in ("", "zz", "renamed", "run", "wider"):
            assert index.visible(needle, sort_key, scenarios, outputs).tolist() == \
                rows.visible(scenarios, outputs, "inference", needle, sort_key)
    assert index.visible("zz-new", None, scenarios, outputs).tolist() == [20_000]


def test_filter_falls_back_to_object_strings_past_the_size_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the fixed-width array limit (very long notes) the haystacks are searched one by
    one, with the same result."""
    scenarios, outputs = fleet(200)
    monkeypatch.setattr(rows, "STRING_ARRAY_LIMIT_BYTES", 1000)
    index = rows.KindIndex([s for s in scenarios.values() if s.kind == "inference"])
    assert index.texts.dtype == object
    for needle in NEEDLES:
        assert index.visible(needle, None, scenarios, outputs).tolist() == rows.visible(
            scenarios, outputs, "inference", needle, None)


def grid_state(app: PlannerApp) -> list[tuple[str, ...]]:
    """Every row of both grids, in order, as the cells' text (what a reload must show)."""
    shown = []
    for grid_id in ("#grid", "#train-grid"):
        grid = app.query_one(grid_id, SheetTable)
        keys = [c.key for c in grid.ordered_columns]
        for sid in grid.shown_ids.tolist():
            shown.append((grid_id, str(sid), *(str(grid.get_cell(str(sid), k)) for k in keys)))
    return shown


async def fresh_grid() -> list[tuple[str, ...]]:
    """The grids of a new app on the same database."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        return grid_state(app)


@pytest.mark.slow
async def test_row_actions_update_the_grid_in_place_as_a_reload_would() -> None:
    """New, duplicate, rename, delete, undo and redo change the grid without reading the
    fleet again (its dict of scenarios is the same object throughout), and each leaves both
    grids exactly as a fresh app on the database shows them; "nothing to undo" reads nothing
    and changes nothing."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        loaded = app.sheet.scenarios
        before = len(loaded)
        goto(app, "llama3-8b-request-1024+128", "batch")
        await pilot.press("n")
        await pilot.press(*"aaa-first", "enter")
        await settle(pilot)
        grid = app.query_one("#grid", SheetTable)
        assert grid.shown_ids[0] == app.sheet._current()[0].id  # type: ignore[union-attr]
        assert app.sheet._current()[0].name == "aaa-first"  # type: ignore[union-attr]
        await pilot.press("d", "ctrl+u", *"zzz-copy", "enter")
        await settle(pilot)
        await pilot.press("r", "ctrl+u", *"mmm-renamed", "enter")
        await settle(pilot)
        assert app.sheet.scenarios is loaded and len(loaded) == before + 2
        assert grid_state(app) == await fresh_grid()
        goto(app, "aaa-first", "batch")
        await pilot.press("delete", "y")
        await settle(pilot)
        assert app.sheet.scenarios is loaded and len(loaded) == before + 1
        assert grid_state(app) == await fresh_grid()
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("enter", "ctrl+u", "3", "enter")
        await settle(pilot)
        await pilot.press("ctrl+z")  # the batch edit
        await settle(pilot)
        assert app.sheet.scenarios[sid].inputs["batch"] == 6
        await pilot.press("ctrl+z")  # the rename: the row moves back to its old name
        await settle(pilot)
        assert "zzz-copy" in {s.name for s in loaded.values()}
        assert "mmm-renamed" not in {s.name for s in loaded.values()}
        assert grid_state(app) == await fresh_grid()
        await pilot.press("ctrl+y")  # the rename again
        await settle(pilot)
        assert "mmm-renamed" in {s.name for s in loaded.values()}
        assert app.sheet.scenarios is loaded
        assert grid_state(app) == await fresh_grid()
        with Workspace.open() as ws:
            while ws.undo("demo") is not None:
                pass
        await caught_up(pilot)  # the poll shows the undone rows
        shown = grid_state(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert app.sheet.scenarios is loaded and grid_state(app) == shown
        assert any("Nothing to undo" in str(n.message) for n in app._notifications)
        assert shown == await fresh_grid()


async def test_filter_typing_is_debounced_in_a_big_fleet() -> None:
    """Past FILTER_DEBOUNCE_ROWS the filter waits for typing to pause, then runs once with
    the whole text; Esc clears it at once."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sheet = app.sheet
        sheet.FILTER_DEBOUNCE_ROWS = 0  # the demo fleet counts as big
        applied: list[str] = []
        apply = sheet._apply_filter

        def counted(text: str) -> None:
            applied.append(text)
            apply(text)

        sheet._apply_filter = counted  # type: ignore[method-assign]
        grid = app.query_one("#grid", SheetTable)
        everything = grid.row_count
        await pilot.press("slash", *"llama3")
        assert applied == [] and grid.row_count == everything
        await until(pilot, lambda: applied != [], "the debounced filter to run")
        await pilot.pause()
        assert applied == ["llama3"] and grid.row_count == 5  # llama3-8b ×2, llama3-70b ×3
        assert all("llama3" in rows.haystack(sheet.scenarios[i])
                   for i in grid.shown_ids.tolist())
        await pilot.press("escape")
        await pilot.pause()
        assert applied == ["llama3", ""] and grid.row_count == everything


async def test_virtual_rows_answer_as_datatable_rows() -> None:
    """The grid's rows come from an id array: keys, indexes, cells, cursor and regions
    answer as DataTable's own rows would, and the cursor reaches the last row."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", SheetTable)
        ids = grid.shown_ids.tolist()
        assert ids == rows.visible(app.sheet.scenarios, app.sheet.outputs, "inference", "",
                                   None)
        assert [int(k.value or 0) for k in grid.rows] == ids
        assert grid.row_count == len(ids) == len(grid.ordered_rows)
        last = len(ids) - 1
        assert grid.get_row_index(str(ids[last])) == last
        assert grid.coordinate_to_cell_key(grid.cursor_coordinate.__class__(last, 0)
                                           ).row_key.value == str(ids[last])
        assert str(grid.get_cell(str(ids[0]), "name")) == app.sheet.scenarios[ids[0]].name
        grid.move_cursor(row=last, column=0)
        await pilot.pause()
        assert grid._get_row_region(last).y == grid.header_height + last
        assert grid.drawn_cell(str(ids[last]), "name") == app.sheet.scenarios[ids[last]].name
        grid.show_rows(np.array(ids[::-1], dtype=np.int64), app.sheet._row)
        await pilot.pause()
        assert grid.shown_ids.tolist() == ids[::-1] and grid.cursor_coordinate.row == last
        assert grid.drawn_cell(str(ids[0]), "name") == app.sheet.scenarios[ids[0]].name


async def test_a_longer_name_widens_its_column_only() -> None:
    """A rename longer than the name column widens that column (the grid is laid out again
    with the widths known, nothing re-measured); the other columns keep theirs and the name
    shows whole."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", SheetTable)
        before = {c.key.value: c.width for c in grid.ordered_columns}
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        long_name = "a-scenario-name-longer-than-any-in-the-demo-fleet"
        assert len(long_name) + 2 > before["name"]
        await pilot.press("r", "ctrl+u", *long_name, "enter")
        await settle(pilot)
        after = {c.key.value: c.width for c in grid.ordered_columns}
        assert after["name"] == len(long_name) + 2
        assert {k: w for k, w in after.items() if k != "name"} == {
            k: w for k, w in before.items() if k != "name"}
        assert grid.drawn_cell(str(sid), "name") == long_name


async def test_a_poll_that_raced_a_row_action_reloads_nothing() -> None:
    """The poll compares the ids it read with the rows shown; when this sheet's own new or
    deleted row was put in place meanwhile they match by the time its answer arrives, and
    the 100k-row fleet is not read again. Ids that still differ reload it."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sheet = app.sheet
        loaded = sheet.scenarios
        sheet._rows_came_or_went("demo", set(loaded))
        await settle(pilot)
        assert sheet.scenarios is loaded
        sheet._rows_came_or_went("demo", set(loaded) | {10**9})
        await settle(pilot)
        assert sheet.scenarios is not loaded and sheet.scenarios.keys() == loaded.keys()


async def test_rows_changed_elsewhere_are_read_one_by_one_or_with_the_fleet() -> None:
    """A few rows another client changed are read back by name, one by one; a row they
    renamed cannot be found by its old name, so the fleet is read and the row shows its new
    name at its place in name order."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sheet = app.sheet
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        with Workspace.open() as other:
            other.set_scenario("demo", "llama3-8b-24gib-6x8k", {"batch": 5})
            fresh = sheet._read_rows(other, "demo", {sid})
            assert [(s.id, s.inputs["batch"]) for s in fresh] == [(sid, 5)]
            other.set_scenario("demo", "llama3-8b-24gib-6x8k", {"name": "aaa-theirs"})
            assert [s.name for s in sheet._read_rows(other, "demo", {sid})] == ["aaa-theirs"]
        await caught_up(pilot)
        grid = app.query_one("#grid", SheetTable)
        assert sheet.scenarios[sid].name == "aaa-theirs"
        assert grid.shown_ids.tolist() == rows.visible(sheet.scenarios, sheet.outputs,
                                                       "inference", "", None)
        assert grid.shown_ids[0] == sid


async def test_an_undo_that_keeps_its_row_in_place_redraws_only_that_row() -> None:
    """An undo or redo of a value (name, filter text and sorted value unchanged) redraws the
    row where it is: the rows shown are not replaced (the 100,000-row view is not rebuilt)
    and the cursor is on the row. With a sort on the column the undo changes, the rows are
    sorted again, as a fresh sort would order them."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sheet = app.sheet
        grid = app.query_one("#grid", SheetTable)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        await pilot.press("enter", "ctrl+u", "2", "enter")
        await settle(pilot)
        order = grid._order
        grid.move_cursor(row=0, column=grid.cursor_coordinate.column)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert grid._order is order and grid.drawn_cell(str(sid), "batch") == "6"
        assert grid.cursor_coordinate.row == grid.get_row_index(str(sid))
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert grid._order is order and grid.drawn_cell(str(sid), "batch") == "2"
        await pilot.press("s")  # by batch, ascending: the row with batch 2 moves up
        await settle(pilot)
        sorted_order = grid._order
        await pilot.press("ctrl+z")  # batch 6 again: the sorted value changed, rows re-sorted
        await settle(pilot)
        assert grid._order is not sorted_order
        assert grid.shown_ids.tolist() == rows.visible(
            sheet.scenarios, sheet.outputs, "inference", "", ("batch", False))
        assert grid.drawn_cell(str(sid), "batch") == "6"


async def test_a_rename_keeping_its_place_in_name_order_redraws_its_row_only() -> None:
    """A rename that leaves the row between the same neighbours in name order redraws that
    row where it is; one that moves it past a neighbour shows the rows again, in name
    order."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sheet = app.sheet
        grid = app.query_one("#grid", SheetTable)
        sid = goto(app, "llama3-8b-24gib-6x8k", "batch")
        names = [sheet.scenarios[i].name for i in grid.shown_ids.tolist()]
        at = names.index("llama3-8b-24gib-6x8k")
        order = grid._order
        await pilot.press("r", "ctrl+u", *"llama3-8b-24gib-6x8k-b", "enter")
        await settle(pilot)
        assert sorted([*names[:at], "llama3-8b-24gib-6x8k-b", *names[at + 1:]]) == [
            sheet.scenarios[i].name for i in grid.shown_ids.tolist()]  # still between them
        assert grid._order is order
        assert grid.drawn_cell(str(sid), "name") == "llama3-8b-24gib-6x8k-b"
        await pilot.press("r", "ctrl+u", *"aaa-first", "enter")
        await settle(pilot)
        assert grid._order is not order and grid.shown_ids[0] == sid
        assert grid.shown_ids.tolist() == rows.visible(sheet.scenarios, sheet.outputs,
                                                       "inference", "", None)


async def test_cells_reused_by_their_look_render_as_datatable_renders_them() -> None:
    """Every cell in view, rendered through the cache keyed by what a cell shows (first
    rendered, then reused after the rows moved), gives the segments, styles and position
    metadata DataTable's own rendering gives it, at the cursor and off it."""
    from rich.style import Style
    from textual.widgets import DataTable

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", SheetTable)
        grid.move_cursor(row=2, column=3)
        await pilot.pause()
        base = Style(bgcolor="grey11")
        columns = sorted(grid._columns_in_view())
        widths = [c.get_render_width(grid) for c in grid.ordered_columns]
        assert len(columns) > 5 and grid.row_count > 5

        def cells() -> list[Any]:
            return [grid._render_cell(r, c, base, widths[c], cursor=(r, c) == (2, 3))
                    for r in range(grid.row_count) for c in columns]

        def theirs() -> list[Any]:
            grid._clear_caches()
            return [DataTable._render_cell(grid, r, c, base, widths[c],
                                           cursor=(r, c) == (2, 3))
                    for r in range(grid.row_count) for c in columns]

        grid._shared = None
        grid._clear_caches()
        first = cells()
        reference = theirs()
        grid._clear_caches()  # DataTable's cache emptied, the shared one kept: reused
        reused = cells()
        assert grid._shared is not None and len(grid._shared) > 0
        for mine in (first, reused):
            assert len(mine) == len(reference)
            for got, want in zip(mine, reference, strict=True):
                assert [[(s.text, s.style, s.control) for s in line] for line in got] == \
                    [[(s.text, s.style, s.control) for s in line] for line in want]
                assert [[s.style.meta if s.style else None for s in line] for line in got] \
                    == [[s.style.meta if s.style else None for s in line] for line in want]


async def test_a_big_fleet_shows_its_first_screen_before_the_rest_is_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past FIRST_ROWS the first rows by name are shown first; the rest is read (a page at a
    time) only once that first screen has been drawn, then every row is shown."""
    from planner.tui.sheet import ScenarioSheet

    monkeypatch.setattr(ScenarioSheet, "FIRST_ROWS", 3)
    monkeypatch.setattr(ScenarioSheet, "PAGE_ROWS", 4)
    built: list[Any] = []
    drawn_first: list[bool] = []
    make, read = ScenarioSheet._loaded, ScenarioSheet._read_pages

    def loaded(self: ScenarioSheet, *args: Any, **kwargs: Any) -> Any:
        built.append(make(self, *args, **kwargs))
        return built[-1]

    def pages(self: ScenarioSheet, ws: Workspace, fleet: str) -> Any:
        first = built[0].shown if built else None
        drawn_first.append(first is not None and first.is_set())
        return read(self, ws, fleet)

    monkeypatch.setattr(ScenarioSheet, "_loaded", loaded)
    monkeypatch.setattr(ScenarioSheet, "_read_pages", pages)
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await settle(pilot)
        with Workspace.open() as ws:
            everything = ws.scenarios("demo")
        assert [(m.partial, len(m.scenarios)) for m in built] == [(True, 3),
                                                                  (False, len(everything))]
        assert drawn_first == [True]
        assert app.sheet.complete and set(app.scenarios) == {s.id for s in everything}
        assert len(app.sheet.outputs.blocks) > 2  # several pages of 4


async def test_a_poll_answer_ahead_of_a_queued_row_action_reloads_nothing() -> None:
    """The poll's answer can arrive after a row action's worker finished but before the row
    it posted is put in place: the ids are compared again behind the queued messages, and the
    fleet is not read again."""
    from planner.tui.messages import RowsUpdated

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sheet = app.sheet
        loaded = sheet.scenarios
        with Workspace.open() as ws:
            new = ws.new_scenario("demo", "aaa-raced", model="llama-3-8b", gpu="h100-sxm")
            outputs = ws.evaluate(new)
        sheet.post_message(RowsUpdated("demo", [new], [outputs], focus_id=new.id))
        sheet._rows_came_or_went("demo", set(loaded) | {new.id})  # ahead of the message
        await settle(pilot)
        assert sheet.scenarios is loaded and new.id in loaded
        grid = app.query_one("#grid", SheetTable)
        assert grid.shown_ids[0] == new.id and grid.drawn_cell(str(new.id), "name") == \
            "aaa-raced"


async def test_a_drawn_row_formats_only_the_cells_in_view() -> None:
    """Drawing the grid formats the cells of the columns in view only (the rest of a row is
    cropped away unseen); a cell read afterwards is formatted then, as DataTable formats it,
    and a row read whole gives every column's cell."""
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", SheetTable)
        grid.show_rows(grid.shown_ids[::-1].copy(), app.sheet._row)
        await pilot.pause()
        columns = len(grid.ordered_columns)
        assert 0 < len(grid._in_view) < columns
        cache = grid._row_renderable_cache
        drawn = [cache[key].cells for key in list(cache.keys()) if key[1] >= 0]
        shown = min(grid.row_count, grid.size.height - grid.header_height)
        assert len(drawn) >= shown
        for cells_ in drawn:  # formatted: some of the columns in view, nothing else
            assert cells_.done and set(cells_.done) <= grid._in_view
        # an off-screen cell, read: formatted then, as DataTable formats a one-line cell
        off = next(i for i in range(columns) if i not in grid._in_view)
        lazy = grid._get_row_renderables(0).cells
        row = app.sheet._row(int(grid.shown_ids[0]))
        keys = [c.key.value for c in grid.ordered_columns]
        assert off not in lazy.done
        assert str(lazy[off]) == str(row[keys[off]])
        assert len(lazy) == columns and [str(c) for c in lazy] == [str(row[k]) for k in keys]
        assert [str(c) for c in lazy[:3]] == [str(row[k]) for k in keys[:3]]


async def test_a_line_with_columns_out_of_view_draws_as_datatable_draws_it() -> None:
    """The grid assembles a row's line with one blank per run of columns out of view, and
    draws headers out of view as blanks; every line drawn (cropped to the window), the
    header's included, is the one DataTable's own assembly and headers give, segment by
    segment with styles and position metadata, at the cursor and off it, scrolled or not."""
    from rich.style import Style
    from textual.widgets import DataTable

    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        grid = app.query_one("#grid", SheetTable)
        grid.move_cursor(row=1, column=2)
        await pilot.pause()
        base = Style(bgcolor="grey11")
        width = grid.size.width
        assert len(grid._columns_in_view()) < len(grid.ordered_columns)  # some out of view

        def lines() -> list[Any]:
            grid._clear_caches()
            return [[(s.text, s.style, s.style.meta if s.style else None)
                     for s in grid._render_line(y, round(grid.scroll_x),
                                                round(grid.scroll_x) + width, base)]
                    for y in range(grid.row_count + 1)]  # the header line too

        for scroll in (0, grid.max_scroll_x // 2):
            grid.scroll_to(x=scroll, animate=False)
            await pilot.pause()
            mine = lines()
            original, cell = SheetTable._render_body_line, SheetTable._render_cell
            try:  # DataTable's assembly (a blank cell per column out of view), every header
                SheetTable._render_body_line = (  # type: ignore[method-assign]
                    lambda self, *a: DataTable._render_line_in_row(self, *a))
                SheetTable._render_cell = (  # type: ignore[method-assign]
                    lambda self, r, *a, _cell=cell, **k: (
                        DataTable._render_cell if r == -1 else _cell)(self, r, *a, **k))
                theirs = lines()
            finally:
                SheetTable._render_body_line = original  # type: ignore[method-assign]
                SheetTable._render_cell = cell  # type: ignore[method-assign]
            assert len(mine) == grid.row_count + 1 > 4
            assert mine == theirs
