"""The scenario sheet: a fleet's scenarios as a spreadsheet, and everything done to them.

:class:`ScenarioSheet` owns the formula bar, the tab strip with the Scenarios and Training
grids (one row per scenario, outputs recomputed live), the details pane and the status line,
and the state behind them: the fleet's scenarios and outputs, marks, sort and filter, the cell
being edited and the queue of saves. The Models and GPUs tabs sit in its tab strip, because
the formula bar describes whichever tab is active, but they are widgets of their own
(:mod:`planner.tui.catalog_tabs`).

An edit is typed in the formula bar while the grid keeps the focus (:mod:`planner.tui.cell_edit`);
the row recomputes at once in the UI thread and a thread worker saves it, in edit order and
guarded by the row's version (:mod:`planner.tui.saves`), so another client's edit is never
overwritten: the conflict is shown with the fields that changed and the row reloads. Database
work runs in workers that post typed messages (:mod:`planner.tui.messages`) to the sheet; they
bubble on to the app, which shows the fleet's name and reports failures.

The app wires keys to the sheet: its bindings call the public methods here, and it hands over
the keys and pastes that reach it from a grid (:meth:`ScenarioSheet.grid_key`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Static, TabbedContent, TabPane
from textual.widgets.data_table import RowKey
from textual.worker import get_current_worker

from planner.compare import compare, option_group, options_table
from planner.domain import Change, ConflictError, Fleet, Scenario
from planner.errors import PlannerError, ValidationError
from planner.estimator.architecture import ModelSpec
from planner.estimator.gpu import GpuSpec
from planner.present import comparison_table
from planner.service.edits import CheckedEdit, check_edit
from planner.sheet import verdict
from planner.sheet.explain import render_text
from planner.sheet.table import KINDS
from planner.tui import cells, gc_policy, rows
from planner.tui.catalog_tabs import CatalogTab, GpusTab, ModelsTab
from planner.tui.cell_edit import CellEdit
from planner.tui.column_jump import ColumnJump
from planner.tui.dialogs import (
    ConfirmDialog,
    EditDialog,
    FleetDialog,
    NewScenarioDialog,
    TextScreen,
)
from planner.tui.editline import LineBuffer
from planner.tui.formula_bar import FormulaBar
from planner.tui.grid import SheetTable
from planner.tui.measurements_tab import MeasurementsPane
from planner.tui.messages import (
    ExportDone,
    FleetLoaded,
    RowsChanged,
    RowsUpdated,
    ScenarioConflict,
    ScenarioSaved,
    WorkFailed,
)
from planner.tui.options_view import OptionsScreen
from planner.tui.outputs import OutputBlock, OutputStore, evaluate_store
from planner.tui.plan_tab import PlanPane
from planner.tui.saves import SaveQueue
from planner.tui.solve_view import SolveChoice
from planner.tui.types import GpuInfo, ModelInfo, WorkspaceRef
from planner.tui.views import SolveScreen, SweepScreen

if TYPE_CHECKING:
    from planner.sheet.explain import ExplainNode
    from planner.sheet.profiles import CalibrationFigures
    from planner.tui.types import Workspace

Job = Callable[["Workspace"], object]
"""A database action run by :meth:`ScenarioSheet.run`."""

Cell = tuple[Scenario | None, str | None, str | None]
"""(scenario, column key, column role) of a grid cell."""


class ScenarioSheet(Vertical):
    """The formula bar, the tabs with the scenario grids and the details pane, and the status
    line, over one fleet of the workspace."""

    def __init__(self, workspace: WorkspaceRef, *, fleet: str = "", id: str | None = None
                 ) -> None:
        super().__init__(id=id)
        self.workspace = workspace
        self.fleet = fleet
        """The fleet shown ('' until the first one is loaded)."""
        self.fleets: list[Fleet] = []
        self.scenarios: dict[int, Scenario] = {}
        self.outputs: OutputStore = OutputStore()
        """The scenarios' outputs: the fleet's as loaded kept as columns, rows recomputed since
        as dicts (:mod:`planner.tui.outputs`)."""
        self.marked: set[int] = set()
        self.sort_key: tuple[str, bool] | None = None
        """(column, descending), or None for by name."""
        self.filter_text = ""
        self.index: dict[str, rows.KindIndex] = {kind: rows.KindIndex([]) for kind in KINDS}
        """Per kind, the arrays the grid filters and sorts on (:class:`rows.KindIndex`)."""
        self._widths: dict[str, dict[str, int]] = {}
        """Per kind, the grid's column widths, measured over all its rows when laid out."""
        self._filter_timer: Timer | None = None
        self.models: list[ModelInfo] = []
        self.gpus: list[GpuInfo] = []
        self._model_specs: dict[str, ModelSpec] = {}
        self._gpu_specs: dict[str, GpuSpec] = {}
        self._profiles: list[CalibrationFigures] = []
        """The database's calibration profiles, read with each fleet load (edits, sweeps and
        solves evaluate with them, as the fleet does)."""
        self.pinned: dict[str, tuple[str, ...]] = dict(cells.PINNED)
        """Per kind, the outputs shown right after the scenario name."""
        self.folded: dict[str, frozenset[str]] = {"inference": frozenset(),
                                                  "training": frozenset()}
        """Per kind, the column groups folded into one column."""
        self.kind = "inference"
        """The active grid's scenario kind: inference or training."""
        self.loaded = False
        """Whether a fleet has been shown."""
        self.editing: CellEdit | None = None
        self.saves = SaveQueue()
        self._details_chosen = False
        """Whether ``v`` chose the details pane's mode (else it follows the width)."""

    # --------------------------------------------------------------- layout and loading
    def compose(self) -> ComposeResult:
        self._bar = FormulaBar(id="bar")
        self._grids = {kind: SheetTable(id=grid_id, fixed_columns=1,
                                        header_height=cells.HEADER_HEIGHT,
                                        zebra_stripes=True, cursor_type="cell")
                       for kind, grid_id in (("inference", "grid"), ("training", "train-grid"))}
        self._details = Static("Loading…", id="details")
        self._status = Static("", id="status")
        yield self._bar
        with TabbedContent(id="tabs", initial="scenarios"):
            with TabPane("Scenarios", id="scenarios"), Horizontal(id="main"):
                yield self._grids["inference"]
                yield self._details
            with TabPane("Training", id="training"):
                yield self._grids["training"]
            with TabPane("Models", id="models"):
                yield ModelsTab(self.workspace, id="models-table")
            with TabPane("GPUs", id="gpus"):
                yield GpusTab(self.workspace, id="gpus-table")
            with TabPane("Measurements", id="measurements"):
                yield MeasurementsPane(self.workspace, id="measurements-pane")
            with TabPane("Plan", id="plan"):
                yield PlanPane(self.workspace, id="plan-pane")
        yield self._status

    def focus_grid(self) -> None:
        """Give the focus to the active grid."""
        self._grid().focus()

    def use_catalog(self, models: list[ModelInfo], gpus: list[GpuInfo]) -> None:
        """The models and GPUs scenarios are computed from (choices, recomputes, explains)."""
        self.models, self.gpus = models, gpus
        self._model_specs = {m.name: m.spec for m in models}
        self._gpu_specs = {g.name: g.spec for g in gpus}
        cells.set_unmeasured_gpus(frozenset(g.name for g in gpus
                                            if not verdict.gpu_measured(g.spec)))

    @work(thread=True, exclusive=True, group="load")
    def load_fleet(self, fleet: str | None, focus_id: int | None = None) -> None:
        """Read a fleet (default: the first) and evaluate it, off the UI thread."""
        try:
            ws = self.workspace.get()
            fleets = ws.fleets()
            if not fleets:
                ws.new_fleet("default")
                fleets = ws.fleets()
            name = fleet if fleet in {f.name for f in fleets} else fleets[0].name
            self._profiles = ws.calibration_figures()
            total = next(f.scenario_count for f in fleets if f.name == name)
            if not self.complete and total > self.FIRST_ROWS:  # the first screen first
                first = ws.scenarios(name, limit=self.FIRST_ROWS)
                screen = self._loaded(name, first, self._evaluate(ws, first), fleets,
                                      focus_id, partial=True)
                drawn = screen.shown = threading.Event()
                self.post_message(screen)
                # the rest is read once the first screen is drawn: the UI thread is not kept
                # waiting for the interpreter lock while it draws it
                drawn.wait(self.FIRST_SCREEN_WAIT_S)
            scenarios, outputs = self._read_pages(ws, name)
            message = self._loaded(name, scenarios, outputs, fleets, focus_id)
        except Exception as exc:
            self.post_message(WorkFailed("Could not load the fleet", str(exc), reload=False))
            return
        self.post_message(message)

    FIRST_SCREEN_WAIT_S = 2.0
    """Longest the loader waits for the first screen to be drawn before reading the rest."""
    FIRST_ROWS = 500
    """A fleet bigger than this shows its first rows (by name) while the rest loads."""
    complete = False
    """Whether a whole fleet has been shown (not only its first rows)."""

    PAGE_ROWS = 16_384
    """A fleet is read and evaluated this many scenarios at a time: what it holds at once
    besides what it keeps (the database's rows, the evaluation's intermediate arrays) stays
    that of one page, whatever the fleet's size."""

    def _read_pages(self, ws: Workspace, fleet: str) -> tuple[list[Scenario], OutputStore]:
        """Every scenario of ``fleet`` (by name) and their outputs, read and evaluated a page
        at a time (:data:`PAGE_ROWS`), equal input values shared (:func:`rows.share_values`),
        the outputs kept as columns, a block per page and kind."""
        scenarios: list[Scenario] = []
        blocks: list[OutputBlock] = []
        seen: dict[str, dict[Any, Any]] = {}
        after: str | None = None
        while True:
            page = rows.share_values(ws.scenarios(fleet, limit=self.PAGE_ROWS, after=after),
                                     seen)
            blocks += self._evaluate(ws, page).blocks
            scenarios += page
            if len(page) < self.PAGE_ROWS:
                return scenarios, OutputStore(blocks)
            after = page[-1].name

    @staticmethod
    def _evaluate(ws: Workspace, scenarios: list[Scenario]) -> OutputStore:
        """The outputs of ``scenarios``, kept as the evaluation's columns."""
        values = ws.evaluate_columns(scenarios)
        return evaluate_store(scenarios, values.by_kind, values.models, values.gpus,
                              values.profiles)

    def _loaded(self, name: str, scenarios: list[Scenario], outputs: OutputStore,
                fleets: list[Fleet], focus_id: int | None, partial: bool = False
                ) -> FleetLoaded:
        """A fleet read in a worker, with what the grid needs computed there too: the arrays
        it filters and sorts on, and its column widths (every row measured)."""
        index = {kind: rows.KindIndex([s for s in scenarios if s.kind == kind])
                 for kind in KINDS}
        layouts = {kind: self._layout(kind) for kind in KINDS}
        by_id = {s.id: s for s in scenarios}
        widths = {kind: self._measure(kind, np.fromiter((s.id for s in scenarios
                                                         if s.kind == kind), dtype=np.int64),
                                      by_id, outputs, layouts[kind])
                  for kind in KINDS}
        return FleetLoaded(name, scenarios, outputs, fleets, focus_id, index, widths, layouts,
                           partial)

    @staticmethod
    def _measure(kind: str, ids: np.ndarray, by_id: Mapping[int, Scenario],
                 outputs: OutputStore, columns: tuple[tuple[str, str, str], ...]
                 ) -> dict[str, int]:
        """The widths of ``columns`` over the rows ``ids`` (:func:`cells.column_widths`),
        the outputs of the rows past the first measured ones read column by column."""
        head = ids[:cells.MEASURED_ROWS]
        rest = ids[cells.MEASURED_ROWS:]
        measured = [(by_id[i], outputs[i]) for i in head.tolist()]
        return cells.column_widths(
            kind, measured, columns, rest=[by_id[i] for i in rest.tolist()],
            rest_outputs=lambda key: outputs.gather(key, rest),
            rest_row=lambda at: outputs[int(rest[at])])

    def reload(self) -> None:
        """Read the fleet again (after a failed save, or a catalog change)."""
        self.load_fleet(self.fleet)

    @on(FleetLoaded)
    def _fleet_loaded(self, message: FleetLoaded) -> None:
        self.fleet = message.fleet
        self.fleets = message.fleets
        self.scenarios = {s.id: s for s in message.scenarios}
        self.saves.read({s.id: s.version for s in message.scenarios})
        self.outputs = message.outputs
        self.marked &= set(self.scenarios)
        self.index = message.index or {kind: rows.KindIndex(
            [s for s in message.scenarios if s.kind == kind]) for kind in KINDS}
        same_layout = message.layouts == {kind: self._layout(kind) for kind in KINDS}
        self._rebuild_grids(message.focus_id, message.widths if same_layout else None)
        if self.query_one("#tabs", TabbedContent).active == "plan":  # another fleet's plan
            self.query_one(PlanPane).load(self.fleet)
        if not self.loaded or self.app.focused is None:
            self._grid().focus()
        if not self.loaded:
            self.poll_timer = self.set_interval(self.POLL_S, self._poll_tick, name="poll")
        self.loaded = True
        if message.partial:
            if message.shown is not None:
                self.call_after_refresh(message.shown.set)
            total = next((f.scenario_count for f in self.fleets if f.name == self.fleet), 0)
            self._status.update(f"showing the first {len(self.scenarios):,} of {total:,} "
                                "scenarios by name; reading the rest…")
            return
        if not self.complete:  # keep the collector off the fleet's objects (gc_policy)
            self.complete = True
            gc_policy.loaded()
            if len(self.scenarios) > self.FIRST_ROWS:
                self._status.update(f"{len(self.scenarios):,} scenarios")
        else:
            self.call_after_refresh(gc_policy.reloaded)  # after the grid is drawn

    # --------------------------------------------------------------- other clients
    POLL_S = 2.0
    """How often the fleet's version counters are read to show other clients' edits."""
    poll_timer: Timer | None = None

    def _poll_tick(self) -> None:
        if self.loaded and self.fleet and not self._busy():
            self.poll()

    def _busy(self) -> bool:
        """Whether a load or a save of this sheet is under way (it reads the rows again
        itself, and a poll meanwhile would race it for the cursor)."""
        return any(w.group in ("load", "save") and not w.is_finished
                   for w in self.app.workers)

    @work(thread=True, exclusive=True, group="poll")
    def poll(self) -> None:
        """Compare the fleet's version counters with the rows shown; read and evaluate the
        rows another client changed (and reload the fleet if rows came or went)."""
        fleet = self.fleet
        try:
            ws = self.workspace.get()
            stamp = (fleet, ws.scenario_stamp(fleet))
            if stamp == self._polled:  # no write since the rows matched: nothing to read
                return
            versions = ws.scenario_versions(fleet)
            shown = {i: sc.version for i, sc in list(self.scenarios.items())}
            if versions.keys() != shown.keys():
                self.app.call_from_thread(self._rows_came_or_went, fleet, set(versions))
                return
            if versions == shown:
                self._polled = stamp
                return
            stale = {i for i, v in versions.items() if v > shown[i]
                     and not self.saves.pending(i)}
            if not stale:
                return
            fresh = self._read_rows(ws, fleet, stale)
            outputs = ws.evaluate_many(fresh)
        except Exception:  # the next tick tries again; a poll never interrupts the user
            return
        self.post_message(RowsChanged(fleet, fresh, outputs))

    _polled: tuple[str, tuple[Any, ...]] | None = None
    """(fleet, :meth:`Workspace.scenario_stamp`) when the rows shown last matched the
    database's: while the stamp stays, a poll reads nothing more."""

    POLL_ONE_BY_ONE = 50
    """Up to this many rows changed elsewhere are read one by one, not with the fleet."""

    def _read_rows(self, ws: Workspace, fleet: str, ids: set[int]) -> list[Scenario]:
        """The scenarios ``ids`` of ``fleet`` as stored now: a few read by name, one by one
        (a 100,000-row fleet is not read for them); many, or one renamed meanwhile, with
        the whole fleet."""
        if len(ids) <= self.POLL_ONE_BY_ONE:
            fresh = []
            for sid in sorted(ids):
                shown = self.scenarios.get(sid)
                try:
                    sc = ws.scenario(fleet, shown.name) if shown is not None else None
                except PlannerError:  # renamed or deleted meanwhile
                    sc = None
                if sc is None or sc.id != sid:
                    break
                fresh.append(sc)
            else:
                return fresh
        return [sc for sc in ws.scenarios(fleet) if sc.id in ids]

    def _rows_came_or_went(self, fleet: str, ids: set[int], queued: bool = False) -> None:
        """Another client added or deleted scenarios (``ids``: the fleet's, as polled): read
        the fleet again, unless a cell is being edited (the next poll tries again) or the
        rows shown are those ids by now (this sheet's own new or deleted row, put in place
        after the poll read the versions). The check is made again :data:`REQUEUE_S` later
        first: a row action's worker may have finished with its rows still on their way
        (reading the whole fleet for them would take seconds at 100,000 rows)."""
        if ids == self.scenarios.keys() or self._busy():  # busy: the next poll looks again
            return
        if not queued:  # a finished worker's message may still be on its way to the queue
            self.set_timer(self.REQUEUE_S, lambda: self._rows_came_or_went(fleet, ids, True),
                           name="rows came or went")
            return
        if fleet == self.fleet and self.editing is None and len(self.app.screen_stack) == 1 \
                and not self._busy():
            sc = self._current()[0]
            self.load_fleet(fleet, sc.id if sc is not None else None)

    REQUEUE_S = 0.1
    """How long a poll's "rows came or went" waits for row actions' messages already sent."""

    @on(RowsChanged)
    def _rows_changed(self, message: RowsChanged) -> None:
        if message.fleet != self.fleet:
            return
        names = []
        for sc, outputs in zip(message.scenarios, message.outputs, strict=True):
            old = self.scenarios.get(sc.id)
            if old is None or old.version >= sc.version or self.saves.pending(sc.id):
                continue
            self._store(sc, outputs)
            self.saves.read({sc.id: sc.version})
            if rows.haystack(old) != rows.haystack(sc):  # renamed elsewhere: it may move
                self._show_rows(sc.id, (sc.kind,))
            self._refresh_row(sc.id)
            changed = rows.changed_fields(old, sc)
            names.append(f"{sc.name} ({', '.join(changed)})")
            edit = self.editing
            if edit is not None and edit.sid == sc.id:  # keep the edit, say what moved
                edit.checked = None
                theirs = ", ".join(f"{k} = {v!r}" for k, v in changed.items())
                edit.error = (f"changed elsewhere meanwhile: {theirs}. Enter saves your "
                              "value on top, Esc keeps theirs.")
                self._draw_edit()
        if names:
            self._status.update("changed elsewhere, refreshed: " + "; ".join(names))
            self._show_details()

    # --------------------------------------------------------------- grid
    def _grid(self, kind: str | None = None) -> SheetTable:
        return self._grids[kind or self.kind]

    def _visible(self, kind: str) -> np.ndarray:
        """The ids the grid of ``kind`` shows, in order (filtered and sorted on arrays)."""
        return self.index[kind].visible(self.filter_text, self.sort_key, self.scenarios,
                                        self.outputs)

    def _rebuild_grids(self, focus_id: int | None = None,
                       widths_by_kind: dict[str, dict[str, int]] | None = None,
                       remeasure: bool = True) -> None:
        """Lay the grids out again (columns and widths: ``widths_by_kind`` if measured
        already; without ``remeasure``, the widths known, measuring only new columns) and
        show their rows."""
        self._end_edit()  # rows may move or vanish: an unfinished cell edit is dropped
        for kind in KINDS:
            table = self._grid(kind)
            keep = table.cursor_coordinate
            table.clear(columns=True)
            names = self.index[kind].names
            # fixed widths, from the header and every row's values: a stable layout (no
            # re-measuring as rows are filtered, sorted or arrive), and no number cut short
            layout = self._layout(kind)
            known = {} if remeasure else self._widths.get(kind, {})
            if widths_by_kind:
                known = widths_by_kind[kind]
            missing = tuple(c for c in layout if c[0] not in known)
            widths = {**known, **(self._measure(kind, self.index[kind].ids, self.scenarios,
                                                self.outputs, missing) if missing else {})}
            widths["name"] = max([len(n) + 2 for n in names] + [12, known.get("name", 0)])
            self._widths[kind] = widths
            for key, header, role in layout:
                style = {"output": "bold italic cyan", "input": "bold"}.get(role, "bold")
                table.add_column(Text(header, style=style), key=key, width=widths[key])
            self._show_kind(kind, focus_id, keep)
        self._show_details()

    def _show_rows(self, focus_id: int | None = None, kinds: tuple[str, ...] = KINDS
                   ) -> None:
        """Show the rows the filter and sort give, in place (the columns stay), the cursor on
        ``focus_id`` if it is shown, else at its row. A name or value wider than its column
        lays the grids out again."""
        self._end_edit()  # rows may move or vanish: an unfinished cell edit is dropped
        for kind in kinds:
            self._show_kind(kind, focus_id, self._grid(kind).cursor_coordinate)
        self._show_details()

    def _show_kind(self, kind: str, focus_id: int | None, keep: Any) -> None:
        table = self._grid(kind)
        ids = self._visible(kind)
        table.show_rows(ids, self._row)
        if not len(ids):
            return
        row = min(keep.row, len(ids) - 1)
        if focus_id is not None and focus_id in self.scenarios and \
                self.scenarios[focus_id].kind == kind:
            at = table.get_row_index(str(focus_id)) if str(focus_id) in table.rows else None
            row = row if at is None else at
        table.move_cursor(row=row, column=keep.column)

    def _store(self, sc: Scenario, outputs: Mapping[str, Any]) -> None:
        """Keep a scenario as read or recomputed, and its place in the kind's arrays: a new
        or renamed row moves to its place in name order, any other change drops the sort."""
        old = self.scenarios.get(sc.id)
        self.scenarios[sc.id], self.outputs[sc.id] = sc, outputs
        index = self.index[sc.kind]
        if old is None:
            index.add(sc)
        elif rows.haystack(old) != rows.haystack(sc):
            index.replace(sc)
        else:
            index.changed()

    def _widen(self, sid: int, relayout: bool = True) -> None:
        """Widen the columns a row's values no longer fit, and lay the grids out with the
        widths known (nothing else measured again)."""
        sc, outputs = self.scenarios[sid], self.outputs[sid]
        widths, role = self._widths.setdefault(sc.kind, {}), cells.roles(sc.kind)
        for key in list(widths):
            need = len(sc.name) + 2 if key == "name" else (
                cells.cell_width(sc, outputs, key, role[key]) if key in role else 0)
            widths[key] = max(widths[key], need)
        if relayout:
            self._rebuild_grids(sid, remeasure=False)

    def _fits(self, sid: int) -> bool:
        """Whether every cell of a row fits the widths its grid was laid out with."""
        sc = self.scenarios[sid]
        widths = self._widths.get(sc.kind)
        if widths is None:
            return False
        if len(sc.name) + 2 > widths["name"]:
            return False
        outputs, role = self.outputs[sid], cells.roles(sc.kind)
        return all(width >= cells.cell_width(sc, outputs, key, role[key])
                   for key, width in widths.items() if key != "name" and key in role)

    def _row(self, sid: int) -> cells.GridRow:
        return cells.GridRow(self.scenarios[sid], self.outputs[sid], sid in self.marked)

    def _refresh_row(self, sid: int) -> None:
        sc = self.scenarios[sid]
        table = self._grid(sc.kind)
        if RowKey(str(sid)) not in table.rows:
            return
        outputs = self.outputs[sid]
        role = cells.roles(sc.kind)
        narrow = [c for c in table.ordered_columns if c.key.value != "name" and c.width
                  < cells.cell_width(sc, outputs, c.key.value or "", role[c.key.value or ""])]
        if narrow:  # a value wider than its column: lay the grids out again (rare)
            self._widen(sid)
            return
        table.update_row(str(sid), self._row(sid))

    def _current(self) -> Cell:
        """(scenario, column key, column role) under the cursor of the active grid."""
        table = self._grid()
        if not table.row_count:
            return None, None, None
        coord = table.cursor_coordinate
        row_key, col_key = table.coordinate_to_cell_key(coord)
        sc = self.scenarios.get(int(row_key.value or 0))
        return sc, col_key.value, cells.roles(self.kind).get(col_key.value or "")

    def _layout(self, kind: str) -> tuple[tuple[str, str, str], ...]:
        """The grid's columns as the user arranged them (pinned outputs, folded groups)."""
        return cells.grid_columns(kind, self.pinned[kind], self.folded[kind])

    def pin(self) -> None:
        """Pin the output column under the cursor right after the scenario name, or unpin
        a pinned one (back to its group)."""
        _, key, role = self._current()
        if key is None or role != "output":
            self.notify("Pin works on computed columns (italic cyan).", title="Pin")
            return
        pinned = self.pinned[self.kind]
        self.pinned[self.kind] = (tuple(k for k in pinned if k != key) if key in pinned
                                  else (*pinned, key))
        self._relayout(key)

    DETAILS_MODES = ("wide", "narrow", "hidden")
    """How the details pane shows: beside the grid, narrowed to 44 columns, or not at all."""
    DETAILS_MIN_WIDTH = 120
    """Below this many terminal columns the details pane starts hidden, so the grid shows
    its pinned verdicts at 80 × 24; ``v`` brings it back."""

    def details_mode(self) -> str:
        """The details pane's mode (one of :data:`DETAILS_MODES`)."""
        classes = self._details.classes
        return "hidden" if "hidden" in classes else "narrow" if "narrow" in classes else "wide"

    def set_details(self, mode: str) -> None:
        """Show the details pane wide, narrow or hidden."""
        self._details.set_class(mode == "narrow", "narrow")
        self._details.set_class(mode == "hidden", "hidden")

    def cycle_details(self) -> None:
        """``v``: wide → narrow → hidden → wide; the choice sticks through resizes."""
        modes = self.DETAILS_MODES
        mode = modes[(modes.index(self.details_mode()) + 1) % len(modes)]
        self._details_chosen = True
        self.set_details(mode)
        self._status.update(f"details pane {mode} (v cycles)")

    def on_resize(self, event: events.Resize) -> None:
        """Until ``v`` chose a mode: the details pane hidden below
        :data:`DETAILS_MIN_WIDTH` columns, wide above."""
        if not self._details_chosen:
            self.set_details("hidden" if event.size.width < self.DETAILS_MIN_WIDTH else "wide")

    def column_choices(self) -> list[tuple[str, str]]:
        """(key, label with unit) of every column of the active grid, folded groups
        included, in grid order: what go-to-column lists."""
        every = cells.grid_columns(self.kind, self.pinned[self.kind])
        return [(key, " ".join(header.split())) for key, header, role in every
                if role != "group"]

    def goto_column(self) -> None:
        """Open go-to-column; the cursor moves to the column picked (its group unfolded)."""
        if not self.loaded:
            return

        def picked(key: str | None) -> None:
            if key is None:
                return
            group = cells.group_of(key, cells.roles(self.kind).get(key, ""))
            if group in self.folded[self.kind]:
                self.folded[self.kind] = self.folded[self.kind] - {group}
            self._relayout(key)
            self.focus_grid()

        self._open(ColumnJump(self.column_choices()), picked)

    def fold(self) -> None:
        """Fold the column group under the cursor (inputs, memory, latency, cost) into one
        column, or unfold a folded one."""
        _, key, role = self._current()
        if key is None:
            return
        group = key.removeprefix("group:") if role == "group" else cells.group_of(key,
                                                                                    role or "")
        if not group:
            return
        folded = self.folded[self.kind]
        self.folded[self.kind] = folded - {group} if group in folded else folded | {group}
        self._relayout(f"group:{group}" if group in self.folded[self.kind] else key)
        self._status.update(f"{group} {'folded' if group in self.folded[self.kind] else 'unfolded'}"
                            " (g toggles)")

    def _relayout(self, key: str) -> None:
        """Rebuild the grids after a layout change, the cursor on column ``key``."""
        sc, _, _ = self._current()
        self._rebuild_grids(sc.id if sc is not None else None, remeasure=False)
        keys = [k for k, _h, _r in self._layout(self.kind)]
        table = self._grid()
        if key in keys and table.row_count:
            table.move_cursor(row=table.cursor_coordinate.row, column=keys.index(key))

    @on(TabbedContent.TabActivated)
    def _tab(self, event: TabbedContent.TabActivated) -> None:
        self._end_edit()
        pane = event.pane.id or ""
        table = self.query_one({"training": "#train-grid", "models": "#models-table",
                                "gpus": "#gpus-table", "measurements": "#measurements-table",
                                "plan": "#plan-table"}.get(pane, "#grid"), DataTable)
        if pane == "measurements":
            self.query_one(MeasurementsPane).load()
        if pane == "plan":
            self.query_one(PlanPane).load(self.fleet)

        def refocus() -> None:  # the focused table was on the tab just hidden
            focused = self.app.focused
            if focused is None or not focused.display or (
                    isinstance(focused, DataTable) and focused is not table):
                table.focus()

        self.call_after_refresh(refocus)
        if pane in ("scenarios", "training"):
            self.kind = "inference" if pane == "scenarios" else "training"
            self._show_details()
        elif isinstance(table, CatalogTab):
            self._bar.show_cell(*table.BAR_NOTE)

    @on(DataTable.CellHighlighted, "#grid, #train-grid")
    def _moved(self, _event: DataTable.CellHighlighted) -> None:
        edit = self.editing
        if edit is not None:
            sc, key, _ = self._current()
            if sc is None or (sc.id, key) != (edit.sid, edit.key):
                self._end_edit()  # the cursor left the cell (a mouse click): drop the edit
        self._show_details()

    @on(DataTable.CellSelected, "#grid, #train-grid")
    def _selected(self, _event: DataTable.CellSelected) -> None:
        self.edit()

    def _show_details(self) -> None:
        """Redraw the formula bar and the details pane for the cell under the cursor."""
        sc, key, role = self._current()
        tree = self._explain_tree(sc, key, depth=2) if (
            sc is not None and key and role == "output") else None
        if self.editing is None:
            self._show_bar(sc, key, role, tree)
        if self.kind != "inference":
            return
        if sc is None:
            self._details.update("No scenario selected. Press n to create one.")
            return

        gpu = next((g for g in self.gpus if g.name == sc.gpu), None)
        memory = gpu.spec.memory_bytes if gpu else self.outputs[sc.id].get(
            "gpu_memory_bytes", 0)
        self._details.update(cells.details(sc, self.outputs[sc.id], memory,
                                            render_text(tree) if tree is not None else ""))

    def _show_bar(self, sc: Scenario | None, key: str | None, role: str | None,
                  tree: ExplainNode | None = None) -> None:
        """The formula bar for a cell that is not being edited (``tree``: the output's
        explanation, if the caller has it already)."""
        if sc is None or key is None:
            self._bar.show_cell("", "No scenario here: n creates one, f switches fleet.")
            return
        if role == "output" and tree is None:
            tree = self._explain_tree(sc, key, depth=1)
        self._bar.show_scenario(sc, self.outputs[sc.id], key, role,
                                tree.formula if tree is not None else "")

    def _explain_tree(self, sc: Scenario, column: str, depth: int = 8) -> ExplainNode | None:
        return rows.explain_tree(sc, column, self.models, self.gpus, depth, self._profiles)

    # --------------------------------------------------------------- editing
    def edit(self) -> None:
        """Edit the cell under the cursor (a name is renamed in a dialog)."""
        sc, key, role = self._current()
        if sc is None or key is None:
            return
        if role == "group":
            self.fold()  # Enter on a folded group unfolds it
            return
        if role == "output":
            self.notify(f"{key} is computed from the inputs; press x to see why.",
                        title="Read-only column")
            return
        if key == "name":
            self.rename()
            return
        if key == "lora_targets" and not sc.inputs.get("lora_rank"):
            self.notify("LoRA targets apply to LoRA training only: set lora_rank above 0 "
                        "first.", title="Not editable at rank 0")
            return
        self._begin_edit(sc, key)

    def _begin_edit(self, sc: Scenario, key: str, typed: str = "") -> None:
        """Edit an input cell in the formula bar; the grid keeps the focus."""
        edit = rows.cell_edit(sc, self.outputs[sc.id], key, self.models, self.gpus)
        self.editing = edit
        if typed:
            edit.buffer.insert(typed)
        edit.error = self._edit_error(edit) if typed or edit.choices is not None else ""
        self._draw_edit()

    def _draw_edit(self) -> None:
        edit = self.editing
        if edit is None:
            return
        if edit.choices is not None:
            self._bar.show_choices(edit.reference, edit.buffer, edit.shown, edit.index,
                                   edit.error)
        else:
            self._bar.show_edit(edit.reference, edit.buffer, edit.error, edit.hint)

    def _end_edit(self) -> None:
        if self.editing is not None:
            self.editing = None
            if self.loaded:
                self._show_bar(*self._current())

    def end_edit(self) -> None:
        """Drop an unfinished cell edit."""
        self._end_edit()

    def _edit_error(self, edit: CellEdit) -> str:
        """Why the edit's value is refused ('' if the scenario accepts it): the column's rules,
        then the whole scenario recomputed with it (e.g. parallelism must divide heads)."""
        sc = self.scenarios.get(edit.sid)
        if sc is None:
            return "this scenario no longer exists; Esc cancels"
        try:
            self._checked(sc, edit)
        except PlannerError as exc:
            return str(exc)
        return ""

    def _checked(self, sc: Scenario, edit: CellEdit) -> CheckedEdit:
        """The edit checked and evaluated (:func:`check_edit`), once per value typed: Enter
        reuses the check made while typing."""
        try:
            raw = edit.raw()
        except PlannerError as exc:
            edit.checked = None
            raise exc from None
        cached = edit.checked
        if cached is None or cached[0] != raw or (
                isinstance(cached[1], CheckedEdit) and cached[1].before is not sc):
            try:
                edit.checked = (raw, self._check(sc, {edit.key: raw}))
            except PlannerError as exc:
                edit.checked = (raw, exc)
        result = edit.checked[1]
        if isinstance(result, PlannerError):
            raise result
        return result  # type: ignore[no-any-return]

    def grid_key(self, event: events.Key) -> bool:
        """Handle a key that reached the app from a grid; True if it was the sheet's.

        The editor's keys while a cell is edited (all of them); Enter starts editing here and
        now (through DataTable's select binding it would wait for a message, and keys typed
        right after it would reach the grid instead of the editor); a digit typed on a number
        cell starts editing it, as in a spreadsheet."""
        edit = self.editing
        if len(self.app.screen_stack) > 1:  # a dialog is opening: its keys are not the grid's
            return False
        if edit is None:
            if event.key == "enter":
                self.edit()
                return True
            if event.character and event.character in "0123456789.":
                sc, key, role = self._current()
                column = rows.input_column(sc.kind, key) if sc and key and role == "input" \
                    else None
                if sc is not None and column is not None and column.kind in ("int", "float"):
                    self._begin_edit(sc, key or "", typed=event.character)
                    return True
            return False
        outcome = edit.press(event.key, event.character)
        if outcome == "cancel":
            self._end_edit()
        elif outcome == "accept":
            self._accept_edit(edit)
        elif outcome == "changed":
            edit.error = self._edit_error(edit)
            self._draw_edit()
        return True

    def paste(self, text: str) -> None:
        """Pasted text goes into the cell being edited (the grid itself ignores pastes)."""
        if self.editing is not None and self.editing.paste(text) == "changed":
            self.editing.error = self._edit_error(self.editing)
            self._draw_edit()

    def _accept_edit(self, edit: CellEdit) -> None:
        sc = self.scenarios.get(edit.sid)
        if sc is None:
            self._end_edit()
            return
        try:
            checked = self._checked(sc, edit)
        except PlannerError as exc:  # stay in the editor and say why
            edit.error = str(exc)
            self._draw_edit()
            return
        self.editing = None
        self._commit(checked)

    def _check(self, sc: Scenario, changes: dict[str, Any]) -> CheckedEdit:
        return check_edit(sc, changes, self._model_specs, self._gpu_specs, self._profiles)

    def apply_changes(self, sc: Scenario, changes: dict[str, Any]) -> bool:
        """Accept several fields as one change: validated together against the whole
        scenario, recomputed now and saved in a worker as one change set (one undo step).
        Nothing is applied if the set as a whole is refused; True if it was accepted."""
        if not changes:
            return False
        try:
            checked = self._check(sc, changes)
        except PlannerError as exc:
            self.notify(str(exc), title="Not changed", severity="error")
            return False
        self._commit(checked)
        return True

    def _commit(self, checked: CheckedEdit) -> None:
        """Show an accepted edit's row at once and save it in a worker. The row is drawn
        first; the details pane (a re-layout of the screen) follows in the next frame."""
        sc = checked.before
        self._store(checked.after, checked.outputs)
        self._refresh_row(sc.id)
        self._show_bar(*self._current())
        self.call_after_refresh(self._show_details)
        self.save_edit(self.saves.enqueue(sc.id, sc.version), checked)

    @work(thread=True, group="save")
    def save_edit(self, ticket: int, checked: CheckedEdit) -> None:
        """Save one checked edit, in its turn (:class:`SaveQueue`), guarded by the row's
        version: nothing is parsed or evaluated again."""
        sc = checked.before
        worker = get_current_worker()
        with self.saves.turn(ticket, sc.id, lambda: worker.is_cancelled) as expected:
            if expected is None:  # the app is closing
                return
            try:
                ws = self.workspace.get()
                result = ws.save_edit(checked, expected_version=expected)
                saved = result.scenario
                self.saves.wrote(sc.id, saved.version)
            except ConflictError as exc:
                try:
                    fresh = ws.scenario(sc.fleet, sc.name)
                    self.post_message(ScenarioConflict(fresh, ws.evaluate(fresh),
                                                       exc.changed, dict(checked.changes)))
                except Exception as inner:
                    self.post_message(WorkFailed("Edit refused", f"{exc} ({inner})"))
                return
            except Exception as exc:
                self.post_message(WorkFailed("Could not save the edit", str(exc)))
                return
        self.post_message(ScenarioSaved(saved, result.outputs))

    @on(ScenarioSaved)
    def _saved(self, message: ScenarioSaved) -> None:
        sc = message.scenario
        self._status.update(f"saved {sc.fleet}/{sc.name} (version {sc.version})", layout=False)
        if self.saves.pending(sc.id):  # a newer edit of this row is on its way: keep it shown
            return
        self._store(sc, message.outputs)
        self._refresh_row(sc.id)
        self._show_details()

    @on(ScenarioConflict)
    def _conflict(self, message: ScenarioConflict) -> None:
        """Another client changed the row first: show their row, and keep the user's edit.
        An edit of other fields is applied on top of theirs (checked again); an edit of a
        field they changed too stays in the formula bar, to save over theirs or drop."""
        sc = message.scenario
        theirs = ", ".join(f"{k} = {v!r}" for k, v in message.changed.items()) or "unknown"
        mine = message.mine
        yours = ", ".join(f"{k} = {v!r}" for k, v in mine.items())
        self._store(sc, message.outputs)
        self.saves.read({sc.id: sc.version})
        self._refresh_row(sc.id)
        self._show_details()
        both = sorted(mine.keys() & message.changed.keys())
        if mine and not both:
            try:
                checked = self._check(sc, mine)
            except PlannerError as exc:
                self._warn_conflict(f"{sc.name} was changed by someone else: {theirs}. "
                                    f"Your edit ({yours}) no longer applies: {exc}")
                return
            self._warn_conflict(f"{sc.name} was changed by someone else: {theirs}. "
                                f"Your edit ({yours}) was applied on top of theirs.")
            self._commit(checked)
            return
        self._warn_conflict(f"{sc.name} was changed by someone else: {theirs}. The row shows "
                            f"theirs; yours ({yours}) is kept in the formula bar: Enter saves "
                            "it over theirs, Esc keeps theirs.")
        if len(mine) == 1:
            self._reopen_edit(sc, *next(iter(mine.items())), theirs)

    def _warn_conflict(self, text: str) -> None:
        self.notify(text, title="Changed elsewhere", severity="warning", timeout=12)

    def _reopen_edit(self, sc: Scenario, key: str, value: Any, theirs: str) -> None:
        """Put a refused value back in the formula bar on its cell (if the grid shows it)."""
        table = self._grid(sc.kind)
        keys = [c.key.value for c in table.ordered_columns]
        if self.editing is not None or sc.kind != self.kind or key not in keys \
                or RowKey(str(sc.id)) not in table.rows:
            return
        table.move_cursor(row=table.get_row_index(str(sc.id)), column=keys.index(key))
        edit = rows.cell_edit(sc, self.outputs[sc.id], key, self.models, self.gpus)
        shown = rows.edit_text(value)
        if edit.choices is not None:
            edit.index = edit.choices.index(shown) if shown in edit.choices else edit.index
        else:
            edit.buffer = LineBuffer.of(shown)
        self.editing = edit
        edit.error = f"changed elsewhere: {theirs}. Enter saves yours, Esc keeps theirs."
        self._draw_edit()

    # --------------------------------------------------------------- row actions
    def _open(self, screen: Screen[Any], then: Callable[[Any], object] | None = None) -> None:
        """Open a dialog or view of the sheet. When it closes the focus is back on the grid
        it was opened from (not on the tab strip, where the next keys would switch tabs),
        then ``then`` gets its result."""
        grid = self._grid()

        def closed(result: Any) -> None:
            grid.focus()
            if then is not None:
                then(result)

        self.app.push_screen(screen, closed)

    def _prompt(self, title: str, value: str, then: Callable[[str], object],
                help_text: str = "") -> None:
        """Ask for a name in a dialog; ``then`` gets it unless the dialog was cancelled."""
        def parse(text: str) -> str:
            if not text.strip() or len(text.strip()) > 200:
                raise ValidationError("name", "must be 1 to 200 characters", value=text)
            return text.strip()

        def done(name: str | None) -> None:
            if name:
                then(name)

        self._open(EditDialog(title, value, parse=parse, help_text=help_text), done)

    def new(self) -> None:
        """A new scenario: name, model and GPU asked in a dialog (the model and GPU chosen by
        typing a filter), starting at the current row's model and GPU."""
        sc, _, _ = self._current()
        models, gpus = [m.name for m in self.models], [g.name for g in self.gpus]
        model = sc.model if sc else (models[0] if models else "")
        gpu = sc.gpu if sc else (gpus[0] if gpus else "")
        kind = self.kind

        def done(answer: tuple[str, str, str] | None) -> None:
            if answer:
                name, model, gpu = answer
                self.run("create", lambda ws: ws.new_scenario(self.fleet, name, model=model,
                                                              gpu=gpu, kind=kind))

        self._open(NewScenarioDialog(f"New {kind} scenario", models, gpus, model, gpu,
                                     help_text="Default inputs; edit cells afterwards."),
                   done)

    def duplicate(self) -> None:
        """A copy of the current scenario, named in a dialog."""
        sc, _, _ = self._current()
        if sc is None:
            return
        self._prompt("Duplicate as", f"{sc.name} copy", lambda name: self.run(
            "duplicate", lambda ws: ws.copy_scenario(sc.fleet, sc.name, name)))

    def rename(self) -> None:
        """Rename the current scenario in a dialog."""
        sc, _, _ = self._current()
        if sc is None:
            return
        self._prompt("Rename", sc.name, lambda name: name != sc.name and self.run(
            "rename", lambda ws: ws.set_scenario(sc.fleet, sc.name, {"name": name},
                                                 expected_version=sc.version)))

    def delete(self) -> None:
        """Delete the current scenario, once confirmed."""
        sc, _, _ = self._current()
        if sc is None:
            return

        def done(yes: bool | None) -> None:
            if yes:
                self.run("delete", lambda ws: ws.delete_scenario(sc.fleet, sc.name),
                         removed=sc.id)

        self._open(ConfirmDialog(f"Delete scenario [b]{sc.name}[/]?"), done)

    def undo(self) -> None:
        """Undo the fleet's last change (the database's change log)."""
        self.run("undo", lambda ws: ws.undo(self.fleet), empty="Nothing to undo")

    def redo(self) -> None:
        """Redo the fleet's last undone change."""
        self.run("redo", lambda ws: ws.redo(self.fleet), empty="Nothing to redo")

    @work(thread=True, group="save")
    def run(self, what: str, job: Job, empty: str = "", fleet: str | None = None,
            removed: int | None = None) -> None:
        """Run a database action in a worker, then update the grid in place: the scenario it
        returns (or, for an undo or redo, the one its changes touched) is read back and
        evaluated here, and ``removed`` (an id it deleted) leaves the grid. With ``fleet``,
        switch to that fleet instead. Nothing done (``empty``, say "Nothing to undo") only
        says so: nothing is read again."""
        current = self.fleet
        try:
            ws = self.workspace.get()
            result = job(ws)
            if fleet is not None:
                self.load_fleet(fleet)
                return
            if result is None and empty:
                self.app.call_from_thread(self.notify, empty)
                return
            if isinstance(result, list) and result:  # an undo or redo: say what it changed
                shown = self.scenarios
                names = {c.scenario_id: shown[c.scenario_id].name for c in result
                         if c.scenario_id in shown}  # the rows it touched, not the fleet
                self.app.call_from_thread(self.notify,
                                          rows.describe_step(what, result, names),
                                          title=what.capitalize(), timeout=12)
                result = self._stepped(ws, current, result, undo=what == "undo")
        except Exception as exc:
            self.post_message(WorkFailed(f"Could not {what}", str(exc)))
            return
        if isinstance(result, Scenario):
            try:
                outputs = ws.evaluate(result)
            except Exception:  # shown after a reload, with its error (it was saved)
                self.load_fleet(current, result.id)
                return
            self.post_message(RowsUpdated(current, [result], [outputs], focus_id=result.id))
        elif removed is not None:
            self.post_message(RowsUpdated(current, [], [], removed=[removed]))
        else:
            self.load_fleet(current)

    def _stepped(self, ws: Workspace, fleet: str, changes: list[Change], *, undo: bool
                 ) -> Scenario | None:
        """The scenario an undo or redo changed, read back (None if it cannot be found:
        the caller reads the fleet again). Its name is the one the step left."""
        sid = changes[0].scenario_id
        if any(c.scenario_id != sid for c in changes):  # a step over several rows (an option
            return None                                 # group's choice): read the fleet
        named = [c for c in changes if c.field == "name"]
        name = (named[0].old_value if undo else named[0].new_value) if named else (
            self.scenarios[sid].name if sid in self.scenarios else None)
        if not isinstance(name, str):
            return None
        try:
            sc = ws.scenario(fleet, name)
        except PlannerError:
            return None
        return sc if sc.id == sid else None

    @on(RowsUpdated)
    def _rows_updated(self, message: RowsUpdated) -> None:
        """Put a row action's rows in place (no reload): the arrays and the grids change
        only at those rows."""
        if message.fleet != self.fleet:
            return
        kinds: set[str] = set()
        moved = bool(message.removed)
        for sid in message.removed:
            sc = self.scenarios.pop(sid, None)
            self.outputs.pop(sid, None)
            self.marked.discard(sid)
            if sc is not None:
                self.index[sc.kind].remove(sid)
                kinds.add(sc.kind)
        relayout = False
        for sc, outputs in zip(message.scenarios, message.outputs, strict=True):
            old, place = self.scenarios.get(sc.id), self._place(sc)
            moved = moved or not self._stays(old, sc, outputs)
            self._store(sc, outputs)
            # a rename that keeps its place in name order keeps it in the grid too
            moved = moved or place != self._place(sc)
            self.saves.read({sc.id: sc.version})
            kinds.add(sc.kind)
            relayout = relayout or not self._fits(sc.id)
        if relayout:  # a name or value wider than its column (rare)
            for sc in message.scenarios:
                self._widen(sc.id, relayout=False)
            self._rebuild_grids(message.focus_id, remeasure=False)
        elif moved:
            self._show_rows(message.focus_id, tuple(k for k in KINDS if k in kinds))
        else:  # every row stays where it is shown: redraw those rows only, as an edit does
            self._end_edit()
            for sc in message.scenarios:
                self._refresh_row(sc.id)
            self._focus(message.focus_id)
            self._show_details()

    def _place(self, sc: Scenario) -> int | None:
        """The position of scenario ``sc.id`` in its kind's name order (None: not there)."""
        where = np.flatnonzero(self.index[sc.kind].ids == sc.id)
        return int(where[0]) if len(where) else None

    def _stays(self, old: Scenario | None, sc: Scenario, outputs: Mapping[str, Any]) -> bool:
        """Whether a scenario read back (``old``: as shown) can keep its place in the grids,
        its place in name order aside: it was shown, the filter keeps or drops it as
        before, and the value sorted on did not change."""
        if old is None or old.kind != sc.kind:
            return False
        needle = self.filter_text.lower()
        if needle and (needle in rows.haystack(old)) != (needle in rows.haystack(sc)):
            return False
        if self.sort_key is None:
            return True
        key = self.sort_key[0]
        return rows.sort_value(old, self.outputs[sc.id], key) == rows.sort_value(
            sc, outputs, key)

    def _focus(self, sid: int | None) -> None:
        """Put the cursor on scenario ``sid``'s row (its column kept), if the grid shows it."""
        if sid is None or sid not in self.scenarios:
            return
        table = self._grid(self.scenarios[sid].kind)
        if str(sid) in table.rows:
            table.move_cursor(row=table.get_row_index(str(sid)),
                              column=table.cursor_coordinate.column)

    # --------------------------------------------------------------- view actions
    def sort(self) -> None:
        """Sort by the current column; again: descending."""
        _, key, _ = self._current()
        if key is None:
            return
        reverse = self.sort_key is not None and self.sort_key == (key, False)
        self.sort_key = (key, reverse)
        self._show_rows(None, (self.kind,))
        self._status.update(f"sorted by {key} ({'descending' if reverse else 'ascending'})")

    FILTER_DEBOUNCE_S = 0.15
    """How long typing in the filter must pause before a big fleet is filtered."""
    FILTER_DEBOUNCE_ROWS = 20_000
    """Fleets up to this many scenarios are filtered at every keystroke (a few ms)."""

    def filter_rows(self, text: str) -> None:
        """Show only the rows that contain ``text`` ('' shows all). In a big fleet the
        filter waits for typing to pause (:data:`FILTER_DEBOUNCE_S`): each keystroke only
        restarts the wait."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
        if len(self.scenarios) <= self.FILTER_DEBOUNCE_ROWS or not text:
            self._apply_filter(text)
            return
        self._filter_timer = self.set_timer(self.FILTER_DEBOUNCE_S,
                                            lambda: self._apply_filter(text), name="filter")

    def _apply_filter(self, text: str) -> None:
        self._filter_timer = None
        self.filter_text = text
        self._show_rows()

    def mark(self) -> None:
        """Mark or unmark the current row (for compare)."""
        sc, _, _ = self._current()
        if sc is None:
            return
        self.marked ^= {sc.id}
        self._refresh_row(sc.id)

    def switch_fleet(self) -> None:
        """Choose another fleet, or name a new one, in a dialog."""
        def chosen(name: str | None) -> None:
            if not name:
                return
            if name.startswith("+"):
                new = name[1:]
                self.run("create the fleet", lambda ws: ws.new_fleet(new), fleet=new)
                return
            self.load_fleet(name)

        self._open(FleetDialog([(f.name, f.scenario_count) for f in self.fleets],
                                         self.fleet), chosen)

    def explain(self) -> None:
        """Why the current output has its value: formula and inputs."""
        sc, key, role = self._current()
        if sc is None or key is None:
            return
        if role != "output":
            self.notify("Explain works on computed columns (italic cyan).")
            return
        shown = cells.format_value(key, self.outputs[sc.id][key])
        self._open(TextScreen(f"Why {key} = {shown}", rows.explain_text(
            sc, key, self.models, self.gpus, profiles=self._profiles)))

    def compare(self) -> None:
        """Compare the marked scenarios, with deltas against the first."""

        ids = [i for i in self._visible(self.kind).tolist() if i in self.marked]
        if len(ids) < 2:
            self.notify("Mark two or more scenarios with Space, then press c.",
                        title="Compare")
            return
        scenarios = [self.scenarios[i] for i in ids]
        table = compare(scenarios, [self.outputs[i] for i in ids])
        self._open(TextScreen("Compare (Δ against the first)",
                                        comparison_table(scenarios, table)))

    def options(self) -> None:
        """The option group of the current scenario side by side; Enter chooses one (one
        undo step). See :mod:`planner.tui.options_view`."""
        sc, _, _ = self._current()
        if sc is None:
            return
        everything = list(self.scenarios.values())
        try:
            group = [everything[i] for i in option_group(everything, sc.name)]
        except ValidationError as exc:
            self.notify(str(exc).split(": ", 1)[-1], title="Options")
            return
        table = options_table(group, [self.outputs[s.id] for s in group])

        def chosen(name: str | None) -> None:
            if name is not None and not self.scenarios_named(name).chosen:
                # several rows change (the group's choice moves): the job returns no single
                # scenario, so the sheet reloads the fleet instead of updating one row
                self.run("choose the option",
                         lambda ws: (ws.choose_option(self.fleet, name), None)[1])

        self._open(OptionsScreen(self.fleet, table, sc.name), chosen)

    def scenarios_named(self, name: str) -> Scenario:
        """The fleet's scenario called ``name``."""
        return next(s for s in self.scenarios.values() if s.name == name)

    def sweep(self) -> None:
        """Vary the current input column of the current scenario."""

        sc, key, role = self._current()
        if sc is None or sc.kind != "inference":
            return
        column = key if role == "input" and key is not None else "batch"
        self._open(SweepScreen(sc, column, {m.name: m.spec for m in self.models},
                               {g.name: g.spec for g in self.gpus}, self._profiles))

    def solve(self) -> None:
        """Goal seek on the current scenario; the answer can be applied to the row."""

        sc, _, _ = self._current()
        if sc is None or sc.kind != "inference":
            return

        def apply(choice: SolveChoice | None) -> None:
            current = self.scenarios.get(sc.id)
            if choice is None or current is None:
                return
            if choice.options:  # the capacity answers, as options of the row (not chosen)
                self.run("add the answers as options",
                         lambda ws: (ws.add_options(current.fleet, current.name,
                                                    choice.options), None)[1])
                return
            # the answer is one change: gpus=13 with tp=1 is checked against tp=1, not
            # against the row's old tp, and saved (and undone) as one step
            if choice.changes:
                self.apply_changes(current, choice.changes)

        self._open(SolveScreen(sc, {m.name: m.spec for m in self.models},
                               {g.name: g.spec for g in self.gpus}, self._profiles), apply)

    def export(self) -> None:
        """Export the fleet to an Excel workbook, to a path asked for in a dialog."""
        default = str(documents_dir() / f"planner-{self.fleet}.xlsx")

        def chosen(path: str | None) -> None:
            if path:
                self.notify(f"Exporting fleet {self.fleet}…", title="Export")
                self._export(path)

        self._open(EditDialog("Export to Excel: file", default,
                                        help_text="An .xlsx path; an existing file is "
                                                  "replaced."), chosen)

    @work(thread=True, group="export")
    def _export(self, path: str) -> None:
        try:
            total = max(1, len(self.scenarios))
            done = [0]

            def progress(n: int) -> None:
                done[0] += n
                self.app.call_from_thread(self._status.update,
                                          f"exporting… {done[0]}/{total} scenarios")

            report = self.workspace.get().export(path, [self.fleet], force=True,
                                                 progress=progress)
            self.post_message(ExportDone(str(Path(path).resolve()), report.scenarios
                                         + report.training))
        except Exception as exc:
            self.post_message(WorkFailed("Export failed", str(exc), reload=False))

    @on(ExportDone)
    def _exported(self, message: ExportDone) -> None:
        self._status.update(f"wrote {message.path}")
        self.notify(f"Wrote {message.scenarios} scenarios to {message.path}", title="Exported",
                    timeout=10)


def documents_dir() -> Path:
    """Where an export goes by default: the user's documents folder (XDG ``DOCUMENTS``,
    ``~/Documents``), or the home folder when there is none; never the folder the planner
    happened to be started from."""
    from platformdirs import user_documents_dir

    documents = Path(user_documents_dir())
    return documents if documents.is_dir() else Path.home()
