"""The finite-run benchmark model (planner/compute/harness.py) against a discrete simulation of
a closed loop: ``c`` slots, ``n`` requests, one token per running request per engine step, a
step with ``b`` running requests taking ``s0 + s1 * b`` seconds, a freed slot taking the next
request at the next step."""

from __future__ import annotations

import numpy as np
import pytest

from planner.compute.harness import drain_residences, finite_run_factor, harmonic

S0_S, S1_S = 0.010, 0.0002
"""Simulated step: 10 ms that do not shrink with the batch, 0.2 ms per running request."""


def simulate_makespan_s(lengths: np.ndarray, slots: int) -> float:
    """Seconds until the last of ``lengths`` (tokens, in start order) finishes over
    ``slots`` slots (event by event: between two completions the batch is constant)."""
    queue = list(lengths[slots:][::-1])
    left = np.array(lengths[:slots], dtype=np.int64)
    running = left > 0
    time_s = 0.0
    while running.any():
        steps = int(left[running].min())
        time_s += steps * (S0_S + S1_S * int(running.sum()))
        left[running] -= steps
        for j in np.flatnonzero(running & (left == 0)):
            if queue:
                left[j] = queue.pop()
            else:
                running[j] = False
    return time_s


def predicted_makespan_s(requests: int, slots: int, mean_tokens: float, cv: float) -> float:
    """``(n + c d) / X`` with ``X = c / (G * s(c))`` (planner/compute/harness.py)."""
    step_s = S0_S + S1_S * slots
    rate = slots / (mean_tokens * step_s)
    d = float(drain_residences(requests, slots, cv, S0_S / step_s))
    return (requests + slots * d) / rate


@pytest.mark.parametrize(("requests", "slots"), [(100, 8), (100, 1), (1000, 64), (64, 64),
                                                 (30, 64), (129, 16)])
def test_fixed_lengths_are_exact_waves(requests: int, slots: int) -> None:
    """Fixed lengths: ceil(n / c) waves, the last one partial and faster (only s0 and its own
    requests' share), reproduced exactly by the model."""
    tokens = 200
    slots_used = min(slots, requests)
    simulated = simulate_makespan_s(np.full(requests, tokens), slots_used)
    assert predicted_makespan_s(requests, slots_used, tokens, 0.0) == pytest.approx(
        simulated, rel=1e-12)
    # e.g. 100 requests over 8 slots: 12 full waves at 11.6 ms a step and a wave of 4 at
    # 10.8 ms a step, 200 steps each
    if (requests, slots) == (100, 8):
        assert simulated == pytest.approx(200 * (12 * 0.0116 + 0.0108))


@pytest.mark.parametrize(("requests", "slots"), [(100, 8), (1000, 64), (256, 256),
                                                 (500, 32)])
def test_exponential_lengths_within_a_few_percent(requests: int, slots: int) -> None:
    """Exponential output lengths (cv 1, mean 200 tokens): the mean simulated makespan over
    40 seeded draws is within 3 % of the model's, while the steady-state rate alone misses
    it by more (the drain of the longest residuals)."""
    rng = np.random.default_rng(12)
    mean_tokens = 200.0
    simulated, steady = [], []
    for _ in range(40):
        lengths = np.maximum(1, np.rint(rng.exponential(mean_tokens, requests))).astype(int)
        simulated.append(simulate_makespan_s(lengths, slots))
        steady.append(requests * mean_tokens * (S0_S + S1_S * slots) / slots)
    model = predicted_makespan_s(requests, slots, mean_tokens, 1.0)
    assert model == pytest.approx(np.mean(simulated), rel=0.03)
    assert abs(np.mean(steady) / np.mean(simulated) - 1) > 0.04


def test_factor_values() -> None:
    """Spot values: the harmonic number; one slot never drains; 100 requests over 8 slots
    with exponential lengths when the idle step is half the full step:
    d = (H_8 - 1) / 2 = 0.8589, factor 100 / (100 + 8 d) = 0.9357; fixed lengths: half a
    wave, d = 0.25, factor 100 / 102 = 0.9804; a request count of whole waves: 1."""
    assert float(harmonic(8)) == pytest.approx(761 / 280, rel=1e-4)
    assert float(harmonic(1000)) == pytest.approx(7.485470860550345, rel=1e-9)
    assert float(finite_run_factor(100, 1, 1.0, 0.5)) == 1.0
    assert float(drain_residences(100, 8, 1.0, 0.5)) == pytest.approx((761 / 280 - 1) / 2,
                                                                      rel=1e-4)
    assert float(finite_run_factor(100, 8, 1.0, 0.5)) == pytest.approx(0.9357, abs=1e-4)
    assert float(finite_run_factor(100, 8, 0.0, 0.5)) == pytest.approx(100 / 102)
    assert float(finite_run_factor(96, 8, 0.0, 0.5)) == 1.0
