"""Hypothesis properties of the estimator over the catalog models and GPUs."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import service
from planner.compute.inputs import INFERENCE_INPUTS, parse_inputs
from planner.spec import catalog
from tests.conftest import gpu

MODELS = {name: catalog.resolve_model_spec(name) for name in catalog.model_names()}
FULL_ATTENTION = sorted(n for n, s in MODELS.items()
                        if all(layer.sliding_window is None for layer in s.layers))
GPUS = catalog.load_gpus()


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def scenarios(draw: st.DrawFn, models: list[str] | None = None) -> tuple[str, str, dict[str, Any]]:
    name = draw(st.sampled_from(models or sorted(MODELS)))
    s = MODELS[name]
    tp = draw(st.sampled_from([d for d in _divisors(s.layers[0].attention.num_heads) if d <= 64]))
    pp = draw(st.integers(1, min(8, s.num_layers)))
    inputs = {
        "tp": tp, "pp": pp, "gpus": tp * pp * draw(st.integers(1, 4)),
        "batch": draw(st.integers(1, 4096)),
        "prompt_tokens": draw(st.integers(1, 1_000_000)),
        "output_tokens": draw(st.integers(1, 100_000)),
        "weight_dtype": draw(st.sampled_from(["bf16", "fp16", "fp8", "int8", "int4"])),
        "kv_dtype": draw(st.sampled_from(["bf16", "fp16", "fp8", "int8"])),
        "quant_group_size": draw(st.sampled_from([-1, 0, 32, 64, 128])),
        "reserve_gib": draw(st.floats(0, 50)),
        "reserve_fraction": draw(st.floats(0, 0.5)),
        "mfu": draw(st.floats(0.01, 1)),
        "mbu": draw(st.floats(0.01, 1)),
        "attention_convention": draw(st.sampled_from(["causal", "full"])),
        "logits_convention": draw(st.sampled_from(["last", "all", "none"])),
    }
    return name, draw(st.sampled_from(sorted(GPUS))), inputs


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_no_exception_and_finite_outputs_on_valid_input(case: tuple[str, str, dict]) -> None:
    name, gpu_name, inputs = case
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = service.estimate(MODELS[name], GPUS[gpu_name], inputs)
    for key, value in r.items():
        if isinstance(value, float):
            assert math.isfinite(value), key
    assert r["fits"] == (r["kv_headroom_bytes"] >= 0)
    assert r["ttft_s"] > 0 and r["tpot_s"] > 0
    assert r["max_concurrent_sequences"] >= 0 and r["max_context_tokens"] >= 0


@settings(max_examples=200, deadline=None)
@given(scenarios(FULL_ATTENTION), st.integers(1, 64), st.integers(1, 200_000))
def test_kv_bytes_linear_in_batch_times_context(case: tuple[str, str, dict], batch: int,
                                                context: int) -> None:
    name, gpu_name, inputs = case
    inputs = {**inputs, "tp": 1, "pp": 1, "gpus": 1, "batch": batch,
              "prompt_tokens": context, "output_tokens": 1}
    r = service.estimate(MODELS[name], GPUS[gpu_name], inputs)
    assert r["kv_in_use_bytes_per_gpu"] == batch * context * r["kv_bytes_per_token"]


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.integers(1, 500_000), st.integers(1, 500_000))
def test_max_concurrency_non_increasing_in_context(case: tuple[str, str, dict], c1: int,
                                                  c2: int) -> None:
    name, gpu_name, inputs = case
    short, long_ = sorted((c1, c2))
    results = [service.estimate(MODELS[name], GPUS[gpu_name],
                                {**inputs, "prompt_tokens": c, "output_tokens": 1})
               for c in (short, long_)]
    assert results[0]["max_concurrent_sequences"] >= results[1]["max_concurrent_sequences"]


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_max_context_is_the_largest_that_fits(case: tuple[str, str, dict]) -> None:
    """max_context_tokens at a batch fits, and one token more does not (unless capped)."""
    name, gpu_name, inputs = case
    s, g = MODELS[name], GPUS[gpu_name]
    r = service.estimate(s, g, inputs)
    t = r["max_context_tokens"]
    if t >= 1:
        assert service.estimate(s, g, {**inputs, "prompt_tokens": t, "output_tokens": 1})["fits"]
    if t < s.max_position_embeddings:
        assert not service.estimate(s, g, {**inputs, "prompt_tokens": t + 1,
                                           "output_tokens": 1})["fits"]


def test_vectorized_rows_equal_single_rows() -> None:
    """One call over many rows gives each row's scalar result."""
    s = MODELS["mixtral-8x7b"]
    g = GPUS["h100-sxm"]
    batches = [1, 2, 8, 64, 256]
    cols = service.scenario_columns(s, g, parse_inputs(INFERENCE_INPUTS, {"gpus": 2, "tp": 2}))
    cols["batch"] = np.array(batches)
    vector = service.inference_graph().compute(cols)
    for i, b in enumerate(batches):
        scalar = service.estimate(s, g, {"gpus": 2, "tp": 2, "batch": b})
        for key in ("tpot_s", "kv_headroom_bytes", "throughput_tokens_per_s",
                    "cost_usd_per_million_output_tokens", "max_context_tokens"):
            assert vector[key][i] == pytest.approx(scalar[key], rel=1e-12), key


def test_numeric_columns_map_choices() -> None:
    """The derived inputs (planner.formulas.derived) turn choices into the numbers the
    formulas read; before they were a hand-written ``numeric_columns``."""
    cols = service.inference_graph().compute(
        {**parse_inputs(INFERENCE_INPUTS, {"weight_dtype": "int4", "kv_dtype": "fp8",
                                           "reserve_gib": "2"}),
         "model_checkpoint_weight_bits": 16,
         # what kv_bits reads to resolve kv_dtype auto (an explicit fp8 here does not use them)
         "gpu_compute_capability": 0, "model_checkpoint_kv_bits": 0,
         "model_sparse_mla_layers": 0, "model_vllm_v4_kv_bytes_per_token": 0},
        ["weight_bits", "kv_bits", "quant_group_size_effective", "reserve_bytes"])
    cols["quant_group_size"] = cols["quant_group_size_effective"]
    assert (cols["weight_bits"], cols["kv_bits"], cols["quant_group_size"]) == (4, 8, 128)
    assert cols["reserve_bytes"] == 2 * 2**30
    assert gpu().memory_bytes == 80 * 2**30


@st.composite
def invalid_inputs(draw: st.DrawFn) -> tuple[str, object]:
    """A column and a value outside what it allows."""
    column = draw(st.sampled_from(INFERENCE_INPUTS))
    if column.kind == "choice":
        value: object = draw(st.text(min_size=1, max_size=6).filter(
            lambda t: t.strip().lower() not in column.choices))
    elif column.kind == "bool":
        value = draw(st.sampled_from(["maybe", "2", "", "tru"]))
    elif column.kind == "text":  # a profile name: 1 to 200 characters once stripped
        blank = [] if column.default == "" else ["", "   "]  # spec_draft_model may be blank
        value = draw(st.sampled_from([*blank, "x" * 201, "lab\x00", "a\u2028b"]))
    else:
        options = [st.just("abc"), st.just(float("nan")), st.just(float("inf"))]
        if column.minimum is not None:
            options.append(st.floats(-1e9, column.minimum, exclude_max=not column.above_minimum))
        if column.maximum is not None:
            options.append(st.floats(column.maximum, 1e18, exclude_min=True))
        if column.kind == "int":
            options.append(st.just("1.5"))
        value = draw(st.one_of(options))
    return column.name, value


@settings(max_examples=300, deadline=None)
@given(invalid_inputs())
def test_invalid_input_is_refused_naming_the_column(case: tuple[str, object]) -> None:
    from planner.core.errors import ValidationError

    name, value = case
    with pytest.raises(ValidationError) as err:
        parse_inputs(INFERENCE_INPUTS, {name: value})
    assert err.value.field == name
    assert str(err.value).startswith(f"{name}: ")
