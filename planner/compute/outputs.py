"""Output columns: each formula of :mod:`planner.formulas.scenario` with its label, unit,
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

from planner.compute.inputs import input_columns
from planner.compute.output_labels import META, ColumnMeta
from planner.core.units import FORMATS
from planner.formulas import scenario
from planner.spec.figures import ModelFigures
from planner.spec.gpu import PEAK_DTYPES


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


GPU_COLUMNS: dict[str, ColumnMeta] = {
    "gpu_memory_bytes": ColumnMeta(label="GPU memory", unit="B",
                                   description="Memory of one GPU."),
    "gpu_flops_per_s": ColumnMeta(
        label="GPU peak", unit="FLOP/s",
        description="Dense tensor peak of one GPU at the scenario's compute dtype."),
    "gpu_bandwidth_bytes_per_s": ColumnMeta(label="GPU bandwidth", unit="B/s",
                                            description="Memory bandwidth of one GPU."),
    "price_usd_per_gpu_hour": ColumnMeta(label="GPU price", unit="USD/GPU-h",
                                         description="Price of one GPU-hour."),
    **{f"gpu_{d}_peak": ColumnMeta(
        label=f"GPU {d} peak", unit="FLOP/s",
        description=f"Dense {d} tensor peak of one GPU (0: no tensor path for it).")
       for d in PEAK_DTYPES},
    "gpu_usable_memory_bytes": ColumnMeta(
        label="GPU memory seen by the runtime", unit="B",
        description="Memory the runtime sees (torch total_memory)."),
    "gpu_matmul_efficiency_16bit": ColumnMeta(
        label="GPU 16-bit GEMM share", unit="fraction",
        description="Achievable share of the 16-bit tensor peak."),
    "gpu_matmul_efficiency_8bit": ColumnMeta(
        label="GPU 8-bit GEMM share", unit="fraction",
        description="Achievable share of the 8-bit tensor peak."),
    "gpu_bandwidth_efficiency": ColumnMeta(
        label="GPU bandwidth share", unit="fraction",
        description="Achievable share of memory bandwidth on streaming reads."),
    "gpu_interconnect_bytes_per_s": ColumnMeta(
        label="GPU interconnect", unit="B/s",
        description="GPU-to-GPU bandwidth of one GPU (both directions)."),
    "gpu_runtime_context_bytes": ColumnMeta(
        label="GPU runtime context", unit="B",
        description="Memory the CUDA/ROCm context takes before any tensor."),
    "gpu_nvlink_domain_gpus": ColumnMeta(
        label="GPU scale-up domain", unit="GPUs",
        description="GPUs one NVLink/Infinity Fabric domain joins at the listed interconnect "
                    "(1: PCIe only; 0: unknown)."),
    "gpu_mesh_links_per_gpu": ColumnMeta(
        label="GPU mesh links", unit="count",
        description="Point-to-point scale-up links the interconnect is split over "
                    "(0: a switched fabric)."),
    "gpu_pcie_gen": ColumnMeta(label="GPU PCIe generation", unit="code",
                               description="PCIe generation of the x16 host link (0: unknown)."),
    "gpu_nic_gbit_per_s": ColumnMeta(
        label="GPU scale-out NIC", unit="Gb/s",
        description="Scale-out network per GPU, one direction (0: none assumed)."),
    "gpu_compute_capability": ColumnMeta(
        label="GPU compute capability", unit="major.minor",
        description="CUDA compute capability (10.0 B200, 12.0 RTX PRO 6000; 0: not CUDA or "
                    "unknown): engines pick kernels and cache dtypes by it."),
}
"""Columns that come from the scenario's GPU (``gpu_flops_per_s`` is derived from the peaks
and the weight dtype, :func:`planner.formulas.derived.gpu_flops_per_s`)."""

DECODE_GPU_COLUMNS: dict[str, ColumnMeta] = {
    **{("decode_gpu_price_usd_per_gpu_hour" if key == "price_usd_per_gpu_hour"
        else f"decode_{key}"): ColumnMeta(label=f"Decode {meta.label}", unit=meta.unit,
                                          description=f"The decode pool's GPU: {meta.description}")
       for key, meta in GPU_COLUMNS.items() if key != "gpu_flops_per_s"},
    "decode_gpu_same": ColumnMeta(
        label="Decode GPU is the scenario's (1/0)", unit="code",
        description="1 when the decode pool runs on the scenario's own GPU type."),
}
"""Columns that come from the decode pool's GPU (``decode_gpu``; issue 25)."""
GPU_COLUMNS.update(DECODE_GPU_COLUMNS)

DERIVED_META: dict[str, ColumnMeta] = {
    "weight_bits": ColumnMeta(label="Weight bits", unit="bits"),
    "kv_bits": ColumnMeta(label="KV bits", unit="bits"),
    "state_recurrent_bits": ColumnMeta(label="State bits", unit="bits"),
    "spec_method_code": ColumnMeta(label="Speculation method", unit="code"),
    "reserve_bytes": ColumnMeta(label="Reserve", unit="B"),
    "quant_group_size_effective": ColumnMeta(label="Quant group (effective)", unit="count"),
    "quant_scale_bits_effective": ColumnMeta(label="Scale bits (effective)", unit="bits"),
    "weight_auto_number": ColumnMeta(label="Checkpoint weights (1/0)", unit="code"),
    "matmul_path_code": ColumnMeta(label="Matmul path", unit="code"),
    "keep_embeddings_16bit_number": ColumnMeta(label="16-bit embeddings (1/0)", unit="code"),
    "activation_recompute_number": ColumnMeta(label="Recompute (1/0)", unit="code"),
    "include_attention_flops_number": ColumnMeta(label="Attention FLOPs (1/0)", unit="code"),
    "attention_convention_code": ColumnMeta(label="Attention FLOPs convention", unit="code"),
    "logits_convention_code": ColumnMeta(label="Prefill logits convention", unit="code"),
    "gpu_flops_per_s": ColumnMeta(label=GPU_COLUMNS["gpu_flops_per_s"].label,
                                  unit=GPU_COLUMNS["gpu_flops_per_s"].unit),
    "model_lora_dims": ColumnMeta(label="LoRA dims", unit="count"),
    "engine_code": ColumnMeta(label="Engine code", unit="code"),
    "prefill_launch_code": ColumnMeta(label="Prefill launch (0 auto, 1 graphs, 2 eager)",
                                      unit="code"),
    "chunked_prefill_number": ColumnMeta(label="Chunked prefill (1/0)", unit="code"),
    "vllm_v0_accounting_number": ColumnMeta(label="vLLM V0 memory (1/0)", unit="code"),
    "attention_dp_number": ColumnMeta(label="Attention DP (1/0)", unit="code"),
    "vllm_large_part": ColumnMeta(label="vLLM large-part defaults (1/0)", unit="code"),
    "max_num_seqs_effective": ColumnMeta(label="Max seqs (effective)", unit="sequences"),
    "max_num_batched_tokens_effective": ColumnMeta(label="Step tokens (effective)",
                                                   unit="tokens"),
    "block_size_effective": ColumnMeta(label="Block (effective)", unit="tokens"),
    "max_model_len_effective": ColumnMeta(label="Max model len (effective)", unit="tokens"),
    "gpu_compute_bits": ColumnMeta(label="Compute dtype bits", unit="bits"),
    "gpu_matmul_efficiency": ColumnMeta(label="GPU matmul efficiency", unit="fraction"),
    "slo_percentile_number": ColumnMeta(label="TTFT objective percentile", unit="count"),
    "kv_offload_bytes_per_gpu": ColumnMeta(label="Host KV store per GPU", unit="B"),
    "host_link_bytes_per_s": ColumnMeta(label="Host link (one direction)", unit="B/s"),
    "serving_mode_code": ColumnMeta(label="Serving mode (0 aggregated, 1 disaggregated)",
                                    unit="code"),
    "prefill_tp_effective": ColumnMeta(label="Prefill TP (effective)", unit="count"),
    "decode_tp_effective": ColumnMeta(label="Decode TP (effective)", unit="count"),
    "prefill_ep_effective": ColumnMeta(label="Prefill EP (effective)", unit="GPUs"),
    "decode_ep_effective": ColumnMeta(label="Decode EP (effective)", unit="GPUs"),
    "prefill_attention_dp_number": ColumnMeta(label="Prefill attention DP (1/0)", unit="code"),
    "decode_attention_dp_number": ColumnMeta(label="Decode attention DP (1/0)", unit="code"),
    "decode_gpu_flops_per_s": ColumnMeta(label="Decode GPU peak", unit="FLOP/s"),
    "decode_gpu_matmul_efficiency": ColumnMeta(label="Decode GPU matmul efficiency",
                                               unit="fraction"),
}
"""Label and unit of every derived input column (their formulas are in
:mod:`planner.formulas.derived`; ``model_lora_dims`` is looked up per model and targets)."""

_FIGURE_UNITS = {"params": "params", "elems": "elements", "flops_per_pair": "FLOPs/pair",
                 "tokens": "tokens"}


@cache
def figure_columns() -> dict[str, ColumnMeta]:
    """Columns that come from the scenario's model: name → label, unit and description (the
    field's docstring in :class:`~planner.spec.figures.ModelFigures`)."""
    out = {}
    for name in ModelFigures.__dataclass_fields__:
        unit = next((u for k, u in _FIGURE_UNITS.items() if k in name), "count")
        out[name] = ColumnMeta(label=name.removeprefix("model_").replace("_", " ").capitalize(),
                               unit=unit, description=_field_doc(name) or f"Model figure {name}.")
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
    formulas = {f.__name__: f for f in scenario.INFERENCE}
    for f in scenario.TRAINING:  # a name both kinds compute: the inference formula (issue 25's
        formulas.setdefault(f.__name__, f)  # cost_usd_per_hour adds both pools' cost)
    missing = sorted(set(formulas) - set(META))
    if missing:
        raise RuntimeError(f"output columns without metadata: {missing}")
    return {name: OutputColumn(name=name, label=META[name].label, unit=META[name].unit,
                               description=_description(f), formula=f,
                               signed=META[name].signed, integer=META[name].integer)
            for name, f in formulas.items()}


def column_label(name: str) -> tuple[str, str]:
    """(label, unit) of any column: output, input, model figure or GPU figure."""
    outputs = output_columns()
    if name in outputs:
        return outputs[name].label, outputs[name].unit
    meta = GPU_COLUMNS.get(name) or figure_columns().get(name) or DERIVED_META.get(name)
    if meta is not None:
        return meta.label, meta.unit
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
