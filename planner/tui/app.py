"""The terminal UI's app: the key map, the screen's layout, and the wiring between widgets.

Keyboard first. The work is done by widgets that own their state: the scenario sheet (grids,
formula bar, details pane; :mod:`planner.tui.sheet`), the Models and GPUs tabs
(:mod:`planner.tui.widgets.catalog_tabs`) and the dialogs (:mod:`planner.tui.screens.dialogs`,
:mod:`planner.tui.screens.views`). The app holds the bindings, so the footer, the help and the
command palette list every key in one order, and sends each action to the widget that owns it.
It loads the catalog and hands it to the widgets that use it, and reacts to the typed messages
(:mod:`planner.tui.messages`) that bubble up from the widgets' workers: a fleet was loaded, the
catalog changed, some work failed. The layout's CSS is in ``app.tcss``.

:func:`create_app` is the factory the CLI, the tests and the snapshots share.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, TabbedContent

from planner.spec.domain import Scenario
from planner.tui.messages import CatalogLoaded, FitDone, FleetLoaded, WorkFailed
from planner.tui.screens.dialogs import TextScreen
from planner.tui.screens.views import help_text
from planner.tui.sheet import ScenarioSheet
from planner.tui.state import gc_policy
from planner.tui.state.cell_edit import CellEdit
from planner.tui.state.failures import work_failures
from planner.tui.state.output_store import OutputStore
from planner.tui.state.types import WorkspaceRef
from planner.tui.widgets.catalog_tabs import GpusTab, ModelsTab
from planner.tui.widgets.grid import SheetTable
from planner.tui.widgets.measurements_tab import MeasurementsPane
from planner.tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from pathlib import PurePath

    from planner.tui.state.types import Workspace


KEYS = [
    Binding("e,enter", "edit", "Edit", priority=False),
    Binding("n", "new", "New"),
    Binding("d", "duplicate", "Duplicate"),
    Binding("r", "rename", "Rename", show=False),
    Binding("delete", "delete", "Delete"),
    Binding("ctrl+z,u", "undo", "Undo"),
    Binding("ctrl+y,U", "redo", "Redo", show=False),
    Binding("s", "sort", "Sort"),
    Binding("p", "pin", "Pin", show=False),
    Binding("g", "fold", "Fold", show=False),
    Binding("colon,ctrl+g", "goto_column", "Go to column"),
    Binding("v", "details", "Details", show=False),
    Binding("slash", "filter", "Filter"),
    Binding("f", "fleet", "Fleet"),
    Binding("space", "mark", "Mark", show=False),
    Binding("c", "compare", "Compare"),
    Binding("a", "options", "Options", show=False),
    Binding("w", "sweep", "Sweep"),
    Binding("o", "solve", "Solve"),
    Binding("x", "explain", "Explain", show=False),
    Binding("ctrl+e", "export", "Export"),
    Binding("i", "import_model", "Import model", show=False),
    Binding("F", "fit", "Fit", show=False),
    Binding("ctrl+t", "toggle_theme", "Theme", show=False),
    Binding("question_mark,f1", "help", "Help"),
    Binding("q", "quit", "Quit"),
]
"""The key map, in the order the footer, the help and the command palette list it. Every
action is the app's, which sends it to the widget that owns it."""


class PlannerApp(App[None]):
    """The planner's terminal UI over one database."""

    TITLE = "planner"
    CSS_PATH: ClassVar[list[str | PurePath]] = ["app.tcss", "widgets/widgets.tcss",
                                                "screens/dialogs.tcss", "screens/views.tcss"]
    """The layout (app.tcss), then the widgets' and the dialogs' styles, all parsed once at
    start-up (a screen's own CSS_PATH is parsed when it is first opened, in the middle of a
    row action)."""
    BINDINGS: ClassVar[list[BindingType]] = list(KEYS)

    def __init__(self, url: str | None = None, *, fleet: str | None = None,
                 workspace: Workspace | None = None) -> None:
        super().__init__()
        self.url = url
        self.workspace = WorkspaceRef(url, workspace)
        self.sheet = ScenarioSheet(self.workspace, fleet=fleet or "", id="sheet")
        gc_policy.starting()

    @property
    def ws(self) -> Workspace:
        """The workspace (opened lazily, once, in the worker thread that first needs it)."""
        return self.workspace.get()

    # The sheet's state, read by the tests and the benchmark.
    @property
    def fleet(self) -> str:
        """The fleet shown."""
        return self.sheet.fleet

    @property
    def loaded(self) -> bool:
        """Whether a fleet is on screen."""
        return self.sheet.loaded

    @property
    def scenarios(self) -> dict[int, Scenario]:
        """The fleet's scenarios by id."""
        return self.sheet.scenarios

    @property
    def outputs(self) -> OutputStore:
        """The scenarios' outputs by id."""
        return self.sheet.outputs

    @property
    def editing(self) -> CellEdit | None:
        """The cell being edited in the formula bar, if any."""
        return self.sheet.editing

    def load_fleet(self, fleet: str | None, focus_id: int | None = None) -> None:
        """Show another fleet (None: the first), read in a worker."""
        self.sheet.load_fleet(fleet, focus_id)

    # --------------------------------------------------------------- layout and loading
    def compose(self) -> ComposeResult:
        yield Header()
        # The filter box docks at the top of the screen, over the header, so it is the
        # screen's; the sheet owns what it filters (ScenarioSheet.filter_rows).
        yield Input(placeholder="filter rows by text (Esc clears)", id="filter")
        yield self.sheet
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#filter", Input).can_focus = False
        self.sheet.focus_grid()
        self.load_catalog()
        self.sheet.load_fleet(self.sheet.fleet or None)

    @work(thread=True, group="catalog")
    def load_catalog(self) -> None:
        try:
            self.post_message(CatalogLoaded(self.ws.models(), self.ws.gpus()))
        except work_failures() as exc:
            self.post_message(WorkFailed("Could not load models and GPUs", str(exc), False))

    @on(CatalogLoaded)
    def _catalog_loaded(self, message: CatalogLoaded) -> None:
        """The catalog was read (or changed by the catalog tabs): every widget that uses it
        gets it, and after a change the fleet is evaluated again."""
        self.sheet.use_catalog(message.models, message.gpus)
        self.query_one(ModelsTab).show(message.models)
        self.query_one(GpusTab).show(message.gpus)
        if message.changed:
            self.sheet.reload()

    @on(FitDone)
    def _fit_done(self, _message: FitDone) -> None:
        """A calibration profile was stored: scenarios with ``calibration = auto`` on its GPU
        and engine now evaluate with it."""
        self.sheet.reload()

    @on(FleetLoaded)
    def _fleet_loaded(self, message: FleetLoaded) -> None:
        self.sub_title = f"fleet {message.fleet} — {len(message.scenarios)} scenarios"

    @on(WorkFailed)
    def _failed(self, message: WorkFailed) -> None:
        if not self.sheet.loaded:
            gc_policy.loaded()  # no fleet to load: normal collection again
        self.notify(message.error, title=message.title, severity="error", timeout=10)
        if message.reload:
            self.sheet.reload()

    # --------------------------------------------------------------- keys
    def on_key(self, event: events.Key) -> None:
        """Keys that bubbled up from the focused widget, before the bindings see them.

        The grid's keys are handed to the sheet here rather than handled in the grid: a
        binding (an arrow moving the cursor) runs when its key reaches the app, so handling
        Enter or a digit earlier, in the grid or the sheet, would run it ahead of arrows typed
        before it ("→ → 3 2 Enter" typed fast would edit the cell the cursor started on)."""
        box = self.query_one("#filter", Input)
        if event.key == "escape" and box.has_focus:
            box.value = ""
            box.remove_class("visible")
            box.can_focus = False
            self.sheet.focus_grid()
        elif isinstance(self.focused, SheetTable) and self.sheet.grid_key(event):
            event.stop()
            event.prevent_default()  # the bindings (the grid's and the app's) are skipped

    def on_paste(self, event: events.Paste) -> None:
        """Pasted text goes into the cell being edited (the grid itself ignores pastes)."""
        self.sheet.paste(event.text)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The sheet's actions wait while a dialog is open: until the dialog's field takes the
        focus, keys typed ahead (Enter, then a name, then Enter) fall through to the app's
        bindings and would open a second dialog over the first."""
        return not (action in _SHEET_ACTIONS and len(self.screen_stack) > 1)

    # --------------------------------------------------------------- actions: to their owner
    def action_edit(self) -> None:
        """Edit the cell under the active table's cursor. An edit is explicit: Enter (or e)
        on the tab strip, or anywhere but the active tab's table, only moves the focus into
        that table, so keys meant for the tabs never edit a catalog entry or a cell."""
        tab = self.query_one("#tabs", TabbedContent).active
        table: DataTable[object] = self.query_one(
            {"gpus": "#gpus-table", "models": "#models-table", "training": "#train-grid",
             "measurements": "#measurements-table", "plan": "#plan-table"}.get(tab, "#grid"),
            DataTable)
        if self.focused is not table:
            table.focus()
            return
        if tab == "gpus":
            self.query_one(GpusTab).edit()
        elif tab == "models":
            self.query_one(ModelsTab).edit()
        elif tab in ("measurements", "plan"):
            return  # runs and plans are read-only here (planner bench, planner fleet plan)
        else:
            self.sheet.edit()

    def action_new(self) -> None:
        self.sheet.new()

    def action_duplicate(self) -> None:
        self.sheet.duplicate()

    def action_rename(self) -> None:
        self.sheet.rename()

    def action_delete(self) -> None:
        self.sheet.delete()

    def action_undo(self) -> None:
        self.sheet.undo()

    def action_redo(self) -> None:
        self.sheet.redo()

    def action_sort(self) -> None:
        self.sheet.sort()

    def action_pin(self) -> None:
        self.sheet.pin()

    def action_fold(self) -> None:
        self.sheet.fold()

    def action_goto_column(self) -> None:
        self.sheet.goto_column()

    def action_details(self) -> None:
        self.sheet.cycle_details()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.can_focus = True
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.sheet.filter_rows(event.value.strip())

    @on(Input.Submitted, "#filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.sheet.focus_grid()

    def action_fleet(self) -> None:
        self.sheet.switch_fleet()

    def action_mark(self) -> None:
        self.sheet.mark()

    def action_compare(self) -> None:
        self.sheet.compare()

    def action_options(self) -> None:
        self.sheet.options()

    def action_sweep(self) -> None:
        self.sheet.sweep()

    def action_solve(self) -> None:
        self.sheet.solve()

    def action_explain(self) -> None:
        self.sheet.explain()

    def action_export(self) -> None:
        self.sheet.export()

    def action_import_model(self) -> None:
        self.query_one(ModelsTab).import_model()

    def action_fit(self) -> None:
        """Fit the GPU and engine of the run under the Measurements tab's cursor (from any
        tab: the Measurements tab is shown first)."""
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active != "measurements":
            tabs.active = "measurements"
            self.notify("Pick a run of the GPU and engine to fit, then press F.",
                        title="Measurements")
            return
        self.query_one(MeasurementsPane).fit()

    def action_help(self) -> None:

        self.push_screen(TextScreen("planner — keys", help_text(KEYS)))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for binding in KEYS:
            if binding.action in ("quit",):
                continue
            yield SystemCommand(binding.description or binding.action,
                                f"{binding.description} ({binding.key.split(',')[0]})",
                                lambda action=binding.action: self.run_action(action))

    def on_unmount(self) -> None:
        gc_policy.stopped()
        self.workspace.close()


_SHEET_ACTIONS = frozenset(b.action for b in KEYS) - {"quit", "toggle_theme"}


def create_app(url: str | None = None, *, fleet: str | None = None,
               workspace: Workspace | None = None) -> PlannerApp:
    """The app on the database at ``url`` (default: settings), or an open ``workspace``."""
    return PlannerApp(url, fleet=fleet, workspace=workspace)
