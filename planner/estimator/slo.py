"""Service-level objectives: whether a deployment serves its offered load within a TTFT
percentile and a mean TPOT.

Inputs: ``slo_ttft_s`` (0: no TTFT objective) at percentile ``slo_percentile`` (50, 90 or 99)
and ``slo_tpot_s`` (0: none). ``meets_slo`` judges the deployment as it is; ``replicas_needed``
sizes one for ``target_requests_per_s`` in closed form (each replica loaded up to the rate its
objectives allow). The latencies compared are the serving model's at the operating
point (:mod:`planner.estimator.serving`): the TTFT percentile includes queueing, the TPOT is the
mean step time under load. An overloaded deployment or one whose engine does not start never
meets an objective.
"""

from __future__ import annotations

from planner.estimator.ops import Value, ceil, maximum, minimum, power, safe_div, where
from planner.estimator.serving import QUEUE_WAIT_CAP_S

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


def saturated(overloaded: Value, queue_wait_mean_s: Value, queue_wait_p99_s: Value) -> Value:
    """The queue is overloaded: offered load at or beyond the saturation rate (open loop,
    ``utilization >= 1``), or a wait the queueing formulas can only report as their cap
    (:data:`planner.estimator.serving.QUEUE_WAIT_CAP_S` = 10^6 s: the queue grows without
    bound). A state, not a number: where it holds, the TTFT and queue-wait figures are no
    latency a user would see (JSON gives them as null, the text and the grid say
    "saturated"). Flags are tested with IF (Excel ranks TRUE above any number)."""
    at_cap = where(queue_wait_mean_s >= QUEUE_WAIT_CAP_S, 1,
                   where(queue_wait_p99_s >= QUEUE_WAIT_CAP_S, 1, 0))
    return where(overloaded, 1, at_cap) > 0


def _rate_for_step(step_s: Value, request_tokens: Value, serving_compute_s_per_request: Value,
                   serving_kv_memory_s_per_request: Value, serving_token_s: Value,
                   serving_step_fixed_s: Value, serving_dense_weights_s: Value,
                   serving_expert_weights_s: Value) -> Value:
    """Largest micro-batch request rate whose open-loop step stays within ``step_s``: the step
    ``t = F + max(C r t, W + K r t) + T q r t`` (the lines of :mod:`serving`'s fixed point,
    every expert counted as touched) solved for ``r`` at ``t = step_s``; 0 when even an idle
    step is longer."""
    compute = safe_div(1 - serving_step_fixed_s / step_s,
                       serving_compute_s_per_request + request_tokens * serving_token_s, 0.0)
    memory = safe_div(1 - (serving_step_fixed_s + serving_dense_weights_s
                           + serving_expert_weights_s) / step_s,
                      serving_kv_memory_s_per_request + request_tokens * serving_token_s, 0.0)
    return maximum(minimum(compute, memory), 0) / step_s


def slo_step_s(slo_ttft_s: Value, slo_tpot_s: Value, prefill_steps_per_request: Value,
               ttft_service_s: Value, step_s: Value, request_latency_effective_s: Value,
               saturation_step_s: Value) -> Value:
    """Longest operating step the objectives allow (s): the TPOT objective itself, and the step
    at which ``TTFT = (1/2 + P) t + P d + front-end latency`` reaches the TTFT objective, with
    ``P`` prefill steps and ``d`` the request's own chunk time per prefill step at the current
    operating point; the saturated step when no objective is set."""
    chunk = maximum(safe_div(ttft_service_s, prefill_steps_per_request, 0.0) - step_s, 0)
    by_ttft = (slo_ttft_s - request_latency_effective_s - prefill_steps_per_request * chunk) / (
        0.5 + prefill_steps_per_request)
    bound = where(slo_tpot_s > 0, where(slo_ttft_s > 0, minimum(slo_tpot_s, by_ttft), slo_tpot_s),
                  where(slo_ttft_s > 0, by_ttft, saturation_step_s))
    return minimum(bound, saturation_step_s)


def slo_requests_per_s_replica(slo_step_s: Value, pp: Value, request_tokens: Value,
                               serving_compute_s_per_request: Value,
                               serving_kv_memory_s_per_request: Value, serving_token_s: Value,
                               serving_step_fixed_s: Value, serving_dense_weights_s: Value,
                               serving_expert_weights_s: Value,
                               serving_capacity_requests_per_s_replica: Value,
                               max_running_batch: Value, service_scv: Value,
                               slo_percentile_number: Value, slo_ttft_s: Value) -> Value:
    """Most requests per second one replica carries within the objectives: the rate whose step
    meets :func:`slo_step_s` (``pp`` micro-batches in flight), and, with a TTFT objective, a
    utilization low enough that the objective's percentile of arrivals finds a free slot
    (M/M/c as in :mod:`serving`: ``P(wait) = (1+scv)/2 * rho^(sqrt(2(c+1)) - 1) <= 1 - p``);
    always below the replica's capacity."""
    by_step = pp * _rate_for_step(slo_step_s, request_tokens, serving_compute_s_per_request,
                                  serving_kv_memory_s_per_request, serving_token_s,
                                  serving_step_fixed_s, serving_dense_weights_s,
                                  serving_expert_weights_s)
    beta = power(2 * (max_running_batch + 1), 0.5)
    no_wait = (1 - slo_percentile_number / 100) / ((1 + service_scv) / 2)
    rho = power(minimum(no_wait, 1), 1 / maximum(beta - 1, 1))
    by_queue = where(slo_ttft_s > 0, rho, 0.999) * serving_capacity_requests_per_s_replica
    return maximum(minimum(by_step, by_queue), 0)


def replicas_needed(target_requests_per_s: Value, slo_requests_per_s_replica: Value,
                    engine_fits: Value) -> Value:
    """Replicas that carry ``target_requests_per_s`` within the objectives:
    ``ceil(target / slo_requests_per_s_replica)``. 0 when there is no target rate, or when no
    number of replicas can (the engine does not start, or the objective is shorter than an idle
    replica's latency). A closed form, conservative; ``planner solve --minimize gpus
    --subject-to meets_slo`` finds the exact least count by evaluating every candidate."""
    feasible = where(engine_fits, where(slo_requests_per_s_replica > 0, 1, 0), 0)
    count = ceil(safe_div(target_requests_per_s, slo_requests_per_s_replica, 0.0))
    return where(feasible > 0, count, 0)


def gpus_needed(replicas_needed: Value, tp: Value, pp: Value) -> Value:
    """GPUs of the deployment :func:`replicas_needed` sizes: ``replicas * tp * pp``."""
    return replicas_needed * tp * pp


def cost_usd_per_month_needed(gpus_needed: Value, price_usd_per_gpu_hour: Value,
                              hours_per_month: Value) -> Value:
    """Monthly cost of the deployment :func:`gpus_needed` sizes (USD)."""
    return gpus_needed * price_usd_per_gpu_hour * hours_per_month
