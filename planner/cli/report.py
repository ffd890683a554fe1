"""``planner export`` and ``planner import``: Excel workbooks that still compute, and back."""

from __future__ import annotations

import itertools
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from planner.cli.common import emit_json, json_option, workspace
from planner.cli.fleets import _ref
from planner.cli.varied import variations as _variations
from planner.core.errors import ValidationError


def _sweep(ctx: click.Context, text: str) -> Any:
    """``FLEET/NAME:column=values[;column=values]`` → an export Sweep of full scenario rows."""
    # lazy: loads openpyxl (~119 ms), only when this runs
    from planner.io.xlsx.workbook import Sweep

    sc, spec = _sweep_scenario(ctx, text)
    variations = _variations(ctx, tuple(spec.split(";")), sc.kind)
    columns = [v.column for v in variations]
    rows = [_sweep_row(sc, columns, combo)
            for combo in itertools.product(*(v.values for v in variations))]
    return Sweep(f"{sc.fleet}/{sc.name}", columns, rows)


def _sweep_scenario(ctx: click.Context, text: str) -> tuple[Any, str]:
    """The inference scenario a ``--sweep`` names and its ``column=values`` part; a sweep
    written without one, or of a training scenario, refused."""
    ref, sep, spec = text.partition(":")
    if not sep or not spec:
        raise ValidationError("--sweep", "write it SCENARIO:column=values[;column=values]",
                              value=text)
    sc = workspace(ctx).scenario(*_ref(ctx, ref, None))
    if sc.kind != "inference":
        raise ValidationError("--sweep", "sweeps are of inference scenarios", value=ref)
    return sc, spec


def _sweep_row(sc: Any, columns: list[str], combo: tuple[Any, ...]) -> Any:
    """One row of a sweep: ``sc`` with the varied ``columns`` at ``combo`` (a GPU or model
    as its own field, the rest as inputs), named by them."""
    changes = dict(zip(columns, combo, strict=True))
    meta = {k: changes.pop(k) for k in ("gpu", "model") if k in changes}
    name = sc.name + " " + " ".join(f"{k}={v}" for k, v in zip(columns, combo, strict=True))
    return replace(sc, id=0, version=0, name=name, inputs={**sc.inputs, **changes}, **meta)


def _frontier(ctx: click.Context, text: str) -> tuple[str, Any]:
    """``FLEET/NAME[:column=values[;column=values]]`` → (title, the scenario's frontier over
    those configurations, concurrency 1, 2, 4, ..., 1024): a Frontier sheet."""
    # lazy: the frontier's compute, only when this runs
    from planner.compute.frontier import frontier

    # lazy: the input registry of the sheet, only when this runs
    from planner.compute.table import inputs_of

    ref, _sep, spec = text.partition(":")
    ws = workspace(ctx)
    sc = ws.scenario(*_ref(ctx, ref, None))
    if sc.kind != "inference":
        raise ValidationError("--frontier", "an inference scenario (a frontier is of serving)",
                              value=ref)
    variations = _variations(ctx, tuple(spec.split(";")), sc.kind) if spec else []
    names = {c.name for c in inputs_of(sc.kind)}
    base = {"model": sc.model, "gpu": sc.gpu, "lora_targets": sc.lora_targets,
            **{k: v for k, v in sc.inputs.items() if k in names}}
    return f"{sc.fleet}/{sc.name}", frontier(base, variations, ws.model_specs(),
                                             ws.gpu_specs(), profiles=ws.calibration_figures())


@click.command("export")
@click.option("--fleet", "fleets", multiple=True, help="Fleet to include (repeatable; "
              "default: every fleet).")
@click.option("--out", "out_path", required=True, type=click.Path(path_type=Path),
              help="The .xlsx file to write.")
@click.option("--sweep", "sweeps", multiple=True, metavar="SCENARIO:COLUMN=VALUES",
              help="Include a sweep sheet, e.g. 'demo/chat:batch=1,2,4,...,256' "
                   "(two columns: 'demo/chat:batch=1..8;gpu=h100-sxm,h200').")
@click.option("--frontier", "frontiers", multiple=True, metavar="SCENARIO[:COLUMN=VALUES]",
              help="Include a Frontier sheet: output tokens/s per GPU against tokens/s per "
                   "user over concurrency 1,2,4,...,1024, with its chart, e.g. "
                   "'demo/chat:gpu=h100-sxm,b200' (as `planner sweep --frontier`).")
@click.option("--force", is_flag=True, help="Overwrite the file if it exists.")
@json_option
@click.pass_context
def export(ctx: click.Context, fleets: tuple[str, ...], out_path: Path, sweeps: tuple[str, ...],
           frontiers: tuple[str, ...], force: bool, as_json: bool) -> None:
    """Write an Excel report whose outputs are live formulas, each with the planner's value:
    Summary (title, assumptions, roll-up, cost per month, charts; prints on two pages for
    a small fleet), Scenarios, Training, Models, GPUs (edit a price or memory there and every
    scenario follows; import applies the edit), sweeps and frontiers."""
    ws = workspace(ctx)
    for f in fleets:
        ws.fleet(f)  # a clear error for an unknown fleet before any work
    built = [_sweep(ctx, s) for s in sweeps]
    fronts = [_frontier(ctx, f) for f in frontiers]
    report = _export_report(ws, out_path, fleets,
                            {"force": force, "sweeps": built, "frontiers": fronts})
    if as_json:
        emit_json({"path": str(report.path.resolve()), "scenarios": report.scenarios,
                   "training": report.training, "sheets": report.sheets})
        return
    click.echo(_export_line(report))


def _export_report(ws: Any, out_path: Path, fleets: tuple[str, ...],
                   kwargs: dict[str, Any]) -> Any:
    """The workbook written (:meth:`Workspace.export`), with a progress bar on a terminal's
    stderr when the fleets hold over 500 scenarios."""
    total = sum(f.scenario_count for f in ws.fleets() if not fleets or f.name in fleets)
    if total > 500 and sys.stderr.isatty():
        with click.progressbar(length=total, label="exporting", file=sys.stderr) as bar:
            return ws.export(out_path, list(fleets) or None, progress=bar.update, **kwargs)
    return ws.export(out_path, list(fleets) or None, **kwargs)


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--fleet", help="Fleet for new rows whose fleet cell is empty.")
@click.option("--dry-run", is_flag=True, help="Validate and show the changes; apply nothing.")
@json_option
@click.pass_context
def import_(ctx: click.Context, path: Path, fleet: str | None, dry_run: bool,
            as_json: bool) -> None:
    """Read a report's Scenarios and Training inputs and GPUs sheet figures back: every cell
    validated, then all changes applied in one transaction (or none, listing every bad
    cell)."""
    plans = workspace(ctx).import_workbook(path, fleet=fleet, dry_run=dry_run)
    changes = [p for p in plans if p.id is None or p.fields]
    if as_json:
        emit_json({"dry_run": dry_run, "changes": [
            {"sheet": p.sheet, "row": p.row, "fleet": p.fleet, "name": p.name, "id": p.id,
             "action": _action(p), "fields": p.fields}
            for p in changes]})
        return
    verb = "would " if dry_run else ""
    for p in changes:
        click.echo(verb + _change_line(p))
    if not changes:
        click.echo("no changes")
    elif dry_run:
        click.echo(f"dry run: {len(changes)} change(s) not applied")


def _export_line(report: Any) -> str:
    """What ``planner export`` wrote, in one line: the file and its scenarios, models, GPUs
    and sweeps."""
    return (f"wrote {report.path.resolve()}: {report.scenarios} inference and "
            f"{report.training} training scenarios, {report.models} models, "
            f"{report.gpus} GPUs" + (f", {report.sweeps} sweep(s)" if report.sweeps else ""))


def _action(p: Any) -> str:
    """What an import does with a row plan: update a GPU, create a scenario or update one."""
    return "update GPU" if p.kind == "gpu" else "create" if p.id is None else "update"


def _change_line(p: Any) -> str:
    """A row plan as ``planner import`` prints it: the GPU or scenario and its fields as
    typed, or the new scenario and the sheet row it comes from."""
    detail = ", ".join(f"{k}={v!r}" for k, v in p.fields.items())
    if p.kind == "gpu":
        return f"update GPU {p.name}: {detail}"
    if p.id is None:
        return f"create {p.fleet}/{p.name} ({p.sheet} row {p.row})"
    return f"update {p.fleet}/{p.name}: {detail}"
