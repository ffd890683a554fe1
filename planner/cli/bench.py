"""``planner bench …``: measured benchmark runs in the database (issue 12), and
``planner calibrate``: fit the serving model's efficiency figures to them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from planner.cli.common import PlannerGroup, emit_json, json_option, parse_assignments, workspace


@click.group(cls=PlannerGroup)
def bench() -> None:
    """Measured benchmark runs: import result files, list, show, delete.

    Formats read (told apart by content): `vllm bench serve` printed summary and its
    --save-result JSON, SGLang bench_serving output and its --output-file JSON lines,
    trtllm-bench throughput report, GuideLLM report JSON, and the generic CSV whose header is
    exactly
    model,gpu,gpus,tp,pp,engine,weight_dtype,kv_dtype,mode,request_rate,concurrency,
    input_tokens,output_tokens,output_tokens_per_s,ttft_mean_ms,ttft_p50_ms,ttft_p99_ms,
    tpot_mean_ms,itl_mean_ms (one row per run; an empty cell is unknown).
    """


def _row(m: Any) -> dict[str, Any]:
    return m.as_dict()


@bench.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--model", help="Model name in the database, the Hub id org/name[@commit] it was "
                              "imported from, or a config.json path, for runs whose file does "
                              "not name one (wins over a Hub id in the file).")
@click.option("--gpu", help="GPU name in the database (wins over a device name in the file).")
@click.option("--engine", type=click.Choice(["vllm", "sglang", "trtllm"]),
              help="Serving engine of the runs.")
@click.option("--tp", type=click.IntRange(min=1), help="Tensor-parallel size.")
@click.option("--pp", type=click.IntRange(min=1), help="Pipeline-parallel size.")
@click.option("--gpus", type=click.IntRange(min=1), help="GPUs of the deployment.")
@click.option("--weight-dtype", help="Weight dtype (bf16, fp16, fp8, int8, int4).")
@click.option("--kv-dtype", help="KV-cache dtype (bf16, fp16, fp8, int8).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="An engine setting of every run, by scenario input name "
                   "(max_num_seqs=256, mem_fraction_static=0.85, ep=8); repeatable.")
@json_option
@click.pass_context
def bench_import(ctx: click.Context, files: tuple[Path, ...], model: str | None,
                 gpu: str | None, engine: str | None, tp: int | None, pp: int | None,
                 gpus: int | None, weight_dtype: str | None, kv_dtype: str | None,
                 sets: tuple[str, ...], as_json: bool) -> None:
    """Import benchmark result FILES: every run or, on any error (named FILE:line), none.

    Settings a file does not hold come from the flags; what is still unknown is stored as
    unknown. A run already stored (same model, GPU, settings and figures) is skipped.
    """
    flags = {"model": model, "gpu": gpu, "engine": engine, "tp": tp, "pp": pp, "gpus": gpus,
             "weight_dtype": weight_dtype, "kv_dtype": kv_dtype}
    result = workspace(ctx).import_measurements(list(files), flags, parse_assignments(sets))
    if as_json:
        emit_json({"added": [m.id for m in result.added], "duplicates": result.duplicates,
                   "files": result.files})
        return
    click.echo(f"imported {len(result.added)} runs from {result.files} file(s)"
               + (f"; {result.duplicates} already stored" if result.duplicates else ""))


@bench.command("list")
@click.option("--model", help="Only this model's runs (its name, or the Hub id it was imported "
                              "from).")
@click.option("--gpu", help="Only this GPU's runs.")
@click.option("--engine", help="Only this engine's runs.")
@json_option
@click.pass_context
def bench_list(ctx: click.Context, model: str | None, gpu: str | None, engine: str | None,
               as_json: bool) -> None:
    """List stored runs: id, model, GPU, engine, TP, mode, tokens and measured figures."""
    runs = workspace(ctx).measurements(model=model, gpu=gpu, engine=engine)
    if as_json:
        emit_json([_row(m) for m in runs])
        return
    if not runs:
        click.echo("no benchmark runs stored (planner bench import FILE...)")
        return

    def fmt(value: Any, spec: str = ".4g") -> str:
        return "-" if value is None else format(value, spec)

    click.echo(f"{'id':>5} {'model':24} {'gpu':12} {'engine':7} {'tp':>3} {'mode':11} "
               f"{'in':>7} {'out':>7} {'out tok/s':>10} {'TTFT ms':>9} {'TPOT ms':>8}")
    for m in runs:
        v = m.values
        click.echo(f"{m.id:5d} {m.model[:24]:24} {m.gpu[:12]:12} {fmt(v['engine'], ''):7} "
                   f"{fmt(v['tp'], 'd'):>3} {fmt(v['mode'], ''):11} "
                   f"{fmt(v['input_tokens']):>7} {fmt(v['output_tokens']):>7} "
                   f"{fmt(v['output_tokens_per_s']):>10} {fmt(v['ttft_mean_ms']):>9} "
                   f"{fmt(v['tpot_mean_ms']):>8}")


@bench.command("show")
@click.argument("measurement_id", type=int)
@json_option
@click.pass_context
def bench_show(ctx: click.Context, measurement_id: int, as_json: bool) -> None:
    """Every setting and figure of one stored run (unknown ones as '-')."""
    data = _row(workspace(ctx).measurement(measurement_id))
    if as_json:
        emit_json(data)
        return
    for key, value in data.items():
        click.echo(f"{key:20} {'-' if value is None or value == {} else value}")


@bench.command("delete")
@click.argument("ids", nargs=-1, required=True, type=int)
@json_option
@click.pass_context
def bench_delete(ctx: click.Context, ids: tuple[int, ...], as_json: bool) -> None:
    """Delete stored runs by id (all or none)."""
    count = workspace(ctx).delete_measurements(list(ids))
    if as_json:
        emit_json({"deleted": count})
        return
    click.echo(f"deleted {count} run(s)")


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


@click.command("calibrate")
@click.option("--gpu", help="GPU of the runs to fit (needed when runs of several GPUs match).")
@click.option("--engine", type=click.Choice(["vllm", "sglang", "trtllm"]),
              help="Engine of the runs to fit (needed when runs of several engines match).")
@click.option("--model", help="Fit only this model's runs (its name, or the Hub id it was "
                              "imported from; default: every model, the figures are shared "
                              "across models).")
@click.option("--holdout", type=click.FloatRange(0, 1, max_open=True), default=0.2,
              show_default=True, help="Share of the runs (per mode) kept out of the fit and "
                                      "scored afterwards.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the holdout draw (same data and seed: same runs held out).")
@click.option("--name", help="Profile name (default GPU-ENGINE[-MODEL]); an existing name "
                             "gets a new version.")
@json_option
@click.pass_context
def calibrate(ctx: click.Context, gpu: str | None, engine: str | None, model: str | None,
              holdout: float, seed: int, name: str | None, as_json: bool) -> None:
    """Fit the serving model's efficiency figures (matmul and bandwidth shares, per-step
    overhead, collective efficiency) to stored benchmark runs of one GPU and engine, by robust
    least squares on log error; print the before/after error table and the error on held-out
    runs, and store the fit as a versioned calibration profile.
    """
    profile = workspace(ctx).calibrate(gpu=gpu, engine=engine, model=model, holdout=holdout,
                                       seed=seed, name=name)
    # lazy: the fit's parameter ranges, only when this runs
    from planner.compute.calibration import at_bound

    bounded = at_bound(profile.parameters, profile.fitted)
    if as_json:
        emit_json({**profile.summary(),
                   "at_bound": [{"parameter": n, "value": v, "bound": side, "limit": b}
                                for n, v, side, b in bounded]})
        return
    errors = profile.errors
    click.echo(f"profile {profile.name} version {profile.version}: {profile.gpu} / "
               f"{profile.engine}, {len(profile.fit_ids)} runs fitted, "
               f"{len(profile.holdout_ids)} held out (seed {errors['seed']})")
    click.echo(f"\n{'parameter':26} {'before':>10} {'fitted':>10}")
    for key, value in profile.parameters.items():
        note = "" if key in profile.fitted else "  (not constrained by these runs: kept)"
        click.echo(f"{key:26} {profile.start[key]:10.4g} {value:10.4g}{note}")
    for key, value, side, bound in bounded:
        click.echo(f"warning: {key} = {value:.4g} sits at its {side} bound ({bound:g}): the "
                   "runs push it past its physical range, so it is not measured by them; "
                   "check the runs' settings or import runs that constrain it", err=True)
    click.echo("\n|predicted/measured - 1|      throughput            TTFT                TPOT")
    click.echo(f"{'':22}" + "  median    p90   n" * 3)
    for label, key in (("before (fitted runs)", "before"), ("after (fitted runs)", "after"),
                       ("before (held out)", "holdout_before"),
                       ("after (held out)", "holdout")):
        e = errors[key]
        cells = "".join(f"  {_pct(e[f'{m}_median_abs_error']):>6} "
                        f"{_pct(e[f'{m}_p90_abs_error']):>6} {e[f'{m}_n']:3d}"
                        for m in ("throughput", "ttft", "tpot"))
        click.echo(f"{label:22}{cells}")
    if errors["skipped"]:
        click.echo(f"\n{len(errors['skipped'])} runs not scorable: "
                   + "; ".join(f"#{s['id']} {s['reason']}" for s in errors["skipped"][:5]))


@bench.command("profiles")
@json_option
@click.pass_context
def bench_profiles(ctx: click.Context, as_json: bool) -> None:
    """List calibration profiles (every version) with their fitted figures."""
    profiles = workspace(ctx).calibration_profiles()
    if as_json:
        emit_json([p.as_dict() for p in profiles])
        return
    if not profiles:
        click.echo("no calibration profiles (planner calibrate)")
    for p in profiles:
        figures = ", ".join(f"{k} {v:.4g}" for k, v in p.parameters.items())
        held = p.errors["holdout"].get("throughput_median_abs_error")
        click.echo(f"{p.name} v{p.version}  {p.gpu}/{p.engine}  {figures}  "
                   f"held-out throughput error {_pct(held)}")
