"""What a finite benchmark run measures: output tokens over the makespan of N requests.

A benchmark harness reports output throughput as total output tokens / benchmark duration of a
*finite* run: ``vllm bench serve`` with ``--max-concurrency c`` (a closed loop of ``c``
clients), all ``N`` requests at once (a burst, ``--request-rate inf``), or ``trtllm-bench
throughput`` (offline, all ``N`` queued). The serving model (:mod:`planner.formulas.serving`)
gives the steady-state rate ``X`` (requests/s) with ``c`` running slots; the duration of the
finite run also holds the drain, when fewer than ``c`` requests are left. This module turns the
steady-state prediction into the finite run's figure; the calibration scores closed-loop runs
whose ``N`` is known with it (:class:`planner.compute.calibration.Predictor`,
:data:`planner.compute.calibration.FINITE_MODES`, which says why not bursts and offline runs),
and the workbook's Calibration sheet writes the same formula
(:func:`finite_run_factor_formula`). Steady-state scenario planning does not use it. The same
run's mean TTFT holds its first wave, the clients that start at once and queue for each
other's prefill (:func:`finite_run_ttft`).

Derivation (one replica: ``c`` slots, ``n`` requests, a request holds its slot for ``L``
engine steps, mean ``G'``; output-length coefficient of variation ``cv``). A step with ``b``
running requests takes ``s(b) ≈ s0 + b s1``: ``s0`` the part that does not shrink with the
batch (the idle step: fixed overhead and the weight reads, ``serving_step_0_s``), ``s1`` the
per-request part (KV reads, compute). While all ``c`` slots are busy a step takes ``s(c)``
(``step_s``) and the run completes ``X = c / R`` requests per second, ``R = G' s(c)``.

* Variable lengths: the slots stay busy until the ``n``-th request starts, after ``t_n``
  steps; then the ``c`` requests in flight have residual lengths ``r_j`` and the run drains
  for ``max r_j`` steps with a shrinking batch. Counting tokens, ``c t_n + Σ r_j = n G'``;
  counting time, ``makespan = t_n s(c) + Σ_k s(b_k) = t_n (s0 + c s1) + max(r) s0 + Σ r s1``,
  which is ``n R / c + s0 (max r - mean r)``: the drain costs only the batch-independent
  part of the step for the steps the longest residual outlasts the mean one. For exponential
  lengths (``cv = 1``) the residuals are again exponential with mean ``G'`` (memoryless) and
  the expected maximum of ``c`` of them is ``G' H_c`` (``H_c`` the harmonic number), so
  ``E[max r - mean r] = G' (H_c - 1)``. For other ``cv`` the spread of the residuals above
  their mean is taken to scale with the spread of the lengths (an order-statistic
  approximation): ``G' cv (H_c - 1)``, exact for exponential lengths. A burst that fits at
  once (``n = c``) gets ``G' (s0 H_c + c s1)`` for exponential lengths, exactly.
* Fixed lengths (``cv = 0``): the requests run in synchronized waves of ``c``; the last wave
  has ``m = n - c floor(n/c)`` requests and takes ``G' s(m)``, ``G' s0 (1 - m/c)`` more than
  its share of full-batch time: in slot residences ``(ceil(n/c) - n/c) s0 / s(c)``, exact.
* Both: ``d = max(ceil(n/c) - n/c, cv (H_c - 1)) * s0 / s(c)`` residences (nearly fixed lengths
  keep their waves aligned over a benchmark's few waves; variable ones drain the tail).

So ``makespan = (n + c d) / X`` and the finite run measures ``X * n / (n + c d)``
(:func:`finite_run_factor`). ``H_c`` is taken as ``ln c + γ + 1/(2c) - 1/(12 c^2)``
(Euler-Maclaurin; within 0.6 % at ``c = 1`` and 0.01 % from ``c = 4``). Not modelled: the
prefill ramp of the first wave, ``s(b)`` bending from compute- to memory-bound as the batch
shrinks, and output lengths capped by the dataset (a bounded tail drains less than an
exponential one).
"""

from __future__ import annotations

import numpy as np

EULER_GAMMA = 0.5772156649015329
"""Euler-Mascheroni constant γ (for the harmonic number)."""


def harmonic(c: np.ndarray | float) -> np.ndarray:
    """``H_c = 1 + 1/2 + ... + 1/c`` for real ``c >= 1`` by Euler-Maclaurin:
    ``ln c + γ + 1/(2c) - 1/(12c^2)``."""
    c = np.maximum(np.asarray(c, dtype=np.float64), 1.0)
    return np.log(c) + EULER_GAMMA + 1 / (2 * c) - 1 / (12 * c * c)


def drain_residences(requests: np.ndarray | float, slots: np.ndarray | float,
                     cv: np.ndarray | float, idle_share: np.ndarray | float) -> np.ndarray:
    """Extra slot residences ``d`` a finite run of ``requests`` over ``slots`` takes beyond
    ``requests / slots`` (module docstring): ``max(ceil(n/c) - n/c, cv (H_c - 1)) *
    idle_share``, ``≥ 0``; ``idle_share = s0 / s(c)``, the share of the full-batch step that
    does not shrink with the batch."""
    n = np.asarray(requests, dtype=np.float64)
    c = np.maximum(np.asarray(slots, dtype=np.float64), 1.0)
    waves = n / c
    extra = np.maximum(np.maximum(np.ceil(waves - 1e-9) - waves, 0.0),
                       np.asarray(cv, dtype=np.float64) * (harmonic(c) - 1))
    return extra * np.clip(np.asarray(idle_share, dtype=np.float64), 0.0, 1.0)


def finite_run_factor(requests: np.ndarray | float, slots: np.ndarray | float,
                      cv: np.ndarray | float, idle_share: np.ndarray | float) -> np.ndarray:
    """Measured over steady-state throughput of a finite run: ``n / (n + c d)`` (module
    docstring; ``requests`` and ``slots`` per replica, ``cv`` the output lengths' coefficient
    of variation, ``idle_share`` the idle step over the full-batch step)."""
    n = np.asarray(requests, dtype=np.float64)
    c = np.maximum(np.asarray(slots, dtype=np.float64), 1.0)
    return n / (n + c * drain_residences(n, c, cv, idle_share))


def finite_run_ttft(steady_s: np.ndarray | float, wave_s: np.ndarray | float,
                    requests: np.ndarray | float, slots: np.ndarray | float) -> np.ndarray:
    """Mean TTFT a finite closed-loop run of ``requests`` over ``slots`` clients measures: its
    first ``slots`` requests arrive at once and wait for each other's prefill
    (``wave_s``, :func:`planner.formulas.serving_cohort.wave_ttft_mean_s`), the others arrive one
    at a time as earlier ones finish (``steady_s``, the steady-state ``ttft_mean_s``):
    ``steady + min(c/n, 1) * (wave - steady)`` (per replica)."""
    n = np.maximum(np.asarray(requests, dtype=np.float64), 1.0)
    c = np.maximum(np.asarray(slots, dtype=np.float64), 1.0)
    steady = np.asarray(steady_s, dtype=np.float64)
    return steady + np.minimum(c / n, 1.0) * (np.asarray(wave_s, dtype=np.float64) - steady)


def finite_run_ttft_formula(steady: str, wave: str, requests: str, slots: str) -> str:
    """:func:`finite_run_ttft` as a spreadsheet expression over the cell references (or
    literals) ``steady``, ``wave``, ``requests`` and ``slots``."""
    n, c = f"MAX({requests},1)", f"MAX({slots},1)"
    return f"({steady})+MIN({c}/{n},1)*(({wave})-({steady}))"


def finite_run_factor_formula(requests: str, slots: str, cv: str, idle_share: str) -> str:
    """:func:`finite_run_factor` as a spreadsheet expression over the cell references (or
    literals) ``requests``, ``slots``, ``cv`` and ``idle_share``."""
    c = f"MAX({slots},1)"
    h = f"(LN({c})+{EULER_GAMMA!r}+1/(2*{c})-1/(12*{c}*{c}))"
    waves = f"({requests})/{c}"
    d = (f"MAX(MAX(CEILING({waves}-1E-9,1)-{waves},0),({cv})*({h}-1))"
         f"*MIN(MAX({idle_share},0),1)")
    return f"({requests})/(({requests})+{c}*{d})"
