"""The workbook's layout: which columns each sheet has, their headers, units and formats.

Export writes it and import reads it back, so both sides share this one description. A
scenario sheet (``Scenarios`` for inference, ``Training``) has four bands of columns:

* meta: id, fleet, name, model, gpu, version (what the row is);
* inputs: the input columns of the registry, as plain values a recipient may edit;
* outputs: every output column, each a live formula rendered from its estimator definition;
* lookups: the numeric forms the formulas read: the derived inputs (dtype bits, codes, bytes,
  the GPU's peak at the compute dtype), each a live formula rendered from its estimator
  definition like the outputs, and the model's and GPU's figures fetched from the Models and
  GPUs sheets with INDEX/MATCH, so editing a GPU's price or memory there flows into every
  scenario.

Headers are ``name [unit]``; import matches them by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from openpyxl.utils import get_column_letter

from planner.compute.inputs import InputColumn
from planner.compute.outputs import DERIVED_META, GPU_COLUMNS, figure_columns, output_columns
from planner.compute.table import graph, inputs_of
from planner.spec.catalog import gpu_record
from planner.spec.figures import ModelFigures
from planner.spec.gpu import PEAK_DTYPES, GpuSpec, serving_figures

Role = Literal["meta", "input", "output", "lookup"]

SCENARIO_SHEETS = {"inference": "Scenarios", "training": "Training"}
KNOWN_SHEETS = ("Summary", "Scenarios", "Training", "Models", "GPUs", "Lists", "Calibration",
                "Calibration runs")
"""Sheets the planner writes (plus ``Sweep …`` sheets when sweeps are included; Calibration
when scenarios use calibration profiles or measured runs match them, and Calibration runs
when runs do). Import reads only the
scenario sheets."""

NUMBER_FORMATS = {
    "B": "#,##0", "FLOPs": "0.000E+00", "s": "0.000000", "tokens": "#,##0",
    "sequences": "#,##0", "params": "#,##0", "count": "#,##0", "GPUs": "#,##0",
    "bits": "0.###", "fraction": "0.0000", "tokens/s": "#,##0.0", "requests/s": "#,##0.000",
    "tokens/day": "#,##0", "FLOPs/token": "0.000E+00", "USD": '"$"#,##0.00',
    "USD/h": '"$"#,##0.00', "USD/month": '"$"#,##0.00', "USD/Mtok": '"$"#,##0.0000',
    "GPU-h": "#,##0.0", "B/s": "0.000E+00", "Gb/s": "#,##0", "FLOP/s": "0.000E+00",
    "USD/GPU-h": '"$"#,##0.00',
    "elements": "#,##0", "FLOPs/pair": "#,##0", "code": "0", "GiB": "#,##0.00",
    "fraction of memory": "0.00", "h": "#,##0", "stage": "0", "rank": "0",
    "σ": '0.000" σ"',
}

GPU_SHEET = (
    # key, header, kind ('value' or a formula template over {col}), number format
    ("name", "name", "value", None),
    ("vendor", "vendor", "value", None),
    ("label", "label", "value", None),
    ("memory_gib", "memory_gib [GiB]", "value", "#,##0.00"),
    ("bf16_tflops", "bf16_tflops [TFLOP/s dense]", "value", "#,##0.0"),
    ("fp16_tflops", "fp16_tflops [TFLOP/s dense]", "value", "#,##0.0"),
    ("fp8_tflops", "fp8_tflops [TFLOP/s dense]", "value", "#,##0.0"),
    ("int8_tops", "int8_tops [TOP/s dense]", "value", "#,##0.0"),
    ("int4_tops", "int4_tops [TOP/s dense]", "value", "#,##0.0"),
    ("nvfp4_tflops", "nvfp4_tflops [TFLOP/s dense]", "value", "#,##0.0"),
    ("mxfp4_tflops", "mxfp4_tflops [TFLOP/s dense]", "value", "#,##0.0"),
    ("memory_bandwidth_gb_per_s", "memory_bandwidth_gb_per_s [GB/s]", "value", "#,##0"),
    ("price_usd_per_hour", "price_usd_per_hour [USD/GPU-h]", "value", '"$"#,##0.00'),
    ("price_is_example", "price_is_example", "value", None),
    ("memory_bytes", "memory_bytes [B]", "={memory_gib}*1073741824", "#,##0"),
    ("bf16_flops_per_s", "bf16_flops_per_s [FLOP/s]", "={bf16_tflops}*1E+12", "0.000E+00"),
    ("fp16_flops_per_s", "fp16_flops_per_s [FLOP/s]", "={fp16_tflops}*1E+12", "0.000E+00"),
    ("fp8_flops_per_s", "fp8_flops_per_s [FLOP/s]", "={fp8_tflops}*1E+12", "0.000E+00"),
    ("int8_ops_per_s", "int8_ops_per_s [OP/s]", "={int8_tops}*1E+12", "0.000E+00"),
    ("int4_ops_per_s", "int4_ops_per_s [OP/s]", "={int4_tops}*1E+12", "0.000E+00"),
    ("nvfp4_flops_per_s", "nvfp4_flops_per_s [FLOP/s]", "={nvfp4_tflops}*1E+12", "0.000E+00"),
    ("mxfp4_flops_per_s", "mxfp4_flops_per_s [FLOP/s]", "={mxfp4_tflops}*1E+12", "0.000E+00"),
    ("bandwidth_bytes_per_s", "bandwidth_bytes_per_s [B/s]",
     "={memory_bandwidth_gb_per_s}*1E+9", "0.000E+00"),
    ("source", "source", "value", None),
    # serving figures (the catalog's, or the documented default where it gives none)
    ("usable_memory_gib", "usable_memory_gib [GiB]", "value", "#,##0.00"),
    ("matmul_efficiency", "matmul_efficiency [fraction]", "value", "0.00"),
    ("matmul_efficiency_8bit", "matmul_efficiency_8bit [fraction]", "value", "0.00"),
    ("bandwidth_efficiency", "bandwidth_efficiency [fraction]", "value", "0.00"),
    ("interconnect_gb_per_s", "interconnect_gb_per_s [GB/s]", "value", "#,##0"),
    ("runtime_context_gib", "runtime_context_gib [GiB]", "value", "#,##0.00"),
    ("usable_memory_bytes", "usable_memory_bytes [B]", "={usable_memory_gib}*1073741824",
     "#,##0"),
    ("interconnect_bytes_per_s", "interconnect_bytes_per_s [B/s]",
     "={interconnect_gb_per_s}*1E+9", "0.000E+00"),
    ("runtime_context_bytes", "runtime_context_bytes [B]",
     "={runtime_context_gib}*1073741824", "#,##0"),
    # wiring (planner.formulas.topology)
    ("nvlink_domain_gpus", "nvlink_domain_gpus [GPUs]", "value", "#,##0"),
    ("mesh_links_per_gpu", "mesh_links_per_gpu [count]", "value", "#,##0"),
    ("pcie_gen", "pcie_gen [code]", "value", "0"),
    ("nic_gbit_per_s", "nic_gbit_per_s [Gb/s]", "value", "#,##0"),
    ("topology_source", "topology_source", "value", None),
    ("compute_capability", "compute_capability [major.minor]", "value", "0.0"),
    ("version", "version", "value", None),
)
"""Columns of the GPUs sheet. The value columns (but name and version) are the GPU's figures a
reader may edit: import applies them to the catalog (validated, in the import's transaction);
``version`` guards against overwriting someone else's change since the export."""
GPU_EDITABLE = tuple(key for key, _h, kind, _f in GPU_SHEET
                     if kind == "value" and key not in ("name", "version"))
GPU_TEXT = ("vendor", "label", "source", "topology_source")
"""Text columns of the GPUs sheet (the others but ``price_is_example`` are numbers)."""
GPU_THROUGHPUT = ("bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "int4_tops",
                  "nvfp4_tflops", "mxfp4_tflops")
"""Throughput columns of the GPUs sheet: empty (or 0) means the GPU lacks that dtype."""
def gpu_sheet_record(spec: GpuSpec, version: int) -> dict[str, Any]:
    """A GPU's row on the GPUs sheet: its catalog record (:func:`gpu_record`) with the serving
    figures in force (the catalog's, or the documented default where it gives none) and its
    version. Export writes it; import compares the sheet against it to find edits."""
    serving = serving_figures(spec)
    return {"name": spec.name, **gpu_record(spec),
            "usable_memory_gib": serving["gpu_usable_memory_bytes"] / 2**30,
            "matmul_efficiency": serving["gpu_matmul_efficiency_16bit"],
            "matmul_efficiency_8bit": serving["gpu_matmul_efficiency_8bit"],
            "bandwidth_efficiency": serving["gpu_bandwidth_efficiency"],
            "interconnect_gb_per_s": serving["gpu_interconnect_bytes_per_s"] / 1e9,
            "runtime_context_gib": serving["gpu_runtime_context_bytes"] / 2**30,
            "nvlink_domain_gpus": spec.nvlink_domain_gpus,
            "mesh_links_per_gpu": spec.mesh_links_per_gpu, "pcie_gen": spec.pcie_gen,
            "nic_gbit_per_s": spec.nic_gbit_per_s, "topology_source": spec.topology_source,
            "compute_capability": spec.compute_capability, "version": version}


GPU_PEAK_COLUMN = {"bf16": "bf16_flops_per_s", "fp16": "fp16_flops_per_s",
                   "fp8": "fp8_flops_per_s", "int8": "int8_ops_per_s", "int4": "int4_ops_per_s",
                   "nvfp4": "nvfp4_flops_per_s", "mxfp4": "mxfp4_flops_per_s"}

MODEL_META = ("name", "model_type", "source", "hidden_size", "layers", "attention_heads",
              "kv_heads", "head_dim", "vocab_size", "params_total", "params_active")
MODEL_FIGURES = tuple(ModelFigures.__dataclass_fields__)
DRAFT_FIGURE_UNITS = {"spec_draft_params": "params", "spec_draft_active_params": "params",
                      "spec_draft_layers": "count"}
"""The draft model's figure columns of an inference sheet
(:data:`planner.compute.draft.DRAFT_FIGURES`) and their units."""
DRAFT_FIGURE_SOURCE: dict[str, tuple[str, ...]] = {
    "spec_draft_params": ("model_params_total",),
    "spec_draft_active_params": ("model_matmul_dense_params", "model_matmul_experts_active_params",
                                 "model_lm_head_matmul_params"),
    "spec_draft_layers": ("model_layers",),
}
"""Draft figure → the Models sheet columns it sums (:func:`planner.compute.draft.draft_figures`)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a scenario sheet."""

    key: str
    role: Role
    unit: str = ""
    kind: str = ""
    """For inputs: the registry kind (int, float, choice, bool)."""

    @property
    def header(self) -> str:
        """``key [unit]``."""
        return f"{self.key} [{self.unit}]" if self.unit else self.key

    @property
    def number_format(self) -> str | None:
        """The Excel number format of the unit, if any."""
        return NUMBER_FORMATS.get(self.unit)


META_COLUMNS = ("id", "fleet", "name", "model", "gpu", "version")
OPTION_COLUMNS = ("option_of", "chosen")
"""The option model's columns (issue 15.1), at the end of every scenario sheet."""

GPU_FIGURE_SOURCE: dict[str, str] = {
    "gpu_memory_bytes": "memory_bytes",
    "gpu_bandwidth_bytes_per_s": "bandwidth_bytes_per_s",
    "price_usd_per_gpu_hour": "price_usd_per_hour",
    **{f"gpu_{d}_peak": GPU_PEAK_COLUMN[d] for d in PEAK_DTYPES},
    "gpu_usable_memory_bytes": "usable_memory_bytes",
    "gpu_matmul_efficiency_16bit": "matmul_efficiency",
    "gpu_matmul_efficiency_8bit": "matmul_efficiency_8bit",
    "gpu_bandwidth_efficiency": "bandwidth_efficiency",
    "gpu_interconnect_bytes_per_s": "interconnect_bytes_per_s",
    "gpu_runtime_context_bytes": "runtime_context_bytes",
    **{f"gpu_{k}": k for k in ("nvlink_domain_gpus", "mesh_links_per_gpu", "pcie_gen",
                               "nic_gbit_per_s", "compute_capability")},
}
"""GPU figure column of a scenario sheet → the GPUs sheet column it is fetched from."""

DECODE_GPU_FIGURE_SOURCE: dict[str, str] = {
    ("decode_gpu_price_usd_per_gpu_hour" if key == "price_usd_per_gpu_hour"
     else f"decode_{key}"): source for key, source in GPU_FIGURE_SOURCE.items()}
"""The decode pool's GPU figures (``decode_gpu``: ``same`` = the row's GPU; issue 25) → the
GPUs sheet column each is fetched from; ``decode_gpu_same`` (1 when the decode GPU is the row's
GPU) is computed beside them."""
DECODE_GPU_COLUMNS = (*DECODE_GPU_FIGURE_SOURCE, "decode_gpu_same")


@cache
def scenario_columns(kind: str) -> tuple[Column, ...]:
    """Every column of the scenario sheet of ``kind``, in order."""
    cols = _entered_columns(kind)
    cols += _computed_columns(kind)
    if kind == "inference":
        cols += _serving_lookups()
    # last: the base an option belongs to, and whether the row is counted (the Summary's
    # SUMPRODUCTs match chosen = TRUE)
    cols += [Column(key, "meta") for key in OPTION_COLUMNS]
    return tuple(cols)


def _entered_columns(kind: str) -> list[Column]:
    """The columns a reader fills in: the meta columns (a training sheet's LoRA targets
    too), the notes, then the inputs."""
    cols: list[Column] = [Column(k, "meta") for k in META_COLUMNS]
    if kind == "training":
        cols.append(Column("lora_targets", "meta"))
    cols.append(Column("notes", "meta"))
    cols += [Column(c.name, "input", c.measured_unit, c.kind) for c in inputs_of(kind)]
    return cols


def _computed_columns(kind: str) -> list[Column]:
    """The outputs, then the lookups: derived figures (a training sheet's LoRA dimensions
    too), the model's figures and the GPU's."""
    outputs = output_columns()
    cols = [Column(name, "output", outputs[name].unit) for name in graph(kind).outputs]
    derived = [*graph(kind).derived, *(["model_lora_dims"] if kind == "training" else [])]
    cols += [Column(key, "lookup", DERIVED_META[key][1]) for key in derived]
    figures = figure_columns()
    cols += [Column(name, "lookup", figures[name][1]) for name in MODEL_FIGURES]
    cols += [Column(key, "lookup", GPU_COLUMNS[key][1]) for key in GPU_FIGURE_SOURCE]
    return cols


def _serving_lookups() -> list[Column]:
    """An inference sheet's extra lookup columns: the draft model's figures (by
    ``spec_draft_model``, :mod:`planner.compute.draft`), then the decode pool's GPU figures (by
    ``decode_gpu``, issue 25; ``decode_gpu_same`` a code)."""
    cols = [Column(key, "lookup", unit) for key, unit in DRAFT_FIGURE_UNITS.items()]
    cols += [Column(key, "lookup", "code" if key == "decode_gpu_same"
                    else GPU_COLUMNS[key.removeprefix("decode_")
                                     .replace("gpu_price", "price")][1])
             for key in DECODE_GPU_COLUMNS]
    return cols


def letters(kind: str) -> dict[str, str]:
    """Column key → column letter on the scenario sheet of ``kind``."""
    return {c.key: get_column_letter(i) for i, c in enumerate(scenario_columns(kind), 1)}


def input_column(kind: str, key: str) -> InputColumn | None:
    """The registry input column of ``key`` (None for meta columns)."""
    return next((c for c in inputs_of(kind) if c.name == key), None)
