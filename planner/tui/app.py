"""The terminal UI: a spreadsheet of a fleet's scenarios with live computed columns.

Keyboard first. The grid shows one row per scenario (name pinned left, inputs, then computed
outputs in italic cyan; rows that do not fit are marked ✗ in red). Enter or ``e`` edits a cell
in the formula bar above the grid, which keeps the focus (:mod:`planner.tui.cell_edit`); the
row recomputes at once in the UI thread (the estimator is fast) and the change is saved by a
thread worker, in edit order and guarded by the row's version (:mod:`planner.tui.saves`), so
another client's edit is never overwritten: the conflict is shown with the fields that changed
and the row reloads. Database work always runs in workers that post typed messages
(:mod:`planner.tui.messages`).

:func:`create_app` is the factory the CLI, the tests and the snapshots share.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Input,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.data_table import RowKey
from textual.worker import get_current_worker

from planner.domain import ConflictError, Scenario
from planner.errors import PlannerError, ValidationError
from planner.sheet.table import RowError
from planner.tui import gc_policy, render
from planner.tui.cell_edit import CellEdit
from planner.tui.dialogs import ConfirmDialog, EditDialog, FleetDialog, TextScreen
from planner.tui.editline import LineBuffer
from planner.tui.formula_bar import FormulaBar
from planner.tui.messages import (
    CatalogLoaded,
    ExportDone,
    FleetLoaded,
    ScenarioConflict,
    ScenarioSaved,
    WorkFailed,
)
from planner.tui.saves import SaveQueue
from planner.tui.table import SheetTable

CHOICE_FIELDS = ("model", "gpu")


class PlannerApp(App[None]):
    """The planner's terminal UI over one database."""

    TITLE = "planner"
    CSS = """
    #tabs { height: 1fr; }
    #main { height: 1fr; }
    #grid { width: 2fr; height: 1fr; }
    #details { width: 1fr; min-width: 44; height: 1fr; border-left: solid $accent;
               padding: 0 1; overflow-y: auto; }
    #filter { dock: top; display: none; }
    #filter.visible { display: block; }
    #status { height: 1; background: $boost; padding: 0 1; }
    DataTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("e,enter", "edit", "Edit", priority=False),
        Binding("n", "new", "New"),
        Binding("d", "duplicate", "Duplicate"),
        Binding("r", "rename", "Rename", show=False),
        Binding("delete", "delete", "Delete"),
        Binding("ctrl+z,u", "undo", "Undo"),
        Binding("ctrl+y,U", "redo", "Redo", show=False),
        Binding("s", "sort", "Sort"),
        Binding("slash", "filter", "Filter"),
        Binding("f", "fleet", "Fleet"),
        Binding("space", "mark", "Mark", show=False),
        Binding("c", "compare", "Compare"),
        Binding("w", "sweep", "Sweep"),
        Binding("o", "solve", "Solve"),
        Binding("x", "explain", "Explain", show=False),
        Binding("ctrl+e", "export", "Export"),
        Binding("i", "import_model", "Import model", show=False),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, url: str | None = None, *, fleet: str | None = None,
                 workspace: Any = None) -> None:
        super().__init__()
        self.url = url
        self._workspace = workspace
        self._open_lock = threading.Lock()
        self.fleet = fleet or ""
        self.scenarios: dict[int, Scenario] = {}
        self.outputs: dict[int, dict[str, Any]] = {}
        self.order: list[int] = []
        self.marked: set[int] = set()
        self.sort_key: tuple[str, bool] | None = None
        self.filter_text = ""
        self.models: list[Any] = []
        self.gpus: list[Any] = []
        self.fleets: list[Any] = []
        self.kind = "inference"
        self.loaded = False
        self.editing: CellEdit | None = None
        self.saves = SaveQueue()
        gc_policy.starting()

    # --------------------------------------------------------------- layout and loading
    @property
    def ws(self) -> Any:
        """The workspace (opened lazily, once, in the worker thread that first needs it)."""
        with self._open_lock:
            if self._workspace is None:
                from planner.service import Workspace

                self._workspace = Workspace.open(self.url)
        return self._workspace

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter rows by text (Esc clears)", id="filter")
        yield FormulaBar(id="bar")
        with TabbedContent(id="tabs", initial="scenarios"):
            with TabPane("Scenarios", id="scenarios"), Horizontal(id="main"):
                yield SheetTable(id="grid", fixed_columns=1, header_height=2,
                                 zebra_stripes=True, cursor_type="cell")
                yield Static("Loading…", id="details")
            with TabPane("Training", id="training"):
                yield SheetTable(id="train-grid", fixed_columns=1, header_height=2,
                                 zebra_stripes=True, cursor_type="cell")
            with TabPane("Models", id="models"):
                yield DataTable(id="models-table", fixed_columns=1, cursor_type="row")
            with TabPane("GPUs", id="gpus"):
                yield DataTable(id="gpus-table", fixed_columns=1, cursor_type="cell")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#filter", Input).can_focus = False
        self.query_one("#grid", DataTable).focus()
        self.load_catalog()
        self.load_fleet(self.fleet or None)

    @work(thread=True, exclusive=True, group="load")
    def load_fleet(self, fleet: str | None, focus_id: int | None = None) -> None:
        """Read a fleet (default: the first) and evaluate it, off the UI thread."""
        try:
            fleets = self.ws.fleets()
            if not fleets:
                self.ws.new_fleet("default")
                fleets = self.ws.fleets()
            name = fleet if fleet in {f.name for f in fleets} else fleets[0].name
            scenarios = self.ws.scenarios(name)
            outputs = self.ws.evaluate_many(scenarios)
        except Exception as exc:
            self.post_message(WorkFailed("Could not load the fleet", str(exc), reload=False))
            return
        self.post_message(FleetLoaded(name, scenarios, outputs, fleets, focus_id))

    @work(thread=True, group="catalog")
    def load_catalog(self) -> None:
        try:
            self.post_message(CatalogLoaded(self.ws.models(), self.ws.gpus()))
        except Exception as exc:
            self.post_message(WorkFailed("Could not load models and GPUs", str(exc), False))

    @on(FleetLoaded)
    def _fleet_loaded(self, message: FleetLoaded) -> None:
        self.fleet = message.fleet
        self.fleets = message.fleets
        self.scenarios = {s.id: s for s in message.scenarios}
        self.saves.read({s.id: s.version for s in message.scenarios})
        self.outputs = {s.id: o for s, o in zip(message.scenarios, message.outputs,
                                                strict=True)}
        self.marked &= set(self.scenarios)
        self.sub_title = f"fleet {self.fleet} — {len(self.scenarios)} scenarios"
        self._rebuild_grids(message.focus_id)
        if not self.loaded or self.focused is None:
            self._grid().focus()
        first, self.loaded = not self.loaded, True
        if first:  # keep the collector off the fleet's objects (planner.tui.gc_policy)
            gc_policy.loaded()
        else:
            self.call_after_refresh(gc_policy.reloaded)  # after the grid is drawn

    @on(CatalogLoaded)
    def _catalog_loaded(self, message: CatalogLoaded) -> None:
        from planner.units import GB, GiB, fmt_count

        self.models, self.gpus = message.models, message.gpus
        table = self.query_one("#models-table", DataTable)
        table.clear(columns=True)
        table.add_columns("model", "type", "params total", "params active",
                          "KV/token bf16 [B]", "source", "notes")
        for m in self.models:
            table.add_row(m.name, m.model_type, fmt_count(m.params_total),
                          fmt_count(m.params_active), fmt_count(m.kv_bytes_per_token_bf16),
                          m.source, m.notes, key=m.name)
        gtable = self.query_one("#gpus-table", DataTable)
        gtable.clear(columns=True)
        for key, label in GPU_COLUMNS:
            gtable.add_column(label, key=key)
        for g in self.gpus:
            spec = g.spec
            gtable.add_row(g.name, f"{spec.memory_bytes / GiB:,.2f}",
                           *(f"{spec.flops_per_s[d] / 1e12:,.1f}" if spec.flops_per_s.get(d)
                             else "–" for d in ("bf16", "fp8", "int8")),
                           f"{spec.bandwidth_bytes_per_s / GB:,.0f}",
                           f"{spec.price_usd_per_hour:,.2f}"
                           + (" (example)" if spec.price_is_example else ""), key=g.name)

    # --------------------------------------------------------------- grid
    def _grid(self, kind: str | None = None) -> SheetTable:
        return self.query_one("#grid" if (kind or self.kind) == "inference" else "#train-grid",
                              SheetTable)

    def _visible(self, kind: str) -> list[int]:
        ids = [i for i, s in self.scenarios.items() if s.kind == kind]
        if self.filter_text:
            needle = self.filter_text.lower()
            ids = [i for i in ids if needle in " ".join(
                (self.scenarios[i].name, self.scenarios[i].model, self.scenarios[i].gpu,
                 self.scenarios[i].notes)).lower()]
        if self.sort_key is not None:
            key, reverse = self.sort_key
            ids.sort(key=lambda i: _sort_value(self.scenarios[i], self.outputs[i], key),
                     reverse=reverse)
        else:
            ids.sort(key=lambda i: self.scenarios[i].name)
        return ids

    def _rebuild_grids(self, focus_id: int | None = None) -> None:
        self._end_edit()  # rows may move or vanish: an unfinished cell edit is dropped
        for kind in ("inference", "training"):
            table = self._grid(kind)
            keep = table.cursor_coordinate
            table.clear(columns=True)
            ids = self._visible(kind)
            names = [self.scenarios[i].name for i in ids]
            for key, header, role in render.grid_columns(kind):
                style = {"output": "bold italic cyan", "input": "bold"}.get(role, "bold")
                from rich.text import Text

                # fixed widths: a stable layout (no re-measuring as rows arrive)
                width = (max([len(n) + 2 for n in names] + [12]) if key == "name"
                         else render.column_width(key, header))
                table.add_column(Text(header, style=style), key=key, width=width)
            table.set_rows((str(i), self._row(i)) for i in ids)
            if focus_id is not None and focus_id in ids and kind == self.scenarios[
                    focus_id].kind:
                table.move_cursor(row=ids.index(focus_id), column=keep.column)
            elif ids:
                table.move_cursor(row=min(keep.row, len(ids) - 1), column=keep.column)
        self._show_details()

    def _row(self, sid: int) -> render.GridRow:
        return render.GridRow(self.scenarios[sid], self.outputs[sid], sid in self.marked)

    def _refresh_row(self, sid: int) -> None:
        table = self._grid(self.scenarios[sid].kind)
        if RowKey(str(sid)) in table.rows:
            table.update_row(str(sid), self._row(sid))

    def _current(self) -> tuple[Scenario | None, str | None, str | None]:
        """(scenario, column key, column role) under the cursor of the active grid."""
        table = self._grid()
        if not table.row_count:
            return None, None, None
        coord = table.cursor_coordinate
        row_key, col_key = table.coordinate_to_cell_key(coord)
        sc = self.scenarios.get(int(row_key.value or 0))
        roles = {k: r for k, _h, r in render.grid_columns(self.kind)}
        return sc, col_key.value, roles.get(col_key.value or "")

    @on(TabbedContent.TabActivated)
    def _tab(self, event: TabbedContent.TabActivated) -> None:
        self._end_edit()
        table = self.query_one({"scenarios": "#grid", "training": "#train-grid",
                                "models": "#models-table", "gpus": "#gpus-table"}.get(
            event.pane.id or "", "#grid"))

        def refocus() -> None:  # the focused table was on the tab just hidden
            if self.focused is None or not self.focused.display or (
                    isinstance(self.focused, DataTable) and self.focused is not table):
                table.focus()

        self.call_after_refresh(refocus)
        if event.pane.id in ("scenarios", "training"):
            self.kind = "inference" if event.pane.id == "scenarios" else "training"
            self._show_details()
        else:
            self.query_one("#bar", FormulaBar).show_cell(
                "Models" if event.pane.id == "models" else "GPUs",
                "Enter edits the selected value" if event.pane.id == "gpus"
                else "Enter edits a model's notes · i imports a config.json",
                "Every scenario follows a change to its model or GPU.")

    @on(DataTable.CellHighlighted, "#grid, #train-grid")
    def _moved(self, _event: DataTable.CellHighlighted) -> None:
        edit = self.editing
        if edit is not None:
            sc, key, _ = self._current()
            if sc is None or (sc.id, key) != (edit.sid, edit.key):
                self._end_edit()  # the cursor left the cell (a mouse click): drop the edit
        self._show_details()

    @on(DataTable.CellSelected)
    @on(DataTable.RowSelected)
    def _selected(self, _event: DataTable.CellSelected) -> None:
        self.action_edit()

    def _show_details(self) -> None:
        """Redraw the formula bar and the details pane for the cell under the cursor."""
        sc, key, role = self._current()
        tree = self._explain_tree(sc, key, depth=2) if (
            sc is not None and key and role == "output") else None
        if self.editing is None:
            self._show_bar(sc, key, role, tree)
        if self.kind != "inference":
            return
        pane = self.query_one("#details", Static)
        if sc is None:
            pane.update("No scenario selected. Press n to create one.")
            return
        from planner.sheet.explain import render_text

        gpu = next((g for g in self.gpus if g.name == sc.gpu), None)
        memory = gpu.spec.memory_bytes if gpu else self.outputs[sc.id].get(
            "gpu_memory_bytes", 0)
        pane.update(render.details(sc, self.outputs[sc.id], memory,
                                   render_text(tree) if tree is not None else ""))

    def _show_bar(self, sc: Scenario | None, key: str | None, role: str | None,
                  tree: Any = None) -> None:
        """The formula bar for a cell that is not being edited (``tree``: the output's
        explanation, if the caller has it already)."""
        bar = self.query_one("#bar", FormulaBar)
        if sc is None or key is None:
            bar.show_cell("", "No scenario here: n creates one, f switches fleet.")
            return
        reference = f"{sc.name} · {key}"
        if role == "output":
            tree = tree if tree is not None else self._explain_tree(sc, key, depth=1)
            shown = render.format_value(key, self.outputs[sc.id].get(key))
            formula = f"   = {tree.formula}" if tree is not None and tree.formula else ""
            bar.show_cell(reference, f"{shown}{formula}",
                          "computed, read-only · x explains it with the values it used")
            return
        column = _input_column(sc.kind, key)
        if column is None:
            hint = {"name": "Enter renames", "lora_targets": "modules LoRA adapts; Enter edits"
                    }.get(key, "Enter chooses from the catalog")
            bar.show_cell(reference, str(getattr(sc, key)), hint)
            return
        unit = f" {column.measured_unit}" if column.measured_unit else ""
        bar.show_cell(reference, f"{render.cell(sc, self.outputs[sc.id], key, role)}{unit}",
                      f"{column.help} · {column.allowed()} · Enter edits")

    def _explain_tree(self, sc: Scenario, column: str, depth: int = 8) -> Any:
        """The explanation tree of one output (None if its model or GPU is missing)."""
        from planner import service

        try:
            model = next(m for m in self.models if m.name == sc.model).spec
            gpu = next(g for g in self.gpus if g.name == sc.gpu).spec
            return service.explain(model, gpu, _inputs(sc), column, kind=sc.kind,
                                   lora_targets=sc.lora_targets, depth=depth)
        except (StopIteration, PlannerError):
            return None

    def _explain_text(self, sc: Scenario, column: str, depth: int = 8) -> str:
        from planner.sheet.explain import render_text

        tree = self._explain_tree(sc, column, depth)
        return render_text(tree) if tree is not None else ""

    # --------------------------------------------------------------- editing
    def action_edit(self) -> None:
        tab = self.query_one(TabbedContent).active
        if tab == "gpus":
            self._edit_gpu()
            return
        if tab == "models":
            self._edit_model_notes()
            return
        sc, key, role = self._current()
        if sc is None or key is None:
            return
        if role == "output":
            self.notify(f"{key} is computed from the inputs; press x to see why.",
                        title="Read-only column")
            return
        if key == "name":
            self.action_rename()
            return
        self._begin_edit(sc, key)

    # ---- the formula-bar editor
    def _begin_edit(self, sc: Scenario, key: str, typed: str = "") -> None:
        """Edit an input cell in the formula bar; the grid keeps the focus."""
        column = _input_column(sc.kind, key)
        reference = f"{sc.name} · {key}"
        if key in CHOICE_FIELDS:
            names = [m.name for m in self.models] if key == "model" else [
                g.name for g in self.gpus]
            edit = CellEdit.of_choices(sc.id, key, reference, "", str, names,
                                       getattr(sc, key))
        elif key == "lora_targets":
            edit = CellEdit(sc.id, key, reference,
                            "comma-separated modules: q,k,v,o,gate,up,down or all",
                            lambda text: text.strip(), LineBuffer.of(sc.lora_targets))
        elif column.kind in ("choice", "bool"):
            choices = list(column.choices) if column.kind == "choice" else ["yes", "no"]
            current = str(sc.inputs[key]) if column.kind == "choice" else (
                "yes" if sc.inputs[key] else "no")
            edit = CellEdit.of_choices(sc.id, key, reference, column.help, column.parse,
                                       choices, current)
        else:
            unit = f" [{column.measured_unit}]" if column.measured_unit else ""
            text = str(render.cell(sc, self.outputs[sc.id], key, "input")).replace(",", "")
            edit = CellEdit(sc.id, key, reference + unit,
                            f"{column.help} · {column.allowed()}", column.parse,
                            LineBuffer.of(text))
        self.editing = edit
        if typed:
            edit.buffer.insert(typed)
        edit.error = self._edit_error(edit) if typed or edit.choices is not None else ""
        self._draw_edit()

    def _draw_edit(self) -> None:
        edit = self.editing
        if edit is None:
            return
        bar = self.query_one("#bar", FormulaBar)
        if edit.choices is not None:
            bar.show_choices(edit.reference, edit.buffer, edit.shown, edit.index, edit.error)
        else:
            bar.show_edit(edit.reference, edit.buffer, edit.error, edit.hint)

    def _end_edit(self) -> None:
        if self.editing is not None:
            self.editing = None
            if self.loaded:
                self._show_bar(*self._current())

    def _edit_error(self, edit: CellEdit) -> str:
        """Why the edit's value is refused ('' if the scenario accepts it): the column's rules,
        then the whole scenario recomputed with it (e.g. parallelism must divide heads)."""
        sc = self.scenarios.get(edit.sid)
        if sc is None:
            return "this scenario no longer exists; Esc cancels"
        try:
            self._recompute(sc, {edit.key: edit.value()})
        except PlannerError as exc:
            return str(exc)
        return ""

    def _grid_key(self, event: Any) -> bool:
        """Keys reaching the grid: the editor's while a cell is edited (all of them); Enter
        starts editing here and now (through DataTable's select binding it would wait for a
        message, and keys typed right after it would reach the grid instead of the editor); a
        digit typed on a number cell starts editing it, as in a spreadsheet."""
        edit = self.editing
        if len(self.screen_stack) > 1:  # a dialog is opening: its keys are not the grid's
            return False
        if edit is None:
            if event.key == "enter":
                self.action_edit()
                return True
            if event.character and event.character in "0123456789.":
                sc, key, role = self._current()
                column = _input_column(sc.kind, key) if sc and key and role == "input" \
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

    def on_paste(self, event: Any) -> None:
        """Pasted text goes into the cell being edited (the grid itself ignores pastes)."""
        if self.editing is not None and self.editing.paste(event.text) == "changed":
            self.editing.error = self._edit_error(self.editing)
            self._draw_edit()

    def _accept_edit(self, edit: CellEdit) -> None:
        sc = self.scenarios.get(edit.sid)
        if sc is None:
            self._end_edit()
            return
        try:
            value = edit.value()
            new, outputs = self._recompute(sc, {edit.key: value})
        except PlannerError as exc:  # stay in the editor and say why
            edit.error = str(exc)
            self._draw_edit()
            return
        self.editing = None
        self._commit(sc, edit.key, value, new, outputs)

    def _recompute(self, sc: Scenario, changes: dict[str, Any]) -> tuple[Scenario,
                                                                          dict[str, Any]]:
        """The scenario with ``changes`` and its outputs (raises ValidationError if invalid)."""
        from planner.sheet.fleet import evaluate_scenarios

        meta = {k: v for k, v in changes.items() if k in ("model", "gpu", "lora_targets",
                                                          "name", "notes")}
        inputs = {**sc.inputs, **{k: v for k, v in changes.items() if k not in meta}}
        new = dataclasses.replace(sc, inputs=inputs, **meta)
        models = {m.name: m.spec for m in self.models}
        gpus = {g.name: g.spec for g in self.gpus}
        try:
            outputs = evaluate_scenarios([new], models, gpus)[0]
        except RowError as exc:  # one row: name the field, not the row
            raise ValidationError(exc.field, exc.allowed, value=exc.value) from None
        return new, outputs

    def _apply(self, sc: Scenario, key: str, value: Any) -> None:
        """Accept an edit: recompute the row now, save it in a worker."""
        if value is None:
            return
        try:
            new, outputs = self._recompute(sc, {key: value})
        except PlannerError as exc:
            self.notify(str(exc), title="Not changed", severity="error")
            return
        self._commit(sc, key, value, new, outputs)

    def _commit(self, sc: Scenario, key: str, value: Any, new: Scenario,
                outputs: dict[str, Any]) -> None:
        """Show an accepted edit's row at once and save it in a worker. The row is drawn
        first; the details pane (a re-layout of the screen) follows in the next frame."""
        self.scenarios[sc.id], self.outputs[sc.id] = new, outputs
        self._refresh_row(sc.id)
        self._show_bar(*self._current())
        self.call_after_refresh(self._show_details)
        self.save_edit(self.saves.enqueue(sc.id, sc.version), sc, {key: value})

    @work(thread=True, group="save")
    def save_edit(self, ticket: int, sc: Scenario, changes: dict[str, Any]) -> None:
        """Save one edit, in its turn (:class:`SaveQueue`), guarded by the row's version."""
        worker = get_current_worker()
        with self.saves.turn(ticket, sc.id, lambda: worker.is_cancelled) as expected:
            if expected is None:  # the app is closing
                return
            try:
                saved = self.ws.set_scenario(sc.fleet, sc.name, changes,
                                             expected_version=expected)
                self.saves.wrote(sc.id, saved.version)
            except ConflictError as exc:
                try:
                    fresh = self.ws.scenario(sc.fleet, sc.name)
                    self.post_message(ScenarioConflict(fresh, self.ws.evaluate(fresh),
                                                       exc.changed))
                except Exception as inner:
                    self.post_message(WorkFailed("Edit refused", f"{exc} ({inner})"))
                return
            except Exception as exc:
                self.post_message(WorkFailed("Could not save the edit", str(exc)))
                return
        try:
            self.post_message(ScenarioSaved(saved, self.ws.evaluate(saved)))
        except Exception as exc:
            self.post_message(WorkFailed("Saved, but could not re-evaluate", str(exc)))

    @on(ScenarioSaved)
    def _saved(self, message: ScenarioSaved) -> None:
        sc = message.scenario
        self.query_one("#status", Static).update(
            f"saved {sc.fleet}/{sc.name} (version {sc.version})", layout=False)
        if self.saves.pending(sc.id):  # a newer edit of this row is on its way: keep it shown
            return
        self.scenarios[sc.id], self.outputs[sc.id] = sc, message.outputs
        self._refresh_row(sc.id)
        self._show_details()

    @on(ScenarioConflict)
    def _conflict(self, message: ScenarioConflict) -> None:
        sc = message.scenario
        changed = ", ".join(f"{k} = {v!r}" for k, v in message.changed.items()) or "unknown"
        self.notify(f"{sc.name} was changed by someone else: {changed}. The row was reloaded; "
                    "your edit was not applied.", title="Changed elsewhere",
                    severity="warning", timeout=12)
        self.scenarios[sc.id], self.outputs[sc.id] = sc, message.outputs
        self._refresh_row(sc.id)
        self._show_details()

    @on(WorkFailed)
    def _failed(self, message: WorkFailed) -> None:
        if not self.loaded:
            gc_policy.loaded()  # no fleet to load: normal collection again
        self.notify(message.error, title=message.title, severity="error", timeout=10)
        if message.reload:
            self.load_fleet(self.fleet)

    # --------------------------------------------------------------- row actions
    def _prompt(self, title: str, value: str, callback: Any, help_text: str = "") -> None:
        def parse(text: str) -> str:
            if not text.strip() or len(text.strip()) > 200:
                raise ValidationError("name", "must be 1 to 200 characters", value=text)
            return text.strip()

        self.push_screen(EditDialog(title, value, parse=parse, help_text=help_text), callback)

    def action_new(self) -> None:
        sc, _, _ = self._current()
        model = sc.model if sc else (self.models[0].name if self.models else "")
        gpu = sc.gpu if sc else (self.gpus[0].name if self.gpus else "")
        self._prompt("New scenario: name", "", lambda name: name and self._run(
            "create", lambda: self.ws.new_scenario(self.fleet, name, model=model, gpu=gpu,
                                                   kind=self.kind)),
            help_text=f"{model} on {gpu}, default inputs; edit cells afterwards.")

    def action_duplicate(self) -> None:
        sc, _, _ = self._current()
        if sc is None:
            return
        self._prompt("Duplicate as", f"{sc.name} copy", lambda name: name and self._run(
            "duplicate", lambda: self.ws.copy_scenario(sc.fleet, sc.name, name)))

    def action_rename(self) -> None:
        sc, _, _ = self._current()
        if sc is None:
            return
        self._prompt("Rename", sc.name, lambda name: name and name != sc.name and self._run(
            "rename", lambda: self.ws.set_scenario(sc.fleet, sc.name, {"name": name},
                                                   expected_version=sc.version)))

    def action_delete(self) -> None:
        sc, _, _ = self._current()
        if sc is None:
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._run("delete", lambda: self.ws.delete_scenario(sc.fleet, sc.name))

        self.push_screen(ConfirmDialog(f"Delete scenario [b]{sc.name}[/]?"), done)

    def action_undo(self) -> None:
        self._run("undo", lambda: self.ws.undo(self.fleet), empty="Nothing to undo")

    def action_redo(self) -> None:
        self._run("redo", lambda: self.ws.redo(self.fleet), empty="Nothing to redo")

    @work(thread=True, group="save")
    def _run(self, what: str, job: Any, empty: str = "", fleet: str | None = None) -> None:
        """Run a database action in a worker, then reload the fleet (or switch to ``fleet``)."""
        try:
            result = job()
        except Exception as exc:
            self.post_message(WorkFailed(f"Could not {what}", str(exc)))
            return
        focus = result.id if isinstance(result, Scenario) else None
        if result is None and empty:
            self.call_from_thread(self.notify, empty)
        elif isinstance(result, list) and result:
            fields = ", ".join(f"{c.field}" for c in result)
            self.call_from_thread(self.notify, f"{what}: {fields}")
        self.load_fleet(fleet or self.fleet, focus)

    # --------------------------------------------------------------- view actions
    def action_sort(self) -> None:
        _, key, _ = self._current()
        if key is None:
            return
        reverse = self.sort_key is not None and self.sort_key == (key, False)
        self.sort_key = (key, reverse)
        self._rebuild_grids()
        self.query_one("#status", Static).update(
            f"sorted by {key} ({'descending' if reverse else 'ascending'})")

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.can_focus = True
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self._rebuild_grids()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self._grid().focus()

    def on_key(self, event: Any) -> None:
        """Keys that bubbled up from the focused widget, before the bindings see them.

        The grid's keys are handled here rather than in the grid: a binding (an arrow moving
        the cursor) runs when its key reaches the app, so handling Enter or a digit earlier,
        in the grid, would run it ahead of arrows typed before it ("→ → 3 2 Enter" typed fast
        would edit the cell the cursor started on)."""
        box = self.query_one("#filter", Input)
        if event.key == "escape" and box.has_focus:
            box.value = ""
            box.remove_class("visible")
            box.can_focus = False
            self._grid().focus()
        elif isinstance(self.focused, SheetTable) and self._grid_key(event):
            event.stop()
            event.prevent_default()  # the bindings (the grid's and the app's) are skipped

    def action_mark(self) -> None:
        sc, _, _ = self._current()
        if sc is None:
            return
        self.marked ^= {sc.id}
        self._refresh_row(sc.id)

    def action_fleet(self) -> None:
        def chosen(name: str | None) -> None:
            if not name:
                return
            if name.startswith("+"):
                new = name[1:]
                self._run("create the fleet", lambda: self.ws.new_fleet(new), fleet=new)
                return
            self.load_fleet(name)

        self.push_screen(FleetDialog([(f.name, f.scenario_count) for f in self.fleets],
                                     self.fleet), chosen)

    def action_explain(self) -> None:
        sc, key, role = self._current()
        if sc is None or key is None:
            return
        if role != "output":
            self.notify("Explain works on computed columns (italic cyan).")
            return
        shown = render.format_value(key, self.outputs[sc.id][key])
        self.push_screen(TextScreen(f"Why {key} = {shown}", self._explain_text(sc, key)))

    def action_compare(self) -> None:
        from planner.compare import compare
        from planner.present import comparison_table

        ids = [i for i in self._visible(self.kind) if i in self.marked]
        if len(ids) < 2:
            self.notify("Mark two or more scenarios with Space, then press c.",
                        title="Compare")
            return
        scenarios = [self.scenarios[i] for i in ids]
        rows = compare(scenarios, [self.outputs[i] for i in ids])
        self.push_screen(TextScreen("Compare (Δ against the first)",
                                    comparison_table(scenarios, rows)))

    def action_sweep(self) -> None:
        from planner.tui.views import SweepScreen

        sc, key, role = self._current()
        if sc is None or sc.kind != "inference":
            return
        column = key if role == "input" else "batch"
        self.push_screen(SweepScreen(sc, column, {m.name: m.spec for m in self.models},
                                     {g.name: g.spec for g in self.gpus}))

    def action_solve(self) -> None:
        from planner.tui.views import SolveScreen

        sc, _, _ = self._current()
        if sc is None or sc.kind != "inference":
            return

        def apply(changes: dict[str, Any] | None) -> None:
            if changes:
                for key, value in changes.items():
                    self._apply(self.scenarios[sc.id], key, value)

        self.push_screen(SolveScreen(sc, {m.name: m.spec for m in self.models},
                                     {g.name: g.spec for g in self.gpus}), apply)

    def action_export(self) -> None:
        default = str(Path.cwd() / f"planner-{self.fleet}.xlsx")

        def chosen(path: str | None) -> None:
            if path:
                self.notify(f"Exporting fleet {self.fleet}…", title="Export")
                self.export(path)

        self.push_screen(EditDialog("Export to Excel: file", default,
                                    help_text="An .xlsx path; an existing file is replaced."),
                         chosen)

    @work(thread=True, group="export")
    def export(self, path: str) -> None:
        try:
            total = max(1, len(self.scenarios))
            done = [0]

            def progress(n: int) -> None:
                done[0] += n
                self.call_from_thread(self.query_one("#status", Static).update,
                                      f"exporting… {done[0]}/{total} scenarios")

            report = self.ws.export(path, [self.fleet], force=True, progress=progress)
            self.post_message(ExportDone(str(Path(path).resolve()), report.scenarios
                                         + report.training))
        except Exception as exc:
            self.post_message(WorkFailed("Export failed", str(exc), reload=False))

    @on(ExportDone)
    def _exported(self, message: ExportDone) -> None:
        self.query_one("#status", Static).update(f"wrote {message.path}")
        self.notify(f"Wrote {message.scenarios} scenarios to {message.path}", title="Exported",
                    timeout=10)

    # --------------------------------------------------------------- catalog tabs
    def action_import_model(self) -> None:
        def chosen(path: str | None) -> None:
            if path:
                self._import_model(path)

        self.push_screen(EditDialog("Import a model: config.json path", "",
                                    help_text="A Hugging Face config.json (file or folder)."),
                         chosen)

    @work(thread=True, group="catalog")
    def _import_model(self, path: str) -> None:
        from planner import catalog

        try:
            file = Path(path).expanduser()
            file = file / "config.json" if file.is_dir() else file
            catalog.load_config(file)
            name = file.parent.name if file.stem == "config" else file.stem
            info = self.ws.import_model(file.read_text(encoding="utf-8"), name)
            self.call_from_thread(self.notify, f"Imported {info.name} ({info.params_total:,} "
                                  "params)", title="Model imported")
            self.post_message(CatalogLoaded(self.ws.models(), self.ws.gpus()))
        except Exception as exc:
            self.post_message(WorkFailed("Import failed", str(exc), reload=False))

    def _edit_model_notes(self) -> None:
        table = self.query_one("#models-table", DataTable)
        if not table.row_count:
            return
        name = str(table.coordinate_to_cell_key(table.cursor_coordinate)[0].value)
        model = next(m for m in self.models if m.name == name)

        def save(text: str | None) -> None:
            if text is not None:
                self._save_catalog(lambda: self.ws.set_model_notes(name, text))

        self.push_screen(EditDialog(f"{name}: notes", model.notes), save)

    def _edit_gpu(self) -> None:
        table = self.query_one("#gpus-table", DataTable)
        if not table.row_count:
            return
        row_key, col_key = table.coordinate_to_cell_key(table.cursor_coordinate)
        name, field = str(row_key.value), str(col_key.value)
        if field == "name":
            return
        gpu = next(g for g in self.gpus if g.name == name)
        from planner.catalog import gpu_record

        current = gpu_record(gpu.spec).get(field, 0)

        def parse(text: str) -> float:
            try:
                value = float(text.replace(",", ""))
            except ValueError:
                raise ValidationError(field, "must be a number of at least 0",
                                      value=text) from None
            if value < 0:
                raise ValidationError(field, "must be a number of at least 0", value=text)
            return value

        def save(value: float | None) -> None:
            if value is not None:
                self._save_catalog(lambda: self.ws.set_gpu(name, {field: value},
                                                           expected_version=gpu.version))

        self.push_screen(EditDialog(f"{name}: {field}", f"{current:g}", parse=parse,
                                    help_text="Every scenario on this GPU follows."), save)

    @work(thread=True, group="catalog")
    def _save_catalog(self, job: Any) -> None:
        try:
            job()
            self.post_message(CatalogLoaded(self.ws.models(), self.ws.gpus()))
            self.load_fleet(self.fleet)
        except Exception as exc:
            self.post_message(WorkFailed("Not saved", str(exc), reload=False))

    # --------------------------------------------------------------- app-level
    def action_help(self) -> None:
        from planner.tui.views import help_text

        self.push_screen(TextScreen("planner — keys", help_text(self.BINDINGS)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The sheet's actions wait while a dialog is open: until the dialog's field takes the
        focus, keys typed ahead (Enter, then a name, then Enter) fall through to the app's
        bindings and would open a second dialog over the first."""
        return not (action in _SHEET_ACTIONS and len(self.screen_stack) > 1)

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def get_system_commands(self, screen: Screen) -> Any:
        yield from super().get_system_commands(screen)
        for binding in self.BINDINGS:
            if binding.action in ("quit",):
                continue
            yield SystemCommand(binding.description or binding.action,
                                f"{binding.description} ({binding.key.split(',')[0]})",
                                lambda action=binding.action: self.run_action(action))

    def on_unmount(self) -> None:
        gc_policy.stopped()
        if self._workspace is not None:
            self._workspace.close()


_SHEET_ACTIONS = frozenset(b.action for b in PlannerApp.BINDINGS) - {"quit", "toggle_theme"}

GPU_COLUMNS = (("name", "GPU"), ("memory_gib", "memory [GiB]"),
               ("bf16_tflops", "bf16 [TFLOP/s]"), ("fp8_tflops", "fp8 [TFLOP/s]"),
               ("int8_tops", "int8 [TOP/s]"), ("memory_bandwidth_gb_per_s", "bandwidth [GB/s]"),
               ("price_usd_per_hour", "price [USD/GPU-h]"))


def _input_column(kind: str, key: str) -> Any:
    """The input column ``key`` of a scenario kind (None for name, model, gpu, LoRA targets)."""
    from planner.sheet.table import inputs_of

    return next((c for c in inputs_of(kind) if c.name == key), None)


def _inputs(sc: Scenario) -> dict[str, Any]:
    from planner.sheet.table import inputs_of

    names = {c.name for c in inputs_of(sc.kind)}
    return {k: v for k, v in sc.inputs.items() if k in names}


def _sort_value(sc: Scenario, outputs: dict[str, Any], key: str) -> Any:
    if key in ("name", "model", "gpu", "lora_targets"):
        return (0, str(getattr(sc, key)).lower())
    value = sc.inputs.get(key, outputs.get(key))
    if isinstance(value, (int, float)):
        return (0, float(value))
    return (1, str(value))


def create_app(url: str | None = None, *, fleet: str | None = None,
               workspace: Any = None) -> PlannerApp:
    """The app on the database at ``url`` (default: settings), or an open ``workspace``."""
    return PlannerApp(url, fleet=fleet, workspace=workspace)
