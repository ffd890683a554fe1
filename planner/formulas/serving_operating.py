"""Where a replica runs: its saturation, the open loop's step-time fixed point, and the batch
and step at the operating point.

Why this module exists: the serving model's throughput and latency are read at one operating
point per load mode. This module owns the saturation point (the most requests one replica
completes: full running batch or full token budget), the open loop's fixed point ``t =
step(rate * t)`` solved by six closed-form Newton iterations (``serving_step_1_s`` ..
``serving_step_6_s``, :func:`_fixed_point_step`), the requests' worth of work per step and
the running batch in each mode, and the operating step's parts (compute, memory,
communication, element-wise, overhead, host link) and their sum ``step_s``. The model is
described in :mod:`planner.formulas.serving`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per replica unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from collections.abc import Callable

from planner.formulas.latency import expert_touch_fraction
from planner.formulas.made_columns import formula_column, settled
from planner.formulas.ops import Value, maximum, minimum, power, safe_div, where
from planner.formulas.serving_cohort import _prefill_share
from planner.formulas.serving_load import _HUGE_S, CLOSED_LOOP, OPEN_LOOP, _pick
from planner.formulas.serving_queue import _ln_approx
from planner.formulas.serving_step import _busiest_rank_extra_s, _layer_kernel_s


def saturation_requests_per_step(max_running_batch: Value, residence_steps: Value,
                                 max_num_batched_tokens_effective: Value, request_tokens: Value,
                                 pp: Value) -> Value:
    """Requests' worth of work per step (one pass through the pipeline) at saturation:
    ``min(B_max / residence_steps, pp * max_num_batched_tokens / (S + G - 1))`` (each of the
    ``pp`` micro-batches in flight has its own token budget)."""
    return minimum(max_running_batch / residence_steps,
                   pp * max_num_batched_tokens_effective / request_tokens)


def saturation_step_s(saturation_requests_per_step: Value, prefill_tokens_computed: Value,
                      saturation_prefill_tokens: Value, saturation_prefill_step_s: Value,
                      saturation_decode_step_s: Value) -> Value:
    """Mean step time at saturation (full running batch ``B_max`` or full token budget): the
    closed loop at ``B_max``, a share ``min(x S / n, 1)`` of prefill steps of a cohort
    (:mod:`planner.formulas.step_mix`), the rest decode-only steps of the batch."""
    share = _prefill_share(saturation_requests_per_step, prefill_tokens_computed,
                           saturation_prefill_tokens)
    return share * (saturation_prefill_step_s - saturation_decode_step_s) \
        + saturation_decode_step_s


def saturation_requests_per_s_replica(saturation_requests_per_step: Value,
                                      saturation_step_s: Value) -> Value:
    """Most requests per second one replica completes: ``x_sat / step(x_sat)``."""
    return saturation_requests_per_step / saturation_step_s


def saturation_requests_per_s(saturation_requests_per_s_replica: Value,
                              replicas: Value, serving_mode_code: Value,
                              disagg_saturation_requests_per_s: Value) -> Value:
    """Most requests per second the deployment completes (all replicas); disaggregated: the
    slower pool's capacity
    (:func:`planner.formulas.disagg_decode.disagg_saturation_requests_per_s`)."""
    return _pick(serving_mode_code, disagg_saturation_requests_per_s,
                 saturation_requests_per_s_replica * replicas)


def saturation_output_tokens_per_s(saturation_requests_per_s: Value,
                                   output_tokens: Value) -> Value:
    """Offline maximum output tokens per second of the deployment:
    ``saturation_requests_per_s * G`` (what ``trtllm-bench throughput`` reports)."""
    return saturation_requests_per_s * output_tokens


def _fixed_point_step(previous: Value, rate: Value, request_tokens: Value, compute: Value,
                      kv: Value, comm: Value, fixed: Value, dense: Value, experts: Value,
                      model_experts: Value, model_experts_per_token: Value,
                      saturation_step: Value, rho: Value, expert_gemm: Value,
                      expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """One Newton iteration of ``t = step(rate * t)``: the touched-expert share is replaced by
    its tangent at ``previous`` (slope ``-(1-p)^N ln(1-p)``, ``ln`` by :func:`_ln_approx`),
    which makes both branches of ``max(compute, memory)`` lines in ``t``, solved in closed
    form. Dense models (no experts) are exact after one iteration. The busiest expert rank's
    extra GEMM work enters by its exact tangent, its extra weight reads at ``previous``."""
    tokens_per_s = rate * request_tokens
    n_prev = maximum(tokens_per_s * previous, 1)
    p = model_experts_per_token / model_experts
    miss = where(n_prev * p > 40, 0, power(1 - p, n_prev))
    weights = dense + experts * (1 - miss)
    slope_touch = where(p < 1, miss * -_ln_approx(maximum(1 - p, 1e-12)), 0)
    grows = tokens_per_s * previous > 1
    slope_w = where(grows, experts * slope_touch * tokens_per_s, 0)
    # the busiest expert rank's extra work (0 for one rank). Its GEMM share grows as
    # sqrt(n) (busiest_rank_expert_tokens_extra), so its tangent is exactly extra_c / (2 n);
    # the extra share of experts it reads is taken at the previous iterate (slope 0): a
    # contraction of a term a few per cent of the step, exact at the fixed point, and it keeps
    # the column's formula short enough for Excel (8,192 characters a formula).
    extra_c, extra_m = _busiest_rank_extra_s(n_prev, experts, expert_gemm, model_experts,
                                             model_experts_per_token, expert_ranks,
                                             expert_rank_max_sd)
    slope_ec = where(grows, extra_c / (2 * n_prev) * tokens_per_s, 0)
    slope_c = rate * compute + tokens_per_s * comm + slope_ec
    slope_m = slope_w + rate * kv + tokens_per_s * comm
    intercept_c = extra_c - slope_ec * previous
    intercept_m = weights - slope_w * previous + extra_m
    t_c = where(slope_c < 1, safe_div(fixed + intercept_c, 1 - slope_c, _HUGE_S), _HUGE_S)
    t_m = where(slope_m < 1, safe_div(fixed + intercept_m, 1 - slope_m, _HUGE_S), _HUGE_S)
    solved = minimum(maximum(t_c, t_m), saturation_step)
    return where(rho < 1, solved, saturation_step)


def serving_step_0_s(serving_step_fixed_s: Value, serving_dense_weights_s: Value,
                     serving_expert_weights_s: Value, model_experts: Value,
                     model_experts_per_token: Value) -> Value:
    """Start of the iteration: the step time of an idle replica (one token in flight)."""
    return serving_step_fixed_s + serving_dense_weights_s + serving_expert_weights_s * (
        expert_touch_fraction(1, model_experts, model_experts_per_token))


_ITERATION_INPUTS = (
    "micro_batch_request_rate_per_s", "request_tokens", "serving_compute_s_per_request",
    "serving_kv_memory_s_per_request", "serving_token_s", "serving_step_fixed_s",
    "serving_dense_weights_s", "serving_expert_weights_s", "model_experts",
    "model_experts_per_token", "saturation_step_s", "gpu_utilization",
    "expert_gemm_s_per_token", "expert_ranks", "expert_rank_max_sd")
"""The columns every fixed-point iteration reads after the previous iterate, in the order of
:func:`_fixed_point_step`'s arguments."""


def _iteration(k: int) -> Callable[..., Value]:
    """The column ``serving_step_<k>_s``: :func:`_fixed_point_step` applied to iteration
    ``k - 1``. Each iteration is its own column (so Excel and ``explain`` show it), and all are
    the same formula, so they are made here rather than written out six times."""
    return formula_column(
        f"serving_step_{k}_s",
        f"Iteration {k}{' (final)' if k == ITERATION_COUNT else ''} of the open-loop step time "
        "(see :func:`_fixed_point_step`).",
        (f"serving_step_{k - 1}_s", *_ITERATION_INPUTS), _fixed_point_step,
        settled(f"serving_step_{k - 1}_s", f"serving_step_{k - 2}_s") if k >= 2 else None)


ITERATION_COUNT = 6
"""Closed-form iterations of the fixed point: dense models are exact after one, MoE converges
quadratically (tests/formulas/test_serving.py checks the last two agree within 1 %)."""
serving_step_1_s, serving_step_2_s, serving_step_3_s, serving_step_4_s, serving_step_5_s, \
    serving_step_6_s = (_iteration(k) for k in range(1, ITERATION_COUNT + 1))


def closed_loop_batch(load_mode: Value, concurrency: Value, replicas: Value,
                      max_running_batch: Value) -> Value:
    """Running batch of a closed loop: ``min(concurrency / replicas, B_max)``; ``B_max`` for
    the offline maximum."""
    per_replica = safe_div(concurrency, replicas, 0.0)
    return where(load_mode == CLOSED_LOOP, maximum(minimum(per_replica, max_running_batch), 0),
                 max_running_batch)


def operating_requests_per_step(load_mode: Value, replica_request_rate_per_s: Value,
                                serving_step_6_s: Value, closed_loop_batch: Value,
                                residence_steps: Value, max_num_batched_tokens_effective: Value,
                                request_tokens: Value, saturation_requests_per_step: Value,
                                pp: Value) -> Value:
    """Requests' worth of work per step at the operating point: open loop ``rate * step``
    (at most saturation), closed loop and offline ``min(B / residence, budget / tokens)``."""
    closed = minimum(closed_loop_batch / residence_steps,
                     pp * max_num_batched_tokens_effective / request_tokens)
    open_ = minimum(replica_request_rate_per_s * serving_step_6_s, saturation_requests_per_step)
    return where(load_mode == OPEN_LOOP, open_, closed)


def micro_batch_requests_per_step(operating_requests_per_step: Value, pp: Value) -> Value:
    """Work one micro-batch carries through the pipeline: ``x / pp``."""
    return operating_requests_per_step / pp


def running_batch(operating_requests_per_step: Value, residence_steps: Value,
                  max_running_batch: Value) -> Value:
    """Requests holding a running slot at the operating point (Little's law over steps):
    ``x * residence_steps``, at most ``B_max``."""
    return minimum(operating_requests_per_step * residence_steps, max_running_batch)


def step_compute_s(micro_batch_requests_per_step: Value,
                   serving_compute_s_per_request: Value, request_tokens: Value,
                   serving_expert_weights_s: Value, expert_gemm_s_per_token: Value,
                   model_experts: Value, model_experts_per_token: Value,
                   expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """Compute part of the operating step, on the busiest expert-parallel rank
    (:func:`_busiest_rank_extra_s`, 0 more for one rank)."""
    tokens = maximum(micro_batch_requests_per_step * request_tokens, 1)
    extra_c, _extra_m = _busiest_rank_extra_s(tokens, serving_expert_weights_s,
                                              expert_gemm_s_per_token, model_experts,
                                              model_experts_per_token, expert_ranks,
                                              expert_rank_max_sd)
    return micro_batch_requests_per_step * serving_compute_s_per_request + extra_c


def step_memory_s(micro_batch_requests_per_step: Value, request_tokens: Value,
                  serving_kv_memory_s_per_request: Value, serving_dense_weights_s: Value,
                  serving_expert_weights_s: Value, model_experts: Value,
                  model_experts_per_token: Value, expert_gemm_s_per_token: Value,
                  expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """Memory part of the operating step: touched weights (on the busiest expert-parallel
    rank, :func:`_busiest_rank_extra_s`) + KV traffic."""
    tokens = maximum(micro_batch_requests_per_step * request_tokens, 1)
    _extra_c, extra_m = _busiest_rank_extra_s(tokens, serving_expert_weights_s,
                                              expert_gemm_s_per_token, model_experts,
                                              model_experts_per_token, expert_ranks,
                                              expert_rank_max_sd)
    return (serving_dense_weights_s + serving_expert_weights_s * expert_touch_fraction(
        tokens, model_experts, model_experts_per_token) + extra_m
        + micro_batch_requests_per_step * serving_kv_memory_s_per_request)


def step_communication_s(micro_batch_requests_per_step: Value, request_tokens: Value,
                         serving_comm_s_per_token: Value,
                         collective_latency_s_per_step: Value) -> Value:
    """Interconnect part of the operating step: volume plus collective latencies."""
    return (micro_batch_requests_per_step * request_tokens * serving_comm_s_per_token
            + collective_latency_s_per_step)


def step_elementwise_s(micro_batch_requests_per_step: Value, request_tokens: Value,
                       serving_activation_s_per_token: Value) -> Value:
    """Element-wise kernel part of the operating step (norms, rotary, activation)."""
    return micro_batch_requests_per_step * request_tokens * serving_activation_s_per_token


def step_overhead_s(engine_step_overhead_s: Value, model_layers: Value,
                    kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                    spec_draft_fixed_s: Value) -> Value:
    """Engine and kernel-launch overhead part of every step (:func:`_layer_kernel_s` per
    layer), with the drafter's passes under speculative decoding."""
    return engine_step_overhead_s + model_layers * _layer_kernel_s(kernel_overhead_s_per_layer,
                                                                   model_layer_kernels) \
        + spec_draft_fixed_s


def step_host_link_s(host_weight_stream_s: Value) -> Value:
    """Host-link part of every step: the weights offloaded to host memory, streamed once per
    pass (0 without offload)."""
    return host_weight_stream_s


def step_s(load_mode: Value, step_compute_s: Value, step_memory_s: Value,
           step_elementwise_s: Value, step_communication_s: Value, step_overhead_s: Value,
           step_host_link_s: Value, closed_loop_step_s: Value) -> Value:
    """Operating step time. Open loop (Poisson arrivals spread the prompts over the steps):
    ``max(compute, memory) + element-wise + communication + overhead + host link`` of the
    average step. Closed loop and offline: :func:`closed_loop_step_s` (whose fixed part,
    ``serving_step_fixed_s``, holds the host link's stream)."""
    open_ = (maximum(step_compute_s, step_memory_s) + step_elementwise_s + step_communication_s
             + step_overhead_s) + step_host_link_s
    return where(load_mode == OPEN_LOOP, open_, closed_loop_step_s)
