"""The UI's solve: goal seeks on a scenario, the capacity question first.

The capacity preset ("cheapest GPU × TP × count × dtype that meets the SLO at the target
rate") is :mod:`planner.compute.capacity`, the query ``planner solve --minimize
cost_usd_per_month --subject-to meets_slo`` runs, shown with that CLI command; its answers
are listed with the verdict's figures and written as options of the scenario (not chosen, so
the fleet's totals stay). The other presets judge the SLO at the target rate too
(``meets_slo``), never the idle-server TTFT. Layout in ``solve_view.tcss``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from planner.compute import verdict
from planner.compute.outputs import format_value
from planner.compute.table import inputs_of
from planner.core.errors import PlannerError
from planner.spec.domain import Scenario

if TYPE_CHECKING:
    from planner.compute.capacity import CapacityAnswer
    from planner.compute.profiles import CalibrationFigures
    from planner.spec.architecture import ModelSpec
    from planner.spec.gpu import GpuSpec

CAPACITY = "capacity"
"""The capacity preset's key."""

GOALS = (
    (CAPACITY, "Cheapest GPU × TP × count × dtype that meets the SLO at the target rate",
     "cost_usd_per_month", "min", "meets_slo", ()),
    ("context", "Largest context (prompt tokens) that fits at this batch",
     "prompt_tokens", "max", "fits", ()),
    ("batch", "Largest batch that fits at this context", "batch", "max", "fits", ()),
    ("gpus", "Fewest GPUs (any TP) that meet the SLO at the target rate", "gpus", "min",
     "meets_slo", ("gpus=1..256", "tp=1,2,4,8")),
    ("gpu", "Cheapest GPU type that meets the SLO at the target rate (this TP and count)",
     "cost_usd_per_hour", "min", "meets_slo", ("gpu=*",)),
)
"""(key, text, objective, sense, constraint, variations) of each preset. The presets sized
for a target rate need one on the scenario."""

NEEDS_TARGET = frozenset({CAPACITY, "gpus", "gpu"})



@dataclass
class SolveChoice:
    """What the solve screen hands back: changes to apply to the scenario, or answers to
    write as its options."""

    changes: dict[str, Any] | None = None
    options: list[dict[str, Any]] = field(default_factory=list)


def answers_table(answers: list[CapacityAnswer], gpus: dict[str, GpuSpec],
                  inputs: dict[str, Any] | None = None) -> Table:
    """The capacity answers, cheapest first, with the verdict's figures
    (:func:`planner.compute.capacity.answer_cells`, the cells ``planner solve`` prints); ``*``
    marks a GPU whose serving efficiencies are unmeasured defaults."""
    # lazy: the solver module (numpy), only when answers are shown
    from planner.compute.capacity import ANSWER_HEADERS, answer_cells

    table = Table(box=None, padding=(0, 1))
    for header in ANSWER_HEADERS:
        table.add_column(header, justify="left" if header in ("GPU", "dtype") else "right")
    for n, a in enumerate(answers, 1):
        table.add_row(*answer_cells(n, a, gpus, inputs or {}))
    return table


def disagg_answers_table(answers: list[Any], gpus: dict[str, GpuSpec],
                         inputs: dict[str, Any]) -> Table:
    """The disaggregated capacity answers, cheapest first: each pool's workers × GPU × TP and
    the verdict's figures (:func:`planner.compute.disagg_sizing.answer_cells`, the cells
    ``planner solve --serving-mode disaggregated`` prints)."""
    # lazy: the disaggregated search module (numpy), only when answers are shown
    from planner.compute.disagg_sizing import ANSWER_HEADERS, answer_cells

    table = Table(box=None, padding=(0, 1))
    for header in ANSWER_HEADERS:
        table.add_column(header, justify="left" if header in ("prefill", "decode", "dtype")
                         else "right")
    for n, a in enumerate(answers, 1):
        table.add_row(*answer_cells(n, a, inputs, gpus))
    return table


class SolveScreen(ModalScreen[SolveChoice | None]):
    """Goal seek on a scenario: Enter on a goal solves it; the answer is applied to the
    scenario, or the capacity answers are added as its options."""

    BINDINGS = [Binding("escape", "close", "Close")]
    CSS_PATH = "solve_view.tcss"

    def __init__(self, sc: Scenario, models: dict[str, ModelSpec],
                 gpus: dict[str, GpuSpec],
                 profiles: list[CalibrationFigures] | None = None) -> None:
        super().__init__()
        self.sc, self.models, self.gpus = sc, models, gpus
        self.profiles = profiles
        self.changes: dict[str, Any] | None = None
        self.answers: list[Any] = []
        """The capacity answers shown (:class:`planner.compute.capacity.CapacityAnswer`, or
        :class:`planner.compute.disagg_sizing.DisaggAnswer` on a disaggregated scenario)."""
        self.command = ""
        """The CLI command that gives the capacity answer ('' before one is solved)."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"[b]Solve {self.sc.name}[/] — pick a goal")
            yield OptionList(*[Option(text, id=key) for key, text, *_ in GOALS], id="goals")
            with Horizontal(id="filters"):
                yield Input(id="gpu-filter", placeholder="GPU or vendor filter (capacity): "
                                                         "h100, amd, nvidia…")
                yield Input(id="util-cap", placeholder="utilisation cap, e.g. 0.8")
            yield Static("", id="answer")
            with Horizontal(id="buttons"):
                yield Button("Apply to scenario", id="apply", disabled=True, variant="primary")
                yield Button("Add as options", id="add-options", disabled=True)
                yield Button("Close", id="close")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _base(self) -> dict[str, Any]:
        names = {c.name for c in inputs_of("inference")}
        return {"model": self.sc.model, "gpu": self.sc.gpu,
                **{k: v for k, v in self.sc.inputs.items() if k in names}}

    def _show(self, body: Any) -> None:
        self.query_one("#answer", Static).update(body)

    @on(OptionList.OptionSelected)
    def _solve(self, event: OptionList.OptionSelected) -> None:
        self.solve_goal(str(event.option.id))

    @on(Input.Submitted)
    def _resolve(self) -> None:
        self.solve_goal(CAPACITY)

    def solve_goal(self, key: str) -> None:
        """Solve the preset ``key`` and show its answer (or why there is none)."""
        self.changes, self.answers = None, []
        self.query_one("#apply", Button).disabled = True
        self.query_one("#add-options", Button).disabled = True
        base = self._base()
        try:
            if key in NEEDS_TARGET and not base["target_requests_per_s"]:
                raise PlannerError("set target_requests_per_s on the scenario first")
            if key == CAPACITY:
                self._capacity(base)
            else:
                self._preset(key, base)
        except PlannerError as exc:
            self._show(Text(str(exc), style="bold red"))

    def _capacity(self, base: dict[str, Any]) -> None:
        # lazy: the solver (~7 ms of imports), only when this runs
        from planner.compute.capacity import ANSWERS, capacity_query, solve_capacity

        cap_text = self.query_one("#util-cap", Input).value.strip()
        try:
            cap = float(cap_text) if cap_text else None
        except ValueError:
            raise PlannerError(f"utilisation cap: a fraction above 0 and at most 1, not "
                               f"{cap_text!r}") from None
        if base.get("serving_mode") == "disaggregated":
            self._disagg_capacity(base, cap)
            return
        query = capacity_query(base, self.gpus,
                               gpu_filter=self.query_one("#gpu-filter", Input).value,
                               utilization_cap=cap)
        self.command = query.command(f"{self.sc.fleet}/{self.sc.name}")
        self.answers = solve_capacity(base, query, self.models, self.gpus, ANSWERS,
                                      self.profiles)
        if not self.answers:
            self._show(Text.assemble(Text("No deployment meets the SLO at the target rate.",
                                          style="red"), f"\n= {self.command}"))
            return
        self.changes = dict(self.answers[0].changes)
        unmeasured = any(not verdict.gpu_measured(self.gpus[a.changes["gpu"]])
                         for a in self.answers if a.changes.get("gpu") in self.gpus)
        note = ("\n* serving efficiencies not measured for this GPU: planner defaults"
                if unmeasured else "")
        self._show(Group(
            Text("Cheapest that meet the SLO at the target rate:", style="bold"),
            answers_table(self.answers, self.gpus, base), Text(note.lstrip("\n"), style="yellow"),
            Text(f"= {self.command}", style="dim")))
        self.query_one("#apply", Button).disabled = False
        self.query_one("#add-options", Button).disabled = False

    def _disagg_capacity(self, base: dict[str, Any], cap: float | None) -> None:
        """The capacity question of a disaggregated scenario: the cheapest xPyD
        (:func:`planner.compute.disagg_sizing.size_disaggregated`, what ``planner solve`` runs
        on it), prefill GPUs narrowed by the GPU filter."""
        # lazy: the capacity module's GPU filter (numpy), only when this runs
        from planner.compute.capacity import filtered_gpus

        # lazy: the disaggregated search (numpy), only when this runs
        from planner.compute.disagg_sizing import ANSWERS, size_disaggregated

        needle = self.query_one("#gpu-filter", Input).value
        names = filtered_gpus(self.gpus, needle)
        self.command = (f"planner solve {self.sc.fleet}/{self.sc.name}"
                        + (f" --gpu-filter {needle}" if needle.strip() else "")
                        + (f" --utilization-cap {cap:g}" if cap is not None else ""))
        self.answers = size_disaggregated(base, self.models, self.gpus, prefill_gpus=names,
                                          utilization_cap=cap, count=ANSWERS,
                                          profiles=self.profiles)
        if not self.answers:
            self._show(Text.assemble(Text("No disaggregated deployment meets the SLO at the "
                                          "target rate.", style="red"), f"\n= {self.command}"))
            return
        self.changes = {k: v for k, v in self.answers[0].changes.items() if base.get(k) != v}
        self._show(Group(
            Text("Cheapest prefill/decode pools that meet the SLO at the target rate:",
                 style="bold"),
            disagg_answers_table(self.answers, self.gpus, base),
            Text(f"= {self.command}", style="dim")))
        self.query_one("#apply", Button).disabled = False
        self.query_one("#add-options", Button).disabled = False

    def _preset(self, key: str, base: dict[str, Any]) -> None:
        # lazy: ~7 ms of imports, only when this runs
        from planner.compute.sweep import parse_variation, solve

        _key, _text, objective, sense, constraint, vary = next(g for g in GOALS if g[0] == key)
        columns = {c.name: c for c in inputs_of("inference")}
        variations = [parse_variation(v, gpus=list(self.gpus), models=list(self.models),
                                      columns=columns) for v in vary]
        result = solve(base, objective, sense, constraint, variations, self.models,
                       self.gpus, profiles=self.profiles)
        if not result.found:
            self._show(Text(f"No feasible answer among {result.candidates:,} candidates.",
                            style="red"))
            return
        decided = [objective] if not vary else [v.split("=")[0] for v in vary]
        self.changes = {k: result.values[k] for k in decided if k in result.values}
        self._show(_answer_text(self.changes, result))
        self.query_one("#apply", Button).disabled = False

    @on(Button.Pressed, "#apply")
    def _apply(self) -> None:
        self.dismiss(SolveChoice(changes=self.changes))

    @on(Button.Pressed, "#add-options")
    def _add_options(self) -> None:
        base = self._base()
        disaggregated = base.get("serving_mode") == "disaggregated"
        # a disaggregated answer repeats the scenario's own inputs: only what differs names it
        self.dismiss(SolveChoice(options=[
            {k: v for k, v in a.changes.items() if not disaggregated or base.get(k) != v}
            for a in self.answers]))

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)


def _answer_text(changes: dict[str, Any], result: Any) -> Text:
    """A preset goal's answer: the values decided, the hourly cost, how many candidates were
    feasible and the method that found it."""
    shown = ", ".join(f"{k} = {format_value(k, v) if not isinstance(v, str) else v}"
                      for k, v in changes.items())
    extra = ", ".join(f"{k} {format_value(k, result.values[k])}" for k in
                      ("cost_usd_per_hour",) if k in result.values)
    return Text.assemble(
        Text("Answer: ", style="bold"), Text(shown, style="bold green"),
        f"  ({extra}; {result.feasible:,} of {result.candidates:,} feasible, "
        f"{result.method})")
