"""``planner scenario option`` and ``planner scenario choose`` (issue 15.1, alternatives), and
the option-group table ``planner compare --options`` prints.

An option group is a base scenario and the scenarios marked as its options (same workload,
another GPU, TP, dtype or engine); exactly one of them is chosen, and only chosen scenarios are
counted in ``fleet rollup``, the workbook's Summary and cost totals. The same can be written as
fields: ``planner scenario new|set FLEET/X option_of=Y`` (``option_of=`` detaches) and
``chosen=true``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from planner.cli.common import VERSION, emit_json, workspace
from planner.cli.fleets import _ref, fleet_option, scenario
from planner.core.errors import ValidationError


@scenario.command("option")
@click.argument("ref", metavar="SCENARIO")
@click.option("--of", "of", metavar="BASE",
              help="The base scenario, in the same fleet (BASE or FLEET/BASE).")
@click.option("--detach", is_flag=True,
              help="Make it a scenario of its own again (chosen, counted).")
@fleet_option
@click.pass_context
def scenario_option(ctx: click.Context, ref: str, of: str | None, detach: bool,
                    fleet_name: str | None) -> None:
    """Make SCENARIO an option of BASE (an alternative, not chosen, so not counted until
    `planner scenario choose` picks it); one logged edit.

    \b
    Example:
      planner scenario option demo/chat-h200 --of demo/chat-h100
    """
    if bool(of) == detach:
        raise ValidationError("--of/--detach", "give exactly one of them")
    fleet_, name = _ref(ctx, ref, fleet_name)
    base = None
    if of:
        base_fleet, _, base_name = of.rpartition("/")
        if base_fleet and base_fleet != fleet_:
            raise ValidationError("--of", f"must name a scenario of the same fleet "
                                  f"({fleet_!r}); {of!r} is in fleet {base_fleet!r}")
        base = base_name
    sc = workspace(ctx).make_option(fleet_, name, base)
    click.echo(f"{sc.fleet}/{sc.name} is now an option of {sc.fleet}/{sc.option_of}"
               if sc.option_of else f"{sc.fleet}/{sc.name} is a scenario of its own again")


@scenario.command("choose")
@click.argument("ref", metavar="SCENARIO")
@fleet_option
@click.option("--if-version", type=VERSION,
              help="Refuse (and show what changed) if the scenario is no longer at this version.")
@click.pass_context
def scenario_choose(ctx: click.Context, ref: str, fleet_name: str | None,
                    if_version: int | None) -> None:
    """Choose SCENARIO in its option group: it is counted in roll-ups and totals, the rest of
    the group is not. One transaction, one undo step."""
    fleet_, name = _ref(ctx, ref, fleet_name)
    sc = workspace(ctx).choose_option(fleet_, name, expected_version=if_version)
    click.echo(f"chose {sc.fleet}/{sc.name} (version {sc.version})")


def print_options(ctx: click.Context, ref: str, fleet_name: str | None, as_json: bool) -> None:
    """The option group of ``ref`` side by side, cheapest meeting the SLO marked."""
    # lazy: ~13 ms of imports, only when this runs
    from planner.service.compare import option_group, options_table

    fleet_, name = _ref(ctx, ref, fleet_name)
    ws = workspace(ctx)
    everything = ws.scenarios(fleet_)
    group = [everything[i] for i in option_group(everything, name)]
    rows = options_table(group, ws.evaluate_many(group))
    if as_json:
        data: dict[str, Any] = {"fleet": fleet_, "base": group[0].name,
                                "options": [asdict(r) for r in rows]}
        emit_json(data)
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli.render import console

    # lazy: loads rich (~37 ms), only when this runs
    from planner.present import options_table as table

    console.print(table(f"Options of {fleet_}/{group[0].name} (✓ chosen, counted; ★ cheapest "
                        "that fits and meets the SLO)", rows))
