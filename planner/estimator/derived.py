"""Derived inputs: the numeric columns the formulas read, computed from what the user typed.

A user picks ``int4`` weights, a ``full`` attention convention, a reserve in GiB; the formulas
read bits, convention codes and bytes. Each such column is a formula here like any output, so
the one definition is evaluated over numpy columns (one million rows in one call), rendered as
an Excel formula next to the inputs it reads, and shown by ``explain`` as an input. The tables
they look up are data in one place each: dtypes in :data:`planner.units.DTYPES`, conventions in
:mod:`planner.estimator.flops`. Adding a dtype or a convention is one entry there.
"""

from __future__ import annotations

from planner.estimator.flops import ATTENTION_CONVENTIONS, LOGITS_CONVENTIONS
from planner.estimator.gpu import COMPUTE_DTYPES
from planner.estimator.ops import Value, lookup, where
from planner.units import DEFAULT_GROUP_SIZE, DTYPE_BITS, GiB


def weight_bits(weight_dtype: Value) -> Value:
    """Bits per weight of the weight dtype (``int4`` → 4), from :data:`planner.units.DTYPES`."""
    return lookup(weight_dtype, DTYPE_BITS)


def kv_bits(kv_dtype: Value) -> Value:
    """Bits per KV-cache element of the KV dtype."""
    return lookup(kv_dtype, DTYPE_BITS)


def reserve_bytes(reserve_gib: Value) -> Value:
    """``reserve_gib`` in bytes (1 GiB = 2^30 B)."""
    return reserve_gib * GiB


def quant_group_size_effective(quant_group_size: Value, weight_dtype: Value) -> Value:
    """Weights per quantization scale: ``quant_group_size``, or the weight dtype's default
    when it is -1 (128 for int4 as GPTQ/AWQ, none for 8 and 16 bit)."""
    return where(quant_group_size < 0, lookup(weight_dtype, DEFAULT_GROUP_SIZE), quant_group_size)


def keep_embeddings_16bit_number(keep_embeddings_16bit: Value) -> Value:
    """``keep_embeddings_16bit`` as 1 or 0."""
    return where(keep_embeddings_16bit, 1, 0)


def activation_recompute_number(activation_recompute: Value) -> Value:
    """``activation_recompute`` as 1 or 0."""
    return where(activation_recompute, 1, 0)


def include_attention_flops_number(include_attention_flops: Value) -> Value:
    """``include_attention_flops`` as 1 or 0."""
    return where(include_attention_flops, 1, 0)


def attention_convention_code(attention_convention: Value) -> Value:
    """The attention convention's code (0 causal pairs, 1 full square)."""
    return lookup(attention_convention, ATTENTION_CONVENTIONS)


def logits_convention_code(logits_convention: Value) -> Value:
    """The prefill logits convention's code (0 last position, 1 all, 2 none)."""
    return lookup(logits_convention, LOGITS_CONVENTIONS)


def gpu_flops_per_s(weight_dtype: Value, gpu_bf16_peak: Value, gpu_fp16_peak: Value,
                    gpu_fp8_peak: Value, gpu_int8_peak: Value, gpu_int4_peak: Value) -> Value:
    """Dense tensor peak of one GPU at the scenario's compute dtype: the first dtype of
    :data:`planner.estimator.gpu.COMPUTE_DTYPES` for the weight dtype that the GPU lists
    (a peak of 0 means the part has no tensor path for that dtype)."""
    peaks = {"bf16": gpu_bf16_peak, "fp16": gpu_fp16_peak, "fp8": gpu_fp8_peak,
             "int8": gpu_int8_peak, "int4": gpu_int4_peak}
    chosen: Value = 0
    for dtype, candidates in reversed(tuple(COMPUTE_DTYPES.items())):
        first: Value = 0
        for candidate in reversed(candidates):
            first = where(peaks[candidate] > 0, peaks[candidate], first)
        chosen = where(weight_dtype == dtype, first, chosen)
    return chosen
