"""``planner fleet plan``, ``fleet horizon``, ``scenario demand`` and ``gpu price``: capacity
plans over months (issue 15 item 2). No arithmetic here: the plan is
:meth:`planner.service.Workspace.plan`."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from planner.cli.common import emit_json, json_option, workspace
from planner.cli.fleets import _ref, fleet_option


@click.command("plan")
@click.argument("fleet_name", metavar="FLEET")
@click.option("--from", "start", metavar="YYYY-MM", help="First month (default: the horizon's).")
@click.option("--to", "end", metavar="YYYY-MM", help="Last month (default: the horizon's).")
@click.option("--pricing", type=click.Choice(["on-demand", "reserved", "spot"]), default=None,
              help="Price GPUs at (default: the horizon's pricing).")
@click.option("--detail/--no-detail", default=True, help="Print each workload's months.")
@json_option
@click.pass_context
def fleet_plan(ctx: click.Context, fleet_name: str, start: str | None, end: str | None,
               pricing: str | None, detail: bool, as_json: bool) -> None:
    """A capacity plan month by month: for each counted inference scenario (workload), the
    month's request rate (its demand), the replicas and GPUs the serving model needs at that
    rate and SLO, and their cost; per month, GPUs and cost by GPU type.

    Cost = GPUs x USD per GPU-hour (the month's price at the chosen pricing) x 730 hours per
    month (8760 / 12). Reserved GPUs are committed for the price's term: GPUs billed never
    drop below what is under commitment.

    JSON keys: fleet; pricing; hours_per_month; months (per month: month, gpus, cost_usd,
    by_gpu {GPU: gpus_needed, gpus_billed, price_usd_per_gpu_hour, cost_usd}); workloads
    (per workload: scenario, model, gpu, basis [demand, target or configured], demand, months
    [month, requests_per_s, replicas, gpus, capacity_requests_per_s, headroom_requests_per_s,
    cost_usd]); total_cost_usd; committed_gpu_months_beyond_horizon; unmet (scenario,
    first_month where demand gets no replica); excluded (scenario, reason).
    """
    # lazy: numpy-backed plan records (~60 ms), only when this runs
    from planner.compute.plan import plan_chart_lines, plan_record, plan_table_lines

    plan = workspace(ctx).plan(fleet_name, start=start, end=end, pricing=pricing)
    if as_json:
        emit_json(plan_record(plan))
        return
    click.echo(f"Plan of fleet {plan.fleet}: {plan.months[0]} to {plan.months[-1]}, "
               f"{plan.pricing} pricing, {plan.hours_per_month:g} h per month (8760/12)")
    click.echo("")
    for line in plan_table_lines(plan):
        click.echo(line)
    click.echo(f"total over {len(plan.months)} months: {plan.total_cost_usd.sum():,.0f} USD")
    for gpu, months in plan.committed_gpu_months_beyond.items():
        if months:
            click.echo(f"reserved {gpu}: {months:,} GPU-months committed after "
                       f"{plan.months[-1]}")
    for name, month in plan.unmet:
        click.echo(f"UNMET: {name} gets no replica from {month} (the engine does not start or "
                   "its SLO cannot be met at any replica count)")
    click.echo("")
    for line in plan_chart_lines(plan):
        click.echo(line)
    if detail:
        for w, name in enumerate(plan.workloads):
            _echo_workload(plan, w, name)
    for name, reason in plan.excluded:
        click.echo(f"not planned: {name} ({reason})")


@click.command("horizon")
@click.argument("fleet_name", metavar="FLEET")
@click.option("--start", metavar="YYYY-MM", help="First month of the plan.")
@click.option("--months", metavar="N", help="Number of months (1 to 120).")
@click.option("--pricing", type=click.Choice(["on-demand", "reserved", "spot"]), default=None,
              help="Price the plan's GPUs at (default on-demand).")
@json_option
@click.pass_context
def fleet_horizon(ctx: click.Context, fleet_name: str, start: str | None, months: str | None,
                  pricing: str | None, as_json: bool) -> None:
    """Show or set a fleet's planning horizon (first month, months, pricing)."""
    ws = workspace(ctx)
    if start is None and months is None and pricing is None:
        horizon = ws.horizon(fleet_name)
    else:
        horizon = ws.set_horizon(fleet_name, start, months, pricing)
    if as_json:
        emit_json(asdict(horizon) if horizon else None)
    elif horizon is None:
        click.echo(f"fleet {fleet_name} has no horizon (set one with --start YYYY-MM "
                   "--months N)")
    else:
        click.echo(f"fleet {horizon.fleet}: {horizon.months} months from {horizon.start_month}"
                   f", {horizon.pricing} pricing")


@click.command("demand")
@click.argument("ref", metavar="SCENARIO")
@fleet_option
@click.option("--start-rate", metavar="RATE",
              help="Rate in the first month: 5, 5/s, 300/min or 432000/day.")
@click.option("--growth", metavar="FRACTION", help="Monthly growth: 8% or 0.08 (default 0).")
@click.option("--start-month", metavar="YYYY-MM",
              help="Month of the start rate (default: the horizon's first month).")
@click.option("--series", metavar="MONTH=RATE,...",
              help="Rates by month, each holding until the next: 2027-01=5,2027-04=9.")
@click.option("--unit", metavar="UNIT", help="Unit of bare rates: /s, /min or /day "
              "(default /s; kept for display).")
@click.option("--clear", is_flag=True, help="Remove the demand (plan at the target rate).")
@json_option
@click.pass_context
def scenario_demand(ctx: click.Context, ref: str, fleet_name: str | None,
                    start_rate: str | None, growth: str | None, start_month: str | None,
                    series: str | None, unit: str | None, clear: bool, as_json: bool) -> None:
    """Show or set a scenario's demand over months: a start rate with monthly growth, or a
    series of monthly rates. Rates are stored in requests/s."""
    ws = workspace(ctx)
    fleet, name = _ref(ctx, ref, fleet_name)
    if clear:
        removed = ws.clear_demand(fleet, name)
        click.echo(f"{fleet}/{name}: demand {'removed' if removed else 'was not set'}")
        return
    if all(v is None for v in (start_rate, growth, start_month, series, unit)):
        demand = ws.demands(fleet).get(ws.scenario(fleet, name).name)
    else:
        spec: dict[str, Any] = {"start_rate": start_rate, "growth": growth,
                                "start_month": start_month, "series": series, "unit": unit}
        demand = ws.set_demand(fleet, name, **{k: v for k, v in spec.items() if v is not None})
    if as_json:
        emit_json(asdict(demand) if demand else None)
    elif demand is None:
        click.echo(f"{fleet}/{name}: no demand (plans at its target_requests_per_s)")
    else:
        click.echo(f"{fleet}/{name}: {demand.kind} demand {demand.describe()}")


@click.command("price")
@click.argument("gpu")
@click.option("--month", metavar="YYYY-MM", help="Prices from this month on (default: always).")
@click.option("--on-demand", metavar="USD", help="On-demand USD per GPU-hour (default: the "
              "catalog price).")
@click.option("--reserved", metavar="USD", help="Reserved USD per GPU-hour (needs --term).")
@click.option("--term", metavar="MONTHS", help="Reserved commitment term in months.")
@click.option("--spot", metavar="USD", help="Spot USD per GPU-hour.")
@click.option("--clear", is_flag=True, help="Remove the prices of --month (or the default row).")
@json_option
@click.pass_context
def gpu_price(ctx: click.Context, gpu: str, month: str | None, on_demand: str | None,
              reserved: str | None, term: str | None, spot: str | None, clear: bool,
              as_json: bool) -> None:
    """Show or set a GPU's prices for plans: on-demand, reserved (with its term) and spot, in
    USD per GPU-hour, from a month on."""
    ws = workspace(ctx)
    if clear or any(v is not None for v in (on_demand, reserved, term, spot)):
        ws.set_price(gpu, month=month, on_demand=on_demand, reserved=reserved, term=term,
                     spot=spot, clear=clear)
    prices = ws.prices(gpu)
    if as_json:
        emit_json([asdict(p) for p in prices])
        return
    if not prices:
        click.echo(f"{gpu}: no plan prices (on-demand: the catalog price)")
    for p in prices:
        click.echo(_price_line(p))


def _price_line(p: Any) -> str:
    """A GPU's plan prices from one month, in USD per GPU-hour (the catalog price where there
    is no on-demand one, ``none`` where there is no reserved or spot price)."""
    parts = [f"on-demand {p.on_demand_usd_per_gpu_hour:g}"
             if p.on_demand_usd_per_gpu_hour is not None else "on-demand: catalog",
             f"reserved {p.reserved_usd_per_gpu_hour:g} for {p.reserved_term_months} months"
             if p.reserved_usd_per_gpu_hour is not None else "reserved: none",
             f"spot {p.spot_usd_per_gpu_hour:g}"
             if p.spot_usd_per_gpu_hour is not None else "spot: none"]
    return f"{p.gpu} from {p.month or 'the start'}: {', '.join(parts)} (USD per GPU-hour)"


def _echo_workload(plan: Any, w: int, name: str) -> None:
    """Workload ``w``'s months under its name, model, GPU and demand basis: request rate,
    replicas, GPUs, headroom and cost per month."""
    click.echo("")
    click.echo(f"{name}  ({plan.workload_models[w]} on {plan.workload_gpus[w]}; "
               f"{plan.basis[w]}{': ' + plan.demand[w] if plan.demand[w] else ''})")
    click.echo(f"  {'month':7}  {'requests/s':>11}  {'replicas':>8}  {'GPUs':>6}  "
               f"{'headroom req/s':>14}  {'cost USD':>12}")
    for m, month in enumerate(plan.months):
        click.echo(f"  {month:7}  {plan.rate_requests_per_s[w, m]:>11,.3f}  "
                   f"{int(plan.replicas[w, m]):>8,}  {int(plan.gpus[w, m]):>6,}  "
                   f"{plan.headroom_requests_per_s[w, m]:>14,.3f}  "
                   f"{plan.cost_usd[w, m]:>12,.0f}")


def register(fleet: click.Group, scenario: click.Group, gpu: click.Group) -> None:
    """Add the plan commands to their groups (``fleet plan``, ``fleet horizon``,
    ``scenario demand``, ``gpu price``)."""
    fleet.add_command(fleet_plan)
    fleet.add_command(fleet_horizon)
    scenario.add_command(scenario_demand)
    gpu.add_command(gpu_price)
