"""``planner fleet …`` and ``planner scenario …``: saved plans and their scenarios."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from planner.cli.common import (
    VERSION,
    PlannerGroup,
    emit_json,
    json_option,
    parse_assignments,
    workspace,
)
from planner.compute.inputs import INFERENCE_INPUTS, TRAINING_INPUTS
from planner.core.errors import ValidationError


@click.group(cls=PlannerGroup)
def fleet() -> None:
    """Fleets (named plans): list, new, copy (a what-if), delete."""


@fleet.command("list")
@json_option
@click.pass_context
def fleet_list(ctx: click.Context, as_json: bool) -> None:
    """List fleets with their scenario counts."""
    fleets = workspace(ctx).fleets()
    if as_json:
        emit_json([asdict(f) for f in fleets])
        return
    for f in fleets:
        click.echo(f"{f.name}  ({f.scenario_count} scenarios)"
                   + (f"  {f.description}" if f.description else ""))


@fleet.command("new")
@click.argument("name")
@click.option("--description", default="", help="What the plan is for.")
@click.pass_context
def fleet_new(ctx: click.Context, name: str, description: str) -> None:
    """Create an empty fleet."""
    f = workspace(ctx).new_fleet(name, description)
    click.echo(f"created fleet {f.name}")


@fleet.command("copy")
@click.argument("source")
@click.argument("name")
@click.option("--description", default=None, help="Description of the copy (default: same).")
@click.pass_context
def fleet_copy(ctx: click.Context, source: str, name: str, description: str | None) -> None:
    """Copy a fleet and all its scenarios (e.g. 'what-if: H200 migration')."""
    f = workspace(ctx).copy_fleet(source, name, description)
    click.echo(f"copied fleet {source} to {f.name} ({f.scenario_count} scenarios)")


@fleet.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def fleet_delete(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete a fleet and its scenarios."""
    ws = workspace(ctx)
    count = ws.fleet(name).scenario_count
    if not yes and count and not click.confirm(
            f"Delete fleet {name!r} and its {count} scenarios?", err=True):
        raise click.Abort
    ws.delete_fleet(name)
    click.echo(f"deleted fleet {name} ({count} scenarios)")


@fleet.command("rollup")
@click.argument("names", nargs=-1, metavar="[FLEET]...")
@json_option
@click.pass_context
def fleet_rollup(ctx: click.Context, names: tuple[str, ...], as_json: bool) -> None:
    """Per fleet: GPUs by type, USD per hour and month, tokens per day, training cost, and
    every scenario that does not fit with its shortfall."""
    # lazy: ~13 ms of imports, only when this runs
    from planner.service.compare import rollup

    ws = workspace(ctx)
    fleets = list(names) or [f.name for f in ws.fleets()]
    scenarios = [s for name in fleets for s in ws.scenarios(name)]
    totals = rollup(scenarios, ws.evaluate_many(scenarios))
    if as_json:
        emit_json([asdict(t) for t in totals])
        return
    # lazy: loads rich (~39 ms), only when this runs
    from planner.cli import render

    render.rollup(totals)


@click.group(cls=PlannerGroup)
def scenario() -> None:
    """Scenarios: list and show (with computed outputs), new, set field=value, copy, delete,
    history; option and choose (alternatives: only chosen scenarios are counted).

    A SCENARIO is written FLEET/NAME, or NAME with --fleet, or NAME alone when there is only
    one fleet.
    """


fleet_option = click.option("--fleet", "-f", "fleet_name", help="The fleet of the scenario.")


def _ref(ctx: click.Context, ref: str, fleet_name: str | None) -> tuple[str, str]:
    if fleet_name:
        return fleet_name, ref
    if "/" in ref:
        f, _, name = ref.partition("/")
        return f, name
    fleets = workspace(ctx).fleets()
    if len(fleets) == 1:
        return fleets[0].name, ref
    raise ValidationError("scenario", "write it FLEET/NAME or pass --fleet; fleets are "
                          + ", ".join(f.name for f in fleets), value=ref)


def _record(sc: Any, outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    data = asdict(sc)
    if outputs is not None:
        data["outputs"] = outputs
    return data


@scenario.command("list")
@fleet_option
@json_option
@click.pass_context
def scenario_list(ctx: click.Context, fleet_name: str | None, as_json: bool) -> None:
    """Scenarios with their key computed outputs (all of them with --json)."""
    # lazy: the streamed table and JSON writers, only when this runs
    from planner.cli import listing

    ws = workspace(ctx)
    values = ws.evaluate_columns(ws.scenarios(fleet_name))
    if as_json:
        listing.scenario_json(values)
        return
    listing.scenario_table(values)


@scenario.command("show")
@click.argument("ref", metavar="SCENARIO")
@fleet_option
@json_option
@click.pass_context
def scenario_show(ctx: click.Context, ref: str, fleet_name: str | None, as_json: bool) -> None:
    """One scenario: its inputs and every computed output."""
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    ws = workspace(ctx)
    sc = ws.scenario(*_ref(ctx, ref, fleet_name))
    spec, gpu = ws.model(sc.model).spec, ws.gpu(sc.gpu).spec
    if sc.kind == "inference":
        result = service.estimate(spec, gpu, _inputs_of(sc, "inference"),
                                  profiles=ws.calibration_figures())
    else:
        result = service.train(spec, gpu, _inputs_of(sc, "training"),
                               lora_targets=sc.lora_targets)
    if as_json:
        if sc.kind == "inference":
            # lazy: the verdict's states, only when this runs
            from planner.compute import verdict

            result = verdict.json_outputs(result, result["inputs"])
        emit_json(_record(sc, result))
        return
    # lazy: loads rich (~39 ms), only when this runs
    from planner.cli import render

    click.echo(f"{sc.fleet}/{sc.name} (version {sc.version})"
               + (f" — {sc.notes}" if sc.notes else ""))
    (render.estimate if sc.kind == "inference" else render.train)(result, gpu)


def _inputs_of(sc: Any, kind: str) -> dict[str, Any]:

    names = {c.name for c in (INFERENCE_INPUTS if kind == "inference" else TRAINING_INPUTS)}
    return {k: v for k, v in sc.inputs.items() if k in names}


FIELDS_HELP = ("FIELDS are field=value: any input column (see `planner estimate --help` and "
               "`planner train --help` for names, units and ranges), or name, kind, model, gpu, "
               "notes, lora_targets, option_of (the base scenario this one is an option of; "
               "empty: none) and chosen=true (count this option; see `planner scenario "
               "choose`).")


@scenario.command("new", help="Create a scenario. " + FIELDS_HELP)
@click.argument("ref", metavar="SCENARIO")
@click.argument("fields", nargs=-1)
@fleet_option
@click.option("--model", help="Model name in the database, or the Hub id org/name[@commit] it "
                             "was imported from (or model=NAME).")
@click.option("--gpu", help="GPU name in the database (or gpu=NAME).")
@click.option("--kind", type=click.Choice(["inference", "training"]),
              help="Scenario kind (or kind=KIND).  [default: inference]")
@click.pass_context
def scenario_new(ctx: click.Context, ref: str, fields: tuple[str, ...], fleet_name: str | None,
                 model: str | None, gpu: str | None, kind: str | None) -> None:
    fleet_, name = _ref(ctx, ref, fleet_name)
    values = parse_assignments(fields)
    given = _options_or_fields(values, {"model": model, "gpu": gpu, "kind": kind})
    named = values.pop("name", None)
    if named is not None and named.strip() != name:
        raise ValidationError("name", f"is {name!r} from SCENARIO; name={named} differs "
                              "(rename with `scenario set` after creating it)")
    for key in ("model", "gpu"):
        if not given[key]:
            raise ValidationError(key, f"is required: give --{key} NAME or {key}=NAME")
    if "/" in str(given["model"]):  # a Hub id: the model imported from it
        given["model"] = workspace(ctx).model(str(given["model"])).name
    sc = workspace(ctx).new_scenario(fleet_, name, model=str(given["model"]),
                                     gpu=str(given["gpu"]), kind=given["kind"] or "inference",
                                     **values)
    click.echo(f"created {sc.fleet}/{sc.name}")


def _options_or_fields(values: dict[str, str],
                       options: dict[str, str | None]) -> dict[str, str | None]:
    """Each of ``options`` (``--model``, ``--gpu``, ``--kind``) from its option or its
    ``key=value`` field (taken out of ``values``); refused when both are given and differ."""
    given = dict(options)
    for key, option in options.items():
        field = values.pop(key, None)
        if field is not None and option is not None and field.strip() != option:
            raise ValidationError(key, f"given twice (--{key} {option} and {key}={field}); "
                                  "give it once")
        given[key] = option if option is not None else field
    return given


@scenario.command("set", help="Change fields of a scenario, as one logged edit. " + FIELDS_HELP)
@click.argument("ref", metavar="SCENARIO")
@click.argument("fields", nargs=-1, required=True)
@fleet_option
@click.option("--if-version", type=VERSION,
              help="Refuse (and show what changed) if the scenario is no longer at this version.")
@click.pass_context
def scenario_set(ctx: click.Context, ref: str, fields: tuple[str, ...], fleet_name: str | None,
                 if_version: int | None) -> None:
    fleet_, name = _ref(ctx, ref, fleet_name)
    sc = workspace(ctx).set_scenario(fleet_, name, parse_assignments(fields),
                                     expected_version=if_version)
    click.echo(f"updated {sc.fleet}/{sc.name} (version {sc.version})")


@scenario.command("copy")
@click.argument("ref", metavar="SCENARIO")
@click.argument("new_name")
@fleet_option
@click.option("--to-fleet", help="Copy into another fleet (default: the same).")
@click.pass_context
def scenario_copy(ctx: click.Context, ref: str, new_name: str, fleet_name: str | None,
                  to_fleet: str | None) -> None:
    """Copy a scenario (a what-if) under a new name."""
    fleet_, name = _ref(ctx, ref, fleet_name)
    sc = workspace(ctx).copy_scenario(fleet_, name, new_name, to_fleet)
    click.echo(f"copied {fleet_}/{name} to {sc.fleet}/{sc.name}")


@scenario.command("delete")
@click.argument("ref", metavar="SCENARIO")
@fleet_option
@click.pass_context
def scenario_delete(ctx: click.Context, ref: str, fleet_name: str | None) -> None:
    """Delete a scenario and its change history."""
    fleet_, name = _ref(ctx, ref, fleet_name)
    workspace(ctx).delete_scenario(fleet_, name)
    click.echo(f"deleted {fleet_}/{name}")


@scenario.command("history")
@click.argument("ref", metavar="SCENARIO")
@fleet_option
@json_option
@click.pass_context
def scenario_history(ctx: click.Context, ref: str, fleet_name: str | None,
                     as_json: bool) -> None:
    """The scenario's change log: every edited field, old and new value, when."""
    changes = workspace(ctx).history(*_ref(ctx, ref, fleet_name))
    if as_json:
        emit_json([asdict(c) for c in changes])
        return
    for c in changes:
        click.echo(f"{c.changed_at:%Y-%m-%d %H:%M:%S}  v{c.version_after}  {c.field}: "
                   f"{c.old_value!r} → {c.new_value!r}" + ("  (undone)" if c.undone else ""))


@scenario.command("explain")
@click.argument("ref", metavar="SCENARIO")
@click.argument("column")
@fleet_option
@click.option("--depth", type=click.IntRange(1, 50), default=8, show_default=True,
              help="How many formula levels to expand.")
@json_option
@click.pass_context
def scenario_explain(ctx: click.Context, ref: str, column: str, fleet_name: str | None,
                     depth: int, as_json: bool) -> None:
    """Why a scenario's COLUMN has its value: the formula and the values it used, down to
    the inputs."""
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    # lazy: ~21 ms of imports, only when this runs
    from planner.compute.explain import render_text

    ws = workspace(ctx)
    sc = ws.scenario(*_ref(ctx, ref, fleet_name))
    decode = str(sc.inputs.get("decode_gpu") or "same")  # a decode pool on another type
    decode_spec = ws.gpu_specs().get(decode) if decode not in ("same", sc.gpu) else None
    tree = service.explain(ws.model(sc.model).spec, ws.gpu(sc.gpu).spec,
                           _inputs_of(sc, sc.kind), column, kind=sc.kind,
                           lora_targets=sc.lora_targets, depth=depth,
                           profiles=ws.calibration_figures(), decode_gpu=decode_spec)
    if as_json:
        emit_json(tree.as_dict())
        return
    click.echo(render_text(tree))
