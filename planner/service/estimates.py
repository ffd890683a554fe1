"""Use cases behind every entry point: inspect a model, estimate a deployment, plan training.

The CLI, the UI and notebooks call these; they take names and plain values, validate them, build
the numeric scenario columns (model figures + GPU figures + inputs) and evaluate the formula graph.
Results are plain dicts of Python numbers keyed by column name, so ``--json`` is a dump of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from planner.compute.explain import explain as explain_tree
from planner.compute.graph import FormulaGraph
from planner.compute.inputs import INFERENCE_INPUTS, check_known, parse_inputs
from planner.compute.outputs import output_columns
from planner.compute.profiles import APPLIED_COLUMN, CalibrationFigures
from planner.compute.table import evaluate_row_parts, evaluate_table, graph, inputs_of, row_columns
from planner.core.errors import ValidationError
from planner.core.units import DTYPE_BITS, GB, GiB
from planner.formulas.derived import kv_bits as derived_kv_bits
from planner.formulas.engine_memory import ENGINES
from planner.formulas.memory import state_bytes_per_sequence
from planner.spec.architecture import LinearAttention, Mamba2, ModelSpec
from planner.spec.figures import model_figures
from planner.spec.gpu import GpuSpec, compute_dtype
from planner.spec.params import count_params
from planner.spec.quant_config import checkpoint_bits


def inference_graph() -> FormulaGraph:
    """The inference formula graph (built once, :func:`planner.compute.table.graph`)."""
    return graph("inference")


def training_graph() -> FormulaGraph:
    """The training formula graph (built once)."""
    return graph("training")


def adhoc_gpu(base: GpuSpec | None, *, memory_gib: float | None = None,
              tflops: float | None = None, bandwidth_gb_per_s: float | None = None,
              price_usd_per_hour: float | None = None) -> GpuSpec:
    """A GPU from explicit figures, or ``base`` with some figures overridden.

    ``tflops`` is the dense peak used for every dtype. Each figure must be positive."""
    # lazy: gpu_records brings the store's modules; an estimate from a catalog GPU needs none
    from planner.service.gpu_records import gpu_number

    checked = {field: None if value is None else gpu_number(field, value, limit=limit,
                                                            positive=field != "price_usd_per_hour")
               for field, limit, value in (
                   ("gpu_memory_gib", "memory_gib", memory_gib),
                   ("gpu_tflops", "bf16_tflops", tflops),
                   ("gpu_bandwidth_gbs", "memory_bandwidth_gb_per_s", bandwidth_gb_per_s),
                   ("price_usd_per_hour", "price_usd_per_hour", price_usd_per_hour))}
    memory_gib, tflops = checked["gpu_memory_gib"], checked["gpu_tflops"]
    bandwidth_gb_per_s = checked["gpu_bandwidth_gbs"]
    price_usd_per_hour = checked["price_usd_per_hour"]
    if base is None:
        missing = [f for f, v in (("--gpu-memory-gib", memory_gib), ("--gpu-tflops", tflops),
                                  ("--gpu-bandwidth-gbs", bandwidth_gb_per_s)) if v is None]
        if missing:
            raise ValidationError("gpu", "give a catalog GPU name, or all of "
                                  "--gpu-memory-gib, --gpu-tflops and --gpu-bandwidth-gbs "
                                  f"(missing {', '.join(missing)})")
        base = GpuSpec(name="custom", memory_bytes=0, flops_per_s={}, bandwidth_bytes_per_s=0.0,
                       label="custom GPU")
    changes = _gpu_changes(memory_gib, tflops, bandwidth_gb_per_s, price_usd_per_hour)
    return replace(base, **changes) if changes else base


def _gpu_changes(memory_gib: float | None, tflops: float | None,
                 bandwidth_gb_per_s: float | None,
                 price_usd_per_hour: float | None) -> dict[str, Any]:
    """The GpuSpec fields the given figures set: memory in bytes (GiB = 2^30 B), the dense
    peak for every dtype (TFLOP/s = 1e12 FLOP/s), bandwidth in B/s (GB = 1e9 B), a real
    (not example) price."""
    changes: dict[str, Any] = {}
    if memory_gib is not None:
        changes["memory_bytes"] = round(memory_gib * GiB)
    if tflops is not None:
        changes["flops_per_s"] = dict.fromkeys(DTYPE_BITS, tflops * 1e12)
    if bandwidth_gb_per_s is not None:
        changes["bandwidth_bytes_per_s"] = bandwidth_gb_per_s * GB
    if price_usd_per_hour is not None:
        changes["price_usd_per_hour"] = price_usd_per_hour
        changes["price_is_example"] = False
    return changes


def scenario_columns(spec: ModelSpec, gpu: GpuSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """Model figures, GPU figures and inputs of one validated scenario (the graph derives the
    numeric inputs)."""
    return row_columns(spec, gpu, values)


def _plain(value: Any) -> Any:
    """numpy scalars → Python numbers (ints where integral counts are expected)."""
    if hasattr(value, "item"):
        value = value.item()
    return value


def inspect_model(spec: ModelSpec, kv_dtype: str = "bf16") -> dict[str, Any]:
    """Parameters by component and KV bytes per token of ``spec``."""
    kv_bits = parse_inputs(INFERENCE_INPUTS, {"kv_dtype": kv_dtype})["kv_dtype"]
    figures = model_figures(spec)
    counts = count_params(spec)
    kv_elems = figures.model_kv_elems_per_token_full + figures.model_kv_elems_per_token_window
    layers = spec.layers
    attn = spec.attention
    return {
        "name": spec.name,
        "model_type": spec.model_type,
        "params": counts.as_dict(),
        "vision_params": spec.vision_params,
        "state_bytes_per_sequence": int(state_bytes_per_sequence(
            figures.model_state_elems_per_sequence,
            figures.model_state_recurrent_elems_per_sequence,
            figures.model_state_recurrent_bits)),
        "kv_dtype": kv_bits,
        # transformers' own cache (the roofline's): auto is the model dtype
        "kv_bytes_per_token": kv_elems * int(derived_kv_bits(
            kv_bits, ENGINES["roofline"], 0.0, figures.model_sparse_mla_layers,
            figures.model_vllm_v4_kv_bytes_per_token, figures.model_checkpoint_kv_bits)) // 8,
        "architecture": {
            "hidden_size": spec.hidden_size,
            "layers": spec.num_layers,
            "attention_heads": attn.num_heads,
            "kv_heads": attn.kv_cache_heads,
            "head_dim": attn.head_dim,
            "attention": "mla" if attn.is_mla else ("mha" if attn.num_kv_heads == attn.num_heads
                                                   else "gqa"),
            "vocab_size": spec.vocab_size,
            "tied_embeddings": spec.tie_word_embeddings,
            "moe": spec.is_moe,
            "experts": figures.model_experts if spec.is_moe else 0,
            "experts_per_token": figures.model_experts_per_token if spec.is_moe else 0,
            "sliding_window_tokens": figures.model_sliding_window_tokens,
            "sliding_window_layers": sum(1 for layer in layers if layer.sliding_window),
            "linear_attention_layers": sum(1 for layer in layers
                                           if isinstance(layer.attention,
                                                         (LinearAttention, Mamba2))),
            "max_position_embeddings": spec.max_position_embeddings,
        },
        "checkpoint": checkpoint_summary(spec),
    }


def checkpoint_summary(spec: ModelSpec, index_total_bytes: int | None = None
                       ) -> dict[str, Any]:
    """How the checkpoint stores its weights (from its ``quantization_config``) and their
    bytes as the planner counts them (``weight_dtype`` auto), beside the safetensors index's
    ``total_size`` when known: ``weights_vs_index`` is ``weights_bytes / index - 1``."""
    scheme = spec.quantization
    stored = checkpoint_bits(spec, scheme)
    weights = int(stored.total_bytes)
    matmul = figures_matmul_weights(spec)
    out: dict[str, Any] = {
        "quantization": scheme.method if scheme else "none (16 bit)",
        "weight_dtype": scheme.dtype if scheme else "bf16",
        "weight_bits": scheme.weight_bits if scheme else 16,
        "group_size": scheme.group_size if scheme else 0,
        "matmul": ("weight-only (16-bit matmuls)" if scheme is None or scheme.weight_only
                   else f"weights and activations ({scheme.compute_path})"),
        "kept_16bit": list(scheme.keep) if scheme else [],
        "matmul_bits_per_weight": round(stored.matmul / matmul, 4) if matmul else 0.0,
        "weights_bytes": weights,
    }
    if index_total_bytes:
        out["index_total_bytes"] = index_total_bytes
        out["weights_vs_index"] = round(weights / index_total_bytes - 1, 5)
    return out


def figures_matmul_weights(spec: ModelSpec) -> int:
    """Layer matmul weights of ``spec`` (dense and routed experts)."""
    figures = model_figures(spec)
    return figures.model_matmul_dense_params + figures.model_matmul_experts_params


def _gpu_map(gpu: GpuSpec, decode_gpu: GpuSpec | None) -> dict[str, GpuSpec]:
    """The GPUs a one-row evaluation may look up: the scenario's, and a disaggregated
    deployment's decode GPU where it is another type (``decode_gpu``)."""
    return {gpu.name: gpu, **({decode_gpu.name: decode_gpu} if decode_gpu is not None else {})}


def _evaluate_row(kind: str, spec: ModelSpec, gpu: GpuSpec, inputs: Mapping[str, Any],
                  lora_targets: str = "",
                  profiles: Sequence[CalibrationFigures] | None = None,
                  decode_gpu: GpuSpec | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """One scenario as a one-row table through :func:`~planner.compute.table.evaluate_table`
    (the path every sweep, sheet and fleet takes): its validated inputs as Python values, and
    every computed column."""
    columns = inputs_of(kind)
    check_known(columns, inputs)
    table = {"model": spec.name, "gpu": gpu.name, **inputs}
    if kind == "training":
        table["lora_targets"] = lora_targets
    values = evaluate_table(table, {spec.name: spec}, _gpu_map(gpu, decode_gpu), kind,
                            labels=[None], profiles=profiles)
    parsed = {c.name: _typed(c.kind, values[c.name][0]) for c in columns}
    return parsed, values


def _evaluate_one(kind: str, spec: ModelSpec, gpu: GpuSpec, inputs: Mapping[str, Any],
                  lora_targets: str = "",
                  profiles: Sequence[CalibrationFigures] | None = None,
                  decode_gpu: GpuSpec | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """:func:`_evaluate_row` through the thin one-row path
    (:func:`~planner.compute.table.evaluate_row_parts`): the same validation, formulas and
    figures, as Python values, with no one-element arrays (issue 14, item 4). Returns the
    typed inputs, the outputs typed as :func:`_result` types them (a new dict) and the row's
    input columns."""
    columns = inputs_of(kind)
    check_known(columns, inputs)
    table = {"model": spec.name, "gpu": gpu.name, **inputs}
    if kind == "training":
        table["lora_targets"] = lora_targets
    cols, _derived, out = evaluate_row_parts(table, {spec.name: spec},
                                             _gpu_map(gpu, decode_gpu), kind,
                                             profiles=profiles)
    names, ints, bools = _input_kinds(kind)
    parsed = {name: cols[name] for name in names}
    for name in ints:
        parsed[name] = int(parsed[name])
    for name in bools:
        parsed[name] = bool(parsed[name])
    for name in _integer_outputs(kind):
        value = out[name]
        if not isinstance(value, bool):
            out[name] = int(value)
    return parsed, out, cols


@cache
def _input_kinds(kind: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The input columns of a scenario kind, and the integer and the boolean ones among them
    (as :func:`_typed` types them; the one-row path gives every other input as a float or a
    text already)."""
    columns = inputs_of(kind)
    return (tuple(c.name for c in columns), tuple(c.name for c in columns if c.kind == "int"),
            tuple(c.name for c in columns if c.kind == "bool"))


@cache
def _integer_outputs(kind: str) -> tuple[str, ...]:
    """The output columns of a scenario kind that are integral counts."""
    outputs = output_columns()
    return tuple(name for name in graph(kind).outputs if outputs[name].integer)


def _typed(kind: str, value: Any) -> Any:
    value = _plain(value)
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    return value


def _result(kind: str, values: Mapping[str, Any]) -> dict[str, Any]:
    outputs = output_columns()
    out: dict[str, Any] = {}
    for name in graph(kind).outputs:
        value = _plain(values[name][0])
        if isinstance(value, bool) or outputs[name].integer:
            value = value if isinstance(value, bool) else int(value)
        out[name] = value
    return out


def estimate(spec: ModelSpec, gpu: GpuSpec, inputs: Mapping[str, Any], *,
             profiles: Sequence[CalibrationFigures] | None = None,
             decode_gpu: GpuSpec | None = None) -> dict[str, Any]:
    """Evaluate one inference scenario. ``inputs`` maps input column names to raw values
    (strings or numbers); missing ones take their defaults. Returns inputs and outputs; with
    ``profiles`` (a database's calibration profiles) also ``calibration_profile``, the profile
    the ``calibration`` input picked ('' for none). ``decode_gpu``: the spec of the
    ``decode_gpu`` input's GPU where a disaggregated deployment's decode pool runs on another
    type."""
    values, out, cols = _evaluate_one("inference", spec, gpu, inputs, profiles=profiles,
                                      decode_gpu=decode_gpu)
    if profiles is not None:
        out[APPLIED_COLUMN] = str(cols.get(APPLIED_COLUMN, ""))
    out["ttft_bound"] = "compute" if out["ttft_compute_s"] >= out["ttft_memory_s"] else "memory"
    out["tpot_bound"] = "compute" if out["tpot_compute_s"] >= out["tpot_memory_s"] else "memory"
    return {"model": spec.name, "gpu": gpu.name, "inputs": values,
            "compute_dtype": compute_dtype(gpu, values["weight_dtype"], values["quant_mode"],
                                           spec.quantization),
            "gpu_memory_bytes": gpu.memory_bytes, **out}


def train(spec: ModelSpec, gpu: GpuSpec, inputs: Mapping[str, Any],
          lora_targets: str = "q,v") -> dict[str, Any]:
    """Evaluate one training scenario (full training, or LoRA when ``lora_rank > 0``)."""
    values, out, _cols = _evaluate_one("training", spec, gpu, inputs, lora_targets)
    return {"model": spec.name, "gpu": gpu.name, "inputs": values,
            "lora_targets": lora_targets if values["lora_rank"] else "",
            "compute_dtype": compute_dtype(gpu, values["weight_dtype"], values["quant_mode"],
                                           spec.quantization),
            "gpu_memory_bytes": gpu.memory_bytes,
            "cost_usd": out["train_cost_usd"],
            "memory_bytes_per_gpu": out["train_memory_bytes_per_gpu"], **out}


def explain(spec: ModelSpec, gpu: GpuSpec, inputs: Mapping[str, Any], column: str, *,
            kind: str = "inference", lora_targets: str = "q,v", depth: int = 8,
            profiles: Sequence[CalibrationFigures] | None = None,
            decode_gpu: GpuSpec | None = None) -> Any:
    """The explanation tree (:class:`planner.compute.explain.ExplainNode`) of one output of one
    scenario: its formula and the values it used, down to the inputs. A figure a calibration
    profile replaced ends the walk as ``calibration NAME vN: fitted PARAMETER``."""
    _values, columns = _evaluate_row(kind, spec, gpu, inputs, lora_targets, profiles,
                                     decode_gpu)
    row = {name: value[0] for name, value in columns.items()}
    sources: dict[str, str] = {}
    applied = str(row.get(APPLIED_COLUMN, "") or "")
    for profile in profiles or ():
        if profile.label == applied:
            sources = {name: f"calibration {profile.label}: fitted {parameter}"
                       for name, parameter in profile.replaced_columns().items()}
    return explain_tree(graph(kind), row, column, depth=depth, sources=sources)
