"""The scenario sheet's widgets and the state behind them, and how rows are shown.

:class:`SheetBase` composes the formula bar, the tab strip with the Scenarios and Training
grids, the details pane and the status line, and holds the fleet's scenarios and outputs,
marks, sort and filter, the column layout and the cell being edited. It draws rows into the
grids (shown as id arrays, :meth:`planner.tui.widgets.grid.SheetTable.show_rows`), one row
again after a change, and the formula bar and details pane for the cell under the cursor. The
concerns built on it are the classes above it in :mod:`planner.tui.sheet`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static, TabbedContent, TabPane
from textual.widgets.data_table import RowKey

from planner.compute import verdict
from planner.compute.explain import render_text
from planner.compute.table import KINDS
from planner.spec.architecture import ModelSpec
from planner.spec.domain import Fleet, Scenario
from planner.spec.gpu import GpuSpec
from planner.tui.state import cells, rows
from planner.tui.state.cell_edit import CellEdit
from planner.tui.state.output_store import OutputStore
from planner.tui.state.saves import SaveQueue
from planner.tui.state.types import GpuInfo, ModelInfo, WorkspaceRef
from planner.tui.widgets.catalog_tabs import GpusTab, ModelsTab
from planner.tui.widgets.details import DetailsPane
from planner.tui.widgets.formula_bar import FormulaBar
from planner.tui.widgets.grid import SheetTable
from planner.tui.widgets.measurements_tab import MeasurementsPane
from planner.tui.widgets.plan_tab import PlanPane

if TYPE_CHECKING:
    from planner.compute.explain import ExplainNode
    from planner.compute.profiles import CalibrationFigures
    from planner.tui.state.types import Workspace

Job = Callable[["Workspace"], object]
"""A database action run by :meth:`planner.tui.sheet.row_actions.RowActions.run`."""

Cell = tuple[Scenario | None, str | None, str | None]
"""(scenario, column key, column role) of a grid cell."""


class SheetBase(Vertical):
    """The formula bar, the tabs with the scenario grids and the details pane, and the status
    line, over one fleet of the workspace; with the rows' state and their drawing."""

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
        as dicts (:mod:`planner.tui.state.output_store`)."""
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


    def compose(self) -> ComposeResult:
        self._bar = FormulaBar(id="bar")
        self._grids = {kind: SheetTable(id=grid_id, fixed_columns=1,
                                        header_height=cells.HEADER_HEIGHT,
                                        zebra_stripes=True, cursor_type="cell")
                       for kind, grid_id in (("inference", "grid"), ("training", "train-grid"))}
        self._details = DetailsPane("Loading…", id="details")
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


    @staticmethod
    def _measure(kind: str, ids: np.ndarray, by_id: Mapping[int, Scenario],
                 outputs: OutputStore, columns: tuple[tuple[str, str, str], ...]
                 ) -> dict[str, int]:
        """The widths of ``columns`` over the rows ``ids``, for :meth:`_rebuild_grids`:
        measured by :meth:`planner.tui.sheet.loading.FleetLoading._measure`, a class above."""
        raise NotImplementedError

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

    def _show_details(self) -> None:
        """Redraw the formula bar and the details pane for the cell under the cursor."""
        sc, key, role = self._current()
        tree = self._explain_tree(sc, key, depth=2) if (
            sc is not None and key and role == "output") else None
        if self.editing is None:
            self._show_bar(sc, key, role, tree)
        if self.kind == "inference":
            self._show_pane(sc, tree)

    def _show_pane(self, sc: Scenario | None, tree: ExplainNode | None) -> None:
        """The details pane for an inference scenario (``tree``: the output's explanation
        under the cursor, if any); empty when there is no scenario."""
        if sc is None:
            self._details.show_scenario(None, {}, 0)
            return
        gpu = next((g for g in self.gpus if g.name == sc.gpu), None)
        memory = gpu.spec.memory_bytes if gpu else self.outputs[sc.id].get(
            "gpu_memory_bytes", 0)
        self._details.show_scenario(sc, self.outputs[sc.id], memory,
                                    render_text(tree) if tree is not None else "")

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
