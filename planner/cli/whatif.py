"""``planner sweep``, ``planner solve``, ``planner compare``: what-if tools over saved scenarios."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from planner.cli.common import emit_json, json_option, workspace
from planner.cli.estimate import inference_options
from planner.cli.fleets import _ref, fleet_option
from planner.errors import PlannerError, ValidationError

CONCURRENCY_DEFAULT = "1,2,4,...,1024"
"""``--concurrency``'s default: :data:`planner.sheet.frontier.CONCURRENCY_GRID`."""


def _base(ctx: click.Context, ref: str, fleet_name: str | None) -> tuple[Any, dict[str, Any]]:
    # lazy: ~19 ms of imports, only when this runs
    from planner.sheet.table import inputs_of

    sc = workspace(ctx).scenario(*_ref(ctx, ref, fleet_name))
    names = {c.name for c in inputs_of(sc.kind)}
    base = {"model": sc.model, "gpu": sc.gpu, "lora_targets": sc.lora_targets,
            **{k: v for k, v in sc.inputs.items() if k in names}}
    return sc, base


def _variations(ctx: click.Context, texts: tuple[str, ...], kind: str) -> list[Any]:
    # lazy: ~29 ms of imports, only when this runs
    from planner.sheet.sweep import parse_variation

    # lazy: ~19 ms of imports, only when this runs
    from planner.sheet.table import inputs_of

    ws = workspace(ctx)
    gpus, models = [g.name for g in ws.gpus()], [m.name for m in ws.models()]
    columns = {c.name: c for c in inputs_of(kind)}
    return [parse_variation(t, gpus=gpus, models=models, columns=columns) for t in texts]


def _progress_bar(total: int, label: str = "evaluating") -> Any:
    """A bar on stderr for long work (a terminal only), else ``None``."""
    if total < 300_000 or not sys.stderr.isatty():
        return None
    return click.progressbar(length=total, label=label, file=sys.stderr)


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
    if not vary:
        raise ValidationError("--vary", "give one or two variations, e.g. --vary "
                              "batch=1,2,4,...,256 (or --frontier)")
    if levels is not None or concurrency != CONCURRENCY_DEFAULT:
        raise ValidationError("--concurrency/--levels", "work with --frontier (a sweep "
                              "varies concurrency with --vary concurrency=...)")
    # lazy: ~29 ms of imports, only when this runs
    from planner.sheet.sweep import build_grid

    # lazy: ~19 ms of imports, only when this runs
    from planner.sheet.table import graph

    sc, base = _base(ctx, ref, fleet_name)
    variations = _variations(ctx, vary, sc.kind)
    if len(variations) > 2:
        raise ValidationError("--vary", "give one or two variations (a data table has two axes)")
    columns = [c.strip() for c in show.split(",") if c.strip()]
    unknown = [c for c in columns if c not in graph(sc.kind).formulas]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], list(graph(sc.kind).formulas), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ValidationError("--show", f"must be output columns of a {sc.kind} scenario "
                              f"(see `planner scenario show --json`){hint}",
                              value=",".join(unknown))
    if out_path is not None:
        _check_out(out_path, force)
    ws = workspace(ctx)
    total = 1
    for v in variations:
        total *= len(v.values)
    # lazy: the verdict's states, only when this runs
    from planner.sheet import verdict

    states = sc.kind == "inference" and any(c in verdict.MASKED_COLUMNS for c in columns)
    wanted = list(dict.fromkeys([*columns, *(verdict.STATE_INPUTS if states else ()),
                                 *(("gpus_needed",) if states else ())]))
    bar = _progress_bar(total)
    if bar is not None:
        with bar:
            grid = build_grid(base, variations, ws.model_specs(), ws.gpu_specs(), kind=sc.kind,
                              outputs=wanted, progress=lambda done, _n: bar.update(
                                  done - bar.pos), profiles=ws.calibration_figures())
    else:
        grid = build_grid(base, variations, ws.model_specs(), ws.gpu_specs(), kind=sc.kind,
                          outputs=wanted, profiles=ws.calibration_figures())
    sized = False
    if states:
        # lazy: the capacity module (sizing and its re-evaluation), only when this runs
        from planner.sheet.capacity import one_deployment

        sized = one_deployment(base, grid, columns, ws.model_specs(), ws.gpu_specs(),
                               profiles=ws.calibration_figures())
    frame = _grid_frame(grid, [*(["gpus"] if sized and "gpus" not in grid.varied else []),
                               *columns])
    if states:
        _states(frame, grid, base, columns, as_json)
    unmeasured: set[str] = set()
    if "gpu" in grid.varied:
        # lazy: the verdict's confidence rule, only when this runs
        from planner.sheet.verdict import gpu_measured

        unmeasured = {n for n, spec in ws.gpu_specs().items() if not gpu_measured(spec)}
        names = frame["gpu"].tolist()
        if as_json or out_path is not None:  # data keeps the names as they are: a flag column
            frame["gpu_efficiencies_measured"] = [n not in unmeasured for n in names]
        else:
            frame["gpu"] = [f"{n} *" if n in unmeasured else n for n in names]
    if out_path is not None:
        _write(frame, out_path)
        click.echo(f"wrote {len(frame):,} rows to {out_path}", err=True)
    if as_json:
        # lazy: the streaming writer, only when this runs
        from planner.cli import stream

        # the records of frame.to_dict(orient="records"), a chunk at a time, written as made
        step = stream.JSON_CHUNK_ROWS
        stream.write_json_list((record for start in range(0, len(frame), step)
                                for record in frame.iloc[start:start + step].to_dict(
                                    orient="records")), len(frame))
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.sweep(sc, grid, frame, columns)
    if unmeasured & set(grid.varied["gpu"].tolist() if "gpu" in grid.varied else ()):
        click.echo("* GPU whose serving efficiencies are not measured: planner defaults "
                   "(estimates on it are less sure)")


def _frontier(ctx: click.Context, ref: str, fleet_name: str | None, vary: tuple[str, ...],
              concurrency: str, levels: str | None, out_path: Path | None, force: bool,
              as_json: bool) -> None:
    """``sweep --frontier`` (:mod:`planner.sheet.frontier`, printed by
    :mod:`planner.cli.frontier`)."""
    # lazy: the frontier's CLI side and compute, only with --frontier
    from planner.cli import frontier as cli_frontier

    # lazy: the frontier's compute (numpy, the sweep's grid), only with --frontier
    from planner.sheet.frontier import frontier as run

    sc, base = _base(ctx, ref, fleet_name)
    if sc.kind != "inference":
        raise ValidationError("SCENARIO", "an inference scenario (a frontier is of serving)",
                              value=f"{sc.fleet}/{sc.name}")
    points = cli_frontier.concurrency_values(concurrency)
    wanted = cli_frontier.level_values(levels)
    variations = _variations(ctx, vary, sc.kind)
    if out_path is not None:
        _check_out(out_path, force)
    ws = workspace(ctx)
    result = run(base, variations, ws.model_specs(), ws.gpu_specs(), concurrency=points,
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
    """Figures that are states (:func:`planner.sheet.verdict.masked_column`): ``None`` in
    JSON, the state's words ("saturated", "does not fit") in text, in place in ``frame``."""
    import numpy as np

    # lazy: the verdict's states, only when a sweep shows them
    from planner.sheet import verdict

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


def _check_out(path: Path, force: bool) -> None:
    if path.suffix.lower() not in (".csv", ".xlsx"):
        raise ValidationError("--out", "a file name ending in .csv or .xlsx", value=str(path))
    if path.exists() and not force:
        raise PlannerError(f"{path} exists; pass --force to overwrite it")
    if not path.parent.exists():
        raise PlannerError(f"cannot write {path}: folder {path.parent} does not exist")


XLSX_MAX_ROWS = 1_048_575
"""Rows an .xlsx sheet holds under its header row (Excel's limit is 1,048,576 rows)."""


def _write(frame: Any, path: Path) -> None:
    """The sweep to ``path``: CSV by pandas (every text cell quoted, one that a spreadsheet
    would run as a formula prefixed with ``'``: :mod:`planner.io.textcells`), .xlsx row by
    row through openpyxl's write-only workbook (constant memory; names that start like a
    formula are written as text)."""
    try:
        if path.suffix.lower() == ".csv":
            _write_csv(frame, path)
        else:
            _write_xlsx(frame, path)
    except OSError as exc:
        raise PlannerError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _write_csv(frame: Any, path: Path) -> None:
    import pandas as pd

    # lazy: the text-cell rules of the report layer, only when a CSV is written
    from planner.io.textcells import CSV_QUOTING, csv_text

    texts = [c for c in frame.columns if not (pd.api.types.is_numeric_dtype(frame[c])
                                              or pd.api.types.is_bool_dtype(frame[c]))]
    safe = frame.assign(**{str(c): frame[c].map(csv_text) for c in texts})
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(map(str, frame.columns)) + "\n")  # the planner's column names
        safe.to_csv(fh, index=False, header=False, quoting=CSV_QUOTING)


def _write_xlsx(frame: Any, path: Path) -> None:
    if len(frame) > XLSX_MAX_ROWS:
        raise ValidationError("--out", f"an .xlsx sheet holds at most {XLSX_MAX_ROWS:,} rows; "
                              f"this sweep has {len(frame):,}: write a .csv instead",
                              value=str(path))
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    # lazy: as above
    from planner.io.textcells import ooxml_text

    # lazy: the workbook layer's text rules, only when an .xlsx is written
    from planner.io.xlsx.sheetxml import TEXT_TRIGGERS

    wb = Workbook(write_only=True)
    sheet = wb.create_sheet("Sweep")
    sheet.append([str(c) for c in frame.columns])

    def value(v: Any) -> Any:
        if isinstance(v, float) and v != v:
            return None
        if isinstance(v, str):
            v = ooxml_text(v)
        if isinstance(v, str) and v.startswith(TEXT_TRIGGERS):
            cell = WriteOnlyCell(sheet, value=v)
            cell.data_type = "s"  # text, never a formula
            cell.quotePrefix = True
            return cell
        return v

    bar = _progress_bar(len(frame), label="writing")
    with bar if bar is not None else contextlib.nullcontext() as progress:
        for i, row in enumerate(frame.itertuples(index=False, name=None), 1):
            sheet.append([value(v) for v in row])
            if progress is not None and i % 10_000 == 0:
                progress.update(10_000)
    wb.save(path)


CAPACITY_EXAMPLE = ("planner solve --model llama-3-70b --engine vllm --target-requests-per-s "
                    "2000/min --prompt 1000 --output 250 --slo-ttft-s 1 --slo-percentile 50 "
                    "--slo-tpot-s 0.05")
"""The capacity task of issue 24 as one command (docs/capacity-task.md shows its output)."""


@click.command()
@click.argument("ref", metavar="[SCENARIO]", required=False)
@fleet_option
@click.option("--maximize", "maximize", metavar="COLUMN", help="Column to make as large as "
              "possible (e.g. prompt_tokens, batch).")
@click.option("--minimize", "minimize", metavar="COLUMN", help="Column to make as small as "
              "possible (e.g. gpus, cost_usd_per_hour). Without --maximize or --minimize: the "
              "capacity question (the cheapest deployment that meets the SLO).")
@click.option("--subject-to", "constraint", metavar="EXPR",
              help='Constraint, e.g. "fits and ttft_s <= 0.5" (columns, numbers, comparisons, '
                   "and/or/not, + - * /; strings in quotes). The capacity question adds it to "
                   "meets_slo.")
@click.option("--vary", "vary", multiple=True, metavar="COLUMN=VALUES",
              help="What may change (default: the maximized/minimized input over its range; "
                   "for the capacity question gpu=* tp=1,2,4,8 gpus=1..64 "
                   "weight_dtype=bf16,fp8, each replaced by a --vary of that column).")
@click.option("--gpu-filter", metavar="TEXT", default="",
              help="Capacity question: only GPUs whose name, label or vendor contains TEXT "
                   "(h100, amd, nvidia), as the UI's solve filter.")
@click.option("--utilization-cap", type=float, metavar="FRACTION",
              help="Capacity question: only deployments at most this utilised (0 < cap <= 1).")
@click.option("--as-options", "as_options", type=click.IntRange(1, 20), metavar="K",
              help="Also write the K best answers (other than SCENARIO as it is) as options of "
                   "SCENARIO's group, named SCENARIO+column=value; not chosen, so the fleet's "
                   "totals stay. Needs SCENARIO; --vary unless the capacity question.")
@click.option("--choose-best", is_flag=True,
              help="With --as-options: choose the best answer (it becomes the one counted).")
@inference_options(required=False)
@json_option
@click.pass_context
def solve(ctx: click.Context, ref: str | None, fleet_name: str | None, maximize: str | None,
          minimize: str | None, constraint: str | None, vary: tuple[str, ...],
          gpu_filter: str, utilization_cap: float | None, as_options: int | None,
          choose_best: bool, model_ref: str | None, as_json: bool, **kwargs: Any) -> None:
    """Goal seek with exact integer answers, over a saved SCENARIO or, without one, over the
    scenario the options of `planner estimate` describe (nothing is saved).

    Without --maximize or --minimize it answers the capacity question: the cheapest GPU × TP ×
    count × weight dtype that meets the SLO at the target rate (the UI's solve preset, the
    same search), the answer first, then the runners-up.

    \b
    Examples:
      planner solve --model llama-3-70b --engine vllm --target-requests-per-s 2000/min \\
          --prompt 1000 --output 250 --slo-ttft-s 1 --slo-percentile 50 --slo-tpot-s 0.05
      planner solve prod/chat --gpu-filter nvidia --as-options 3
      planner solve demo/llama3-8b-24gib-6x8k --maximize prompt_tokens --subject-to fits
      planner solve prod/chat --minimize gpus --vary gpus=1..64 --vary tp=1,2,4,8 \\
          --subject-to "meets_target_rate and fits"
      planner solve prod/chat --minimize cost_usd_per_month --vary gpu=h100-sxm,h200,mi300x \\
          --vary gpus=1..16 --subject-to "meets_slo" --as-options 3
    """
    if maximize and minimize:
        raise ValidationError("--maximize/--minimize", "give exactly one of them (or "
                              "neither, for the capacity question)")
    capacity = not (maximize or minimize)
    if not capacity and (gpu_filter or utilization_cap is not None):
        raise ValidationError("--gpu-filter/--utilization-cap", "narrow the capacity question "
                              "(solve without --maximize/--minimize)")
    if choose_best and not as_options:
        raise ValidationError("--choose-best", "works with --as-options K")
    if as_options and not vary and not capacity:
        raise ValidationError("--as-options", "say what may change with --vary column=values")
    typed = [k for k, v in kwargs.items() if v is not None]
    if ref is not None and (model_ref or typed):
        raise ValidationError("SCENARIO", "give a saved SCENARIO or --model with the inputs "
                              "`planner estimate` takes, not both", value=ref)
    if ref is None and not model_ref:
        raise ValidationError("SCENARIO", "give a saved SCENARIO, or --model with the inputs "
                              f"`planner estimate` takes, e.g. {CAPACITY_EXAMPLE}")
    if ref is None and as_options:
        raise ValidationError("--as-options", "writes options of a saved SCENARIO; give one")
    ws = workspace(ctx)
    models, gpus = dict(ws.model_specs()), dict(ws.gpu_specs())
    profiles = ws.calibration_figures()
    if ref is not None:
        sc, base = _base(ctx, ref, fleet_name)
        kind, title = sc.kind, f"{sc.fleet}/{sc.name}"
    else:
        # lazy: the estimate command's option parsing, only when this runs
        from planner.cli.estimate import inference_base

        spec, gpu, inputs = inference_base(ctx, str(model_ref), kwargs)
        models[spec.name] = spec
        if gpu is not None:
            gpus[gpu.name] = gpu
        base = {"model": spec.name, "gpu": gpu.name if gpu is not None else next(iter(gpus)),
                "lora_targets": "", **inputs}
        sc, kind, title = None, "inference", spec.name
        if gpu is not None and capacity:
            if kwargs.get("serving_mode") == "disaggregated":
                vary = (f"gpu={gpu.name}", *vary)  # --gpu: the prefill pool's GPU
            else:
                gpus = {gpu.name: gpu}  # --gpu: the question is TP, count and dtype on it
    if capacity:
        if kind != "inference":
            raise ValidationError("--minimize", "the capacity question is for inference "
                                  "scenarios; give --maximize or --minimize")
        _capacity(ctx, ws, sc, title, base, models, gpus, profiles, vary, constraint,
                  gpu_filter, utilization_cap, as_options, choose_best, as_json)
        return
    # lazy: ~29 ms of imports, only when this runs
    from planner.sheet.sweep import solve as run

    objective = maximize or minimize or ""
    sense = "max" if maximize else "min"
    variations = _variations(ctx, vary, kind)
    result = run(base, objective, sense, constraint, variations, models, gpus, kind=kind,
                 profiles=profiles)
    written: list[str] = []
    if as_options and result.found and sc is not None:
        # lazy: ~29 ms of imports, only when this runs
        from planner.sheet.sweep import solve_best

        answers = solve_best(base, objective, sense, constraint, variations, models, gpus,
                             as_options + 1, kind=kind, profiles=profiles)
        varied = [v.column for v in variations]
        changes = [{k: a[k] for k in varied} for a in answers]  # SCENARIO as it is: no option
        changes = [c for c in changes if any(v != base[k] for k, v in c.items())][:as_options]
        made = ws.add_options(sc.fleet, sc.name, changes, choose_first=choose_best)
        written = [f"{o.fleet}/{o.name}" for o in made]
    answer = None
    if result.found and kind == "inference":
        answer = _answer_estimate(models, gpus, base, profiles,
                                  {v.column: result.values[v.column] for v in variations
                                   if v.column in result.values})
    if as_json:
        # lazy: the verdict's states and confidence rule, only when this runs
        from planner.sheet import verdict

        measured = {}
        values = dict(result.values)
        if answer is not None:
            masked = verdict.json_outputs(answer, answer["inputs"])
            values = {k: masked.get(k, v) for k, v in values.items()}
        if result.found and "gpu" in result.values:
            spec_ = gpus.get(str(result.values["gpu"]))
            measured = {"gpu_efficiencies_measured": spec_ is not None
                        and verdict.gpu_measured(spec_)}
        emit_json({**asdict(result), "values": values, **measured,
                   **({"options": written} if as_options else {})})
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.solution(title, result, constraint, [v.split("=")[0] for v in vary])
    if answer is not None:
        # lazy: the verdict's confidence rule, only when this runs
        from planner.sheet.verdict import gpu_measured

        render.answer_verdict(answer, gpu_measured(gpus[str(answer["gpu"])]))
    if written:
        click.echo(f"wrote {len(written)} option(s): " + ", ".join(written)
                   + (" (the first is chosen)" if choose_best else " (none chosen)"))
    if not result.found:
        ctx.exit(1)


def _answer_estimate(models: dict[str, Any], gpus: dict[str, Any], base: dict[str, Any],
                     profiles: Any, values: dict[str, Any]) -> dict[str, Any]:
    """The solved deployment estimated once: the scenario with the answer's varied values
    (the figures at the target rate, not the idle bounds)."""
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    answer = {**base, **values}
    model, gpu = models[str(answer.pop("model"))], gpus[str(answer.pop("gpu"))]
    answer.pop("lora_targets", None)
    return service.estimate(model, gpu, answer, profiles=profiles)


def _capacity(ctx: click.Context, ws: Any, sc: Any, title: str, base: dict[str, Any],
              models: dict[str, Any], gpus: dict[str, Any], profiles: Any,
              vary: tuple[str, ...], constraint: str | None, gpu_filter: str,
              utilization_cap: float | None, as_options: int | None, choose_best: bool,
              as_json: bool) -> None:
    """The capacity question (:mod:`planner.sheet.capacity`, the UI's solve preset): the
    cheapest deployment that meets the SLO at the target rate, and the runners-up."""
    if base.get("serving_mode") == "disaggregated":
        _disagg_capacity(ctx, ws, sc, title, base, models, gpus, profiles, vary, constraint,
                         gpu_filter, utilization_cap, as_options, choose_best, as_json)
        return
    # lazy: the capacity solve (numpy, the sweep), only when this runs
    from planner.sheet.capacity import ANSWERS, capacity_query, solve_capacity

    query = capacity_query(base, gpus, gpu_filter=gpu_filter, utilization_cap=utilization_cap,
                           vary=vary, constraint=constraint)
    answers = solve_capacity(base, query, models, gpus, max(ANSWERS, as_options or 0) + 1,
                             profiles)
    written: list[str] = []
    if as_options and answers and sc is not None:
        varied = {v.split("=")[0] for v in query.vary}
        changes = [a.changes for a in answers
                   if any(v != base.get(k) for k, v in a.changes.items() if k in varied)]
        made = ws.add_options(sc.fleet, sc.name, changes[:as_options],
                              choose_first=choose_best)
        written = [f"{o.fleet}/{o.name}" for o in made]
    answers = answers[:ANSWERS]
    if as_json:
        # lazy: the verdict's JSON rules, only when this runs
        from planner.sheet import verdict

        shown = ("cost_usd_per_month", *verdict.VERDICT, "saturated", "engine_fits")

        def record(a: Any) -> dict[str, Any]:
            inputs = {**base, **a.changes}
            spec = gpus.get(str(inputs["gpu"]))
            masked = verdict.json_outputs(a.outputs, inputs)
            return {"gpu": str(inputs["gpu"]), "tp": int(inputs.get("tp", 1)),
                    "pp": int(inputs.get("pp", 1)), "gpus": int(inputs.get("gpus", 1)),
                    "replicas": int(a.outputs["replicas"]),
                    "weight_dtype": str(inputs.get("weight_dtype", "auto")),
                    **{k: masked[k] for k in shown if k in masked},
                    "gpu_efficiencies_measured": spec is not None and verdict.gpu_measured(spec)}

        emit_json({"found": bool(answers), "objective": query.objective,
                   "constraint": query.constraint, "vary": list(query.vary),
                   "answer": record(answers[0]) if answers else None,
                   "runners_up": [record(a) for a in answers[1:]],
                   **({"options": written} if as_options else {})})
        if not answers:
            ctx.exit(1)
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.capacity(title, base, answers, gpus, query)
    if written:
        click.echo(f"wrote {len(written)} option(s): " + ", ".join(written)
                   + (" (the first is chosen)" if choose_best else " (none chosen)"))
    if not answers:
        ctx.exit(1)


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
    from planner.compare import compare as run

    ws = workspace(ctx)
    scenarios = [ws.scenario(*_ref(ctx, r, fleet_name)) for r in refs]
    outputs = ws.evaluate_many(scenarios)
    columns = [c.strip() for c in show.split(",")] if show else None
    rows = run(scenarios, outputs, columns)
    if as_json:
        # lazy: the verdict's states, only when this runs
        from planner.sheet import verdict

        states = {*verdict.STATES, verdict.NO_TARGET, verdict.UNREACHABLE}
        records = [asdict(r) for r in rows]
        for record in records:  # a figure that is a state is null, as estimate --json gives
            if record["column"] in verdict.MASKED_COLUMNS:
                record["values"] = [None if isinstance(v, str) and v in states else v
                                    for v in record["values"]]
        emit_json({"scenarios": [f"{s.fleet}/{s.name}" for s in scenarios],
                   "rows": records})
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.comparison(scenarios, rows)
    # lazy: the verdict's confidence rule, only when this runs
    from planner.sheet.verdict import UNMEASURED_NOTE, gpu_measured

    specs = ws.gpu_specs()
    unsure = sorted({s.gpu for s in scenarios if s.gpu in specs
                     and not gpu_measured(specs[s.gpu])})
    if unsure:
        click.echo(f"* {', '.join(unsure)}: {UNMEASURED_NOTE} (estimates less sure)")


def _disagg_capacity(ctx: click.Context, ws: Any, sc: Any, title: str, base: dict[str, Any],
                     models: dict[str, Any], gpus: dict[str, Any], profiles: Any,
                     vary: tuple[str, ...], constraint: str | None, gpu_filter: str,
                     utilization_cap: float | None, as_options: int | None,
                     choose_best: bool, as_json: bool) -> None:
    """The capacity question for a disaggregated deployment (:mod:`planner.sheet.disagg_sizing`):
    the cheapest xPyD (each pool's workers and TP; the prefill GPU from the scenario, or every
    GPU ``--gpu-filter`` keeps or ``--vary gpu=...`` names; the decode GPU the same type unless
    ``--vary decode_gpu=...``), then the runners-up."""
    # lazy: the disaggregated search (numpy), only when this runs
    from planner.sheet import disagg_sizing as ds

    # lazy: the capacity module's GPU filter (numpy, the sweep), only when this runs
    from planner.sheet.capacity import filtered_gpus

    if constraint:
        raise ValidationError("--subject-to", "the disaggregated solve meets the SLO; narrow it "
                              "with --utilization-cap or --vary", value=constraint)
    search = ds.search_from_vary(vary, gpus)
    search.setdefault("prefill_gpus", tuple(gpus))  # like the aggregated question: every GPU
    if gpu_filter:
        names = filtered_gpus(gpus, gpu_filter)
        search["prefill_gpus"] = tuple(n for n in search["prefill_gpus"] if n in names)
    answers = ds.size_disaggregated(base, models, gpus, utilization_cap=utilization_cap,
                                    count=max(ds.ANSWERS, as_options or 0), profiles=profiles,
                                    **search)
    written: list[str] = []
    if as_options and answers and sc is not None:
        changes = [{k: v for k, v in a.changes.items() if base.get(k) != v}
                   for a in answers[:as_options]]  # only what differs names the option
        made = ws.add_options(sc.fleet, sc.name, changes, choose_first=choose_best)
        written = [f"{o.fleet}/{o.name}" for o in made]
    answers = answers[:ds.ANSWERS]
    if as_json:
        # lazy: the verdict's JSON rules, only when this runs
        from planner.sheet import verdict

        def record(a: Any) -> dict[str, Any]:
            inputs = {**base, **a.changes}
            masked = verdict.json_outputs(a.outputs, inputs)
            decode_gpu = inputs["gpu"] if inputs["decode_gpu"] == "same" else inputs["decode_gpu"]
            return {"prefill": {"gpu": inputs["gpu"], "tp": inputs["prefill_tp"],
                                "workers": inputs["prefill_workers"]},
                    "decode": {"gpu": decode_gpu, "tp": inputs["decode_tp"],
                               "workers": inputs["decode_workers"]},
                    "weight_dtype": inputs["weight_dtype"],
                    **{k: masked.get(k, v) for k, v in a.outputs.items()}}

        emit_json({"found": bool(answers), "serving_mode": "disaggregated",
                   "answer": record(answers[0]) if answers else None,
                   "runners_up": [record(a) for a in answers[1:]],
                   **({"options": written} if as_options else {})})
        if not answers:
            ctx.exit(1)
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.disagg_capacity(title, base, answers, gpus)
    if written:
        click.echo(f"wrote {len(written)} option(s): " + ", ".join(written)
                   + (" (the first is chosen)" if choose_best else " (none chosen)"))
    if not answers:
        ctx.exit(1)
