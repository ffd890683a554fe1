"""The Measurements tab (issue 12 item 4): imported benchmark runs against the planner.

One row per stored run: its model, GPU, engine and mode, the profile its prediction uses, and
measured vs predicted output tokens/s, mean TTFT and mean TPOT with ``|predicted/measured - 1|``
per figure (a run the planner cannot score shows ``–``). Below the table, a log-log character
scatter of predicted against measured (:func:`scatter_text`).

``F`` fits the GPU and engine of the run under the cursor (``planner calibrate --gpu G
--engine E``, 20 % held out) in a thread worker; :class:`~planner.tui.messages.FitDone` brings
the stored profile back and a dialog shows the before/after table (median and p90 |error| for
throughput, TTFT and TPOT, and on the held-out runs). The fit goes through the workspace, which
stores it as a new profile version; scenarios with ``calibration = auto`` use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from planner.tui.messages import FitDone, MeasurementsLoaded, WorkFailed
from planner.tui.screens.dialogs import TextScreen
from planner.tui.state.failures import work_failures
from planner.tui.state.types import WorkspaceRef

METRICS = (("throughput", "output [tok/s]", "T"), ("ttft", "TTFT [ms]", "F"),
           ("tpot", "TPOT [ms]", "P"))
"""(metric, label, the scatter's marker) in table order."""


def abs_error(measured: float, predicted: float) -> float:
    """``|predicted / measured - 1|`` (fraction)."""
    return abs(predicted / measured - 1)


def scatter_text(points: Sequence[tuple[float, float, str]], width: int = 48,
                 height: int = 14) -> str:
    """A log-log character scatter of ``(measured, predicted, marker)`` points: both axes span
    the decades that hold every point (log10, whole decades), the diagonal ``predicted =
    measured`` drawn with ``·``, each point its marker (``*`` where markers collide). A point
    at column ``round((log10(x) - lo) / (hi - lo) * (width - 1))``, row likewise from the
    bottom."""
    kept = [(x, y, m) for x, y, m in points if x > 0 and y > 0]
    if not kept:
        return "no scored runs to plot"
    logs = [math.log10(v) for x, y, _ in kept for v in (x, y)]
    lo, hi = math.floor(min(logs)), math.ceil(max(logs))
    hi = max(hi, lo + 1)
    return _framed(_plotted(kept, lo, hi, width, height), lo, hi, width)


def _plotted(kept: list[tuple[float, float, str]], lo: int, hi: int, width: int,
             height: int) -> list[list[str]]:
    """The scatter's grid over decades ``lo`` to ``hi``: the diagonal, then each point's
    marker (``*`` where markers collide)."""
    grid = [[" "] * width for _ in range(height)]

    def col(v: float) -> int:
        return round((math.log10(v) - lo) / (hi - lo) * (width - 1))

    def row(v: float) -> int:
        return height - 1 - round((math.log10(v) - lo) / (hi - lo) * (height - 1))

    for c in range(width):  # the diagonal
        value = 10 ** (lo + c / (width - 1) * (hi - lo))
        grid[row(value)][c] = "·"
    for x, y, marker in kept:
        r, c = row(y), col(x)
        grid[r][c] = marker if grid[r][c] in (" ", "·", marker) else "*"
    return grid


def _framed(grid: list[list[str]], lo: int, hi: int, width: int) -> str:
    """The scatter's grid with its axes: the decade labels at the top and bottom of the
    y axis and at both ends of the x axis, then the legend of the markers."""
    height = len(grid)
    label = f"1e{hi}"
    pad = max(len(label), len(f"1e{lo}"))
    lines = [f"{(label if i == 0 else f'1e{lo}' if i == height - 1 else ''):>{pad}} │"
             + "".join(line) for i, line in enumerate(grid)]
    lines.append(" " * pad + " └" + "─" * width)
    lines.append(" " * pad + f"  1e{lo}" + f"1e{hi}".rjust(width - len(f"1e{lo}")))
    lines.append(" " * pad + "  measured → (log)   predicted ↑ (log)   · = exact   "
                 + "  ".join(f"{m} {label}" for _, label, m in METRICS))
    return "\n".join(lines)


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}" if value >= 100 else f"{value:,.2f}"


def _run_cells(m: Any, p: Any, points: list[tuple[float, float, str]]) -> list[str]:
    """A run's row of the table: its id, model, GPU, engine, mode and profile, then per
    figure measured, predicted and |error| (dashes where not scored); each scored figure
    added to ``points`` for the scatter."""
    cells = [str(m.id), m.model, m.gpu, str(m.values.get("engine") or "–"),
             str(m.values.get("mode") or "–"),
             (p.profile or "catalog") if p is not None else "not scored"]
    for metric, _label, marker in METRICS:
        measured = p.measured.get(metric) if p is not None else None
        predicted = p.predicted.get(metric) if p is not None else None
        if measured is not None and predicted is not None:
            cells += [_figure(measured), _figure(predicted),
                      f"{abs_error(measured, predicted):.1%}"]
            points.append((measured, predicted, marker))
        else:
            cells += ["–", "–", "–"]
    return cells


def error_table(profile: Any) -> Table:
    """The before/after table of a fitted profile: median and p90 |error| per figure on the
    fitted runs and on the held-out runs (percent; ``–`` where there is no such figure)."""
    table = Table(box=None, padding=(0, 2))
    table.add_column("figure", style="bold")
    sets = (("before", "fit runs before"), ("after", "fit runs after"),
            ("holdout_before", "held out before"), ("holdout", "held out after"))
    for _key, label in sets:
        table.add_column(f"{label}\nmedian / p90", justify="right")
    for metric, label, _m in METRICS:
        cells = []
        for key, _label in sets:
            errors = profile.errors.get(key, {})
            median, p90 = (errors.get(f"{metric}_median_abs_error"),
                           errors.get(f"{metric}_p90_abs_error"))
            cells.append("–" if median is None else f"{median:.1%} / {p90:.1%}")
        table.add_row(Text(label), *cells)
    return table


def fit_report(profile: Any) -> Table:
    """The dialog's body: the error table, then the fitted parameters."""
    outer = Table.grid(padding=(1, 0))
    outer.add_row(Text(f"{profile.name} v{profile.version} ({profile.gpu} + {profile.engine}): "
                       f"{len(profile.fit_ids)} runs fitted, {len(profile.holdout_ids)} held "
                       "out; |predicted/measured - 1|", style="bold"))
    outer.add_row(error_table(profile))
    params = Table(box=None, padding=(0, 2))
    params.add_column("parameter", style="bold")
    params.add_column("before", justify="right")
    params.add_column("fitted", justify="right")
    for name, value in profile.parameters.items():
        start = profile.start.get(name, value)
        params.add_row(name + ("" if name in profile.fitted else " (not moved by the runs)"),
                       f"{start:.4g}", f"{value:.4g}")
    outer.add_row(params)
    outer.add_row("Scenarios on this GPU and engine with calibration = auto now use it.")
    return outer


class MeasurementsTable(DataTable[str]):
    """The runs (see the module docstring); loaded by :class:`MeasurementsPane`."""


class MeasurementsPane(Vertical):
    """The Measurements tab: the runs table and the scatter; ``F`` fits (see the module
    docstring)."""

    def __init__(self, workspace: WorkspaceRef, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.rows: list[tuple[Any, Any]] = []
        """(measurement, prediction or None) per row, as shown."""

    def compose(self) -> ComposeResult:
        yield MeasurementsTable(id="measurements-table", cursor_type="row", fixed_columns=1)
        yield Static("Loading…", id="measurements-chart")

    @work(thread=True, group="measurements", exclusive=True)
    def load(self) -> None:
        """Read the runs and their predictions in a worker."""
        try:
            rows = self.workspace.get().measurement_predictions()
            self.post_message(MeasurementsLoaded(rows))
        except work_failures() as exc:
            self.post_message(WorkFailed("Could not load measurements", str(exc), False))

    @on(MeasurementsLoaded)
    def _loaded(self, message: MeasurementsLoaded) -> None:
        message.stop()
        self.show(message.rows)

    def show(self, rows: Sequence[tuple[Any, Any]]) -> None:
        """Show these runs (the table and the chart are rebuilt)."""
        self.rows = list(rows)
        table = self.query_one(MeasurementsTable)
        table.clear(columns=True)
        table.add_column("run", key="id")
        for key, label in (("model", "model"), ("gpu", "GPU"), ("engine", "engine"),
                           ("mode", "mode"), ("profile", "profile")):
            table.add_column(label, key=key)
        for metric, label, _m in METRICS:
            table.add_column(Text(f"{label} measured"), key=f"{metric}_measured")
            table.add_column("predicted", key=f"{metric}_predicted")
            table.add_column("|error|", key=f"{metric}_error")
        points: list[tuple[float, float, str]] = []
        for m, p in self.rows:
            table.add_row(*_run_cells(m, p, points), key=str(m.id))
        chart = self.query_one("#measurements-chart", Static)
        if not self.rows:
            chart.update("No benchmark runs imported (planner bench import FILE...).")
        else:
            chart.update(Text(scatter_text(points)))  # brackets are text, not markup

    def selected(self) -> Any | None:
        """The measurement under the cursor, if any."""
        table = self.query_one(MeasurementsTable)
        if not table.row_count:
            return None
        return self.rows[table.cursor_coordinate.row][0]

    def fit(self) -> None:
        """Fit the GPU and engine of the run under the cursor, in a worker."""
        m = self.selected()
        if m is None:
            self.app.notify("Import benchmark runs first (planner bench import FILE...).",
                            title="Nothing to fit", severity="warning")
            return
        engine = m.values.get("engine")
        if not engine:
            self.app.notify(f"Run {m.id} does not say its engine.", title="Cannot fit",
                            severity="warning")
            return
        self.app.notify(f"Fitting {m.gpu} + {engine}…", title="Calibrating")
        self._fit(m.gpu, str(engine))

    @work(thread=True, group="measurements-fit", exclusive=True)
    def _fit(self, gpu: str, engine: str) -> None:
        try:
            ws = self.workspace.get()
            profile = ws.calibrate(gpu=gpu, engine=engine)
            self.post_message(FitDone(profile, ws.measurement_predictions()))
        except work_failures() as exc:
            self.post_message(WorkFailed("Fit failed", str(exc), reload=False))

    @on(FitDone)
    def _fitted(self, message: FitDone) -> None:
        self.show(message.rows)
        self.app.push_screen(TextScreen("Calibration: before and after",
                                        fit_report(message.profile)))
