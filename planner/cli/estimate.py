"""``planner estimate`` and ``planner train``: one scenario from flags, without saving it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from planner.cli.common import column_options, emit_json, given, gpu_spec, json_option, model_spec
from planner.compute.inputs import INFERENCE_INPUTS, TRAINING_DEFAULT_OVERRIDES, TRAINING_INPUTS
from planner.core.errors import PlannerError


def _gpu_options(f: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--gpu", "gpu_name", metavar="NAME",
                     help="GPU from the database (see `planner gpu list`); or give the "
                          "--gpu-* figures."),
        click.option("--gpu-memory-gib", type=float, help="Ad-hoc GPU memory [GiB]."),
        click.option("--gpu-tflops", type=float,
                     help="Ad-hoc GPU dense tensor peak for every dtype [10^12 FLOP/s]."),
        click.option("--gpu-bandwidth-gbs", type=float,
                     help="Ad-hoc GPU memory bandwidth [GB/s = 10^9 B/s]."),
        click.option("--price-usd-per-hour", type=float,
                     help="Price per GPU-hour [USD]; overrides the GPU's stored price."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _resolve_gpu(ctx: click.Context, kwargs: dict[str, Any]) -> Any:
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    base = gpu_spec(ctx, kwargs["gpu_name"]) if kwargs.get("gpu_name") else None
    return service.adhoc_gpu(base, memory_gib=kwargs.get("gpu_memory_gib"),
                             tflops=kwargs.get("gpu_tflops"),
                             bandwidth_gb_per_s=kwargs.get("gpu_bandwidth_gbs"),
                             price_usd_per_hour=kwargs.get("price_usd_per_hour"))


def decode_gpu_spec(ctx: click.Context, gpu: Any, inputs: dict[str, Any]) -> Any:
    """The spec of the ``decode_gpu`` input's GPU (a disaggregated deployment's decode pool
    on another type) from the database, or None where it is ``same`` or the scenario's own
    (an unknown name is refused by the row's validation, naming the catalog)."""
    name = str(inputs.get("decode_gpu") or "same")
    if name == "same" or name == gpu.name:
        return None
    try:
        return gpu_spec(ctx, name)
    except PlannerError:
        return None


MODEL_HELP = ("Model name in the database, a config.json path, or a Hub id "
              "org/name[@revision] (an imported model, else its config.json read from the "
              "Hugging Face cache or the Hub; nothing is saved).")


def inference_options(required: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options ``planner estimate`` takes (``--model``, the GPU, one per inference input
    column), for any command that evaluates an unsaved scenario (``planner solve`` without a
    SCENARIO): one definition, parsed once (:func:`inference_base`)."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        f = column_options(INFERENCE_INPUTS)(f)
        f = _gpu_options(f)
        return click.option("--model", "model_ref", required=required, metavar="CONFIG_OR_NAME",
                            help=MODEL_HELP)(f)

    return decorate


GPU_FLAGS = ("gpu_name", "gpu_memory_gib", "gpu_tflops", "gpu_bandwidth_gbs",
             "price_usd_per_hour")
"""The keyword names :func:`_gpu_options` adds."""


def inference_base(ctx: click.Context, model_ref: str, kwargs: dict[str, Any]
                   ) -> tuple[Any, Any, dict[str, Any]]:
    """The model spec, the GPU spec (``None`` when no GPU option was given) and the inputs the
    user typed, from :func:`inference_options`' values."""
    spec = model_spec(ctx, model_ref)
    gpu = _resolve_gpu(ctx, kwargs) if any(kwargs.get(k) is not None for k in GPU_FLAGS) \
        else None
    return spec, gpu, given(kwargs, INFERENCE_INPUTS)


@click.command()
@inference_options()
@json_option
@click.pass_context
def estimate(ctx: click.Context, model_ref: str, as_json: bool, **kwargs: Any) -> None:
    """Memory fit, FLOPs, latency and throughput bounds, and cost of serving a model.

    Example: planner estimate --model llama-3-8b --gpu h100-sxm --prompt 1024 --output 128
    """
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    spec = model_spec(ctx, model_ref)
    gpu = _resolve_gpu(ctx, kwargs)
    inputs = given(kwargs, INFERENCE_INPUTS)
    result = service.estimate(spec, gpu, inputs, decode_gpu=decode_gpu_spec(ctx, gpu, inputs))
    if as_json:
        # lazy: the verdict's states (~1 ms), only when this runs
        from planner.compute import verdict

        emit_json(verdict.json_outputs(result, result["inputs"]))
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.estimate(result, gpu)


@click.command()
@click.option("--model", "model_ref", required=True, metavar="CONFIG_OR_NAME", help=MODEL_HELP)
@_gpu_options
@column_options(TRAINING_INPUTS, skip=("reserve_gib", "reserve_fraction"),
                overrides=TRAINING_DEFAULT_OVERRIDES)
@click.option("--lora-targets", default="q,v", show_default=True,
              help="Modules LoRA adapts (q,k,v,o,gate,up,down; MLA: q_a,q_b,kv_a,kv_b; all).")
@json_option
@click.pass_context
def train(ctx: click.Context, model_ref: str, lora_targets: str, as_json: bool,
          **kwargs: Any) -> None:
    """Compute (6*N*D), time, GPU-hours, cost and per-GPU memory of training or fine-tuning.

    Example: planner train --model llama-2-7b --gpu a100-80gb --gpus 8 --tokens 2e9
    """
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    spec = model_spec(ctx, model_ref)
    gpu = _resolve_gpu(ctx, kwargs)
    result = service.train(spec, gpu, given(kwargs, TRAINING_INPUTS), lora_targets=lora_targets)
    if as_json:
        emit_json(result)
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render

    render.train(result, gpu)
