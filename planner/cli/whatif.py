"""``planner sweep`` and ``planner compare``: what-if tools over saved scenarios.

``planner solve`` is in :mod:`planner.cli.solve`; writing a sweep to a file in
:mod:`planner.cli.sweep_files`; the scenario's base inputs and ``--vary`` parsing in
:mod:`planner.cli.varied`.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from planner.cli.common import emit_json, json_option, workspace
from planner.cli.fleets import _ref, fleet_option
from planner.cli.sweep_files import XLSX_MAX_ROWS, check_out, progress_bar
from planner.cli.sweep_files import write as _write
from planner.cli.varied import scenario_base, variations
from planner.core.errors import ValidationError

__all__ = ["CONCURRENCY_DEFAULT", "XLSX_MAX_ROWS", "compare", "sweep"]

CONCURRENCY_DEFAULT = "1,2,4,...,1024"
"""``--concurrency``'s default: :data:`planner.compute.frontier.CONCURRENCY_GRID`."""


@click.command()
@click.argument("ref", metavar="SCENARIO")
@fleet_option
@click.option("--vary", "vary", multiple=True, metavar="COLUMN=VALUES",
              help="An input and its values: batch=1,2,4,...,256 | gpus=1..64 | "
                   "gpu=h100-sxm,h200 | gpu=* | weight_dtype=bf16,fp8. Give one or two "
                   "(with --frontier: the configurations to compare, any number).")
@click.option("--frontier", is_flag=True,
              help="The throughput-interactivity frontier instead: output tokens/s per GPU "
                   "against tokens/s per user (1/TPOT) over --concurrency, for each "
                   "configuration --vary makes, as one engine (GPUs = TP x PP); Pareto-optimal "
                   "points marked, the cheapest point meeting the SLO at each interactivity "
                   "level listed. --out writes .csv or .xlsx (a Frontier sheet with a chart).")
@click.option("--concurrency", "concurrency", default=CONCURRENCY_DEFAULT, show_default=True,
              metavar="VALUES", help="With --frontier: closed-loop clients of the engine to "
              "sweep (1 to 100,000,000), e.g. 1,2,4,...,1024 or 1..64 or 8,16,32.")
@click.option("--levels", "levels", metavar="TOKENS_PER_S_PER_USER",
              help="With --frontier: the interactivity levels (tokens/s per user, "
                   "comma-separated) to find the cheapest configuration at (default: those "
                   "of the Pareto-optimal points that meet the SLO).")
@click.option("--show", default="ttft_s,tpot_s,max_concurrent_sequences,fits",
              show_default=True, help="Output columns to show, comma-separated.")
@click.option("--out", "out_path", type=click.Path(path_type=Path),
              help="Also write the table to a .csv or .xlsx file.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@json_option
@click.pass_context
def sweep(ctx: click.Context, ref: str, fleet_name: str | None, vary: tuple[str, ...],
          frontier: bool, concurrency: str, levels: str | None, show: str,
          out_path: Path | None, force: bool, as_json: bool) -> None:
    """A sensitivity table (like Excel's Data Tables): one scenario's outputs over one or two
    varied inputs, evaluated in one vectorized call; or, with --frontier, the scenario's
    throughput-interactivity frontier.

    \b
    Examples:
      planner sweep demo/llama3-70b-chat-h100-tp4 --vary batch=1,2,4,...,256
      planner sweep demo/llama3-70b-chat-h100-tp4 --frontier --vary gpu=h100-sxm,b200
      planner sweep demo/llama3-70b-chat-h100-tp4 --frontier --vary tp=2,4,8 \\
          --concurrency 1..64 --out frontier.xlsx
    """
    if frontier:
        _frontier(ctx, ref, fleet_name, vary, concurrency, levels, out_path, force, as_json)
        return
    _check_sweep_options(vary, levels, concurrency)
    sc, base = scenario_base(ctx, ref, fleet_name)
    varied = variations(ctx, vary, sc.kind)
    if len(varied) > 2:
        raise ValidationError("--vary", "give one or two variations (a data table has two axes)")
    columns = _show_columns(sc.kind, show)
    if out_path is not None:
        check_out(out_path, force)
    ws = workspace(ctx)
    grid, frame, states = _evaluate(ws, sc, base, varied, columns)
    if states:
        _states(frame, grid, base, columns, as_json)
    unmeasured = _mark_unmeasured(ws, grid, frame, plain=as_json or out_path is not None)
    if out_path is not None:
        _write(frame, out_path)
        click.echo(f"wrote {len(frame):,} rows to {out_path}", err=True)
    if as_json:
        _stream_json(frame)
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.sweep(sc, grid, frame, columns)
    if unmeasured & set(grid.varied["gpu"].tolist() if "gpu" in grid.varied else ()):
        click.echo("* GPU whose serving efficiencies are not measured: planner defaults "
                   "(estimates on it are less sure)")


def _check_sweep_options(vary: tuple[str, ...], levels: str | None, concurrency: str) -> None:
    """Refuse a sweep without ``--vary``, or with the frontier's ``--levels`` or
    ``--concurrency`` (a sweep varies concurrency with ``--vary concurrency=...``)."""
    if not vary:
        raise ValidationError("--vary", "give one or two variations, e.g. --vary "
                              "batch=1,2,4,...,256 (or --frontier)")
    if levels is not None or concurrency != CONCURRENCY_DEFAULT:
        raise ValidationError("--concurrency/--levels", "work with --frontier (a sweep "
                              "varies concurrency with --vary concurrency=...)")


def _show_columns(kind: str, show: str) -> list[str]:
    """``--show``'s output columns, refused (with the closest names) unless each is an output
    of a ``kind`` scenario."""
    # lazy: ~19 ms of imports, only when this runs
    from planner.compute.table import graph

    columns = [c.strip() for c in show.split(",") if c.strip()]
    formulas = graph(kind).formulas
    unknown = [c for c in columns if c not in formulas]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], list(formulas), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ValidationError("--show", f"must be output columns of a {kind} scenario "
                              f"(see `planner scenario show --json`){hint}",
                              value=",".join(unknown))
    return columns


def _evaluate(ws: Any, sc: Any, base: dict[str, Any], varied: list[Any],
              columns: list[str]) -> tuple[Any, Any, bool]:
    """The sweep's grid (:func:`planner.compute.sweep.build_grid`, with a progress bar when
    long), its table of ``columns``, and whether any column is a verdict figure that can be a
    state (then the grid is sized to one deployment first and gains the ``gpus`` column)."""
    # lazy: the verdict's states, only when this runs
    from planner.compute import verdict

    # lazy: ~29 ms of imports, only when this runs
    from planner.compute.sweep import build_grid

    total = 1
    for v in varied:
        total *= len(v.values)
    states = sc.kind == "inference" and any(c in verdict.MASKED_COLUMNS for c in columns)
    wanted = list(dict.fromkeys([*columns, *(verdict.STATE_INPUTS if states else ()),
                                 *(("gpus_needed",) if states else ())]))
    specs: dict[str, Any] = {"kind": sc.kind, "outputs": wanted,
                             "profiles": ws.calibration_figures()}
    bar = progress_bar(total)
    if bar is not None:
        with bar:
            grid = build_grid(base, varied, ws.model_specs(), ws.gpu_specs(), **specs,
                              progress=lambda done, _n: bar.update(done - bar.pos))
    else:
        grid = build_grid(base, varied, ws.model_specs(), ws.gpu_specs(), **specs)
    sized = False
    if states:
        # lazy: the capacity module (sizing and its re-evaluation), only when this runs
        from planner.compute.capacity import one_deployment

        sized = one_deployment(base, grid, columns, ws.model_specs(), ws.gpu_specs(),
                               profiles=ws.calibration_figures())
    frame = _grid_frame(grid, [*(["gpus"] if sized and "gpus" not in grid.varied else []),
                               *columns])
    return grid, frame, states


def _mark_unmeasured(ws: Any, grid: Any, frame: Any, *, plain: bool) -> set[str]:
    """When the sweep varies the GPU: the GPUs whose serving efficiencies are planner
    defaults, marked in ``frame`` (a ``gpu_efficiencies_measured`` flag column for data,
    ``plain``; a ``*`` after the name for the terminal)."""
    if "gpu" not in grid.varied:
        return set()
    # lazy: the verdict's confidence rule, only when this runs
    from planner.compute.verdict import gpu_measured

    unmeasured = {n for n, spec in ws.gpu_specs().items() if not gpu_measured(spec)}
    names = frame["gpu"].tolist()
    if plain:  # data keeps the names as they are: a flag column
        frame["gpu_efficiencies_measured"] = [n not in unmeasured for n in names]
    else:
        frame["gpu"] = [f"{n} *" if n in unmeasured else n for n in names]
    return unmeasured


def _stream_json(frame: Any) -> None:
    """``frame`` as the JSON list of its records, a chunk at a time, written as made: the text
    of ``json_text(frame.to_dict(orient="records"))``."""
    # lazy: the streaming writer, only when this runs
    from planner.cli import stream

    step = stream.JSON_CHUNK_ROWS
    stream.write_json_list((record for start in range(0, len(frame), step)
                            for record in frame.iloc[start:start + step].to_dict(
                                orient="records")), len(frame))


def _frontier(ctx: click.Context, ref: str, fleet_name: str | None, vary: tuple[str, ...],
              concurrency: str, levels: str | None, out_path: Path | None, force: bool,
              as_json: bool) -> None:
    """``sweep --frontier`` (:mod:`planner.compute.frontier`, printed by
    :mod:`planner.cli.frontier`)."""
    # lazy: the frontier's CLI side and compute, only with --frontier
    from planner.cli import frontier as cli_frontier

    # lazy: the frontier's compute (numpy, the sweep's grid), only with --frontier
    from planner.compute.frontier import frontier as run

    sc, base = scenario_base(ctx, ref, fleet_name)
    if sc.kind != "inference":
        raise ValidationError("SCENARIO", "an inference scenario (a frontier is of serving)",
                              value=f"{sc.fleet}/{sc.name}")
    points = cli_frontier.concurrency_values(concurrency)
    wanted = cli_frontier.level_values(levels)
    varied = variations(ctx, vary, sc.kind)
    if out_path is not None:
        check_out(out_path, force)
    ws = workspace(ctx)
    result = run(base, varied, ws.model_specs(), ws.gpu_specs(), concurrency=points,
                 levels=wanted, profiles=ws.calibration_figures())
    title = f"{sc.fleet}/{sc.name}"
    if out_path is not None:
        cli_frontier.write_file(title, result, out_path)
        click.echo(f"wrote {len(result.points):,} points to {out_path}", err=True)
    if as_json:
        emit_json(cli_frontier.as_json(title, result))
        return
    cli_frontier.print_text(title, result)


def _states(frame: Any, grid: Any, base: dict[str, Any], columns: list[str],
            as_json: bool) -> None:
    """Figures that are states (:func:`planner.compute.verdict.masked_column`): ``None`` in
    JSON, the state's words ("saturated", "does not fit") in text, in place in ``frame``."""
    import numpy as np

    # lazy: the verdict's states, only when a sweep shows them
    from planner.compute import verdict

    n = len(frame)
    target = grid.varied.get("target_requests_per_s",
                             np.full(n, float(base.get("target_requests_per_s") or 0)))
    for column in columns:
        if column not in verdict.MASKED_COLUMNS:
            continue
        state = verdict.masked_column(column, grid.values["engine_fits"],
                                      grid.values["saturated"], grid.values["replicas_needed"],
                                      target)
        if as_json and column in verdict.SIZING:  # no target: the 0 the JSON always gave
            state[state == verdict.NO_TARGET] = None
        hit = np.flatnonzero(state != None)  # noqa: E711 (elementwise over an object array)
        if not len(hit):
            continue
        values = np.array(frame[column].tolist(), dtype=object)
        values[hit] = None if as_json else state[hit]
        frame[column] = values


def _grid_frame(grid: Any, columns: list[str]) -> Any:
    import pandas as pd

    data: dict[str, Any] = {v.column: grid.varied[v.column] for v in grid.variations}
    for c in columns:
        data[c] = grid.values.get(c, [float("nan")] * len(grid))
    data["note"] = grid.reasons
    return pd.DataFrame(data)


@click.command()
@click.argument("refs", nargs=-1, metavar="SCENARIO...")
@fleet_option
@click.option("--show", help="Columns to compare, comma-separated (default: differing inputs "
              "and key outputs).")
@click.option("--options", "options_of", metavar="SCENARIO",
              help="Instead: the option group of SCENARIO side by side (GPUs, $/month, $/M "
                   "tokens, meets SLO, the chosen one), the cheapest that meets the SLO marked.")
@json_option
@click.pass_context
def compare(ctx: click.Context, refs: tuple[str, ...], fleet_name: str | None,
            show: str | None, options_of: str | None, as_json: bool) -> None:
    """Two or more scenarios side by side, with absolute and relative deltas to the first;
    or, with --options, an option group."""
    if options_of:
        if refs:
            raise ValidationError("--options", "give either scenarios or --options, not both")
        # lazy: the option-group commands, only when this runs
        from planner.cli.options import print_options

        print_options(ctx, options_of, fleet_name, as_json)
        return
    if not refs:
        raise ValidationError("SCENARIO", "give two or more scenarios, or --options SCENARIO")
    # lazy: ~13 ms of imports, only when this runs
    from planner.service.compare import compare as run

    ws = workspace(ctx)
    scenarios = [ws.scenario(*_ref(ctx, r, fleet_name)) for r in refs]
    outputs = ws.evaluate_many(scenarios)
    columns = [c.strip() for c in show.split(",")] if show else None
    rows = run(scenarios, outputs, columns)
    if as_json:
        emit_json({"scenarios": [f"{s.fleet}/{s.name}" for s in scenarios],
                   "rows": _comparison_records(rows)})
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.comparison(scenarios, rows)
    _unmeasured_note(ws, scenarios)


def _comparison_records(rows: list[Any]) -> list[dict[str, Any]]:
    """The comparison's rows as JSON records: a figure that is a state is null, as
    ``estimate --json`` gives it."""
    # lazy: the verdict's states, only when this runs
    from planner.compute import verdict

    states = {*verdict.STATES, verdict.NO_TARGET, verdict.UNREACHABLE}
    records = [asdict(r) for r in rows]
    for record in records:
        if record["column"] in verdict.MASKED_COLUMNS:
            record["values"] = [None if isinstance(v, str) and v in states else v
                                for v in record["values"]]
    return records


def _unmeasured_note(ws: Any, scenarios: list[Any]) -> None:
    """The ``*`` note under a comparison naming its GPUs whose serving efficiencies are
    planner defaults (nothing when all are measured)."""
    # lazy: the verdict's confidence rule, only when this runs
    from planner.compute.verdict import UNMEASURED_NOTE, gpu_measured

    specs = ws.gpu_specs()
    unsure = sorted({s.gpu for s in scenarios if s.gpu in specs
                     and not gpu_measured(specs[s.gpu])})
    if unsure:
        click.echo(f"* {', '.join(unsure)}: {UNMEASURED_NOTE} (estimates less sure)")
