"""Output columns: each formula of :mod:`planner.estimator.scenario` with its label, unit,
display format and one-line description (the formula's docstring), in one registry.

The CLI tables, ``explain``, the terminal UI and the Excel export read labels, units and formats
from here; the formula itself is the estimator function, so there is one definition of each
figure. Model and GPU figures (``model_*``, ``gpu_*``) are inputs of the sheet too, described in
:data:`FIGURE_COLUMNS`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from planner.estimator import scenario
from planner.estimator.figures import ModelFigures
from planner.estimator.gpu import PEAK_DTYPES
from planner.sheet.inputs import input_columns
from planner.units import FORMATS


@dataclass(frozen=True, slots=True)
class OutputColumn:
    """A computed column: ``formula`` is the estimator function named ``name``."""

    name: str
    label: str
    unit: str
    description: str
    formula: Callable[..., Any]
    signed: bool = False
    """True when negative values are meaningful (a shortfall shows as a negative headroom)."""
    integer: bool = False
    """True for whole counts (replicas, sequences, tokens): reported as ints."""

    @property
    def inputs(self) -> tuple[str, ...]:
        """Columns the formula reads (derived from its signature)."""
        return tuple(inspect.signature(self.formula).parameters)

    def format(self, value: Any) -> str:
        """``value`` with its unit, for display."""
        return FORMATS[self.unit](value)


# name: (label, unit, signed[, integer])
META: dict[str, tuple[str, str, bool] | tuple[str, str, bool, bool]] = {
    "replicas": ("Replicas", "count", False, True),
    "model_params_other": ("Other params (norms, biases)", "params", False),
    "weight_bits_effective": ("Bits per quantized weight", "bits", False),
    "embedding_bits": ("Bits per embedding weight", "bits", False),
    "weights_bytes": ("Weights (replica)", "B", False),
    "weights_bytes_per_gpu": ("Weights per GPU", "B", False),
    "reserve_bytes_per_gpu": ("Reserve per GPU", "B", False),
    "kv_budget_bytes": ("KV budget per GPU", "B", True),
    "kv_bytes_per_token": ("KV per token", "B", False),
    "tp_kv_fraction": ("KV share per TP rank", "fraction", False),
    "context_tokens": ("Final context", "tokens", False, True),
    "kv_bytes_per_sequence": ("KV per sequence", "B", False),
    "kv_bytes_per_sequence_per_gpu": ("KV per sequence per GPU", "B", False),
    "kv_in_use_bytes_per_gpu": ("KV in use per GPU", "B", False),
    "kv_headroom_bytes": ("KV headroom per GPU", "B", True),
    "fits": ("Fits", "bool", False),
    "shortfall_bytes": ("Shortfall per GPU", "B", False),
    "max_concurrent_sequences": ("Max concurrent sequences", "sequences", False, True),
    "token_capacity": ("KV token capacity", "tokens", False, True),
    "max_context_tokens": ("Max context at batch", "tokens", False, True),
    "matmul_params_per_token": ("Matmul weights per token", "params", False),
    "prefill_flops": ("Prefill FLOPs", "FLOPs", False),
    "mean_decode_context_tokens": ("Mean decode context", "tokens", False),
    "decode_step_flops": ("Decode step FLOPs (batch)", "FLOPs", False),
    "decode_flops": ("Decode FLOPs (request)", "FLOPs", False),
    "request_flops": ("Request FLOPs", "FLOPs", False),
    "decode_bytes_per_step": ("Bytes read per decode step", "B", False),
    "ttft_compute_s": ("TTFT compute bound", "s", False),
    "ttft_memory_s": ("TTFT memory bound", "s", False),
    "ttft_s": ("TTFT", "s", False),
    "tpot_compute_s": ("TPOT compute bound", "s", False),
    "tpot_memory_s": ("TPOT memory bound", "s", False),
    "tpot_s": ("TPOT", "s", False),
    "e2e_latency_s": ("End-to-end latency", "s", False),
    "batch_prefill_s": ("Batch prefill time", "s", False),
    "cycle_s": ("Batch cycle time", "s", False),
    "requests_per_s": ("Requests per second", "requests/s", False),
    "throughput_tokens_per_s": ("Output throughput", "tokens/s", False),
    "decode_tokens_per_s": ("Decode rate", "tokens/s", False),
    "input_tokens_per_s": ("Input throughput", "tokens/s", False),
    "meets_target_rate": ("Meets target rate", "bool", False),
    "gpus_for_target_rate": ("GPUs for target rate", "GPUs", False, True),
    "cost_usd_per_hour": ("Cost per hour", "USD/h", False),
    "cost_usd_per_month": ("Cost per month", "USD/month", False),
    "prefill_time_share": ("Prefill time share", "fraction", False),
    "cost_usd_per_million_input_tokens": ("Cost per M input tokens", "USD/Mtok", False),
    "cost_usd_per_million_output_tokens": ("Cost per M output tokens", "USD/Mtok", False),
    "tokens_per_day": ("Output tokens per day", "tokens/day", False),
    "train_matmul_params": ("N (matmul weights per token)", "params", False),
    "lora_trainable_params": ("LoRA parameters", "params", False, True),
    "trainable_params": ("Trainable parameters", "params", False, True),
    "train_attention_flops_per_token": ("Attention FLOPs per token", "FLOPs/token", False),
    "train_flops_per_token": ("Training FLOPs per token", "FLOPs/token", False),
    "train_flops": ("Training FLOPs", "FLOPs", False),
    "train_time_s": ("Training time", "s", False),
    "gpu_hours": ("GPU-hours", "GPU-h", False),
    "train_cost_usd": ("Training cost", "USD", False),
    "data_parallel": ("Data-parallel ranks", "count", False, True),
    "model_state_bytes_per_gpu": ("Model state per GPU", "B", False),
    "activation_bytes_per_gpu": ("Activations per GPU", "B", False),
    "train_memory_bytes_per_gpu": ("Training memory per GPU", "B", False),
    "train_fits": ("Training fits", "bool", False),
    "tokens_for_gpu_hours": ("Tokens for GPU-hour budget", "tokens", False),
    "tokens_for_usd": ("Tokens for USD budget", "tokens", False),
}

GPU_COLUMNS: dict[str, tuple[str, str, str]] = {
    "gpu_memory_bytes": ("GPU memory", "B", "Memory of one GPU."),
    "gpu_flops_per_s": ("GPU peak", "FLOP/s",
                        "Dense tensor peak of one GPU at the scenario's compute dtype."),
    "gpu_bandwidth_bytes_per_s": ("GPU bandwidth", "B/s", "Memory bandwidth of one GPU."),
    "price_usd_per_gpu_hour": ("GPU price", "USD/GPU-h", "Price of one GPU-hour."),
    **{f"gpu_{d}_peak": (f"GPU {d} peak", "FLOP/s", f"Dense {d} tensor peak of one GPU "
                         "(0: no tensor path for it).") for d in PEAK_DTYPES},
}
"""Columns that come from the scenario's GPU (``gpu_flops_per_s`` is derived from the peaks
and the weight dtype, :func:`planner.estimator.derived.gpu_flops_per_s`)."""

DERIVED_META: dict[str, tuple[str, str]] = {
    "weight_bits": ("Weight bits", "bits"),
    "kv_bits": ("KV bits", "bits"),
    "reserve_bytes": ("Reserve", "B"),
    "quant_group_size_effective": ("Quant group (effective)", "count"),
    "keep_embeddings_16bit_number": ("16-bit embeddings (1/0)", "code"),
    "activation_recompute_number": ("Recompute (1/0)", "code"),
    "include_attention_flops_number": ("Attention FLOPs (1/0)", "code"),
    "attention_convention_code": ("Attention FLOPs convention", "code"),
    "logits_convention_code": ("Prefill logits convention", "code"),
    "gpu_flops_per_s": GPU_COLUMNS["gpu_flops_per_s"][:2],
    "model_lora_dims": ("LoRA dims", "count"),
}
"""Label and unit of every derived input column (their formulas are in
:mod:`planner.estimator.derived`; ``model_lora_dims`` is looked up per model and targets)."""

_FIGURE_UNITS = {"params": "params", "elems": "elements", "flops_per_pair": "FLOPs/pair",
                 "tokens": "tokens"}


@cache
def figure_columns() -> dict[str, tuple[str, str, str]]:
    """Columns that come from the scenario's model: name → (label, unit, description)."""
    out = {}
    for name, field in ModelFigures.__dataclass_fields__.items():
        unit = next((u for k, u in _FIGURE_UNITS.items() if k in name), "count")
        doc = _field_doc(name)
        out[name] = (name.removeprefix("model_").replace("_", " ").capitalize(), unit,
                     doc or f"Model figure {name}.")
        del field
    return out


def _field_doc(name: str) -> str:
    """The attribute docstring of a ModelFigures field, read from the source."""
    source = inspect.getsource(ModelFigures)
    marker = f"    {name}: int\n"
    at = source.find(marker)
    if at < 0:
        return ""
    rest = source[at + len(marker):].lstrip()
    if rest.startswith('"""'):
        return " ".join(rest[3:rest.index('"""', 3)].split())
    return ""


def _description(formula: Callable[..., Any]) -> str:
    doc = inspect.getdoc(formula) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return first


@cache
def output_columns() -> dict[str, OutputColumn]:
    """Every output column, inference and training, by name (formula order)."""
    formulas = {f.__name__: f for f in (*scenario.INFERENCE, *scenario.TRAINING)}
    missing = sorted(set(formulas) - set(META))
    if missing:
        raise RuntimeError(f"output columns without metadata: {missing}")
    return {name: OutputColumn(name, META[name][0], META[name][1], _description(f), f,
                               *META[name][2:]) for name, f in formulas.items()}


def column_label(name: str) -> tuple[str, str]:
    """(label, unit) of any column: output, input, model figure or GPU figure."""
    outputs = output_columns()
    if name in outputs:
        return outputs[name].label, outputs[name].unit
    if name in GPU_COLUMNS:
        return GPU_COLUMNS[name][:2]
    if name in figure_columns():
        return figure_columns()[name][:2]
    if name in DERIVED_META:
        return DERIVED_META[name]
    column = input_columns().get(name)
    if column is not None:
        return column.label, column.unit
    return name, ""


def format_value(name: str, value: Any) -> str:
    """``value`` of column ``name`` with its unit."""
    _, unit = column_label(name)
    formatter = FORMATS.get(unit)
    if formatter is None or isinstance(value, str):
        return f"{value} {unit}".strip()
    return formatter(value)
