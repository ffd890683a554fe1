"""The thin one-row path (issue 14, item 4): ``service.estimate``/``service.train`` evaluate one
scenario on Python scalars (:func:`planner.compute.table.evaluate_row`), and every figure is bit
for bit the one the vectorized path (:func:`planner.compute.table.evaluate_table`, the path of
fleets, sweeps and DataFrames) computes for the same row among others."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from planner import service
from planner.compute.table import evaluate_row, evaluate_table, graph
from planner.formulas import ops
from planner.service import Workspace
from tests.conftest import gpu as adhoc_gpu
from tests.conftest import spec

# the golden scenarios of docs/formulas.md (REFERENCE.md's worked figures) and variations that
# reach every operator: engines, offload, target rates, quantization, parallelism, training
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("llama-3-8b", "24gib", {"reserve_gib": 3, "reserve_fraction": 0, "prompt_tokens": 8191,
                             "output_tokens": 1, "batch": 6}),
    ("llama-3-8b", "24gib", {"reserve_gib": 3, "reserve_fraction": 0, "prompt_tokens": 8191,
                             "output_tokens": 1, "batch": 7}),
    ("llama-3-8b", "h100-sxm", {"prompt_tokens": 1024, "output_tokens": 128, "batch": 1}),
    ("llama-3-8b", "h100-sxm", {"prompt_tokens": 8192, "output_tokens": 2, "batch": 1,
                                "attention_convention": "full", "logits_convention": "all"}),
    ("llama-2-7b", "a100-80gb", {"weight_dtype": "int4", "kv_dtype": "fp8", "batch": 64,
                                 "engine": "vllm", "target_requests_per_s": 12.5}),
    ("mixtral-8x7b", "h200", {"tp": 2, "gpus": 4, "weight_dtype": "fp8", "engine": "sglang",
                              "target_requests_per_s": 3}),
    ("mixtral-8x7b", "l40s", {"batch": 32, "kv_offload_gib": 64, "engine": "trtllm"}),
    ("llama-3-8b", "l40s", {"weight_offload_fraction": 0.3, "batch": 4, "prompt_tokens": 30000,
                            "chunked_prefill": True, "slo_ttft_s": 0.5, "slo_tpot_s": 0.05,
                            "engine": "vllm", "target_requests_per_s": 2}),
    ("llama-2-7b", "mi300x", {"tp": 8, "gpus": 8, "batch": 256, "output_tokens": 4096,
                              "target_requests_per_s": 1e6}),
    ("llama-3-8b", "h100-sxm", {"target_requests_per_s": 0.0, "batch": 1, "mfu": 0.01,
                                "mbu": 1.0}),
]
TRAINING: list[tuple[str, str, dict[str, Any], str]] = [
    ("llama-2-7b", "a100-80gb", {"gpus": 8, "train_tokens": 2e9}, "q,v"),
    ("llama-2-7b", "a100-80gb", {"gpus": 8, "lora_rank": 8, "train_tokens": 1e8}, "q,v"),
    ("mixtral-8x7b", "h100-sxm", {"gpus": 64, "zero_stage": 3, "train_tokens": 3e11,
                                  "budget_usd": 1e6, "budget_gpu_hours": 5e4}, "all"),
    ("llama-3-8b", "h200", {"gpus": 16, "tp": 2, "zero_stage": 2,
                            "activation_recompute": False}, "q,k,v,o"),
]


def _gpus() -> dict[str, Any]:
    card = adhoc_gpu(memory_gib=24)
    return {"24gib": card}


def _same(a: Any, b: Any) -> bool:
    """Bit-identical: equal texts or booleans, or floats with the same bits (NaN is NaN)."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return bool(a) == bool(b)
    fa, fb = float(a), float(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return fa.hex() == fb.hex()


def _resolve(name: str) -> Any:
    from planner.spec import catalog

    return _gpus()[name] if name in _gpus() else catalog.resolve_gpu(name)


def _vectorized(kind: str, rows: list[tuple[Any, Any, dict[str, Any], str]]
                ) -> dict[str, np.ndarray]:
    """Every column of ``rows`` (model spec, GPU spec, parsed inputs, LoRA targets) evaluated
    as one table, in reverse order so no row sits where the one-row call put it."""
    rows = rows[::-1]
    names = list(rows[0][2])
    table: dict[str, Any] = {
        "model": np.array([r[0].name for r in rows], dtype=object),
        "gpu": np.array([r[1].name for r in rows], dtype=object),
        "lora_targets": np.array([r[3] or "q,v" for r in rows], dtype=object)}
    for name in names:
        values = [r[2][name] for r in rows]
        table[name] = np.array(values, dtype=object if isinstance(values[0], str) else None)
    models = {r[0].name: r[0] for r in rows}
    gpus = {r[1].name: r[1] for r in rows}
    out = evaluate_table(table, models, gpus, kind)
    return {k: np.asarray(v)[::-1] for k, v in out.items()}


def test_inference_thin_path_is_bit_identical_to_the_vectorized_path() -> None:
    results, rows = [], []
    for model, gpu_name, inputs in CASES:
        s, g = spec(model), _resolve(gpu_name)
        result = service.estimate(s, g, inputs)
        results.append(result)
        rows.append((s, g, result["inputs"], ""))
    table = _vectorized("inference", rows)
    outputs = graph("inference").outputs
    assert len(outputs) > 100
    for i, result in enumerate(results):
        for name in outputs:
            assert _same(result[name], table[name][i]), (CASES[i], name, result[name],
                                                           table[name][i])
    # the golden figures themselves (REFERENCE.md): 6 sequences of 8192 tokens fit, 7 do not
    assert results[0]["fits"] is True and results[1]["fits"] is False
    assert round(results[0]["kv_budget_bytes"] / 2**30, 4) == 6.0425
    assert round(results[2]["request_flops"] / 1e12, 2) == 16.55


def test_training_thin_path_is_bit_identical_to_the_vectorized_path() -> None:
    results, rows = [], []
    for model, gpu_name, inputs, targets in TRAINING:
        s, g = spec(model), _resolve(gpu_name)
        result = service.train(s, g, inputs, lora_targets=targets)
        results.append(result)
        rows.append((s, g, result["inputs"], targets))
    table = _vectorized("training", rows)
    for i, result in enumerate(results):
        for name in graph("training").outputs:
            assert _same(result[name], table[name][i]), (TRAINING[i], name)
    assert results[1]["trainable_params"] == 4_194_304  # LoRA r=8 on Q and V of Llama-2-7B


def test_demo_fleet_thin_path_equals_the_fleet_evaluation() -> None:
    """Every seeded demo scenario (the articles' worked examples) through ``estimate``/``train``
    and through the fleet's vectorized evaluation: the same figures, bit for bit."""
    with Workspace.open() as ws:
        scenarios = ws.scenarios()
        fleet_outputs = ws.evaluate_many(scenarios)
        assert len(scenarios) >= 5
        for sc, out in zip(scenarios, fleet_outputs, strict=True):
            s, g = ws.model(sc.model).spec, ws.gpu(sc.gpu).spec
            if sc.kind == "inference":
                result = service.estimate(s, g, {k: v for k, v in sc.inputs.items()
                                                 if k in {c for c in _input_names("inference")}})
            else:
                result = service.train(s, g, {k: v for k, v in sc.inputs.items()
                                              if k in _input_names("training")},
                                       lora_targets=sc.lora_targets)
            for name in graph(sc.kind).outputs:
                assert _same(result[name], out[name]), (sc.name, name)


def _input_names(kind: str) -> set[str]:
    from planner.compute.table import inputs_of

    return {c.name for c in inputs_of(kind)}


def test_evaluate_row_refuses_a_table_of_many_rows() -> None:
    from planner.core.errors import ValidationError

    s, g = spec("llama-3-8b"), _resolve("h100-sxm")
    with pytest.raises(ValidationError, match="one value per column"):
        evaluate_row({"model": s.name, "gpu": g.name, "batch": np.array([1, 2])},
                     {s.name: s}, {g.name: g})


@pytest.mark.parametrize(("a", "b"), [(0.0, -0.0), (-0.0, 0.0), (1, 2.5), (3, 2), (True, 2),
                                      (float("nan"), 1.0), (1.0, float("nan")),
                                      (float("inf"), -1e308), (7, 7)])
def test_scalar_operators_give_numpys_value_and_type(a: Any, b: Any) -> None:
    """The operators' Python-scalar path returns what numpy returns for the same scalars
    (value, sign of zero, type)."""
    for fast, slow in ((ops.minimum(a, b), np.minimum(a, b).item()),
                       (ops.maximum(a, b), np.maximum(a, b).item()),
                       (ops.where(a, a, b), np.where(a, a, b).item()),
                       (ops.where(not a, a, b), np.where(not a, a, b).item()),
                       (ops.safe_div(a, b), ops._plain(np.where(
                           np.asarray(b, dtype=float) == 0, 0.0,
                           np.asarray(a, dtype=float) / np.where(
                               np.asarray(b, dtype=float) == 0, 1.0, b)), (a, b)))):
        assert type(fast) is type(slow) and _same(fast, slow), (a, b, fast, slow)
    for x in (a, b):
        if isinstance(x, float) and not math.isfinite(x):
            assert _same(ops.floor(x), np.floor(x).item())
        else:
            assert type(ops.floor(x)) is float and ops.floor(x) == np.floor(x).item()
            assert type(ops.ceil(x)) is float and ops.ceil(x) == np.ceil(x).item()
