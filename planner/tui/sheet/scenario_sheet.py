"""The scenario sheet: a fleet's scenarios as a spreadsheet, and everything done to them.

:class:`ScenarioSheet` is the widget the app holds; it is built by concern, each a class of
its own module that the next extends: :mod:`~planner.tui.sheet.base` (the widgets, the rows'
state and their drawing), :mod:`~planner.tui.sheet.layout` (pin, fold, details pane, tabs),
:mod:`~planner.tui.sheet.loading` (loading a fleet, polling for other clients' edits),
:mod:`~planner.tui.sheet.row_actions` (new, rename, delete, undo...) and
:mod:`~planner.tui.sheet.editing` (cell edits and their saves). This module adds the view
commands: sort, filter, mark, compare, explain, options, sweep, solve, export and switching
fleets. The Models, GPUs, Measurements and Plan tabs sit in its tab strip, because the formula
bar describes whichever tab is active, but they are widgets of their own
(:mod:`planner.tui.widgets`).

The app wires keys to the sheet: its bindings call the public methods here, and it hands over
the keys and pastes that reach it from a grid (:meth:`ScenarioSheet.grid_key`).
"""

from __future__ import annotations

from pathlib import Path

from textual import on, work

from planner.core.errors import ValidationError
from planner.present import comparison_table
from planner.service.compare import compare, option_group, options_table
from planner.spec.domain import Scenario
from planner.tui.messages import (
    ExportDone,
    WorkFailed,
)
from planner.tui.screens.dialogs import (
    EditDialog,
    FleetDialog,
    TextScreen,
)
from planner.tui.screens.options_view import OptionsScreen
from planner.tui.screens.solve_view import SolveChoice
from planner.tui.screens.views import SolveScreen, SweepScreen
from planner.tui.sheet.editing import CellEditing
from planner.tui.state import cells, rows
from planner.tui.state.failures import work_failures


class ScenarioSheet(CellEditing):
    """The formula bar, the tabs with the scenario grids and the details pane, and the status
    line, over one fleet of the workspace."""

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
        undo step). See :mod:`planner.tui.screens.options_view`."""
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
        except work_failures() as exc:
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

