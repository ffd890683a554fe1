"""Larger views of the terminal UI: sweep, solve, comparison and help."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from planner.compute import verdict
from planner.compute.outputs import format_value
from planner.compute.table import inputs_of
from planner.core.errors import PlannerError
from planner.spec.domain import Scenario
from planner.tui.screens.solve_view import SolveScreen

__all__ = ["SolveScreen", "SweepScreen", "help_text"]

if TYPE_CHECKING:
    from planner.compute.profiles import CalibrationFigures
    from planner.spec.architecture import ModelSpec
    from planner.spec.gpu import GpuSpec
    from planner.tui.state.frontier import FrontierView

SWEEP_OUTPUTS = ("throughput_tokens_per_s", "ttft_s", "tpot_s", "max_concurrent_sequences",
                 "fits", "cost_usd_per_million_output_tokens")
VERDICT_SWEEP_OUTPUTS = ("meets_slo", "ttft_p50_s", "ttft_p99_s", "tpot_mean_s", "utilization",
                         "cost_usd_per_month", "throughput_tokens_per_s")
"""What the sweep shows for a scenario with a verdict (an engine, a target rate or an SLO):
the verdict at the load for each value, states where figures are states; the chart stays the
idle throughput."""


def sweep_outputs(sc: Scenario) -> tuple[str, ...]:
    """The sweep's columns for ``sc``."""
    return VERDICT_SWEEP_OUTPUTS if verdict.applies(sc.inputs) else SWEEP_OUTPUTS


def bar_chart(labels: list[str], values: list[float], shown: Callable[[float], str],
              width: int = 40) -> Text:
    """A horizontal bar chart drawn with block characters; ``shown`` writes a value with its
    unit (the output column's registered format, never ``1.066e+04``)."""
    out = Text()
    finite = [v for v in values if v == v]
    top = max(finite) if finite else 1.0
    pad = max((len(label) for label in labels), default=1)
    for label, value in zip(labels, values, strict=True):
        n = 0 if value != value or top <= 0 else round(width * value / top)
        out.append(f"{label:>{pad}} ", style="bold")
        out.append("█" * n, style="cyan")
        out.append(f" {shown(value)}\n" if value == value else " invalid\n")
    return out


class SweepScreen(ModalScreen[None]):
    """Vary one input of a scenario: a table of key outputs and a chart of one of them; or
    (ctrl+f) the scenario's throughput-interactivity frontier over the configurations the
    fields name (:mod:`planner.tui.state.frontier`)."""

    BINDINGS = [Binding("escape", "close", "Close"),
                Binding("ctrl+f", "frontier", "Frontier / sweep")]
    frontier = False
    """Whether Enter runs the frontier (ctrl+f toggles) instead of the sweep."""

    def __init__(self, sc: Scenario, column: str, models: dict[str, ModelSpec],
                 gpus: dict[str, GpuSpec],
                 profiles: list[CalibrationFigures] | None = None) -> None:
        super().__init__()
        self.sc, self.column, self.models, self.gpus = sc, column, models, gpus
        self.profiles = profiles

    def compose(self) -> ComposeResult:
        default = {"batch": "1,2,4,...,256", "prompt_tokens": "512,1024,...,8192",
                   "gpu": "*"}.get(self.column, "")
        with Vertical():
            yield Label(f"[b]Sweep {self.sc.name}[/]: vary one input (Enter to run, ctrl+f "
                        "frontier, Esc to close)", id="hint")
            with Horizontal():
                yield Input(value=self.column, id="column", placeholder="input column")
                yield Input(value=default, id="values",
                            placeholder="values: 1,2,4,...,256 | 1..64 | h100-sxm,h200 | *")
            with VerticalScroll(id="result"):
                yield Static("", id="table")
                yield Static("", id="chart")

    def on_mount(self) -> None:
        self.query_one("#values", Input).focus()
        if self.query_one("#values", Input).value:
            self.run_sweep()

    def action_frontier(self) -> None:
        """Toggle between the sweep and the frontier, and run the one now shown."""
        self.frontier = not self.frontier
        self.query_one("#hint", Label).update(
            f"[b]Frontier of {self.sc.name}[/]: configurations to compare (gpu = h100-sxm,b200; "
            "tp = 2,4,8) or concurrency = 1,2,4,...,1024 (Enter to run, ctrl+f sweep, Esc "
            "to close)" if self.frontier else
            f"[b]Sweep {self.sc.name}[/]: vary one input (Enter to run, ctrl+f frontier, Esc "
            "to close)")
        self.run_sweep()

    def run_frontier(self) -> None:
        """The frontier table, Pareto points marked and bold, and the cheapest per level."""
        # lazy: the frontier's state module, only in frontier mode
        from planner.tui.state.frontier import CHEAPEST_HEADERS, frontier_view

        view = frontier_view(self.sc, self.query_one("#column", Input).value,
                             self.query_one("#values", Input).value, self.models, self.gpus,
                             self.profiles)
        if view.error:
            self.query_one("#table", Static).update(Text(view.error, style="bold red"))
            self.query_one("#chart", Static).update("")
            return
        self.query_one("#table", Static).update(_frontier_table(view))
        self.query_one("#chart", Static).update(_cheapest_table(view, CHEAPEST_HEADERS))

    @on(Input.Submitted)
    def run_sweep(self) -> None:
        if self.frontier:
            self.run_frontier()
            return
        # lazy: ~7 ms of imports, only when this runs
        from planner.compute.sweep import build_grid, parse_variation

        column = self.query_one("#column", Input).value.strip()
        values = self.query_one("#values", Input).value.strip()
        names = {c.name for c in inputs_of("inference")}
        base = {"model": self.sc.model, "gpu": self.sc.gpu,
                **{k: v for k, v in self.sc.inputs.items() if k in names}}
        try:
            variation = parse_variation(f"{column}={values}", gpus=list(self.gpus),
                                        models=list(self.models),
                                        columns={c.name: c for c in inputs_of("inference")})
            shown = sweep_outputs(self.sc)
            grid = build_grid(base, [variation], self.models, self.gpus,
                              outputs=[*shown, *verdict.STATE_INPUTS], profiles=self.profiles)
        except PlannerError as exc:
            self.query_one("#table", Static).update(Text(str(exc), style="bold red"))
            self.query_one("#chart", Static).update("")
            return
        table, labels = self._sweep_table(column, variation, grid, shown)
        self.query_one("#table", Static).update(table)
        chart = bar_chart(labels, [float(v) for v in grid.values["throughput_tokens_per_s"]],
                          lambda v: format_value("throughput_tokens_per_s", v))
        self.query_one("#chart", Static).update(Text.assemble(
            Text("\noutput throughput\n", style="bold"), chart))

    def _sweep_table(self, column: str, variation: Any, grid: Any,
                     shown: tuple[str, ...]) -> tuple[Table, list[str]]:
        """The sweep's table: a row per value of ``column`` (its reason, dim, where the
        value has no estimate), the verdict's figures as every screen shows them; and the
        values' labels for the chart."""
        table = Table()
        table.add_column(column, justify="right")
        for name in shown:
            table.add_column(name, justify="right")
        labels = []
        for i, value in enumerate(variation.values):
            labels.append(str(value))
            if grid.reasons[i]:
                table.add_row(str(value), Text(grid.reasons[i], style="dim"))
                continue
            row = {n: _plain(np.broadcast_to(np.asarray(grid.values[n]), (len(grid),))[i], n)
                   for n in (*shown, *verdict.STATE_INPUTS)}
            inputs = {**self.sc.inputs, **({column: value} if column in self.sc.inputs else {})}
            table.add_row(str(value), *[verdict.figure(n, row, inputs)
                                        if n in verdict.MASKED_COLUMNS or n == "utilization"
                                        else format_value(n, row[n]) for n in shown])
        return table, labels

    def action_close(self) -> None:
        self.dismiss(None)


def _plain(value: Any, name: str) -> Any:
    if name in ("fits", "engine_fits", "saturated", "meets_slo"):
        return bool(value)
    return value.item() if hasattr(value, "item") else value


def help_text(bindings: list[Binding]) -> Table:
    """The key bindings, with a first-minute guide."""
    table = Table(show_header=True, box=None, padding=(0, 2))
    table.add_column("key", style="bold cyan")
    table.add_column("action")
    guide = [("↑ ↓ ← →", "move between scenarios (rows) and columns; the bar at the top "
                         "shows the cell: an input's value and range, an output's formula"),
             ("Enter / e", "edit the cell in the bar at the top, checked as you type; the "
                           "row recomputes at once and is saved in the background"),
             ("0-9", "on a number cell: start editing with that digit"),
             ("in the bar", "Enter accepts · Esc cancels · ← → Home End · Backspace Delete · "
                            "ctrl+u / ctrl+k delete to start / end · ctrl+w a word"),
             ("choices", "model, GPU, dtypes, yes/no: type to filter, ← → (or Tab) choose"),
             ("Tab, ← →", "to the tab strip, then Scenarios, Training, Models, GPUs or "
                           "Measurements (benchmark runs: measured vs predicted)")]
    for key, text in guide:
        table.add_row(key, text)
    for b in bindings:
        if b.action in ("edit",):
            continue
        keys = " / ".join(k.replace("question_mark", "?").replace("slash", "/")
                          .replace("colon", ":") for k in b.key.split(","))
        table.add_row(keys, _HELP.get(b.action, b.description))
    table.add_row("ctrl+p", "command palette: every action by name")
    return table


_HELP = {
    "new": "new scenario: name, model and GPU (type to filter; the current row's to start)",
    "duplicate": "duplicate the current scenario (a what-if copy)",
    "rename": "rename the current scenario",
    "delete": "delete the current scenario (asks first)",
    "undo": "undo the fleet's last edit (history is kept in the database)",
    "redo": "redo",
    "sort": "sort by the current column (again: descending)",
    "pin": "pin the current output right after the scenario name (again: unpin)",
    "fold": "fold or unfold the current column group: inputs, memory, latency, cost",
    "goto_column": "go to a column by name: type part of it (slo, ttft p99, engine), Enter",
    "details": "details pane: wide → narrow → hidden (hidden by default below 120 columns)",
    "filter": "filter rows by text; Esc clears",
    "fleet": "switch fleet, or type a name to create one",
    "mark": "mark or unmark the current row (for compare)",
    "compare": "compare the marked scenarios, with deltas",
    "options": "the current row's option group side by side; Enter chooses one",
    "sweep": "sweep the current input column: table and chart",
    "solve": "goal seek: cheapest GPU × TP × count × dtype that meets the SLO at the target "
             "rate (added as options), largest context or batch, fewest GPUs",
    "explain": "why a computed cell has its value: formula and inputs",
    "export": "export this fleet to an Excel workbook that still computes",
    "import_model": "import a model's config.json (Models tab)",
    "fit": "Measurements tab: fit the GPU and engine of the run under the cursor (calibrate) "
           "and show the before/after error table",
    "toggle_theme": "switch between dark and light themes",
    "help": "this help",
    "quit": "quit",
}


def _frontier_table(view: FrontierView) -> Table:
    """The frontier's points: Pareto-optimal ones bold, those missing the SLO dim."""
    table = Table(title=view.title)
    for k, head in enumerate(view.headers):
        table.add_column(head, justify="left" if k in (0, len(view.headers) - 2)
                         else "right")
    for row, optimal, meets in zip(view.rows, view.pareto, view.meets, strict=True):
        table.add_row(*map(Text, row), style="bold" if optimal else "" if meets else "dim")
    return table


def _cheapest_table(view: FrontierView, headers: Sequence[str]) -> Table | Text:
    """The cheapest configuration meeting the SLO at each level (columns ``headers``), or
    a line saying no point meets it."""
    cheapest = Table(title="Cheapest configuration meeting the SLO at each interactivity "
                           "level")
    for k, head in enumerate(headers):
        cheapest.add_column(head, justify="left" if k == 1 else "right")
    for row in view.cheapest:
        cheapest.add_row(*map(Text, row))
    return cheapest if view.cheapest else Text("No point meets the SLO.", style="bold")
