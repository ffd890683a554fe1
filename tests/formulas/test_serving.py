"""Properties of the serving-under-load columns (``planner.formulas.serving``).

Over valid rows (catalog GPUs, dense and MoE configs, every engine, open and closed loop):
the last two fixed-point iterations agree within 1 %; latency rises with load and diverges at
saturation; nothing is NaN; the vectorized, scalar and symbolic (Excel) backends agree.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.compute import symbolic
from planner.compute.inputs import INFERENCE_INPUTS, parse_inputs
from planner.compute.table import graph
from planner.formulas import serving
from planner.formulas.engine_memory import ENGINES
from planner.formulas.serving_columns import ITERATIONS, SERVING
from planner.service import scenario_columns
from planner.spec.catalog import load_gpus, spec_from_file

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {
    "qwen3-8b": ROOT / "tests/fixtures/serving_configs/qwen3-8b.json",
    "qwen3-30b-a3b": ROOT / "tests/fixtures/serving_configs/qwen3-30b-a3b.json",
    "llama-3.1-8b": ROOT / "tests/fixtures/serving_configs/llama-3.1-8b-instruct.json",
    "mixtral-8x7b": ROOT / "seeds/models/mixtral-8x7b.json",
    "qwen3-235b-a22b": ROOT / "tests/fixtures/serving_configs/qwen3-235b-a22b.json",
}
SPECS = {k: spec_from_file(v) for k, v in CONFIGS.items()}
GPUS = load_gpus()
GRAPH = graph("inference")
OUTPUTS = [f.__name__ for f in SERVING]


def columns(model: str, gpu: str, engine: str, inputs: dict[str, Any],
            serving_inputs: dict[str, Any]) -> dict[str, Any]:
    g = GPUS[gpu]
    values = parse_inputs(INFERENCE_INPUTS, inputs)
    return {**scenario_columns(SPECS[model], g, values),
            "engine": engine, **serving_inputs}


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    model = draw(st.sampled_from(sorted(SPECS)))
    heads = SPECS[model].layers[0].attention.num_heads
    tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if heads % t == 0]))
    gpu = draw(st.sampled_from(sorted(GPUS)))
    engine = draw(st.sampled_from(sorted(ENGINES)))
    inputs = {"tp": tp, "gpus": tp * draw(st.integers(1, 3)),
              "prompt_tokens": draw(st.integers(1, 32_000)),
              "output_tokens": draw(st.integers(1, 4_000)),
              "weight_dtype": draw(st.sampled_from(["bf16", "fp8", "int4"])),
              "kv_dtype": draw(st.sampled_from(["bf16", "fp8"]))}
    extra = {"max_num_seqs": draw(st.sampled_from([1, 64, 256, 1024])),
             "max_num_batched_tokens": draw(st.sampled_from([512, 2048, 8192])),
             "ep": draw(st.sampled_from([1, tp])),
             "service_scv": draw(st.sampled_from([0.0, 1.0, 2.0]))}
    return {"model": model, "gpu": gpu, "engine": engine, "inputs": inputs, "extra": extra}


def _evaluate(row: dict[str, Any], **serving_inputs: Any) -> dict[str, Any]:
    cols = columns(row["model"], row["gpu"], row["engine"], row["inputs"],
                   {**row["extra"], **serving_inputs})
    return GRAPH.compute(cols)


PROPS = settings(max_examples=150, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(rows(), st.floats(0.0, 1.5))
def test_fixed_point_converges_and_nothing_is_nan(row: dict[str, Any], load: float) -> None:
    sat = _evaluate(row)["saturation_requests_per_s"]
    out = _evaluate(row, target_requests_per_s=load * sat, slo_ttft_s=1.0, slo_tpot_s=0.05)
    for name in GRAPH.outputs:  # every inference output, the SLO sizing included
        assert not np.isnan(float(out[name])), name
    for name in ("replicas_needed", "gpus_needed", "slo_requests_per_s_replica", "ttft_p99_s"):
        assert np.isfinite(float(out[name])), name
    last, before = float(out[ITERATIONS[-1]]), float(out[ITERATIONS[-2]])
    assert last == pytest.approx(before, rel=0.01)
    assert last > 0
    # the iterate solves the step equation: step(rate * t) == t within 1 %
    x = out["micro_batch_request_rate_per_s"] * last
    if out["gpu_utilization"] < 1:
        again = serving.step_seconds_at(
            x, out["request_tokens"], out["serving_compute_s_per_request"],
            out["serving_kv_memory_s_per_request"], out["serving_token_s"],
            out["serving_step_fixed_s"], out["serving_dense_weights_s"],
            out["serving_expert_weights_s"], out["model_experts"],
            out["model_experts_per_token"], out["expert_gemm_s_per_token"],
            out["expert_ranks"], out["expert_rank_max_sd"])
        assert min(again, out["saturation_step_s"]) == pytest.approx(last, rel=0.01)


@PROPS
@given(rows())
@pytest.mark.slow
def test_latency_rises_with_load_and_diverges_at_saturation(row: dict[str, Any]) -> None:
    idle = _evaluate(row, target_requests_per_s=1e-9)  # open loop: front end included
    sat, replicas = idle["serving_capacity_requests_per_s_replica"], idle["replicas"]
    previous: dict[str, float] = {}
    for load in (0.01, 0.2, 0.5, 0.8, 0.95, 0.99, 1.001, 1.5):
        out = _evaluate(row, target_requests_per_s=load * sat * replicas)
        for name in ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_mean_s",
                     "e2e_mean_s", "queue_wait_mean_s", "running_batch"):
            value = float(out[name])
            assert value >= previous.get(name, 0.0) * (1 - 1e-9), (name, load)
            previous[name] = value
        assert out["ttft_p50_s"] <= out["ttft_p90_s"] <= out["ttft_p99_s"] * (1 + 1e-12)
        if load >= 1:
            assert out["overloaded"]
            assert out["ttft_mean_s"] >= serving.QUEUE_WAIT_CAP_S
        else:
            assert not out["overloaded"]
            assert out["output_tokens_per_s"] == pytest.approx(
                load * sat * replicas * out["output_tokens"], rel=1e-9)


@PROPS
@given(rows(), st.integers(1, 5000))
def test_closed_loop_is_bounded_by_saturation(row: dict[str, Any], clients: int) -> None:
    out = _evaluate(row, concurrency=clients)
    assert out["load_mode"] == serving.CLOSED_LOOP
    assert out["running_batch"] <= out["max_running_batch"] + 1e-9
    assert out["serving_requests_per_s"] <= out["saturation_requests_per_s"] * (1 + 1e-9)
    assert out["ttft_mean_s"] > 0 and out["tpot_mean_s"] > 0
    offline = _evaluate(row)
    assert offline["load_mode"] == serving.OFFLINE
    assert offline["serving_requests_per_s"] == pytest.approx(
        offline["saturation_requests_per_s"], rel=1e-9)


def test_throughput_rises_with_concurrency() -> None:
    row = {"model": "qwen3-8b", "gpu": "h100-sxm", "engine": "vllm",
           "inputs": {"prompt_tokens": 233, "output_tokens": 221},
           "extra": {"max_num_seqs": 1024}}
    rates = [_evaluate(row, concurrency=c)["output_tokens_per_s"] for c in (1, 2, 4, 8, 64)]
    assert rates == sorted(rates)
    # one client on an H100: TPOT is the weight read plus overheads, a few milliseconds
    one = _evaluate(row, concurrency=1)
    assert 0.004 < one["tpot_mean_s"] < 0.012


def test_vectorized_scalar_and_symbolic_backends_agree() -> None:
    rng = np.random.default_rng(0)
    n = 40
    base = columns("qwen3-30b-a3b", "h100-sxm", "vllm", {"tp": 2, "gpus": 4}, {"ep": 2})
    cols = dict(base)
    cols.update(prompt_tokens=rng.integers(1, 20_000, n).astype(float),
                output_tokens=rng.integers(1, 2_000, n).astype(float),
                engine=np.array(sorted(ENGINES), dtype=object)[rng.integers(0, 4, n)],
                target_requests_per_s=rng.uniform(0, 40, n),
                concurrency=rng.choice([0.0, 0.0, 8.0, 512.0], n))
    vec = GRAPH.compute(cols)
    for i in range(0, n, 7):
        one = {k: (v[i] if isinstance(v, np.ndarray) and v.dtype == object
                   else float(v[i]) if isinstance(v, np.ndarray) else v) for k, v in cols.items()}
        scalar = GRAPH.compute(one)
        for name in OUTPUTS:
            want = float(np.broadcast_to(vec[name], (n,))[i])
            assert float(scalar[name]) == pytest.approx(want, rel=1e-9, abs=1e-12), name
    for f in SERVING:
        expr = symbolic.symbolic(f)
        symbolic.excel(expr, lambda ref: ref.upper())  # renders
        got = symbolic.compute_tree(expr, vec)
        want = vec[f.__name__]
        assert np.allclose(np.broadcast_to(np.asarray(got, dtype=float), (n,)),
                           np.broadcast_to(np.asarray(want, dtype=float), (n,)),
                           rtol=1e-9, atol=1e-12), f.__name__


def test_queue_approximation_matches_erlang_c_where_it_matters() -> None:
    """Sakasegawa's Lq against the exact Erlang-C mean queue for a few (c, rho)."""
    for c, rho in ((1, 0.5), (1, 0.9), (16, 0.8), (64, 0.95), (256, 0.98)):
        a = c * rho
        term, total = 1.0, 1.0
        for k in range(1, c):
            term *= a / k
            total += term
        last = term * a / c / (1 - rho)
        p_wait = last / (total + last)
        exact = p_wait * rho / (1 - rho)
        approx = rho ** math.sqrt(2 * (c + 1)) / (1 - rho)
        assert approx == pytest.approx(exact, rel=0.35), (c, rho)


def test_pipeline_stages_carry_micro_batches_in_flight() -> None:
    """pp = 2 doubles the GPUs of a replica: its saturation rate nearly doubles (two
    micro-batches in flight, twice the KV pool), while one token's pass still crosses both
    stages, so TPOT at low load stays about the same."""
    row = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "vllm",
           "inputs": {"prompt_tokens": 1000, "output_tokens": 1000},
           "extra": {"max_num_seqs": 1024}}
    one = _evaluate(row)
    two = _evaluate({**row, "inputs": {**row["inputs"], "pp": 2, "gpus": 2}})
    assert 1.6 < two["saturation_requests_per_s"] / one["saturation_requests_per_s"] < 2.2
    low1 = _evaluate(row, concurrency=1)
    low2 = _evaluate({**row, "inputs": {**row["inputs"], "pp": 2, "gpus": 2}}, concurrency=1)
    assert low2["tpot_mean_s"] == pytest.approx(low1["tpot_mean_s"], rel=0.1)


SIZING = [  # model, GPU, tp, target requests/s, TTFT objective (s, p99), TPOT objective (s)
    ("llama-3-8b", "h100-sxm", 1, 50.0, 1.0, 0.0),
    ("llama-3-8b", "a100-80gb", 1, 20.0, 0.5, 0.05),
    ("mixtral-8x7b", "h100-sxm", 2, 30.0, 2.0, 0.1),
    ("llama-3-70b", "h100-sxm", 4, 10.0, 2.0, 0.08),
    ("llama-3-8b", "l4", 1, 5.0, 2.0, 0.0),
]


@pytest.mark.parametrize("model,gpu,tp,rate,ttft,tpot", SIZING)
def test_replicas_needed_meet_the_objectives_and_solve_finds_the_least(
        model: str, gpu: str, tp: int, rate: float, ttft: float, tpot: float) -> None:
    """The closed-form sizing carries the rate within the objectives; it never asks for fewer
    GPUs than the exact least count that ``solve`` finds by evaluating every candidate, and at
    most one replica more."""
    from planner.compute.sweep import parse_variation, solve
    from planner.service import estimate
    from planner.spec.catalog import resolve_model_spec

    spec, g = resolve_model_spec(model), load_gpus()[gpu]
    base = {"engine": "vllm", "target_requests_per_s": rate, "slo_ttft_s": ttft,
            "slo_tpot_s": tpot, "slo_percentile": "99", "prompt_tokens": 1024,
            "output_tokens": 256, "tp": tp, "gpus": tp}
    needed = estimate(spec, g, base)
    assert needed["gpus_needed"] == needed["replicas_needed"] * tp > 0
    sized = estimate(spec, g, {**base, "gpus": needed["gpus_needed"]})
    assert sized["meets_slo"] is True
    assert sized["ttft_p99_s"] <= ttft and (tpot == 0 or sized["tpot_mean_s"] <= tpot)
    exact = solve({**base, "model": model, "gpu": gpu}, "gpus", "min", "meets_slo",
                  [parse_variation(f"gpus={tp}..{8 * needed['gpus_needed']}",
                                   columns={c.name: c for c in INFERENCE_INPUTS})],
                  {model: spec}, {gpu: g})
    assert exact.found
    least = exact.values["gpus"]
    assert least <= needed["gpus_needed"] <= least + tp
    assert not estimate(spec, g, {**base, "gpus": least - tp})["meets_slo"] if least > tp \
        else True


def test_trtllm_holds_prompt_and_output_in_the_pool_vllm_the_mean_context() -> None:
    """TensorRT-LLM's GUARANTEED_NO_EVICT admission reserves a request's whole length, so its
    KV-bound running batch is ``floor(KV tokens / (S + G))``; vLLM allocates blocks as a
    sequence grows, so it holds the mean context, ``floor(KV tokens / (S + G/2))``. The
    formula on one row with a 100,000-token pool, S = 3,000, G = 1,000: 25 against 28."""
    for engine, expected in ((ENGINES["trtllm"], 25), (ENGINES["vllm"], 28)):
        assert serving.max_running_batch(2048, 100_000, 3_500, 0, 1_000, 0.0, engine,
                                          3_000, 0, 1, 0) == expected
    # varying lengths: vLLM's residence-weighted context S + G(1 + cv^2)/2 = 4,000 at cv 1
    # equals TRT-LLM's reservation S + G, which stays the larger of the two
    assert serving.max_running_batch(2048, 100_000, 3_500, 0, 1_000, 1.0, ENGINES["vllm"],
                                      3_000, 0, 1, 0) == 25
    assert serving.max_running_batch(2048, 100_000, 3_500, 0, 1_000, 1.5, ENGINES["trtllm"],
                                      3_000, 0, 1, 0) == math.floor(
        100_000 / (3_500 + 1_000 * 2.25 / 2))
