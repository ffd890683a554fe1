"""The load a serving replica is under: the load mode, the offered rate per replica and per
pipeline micro-batch, and the switch of a contract output between the aggregated and the
disaggregated figure.

Why this module exists: every other serving module (:mod:`planner.formulas.serving_step`,
:mod:`~planner.formulas.serving_cohort`, :mod:`~planner.formulas.serving_operating`,
:mod:`~planner.formulas.serving_queue`) branches on the load mode and its codes, and the
contract outputs all pick the disaggregated figure the same way; they live here, below them
all. The model is described in :mod:`planner.formulas.serving`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per replica unless the name says otherwise.
"""

from __future__ import annotations

from planner.formulas.ops import Value, safe_div, where

QUEUE_WAIT_CAP_S = 1e6
"""Wait reported for an overloaded replica (rho >= 1): the queue grows without bound."""
OPEN_LOOP = 1
"""load_mode: Poisson arrivals at target_requests_per_s."""
CLOSED_LOOP = 2
"""load_mode: a fixed number of clients (concurrency)."""
OFFLINE = 0
"""load_mode: no rate and no concurrency: the offline maximum."""
_HUGE_S = 1e12
DISAGGREGATED = 1
"""serving_mode_code of a disaggregated deployment (:mod:`planner.formulas.disagg`)."""


def _pick(serving_mode_code: Value, disaggregated: Value, aggregated: Value) -> Value:
    """A contract output's switch: the disaggregated figure where ``serving_mode`` is
    disaggregated, else the aggregated one unchanged (``where`` returns it bit for bit)."""
    return where(serving_mode_code == DISAGGREGATED, disaggregated, aggregated)


def load_mode(concurrency: Value, target_requests_per_s: Value) -> Value:
    """2 closed loop (``concurrency > 0``), 1 open loop (a target rate), 0 offline maximum."""
    return where(concurrency > 0, CLOSED_LOOP, where(target_requests_per_s > 0, OPEN_LOOP,
                                                     OFFLINE))


def replica_request_rate_per_s(target_requests_per_s: Value, replicas: Value) -> Value:
    """Offered load on one replica: ``target_requests_per_s / replicas`` (requests spread
    evenly)."""
    return safe_div(target_requests_per_s, replicas, 0.0)


def micro_batch_request_rate_per_s(replica_request_rate_per_s: Value, pp: Value) -> Value:
    """Offered load per pipeline micro-batch: ``rate / pp`` (``pp`` micro-batches in flight
    share the replica's requests)."""
    return replica_request_rate_per_s / pp
