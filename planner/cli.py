"""The ``planner`` command: a thin shell over :mod:`planner.service`; no arithmetic here.

Scenario flags are generated from the input columns of :mod:`planner.sheet.inputs`, so every
flag's help shows its unit, allowed range and default, and a bad value is refused by the same
validation the UI and workbook import use (exit status 2, message naming the flag and the range).
``--json`` output is a contract for scripts: keys are column names, values plain numbers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from planner.errors import PlannerError, ValidationError
from planner.sheet.inputs import INFERENCE_INPUTS, TRAINING_INPUTS, InputColumn

ALIASES = {
    "prompt_tokens": ("--prompt",),
    "output_tokens": ("--output",),
    "weight_dtype": ("--weight-dtype",),
    "kv_dtype": ("--kv-dtype",),
    "train_tokens": ("--tokens",),
    "train_seq_len": ("--seq-len",),
    "micro_batch_size": ("--micro-batch",),
    "lora_rank": ("--lora-rank",),
}


class ColumnType(click.ParamType):
    """A click parameter validated by an :class:`InputColumn`."""

    def __init__(self, column: InputColumn) -> None:
        self.column = column
        self.name = column.kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.column.parse(value)
        except ValidationError as exc:
            self.fail(f"{self.column.name} must be {exc.allowed} (got {value!r})", param, ctx)


def _flag_names(column: InputColumn) -> list[str]:
    long = "--" + column.name.replace("_", "-")
    return [*ALIASES.get(column.name, ()), *([long] if long not in ALIASES.get(column.name, ())
                                             else [])]


def column_options(columns: tuple[InputColumn, ...], skip: tuple[str, ...] = ()
                   ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command with one option per input column (default None = column default)."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        for column in reversed(columns):
            if column.name in skip:
                continue
            default = column.default
            shown = "yes" if default is True else "no" if default is False else default
            help_text = (f"{column.help} [{column.unit}; {column.allowed()}; "
                         f"default: {shown}]")
            f = click.option(*_flag_names(column), column.name, type=ColumnType(column),
                             default=None, help=help_text, metavar=column.kind.upper())(f)
        return f

    return decorate


def _given(kwargs: dict[str, Any], columns: tuple[InputColumn, ...]) -> dict[str, Any]:
    names = {c.name for c in columns}
    return {k: v for k, v in kwargs.items() if k in names and v is not None}


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


class PlannerGroup(click.Group):
    """Turns :class:`PlannerError` (a user's mistake) into ``Error: …`` and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PlannerError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)


@click.group(cls=PlannerGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="planner")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """LLM capacity planning from a model's architecture: weight memory, KV cache, concurrency,
    FLOPs, latency and throughput bounds, serving and training cost.

    Units: GB = 10^9 B, GiB = 2^30 B; FLOPs are counts, FLOP/s rates.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@cli.group(cls=PlannerGroup)
def model() -> None:
    """Inspect models: catalog names or config.json paths."""


@model.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def model_list(as_json: bool) -> None:
    """List catalog models with their parameter counts."""
    from planner import catalog, service

    rows = []
    for name in catalog.model_names():
        info = service.inspect_model(catalog.resolve_model_spec(name))
        rows.append({"name": name, "model_type": info["model_type"],
                     "params_total": info["params"]["total"],
                     "params_active": info["params"]["active"],
                     "kv_bytes_per_token": info["kv_bytes_per_token"],
                     "source": catalog.model_sources().get(name, {}).get("hub_id", "")})
    if as_json:
        _emit_json(rows)
        return
    from planner import render

    render.model_list(rows)


@model.command("inspect")
@click.argument("config_or_name")
@click.option("--kv-dtype", default="bf16", show_default=True,
              help="KV-cache dtype for kv_bytes_per_token (bf16, fp16, fp8, int8).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def model_inspect(config_or_name: str, kv_dtype: str, as_json: bool) -> None:
    """Parameters by component and KV-cache bytes per token of a model.

    CONFIG_OR_NAME is a catalog name (see `planner model list`) or a path to a Hugging Face
    config.json.
    """
    from planner import catalog, service

    info = service.inspect_model(catalog.resolve_model_spec(config_or_name), kv_dtype)
    if as_json:
        _emit_json(info)
        return
    from planner import render

    render.model_inspect(info)


@cli.group(cls=PlannerGroup)
def gpu() -> None:
    """Inspect the GPU catalog."""


@gpu.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def gpu_list(as_json: bool) -> None:
    """List catalog GPUs with their datasheet figures (dense tensor throughput)."""
    from dataclasses import asdict

    from planner import catalog

    gpus = list(catalog.load_gpus().values())
    if as_json:
        _emit_json([asdict(g) for g in gpus])
        return
    from planner import render

    render.gpu_list(gpus)


def _gpu_options(f: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--gpu", "gpu_name", metavar="NAME",
                     help="Catalog GPU (see `planner gpu list`); or give the --gpu-* figures."),
        click.option("--gpu-memory-gib", type=float, help="Ad-hoc GPU memory [GiB]."),
        click.option("--gpu-tflops", type=float,
                     help="Ad-hoc GPU dense tensor peak for every dtype [10^12 FLOP/s]."),
        click.option("--gpu-bandwidth-gbs", type=float,
                     help="Ad-hoc GPU memory bandwidth [GB/s = 10^9 B/s]."),
        click.option("--price-usd-per-hour", type=float,
                     help="Price per GPU-hour [USD]; overrides the catalog's example price."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _resolve_gpu(kwargs: dict[str, Any]) -> Any:
    from planner import catalog, service

    base = catalog.resolve_gpu(kwargs["gpu_name"]) if kwargs.get("gpu_name") else None
    return service.adhoc_gpu(base, memory_gib=kwargs.get("gpu_memory_gib"),
                             tflops=kwargs.get("gpu_tflops"),
                             bandwidth_gb_per_s=kwargs.get("gpu_bandwidth_gbs"),
                             price_usd_per_hour=kwargs.get("price_usd_per_hour"))


@cli.command()
@click.option("--model", "model_ref", required=True, metavar="CONFIG_OR_NAME",
              help="Catalog model name or config.json path.")
@_gpu_options
@column_options(INFERENCE_INPUTS)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def estimate(model_ref: str, as_json: bool, **kwargs: Any) -> None:
    """Memory fit, FLOPs, latency and throughput bounds, and cost of serving a model.

    Example: planner estimate --model llama-3-8b --gpu h100-sxm --prompt 1024 --output 128
    """
    from planner import catalog, service

    spec = catalog.resolve_model_spec(model_ref)
    gpu = _resolve_gpu(kwargs)
    inputs = _given(kwargs, INFERENCE_INPUTS)
    if "reserve_gib" in inputs and "reserve_fraction" not in inputs:
        inputs["reserve_fraction"] = 0.0
    result = service.estimate(spec, gpu, inputs)
    if as_json:
        _emit_json(result)
        return
    from planner import render

    render.estimate(result, gpu)


@cli.command()
@click.option("--model", "model_ref", required=True, metavar="CONFIG_OR_NAME",
              help="Catalog model name or config.json path.")
@_gpu_options
@column_options(TRAINING_INPUTS, skip=("reserve_gib", "reserve_fraction"))
@click.option("--lora-targets", default="q,v", show_default=True,
              help="Modules LoRA adapts (q,k,v,o,gate,up,down; MLA: q_a,q_b,kv_a,kv_b; all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def train(model_ref: str, lora_targets: str, as_json: bool, **kwargs: Any) -> None:
    """Compute (6*N*D), time, GPU-hours, cost and per-GPU memory of training or fine-tuning.

    Example: planner train --model llama-2-7b --gpu a100-80gb --gpus 8 --tokens 2e9
    """
    from planner import catalog, service

    spec = catalog.resolve_model_spec(model_ref)
    gpu = _resolve_gpu(kwargs)
    inputs = _given(kwargs, TRAINING_INPUTS)
    if "reserve_gib" in inputs and "reserve_fraction" not in inputs:
        inputs["reserve_fraction"] = 0.0
    result = service.train(spec, gpu, inputs, lora_targets=lora_targets)
    if as_json:
        _emit_json(result)
        return
    from planner import render

    render.train(result, gpu)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="planner", standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
