"""Service-level objectives: whether a deployment serves its offered load within a TTFT
percentile and a mean TPOT.

Inputs: ``slo_ttft_s`` (0: no TTFT objective) at percentile ``slo_percentile`` (50, 90 or 99)
and ``slo_tpot_s`` (0: none). ``meets_slo`` judges the deployment as it is; ``replicas_needed``
sizes one for ``target_requests_per_s`` in closed form (each replica loaded up to the rate its
objectives allow). The latencies compared are the serving model's at the operating
point (:mod:`planner.formulas.serving`): the TTFT percentile includes queueing, the TPOT is the
mean step time under load. An overloaded deployment or one whose engine does not start never
meets an objective.
"""

from __future__ import annotations

from collections.abc import Callable

from planner.formulas import serving_cohort, serving_load, serving_operating, serving_queue
from planner.formulas.made_columns import formula_column
from planner.formulas.ops import (
    Repeats,
    Value,
    ceil,
    floor,
    maximum,
    minimum,
    power,
    safe_div,
    where,
)
from planner.formulas.serving_load import QUEUE_WAIT_CAP_S
from planner.formulas.speculative import per_output_token

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
    (:data:`planner.formulas.serving_load.QUEUE_WAIT_CAP_S` = 10^6 s: the queue grows without
    bound). A state, not a number: where it holds, the TTFT and queue-wait figures are no
    latency a user would see (JSON gives them as null, the text and the grid say
    "saturated"). Flags are tested with IF (Excel ranks TRUE above any number)."""
    at_cap = where(queue_wait_mean_s >= QUEUE_WAIT_CAP_S, 1,
                   where(queue_wait_p99_s >= QUEUE_WAIT_CAP_S, 1, 0))
    return where(overloaded, 1, at_cap) > 0


_LN_TAIL = {50: 0.6931471805599453, 90: 2.302585092994046, 99: 4.605170185988091}
"""``ln(1/(1-p))`` of each objective percentile, the constants the serving model's wait
quantiles use (:func:`planner.formulas.serving_queue._queue_wait_quantile`)."""


def slo_queue_utilization(slo_ttft_s: Value, slo_percentile_number: Value,
                          max_running_batch: Value, service_scv: Value) -> Value:
    """Highest utilisation ``rho`` at which the TTFT objective's percentile of arrivals waits
    nothing for a running slot (1: no TTFT objective, or no wait at any load below
    saturation). The serving model's wait p-quantile is 0 while
    ``ln P_wait = ln((1+scv)/2) + (beta-1) ln rho <= -ln(1/(1-p))`` (M/M/c with
    ``beta = sqrt(2(c+1))``, ``c`` = the running batch, Sakasegawa and Allen-Cunneen), with
    ``ln z`` taken as ``-(1-z)/sqrt(z)`` as there; that approximation inverts exactly: with
    ``c' = (-ln(1/(1-p)) - ln((1+scv)/2)) / (beta-1)``, ``sqrt(rho) = (c' + sqrt(c'^2+4))/2``."""
    ln_tail = where(slo_percentile_number == 50, _LN_TAIL[50],
                    where(slo_percentile_number == 90, _LN_TAIL[90], _LN_TAIL[99]))
    factor = (1 + service_scv) / 2
    ln_factor = -(1 - factor) / power(factor, 0.5)
    beta = power(2 * (max_running_batch + 1), 0.5)
    c = (-ln_tail - ln_factor) / maximum(beta - 1, 1)
    root = (c + power(c * c + 4, 0.5)) / 2
    return where(slo_ttft_s > 0, minimum(root * root, 1), 1)


def slo_requests_per_step(slo_ttft_s: Value, slo_tpot_s: Value,
                          request_latency_effective_s: Value,
                          prefill_steps_per_request: Value, prefill_tokens_computed: Value,
                          max_num_batched_tokens_effective: Value, prefill_flops_computed: Value,
                          tp: Value, gpu_flops_per_s: Value,
                          matmul_efficiency_effective: Value, request_tokens: Value,
                          serving_compute_s_per_request: Value,
                          serving_kv_memory_s_per_request: Value, serving_token_s: Value,
                          serving_step_fixed_s: Value, serving_dense_weights_s: Value,
                          serving_expert_weights_s: Value,
                          spec_acceptance_length_effective: Value) -> Value:
    """Most work per step (requests' worth, per pipeline micro-batch) ``y`` whose step meets
    both objectives with no wait for a slot (0: not even an idle step does; 10^12: no
    objective). The serving model's operating step at work ``y`` is
    ``t(y) = max(C y, W + K y) + q T y + F`` (:mod:`planner.formulas.serving`; ``W`` every
    weight the step reads, all routed experts counted as touched, so an MoE bound is
    conservative) and its TTFT without a queue wait
    ``t/2 + P (max(C y + c, W + K y) + q T y + F + s T) + front-end latency`` (``P`` prefill
    steps, ``s = min(S, budget)`` the request's chunk, ``c`` its compute). Both are maxima of
    lines in ``y``, so ``t <= TPOT objective`` and ``TTFT <= TTFT objective`` hold exactly up
    to the least of the lines' roots. The bound is in work per step, not in rate or step:
    the step at the target depends on the load, and the load on the step. Under speculative
    decoding a step yields ``a`` tokens per sequence, so the TPOT objective bounds the step
    at ``a`` times it; prefill counts the tokens the prefix cache leaves."""
    c_req, kv, tok = serving_compute_s_per_request, serving_kv_memory_s_per_request, \
        serving_token_s
    q, fixed, p_steps = request_tokens, serving_step_fixed_s, prefill_steps_per_request
    weights = serving_dense_weights_s + serving_expert_weights_s
    huge = 1e12
    step_objective = slo_tpot_s * spec_acceptance_length_effective
    by_tpot = minimum(safe_div(step_objective - fixed, c_req + q * tok, huge),
                      safe_div(step_objective - fixed - weights, kv + q * tok, huge))
    chunk = minimum(prefill_tokens_computed, max_num_batched_tokens_effective)
    chunk_compute = prefill_flops_computed * chunk / prefill_tokens_computed / (
        tp * gpu_flops_per_s * matmul_efficiency_effective)
    half = 0.5 + p_steps
    room = slo_ttft_s - half * fixed - p_steps * chunk * tok - request_latency_effective_s
    slope = half * q * tok
    by_ttft = minimum(
        minimum(safe_div(room - p_steps * chunk_compute, slope + half * c_req, huge),
                safe_div(room - p_steps * weights, slope + c_req / 2 + p_steps * kv, huge)),
        minimum(safe_div(room - weights / 2 - p_steps * chunk_compute,
                         slope + kv / 2 + p_steps * c_req, huge),
                safe_div(room - half * weights, slope + half * kv, huge)))
    bound = where(slo_tpot_s > 0, where(slo_ttft_s > 0, minimum(by_tpot, by_ttft), by_tpot),
                  where(slo_ttft_s > 0, by_ttft, huge))
    return maximum(bound, 0)


def slo_step_s(slo_requests_per_step: Value, request_tokens: Value,
               serving_compute_s_per_request: Value, serving_kv_memory_s_per_request: Value,
               serving_token_s: Value, serving_step_fixed_s: Value,
               serving_dense_weights_s: Value, serving_expert_weights_s: Value,
               saturation_step_s: Value) -> Value:
    """Longest operating step the objectives allow (s): the step ``t(y)`` at the work bound
    :func:`slo_requests_per_step` (all experts touched), at most the saturated step."""
    y = slo_requests_per_step
    step = (maximum(y * serving_compute_s_per_request,
                    serving_dense_weights_s + serving_expert_weights_s
                    + y * serving_kv_memory_s_per_request)
            + y * request_tokens * serving_token_s + serving_step_fixed_s)
    return minimum(step, saturation_step_s)


def slo_step_requests_per_s_replica(slo_requests_per_step: Value, slo_step_s: Value,
                                    pp: Value, saturation_step_s: Value,
                                    serving_capacity_requests_per_s_replica: Value) -> Value:
    """Most requests per second one replica carries with its step within the objectives
    (TPOT, and TTFT before any wait for a slot): the rate whose step carries
    :func:`slo_requests_per_step`, ``pp * y / t(y)`` (``pp`` micro-batches in flight), at most
    the replica's capacity (engine and front end; any rate below it when the saturated step is
    within the objectives). A necessary condition: no higher rate meets the SLO."""
    capacity = serving_capacity_requests_per_s_replica
    by_step = where(slo_step_s >= saturation_step_s, capacity,
                    safe_div(pp * slo_requests_per_step, slo_step_s, 0.0))
    return maximum(minimum(by_step, capacity), 0)


def slo_requests_per_s_replica(slo_step_requests_per_s_replica: Value,
                               slo_queue_utilization: Value,
                               serving_capacity_requests_per_s_replica: Value) -> Value:
    """Requests per second one replica surely carries within the objectives: the step's
    bound (:func:`slo_step_requests_per_s_replica`) at a utilisation where the TTFT
    percentile waits nothing (:func:`slo_queue_utilization`). A sufficient condition (a
    higher rate may meet the TTFT objective with some wait: :func:`replicas_needed`
    searches between the two)."""
    return minimum(slo_step_requests_per_s_replica,
                   slo_queue_utilization * serving_capacity_requests_per_s_replica)


def _replicas_for(target_requests_per_s: Value, rate_per_replica: Value,
                  serving_capacity_requests_per_s_replica: Value) -> Value:
    """Replicas that keep each one at or below ``rate_per_replica`` and strictly below its
    capacity (a replica loaded to exactly its capacity is overloaded), at least 1:
    ``max(ceil(target / rate), floor(target / capacity) + 1)``; 0 where ``rate`` is 0."""
    count = maximum(ceil(safe_div(target_requests_per_s, rate_per_replica, 0.0)),
                    floor(safe_div(target_requests_per_s,
                                   serving_capacity_requests_per_s_replica, 0.0)) + 1)
    return where(rate_per_replica > 0, count, 0)


def slo_replicas_low(target_requests_per_s: Value, slo_step_requests_per_s_replica: Value,
                     serving_capacity_requests_per_s_replica: Value) -> Value:
    """Fewest replicas that could meet the SLO: fewer load each replica beyond the step's
    bound (:func:`slo_step_requests_per_s_replica`) or to its capacity."""
    return _replicas_for(target_requests_per_s, slo_step_requests_per_s_replica,
                         serving_capacity_requests_per_s_replica)


def slo_replicas_high(target_requests_per_s: Value, slo_requests_per_s_replica: Value,
                      serving_capacity_requests_per_s_replica: Value) -> Value:
    """Replicas that surely meet the SLO (each loaded to at most
    :func:`slo_requests_per_s_replica`): the search's upper end."""
    return _replicas_for(target_requests_per_s, slo_requests_per_s_replica,
                         serving_capacity_requests_per_s_replica)


SEARCH_STEPS = 10
"""Bisection steps of the replica search (:func:`replicas_needed`): exact where the bounds
are at most 2^10 = 1,024 replicas apart, else the least count found so far (one that meets)."""

def _search_rate(low: Value, high: Value, target_requests_per_s: Value) -> Value:
    """Bisection: the rate per replica at the middle count ``floor((low + high) / 2)``."""
    return safe_div(target_requests_per_s, floor((low + high) / 2), 0.0)


def _search_step_s(rate: Value, pp: Value, request_tokens: Value,
                   serving_compute_s_per_request: Value,
                   serving_kv_memory_s_per_request: Value, serving_token_s: Value,
                   serving_step_fixed_s: Value, serving_dense_weights_s: Value,
                   serving_expert_weights_s: Value, model_experts: Value,
                   model_experts_per_token: Value, saturation_step_s: Value,
                   saturation_requests_per_s_replica: Value, serving_step_0_s: Value,
                   expert_gemm_s_per_token: Value, expert_ranks: Value,
                   expert_rank_max_sd: Value) -> Value:
    """Bisection: the operating step at ``rate`` per replica, one iteration of the serving
    model's fixed point (:func:`planner.formulas.serving_operating._fixed_point_step`) from the
    idle step: exact for a dense model; for MoE the touched-expert share and the busiest expert
    rank's extra GEMM work enter by their tangents at the idle step (both concave in the
    tokens, so the tangent lies above: an upper bound), the busiest rank's extra share of
    experts read at its idle-step value (it rises and then falls with the touched share; at
    most ``expert_rank_max_sd / 2 / sqrt(E / ep)`` of the expert weights' read time)."""
    return serving_operating._fixed_point_step(
        serving_step_0_s, rate / pp, request_tokens, serving_compute_s_per_request,
        serving_kv_memory_s_per_request, serving_token_s, serving_step_fixed_s,
        serving_dense_weights_s, serving_expert_weights_s, model_experts,
        model_experts_per_token, saturation_step_s,
        safe_div(rate, saturation_requests_per_s_replica, 1.0), expert_gemm_s_per_token,
        expert_ranks, expert_rank_max_sd)


def _search_work(rate: Value, step: Value, saturation_requests_per_step: Value,
                 pp: Value) -> Value:
    """Bisection: the work per micro-batch step at ``rate`` (the serving model's
    ``micro_batch_requests_per_step``: ``min(rate * step, saturation) / pp``)."""
    return minimum(rate * step, saturation_requests_per_step) / pp


_PART_INPUTS = ("request_tokens", "serving_compute_s_per_request",
                "serving_kv_memory_s_per_request", "serving_dense_weights_s",
                "serving_expert_weights_s", "model_experts", "model_experts_per_token",
                "serving_comm_s_per_token", "tp", "collective_latency_s_per_step",
                "model_layers",
                "serving_activation_s_per_token",
                "engine_step_overhead_s", "kernel_overhead_s_per_layer",
                "model_layer_kernels", "spec_draft_fixed_s", "expert_gemm_s_per_token",
                "expert_ranks", "expert_rank_max_sd")
"""The columns the serving model's step parts read besides the work per step."""


def _parts(y: Value, request_tokens: Value, serving_compute_s_per_request: Value,
           serving_kv_memory_s_per_request: Value, serving_dense_weights_s: Value,
           serving_expert_weights_s: Value, model_experts: Value,
           model_experts_per_token: Value, serving_comm_s_per_token: Value, tp: Value,
           collective_latency_s_per_step: Value, model_layers: Value,
           serving_activation_s_per_token: Value,
           engine_step_overhead_s: Value, kernel_overhead_s_per_layer: Value,
           model_layer_kernels: Value, spec_draft_fixed_s: Value,
           expert_gemm_s_per_token: Value, expert_ranks: Value, expert_rank_max_sd: Value
           ) -> tuple[Value, Value, Value, Value, Value]:
    """The serving model's step parts at work ``y`` (compute, memory, communication,
    element-wise, overhead), by its own column functions (``tp`` is read by the TTFT search
    from these inputs, not by the parts)."""
    return (serving_operating.step_compute_s(y, serving_compute_s_per_request, request_tokens,
                                             serving_expert_weights_s, expert_gemm_s_per_token,
                                             model_experts, model_experts_per_token, expert_ranks,
                                             expert_rank_max_sd),
            serving_operating.step_memory_s(y, request_tokens, serving_kv_memory_s_per_request,
                                            serving_dense_weights_s, serving_expert_weights_s,
                                            model_experts, model_experts_per_token,
                                            expert_gemm_s_per_token, expert_ranks,
                                            expert_rank_max_sd),
            serving_operating.step_communication_s(y, request_tokens, serving_comm_s_per_token,
                                                   collective_latency_s_per_step),
            serving_operating.step_elementwise_s(y, request_tokens,
                                                 serving_activation_s_per_token),
            serving_operating.step_overhead_s(engine_step_overhead_s, model_layers,
                                              kernel_overhead_s_per_layer, model_layer_kernels,
                                              spec_draft_fixed_s))


def _search_tpot_s(y: Value, host_weight_stream_s: Value,
                   spec_acceptance_length_effective: Value, *parts_inputs: Value) -> Value:
    """Bisection: the TPOT at work ``y`` (the serving model's ``step_s``, over the
    acceptance length under speculative decoding)."""
    compute, memory_, comm, elementwise, overhead = _parts(y, *parts_inputs)
    return per_output_token(serving_operating.step_s(serving_load.OPEN_LOOP, compute, memory_,
                                                     elementwise, comm, overhead,
                                                     host_weight_stream_s, 0.0),
                            spec_acceptance_length_effective)


_TTFT_INPUTS = ("host_weight_stream_s", "prefill_steps_per_request", "prefill_tokens_computed",
                "max_num_batched_tokens_effective", "prefill_flops_computed", "gpu_flops_per_s",
                "matmul_efficiency_effective", "serving_token_s", "request_latency_effective_s",
                "max_running_batch", "service_scv", "serving_capacity_requests_per_s_replica",
                "slo_percentile_number", "spec_acceptance_length_effective",
                "prefill_host_floor_s")
"""The columns the TTFT of a search step reads besides its work, TPOT, rate and parts."""


def _search_ttft_s(y: Value, tpot: Value, rate: Value, host_weight_stream_s: Value,
                   prefill_steps_per_request: Value, prompt_tokens: Value,
                   max_num_batched_tokens_effective: Value, prefill_flops: Value,
                   gpu_flops_per_s: Value, matmul_efficiency_effective: Value,
                   serving_token_s: Value, request_latency_effective_s: Value,
                   max_running_batch: Value,
                   service_scv: Value, serving_capacity_requests_per_s_replica: Value,
                   slo_percentile_number: Value, spec_acceptance_length_effective: Value,
                   prefill_host_floor_s: Value, *parts_inputs: Value) -> Value:
    """Bisection: the TTFT at the objective's percentile at ``rate`` per replica (the serving
    model's slot wait quantile, step alignment, prefill and front end)."""
    compute, memory_, comm, elementwise, overhead = _parts(y, *parts_inputs)
    tp = parts_inputs[_PART_INPUTS.index("tp")]
    service = serving_cohort.ttft_service_s(serving_load.OPEN_LOOP, 0.0, prefill_steps_per_request,
                                            prompt_tokens,
                                            max_num_batched_tokens_effective, prefill_flops, tp,
                                            gpu_flops_per_s, matmul_efficiency_effective, compute,
                                            memory_, elementwise, comm, overhead, serving_token_s,
                                            host_weight_stream_s, 0, 0.0, 1.0, 0.0,
                                            prefill_host_floor_s)  # open loop
    util = safe_div(rate, serving_capacity_requests_per_s_replica, 1.0)
    waits = [serving_queue._queue_wait_quantile(p, serving_load.OPEN_LOOP, util, max_running_batch,
                                                service_scv, rate,
                                                serving_capacity_requests_per_s_replica, 0.0)
             for p in (0.5, 0.9, 0.99)]
    wait = where(slo_percentile_number == 50, waits[0],
                 where(slo_percentile_number == 90, waits[1], waits[2]))
    step = tpot * spec_acceptance_length_effective  # the step: tpot is per output token
    return wait + step / 2 + service + request_latency_effective_s


def _search_meets(rate: Value, tpot: Value, ttft: Value, slo_ttft_s: Value, slo_tpot_s: Value,
                  serving_capacity_requests_per_s_replica: Value) -> Value:
    """Bisection: whether the middle count meets the SLO at its rate (the rule of
    :func:`meets_slo`: both objectives, below capacity)."""
    ttft_ok = where(slo_ttft_s > 0, where(ttft <= slo_ttft_s, 1, 0), 1)
    tpot_ok = where(slo_tpot_s > 0, where(tpot <= slo_tpot_s, 1, 0), 1)
    below = where(rate < serving_capacity_requests_per_s_replica, 1, 0)
    return ttft_ok * tpot_ok * below > 0


def _previous(k: int) -> tuple[str, str]:
    """The bounds search step ``k`` starts from."""
    return ("slo_replicas_low", "slo_replicas_high") if k == 1 else (
        f"slo_search_{k - 1}_low", f"slo_search_{k - 1}_high")


def _search_low(low: Value, high: Value, meets: Value) -> Value:
    """Bisection: the lower bound after judging the middle count (``meets`` is monotone in
    the count: fewer replicas carry more each)."""
    return where(meets, low, minimum(floor((low + high) / 2) + 1, high))


def _search_high(low: Value, high: Value, meets: Value) -> Value:
    """Bisection: the upper bound after judging the middle count; it always meets."""
    return where(meets, floor((low + high) / 2), high)


def _repeats_previous(k: int, quantity: str) -> Repeats | None:
    """Step ``k``'s column ``quantity`` repeats step ``k - 1``'s where the bounds it starts
    from are those step ``k - 1`` started from: both steps are the same formulas of the same
    scenario columns and of those bounds. The bounds stop moving only where the search has
    ended (``low = high``: a step moves ``high`` down to the middle count, or ``low`` up past
    it, unless both are already the middle), so on such rows the later steps are evaluated
    as copies (:class:`~planner.formulas.ops.Repeats`)."""
    if k == 1:
        return None
    low, high = _previous(k)
    low_before, high_before = _previous(k - 1)
    return Repeats(f"slo_search_{k - 1}_{quantity}", ((low, low_before), (high, high_before)))


def _search_step(k: int) -> tuple[Callable[..., Value], ...]:
    """The columns of bisection step ``k`` of the least replica count that meets the SLO: at
    the middle count between the previous bounds, its rate per replica, operating step, work
    per step, TPOT and TTFT at the objective's percentile (the serving model's formulas, one
    column each so that every Excel formula stays short), whether it meets the SLO, and the
    bounds after it (``slo_search_<k>_low``, ``slo_search_<k>_high``)."""
    low, high = _previous(k)
    name = f"slo_search_{k}_"
    step_inputs = ("pp", "request_tokens", "serving_compute_s_per_request",
                   "serving_kv_memory_s_per_request", "serving_token_s",
                   "serving_step_fixed_s", "serving_dense_weights_s",
                   "serving_expert_weights_s", "model_experts", "model_experts_per_token",
                   "saturation_step_s", "saturation_requests_per_s_replica",
                   "serving_step_0_s", "expert_gemm_s_per_token", "expert_ranks",
                   "expert_rank_max_sd")
    return (
        formula_column(
            name + "rate", f"Replica search, step {k}: the rate per replica at the middle "
            "count.", (low, high, "target_requests_per_s"), _search_rate,
            _repeats_previous(k, "rate")),
        formula_column(
            name + "step_s", f"Replica search, step {k}: the operating step there.",
            (name + "rate", *step_inputs), _search_step_s, _repeats_previous(k, "step_s")),
        formula_column(
            name + "work", f"Replica search, step {k}: the work per micro-batch step.",
            (name + "rate", name + "step_s", "saturation_requests_per_step", "pp"),
            _search_work, _repeats_previous(k, "work")),
        formula_column(
            name + "tpot_s", f"Replica search, step {k}: the TPOT there.",
            (name + "work", "host_weight_stream_s", "spec_acceptance_length_effective",
             *_PART_INPUTS), _search_tpot_s, _repeats_previous(k, "tpot_s")),
        formula_column(
            name + "ttft_s", f"Replica search, step {k}: the TTFT at the objective's "
            "percentile there.", (name + "work", name + "tpot_s", name + "rate",
                                  *_TTFT_INPUTS, *_PART_INPUTS), _search_ttft_s,
            _repeats_previous(k, "ttft_s")),
        formula_column(
            name + "meets", f"Replica search, step {k}: whether the middle count meets "
            "the SLO.", (name + "rate", name + "tpot_s", name + "ttft_s", "slo_ttft_s",
                         "slo_tpot_s", "serving_capacity_requests_per_s_replica"),
            _search_meets, _repeats_previous(k, "meets")),
        formula_column(
            name + "low", f"Replica search, step {k}: the lower bound.",
            (low, high, name + "meets"), _search_low, _repeats_previous(k, "low")),
        formula_column(
            name + "high", f"Replica search, step {k}: the upper bound (a count that "
            "meets the SLO).", (low, high, name + "meets"), _search_high,
            _repeats_previous(k, "high")))


SEARCH: tuple[Callable[..., Value], ...] = tuple(
    column for k in range(1, SEARCH_STEPS + 1) for column in _search_step(k))
"""The search's columns, in dependency order."""


def replicas_needed(target_requests_per_s: Value, slo_requests_per_s_replica: Value,
                    slo_search_10_high: Value, engine_fits: Value, serving_mode_code: Value,
                    disagg_prefill_workers_needed: Value,
                    disagg_decode_workers_needed: Value) -> Value:
    """Fewest replicas that carry ``target_requests_per_s`` within the objectives: the
    bisection (:data:`SEARCH`, :data:`SEARCH_STEPS` steps over the counts between
    :func:`slo_replicas_low` and :func:`slo_replicas_high`) judges each count by the serving
    model at that count's rate, so at this count the scenario meets its SLO and at one replica
    fewer it does not (exact for a dense model; an MoE count meets, at most a replica or so
    above the least). 0 when there is no target rate, or when no number of replicas can (the
    engine does not start, or the objective is shorter than an idle replica's latency).
    Disaggregated: the workers of both pools sized for the target
    (:mod:`planner.formulas.disagg_slo`), 0 where either pool has no count."""
    feasible = where(engine_fits, where(slo_requests_per_s_replica > 0, 1, 0), 0)
    aggregated = where(feasible > 0, where(target_requests_per_s > 0, slo_search_10_high, 0), 0)
    both = where(disagg_prefill_workers_needed > 0,
                 where(disagg_decode_workers_needed > 0,
                       disagg_prefill_workers_needed + disagg_decode_workers_needed, 0), 0)
    return where(serving_mode_code == serving_load.DISAGGREGATED, both, aggregated)


def gpus_needed(replicas_needed: Value, tp: Value, pp: Value, serving_mode_code: Value,
                disagg_prefill_gpus_needed: Value, disagg_decode_gpus_needed: Value) -> Value:
    """GPUs of the deployment :func:`replicas_needed` sizes: ``replicas * tp * pp``;
    disaggregated, both pools' (``prefill workers * prefill_tp * pp + decode workers *
    decode_tp * pp``, :mod:`planner.formulas.disagg_slo`)."""
    return where(serving_mode_code == serving_load.DISAGGREGATED,
                 disagg_prefill_gpus_needed + disagg_decode_gpus_needed,
                 replicas_needed * tp * pp)


def cost_usd_per_month_needed(gpus_needed: Value, price_usd_per_gpu_hour: Value,
                              hours_per_month: Value, serving_mode_code: Value,
                              disagg_prefill_gpus_needed: Value,
                              disagg_decode_gpus_needed: Value,
                              decode_gpu_price_usd_per_gpu_hour: Value) -> Value:
    """Monthly cost of the deployment :func:`gpus_needed` sizes (USD): ``gpus * price *
    hours``; disaggregated, each pool at its GPU's price."""
    disaggregated = (disagg_prefill_gpus_needed * price_usd_per_gpu_hour
                     + disagg_decode_gpus_needed * decode_gpu_price_usd_per_gpu_hour)
    return where(serving_mode_code == serving_load.DISAGGREGATED, disaggregated * hours_per_month,
                 gpus_needed * price_usd_per_gpu_hour * hours_per_month)
