"""The front end, the queue for a running slot, and the latency and throughput a client sees.

Why this module exists: requests that arrive over HTTP pass the engine's front end
(:mod:`planner.formulas.frontends`), which caps a replica's rate and adds its path to every
TTFT; in an open loop they then queue for a running slot (M/M/c by Sakasegawa's
approximation with the Allen-Cunneen factor, the p-quantiles of the wait), in a closed loop
the clients beyond the batch wait by Little's law. This module owns the front end's figures,
the capacity and utilization they give, the slot waits, and the contract outputs built on
them: ``ttft_*``, ``e2e_mean_s``, ``serving_requests_per_s``, ``output_tokens_per_s``. The
model is described in :mod:`planner.formulas.serving`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per replica unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from planner.formulas.engine_memory import ENGINES, ROOFLINE
from planner.formulas.frontends import (
    ENGINE_FRONTENDS,
    FRONTENDS,
    SPLIT,
    UNCAPPED,
    frontend_figure,
)
from planner.formulas.ops import Value, maximum, minimum, power, safe_div, where
from planner.formulas.serving_load import (
    _HUGE_S,
    CLOSED_LOOP,
    OFFLINE,
    OPEN_LOOP,
    QUEUE_WAIT_CAP_S,
    _pick,
)


def frontend_code(engine_code: Value) -> Value:
    """The front end serving the requests: the engine's own server
    (:data:`planner.formulas.frontends.ENGINE_FRONTENDS`, codes of
    :data:`planner.formulas.frontends.FRONTENDS`)."""
    out: Value = FRONTENDS[ENGINE_FRONTENDS["roofline"]].code
    for engine, server in ENGINE_FRONTENDS.items():
        out = where(engine_code == ENGINES[engine], FRONTENDS[server].code, out)
    return out


def request_latency_effective_s(request_latency_s: Value, frontend_code: Value) -> Value:
    """Front-end latency one request adds to its TTFT: ``request_latency_s`` where above 0,
    else the front end's figure (:mod:`planner.formulas.frontends`)."""
    return where(request_latency_s > 0, request_latency_s,
                 frontend_figure(frontend_code, "request_latency_s"))


def request_overhead_effective_s(request_overhead_s: Value, frontend_code: Value) -> Value:
    """Per-request serialized front-end work: ``request_overhead_s`` where above 0, else the
    front end's figure."""
    return where(request_overhead_s > 0, request_overhead_s,
                 frontend_figure(frontend_code, "request_overhead_s"))


def stream_overhead_effective_s_per_token(stream_overhead_s_per_token: Value,
                                          frontend_code: Value) -> Value:
    """Per-streamed-token front-end work: ``stream_overhead_s_per_token`` where above 0, else
    the front end's figure."""
    return where(stream_overhead_s_per_token > 0, stream_overhead_s_per_token,
                 frontend_figure(frontend_code, "stream_overhead_s_per_token"))


def frontend_requests_per_s_replica(request_overhead_effective_s: Value,
                                    stream_overhead_effective_s_per_token: Value,
                                    frontend_code: Value, output_tokens: Value) -> Value:
    """Most requests per second one replica's front end passes
    (:mod:`planner.formulas.frontends`): one serialized process
    ``1 / (request work + G * per-token work)``; tokenize and detokenize in separate
    processes ``1 / max(request work, G * per-token work)``; no serialized stage (or no work):
    unbounded."""
    pipeline = frontend_figure(frontend_code, "pipeline")
    stream = output_tokens * stream_overhead_effective_s_per_token
    work = where(pipeline == SPLIT, maximum(request_overhead_effective_s, stream),
                 request_overhead_effective_s + stream)
    return where(pipeline == UNCAPPED, _HUGE_S, safe_div(1, work, _HUGE_S))


def serving_capacity_requests_per_s_replica(load_mode: Value,
                                            saturation_requests_per_s_replica: Value,
                                            frontend_requests_per_s_replica: Value) -> Value:
    """Most requests per second one replica serves in this mode: the engine's saturation
    rate, capped by the front end when requests arrive over HTTP (not offline)."""
    return where(load_mode == OFFLINE, saturation_requests_per_s_replica,
                 minimum(saturation_requests_per_s_replica, frontend_requests_per_s_replica))


def gpu_utilization(replica_request_rate_per_s: Value,
                    saturation_requests_per_s_replica: Value) -> Value:
    """Offered load over the engine's saturation rate (per replica): drives the step-time
    fixed point."""
    return replica_request_rate_per_s / saturation_requests_per_s_replica


def utilization(replica_request_rate_per_s: Value,
                serving_capacity_requests_per_s_replica: Value, serving_mode_code: Value,
                prefill_utilization: Value, decode_utilization: Value) -> Value:
    """Offered load over capacity (engine and front end), ``rho`` of the queue; disaggregated:
    the busier pool's (:func:`planner.formulas.disagg_load.prefill_utilization`,
    :func:`~planner.formulas.disagg_load.decode_utilization`), so ``overloaded`` and ``saturated``
    say when either pool cannot keep up."""
    return _pick(serving_mode_code, maximum(prefill_utilization, decode_utilization),
                 replica_request_rate_per_s / serving_capacity_requests_per_s_replica)


def overloaded(load_mode: Value, utilization: Value) -> Value:
    """Open loop at or beyond the saturation rate: the queue grows without bound."""
    return (load_mode == OPEN_LOOP) * (utilization >= 1) > 0


def _ln_approx(z: Value) -> Value:
    """``ln z`` as ``-(1 - z)/sqrt(z)`` (z > 0): within 2 % for 0.5 <= z <= 2, exact at 1."""
    return -(1 - z) / power(z, 0.5)


def queue_wait_mean_s(load_mode: Value, utilization: Value, max_running_batch: Value,
                      service_scv: Value, replica_request_rate_per_s: Value,
                      closed_loop_batch: Value, concurrency: Value, replicas: Value,
                      operating_requests_per_step: Value, step_s: Value,
                      serving_mode_code: Value, prefill_queue_wait_mean_s: Value,
                      decode_slot_wait_s: Value) -> Value:
    """Mean wait for a running slot. Open loop: Sakasegawa's M/M/c ``Lq`` times the
    Allen-Cunneen factor, over the rate (Little); :data:`QUEUE_WAIT_CAP_S` at ``rho >= 1``.
    Closed loop: ``(M - B)/throughput``. Offline: 0. Disaggregated: the prefill pool's queue
    plus the wait for a decode slot (:mod:`planner.formulas.disagg`)."""
    rho = minimum(utilization, 1)
    beta = power(2 * (max_running_batch + 1), 0.5)
    lq = (1 + service_scv) / 2 * safe_div(power(rho, beta), 1 - rho, QUEUE_WAIT_CAP_S)
    open_wait = minimum(safe_div(lq, replica_request_rate_per_s, 0.0), QUEUE_WAIT_CAP_S)
    open_wait = where(utilization >= 1, QUEUE_WAIT_CAP_S, open_wait)
    throughput = safe_div(operating_requests_per_step, step_s, 0.0)
    waiting = maximum(safe_div(concurrency, replicas, 0.0) - closed_loop_batch, 0)
    closed_wait = safe_div(waiting, throughput, 0.0)
    aggregated = where(load_mode == OPEN_LOOP, open_wait,
                       where(load_mode == CLOSED_LOOP, closed_wait, 0))
    return _pick(serving_mode_code, prefill_queue_wait_mean_s + decode_slot_wait_s, aggregated)


def _queue_wait_quantile(p: float, load_mode: Value, utilization: Value,
                         max_running_batch: Value, service_scv: Value,
                         replica_request_rate_per_s: Value,
                         serving_capacity_requests_per_s_replica: Value,
                         queue_wait_mean_s: Value) -> Value:
    """p-quantile of the slot wait (module docstring); closed loop and offline: the mean."""
    rho = minimum(maximum(utilization, 1e-12), 1 - 1e-12)
    beta = power(2 * (max_running_batch + 1), 0.5)
    factor = (1 + service_scv) / 2
    ln_p_wait = minimum(_ln_approx(factor) + (beta - 1) * _ln_approx(rho), 0)
    ln_tail = {0.5: 0.6931471805599453, 0.9: 2.302585092994046, 0.99: 4.605170185988091}[p]
    spare = serving_capacity_requests_per_s_replica - replica_request_rate_per_s
    quantile = maximum(0, safe_div(ln_p_wait + ln_tail, spare, QUEUE_WAIT_CAP_S))
    open_q = where(utilization >= 1, QUEUE_WAIT_CAP_S, minimum(quantile, QUEUE_WAIT_CAP_S))
    return where(load_mode == OPEN_LOOP, open_q, queue_wait_mean_s)


def queue_wait_p50_s(load_mode: Value, utilization: Value, max_running_batch: Value,
                     service_scv: Value, replica_request_rate_per_s: Value,
                     serving_capacity_requests_per_s_replica: Value,
                     queue_wait_mean_s: Value, serving_mode_code: Value,
                     disagg_ttft_p50_s: Value, disagg_ttft_service_s: Value,
                     request_latency_effective_s: Value) -> Value:
    """Median slot wait (open loop: 0 unless more than half of arrivals wait). Disaggregated:
    the prefill queue's quantile plus the decode-slot wait (the disaggregated TTFT less its
    service and front end)."""
    aggregated = _queue_wait_quantile(0.5, load_mode, utilization, max_running_batch, service_scv,
                                replica_request_rate_per_s,
                                serving_capacity_requests_per_s_replica, queue_wait_mean_s)
    disaggregated = maximum(disagg_ttft_p50_s - disagg_ttft_service_s
                            - request_latency_effective_s, 0)
    return _pick(serving_mode_code, disaggregated, aggregated)


def queue_wait_p90_s(load_mode: Value, utilization: Value, max_running_batch: Value,
                     service_scv: Value, replica_request_rate_per_s: Value,
                     serving_capacity_requests_per_s_replica: Value,
                     queue_wait_mean_s: Value, serving_mode_code: Value,
                     disagg_ttft_p90_s: Value, disagg_ttft_service_s: Value,
                     request_latency_effective_s: Value) -> Value:
    """90th-percentile slot wait. Disaggregated: the prefill
    queue's quantile plus the decode-slot wait (the disaggregated TTFT less its service and
    front end)."""
    aggregated = _queue_wait_quantile(0.9, load_mode, utilization, max_running_batch, service_scv,
                                replica_request_rate_per_s,
                                serving_capacity_requests_per_s_replica, queue_wait_mean_s)
    disaggregated = maximum(disagg_ttft_p90_s - disagg_ttft_service_s
                            - request_latency_effective_s, 0)
    return _pick(serving_mode_code, disaggregated, aggregated)


def queue_wait_p99_s(load_mode: Value, utilization: Value, max_running_batch: Value,
                     service_scv: Value, replica_request_rate_per_s: Value,
                     serving_capacity_requests_per_s_replica: Value,
                     queue_wait_mean_s: Value, serving_mode_code: Value,
                     disagg_ttft_p99_s: Value, disagg_ttft_service_s: Value,
                     request_latency_effective_s: Value) -> Value:
    """99th-percentile slot wait. Disaggregated: the prefill
    queue's quantile plus the decode-slot wait (the disaggregated TTFT less its service and
    front end)."""
    aggregated = _queue_wait_quantile(0.99, load_mode, utilization, max_running_batch, service_scv,
                                replica_request_rate_per_s,
                                serving_capacity_requests_per_s_replica, queue_wait_mean_s)
    disaggregated = maximum(disagg_ttft_p99_s - disagg_ttft_service_s
                            - request_latency_effective_s, 0)
    return _pick(serving_mode_code, disaggregated, aggregated)


def step_alignment_s(load_mode: Value, step_s: Value) -> Value:
    """Wait for the running step to end before a prefill starts: half a step for Poisson
    arrivals; 0 in a closed loop (a client's next request follows a completion, at a step
    boundary)."""
    return where(load_mode == OPEN_LOOP, step_s / 2, 0)


def ttft_mean_s(queue_wait_mean_s: Value, step_alignment_s: Value, ttft_service_s: Value,
                request_latency_effective_s: Value, serving_mode_code: Value,
                disagg_ttft_mean_s: Value) -> Value:
    """Mean time to first token at the operating point: slot wait + step alignment + prefill +
    the front end's path for one request (HTTP, chat template, tokenization, hand-offs between
    the API, engine and detokenizer processes, first streamed chunk:
    ``request_latency_effective_s``, the front end's, :mod:`planner.formulas.frontends`).
    Disaggregated: :func:`planner.formulas.disagg_load.disagg_ttft_mean_s`."""
    return _pick(serving_mode_code, disagg_ttft_mean_s,
                 queue_wait_mean_s + step_alignment_s + ttft_service_s
                 + request_latency_effective_s)


def ttft_p50_s(queue_wait_p50_s: Value, step_alignment_s: Value, ttft_service_s: Value,
               request_latency_effective_s: Value, serving_mode_code: Value,
               disagg_ttft_p50_s: Value) -> Value:
    """Median TTFT (service time taken as fixed; the spread is the queue's).
    Disaggregated: :func:`planner.formulas.disagg_load.disagg_ttft_p50_s`."""
    return _pick(serving_mode_code, disagg_ttft_p50_s,
                 queue_wait_p50_s + step_alignment_s + ttft_service_s + request_latency_effective_s)


def ttft_p90_s(queue_wait_p90_s: Value, step_alignment_s: Value, ttft_service_s: Value,
               request_latency_effective_s: Value, serving_mode_code: Value,
               disagg_ttft_p90_s: Value) -> Value:
    """90th-percentile TTFT.
    Disaggregated: :func:`planner.formulas.disagg_load.disagg_ttft_p90_s`."""
    return _pick(serving_mode_code, disagg_ttft_p90_s,
                 queue_wait_p90_s + step_alignment_s + ttft_service_s + request_latency_effective_s)


def ttft_p99_s(queue_wait_p99_s: Value, step_alignment_s: Value, ttft_service_s: Value,
               request_latency_effective_s: Value, serving_mode_code: Value,
               disagg_ttft_p99_s: Value) -> Value:
    """99th-percentile TTFT.
    Disaggregated: :func:`planner.formulas.disagg_load.disagg_ttft_p99_s`."""
    return _pick(serving_mode_code, disagg_ttft_p99_s,
                 queue_wait_p99_s + step_alignment_s + ttft_service_s + request_latency_effective_s)


def e2e_mean_s(ttft_mean_s: Value, tpot_mean_s: Value, output_tokens: Value) -> Value:
    """Mean end-to-end latency: ``ttft + (G - 1) * tpot``."""
    return ttft_mean_s + (output_tokens - 1) * tpot_mean_s


def serving_requests_per_s(load_mode: Value, replica_request_rate_per_s: Value,
                           serving_capacity_requests_per_s_replica: Value,
                           frontend_requests_per_s_replica: Value,
                           operating_requests_per_step: Value, step_s: Value,
                           replicas: Value, serving_mode_code: Value,
                           disagg_requests_per_s: Value) -> Value:
    """Completed requests per second of the deployment: open loop the offered rate up to
    capacity; closed loop ``x / step`` per replica up to the front end's rate; offline
    ``x / step``."""
    open_ = minimum(replica_request_rate_per_s, serving_capacity_requests_per_s_replica)
    engine = safe_div(operating_requests_per_step, step_s, 0.0)
    closed = where(load_mode == CLOSED_LOOP, minimum(engine, frontend_requests_per_s_replica),
                   engine)
    return _pick(serving_mode_code, disagg_requests_per_s,
                 replicas * where(load_mode == OPEN_LOOP, open_, closed))


def output_tokens_per_s(serving_requests_per_s: Value, output_tokens: Value) -> Value:
    """Output tokens per second of the deployment at the operating point."""
    return serving_requests_per_s * output_tokens


def engine_requests_per_s(engine_code: Value, requests_per_s: Value,
                          serving_requests_per_s: Value) -> Value:
    """Requests per second, engine-aware: today's ``requests_per_s`` for ``roofline``, the
    serving model's otherwise (the integrator swaps it in as ``requests_per_s``)."""
    return where(engine_code == ROOFLINE, requests_per_s, serving_requests_per_s)
