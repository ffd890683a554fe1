"""The Plan tab through Textual's Pilot: the demo fleet's month × GPU-type table and chart,
computed in a worker, equal to the plan the workspace gives; a fleet without a horizon says
how to set one."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from planner.tui.app import create_app
from tests.tui.test_tui import SIZE, db, ready, settle, text


@pytest.mark.slow
async def test_plan_tab_shows_the_month_by_gpu_table_and_chart() -> None:
    with db() as ws:
        plan = ws.plan("demo")
        ws.new_fleet("zbare", "")
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.query_one("#tabs").active = "plan"
        await settle(pilot)
        table = app.query_one("#plan-table", DataTable)
        assert table.row_count == 12
        headers = [str(c.label) for c in table.columns.values()]
        assert headers == ["month", "a100-80gb GPUs", "a100-80gb USD", "h100-sxm GPUs",
                           "h100-sxm USD", "h200 GPUs", "h200 USD", "rtx-4090 GPUs",
                           "rtx-4090 USD", "GPUs", "cost USD"]
        for m, month in enumerate(plan.months):
            row = [str(c) for c in table.get_row(month)]
            assert row[0] == month
            assert row[3] == f"{int(plan.gpus_billed_by_type[1, m]):,}"  # h100-sxm
            assert row[-2] == f"{int(plan.total_gpus[m]):,}"
            assert row[-1] == f"{plan.total_cost_usd[m]:,.0f}"
        assert [str(table.get_row(m)[-2]) for m in ("2027-01", "2027-12")] == ["28", "46"]
        title = text(app.query_one("#plan-title", Static))
        assert "Plan of fleet demo: 2027-01 to 2027-12, on-demand pricing, 730 h per month" \
            in title
        chart = text(app.query_one("#plan-chart", Static)).splitlines()
        assert chart[0].startswith("2027-01 GPUs █") and chart[0].rstrip().endswith(" 28")
        assert chart[-1].rstrip().endswith(f"{plan.total_cost_usd[-1]:,.0f}")
        assert "█" * 40 in chart[-2]  # the largest month fills the chart's width
        app.sheet.load_fleet("zbare")  # another fleet while the tab is shown: recomputed
        await settle(pilot)
        await settle(pilot)
        assert table.row_count == 0
        assert "No plan for fleet zbare: horizon: fleet 'zbare' has no horizon" in text(
            app.query_one("#plan-title", Static))
