"""Service-level objectives: whether a deployment serves its offered load within a TTFT
percentile and a mean TPOT.

Inputs: ``slo_ttft_s`` (0: no TTFT objective) at percentile ``slo_percentile`` (50, 90 or 99)
and ``slo_tpot_s`` (0: none). The latencies compared are the serving model's at the operating
point (:mod:`planner.estimator.serving`): the TTFT percentile includes queueing, the TPOT is the
mean step time under load. An overloaded deployment or one whose engine does not start never
meets an objective.
"""

from __future__ import annotations

from planner.estimator.ops import Value, where

SLO_PERCENTILES = {"50": 50, "90": 90, "99": 99}
"""The TTFT percentiles an objective may name (the serving model gives these three)."""


def ttft_slo_percentile_s(slo_percentile_number: Value, ttft_p50_s: Value, ttft_p90_s: Value,
                          ttft_p99_s: Value) -> Value:
    """TTFT at the objective's percentile under load (s)."""
    return where(slo_percentile_number == 50, ttft_p50_s,
                 where(slo_percentile_number == 90, ttft_p90_s, ttft_p99_s))


def meets_slo(slo_ttft_s: Value, slo_tpot_s: Value, ttft_slo_percentile_s: Value,
              tpot_mean_s: Value, overloaded: Value, engine_fits: Value) -> Value:
    """The deployment carries its load within both objectives (one not set always holds):
    ``TTFT_p <= slo_ttft_s`` and ``TPOT <= slo_tpot_s``, not overloaded, the engine starts."""
    ttft_ok = where(slo_ttft_s > 0, where(ttft_slo_percentile_s <= slo_ttft_s, 1, 0), 1)
    tpot_ok = where(slo_tpot_s > 0, where(tpot_mean_s <= slo_tpot_s, 1, 0), 1)
    # flags are tested with IF, never compared with numbers (Excel ranks TRUE above any number)
    return ttft_ok * tpot_ok * where(overloaded, 0, 1) * where(engine_fits, 1, 0) > 0
