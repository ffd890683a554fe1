"""Continuous batching under load: engine step time, saturation, the running batch at a request
rate, and latency at that load.

Every public function is a scenario column over the operator set (:mod:`planner.estimator.ops`);
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
do not overlap the matmuls, so they add). That average step is the open loop's (Poisson
arrivals spread the prompts over the steps). A closed loop and the offline maximum run two
kinds of step, each a sum of operators bound by their own limits (:func:`_step_kind_s`: the
GEMMs by ``max(FLOPs, weights touched)``, prefill attention by its FLOPs, decode attention by
the KV each sequence reads, element-wise work, collectives, the fixed step): prefill steps
carrying a cohort's prompts (fixed lengths finish and return together) beside the others'
decodes, and decode-only steps (:func:`_mixed_step_s`); the mean step gives the throughput,
a request's TPOT holds only the other cohorts' prefill steps, its TTFT its own prefill steps,
and the first wave of a benchmark (its first ``B`` requests sent at once) queues for each
other's prefill (:func:`wave_ttft_mean_s`). A prefill-first scheduler (SGLang,
:func:`prefill_first`) runs waiting prompts in prefill-only steps before any decode, so a
closed loop of fixed lengths keeps its cohort whole cycle after cycle: every cycle is a wave,
a request's TTFT the prefill-only steps of the prompts ahead of it in its cohort
(:func:`cohort_ttft_steps`, :func:`prefill_only_step_s`) and its TPOT holds the rest of the
cohort's prefill-only steps. tests/formulas/test_scheduler_sim.py checks these closed forms against
a step-by-step scheduler simulation (:mod:`planner.estimator.scheduler_sim`) of both policies.

Requests that arrive over HTTP also pass the engine's front end (:mod:`planner.estimator.frontends`:
per server its per-request and per-streamed-token work, serialized in one process, pipelined
over two, or not serialized at all), which caps a replica at
``1 / (request work + G * per-token work)`` requests/s (one process) and whose path adds
``request_latency_effective_s`` to every TTFT; the offline mode has no front end.

TP all-reduce: two per layer (after attention and after the MLP), ring algorithm moving
``2*(tp-1)/tp * d * b`` bytes per token over the per-direction link bandwidth
(``interconnect/2 * collective_efficiency``); with data-parallel attention
(``attention_dp_number``) there is no TP all-reduce. MoE layers exchange tokens as the engine
does (:mod:`planner.estimator.expert_parallel`): under TP attention not at all (the layer's
all-reduce sums the experts' partial outputs, whatever ``ep``), under attention DP by an
all-gather before the experts and a reduce-scatter after them, or by a dispatch and a combine
all-to-all (``k (ep-1)/ep * d * b`` per token of each GPU) where TRT-LLM's NVL72 path applies,
each over the link the group spans, two collectives per layer. Weights
read per step follow :func:`planner.estimator.latency.expert_touch_fraction` for MoE, and with
experts spread over ``ep`` ranks every step is the busiest rank's: the share of its own experts
it reads and its routed-expert work beyond the mean GPU's (:func:`_busiest_rank_extra_s`,
:mod:`planner.estimator.expert_parallel`; exactly 0 for one rank). Weight-only
quantization (int4/fp8 on parts without fp8) reads the quantized bytes and multiplies at the
16-bit peak (``gpu_flops_per_s`` is already resolved that way by ``compute_dtype``).

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
as total service rate; mean queue length by Sakasegawa's approximation
``Lq = rho^sqrt(2(c+1)) / (1 - rho)`` (H. Sakasegawa, "An approximation formula
Lq ≈ α·ρ^β/(1-ρ)", Ann. Inst. Stat. Math. 29, 1977), scaled by the Allen-Cunneen factor
``(1 + scv_service)/2`` for non-exponential service (Poisson arrivals: ``scv_arrival = 1``). The
wait is 0 with probability ``1 - P_wait`` (``P_wait = Lq (1 - rho)/rho``) and exponential with
mean ``1/(mu - lambda)`` otherwise, so the p-quantile is
``max(0, (ln P_wait + ln(1/(1-p))) / (mu - lambda))``; ``ln z`` is taken as ``-(1-z)/sqrt(z)``
(within 2 % for ``z >= 0.5``, where a wait quantile is non-zero; no LN in the operator set).
At ``rho >= 1`` the queue grows without bound: waits are reported as :data:`QUEUE_WAIT_CAP_S`
and ``overloaded`` is true.

Closed loop (``concurrency`` clients, ``vllm bench serve --max-concurrency``): the batch is
``min(concurrency/replicas, B_max)``, no fixed point is needed, and clients beyond the batch
wait ``(M - B) / throughput`` (Little's law). ``concurrency = 0`` with no target rate is the
offline maximum (closed loop at ``B_max``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from planner.estimator.engine_memory import ENGINES, ROOFLINE
from planner.estimator.expert_parallel import (
    busiest_rank_expert_tokens_extra,
    busiest_rank_touch_extra,
)
from planner.estimator.frontends import (
    ENGINE_FRONTENDS,
    FRONTENDS,
    SPLIT,
    UNCAPPED,
    frontend_figure,
)
from planner.estimator.latency import expert_touch_fraction
from planner.estimator.ops import (
    Value,
    ceil,
    floor,
    maximum,
    minimum,
    power,
    safe_div,
    where,
)
from planner.estimator.speculative import per_output_token

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
"""serving_mode_code of a disaggregated deployment (:mod:`planner.estimator.disagg`)."""


def _pick(serving_mode_code: Value, disaggregated: Value, aggregated: Value) -> Value:
    """A contract output's switch: the disaggregated figure where ``serving_mode`` is
    disaggregated, else the aggregated one unchanged (``where`` returns it bit for bit)."""
    return where(serving_mode_code == DISAGGREGATED, disaggregated, aggregated)


def matmul_efficiency_effective(matmul_efficiency: Value, gpu_matmul_efficiency: Value) -> Value:
    """Achievable share of the tensor peak: the scenario's value, else the GPU catalog's."""
    return where(matmul_efficiency > 0, matmul_efficiency, gpu_matmul_efficiency)


def bandwidth_efficiency_effective(bandwidth_efficiency: Value,
                                   gpu_bandwidth_efficiency: Value) -> Value:
    """Achievable share of memory bandwidth: the scenario's value, else the GPU catalog's."""
    return where(bandwidth_efficiency > 0, bandwidth_efficiency, gpu_bandwidth_efficiency)


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


def request_tokens(prefill_tokens_computed: Value, decode_steps_per_request: Value,
                   spec_verify_tokens: Value) -> Value:
    """Tokens a request puts through the engine: ``S`` prefill + ``G - 1`` decode (the
    prefill the prefix cache leaves, :mod:`planner.estimator.prefix_cache`; under speculative
    decoding ``(G - 1)/a`` steps of ``k + 1`` verified tokens,
    :mod:`planner.estimator.speculative`)."""
    return prefill_tokens_computed + decode_steps_per_request * spec_verify_tokens


def prefill_steps_per_request(prefill_tokens_computed: Value,
                              max_num_batched_tokens_effective: Value) -> Value:
    """Steps a prompt's prefill spans under chunked prefill: ``ceil(S / budget)``, at least 1."""
    return maximum(1, ceil(prefill_tokens_computed / max_num_batched_tokens_effective))


def residence_steps(prefill_steps_per_request: Value, decode_steps_per_request: Value
                    ) -> Value:
    """Steps a request holds a running slot: its prefill steps then ``G - 1`` decode steps
    (``(G - 1)/a`` under speculative decoding)."""
    return prefill_steps_per_request + decode_steps_per_request


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


def serving_compute_s_per_request(serving_request_flops: Value, tp: Value, gpu_flops_per_s: Value,
                                  matmul_efficiency_effective: Value) -> Value:
    """Compute seconds one request adds to the steps it runs in:
    ``serving_request_flops / (tp * peak * efficiency)``."""
    return serving_request_flops / (tp * gpu_flops_per_s * matmul_efficiency_effective)


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


def serving_dense_weights_s(model_matmul_dense_params: Value, model_lm_head_matmul_params: Value,
                            weight_bits_effective: Value, embedding_bits: Value, tp: Value,
                            pp: Value, attention_replicated_bytes_per_gpu: Value,
                            gpu_bandwidth_bytes_per_s: Value,
                            bandwidth_efficiency_effective: Value) -> Value:
    """Seconds to read the weights every step reads (dense matmuls + LM head, plus attention
    weights replicated by data-parallel attention) on one GPU, summed over pipeline stages."""
    return ((model_matmul_dense_params * weight_bits_effective / 8
             + model_lm_head_matmul_params * embedding_bits / 8) / tp
            + attention_replicated_bytes_per_gpu * pp) / (
        gpu_bandwidth_bytes_per_s * bandwidth_efficiency_effective)


def serving_expert_weights_s(model_matmul_experts_params: Value, weight_bits_effective: Value,
                             tp: Value, gpu_bandwidth_bytes_per_s: Value,
                             bandwidth_efficiency_effective: Value) -> Value:
    """Seconds to read all routed experts on one GPU (a step reads the touched share)."""
    return (model_matmul_experts_params * weight_bits_effective / 8 / tp
            / (gpu_bandwidth_bytes_per_s * bandwidth_efficiency_effective))


def serving_comm_s_per_token(tp: Value, attention_dp_number: Value, model_layers: Value,
                             model_hidden_size: Value, activation_bytes: Value,
                             tp_link_bytes_per_s: Value, collective_efficiency: Value,
                             moe_comm_s_per_token: Value) -> Value:
    """Interconnect seconds per token on one GPU: two ring all-reduces per layer under TP,
    ``2*(tp-1)/tp*d*b`` bytes each over the per-direction bandwidth of the link the TP group
    really crosses (:func:`planner.estimator.topology.tp_link_bytes_per_s`: NVLink inside the
    scale-up domain, PCIe for a larger group of PCIe cards, the NIC between hosts) times
    ``efficiency``; data-parallel attention (``attention_dp_number``) has no TP all-reduce,
    each GPU attends for its own requests. Plus the MoE layer's own token exchange
    (:func:`planner.estimator.expert_parallel.moe_comm_s_per_token`: none under TP attention,
    whose all-reduce sums the experts' outputs; all-gather / reduce-scatter or all-to-all under
    attention DP)."""
    allreduce = where(attention_dp_number > 0, 0,
                      2 * model_layers * 2 * (tp - 1) / tp * model_hidden_size * activation_bytes)
    return (safe_div(allreduce, tp_link_bytes_per_s * collective_efficiency, 0.0)
            + moe_comm_s_per_token)


def serving_activation_s_per_token(model_layers: Value, model_hidden_size: Value,
                                   ffn_width_per_token: Value, tp: Value,
                                   activation_bytes: Value, gpu_bandwidth_bytes_per_s: Value,
                                   bandwidth_efficiency_effective: Value) -> Value:
    """Seconds per token of the element-wise kernels between the GEMMs, which stream
    activations through memory and do not overlap the matmuls: per layer two fused
    add+RMSNorm (read residual and input, write both: 4d each), rotary embedding on Q and K
    (~2d) and the gated activation (read 2I, write I: the ``ffn_width`` 3I), i.e.
    ``L * (10*d + 3I/tp) * b / (bandwidth * efficiency)``."""
    elems = model_layers * (10 * model_hidden_size + ffn_width_per_token / tp)
    return elems * activation_bytes / (gpu_bandwidth_bytes_per_s
                                       * bandwidth_efficiency_effective)


def serving_token_s(serving_comm_s_per_token: Value,
                    serving_activation_s_per_token: Value) -> Value:
    """Per-token time added to a step outside ``max(compute, memory)``: interconnect plus
    element-wise kernels."""
    return serving_comm_s_per_token + serving_activation_s_per_token


DENSE_LAYER_KERNELS = 9
"""GPU kernels of the dense decoder layer ``kernel_overhead_s_per_layer`` stands for (vLLM
``llama.py`` with CUDA graphs: fused add + RMSNorm, QKV GEMM, rotary embedding, attention,
output GEMM, fused add + RMSNorm, gate-up GEMM, ``silu_and_mul``, down GEMM; ~9-10 kernels x
~4 us)."""


def _layer_kernel_s(kernel_overhead_s_per_layer: Value, model_layer_kernels: Value) -> Value:
    """Launch-and-tail time of one decoder layer's kernels per step: each kernel is launched
    and drained once per layer whatever the batch, so a layer of ``k`` kernels
    (``model_layer_kernels``, :func:`planner.estimator.figures.layer_kernels`: MoE, shared
    experts, MLA and query/key norms run more than a dense layer) takes
    ``kernel_overhead_s_per_layer * k / DENSE_LAYER_KERNELS``."""
    return kernel_overhead_s_per_layer * model_layer_kernels / DENSE_LAYER_KERNELS


def serving_step_fixed_s(collective_latency_s_per_step: Value, model_layers: Value,
                         engine_step_overhead_s: Value,
                         kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                         host_weight_stream_s: Value, spec_draft_fixed_s: Value) -> Value:
    """Per-step time independent of the batch: engine overhead, the layers' kernel launch and
    tail time (:func:`_layer_kernel_s`: an MoE layer runs more kernels), the latency of the
    step's collectives (:func:`planner.estimator.expert_parallel.collective_latency_s_per_step`:
    2 all-reduces per layer under TP, 2 MoE exchange collectives per layer under attention DP,
    ``pp - 1`` pipeline hand-offs), and the stream of weights offloaded to host memory
    (:func:`planner.estimator.offload.host_weight_stream_s`, 0 without offload), and the
    drafter's passes under speculative decoding
    (:func:`planner.estimator.speculative.spec_draft_fixed_s`, 0 without)."""
    return (engine_step_overhead_s
            + model_layers * _layer_kernel_s(kernel_overhead_s_per_layer, model_layer_kernels)
            + collective_latency_s_per_step) + host_weight_stream_s + spec_draft_fixed_s


def _busiest_rank_extra_s(tokens: Value, serving_expert_weights_s: Value,
                          expert_gemm_s_per_token: Value, model_experts: Value,
                          model_experts_per_token: Value, expert_ranks: Value,
                          expert_rank_max_sd: Value) -> tuple[Value, Value]:
    """(compute, memory) seconds the busiest expert-parallel rank adds to a step of
    ``tokens`` tokens over the mean GPU (:mod:`planner.estimator.expert_parallel`): its extra
    routed-expert GEMM work and the extra share of its experts it reads; both exactly 0 for
    one rank."""
    compute = expert_gemm_s_per_token * busiest_rank_expert_tokens_extra(
        tokens, model_experts, model_experts_per_token, expert_ranks, expert_rank_max_sd)
    memory = serving_expert_weights_s * busiest_rank_touch_extra(
        tokens, model_experts, model_experts_per_token, expert_ranks, expert_rank_max_sd)
    return compute, memory


def step_seconds_at(x: Value, request_tokens: Value, serving_compute_s_per_request: Value,
                    serving_kv_memory_s_per_request: Value, serving_token_s: Value,
                    serving_step_fixed_s: Value, serving_dense_weights_s: Value,
                    serving_expert_weights_s: Value, model_experts: Value,
                    model_experts_per_token: Value, expert_gemm_s_per_token: Value = 0,
                    expert_ranks: Value = 1, expert_rank_max_sd: Value = 0) -> Value:
    """Step time when the step carries ``x`` requests' worth of work (module docstring), on
    the busiest expert-parallel rank (:func:`_busiest_rank_extra_s`)."""
    tokens = maximum(x * request_tokens, 1)
    extra_c, extra_m = _busiest_rank_extra_s(tokens, serving_expert_weights_s,
                                             expert_gemm_s_per_token, model_experts,
                                             model_experts_per_token, expert_ranks,
                                             expert_rank_max_sd)
    weights = serving_dense_weights_s + serving_expert_weights_s * expert_touch_fraction(
        tokens, model_experts, model_experts_per_token) + extra_m
    compute = x * serving_compute_s_per_request + extra_c
    memory = weights + x * serving_kv_memory_s_per_request
    return maximum(compute, memory) + x * request_tokens * serving_token_s \
        + serving_step_fixed_s


def prefill_compute_s_per_token(prefill_flops_computed: Value, prefill_tokens_computed: Value,
                                tp: Value,
                                gpu_flops_per_s: Value,
                                matmul_efficiency_effective: Value) -> Value:
    """Compute seconds of one prompt token in a prefill chunk: the prompt's FLOPs (matmuls,
    attention core by the named convention, its logits) over ``S``, at the achievable share of
    the peak: ``prefill_flops_computed / S / (tp * peak * efficiency)``."""
    return prefill_flops_computed / prefill_tokens_computed / (
        tp * gpu_flops_per_s * matmul_efficiency_effective)


def decode_compute_s_per_token(serving_decode_flops: Value, decode_steps_per_request: Value,
                               tp: Value,
                               gpu_flops_per_s: Value,
                               matmul_efficiency_effective: Value) -> Value:
    """Compute seconds of one decode token at the request's mean context:
    ``decode_flops / (G - 1) / (tp * peak * efficiency)`` (0 when ``G = 1``); under
    speculative decoding one sequence's verify step of ``k + 1`` tokens and its drafts
    (:func:`planner.estimator.speculative.serving_decode_flops` over the steps)."""
    return safe_div(serving_decode_flops, decode_steps_per_request, 0.0) / (
        tp * gpu_flops_per_s * matmul_efficiency_effective)


def gemm_s_per_token(matmul_params_per_token: Value, tp: Value, gpu_flops_per_s: Value,
                     matmul_efficiency_effective: Value) -> Value:
    """Compute seconds of the layer GEMMs one token runs (QKV and output projections, MLP
    or its routed and shared experts, router): ``2 * P_linear / (tp * peak * efficiency)``."""
    return 2 * matmul_params_per_token / (tp * gpu_flops_per_s * matmul_efficiency_effective)


def lm_head_s_per_token(model_lm_head_matmul_params: Value, tp: Value, gpu_flops_per_s: Value,
                        matmul_efficiency_effective: Value) -> Value:
    """Compute seconds of the logits of one sampled token (once per sequence per step):
    ``2 * V * d / (tp * peak * efficiency)``."""
    return 2 * model_lm_head_matmul_params / (tp * gpu_flops_per_s
                                              * matmul_efficiency_effective)


def decode_kv_s_per_token(serving_kv_memory_s_per_request: Value,
                          decode_steps_per_request: Value) -> Value:
    """Memory seconds of the KV traffic of one decode token (its read of the slot's mean
    context, and the request's KV writes spread over its decode steps):
    ``serving_kv_memory_s_per_request / (G - 1)`` (0 when ``G = 1``)."""
    return safe_div(serving_kv_memory_s_per_request, decode_steps_per_request, 0.0)


def _step_kind_s(prefill_tokens: Value, decode_tokens: Value, prefill_compute: Value,
                 decode_compute: Value, decode_kv: Value, token_s: Value, fixed: Value,
                 dense: Value, experts: Value, model_experts: Value,
                 model_experts_per_token: Value, gemm: Value, lm_head: Value,
                 verify: Value = 1, expert_gemm: Value = 0, expert_ranks: Value = 1,
                 expert_rank_max_sd: Value = 0) -> Value:
    """One step carrying ``p = prefill_tokens`` prompt tokens and ``d = decode_tokens``
    decodes, as the operators run one after another, each bound by its own limit:

    * the GEMMs (projections, MLP or experts, router; LM head for decodes):
      ``max((p + d) * gemm + d * lm_head, weights touched)``, on the busiest of
      ``expert_ranks`` expert-parallel ranks (:mod:`planner.estimator.expert_parallel`: its
      extra routed-expert work, ``expert_gemm`` a token, and the extra share of its experts
      it reads; both exactly 0 for one rank);
    * attention: the prefill chunks by their core FLOPs, ``p * (prefill compute - gemm)``,
      then the decodes by the KV each reads, ``max(d * core FLOPs, d * KV)``;
    * element-wise work and collectives per token, ``(p + d) * token_s``; the fixed step.

    Under speculative decoding each decode is ``verify = k + 1`` tokens for the GEMMs, the
    LM head, element-wise work and collectives, and one KV read with ``k + 1`` queries
    (``decode_compute`` is then the whole verify step's and the drafts')."""
    decode_tokens_through = decode_tokens * verify
    tokens = maximum(prefill_tokens + decode_tokens_through, 1)
    weights = dense + experts * (
        expert_touch_fraction(tokens, model_experts, model_experts_per_token)
        + busiest_rank_touch_extra(tokens, model_experts, model_experts_per_token,
                                   expert_ranks, expert_rank_max_sd))
    gemms = maximum((prefill_tokens + decode_tokens_through) * gemm
                    + decode_tokens_through * lm_head
                    + expert_gemm * busiest_rank_expert_tokens_extra(
                        tokens, model_experts, model_experts_per_token, expert_ranks,
                        expert_rank_max_sd), weights)
    prefill_attention = prefill_tokens * maximum(prefill_compute - gemm, 0)
    decode_attention = decode_tokens * maximum(
        maximum(decode_compute - verify * gemm - verify * lm_head, 0), decode_kv)
    return (gemms + prefill_attention + decode_attention
            + (prefill_tokens + decode_tokens_through) * token_s + fixed)


def _cohort_tokens(batch: Value, prompt_tokens: Value, budget: Value, cv: Value,
                   arrivals: Value) -> Value:
    """Prompt tokens a prefill step carries in a closed loop of ``batch`` running requests
    completing ``arrivals`` requests per step.

    Fixed lengths (``output_tokens_cv = 0``): ``min(batch * S, budget)``. Requests that
    finish together return together and prefill in the same steps (a cohort), so the waves of
    a benchmark's start persist: each prefill step holds the prompts of a whole cohort, up to
    the budget (tests/formulas/test_scheduler_sim.py plays it step by step; where the budget cuts a
    cohort's last prompt, cohorts split and merge over the run, which this does not follow:
    the steady TTFT there is within the ranges that test states, not 5 %).

    Varying output lengths spread the completions, so the clients' next requests reach the
    engine at independent steps: a request's prefill step holds its own prompt and those of
    the others that arrived at the same step boundary, on average ``arrivals`` more (the
    completions of one step are near Poisson with mean ``x = arrivals``, and given one, the
    others' count keeps that mean): ``min((1 + x) S, budget)``. The share of prefill steps,
    ``x S / n``, then keeps the prompt tokens per step at ``x S``. At ``x`` well below 1 this
    is one prompt per prefill step; at ``x`` near 1 (many clients, short outputs) the step
    carries two, which is the wait of a new request behind the others' prompts in the budget
    (tests/formulas/test_scheduler_sim.py, lengths drawn as InferenceX's client draws them)."""
    cohort = where(cv > 0, 1 + arrivals, batch)
    return maximum(minimum(cohort * prompt_tokens, budget), 1)


def _prefill_step_tokens(batch: Value, prompt_tokens: Value, budget: Value, cv: Value,
                         arrivals: Value) -> tuple[Value, Value]:
    """(prompt tokens, decodes) of a closed loop's prefill step: the cohort's chunks
    (:func:`_cohort_tokens`) in what the decodes of the other requests leave of the budget
    (decodes are scheduled first)."""
    cohort = _cohort_tokens(batch, prompt_tokens, budget, cv, arrivals)
    others = maximum(batch - cohort / prompt_tokens, 0)
    return maximum(minimum(cohort, budget - minimum(others, budget - 1)), 1), others


def _mixed_step_s(batch: Value, x: Value, prompt_tokens: Value, budget: Value, pp: Value,
                  prefill_compute: Value, decode_compute: Value, decode_kv: Value,
                  token_s: Value, fixed: Value, dense: Value, experts: Value,
                  model_experts: Value, model_experts_per_token: Value, gemm: Value,
                  lm_head: Value, residence: Value, cv: Value, kind: str = "mean",
                  verify: Value = 1, expert_gemm: Value = 0, expert_ranks: Value = 1,
                  expert_rank_max_sd: Value = 0) -> Value:
    """The ``kind`` (``mean``, ``prefill`` or ``decode``) step of a closed loop of ``batch`` running
    requests completing ``x`` requests per step: a share ``f = min(1, x S / n)`` of the steps
    carries a cohort's ``n`` prompt tokens (:func:`_cohort_tokens`) beside the decodes of the
    others; the rest are decode-only steps of the whole batch, each bound by its own limit
    (a prefill step by compute, a decode step by the weights and KV it reads), so the mean
    step is ``f * prefill + (1 - f) * decode``, not one step of the average mix. One
    micro-batch carries ``1/pp`` of each. The running batch is at most what the token budget
    keeps busy, ``x * residence_steps``."""
    batch = minimum(batch, maximum(x * residence, 1))
    n, others = _prefill_step_tokens(batch, prompt_tokens, budget, cv, x)
    prefill = decode = 0.0
    if kind != "decode":
        prefill = _step_kind_s(n / pp, others / pp, prefill_compute, decode_compute, decode_kv,
                               token_s, fixed, dense, experts, model_experts,
                               model_experts_per_token, gemm, lm_head, verify, expert_gemm,
                               expert_ranks, expert_rank_max_sd)
    if kind != "prefill":
        decode = _step_kind_s(0, batch / pp, prefill_compute, decode_compute, decode_kv,
                              token_s, fixed, dense, experts, model_experts,
                              model_experts_per_token, gemm, lm_head, verify, expert_gemm,
                              expert_ranks, expert_rank_max_sd)
    if kind == "prefill":
        return prefill
    if kind == "decode":
        return decode
    return _prefill_share(x, prompt_tokens, n) * (prefill - decode) + decode


def _prefill_share(x: Value, prompt_tokens: Value, n: Value) -> Value:
    """Share of a closed loop's steps that are prefill steps: ``min(x S / n, 1)``."""
    return minimum(x * prompt_tokens / n, 1)


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
    (:mod:`planner.estimator.step_mix`), the rest decode-only steps of the batch."""
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
    slower pool's capacity (:func:`planner.estimator.disagg.disagg_saturation_requests_per_s`)."""
    return _pick(serving_mode_code, disagg_saturation_requests_per_s,
                 saturation_requests_per_s_replica * replicas)


def saturation_output_tokens_per_s(saturation_requests_per_s: Value,
                                   output_tokens: Value) -> Value:
    """Offline maximum output tokens per second of the deployment:
    ``saturation_requests_per_s * G`` (what ``trtllm-bench throughput`` reports)."""
    return saturation_requests_per_s * output_tokens


def frontend_code(engine_code: Value) -> Value:
    """The front end serving the requests: the engine's own server
    (:data:`planner.estimator.frontends.ENGINE_FRONTENDS`, codes of
    :data:`planner.estimator.frontends.FRONTENDS`)."""
    out: Value = FRONTENDS[ENGINE_FRONTENDS["roofline"]].code
    for engine, server in ENGINE_FRONTENDS.items():
        out = where(engine_code == ENGINES[engine], FRONTENDS[server].code, out)
    return out


def request_latency_effective_s(request_latency_s: Value, frontend_code: Value) -> Value:
    """Front-end latency one request adds to its TTFT: ``request_latency_s`` where above 0,
    else the front end's figure (:mod:`planner.estimator.frontends`)."""
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
    (:mod:`planner.estimator.frontends`): one serialized process
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
    the busier pool's (:func:`planner.estimator.disagg.prefill_utilization`,
    :func:`~planner.estimator.disagg.decode_utilization`), so ``overloaded`` and ``saturated``
    say when either pool cannot keep up."""
    return _pick(serving_mode_code, maximum(prefill_utilization, decode_utilization),
                 replica_request_rate_per_s / serving_capacity_requests_per_s_replica)


def overloaded(load_mode: Value, utilization: Value) -> Value:
    """Open loop at or beyond the saturation rate: the queue grows without bound."""
    return (load_mode == OPEN_LOOP) * (utilization >= 1) > 0


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
    slope_w = where(tokens_per_s * previous > 1, experts * slope_touch * tokens_per_s, 0)
    # the busiest expert rank's extra work (0 for one rank). Its GEMM share grows as
    # sqrt(n) (busiest_rank_expert_tokens_extra), so its tangent is exactly extra_c / (2 n);
    # the extra share of experts it reads is taken at the previous iterate (slope 0): a
    # contraction of a term a few per cent of the step, exact at the fixed point, and it keeps
    # the column's formula short enough for Excel (8,192 characters a formula).
    extra_c, extra_m = _busiest_rank_extra_s(n_prev, experts, expert_gemm, model_experts,
                                             model_experts_per_token, expert_ranks,
                                             expert_rank_max_sd)
    grows = tokens_per_s * previous > 1
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

    def step(*columns: Value) -> Value:
        return _fixed_point_step(*columns)

    step.__name__ = step.__qualname__ = f"serving_step_{k}_s"
    step.__doc__ = (f"Iteration {k}{' (final)' if k == ITERATION_COUNT else ''} of the "
                    "open-loop step time (see :func:`_fixed_point_step`).")
    step.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Value")
         for name in (f"serving_step_{k - 1}_s", *_ITERATION_INPUTS)],
        return_annotation="Value")
    return step


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


def closed_loop_step_s(closed_loop_prefill_step_s: Value, closed_loop_decode_step_s: Value,
                       operating_requests_per_step: Value, prefill_tokens_computed: Value,
                       closed_loop_prefill_tokens: Value) -> Value:
    """Mean step of a closed loop (and of the offline maximum) at its running batch: a share
    ``min(x S / n, 1)`` of prefill steps (``n`` =
    :func:`planner.estimator.step_mix.closed_loop_prefill_tokens`), the rest decode-only
    steps, each bound by its own limit (:func:`_mixed_step_s`)."""
    share = _prefill_share(operating_requests_per_step, prefill_tokens_computed,
                           closed_loop_prefill_tokens)
    return share * (closed_loop_prefill_step_s - closed_loop_decode_step_s) \
        + closed_loop_decode_step_s


def closed_loop_prefill_step_s(closed_loop_prefill_tokens: Value,
                               closed_loop_prefill_decodes: Value, pp: Value,
                               prefill_compute_s_per_token: Value,
                               decode_compute_s_per_token: Value, decode_kv_s_per_token: Value,
                               serving_token_s: Value, serving_step_fixed_s: Value,
                               serving_dense_weights_s: Value, serving_expert_weights_s: Value,
                               model_experts: Value, model_experts_per_token: Value,
                               gemm_s_per_token: Value, lm_head_s_per_token: Value,
                               spec_verify_tokens: Value, expert_gemm_s_per_token: Value,
                               expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """A closed loop's prefill step: its cohort's prompt chunks beside the other requests'
    decodes (:mod:`planner.estimator.step_mix`), one micro-batch of ``1/pp`` of them
    (:func:`_step_kind_s`); a request's TTFT is its prefill steps of this."""
    return _step_kind_s(closed_loop_prefill_tokens / pp, closed_loop_prefill_decodes / pp,
                        prefill_compute_s_per_token, decode_compute_s_per_token,
                        decode_kv_s_per_token, serving_token_s, serving_step_fixed_s,
                        serving_dense_weights_s, serving_expert_weights_s, model_experts,
                        model_experts_per_token, gemm_s_per_token, lm_head_s_per_token,
                        spec_verify_tokens, expert_gemm_s_per_token, expert_ranks,
                        expert_rank_max_sd)


def closed_loop_decode_step_s(closed_loop_batch: Value, operating_requests_per_step: Value,
                              prefill_tokens_computed: Value,
                              max_num_batched_tokens_effective: Value,
                              pp: Value, prefill_compute_s_per_token: Value,
                              decode_compute_s_per_token: Value, decode_kv_s_per_token: Value,
                              serving_token_s: Value, serving_step_fixed_s: Value,
                              serving_dense_weights_s: Value, serving_expert_weights_s: Value,
                              model_experts: Value, model_experts_per_token: Value,
        gemm_s_per_token: Value, lm_head_s_per_token: Value, residence_steps: Value,
        output_tokens_cv: Value, spec_verify_tokens: Value, expert_gemm_s_per_token: Value,
        expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """A closed loop's decode-only step: one token for each running request
    (:func:`_mixed_step_s`)."""
    return _mixed_step_s(
        closed_loop_batch, operating_requests_per_step, prefill_tokens_computed,
        max_num_batched_tokens_effective, pp, prefill_compute_s_per_token,
        decode_compute_s_per_token, decode_kv_s_per_token, serving_token_s,
        serving_step_fixed_s, serving_dense_weights_s, serving_expert_weights_s, model_experts,
        model_experts_per_token, gemm_s_per_token, lm_head_s_per_token, residence_steps,
        output_tokens_cv, "decode", spec_verify_tokens, expert_gemm_s_per_token,
        expert_ranks, expert_rank_max_sd)


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


def tpot_mean_s(load_mode: Value, step_s: Value, running_batch: Value,
                prefill_tokens_computed: Value, output_tokens: Value,
                max_num_batched_tokens_effective: Value, prefill_steps_per_request: Value,
                closed_loop_prefill_step_s: Value, closed_loop_decode_step_s: Value,
                step_host_link_s: Value, output_tokens_cv: Value,
                decode_steps_per_request: Value,
                spec_acceptance_length_effective: Value, prefill_first: Value,
                cohort_ttft_steps: Value, prefill_only_step_s: Value,
                serving_mode_code: Value, disagg_tpot_mean_s: Value,
                operating_requests_per_step: Value) -> Value:
    """Mean time per output token (and inter-token latency) at the operating point
    (disaggregated: the decode pool's step,
    :func:`planner.estimator.disagg.disagg_tpot_mean_s`). Open
    loop: one average step, which carries the average share of other requests' prefill
    chunks. Closed loop and offline: a request's ``G - 1`` decode steps hold the prefill
    steps of the OTHER cohorts, ``p = B S / n - own prefill steps`` per cycle (``n`` prompt
    tokens a prefill step carries), the rest are decode-only:
    ``decode + min(p / (G - 1), 1) * (prefill - decode)`` (its own prefill is in its TTFT,
    not its TPOT). Under speculative decoding a step yields ``a`` tokens per sequence: the
    TPOT is the step over ``a`` (:func:`planner.estimator.speculative.per_output_token`) and a
    request runs ``(G - 1)/a`` decode steps.

    Prefill-first scheduler with fixed lengths (:func:`_cohort_whole`): after its first token
    a request waits out the prefill-only steps of the rest of its cohort, ``B S / n -
    cohort_ttft_steps`` of them (``n = min(B S, budget)``), in which nothing decodes, then
    runs its decode steps with the whole batch: ``decode + that / steps * prefill-only step``
    (the prefill steps add to the decode steps rather than replace them)."""
    n, _others = _prefill_step_tokens(running_batch, prefill_tokens_computed,
                                      max_num_batched_tokens_effective, output_tokens_cv,
                                      operating_requests_per_step)
    others_steps = maximum(running_batch * prefill_tokens_computed / n
                           - prefill_steps_per_request, 0)
    share = minimum(safe_div(others_steps, decode_steps_per_request, 0.0), 1)
    closed = closed_loop_decode_step_s + share * (closed_loop_prefill_step_s
                                                  - closed_loop_decode_step_s)
    cohort_n = maximum(minimum(running_batch * prefill_tokens_computed,
                               max_num_batched_tokens_effective), 1)
    after_first = maximum(running_batch * prefill_tokens_computed / cohort_n
                          - cohort_ttft_steps, 0)
    whole = closed_loop_decode_step_s + safe_div(after_first, decode_steps_per_request, 0.0) \
        * prefill_only_step_s
    closed = where(_cohort_whole(prefill_first, load_mode, output_tokens_cv) > 0, whole, closed)
    return _pick(serving_mode_code, disagg_tpot_mean_s,
                 per_output_token(where(load_mode == OPEN_LOOP, step_s, closed),
                                  spec_acceptance_length_effective))


def prefill_first(engine_code: Value) -> Value:
    """1 where the engine's scheduler runs waiting prompts in prefill-only steps before any
    decode, 0 where it schedules the running decodes first and fills the rest of the token
    budget with prompt chunks.

    SGLang (``python/sglang/srt/managers/scheduler.py``, ``get_next_batch_to_run``: "Run
    prefill first if possible", else ``update_running_batch`` and decode; the prefill batch is
    mixed with the decodes only under ``--enable-mixed-chunk``, off by default in
    ``server_args.py``): 1. vLLM V1 (``vllm/v1/core/sched/scheduler.py``, running requests
    first, then waiting ones in what is left of ``token_budget``) and TensorRT-LLM (in-flight
    batching of context and generation requests in one iteration up to ``max_num_tokens``): 0.
    """
    return where(engine_code == ENGINES["sglang"], 1, 0)


def cohort_ttft_steps(prefill_first: Value, closed_loop_batch: Value,
                      prefill_tokens_computed: Value,
                      max_num_batched_tokens_effective: Value,
                      prefill_steps_per_request: Value) -> Value:
    """Mean prefill-only steps to first token of a cohort of ``B`` requests that arrive
    together under a prefill-first scheduler (:func:`prefill_first`): their prompts fill the
    whole token budget step after step (no decodes in it), so request ``i`` has its first
    token after step ``ceil(i r)``, ``r = S / budget``; mean over ``i``:
    ``r (B + 1)/2 + max(0, 1 - r)/2``, at least the request's own prefill steps (the first
    wave's count, :func:`wave_ttft_steps`, with the full budget).

    In a closed loop of fixed lengths this is every cycle, not only the first: no request
    decodes until the whole cohort is prefilled, so all ``B`` then decode the same ``G - 1``
    steps, finish in the same step and return together (tests/formulas/test_scheduler_sim.py plays
    SGLang's policy step by step). Decode-first engines (0): the request's own prefill steps
    (their cohorts split by the budget and stagger, :func:`_cohort_tokens`)."""
    r = prefill_tokens_computed / max_num_batched_tokens_effective
    wave = maximum(prefill_steps_per_request,
                   r * (closed_loop_batch + 1) / 2 + maximum(0, 1 - r) / 2)
    return where(prefill_first > 0, wave, prefill_steps_per_request)


def prefill_only_step_s(closed_loop_batch: Value, prefill_tokens_computed: Value,
                        max_num_batched_tokens_effective: Value, pp: Value,
                        prefill_compute_s_per_token: Value, decode_compute_s_per_token: Value,
                        decode_kv_s_per_token: Value, serving_token_s: Value,
                        serving_step_fixed_s: Value, serving_dense_weights_s: Value,
                        serving_expert_weights_s: Value, model_experts: Value,
                        model_experts_per_token: Value, gemm_s_per_token: Value,
                        lm_head_s_per_token: Value, expert_gemm_s_per_token: Value,
                        expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """A prefill-only step of a cohort (a prefill-first scheduler, :func:`prefill_first`):
    ``n = min(B S, budget)`` prompt tokens and no decodes, its operators each bound by their
    own limit (:func:`_step_kind_s`), one micro-batch carrying ``1/pp`` of it."""
    n = maximum(minimum(closed_loop_batch * prefill_tokens_computed,
                        max_num_batched_tokens_effective), 1)
    return _step_kind_s(n / pp, 0, prefill_compute_s_per_token, decode_compute_s_per_token,
                        decode_kv_s_per_token, serving_token_s, serving_step_fixed_s,
                        serving_dense_weights_s, serving_expert_weights_s, model_experts,
                        model_experts_per_token, gemm_s_per_token, lm_head_s_per_token, 1,
                        expert_gemm_s_per_token, expert_ranks, expert_rank_max_sd)


def _cohort_whole(prefill_first: Value, load_mode: Value, output_tokens_cv: Value) -> Value:
    """1 where a closed loop's (or the offline maximum's) cohort stays whole cycle after cycle
    under a prefill-first scheduler: fixed output lengths (``cv = 0``; varying lengths spread
    the completions, :func:`_cohort_tokens`)."""
    return (prefill_first > 0) * (load_mode != OPEN_LOOP) * (output_tokens_cv <= 0)


def ttft_service_s(load_mode: Value, closed_loop_prefill_step_s: Value,
                   prefill_steps_per_request: Value, prefill_tokens_computed: Value,
                   max_num_batched_tokens_effective: Value, prefill_flops_computed: Value,
                   tp: Value,
                   gpu_flops_per_s: Value, matmul_efficiency_effective: Value,
                   step_compute_s: Value, step_memory_s: Value, step_elementwise_s: Value,
                   step_communication_s: Value, step_overhead_s: Value,
                   serving_token_s: Value, step_host_link_s: Value, prefill_first: Value,
                   output_tokens_cv: Value, cohort_ttft_steps: Value,
                   prefill_only_step_s: Value) -> Value:
    """Time from admission to first token: the prefill steps. Open loop: each the operating
    step plus this request's chunk (``min(S, budget)`` tokens of its prefill compute and
    traffic). Closed loop and offline: each a prefill step of its cohort
    (:func:`closed_loop_prefill_step_s`: requests that finish together return together).
    Under a prefill-first scheduler with fixed lengths the cohort stays whole
    (:func:`_cohort_whole`) and a request waits for the prompts ahead of it in its cohort:
    ``cohort_ttft_steps`` prefill-only steps (:func:`cohort_ttft_steps`,
    :func:`prefill_only_step_s`)."""
    chunk = minimum(prefill_tokens_computed, max_num_batched_tokens_effective)
    chunk_compute = prefill_flops_computed * chunk / prefill_tokens_computed / (
        tp * gpu_flops_per_s * matmul_efficiency_effective)
    one = (maximum(step_compute_s + chunk_compute, step_memory_s) + step_elementwise_s
           + step_communication_s
           + chunk * serving_token_s + step_overhead_s) + step_host_link_s
    closed = closed_loop_prefill_step_s  # its fixed part holds the host link's stream
    steps = prefill_steps_per_request * where(load_mode == OPEN_LOOP, one, closed)
    return where(_cohort_whole(prefill_first, load_mode, output_tokens_cv) > 0,
                 cohort_ttft_steps * prefill_only_step_s, steps)


def wave_prefill_tokens_per_step(closed_loop_batch: Value, prefill_tokens_computed: Value,
                                 max_num_batched_tokens_effective: Value) -> Value:
    """Prefill tokens one step carries while a wave of ``B`` requests that arrived together
    is prefilled: ``min(B * S, budget)`` (the scheduler fills the token budget with their
    chunks, vLLM ``scheduler.py`` ``schedule``: running requests first, then waiting ones
    while ``token_budget`` lasts)."""
    return maximum(minimum(closed_loop_batch * prefill_tokens_computed,
                           max_num_batched_tokens_effective),
                   1)


def wave_prefill_step_s(wave_prefill_tokens_per_step: Value, prefill_tokens_computed: Value,
                        prefill_flops_computed: Value, tp: Value, pp: Value, gpu_flops_per_s: Value,
                        matmul_efficiency_effective: Value, serving_dense_weights_s: Value,
                        serving_expert_weights_s: Value, model_experts: Value,
                        model_experts_per_token: Value, serving_token_s: Value,
                        serving_step_fixed_s: Value, expert_gemm_s_per_token: Value,
                        expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """Step time of a step carrying ``n`` prefill tokens of a wave (``n`` =
    :func:`wave_prefill_tokens_per_step`): ``max(n * prefill FLOPs per prompt token / (tp *
    peak * efficiency), weights it touches) + n * per-token work + fixed step time``, one
    micro-batch through the ``pp`` stages carrying ``1/pp`` of it (the serving step's
    convention), on the busiest expert-parallel rank (:func:`_busiest_rank_extra_s`)."""
    n = wave_prefill_tokens_per_step / pp
    extra_c, extra_m = _busiest_rank_extra_s(n, serving_expert_weights_s,
                                             expert_gemm_s_per_token, model_experts,
                                             model_experts_per_token, expert_ranks,
                                             expert_rank_max_sd)
    compute = n * prefill_flops_computed / prefill_tokens_computed / (tp * gpu_flops_per_s
                                                   * matmul_efficiency_effective) + extra_c
    weights = serving_dense_weights_s + serving_expert_weights_s * expert_touch_fraction(
        n, model_experts, model_experts_per_token) + extra_m
    return maximum(compute, weights) + n * serving_token_s + serving_step_fixed_s


def wave_ttft_steps(closed_loop_batch: Value, prefill_tokens_computed: Value,
                    max_num_batched_tokens_effective: Value,
                    prefill_steps_per_request: Value, prefill_first: Value) -> Value:
    """Mean steps to first token of ``B`` requests that arrive together (the start of a
    closed-loop benchmark: ``--max-concurrency B`` sends its first ``B`` requests at once).
    Their prompts enter the token budget one after another, so request ``i`` finishes its
    prefill at step ``ceil(i r)`` with ``r = S / budget``; the budget holds also the decodes
    of those already done, on average ``(B - 1)/2`` tokens. Mean over ``i``:
    ``r (B + 1)/2 + max(0, 1 - r)/2`` (exact for whole ``r`` and, for ``r < 1``, when ``B r``
    is whole), at least the request's own prefill steps. A prefill-first scheduler
    (:func:`prefill_first`) keeps the decodes out of the prefill steps: the whole budget."""
    decodes = where(prefill_first > 0, 0, (closed_loop_batch - 1) / 2)
    budget = maximum(max_num_batched_tokens_effective - decodes,
                     max_num_batched_tokens_effective / 2)
    r = prefill_tokens_computed / budget
    return maximum(prefill_steps_per_request,
                   r * (closed_loop_batch + 1) / 2 + maximum(0, 1 - r) / 2)


def wave_ttft_mean_s(load_mode: Value, wave_ttft_steps: Value, wave_prefill_step_s: Value,
                     request_latency_effective_s: Value, ttft_mean_s: Value,
                     serving_mode_code: Value, disagg_wave_ttft_mean_s: Value) -> Value:
    """Mean TTFT of the first wave of a closed loop, the ``B`` clients that start at once:
    :func:`wave_ttft_steps` steps of :func:`wave_prefill_step_s` plus the front end's path
    (``request_latency_effective_s``). A benchmark run of ``N`` requests averages it with the
    steady
    state over its first ``B`` requests (:func:`planner.sheet.harness.finite_run_ttft`).
    Other modes: the steady-state ``ttft_mean_s``.
    Disaggregated: the prefill pool's wave
    (:func:`planner.estimator.disagg.disagg_wave_ttft_mean_s`)."""
    wave = _pick(serving_mode_code, disagg_wave_ttft_mean_s,
                 wave_ttft_steps * wave_prefill_step_s + request_latency_effective_s)
    return where(load_mode == CLOSED_LOOP, maximum(wave, ttft_mean_s), ttft_mean_s)


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
    plus the wait for a decode slot (:mod:`planner.estimator.disagg`)."""
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
    ``request_latency_effective_s``, the front end's, :mod:`planner.estimator.frontends`).
    Disaggregated: :func:`planner.estimator.disagg.disagg_ttft_mean_s`."""
    return _pick(serving_mode_code, disagg_ttft_mean_s,
                 queue_wait_mean_s + step_alignment_s + ttft_service_s
                 + request_latency_effective_s)


def ttft_p50_s(queue_wait_p50_s: Value, step_alignment_s: Value, ttft_service_s: Value,
               request_latency_effective_s: Value, serving_mode_code: Value,
               disagg_ttft_p50_s: Value) -> Value:
    """Median TTFT (service time taken as fixed; the spread is the queue's).
    Disaggregated: :func:`planner.estimator.disagg.disagg_ttft_p50_s`."""
    return _pick(serving_mode_code, disagg_ttft_p50_s,
                 queue_wait_p50_s + step_alignment_s + ttft_service_s + request_latency_effective_s)


def ttft_p90_s(queue_wait_p90_s: Value, step_alignment_s: Value, ttft_service_s: Value,
               request_latency_effective_s: Value, serving_mode_code: Value,
               disagg_ttft_p90_s: Value) -> Value:
    """90th-percentile TTFT.
    Disaggregated: :func:`planner.estimator.disagg.disagg_ttft_p90_s`."""
    return _pick(serving_mode_code, disagg_ttft_p90_s,
                 queue_wait_p90_s + step_alignment_s + ttft_service_s + request_latency_effective_s)


def ttft_p99_s(queue_wait_p99_s: Value, step_alignment_s: Value, ttft_service_s: Value,
               request_latency_effective_s: Value, serving_mode_code: Value,
               disagg_ttft_p99_s: Value) -> Value:
    """99th-percentile TTFT.
    Disaggregated: :func:`planner.estimator.disagg.disagg_ttft_p99_s`."""
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
