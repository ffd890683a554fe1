"""Continuous batching under load: engine step time, saturation, the running batch at a request
rate, and latency at that load.

Every public function is a scenario column over the operator set (:mod:`planner.formulas.ops`);
quantities are per replica unless the name says otherwise; times in seconds.

One engine step (vLLM V1 / SGLang / TRT-LLM scheduler with chunked prefill) runs one token for
every decoding sequence plus prefill chunks, at most ``max_num_batched_tokens`` tokens. In steady
state a step admits on average ``x`` requests' worth of work (``x = rate * step``): ``x * (S + G
- 1)`` tokens, ``x * request_flops`` FLOPs and the KV reads of ``x * (G - 1)`` decode tokens at
the mean context. Its time is::

    step(x) = max(compute(x), memory(x)) + elementwise(x) + communication(x) + overhead
    compute(x)  = x * request_flops / (tp * peak * matmul_efficiency)
    memory(x)   = (weights touched by x*(S+G-1) tokens / tp + x * KV bytes per request)
                  / (bandwidth * bandwidth_efficiency)
    elementwise(x) = x * (S+G-1) * L * (10*d + 3I/tp) * b / (bandwidth * bandwidth_efficiency)
    communication(x) = x * (S+G-1) * (TP all-reduce + EP all-to-all seconds per token)
                       + collectives per step * collective_latency
    overhead    = engine_step_overhead_s + layers * kernel_overhead_s_per_layer
                  + weights offloaded to host memory streamed over the host link

(the element-wise kernels between GEMMs -- norms, rotary, activation -- stream activations and
do not overlap the matmuls, so they add). That average step is the open loop's (Poisson arrivals
spread the prompts over the steps). A closed loop and the offline maximum run two kinds of step,
each a sum of operators bound by their own limits
(:func:`~planner.formulas.serving_step._step_kind_s`: the GEMMs by ``max(FLOPs, weights
touched)``, prefill attention by its FLOPs, decode attention by the KV each sequence reads,
element-wise work, collectives, the fixed step): prefill steps carrying a cohort's prompts
(fixed lengths finish and return together) beside the others' decodes, and decode-only steps
(:func:`~planner.formulas.serving_cohort.closed_loop_step_s`); the mean step gives the
throughput, a
request's TPOT holds only the other cohorts' prefill steps, its TTFT its own prefill steps, and
the first wave of a benchmark (its first ``B`` requests sent at once) queues for each other's
prefill (:func:`~planner.formulas.serving_cohort.wave_ttft_mean_s`). A prefill-first scheduler
(SGLang, :func:`~planner.formulas.serving_cohort.prefill_first`) runs waiting prompts in
prefill-only steps before any decode, so a closed loop of fixed lengths keeps its cohort whole
cycle after cycle: every cycle is a wave, a request's TTFT the prefill-only steps of the prompts
ahead of it in its cohort (:func:`~planner.formulas.serving_cohort.cohort_ttft_steps`,
:func:`~planner.formulas.serving_cohort.prefill_only_step_s`) and its TPOT holds the rest of
the cohort's prefill-only steps. tests/formulas/test_scheduler_sim.py checks these closed forms
against a step-by-step scheduler simulation (:mod:`planner.formulas.scheduler_sim`) of both
policies.

Requests that arrive over HTTP also pass the engine's front end (:mod:`planner.formulas.frontends`:
per server its per-request and per-streamed-token work, serialized in one process, pipelined
over two, or not serialized at all), which caps a replica at
``1 / (request work + G * per-token work)`` requests/s (one process) and whose path adds
``request_latency_effective_s`` to every TTFT; the offline mode has no front end.

TP all-reduce: two per layer (after attention and after the MLP), ring algorithm moving
``2*(tp-1)/tp * d * b`` bytes per token over the per-direction link bandwidth (``interconnect/2
* collective_efficiency``); with data-parallel attention (``attention_dp_number``) there is no
TP all-reduce. MoE layers exchange tokens as the engine does
(:mod:`planner.formulas.expert_parallel`): under TP attention not at all (the layer's
all-reduce sums the experts' partial outputs, whatever ``ep``), under attention DP by an
all-gather before the experts and a reduce-scatter after them, or by a dispatch and a combine
all-to-all (``k (ep-1)/ep * d * b`` per token of each GPU) where TRT-LLM's NVL72 path applies,
each over the link the group spans, two collectives per layer. Weights read per step follow
:func:`planner.formulas.latency.expert_touch_fraction` for MoE, and with experts spread over
``ep`` ranks every step is the busiest rank's: the share of its own experts it reads and its
routed-expert work beyond the mean GPU's
(:func:`~planner.formulas.serving_step._busiest_rank_extra_s`,
:mod:`planner.formulas.expert_parallel`; exactly 0 for one rank). Weight-only quantization
(int4/fp8 on parts without fp8) reads the quantized bytes and multiplies at the 16-bit peak
(``gpu_flops_per_s`` is already resolved that way by ``compute_dtype``).

Pipeline parallelism: ``pp`` micro-batches are in flight (vLLM's batch queue, SGLang and TRT-LLM
micro-batching); a micro-batch carries ``1/pp`` of the step's work through the stages one after
another (the latency module's convention: weights and FLOPs summed over stages), so a step (one
output token for every running sequence) takes the pass time of a micro-batch plus ``pp - 1``
point-to-point latencies; stage imbalance and warm-up/drain bubbles are not modelled.

Saturation: the running batch is capped by ``max_num_seqs_effective`` and by the KV pool
(``engine_token_capacity / mean context``), and the step by the token budget, so
``x_sat = min(B_max / residence_steps, pp * max_num_batched_tokens / (S + G - 1))`` and the
replica completes ``x_sat / step(x_sat)`` requests per second.

Open loop (Poisson arrivals at ``target_requests_per_s``, spread evenly over the replicas): the
step time solves ``t = step(rate * t)``. ``step`` is the maximum of two lines in ``x`` except for
the expert-touch term, so each of the six iteration columns ``serving_step_1_s`` ..
``serving_step_6_s`` is a Newton step: the touched-expert share is replaced by its tangent at the
previous iterate, so both branches are lines in ``t`` and
``t = max(F/(1 - r*(C+Q)), (F + W0)/(1 - r*(K+Q) - W'))`` in closed form. Dense models are exact
after the first iteration; MoE converges quadratically (the touched share is concave).

Queueing for a running slot (open loop): M/M/c with ``c = B_max`` slots and the saturation rate
as total service rate; mean queue length by Sakasegawa's approximation ``Lq = rho^sqrt(2(c+1)) /
(1 - rho)`` (H. Sakasegawa, "An approximation formula Lq ≈ α·ρ^β/(1-ρ)", Ann. Inst. Stat. Math.
29, 1977), scaled by the Allen-Cunneen factor ``(1 + scv_service)/2`` for non-exponential
service (Poisson arrivals: ``scv_arrival = 1``). The wait is 0 with probability ``1 - P_wait``
(``P_wait = Lq (1 - rho)/rho``) and exponential with mean ``1/(mu - lambda)`` otherwise, so the
p-quantile is ``max(0, (ln P_wait + ln(1/(1-p))) / (mu - lambda))``; ``ln z`` is taken as
``-(1-z)/sqrt(z)`` (within 2 % for ``z >= 0.5``, where a wait quantile is non-zero; no LN in the
operator set). At ``rho >= 1`` the queue grows without bound: waits are reported as
:data:`~planner.formulas.serving_load.QUEUE_WAIT_CAP_S` and ``overloaded`` is true.

Closed loop (``concurrency`` clients, ``vllm bench serve --max-concurrency``): the batch is
``min(concurrency/replicas, B_max)``, no fixed point is needed, and clients beyond the batch
wait ``(M - B) / throughput`` (Little's law). ``concurrency = 0`` with no target rate is the
offline maximum (closed loop at ``B_max``).

Where the formulas live (issue 27: no module over 500 lines), lowest first:
:mod:`planner.formulas.serving_load` (the load mode, the offered rate, the aggregated /
disaggregated switch of the contract outputs); :mod:`planner.formulas.serving_step` (the
per-request and per-token figures and one step's operators); this module (what a running slot
holds and reads of the KV cache: ``max_running_batch``, ``serving_kv_memory_s_per_request``,
and the output-length spread term they share, ``_slot_context_extra_tokens``, which
tests/formulas/test_output_cv.py replaces here to show that ``cv = 0`` adds exactly 0);
:mod:`planner.formulas.serving_cohort` (a closed loop's cohorts and steps, TPOT, the prefill
service and the first wave); :mod:`planner.formulas.serving_queue` (the front end, the slot
queue, TTFT and throughput); :mod:`planner.formulas.serving_operating` (saturation, the open
loop's fixed point and the operating step). The column order is
:data:`planner.formulas.serving_columns.SERVING`. This module also re-exports the names the
tests and older callers reach as ``serving.NAME``.
"""

from __future__ import annotations

from planner.formulas.engine_memory import ENGINES
from planner.formulas.ops import Value, floor, maximum, minimum, safe_div, where
from planner.formulas.serving_cohort import _cohort_tokens as _cohort_tokens
from planner.formulas.serving_cohort import tpot_mean_s as tpot_mean_s
from planner.formulas.serving_load import CLOSED_LOOP as CLOSED_LOOP
from planner.formulas.serving_load import OFFLINE as OFFLINE
from planner.formulas.serving_load import OPEN_LOOP as OPEN_LOOP
from planner.formulas.serving_load import QUEUE_WAIT_CAP_S as QUEUE_WAIT_CAP_S
from planner.formulas.serving_operating import _fixed_point_step as _fixed_point_step
from planner.formulas.serving_step import _step_kind_s as _step_kind_s
from planner.formulas.serving_step import step_seconds_at as step_seconds_at


def _slot_context_extra_tokens(output_tokens: Value, output_tokens_cv: Value) -> Value:
    """Extra KV tokens a running slot holds on average when output lengths vary, over the
    fixed-length mean context ``S + G/2``: ``G * cv^2 / 2`` (0 for ``cv = 0``).

    A request of output length ``g`` holds its slot for ``g`` decode steps at a context
    growing from ``S`` to ``S + g``; slots are sampled in proportion to residence, so the mean
    context of a running slot is ``S + E[g^2] / (2 E[g]) = S + G (1 + cv^2) / 2``
    (``E[g^2] = G^2 (1 + cv^2)``; the inspection paradox: long requests occupy more of the
    slots). The same sum gives the KV read traffic per request, ``G (S + G (1 + cv^2)/2)``
    on average. Not a scenario column: the two formulas that use it inline it, so ``cv = 0``
    adds exactly 0."""
    return output_tokens * output_tokens_cv * output_tokens_cv / 2


def max_running_batch(max_num_seqs_effective: Value, engine_token_capacity: Value,
                      mean_decode_context_tokens: Value, engine_state_tokens: Value,
                      output_tokens: Value, output_tokens_cv: Value, engine_code: Value,
                      prompt_tokens: Value, prefix_cache_shared_tokens: Value,
                      spec_kv_token_factor: Value, spec_draft_tokens_effective: Value) -> Value:
    """Most requests running at once:
    ``min(max_num_seqs, floor(KV tokens / (mean slot context + state tokens)))``, at least 1
    (the KV pool holds a running request at its residence-weighted mean context ``S + G(1 +
    cv^2)/2``, :func:`_slot_context_extra_tokens`, ``S + G/2`` for fixed lengths: vLLM
    allocates blocks as sequences grow; a linear-attention model's fixed state takes
    ``engine_state_tokens`` more each). A cached prefix shared by the running requests is
    held once (``prefix_cache_shared_tokens`` off the pool and off each slot); speculative
    decoding holds ``k`` lookahead slots per sequence and the MTP layer's KV
    (``spec_kv_token_factor`` pool tokens per context token).

    TensorRT-LLM admits a request only when the KV for its whole length is free: its default
    capacity scheduler, ``GUARANTEED_NO_EVICT`` ("guarantee that a started request is never
    paused", TensorRT-LLM docs, performance tuning guide, "Useful Runtime Options"; the blocks
    reserved are ``ceil((prompt + max output tokens) / block)``), so a running request holds
    ``S + G`` tokens of the pool, not its mean context (``G`` the request's output length, the
    ``max_tokens`` a benchmark sets with ``ignore_eos``)."""
    context = mean_decode_context_tokens + _slot_context_extra_tokens(output_tokens,
                                                                     output_tokens_cv)
    context = where(engine_code == ENGINES["trtllm"],
                    maximum(prompt_tokens + output_tokens, context), context)
    shared = prefix_cache_shared_tokens * spec_kv_token_factor
    slot = (context - prefix_cache_shared_tokens + spec_draft_tokens_effective) \
        * spec_kv_token_factor
    by_kv = safe_div(engine_token_capacity - shared, slot + engine_state_tokens, 0.0)
    return maximum(1, minimum(max_num_seqs_effective, floor(by_kv)))


def serving_kv_memory_s_per_request(output_tokens: Value, prefill_tokens_computed: Value,
                                    decode_steps_per_request: Value,
                                    spec_draft_kv_s_per_step: Value,
                                    mean_decode_context_tokens: Value,
                                    output_tokens_cv: Value,
                                    kv_bytes_per_token: Value, kv_fraction_per_gpu: Value,
                                    state_bytes_per_sequence: Value, tp_state_fraction: Value,
                                    gpu_bandwidth_bytes_per_s: Value,
                                    bandwidth_efficiency_effective: Value) -> Value:
    """Memory seconds of one request's KV traffic on one GPU: ``G - 1`` decode steps each
    reading the mean slot context (``S + G(1 + cv^2)/2``, :func:`_slot_context_extra_tokens`:
    a long request reads a longer context for more steps), plus writing its ``S + G - 1``
    tokens once; with linear-attention layers, each of the ``G - 1`` decode steps also reads
    and writes the fixed state (``2 * state * tp_state_fraction``). Under speculative
    decoding the reads happen once per step, ``(G - 1)/a`` times, and the drafter's own KV
    reads add ``spec_draft_kv_s_per_step`` a step; a prefix-cache hit writes only the
    computed prompt tokens."""
    context = mean_decode_context_tokens + _slot_context_extra_tokens(output_tokens,
                                                                     output_tokens_cv)
    tokens = decode_steps_per_request * context + prefill_tokens_computed + output_tokens - 1
    state = 2 * decode_steps_per_request * state_bytes_per_sequence * tp_state_fraction
    return (tokens * kv_bytes_per_token * kv_fraction_per_gpu + state) / (
        gpu_bandwidth_bytes_per_s * bandwidth_efficiency_effective) \
        + decode_steps_per_request * spec_draft_kv_s_per_step
