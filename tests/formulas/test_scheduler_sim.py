"""The serving model's closed forms held against a step-by-step scheduler simulation
(planner/formulas/scheduler_sim.py), issue 23 item 2.

The simulation plays vLLM V1's scheduler (decodes first, chunked prefill within the token
budget, admission by free KV blocks, recompute preemption) one step at a time, with each step
timed by the planner's own step model (:class:`StepCost` built from the scenario's columns),
so what is compared is the load dynamics, not the step model.

Measured on the grid below (Llama-3.1-8B, H100 SXM, vLLM defaults, budget 8192, closed loop
of ``10 c`` requests), closed form over simulation minus 1:

* steady output tokens/s: within 1.5 % for c <= 16; -2.7 % to -10.9 % at c = 64 (S = 1024,
  cohorts cut by the budget split and merge);
* steady TPOT: within 2.3 % except -5.1 % (S 4096, G 128, c 4) and +3.3 % / +6.2 % at c 64;
* first-wave mean TTFT: within 2.4 % except -7.7 % at S 4096, c 16;
* steady TTFT: exact at c = 1 and when the clients' prompts fit one step (c S <= budget);
  +20 % (S 1024, c 16), +59 % (S 4096, c 4), -9 % to -25 % (S 4096, c 16 and 64) where
  the budget splits cohorts: NOT within 5 % there, and not asserted there.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from planner.compute.harness import finite_run_ttft
from planner.compute.inputs import INFERENCE_INPUTS, parse_inputs
from planner.compute.table import graph
from planner.formulas.scheduler_sim import StepCost, simulate_closed_loop
from planner.service import scenario_columns
from planner.spec.catalog import load_gpus, spec_from_file

CONFIG = Path(__file__).parents[1] / "fixtures" / "serving_configs" / "llama-3.1-8b-instruct.json"
GRAPH = graph("inference")


def _columns(prompt: int, output: int, clients: int, engine: str = "vllm") -> dict[str, Any]:
    values = parse_inputs(INFERENCE_INPUTS, {"prompt_tokens": prompt, "output_tokens": output})
    cols = {**scenario_columns(spec_from_file(CONFIG), load_gpus()["h100-sxm"], values),
            "engine": engine, "concurrency": clients}
    return {k: float(v) for k, v in GRAPH.compute(cols).items()
            if not isinstance(v, str) and getattr(v, "ndim", 0) == 0}


def _cost(o: dict[str, Any], prompt: int, output: int) -> StepCost:
    """The planner's step model per token: prefill and decode compute, the weights, the KV a
    decode token reads at its context, the per-token work and the fixed step."""
    peak = o["tp"] * o["gpu_flops_per_s"] * o["matmul_efficiency_effective"]
    kv_tokens = ((output - 1) * o["mean_decode_context_tokens"] + prompt + output - 1)
    return StepCost(o["serving_step_fixed_s"], o["prefill_flops"] / prompt / peak,
                    o["decode_flops"] / (output - 1) / peak, o["serving_dense_weights_s"],
                    o["serving_kv_memory_s_per_request"] / kv_tokens, o["serving_token_s"])


def _simulate(prompt: int, output: int, clients: int, engine: str = "vllm"
              ) -> tuple[dict[str, Any], Any]:
    o = _columns(prompt, output, clients, engine)
    sim = simulate_closed_loop(
        clients, prompt, output, _cost(o, prompt, output), requests=10 * clients,
        budget_tokens=int(o["max_num_batched_tokens_effective"]),
        max_seqs=int(o["max_num_seqs_effective"]),
        kv_blocks=int(o["engine_token_capacity"] // 16), prefill_first=engine == "sglang")
    return o, sim


GRID = [(s, g, c) for s in (1024, 4096) for g in (128, 512) for c in (1, 4, 16, 64)]


@pytest.mark.parametrize(("prompt", "output", "clients"), GRID)
def test_closed_forms_follow_the_simulated_scheduler(prompt: int, output: int,
                                                     clients: int) -> None:
    o, sim = _simulate(prompt, output, clients)
    latency = o["request_latency_effective_s"]
    thr = o["output_tokens_per_s"] / sim.steady_output_tokens_per_s - 1
    tpot = o["tpot_mean_s"] / sim.steady_tpot_mean_s - 1
    wave = (o["wave_ttft_mean_s"] - latency) / sim.first_wave_ttft_mean_s - 1
    assert abs(thr) <= (0.05 if clients <= 16 else 0.12), thr
    assert abs(tpot) <= 0.07, tpot
    assert abs(wave) <= 0.08, wave
    assert sim.preemptions == 0
    if clients == 1 or clients * prompt <= o["max_num_batched_tokens_effective"]:
        steady = (o["ttft_mean_s"] - latency) / sim.steady_ttft_mean_s - 1
        run = (float(finite_run_ttft(o["ttft_mean_s"], o["wave_ttft_mean_s"], 10 * clients,
                                     o["closed_loop_batch"])) - latency) / sim.ttft_mean_s - 1
        assert abs(steady) <= 0.01 and abs(run) <= 0.01, (steady, run)


@pytest.mark.parametrize(("prompt", "output", "clients"), GRID)
def test_prefill_first_closed_forms_follow_the_simulated_scheduler(prompt: int, output: int,
                                                                   clients: int) -> None:
    """SGLang's prefill-first policy (planner.formulas.serving.prefill_first): a closed loop
    of fixed lengths keeps its cohort whole, so every cycle is a wave: the steady TTFT, the
    TPOT (the cohort's later prefill-only steps pause every decode) and the first wave follow
    the simulation within 1 % on the whole grid, also where the budget cuts the cohort
    (c S > budget), the steady throughput within 3 % (measured: TTFT, TPOT and wave within
    0.2 %, throughput -0.0 % to +2.0 %)."""
    o, sim = _simulate(prompt, output, clients, "sglang")
    latency = o["request_latency_effective_s"]
    assert o["prefill_first"] == 1
    steady = (o["ttft_mean_s"] - latency) / sim.steady_ttft_mean_s - 1
    tpot = o["tpot_mean_s"] / sim.steady_tpot_mean_s - 1
    wave = (o["wave_ttft_mean_s"] - latency) / sim.first_wave_ttft_mean_s - 1
    thr = o["output_tokens_per_s"] / sim.steady_output_tokens_per_s - 1
    run = (float(finite_run_ttft(o["ttft_mean_s"], o["wave_ttft_mean_s"], 10 * clients,
                                 o["closed_loop_batch"])) - latency) / sim.ttft_mean_s - 1
    assert max(abs(steady), abs(tpot), abs(wave), abs(run)) <= 0.01, (steady, tpot, wave, run)
    assert abs(thr) <= 0.03, thr
    assert sim.preemptions == 0


def test_prefill_first_waits_for_the_cohort() -> None:
    """Four clients, 3,000-token prompts, a 4,000-token budget, prefill-only steps: the
    cohort's 12,000 prompt tokens take three full prefill steps and the clients finish their
    prefill after steps 1, 2, 3 and 3 (mean 2.25 steps, exact; the closed form's
    ``r (B + 1)/2 + (1 - r)/2`` gives 2.0 here, -11 %: it is exact where the budget holds a
    whole number of prompts, as on the grid above, and short where prompts straddle two
    steps). No decode runs until all four are prefilled, so all four finish in the same step
    and return together: the second cycle repeats the first (3 prefill + 4 decode steps
    each)."""
    cost = StepCost(fixed_s=0.001, prefill_compute_s_per_token=1e-5,
                    decode_compute_s_per_token=2e-5, weights_s=0.004,
                    kv_read_s_per_token=0.0, per_token_s=0.0)
    sim = simulate_closed_loop(4, 3000, 5, cost, requests=8, budget_tokens=4000, max_seqs=8,
                               kv_blocks=10_000, prefill_first=True)
    step = cost.seconds(4000, 0, 0)
    expected = (step + 2 * step + 3 * step + 3 * step) / 4
    assert sim.first_wave_ttft_mean_s == pytest.approx(expected, rel=1e-12)
    assert sim.ttft_mean_s == pytest.approx(expected, rel=1e-12)
    assert sim.steps == 2 * (3 + 4) and sim.preemptions == 0


def test_one_client_is_the_sum_of_its_steps() -> None:
    """One client, a 3,000-token prompt in a 1,000-token budget: three prefill steps of 1,000
    tokens, then four decode steps reading 3,001..3,004 tokens of context (exact)."""
    cost = StepCost(fixed_s=0.001, prefill_compute_s_per_token=1e-5,
                    decode_compute_s_per_token=2e-5, weights_s=0.004,
                    kv_read_s_per_token=1e-7, per_token_s=1e-6)
    sim = simulate_closed_loop(1, 3000, 5, cost, requests=2, budget_tokens=1000, max_seqs=8,
                               kv_blocks=10_000)
    prefill = 3 * cost.seconds(1000, 0, 0)
    decode = sum(cost.seconds(0, 1, 3000 + j) for j in range(1, 5))
    assert sim.ttft_mean_s == pytest.approx(prefill, rel=1e-12)
    assert sim.tpot_mean_s == pytest.approx(decode / 4, rel=1e-12)
    assert sim.e2e_mean_s == pytest.approx(prefill + decode, rel=1e-12)
    assert sim.steps == 14 and sim.preemptions == 0


def test_admission_waits_for_free_blocks_and_preempts_when_full() -> None:
    """Four clients whose requests need 63 blocks for their prompts and 64 at the end (1,000 +
    24 tokens in 16-token blocks) in a pool of 127 blocks: two are admitted, the others wait
    (admission by free blocks); when both grow past 1,008 tokens only one more block is free,
    so the newer is preempted and recomputed; every request still completes."""
    cost = StepCost(0.001, 1e-6, 1e-6, 0.002, 0.0, 0.0)
    sim = simulate_closed_loop(4, 1000, 24, cost, requests=8, budget_tokens=4096, max_seqs=8,
                               kv_blocks=127)
    free = simulate_closed_loop(4, 1000, 24, cost, requests=8, budget_tokens=4096,
                                max_seqs=8, kv_blocks=10_000)
    assert sim.preemptions > 0 and free.preemptions == 0
    assert sim.output_tokens_per_s < free.output_tokens_per_s
    assert len(sim.ttfts_s) == 8 and all(math.isfinite(t) for t in sim.ttfts_s)


def test_bad_counts_are_refused() -> None:
    cost = StepCost(0.001, 1e-6, 1e-6, 0.002, 0.0)
    with pytest.raises(ValueError, match="at least 1"):
        simulate_closed_loop(0, 10, 10, cost, requests=1, budget_tokens=10, max_seqs=1,
                             kv_blocks=1)
    with pytest.raises(ValueError, match="range_ratio"):
        simulate_closed_loop(1, 10, 10, cost, requests=1, budget_tokens=10, max_seqs=1,
                             kv_blocks=1, range_ratio=0)


def test_drawn_lengths_are_seeded_and_one_is_fixed() -> None:
    """``range_ratio`` below 1 draws each request's lengths from a seeded generator (the same
    seed repeats the run exactly, another seed differs); 1 is the fixed-length run."""
    cost = StepCost(0.001, 1e-6, 1e-6, 0.002, 0.0)
    kw: dict[str, Any] = {"requests": 400, "budget_tokens": 4096, "max_seqs": 64,
                          "kv_blocks": 100_000}
    a = simulate_closed_loop(8, 1000, 50, cost, range_ratio=0.8, seed=3, **kw)
    assert a == simulate_closed_loop(8, 1000, 50, cost, range_ratio=0.8, seed=3, **kw)
    assert a != simulate_closed_loop(8, 1000, 50, cost, range_ratio=0.8, seed=4, **kw)
    fixed = simulate_closed_loop(8, 1000, 50, cost, **kw)
    assert fixed == simulate_closed_loop(8, 1000, 50, cost, range_ratio=1.0, seed=9, **kw)
    assert a != fixed


RANGE_RATIO = 0.8
"""InferenceX's client draw (``--random-range-ratio 0.8``: lengths uniform over the integers
``[int(0.8 L), L]``), benchmarks/bench_serving_accuracy.py ``INFERENCEX_RANGE_RATIO``."""


def _drawn(prompt: int, output: int, clients: int) -> tuple[dict[str, Any], Any]:
    """The closed forms at the draw's mean lengths and output CV, and the simulation of the
    draw itself (20 c requests, seed 0)."""
    mean_s = round((int(prompt * RANGE_RATIO) + prompt) / 2)
    mean_g = round((int(output * RANGE_RATIO) + output) / 2)
    cv = (1 - RANGE_RATIO) / (math.sqrt(3) * (1 + RANGE_RATIO))
    values = parse_inputs(INFERENCE_INPUTS, {"prompt_tokens": mean_s, "output_tokens": mean_g,
                                             "output_tokens_cv": cv})
    cols = {**scenario_columns(spec_from_file(CONFIG), load_gpus()["h100-sxm"], values),
            "engine": "vllm", "concurrency": clients}
    o = {k: float(v) for k, v in GRAPH.compute(cols).items()
         if not isinstance(v, str) and getattr(v, "ndim", 0) == 0}
    sim = simulate_closed_loop(
        clients, prompt, output, _cost(o, mean_s, mean_g), requests=20 * clients,
        budget_tokens=int(o["max_num_batched_tokens_effective"]),
        max_seqs=int(o["max_num_seqs_effective"]),
        kv_blocks=int(o["engine_token_capacity"] // 16), range_ratio=RANGE_RATIO, seed=0)
    return o, sim


@pytest.mark.parametrize(("prompt", "output", "clients"), GRID)
def test_drawn_lengths_closed_forms_follow_the_simulated_scheduler(prompt: int, output: int,
                                                                   clients: int) -> None:
    """Lengths drawn as InferenceX's client draws them spread the completions, so no cohort
    forms: a request's prefill step holds its prompt and the others that arrived at the same
    step boundary, ``x`` more on average (planner.formulas.serving._cohort_tokens). Measured
    on this grid, seed 0 (closed form over simulation minus 1): the run's mean TTFT (first
    wave weighed in, what a benchmark reports) -4.5 % to +2.5 %; steady TTFT -8.0 % to
    +5.1 % (about -35 % at 64 clients and 128 output tokens with one prompt per prefill step,
    the closed form before the others' prompts were counted); TPOT -0.1 % to +7.6 %; the
    engine's steady output rate -6.3 % to +1.5 %."""
    o, sim = _drawn(prompt, output, clients)
    latency = o["request_latency_effective_s"]
    run = (float(finite_run_ttft(o["ttft_mean_s"], o["wave_ttft_mean_s"], 20 * clients,
                                 o["closed_loop_batch"])) - latency) / sim.ttft_mean_s - 1
    steady = (o["ttft_mean_s"] - latency) / sim.steady_ttft_mean_s - 1
    tpot = o["tpot_mean_s"] / sim.steady_tpot_mean_s - 1
    engine = o["operating_requests_per_step"] / o["step_s"] * o["output_tokens"]
    thr = engine / sim.steady_output_tokens_per_s - 1
    assert abs(run) <= 0.05, run
    assert abs(steady) <= 0.09, steady
    assert abs(tpot) <= 0.09, tpot
    assert abs(thr) <= 0.10, thr
    assert sim.preemptions == 0
