"""A saved scenario as the base inputs of a what-if, and the ``--vary`` texts parsed against it.

``planner sweep``, ``planner solve`` and ``planner export --sweep`` all start from the same two
steps: the scenario's inputs (only the columns of its kind) and its variations; they live here
so that none of those commands imports another.
"""

from __future__ import annotations

from typing import Any

import click

from planner.cli.common import workspace
from planner.cli.fleets import _ref


def scenario_base(ctx: click.Context, ref: str,
                  fleet_name: str | None) -> tuple[Any, dict[str, Any]]:
    """The scenario ``ref`` names and its base inputs: model, GPU, LoRA targets and the input
    columns of its kind (:func:`planner.compute.table.inputs_of`)."""
    # lazy: ~19 ms of imports, only when this runs
    from planner.compute.table import inputs_of

    sc = workspace(ctx).scenario(*_ref(ctx, ref, fleet_name))
    names = {c.name for c in inputs_of(sc.kind)}
    base = {"model": sc.model, "gpu": sc.gpu, "lora_targets": sc.lora_targets,
            **{k: v for k, v in sc.inputs.items() if k in names}}
    return sc, base


def variations(ctx: click.Context, texts: tuple[str, ...], kind: str) -> list[Any]:
    """``--vary COLUMN=VALUES`` texts parsed (:func:`planner.compute.sweep.parse_variation`)
    against the catalog's GPU and model names and the input columns of ``kind``."""
    # lazy: ~29 ms of imports, only when this runs
    from planner.compute.sweep import parse_variation

    # lazy: ~19 ms of imports, only when this runs
    from planner.compute.table import inputs_of

    ws = workspace(ctx)
    gpus, models = [g.name for g in ws.gpus()], [m.name for m in ws.models()]
    columns = {c.name: c for c in inputs_of(kind)}
    return [parse_variation(t, gpus=gpus, models=models, columns=columns) for t in texts]


def options_written(ws: Any, sc: Any, changes: list[dict[str, Any]],
                    choose_best: bool) -> list[str]:
    """``changes`` written as options of ``sc``'s group (``--as-options``): their
    ``FLEET/NAME``s."""
    made = ws.add_options(sc.fleet, sc.name, changes, choose_first=choose_best)
    return [f"{o.fleet}/{o.name}" for o in made]


def echo_written(written: list[str], choose_best: bool) -> None:
    """The line that says which options ``--as-options`` wrote (nothing when none)."""
    if written:
        click.echo(f"wrote {len(written)} option(s): " + ", ".join(written)
                   + (" (the first is chosen)" if choose_best else " (none chosen)"))
