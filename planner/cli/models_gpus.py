"""``planner model …`` and ``planner gpu …``: the models and GPUs in the database."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from planner.cli.common import (
    VERSION,
    PlannerGroup,
    emit_json,
    json_option,
    model_spec,
    parse_assignments,
    workspace,
)
from planner.core.errors import ValidationError


@click.group(cls=PlannerGroup)
def model() -> None:
    """Models: list, show, inspect, import a config.json, delete."""


def _model_row(info: Any) -> dict[str, Any]:
    return {"name": info.name, "model_type": info.model_type, "source": info.source,
            "params_total": info.params_total, "params_active": info.params_active,
            "kv_bytes_per_token": info.kv_bytes_per_token_bf16, "notes": info.notes,
            "version": info.version}


@model.command("list")
@json_option
@click.pass_context
def model_list(ctx: click.Context, as_json: bool) -> None:
    """List models with their parameter counts and bf16 KV bytes per token."""
    rows = [_model_row(m) for m in workspace(ctx).models()]
    if as_json:
        emit_json(rows)
        return
    # lazy: loads rich (~39 ms), only when this runs
    from planner.cli import render

    render.model_list(rows)


@model.command("show")
@click.argument("name")
@click.option("--kv-dtype", default="bf16", show_default=True,
              help="KV-cache dtype for kv_bytes_per_token (bf16, fp16, fp8, int8).")
@json_option
@click.pass_context
def model_show(ctx: click.Context, name: str, kv_dtype: str, as_json: bool) -> None:
    """A model in the database: parameters by component, architecture, source, notes."""
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    info = workspace(ctx).model(name)
    data = {**service.inspect_model(info.spec, kv_dtype), "source": info.source,
            "hub_repo": info.hub_repo, "hub_revision": info.hub_revision,
            "notes": info.notes, "version": info.version}
    if as_json:
        emit_json({**data, "config": info.config})
        return
    # lazy: loads rich (~39 ms), only when this runs
    from planner.cli import render

    render.model_inspect(data)
    hub = f"\nhub: {info.hub_repo}@{info.hub_revision}" if info.hub_repo else ""
    click.echo(f"source: {info.source}" + hub + (f"\nnotes: {info.notes}" if info.notes else ""))


@model.command("inspect")
@click.argument("config_or_name")
@click.option("--kv-dtype", default="bf16", show_default=True,
              help="KV-cache dtype for kv_bytes_per_token (bf16, fp16, fp8, int8).")
@json_option
@click.pass_context
def model_inspect(ctx: click.Context, config_or_name: str, kv_dtype: str, as_json: bool) -> None:
    """Parameters by component and KV-cache bytes per token of a model.

    CONFIG_OR_NAME is a model name in the database (see `planner model list`), a path to a
    Hugging Face config.json, or a Hub id org/name[@revision] read from the Hugging Face cache
    or the Hub (nothing is saved).
    """
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    info = service.inspect_model(model_spec(ctx, config_or_name), kv_dtype)
    if as_json:
        emit_json(info)
        return
    # lazy: loads rich (~39 ms), only when this runs
    from planner.cli import render

    render.model_inspect(info)


@model.command("import")
@click.argument("configs", nargs=-1, required=True)
@click.option("--name", help="Model name (one config only; default: the file or folder name, "
                             "or the Hub repo's name).")
@click.option("--source", default="custom", show_default=True,
              help="Where a config file comes from (a Hub id's source is its URL).")
@click.option("--notes", default="", help="Free-text notes.")
@json_option
@click.pass_context
def model_import(ctx: click.Context, configs: tuple[str, ...], name: str | None, source: str,
                 notes: str, as_json: bool) -> None:
    """Add models from config.json files or Hugging Face Hub ids (all or none: one bad config
    imports nothing).

    CONFIGS are config.json files, folders holding one, or Hub ids org/name[@revision]: the
    config.json (and quantization_config) is read from the Hugging Face cache, or from the Hub
    when it is not cached (HF_TOKEN for gated repos; HF_HUB_OFFLINE=1 reads the cache only).
    The stored model records the repo id and the commit it was read at; when the repo has a
    model.safetensors.index.json its total size is shown beside the planner's weight bytes.
    """
    # lazy: the service layer (~26 ms), only when this runs
    from planner.service import estimates

    if name and len(configs) > 1:
        raise ValidationError("--name", "can only be given with a single config")
    ws = workspace(ctx)
    fetched: dict[str, Any] = {}
    items = [_import_item(ref, name, source, fetched) for ref in configs]
    if len(items) > 20:
        with click.progressbar(length=len(items), label="importing", file=sys.stderr) as bar:
            added = ws.import_models(items, notes=notes, progress=lambda _i: bar.update(1))
    else:
        added = ws.import_models(items, notes=notes)
    checks = {m.name: estimates.checkpoint_summary(
        m.spec, fetched[m.name].index_total_bytes if m.name in fetched else None)
        for m in added}
    if as_json:
        emit_json([{**_model_row(m), "hub_repo": m.hub_repo, "hub_revision": m.hub_revision,
                    "checkpoint": checks[m.name]} for m in added])
        return
    for m in added:
        click.echo(_imported_line(m, checks[m.name]))


def _import_item(ref: str, name: str | None, source: str,
                 fetched: dict[str, Any]) -> tuple[Any, ...]:
    """One CONFIG of ``model import`` as the item :meth:`Workspace.import_models` takes: a Hub
    id (or a short name that is one) read from the Hub or its cache, recorded in ``fetched``
    under its name; else a config.json file, or a folder holding one."""
    # lazy: the service layer (~26 ms), only when this runs
    from planner.service import hub

    ref = _short_name_hub_id(ref)
    if hub.is_hub_id(ref):
        read = hub.fetch_config(ref)
        fetched[name or read.name] = read
        return (name or read.name, read.config, read.source_url, read.repo_id, read.commit)
    return _file_item(ref, name, source)


def _short_name_hub_id(ref: str) -> str:
    """The Hub id of a short name (qwen3-8b) that is no .json file and no existing path;
    else ``ref`` as it is."""
    # lazy: the service layer (~26 ms), only when this runs
    from planner.service import hub_names

    path = Path(ref).expanduser()
    if not ref.endswith(".json") and not path.exists() and hub_names.hub_id_for(ref):
        return hub_names.hub_id_for(ref) or ref  # a short name (qwen3-8b) is its Hub id
    return ref


def _file_item(ref: str, name: str | None, source: str) -> tuple[Any, ...]:
    """A config.json file, or a folder holding one, as a ``model import`` item: named
    ``name``, else by its folder (a config.json) or its file name."""
    # lazy: ~13 ms of imports, only when this runs
    from planner.spec import catalog

    path = Path(ref).expanduser()
    file = path / "config.json" if path.is_dir() else path
    default = file.parent.name if file.stem == "config" else file.stem
    catalog.load_config(file)  # a clear error for a missing or malformed file
    return ((name or default), catalog.read_config_text(file), source)


def _imported_line(m: Any, check: dict[str, Any]) -> str:
    """The line ``model import`` prints for one model added: its type and size, and for a Hub
    model the repo, commit and weights as stored against the safetensors index."""
    line = f"imported {m.name} ({m.model_type}, {m.params_total:,} params)"
    if m.hub_repo:
        line += (f" from {m.hub_repo}@{m.hub_revision[:12]}; weights as stored "
                 f"{check['weights_bytes'] / 1e9:,.2f} GB")
    if "index_total_bytes" in check:
        line += (f" vs the safetensors index {check['index_total_bytes'] / 1e9:,.2f} GB "
                 f"({check['weights_vs_index']:+.2%})")
    return line


@model.command("delete")
@click.argument("name")
@click.pass_context
def model_delete(ctx: click.Context, name: str) -> None:
    """Delete a model (refused while scenarios use it)."""
    workspace(ctx).delete_model(name)
    click.echo(f"deleted model {name}")


@click.group(cls=PlannerGroup)
def gpu() -> None:
    """GPUs: list, show, add, set figures (a price, say), delete."""


def _gpu_dict(info: Any) -> dict[str, Any]:
    # lazy: the verdict's confidence rule, only when this runs
    from planner.compute.verdict import gpu_measured

    # lazy: ~13 ms of imports, only when this runs
    from planner.spec.catalog import gpu_record

    return {"name": info.name, **gpu_record(info.spec), "memory_bytes": info.spec.memory_bytes,
            "serving_efficiencies_measured": gpu_measured(info.spec),
            "version": info.version, "spec": asdict(info.spec)}


@gpu.command("list")
@json_option
@click.pass_context
def gpu_list(ctx: click.Context, as_json: bool) -> None:
    """List GPUs with their datasheet figures (dense tensor throughput)."""
    gpus = workspace(ctx).gpus()
    if as_json:
        emit_json([_gpu_dict(g) for g in gpus])
        return
    # lazy: loads rich (~39 ms), only when this runs
    from planner.cli import render

    render.gpu_list([g.spec for g in gpus])


@gpu.command("show")
@click.argument("name")
@json_option
@click.pass_context
def gpu_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """One GPU's figures, in the units you edit them in."""
    info = workspace(ctx).gpu(name)
    data = _gpu_dict(info)
    if as_json:
        emit_json(data)
        return
    data.pop("spec")
    for key, value in data.items():
        click.echo(f"{key}: {value}")


GPU_HELP = ("FIELDS are field=value: memory_gib, bf16_tflops, fp16_tflops, fp8_tflops, "
            "int8_tops, int4_tops, nvfp4_tflops, mxfp4_tflops (dense), "
            "memory_bandwidth_gb_per_s, interconnect_gb_per_s, power_w, price_usd_per_hour, "
            "price_is_example, vendor, label, source; wiring: nvlink_domain_gpus, "
            "mesh_links_per_gpu, pcie_gen, nic_gbit_per_s, topology_source; "
            "compute_capability (CUDA major.minor, 0 = not CUDA).")


@gpu.command("add", help="Add a GPU. " + GPU_HELP)
@click.argument("name")
@click.argument("fields", nargs=-1)
@click.pass_context
def gpu_add(ctx: click.Context, name: str, fields: tuple[str, ...]) -> None:
    info = workspace(ctx).add_gpu(name, parse_assignments(fields))
    click.echo(f"added GPU {info.name}")


@gpu.command("set", help="Change figures of a GPU; scenarios on it follow. " + GPU_HELP)
@click.argument("name")
@click.argument("fields", nargs=-1, required=True)
@click.option("--if-version", type=VERSION, help="Refuse if the GPU is no longer at this version.")
@click.pass_context
def gpu_set(ctx: click.Context, name: str, fields: tuple[str, ...],
            if_version: int | None) -> None:
    info = workspace(ctx).set_gpu(name, parse_assignments(fields), expected_version=if_version)
    click.echo(f"updated GPU {info.name} (version {info.version})")


@gpu.command("delete")
@click.argument("name")
@click.pass_context
def gpu_delete(ctx: click.Context, name: str) -> None:
    """Delete a GPU (refused while scenarios use it)."""
    workspace(ctx).delete_gpu(name)
    click.echo(f"deleted GPU {name}")
