"""The sheet's reading of the database: a fleet loaded off the UI thread (its first screen
first when big, then a page at a time), and the poll that shows other clients' edits.

The fleet is read and evaluated in a thread worker, which also builds what the grid filters
and sorts on and measures the column widths, and posts :class:`FleetLoaded`. Every
:data:`FleetLoading.POLL_S` the fleet's version counters are compared with the rows shown:
rows changed elsewhere are read back one by one, rows that came or went reload the fleet.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from textual import on, work
from textual.timer import Timer
from textual.widgets import TabbedContent

from planner.compute.table import KINDS
from planner.core.errors import PlannerError
from planner.spec.domain import Fleet, Scenario
from planner.tui.messages import (
    FleetLoaded,
    RowsChanged,
    WorkFailed,
)
from planner.tui.sheet.layout import SheetLayout
from planner.tui.state import cells, gc_policy, placement, rows
from planner.tui.state.failures import work_failures
from planner.tui.state.output_store import OutputBlock, OutputStore, evaluate_store
from planner.tui.widgets.plan_tab import PlanPane

if TYPE_CHECKING:
    from planner.tui.state.types import Workspace


class FleetLoading(SheetLayout):
    """Load a fleet, reload it, and poll for other clients' changes."""

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
        except work_failures() as exc:
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
        self._take_fleet(message)
        same_layout = message.layouts == {kind: self._layout(kind) for kind in KINDS}
        self._rebuild_grids(message.focus_id, message.widths if same_layout else None)
        if self.query_one("#tabs", TabbedContent).active == "plan":  # another fleet's plan
            self.query_one(PlanPane).load(self.fleet)
        self._first_load()
        self.loaded = True
        self._loaded_status(message)

    def _take_fleet(self, message: FleetLoaded) -> None:
        """Keep a loaded fleet's scenarios, their versions, outputs and per-kind index (the
        marks of rows no longer there dropped)."""
        self.fleet = message.fleet
        self.fleets = message.fleets
        self.scenarios = {s.id: s for s in message.scenarios}
        self.saves.read({s.id: s.version for s in message.scenarios})
        self.outputs = message.outputs
        self.marked &= set(self.scenarios)
        self.index = message.index or {kind: rows.KindIndex(
            [s for s in message.scenarios if s.kind == kind]) for kind in KINDS}

    def _first_load(self) -> None:
        """Focus the grid on the first load (or when nothing has the focus); the first load
        also starts polling for other clients' edits."""
        if not self.loaded or self.app.focused is None:
            self._grid().focus()
        if not self.loaded:
            self.poll_timer = self.set_interval(self.POLL_S, self._poll_tick, name="poll")

    def _loaded_status(self, message: FleetLoaded) -> None:
        """After a load: a partial one says how many rows show while the rest are read; the
        first complete one hands the fleet's objects to the collector policy (and counts
        the rows of a large fleet), a reload re-arms it once the grid is drawn."""
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
            stale = placement.stale(versions, shown, self.saves.pending)
            if not stale:
                return
            fresh = self._read_rows(ws, fleet, stale)
            outputs = ws.evaluate_many(fresh)
        except work_failures():  # the next tick tries again; a poll never interrupts the user
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
            name = self._row_changed(sc, outputs)
            if name is not None:
                names.append(name)
        if names:
            self._status.update("changed elsewhere, refreshed: " + "; ".join(names))
            self._show_details()

    def _row_changed(self, sc: Scenario, outputs: dict[str, Any]) -> str | None:
        """Put a row another client changed in place (unless it is not newer than the one
        shown, or this sheet's own save is pending); returns what changed, for the status
        line (``None`` when the row was left)."""
        old = self.scenarios.get(sc.id)
        if old is None or old.version >= sc.version or self.saves.pending(sc.id):
            return None
        self._store(sc, outputs)
        self.saves.read({sc.id: sc.version})
        if rows.haystack(old) != rows.haystack(sc):  # renamed elsewhere: it may move
            self._show_rows(sc.id, (sc.kind,))
        self._refresh_row(sc.id)
        changed = rows.changed_fields(old, sc)
        self._tell_editor(sc.id, changed)
        return f"{sc.name} ({', '.join(changed)})"

    def _tell_editor(self, sid: int, changed: dict[str, Any]) -> None:
        """An edit open on row ``sid`` is kept, saying what another client changed."""
        edit = self.editing
        if edit is not None and edit.sid == sid:  # keep the edit, say what moved
            edit.checked = None
            theirs = ", ".join(f"{k} = {v!r}" for k, v in changed.items())
            edit.error = (f"changed elsewhere meanwhile: {theirs}. Enter saves your "
                          "value on top, Esc keeps theirs.")
            self._draw_edit()
