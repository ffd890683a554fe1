"""Scenario input columns: type, unit, bounds, default and help, and their validation.

Every input a user can set (from the CLI, the UI or a workbook) is defined here once. Parsing
raises :class:`ValidationError` naming the column and the allowed range. The numeric columns the
formulas read (bits, codes, bytes) are derived from these by formulas like any other
(:mod:`planner.estimator.derived`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from planner.errors import ValidationError
from planner.estimator.flops import ATTENTION_CONVENTIONS, LOGITS_CONVENTIONS
from planner.units import KV_DTYPES, WEIGHT_DTYPES, parse_number

Kind = Literal["int", "float", "choice", "bool"]
_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}


@dataclass(frozen=True, slots=True)
class InputColumn:
    """One input column. ``minimum``/``maximum`` are inclusive unless ``above_minimum``."""

    name: str
    label: str
    unit: str
    kind: Kind
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    above_minimum: bool = False
    choices: tuple[str, ...] = ()

    @property
    def measured_unit(self) -> str:
        """The unit the value is measured in, for headers and editors; empty for flags, dtypes
        and conventions, whose ``unit`` only names their kind."""
        return "" if self.unit in ("bool", "dtype", "convention") else self.unit

    def allowed(self) -> str:
        """The allowed values in words, for error messages and help text."""
        if self.kind == "choice":
            return f"one of {', '.join(self.choices)}"
        if self.kind == "bool":
            return "true or false"
        noun = "an integer" if self.kind == "int" else "a number"
        low = _fmt(self.minimum)
        high = _fmt(self.maximum)
        if self.above_minimum:
            return f"{noun} above {low}" + (f" and at most {high}" if high else "")
        if low is not None and high is not None:
            return f"{noun} from {low} to {high}"
        if low is not None:
            return f"{noun} of at least {low}"
        return noun

    def parse(self, raw: Any) -> Any:
        """The validated value of ``raw`` (a string or a number); :class:`ValidationError` naming
        this column and :meth:`allowed` otherwise."""
        if self.kind == "choice":
            value = str(raw).strip().lower()
            if value not in self.choices:
                raise ValidationError(self.name, self.allowed(), value=raw)
            return value
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValidationError(self.name, self.allowed(), value=raw)
        number = _number(raw, integer=self.kind == "int")
        if number is None:
            raise ValidationError(self.name, self.allowed(), value=raw)
        if self.minimum is not None and (number < self.minimum
                                         or (self.above_minimum and number == self.minimum)):
            raise ValidationError(self.name, self.allowed(), value=raw)
        if self.maximum is not None and number > self.maximum:
            raise ValidationError(self.name, self.allowed(), value=raw)
        return number


def _fmt(x: float | None) -> str | None:
    if x is None:
        return None
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _number(raw: Any, *, integer: bool) -> int | float | None:
    """``raw`` read by :func:`planner.units.parse_number`; ``None`` if it is not a number (or
    not a whole one, for an integer column)."""
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
        raw = str(raw)  # numpy scalars and the like: read their text
    value = parse_number(raw)
    if value is None:
        return None
    if integer:
        if not value.is_integer():
            return None
        return int(raw) if isinstance(raw, int) else int(value)
    return value


def _col(name: str, label: str, unit: str, kind: Kind, default: Any, help: str,
         **bounds: Any) -> InputColumn:
    return InputColumn(name, label, unit, kind, default, help, **bounds)


MAX_TOKENS = 100_000_000

DEPLOYMENT_INPUTS: tuple[InputColumn, ...] = (
    _col("gpus", "GPUs", "count", "int", 1, "GPUs in the deployment (a multiple of tp*pp).",
         minimum=1, maximum=1_000_000),
    _col("tp", "TP", "count", "int", 1, "Tensor-parallel degree: GPUs sharing each layer.",
         minimum=1, maximum=1024),
    _col("pp", "PP", "count", "int", 1, "Pipeline-parallel degree: stages the layers split into.",
         minimum=1, maximum=1024),
    _col("weight_dtype", "Weights", "dtype", "choice", "bf16",
         "Weight storage dtype (int4 with per-group scales).", choices=WEIGHT_DTYPES),
    _col("quant_group_size", "Quant group", "weights", "int", -1,
         "Weights per quantization scale; 0 = no per-group scales; -1 = dtype default "
         "(128 for int4, none otherwise).", minimum=-1, maximum=1_000_000),
    _col("quant_scale_bits", "Scale bits", "bits", "int", 16,
         "Bits per quantization scale (and zero point, if any).", minimum=0, maximum=64),
    _col("keep_embeddings_16bit", "16-bit embeddings", "bool", "bool", True,
         "Keep the embedding and LM head in 16 bit when weights are quantized."),
    _col("reserve_gib", "Reserve", "GiB", "float", 0.0,
         "Fixed memory per GPU held back for activations, workspace and the runtime.",
         minimum=0, maximum=100_000),
    _col("reserve_fraction", "Reserve share", "fraction", "float", 0.10,
         "Share of GPU memory held back (added to reserve_gib).", minimum=0, maximum=0.99),
    _col("mfu", "MFU", "fraction", "float", 0.5,
         "Model FLOPs utilization: achieved share of peak tensor throughput.",
         minimum=0, maximum=1, above_minimum=True),
)

INFERENCE_INPUTS: tuple[InputColumn, ...] = (
    *DEPLOYMENT_INPUTS,
    _col("batch", "Batch", "sequences", "int", 1,
         "Concurrent sequences per replica (the running batch).", minimum=1, maximum=10_000_000),
    _col("prompt_tokens", "Prompt", "tokens", "int", 1024, "Prompt length S.",
         minimum=1, maximum=MAX_TOKENS),
    _col("output_tokens", "Output", "tokens", "int", 128, "Generated tokens G per request.",
         minimum=1, maximum=MAX_TOKENS),
    _col("kv_dtype", "KV", "dtype", "choice", "bf16", "KV-cache element dtype.",
         choices=KV_DTYPES),
    _col("mbu", "MBU", "fraction", "float", 0.8,
         "Memory bandwidth utilization: achieved share of peak bandwidth.",
         minimum=0, maximum=1, above_minimum=True),
    _col("target_requests_per_s", "Target rate", "requests/s", "float", 0.0,
         "Request rate the deployment must sustain; 0 = no target.", minimum=0, maximum=1e9),
    _col("hours_per_month", "Hours/month", "h", "float", 730.0,
         "Billed hours per month (730 = 8760/12).", minimum=0, maximum=744, above_minimum=True),
    _col("attention_convention", "Attention FLOPs", "convention", "choice", "causal",
         "Prefill attention FLOPs: causal pairs S(S+1)/2 or the full S x S square.",
         choices=tuple(ATTENTION_CONVENTIONS)),
    _col("logits_convention", "Prefill logits", "convention", "choice", "last",
         "Prefill logits positions: last only (inference), all (training) or none.",
         choices=tuple(LOGITS_CONVENTIONS)),
)

TRAINING_INPUTS: tuple[InputColumn, ...] = (
    *DEPLOYMENT_INPUTS,
    _col("train_tokens", "Tokens", "tokens", "float", 1e9, "Training tokens D.",
         minimum=1, maximum=1e16),
    _col("train_seq_len", "Sequence", "tokens", "int", 4096, "Training sequence length.",
         minimum=1, maximum=MAX_TOKENS),
    _col("micro_batch_size", "Micro-batch", "sequences", "int", 1,
         "Sequences per GPU per micro-step (sets activation memory).",
         minimum=1, maximum=100_000),
    _col("zero_stage", "ZeRO", "stage", "int", 1,
         "ZeRO stage: 0 replicate, 1 shard optimizer, 2 + gradients, 3 + parameters.",
         minimum=0, maximum=3),
    _col("activation_recompute", "Recompute", "bool", "bool", True,
         "Full activation recomputation (keep only each layer's input)."),
    _col("include_attention_flops", "Attention FLOPs", "bool", "bool", False,
         "Add the attention-core term to 6*N*D."),
    _col("lora_rank", "LoRA rank", "rank", "int", 0, "LoRA rank r; 0 = full training.",
         minimum=0, maximum=65_536),
    _col("budget_usd", "Budget", "USD", "float", 0.0,
         "A USD budget to convert into training tokens.", minimum=0, maximum=1e12),
    _col("budget_gpu_hours", "Budget", "GPU-h", "float", 0.0,
         "A GPU-hour budget to convert into training tokens.", minimum=0, maximum=1e12),
)

TRAINING_DEFAULT_OVERRIDES = {"mfu": 0.4, "reserve_fraction": 0.0}
"""Training starts from different defaults: MFU 40 %, no serving reserve."""


def defaults(columns: tuple[InputColumn, ...],
             overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Default value of every column in ``columns``."""
    out = {c.name: c.default for c in columns}
    out.update(overrides or {})
    return out


def parse_inputs(columns: tuple[InputColumn, ...], raw: Mapping[str, Any],
                 base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Validate ``raw`` (name → value; unknown names refused) over ``base`` (default: the
    columns' defaults). Raises on the first bad value, naming it."""
    check_known(columns, raw)
    by_name = {c.name: c for c in columns}
    out = dict(base) if base is not None else defaults(columns)
    for name, value in raw.items():
        out[name] = by_name[name].parse(value)
    return out


def check_known(columns: tuple[InputColumn, ...], raw: Mapping[str, Any]) -> None:
    """Refuse a name in ``raw`` that is not one of ``columns``, listing the inputs."""
    names = {c.name for c in columns}
    for name in raw:
        if name not in names:
            raise ValidationError(name, "is not an input; inputs are " + ", ".join(sorted(names)))


def input_columns() -> dict[str, InputColumn]:
    """Every scenario input column (inference and training), by name."""
    return {c.name: c for c in (*INFERENCE_INPUTS, *TRAINING_INPUTS)}
