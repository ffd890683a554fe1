"""The Plan tab (issue 15 item 2): the fleet's plan month by month.

A table of months × GPU types (GPUs billed and cost per type, then the month's GPUs and cost)
and, below it, a character chart of GPUs and cost by month
(:func:`planner.compute.plan.plan_chart_lines`). The plan is computed in a thread worker
(:meth:`planner.service.Workspace.plan`: every workload and month through the serving model)
each time the tab is shown or the fleet changes; a fleet without a horizon shows how to set
one.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from planner.tui.messages import PlanLoaded
from planner.tui.state.failures import work_failures
from planner.tui.state.types import WorkspaceRef


class PlanTable(DataTable[str]):
    """Months × GPU types (see the module docstring); filled by :class:`PlanPane`."""


class PlanPane(Vertical):
    """The Plan tab: the month table and the chart of GPUs and cost by month."""

    def __init__(self, workspace: WorkspaceRef, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.plan: Any = None
        """The plan shown (a :class:`planner.compute.plan.PlanResult`), or None."""

    def compose(self) -> ComposeResult:
        yield Static("", id="plan-title")
        yield PlanTable(id="plan-table", cursor_type="row", fixed_columns=1, zebra_stripes=True)
        yield Static("Loading…", id="plan-chart")

    @work(thread=True, group="plan", exclusive=True)
    def load(self, fleet: str | None) -> None:
        """Compute the fleet's plan in a worker; the result comes back as
        :class:`PlanLoaded` (with the message to show when there is no plan)."""
        if not fleet:
            return
        try:
            self.post_message(PlanLoaded(fleet, self.workspace.get().plan(fleet), ""))
        except work_failures() as exc:  # shown in the tab: no horizon, a price not set, ...
            self.post_message(PlanLoaded(fleet, None, str(exc)))

    @on(PlanLoaded)
    def _loaded(self, message: PlanLoaded) -> None:
        message.stop()
        self.show(message.plan, message.error, message.fleet)

    def show(self, plan: Any, error: str = "", fleet: str = "") -> None:
        """Show a plan (or, without one, ``error``)."""
        # lazy: numpy-backed plan text, only once a plan is shown
        from planner.compute.plan import plan_chart_lines

        self.plan = plan
        table = self.query_one(PlanTable)
        table.clear(columns=True)
        title = self.query_one("#plan-title", Static)
        chart = self.query_one("#plan-chart", Static)
        if plan is None:
            title.update(Text(f"No plan for fleet {fleet}: {error}"))
            chart.update(Text("Set a horizon with `planner fleet horizon FLEET --start YYYY-MM "
                              "--months N`, and demand with `planner scenario demand`."))
            return
        title.update(Text(f"Plan of fleet {plan.fleet}: {plan.months[0]} to "
                          f"{plan.months[-1]}, {plan.pricing} pricing, "
                          f"{plan.hours_per_month:g} h per month; "
                          f"{plan.total_cost_usd.sum():,.0f} USD in all"
                          + (f"; UNMET: {', '.join(n for n, _ in plan.unmet)}"
                             if plan.unmet else "")))
        table.add_column("month", key="month")
        for t in plan.gpu_types:
            table.add_column(Text(f"{t} GPUs", justify="right"), key=f"{t}-gpus")
            table.add_column(Text(f"{t} USD", justify="right"), key=f"{t}-usd")
        table.add_column(Text("GPUs", justify="right"), key="gpus")
        table.add_column(Text("cost USD", justify="right"), key="cost")
        for m, month in enumerate(plan.months):
            cells: list[Any] = [month]
            for k in range(len(plan.gpu_types)):
                cells.append(Text(f"{int(plan.gpus_billed_by_type[k, m]):,}", justify="right"))
                cells.append(Text(f"{plan.cost_usd_by_type[k, m]:,.0f}", justify="right"))
            cells.append(Text(f"{int(plan.total_gpus[m]):,}", justify="right"))
            cells.append(Text(f"{plan.total_cost_usd[m]:,.0f}", justify="right"))
            table.add_row(*cells, key=month)
        chart.update(Text("\n".join(plan_chart_lines(plan))))
