"""Rows ↔ domain objects and specs.

The store's only boundary: everything above it sees :mod:`planner.spec.domain` objects and specs.
"""

from __future__ import annotations

import json
from typing import Any

from planner.core.errors import ConfigError, PlannerError
from planner.spec.architecture import ModelSpec
from planner.spec.catalog import check_config, parse_config
from planner.spec.domain import Fleet, GpuInfo, ModelInfo, Scenario
from planner.spec.figures import model_figures
from planner.spec.gpu import GpuSpec
from planner.spec.hf_config import spec_from_config
from planner.spec.params import count_params
from planner.store.rowspec import GPU_FLOPS_COLUMNS, gpu_spec
from planner.store.schema import SCENARIO_INPUTS, FleetRow, GpuRow, ModelRow, ScenarioRow


def model_row_fields(name: str, config: dict[str, Any] | str, source: str) -> dict[str, Any]:
    """Column values of a models row for ``config`` (parsed and counted; raises ConfigError).

    ``config`` is the config.json text, stored verbatim, or an already parsed dict (stored as
    indented JSON)."""
    if isinstance(config, str):  # size, nesting and JSON checked by the catalog's one reader
        text = config
        config = parse_config(text, name)
    else:
        check_config(config, name)
        try:
            text = json.dumps(config, indent=2)  # Infinity/NaN as config.json writes them
        except (TypeError, ValueError) as exc:
            raise ConfigError(name, "<file>", f"is not a JSON document ({exc})") from None
    spec = spec_from_config(config, name)
    counts = count_params(spec)
    figures = model_figures(spec)
    attn = spec.attention
    return {
        "name": name, "source": source,
        "config_json": text,
        "model_type": spec.model_type, "hidden_size": spec.hidden_size,
        "num_layers": spec.num_layers, "num_attention_heads": attn.num_heads,
        "num_kv_heads": attn.kv_cache_heads, "head_dim": attn.head_dim,
        "vocab_size": spec.vocab_size, "params_total": counts.total,
        "params_active": counts.active,
        "kv_bytes_per_token_bf16": (figures.model_kv_elems_per_token_full
                                    + figures.model_kv_elems_per_token_window) * 2,
    }


def model_info(row: ModelRow, spec: ModelSpec | None = None) -> ModelInfo:
    """Domain object of a models row; ``spec``, when given, is the row's already parsed
    config (a cached one), else it is parsed here."""
    config = json.loads(row.config_json)
    return ModelInfo(id=row.id, name=row.name, source=row.source, model_type=row.model_type,
                     config=config, spec=spec or spec_from_config(config, row.name),
                     params_total=row.params_total, params_active=row.params_active,
                     kv_bytes_per_token_bf16=row.kv_bytes_per_token_bf16, notes=row.notes,
                     version=row.version, hub_repo=row.hub_repo or "",
                     hub_revision=row.hub_revision or "")


def gpu_row_fields(spec: GpuSpec) -> dict[str, Any]:
    """Column values of a gpus row for ``spec``."""
    return {
        "name": spec.name, "vendor": spec.vendor, "label": spec.label,
        "memory_bytes": spec.memory_bytes,
        **{col: spec.flops_per_s.get(dt) for dt, col in GPU_FLOPS_COLUMNS.items()},
        "memory_bandwidth_bytes_per_s": spec.bandwidth_bytes_per_s,
        "interconnect_bytes_per_s": spec.interconnect_bytes_per_s, "power_w": spec.power_w,
        "price_usd_per_gpu_hour": spec.price_usd_per_hour,
        "price_is_example": spec.price_is_example, "source": spec.source,
        **_zero_as_null(spec, ("usable_memory_bytes", "matmul_efficiency",
                               "matmul_efficiency_8bit", "bandwidth_efficiency",
                               "runtime_context_bytes")),
        "serving_source": spec.serving_source,
        **_zero_as_null(spec, ("nvlink_domain_gpus", "mesh_links_per_gpu", "pcie_gen",
                               "nic_gbit_per_s")),
        "topology_source": spec.topology_source,
        **_zero_as_null(spec, ("compute_capability",)),
    }


def _zero_as_null(spec: GpuSpec, names: tuple[str, ...]) -> dict[str, Any]:
    """The optional figures ``names`` of ``spec`` as their columns: 0 (unknown) as NULL."""
    return {name: getattr(spec, name) or None for name in names}


def gpu_info(row: GpuRow) -> GpuInfo:
    """Domain object of a gpus row."""
    return GpuInfo(id=row.id, spec=gpu_spec(row), version=row.version)


def fleet(row: FleetRow, scenario_count: int = 0) -> Fleet:
    """Domain object of a fleets row."""
    return Fleet(id=row.id, name=row.name, description=row.description, version=row.version,
                 scenario_count=scenario_count)


def scenario(row: ScenarioRow) -> Scenario:
    """Domain object of a scenarios row (its fleet, model and GPU loaded). A row whose model,
    GPU or fleet is gone (deleted behind the planner's back, with foreign keys off) is a
    damaged database: :class:`PlannerError` says which row and what to do."""
    for what, ref, row_id in (("fleet", row.fleet, row.fleet_id),
                              ("model", row.model, row.model_id),
                              ("GPU", row.gpu, row.gpu_id)):
        if ref is None:
            raise PlannerError(f"the database is damaged: scenario {row.name!r} (id {row.id}) "
                               f"names {what} id {row_id}, which does not exist (deleted "
                               "outside the planner?); restore the database from a backup, or "
                               f"add the {what} back and check with `planner db check`")
    inputs = {c.name: getattr(row, c.name) for c in SCENARIO_INPUTS}
    return Scenario(id=row.id, fleet=row.fleet.name, name=row.name, kind=row.kind,
                    model=row.model.name, gpu=row.gpu.name, inputs=inputs,
                    lora_targets=row.lora_targets, notes=row.notes, version=row.version,
                    updated_at=row.updated_at,
                    option_of=row.option_of.name if row.option_of is not None else None,
                    chosen=bool(row.chosen))


def scenario_from_mapping(m: Any) -> Scenario:
    """Domain object of a scenarios row read by a Core select with ``_fleet``, ``_model`` and
    ``_gpu`` names joined in, and ``_option_of``, the base's name (the same fields as
    :func:`scenario`)."""
    return Scenario(id=m["id"], fleet=m["_fleet"], name=m["name"], kind=m["kind"],
                    model=m["_model"], gpu=m["_gpu"],
                    inputs={c.name: m[c.name] for c in SCENARIO_INPUTS},
                    lora_targets=m["lora_targets"], notes=m["notes"], version=m["version"],
                    updated_at=m["updated_at"], option_of=m["_option_of"],
                    chosen=bool(m["chosen"]))
