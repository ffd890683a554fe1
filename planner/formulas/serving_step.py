"""One engine step's operators and the per-request and per-token figures they are made of.

Why this module exists: every step the serving model runs (the open loop's average step, a
closed loop's prefill and decode-only steps, a disaggregated pool's steps) is a sum of the
same operators, each bound by its own limit (:func:`_step_kind_s`: the GEMMs by ``max(FLOPs,
weights touched)``, prefill attention by its FLOPs, decode attention by the KV each sequence
reads, element-wise work, collectives, the fixed step), over the figures this module owns:
the tokens and FLOPs of one request, the weights a step reads, the seconds per token of
communication and element-wise kernels, the batch-independent step time and the busiest
expert-parallel rank's extra work. What a running slot holds and reads of the KV cache
(``max_running_batch``, ``serving_kv_memory_s_per_request``) is in
:mod:`planner.formulas.serving`, as are the step formulas (its module docstring).

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per replica unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from planner.formulas.engine_memory import by_engine
from planner.formulas.expert_parallel import (
    busiest_rank_expert_tokens_extra,
    busiest_rank_touch_extra,
)
from planner.formulas.latency import expert_touch_fraction
from planner.formulas.ops import (
    Value,
    ceil,
    lookup,
    maximum,
    safe_div,
    where,
)


def matmul_efficiency_effective(matmul_efficiency: Value, gpu_matmul_efficiency: Value) -> Value:
    """Achievable share of the tensor peak: the scenario's value, else the GPU catalog's."""
    return where(matmul_efficiency > 0, matmul_efficiency, gpu_matmul_efficiency)


def bandwidth_efficiency_effective(bandwidth_efficiency: Value,
                                   gpu_bandwidth_efficiency: Value) -> Value:
    """Achievable share of memory bandwidth: the scenario's value, else the GPU catalog's."""
    return where(bandwidth_efficiency > 0, bandwidth_efficiency, gpu_bandwidth_efficiency)


def request_tokens(prefill_tokens_computed: Value, decode_steps_per_request: Value,
                   spec_verify_tokens: Value) -> Value:
    """Tokens a request puts through the engine: ``S`` prefill + ``G - 1`` decode (the
    prefill the prefix cache leaves, :mod:`planner.formulas.prefix_cache`; under speculative
    decoding ``(G - 1)/a`` steps of ``k + 1`` verified tokens,
    :mod:`planner.formulas.speculative`)."""
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


def serving_compute_s_per_request(serving_request_flops: Value, tp: Value, gpu_flops_per_s: Value,
                                  matmul_efficiency_effective: Value) -> Value:
    """Compute seconds one request adds to the steps it runs in:
    ``serving_request_flops / (tp * peak * efficiency)``."""
    return serving_request_flops / (tp * gpu_flops_per_s * matmul_efficiency_effective)


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
    really crosses (:func:`planner.formulas.topology.tp_link_bytes_per_s`: NVLink inside the
    scale-up domain, PCIe for a larger group of PCIe cards, the NIC between hosts) times
    ``efficiency``; data-parallel attention (``attention_dp_number``) has no TP all-reduce,
    each GPU attends for its own requests. Plus the MoE layer's own token exchange
    (:func:`planner.formulas.expert_parallel.moe_comm_s_per_token`: none under TP attention,
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


EAGER_KERNEL_HOST_S = 6.56e-5
"""Default of ``eager_kernel_host_s``: host time to launch one counted kernel of an eager
forward (s). SGLang's scheduler log of DeepSeek-V3 with a 1-token prefill (sgl-project/sglang
PR #12160: ``forward cost`` 82.64 ms eager, 23.10 ms with a prefill CUDA graph; its author
finds prefill latency flat below ~100 new tokens, i.e. bound by the host) over the 61 layers'
1,260 kernels :func:`planner.spec.figures.layer_kernels` counts for it: 82.64 ms / 1,260 =
65.6 us a kernel (the Python model code, PyTorch's dispatch, the launch of the kernel and of
the small ops around it). Not fitted to any run the planner is scored on."""

AUTO_LAUNCH, GRAPHS, EAGER = 0, 1, 2
PREFILL_LAUNCHES = {"auto": AUTO_LAUNCH, "graphs": GRAPHS, "eager": EAGER}
"""``prefill_launch`` choices and their codes: the engine's default, CUDA graphs (or a
compiled engine), eager."""


def prefill_launch_code(prefill_launch: Value) -> Value:
    """``prefill_launch`` as a number (:data:`PREFILL_LAUNCHES`: 0 auto, 1 graphs, 2 eager)."""
    return lookup(prefill_launch, PREFILL_LAUNCHES)


def prefill_eager(engine_code: Value, prefill_launch_code: Value) -> Value:
    """1 where the engine runs a prefill step's forward eagerly, kernel by kernel from Python,
    0 where it replays CUDA graphs (or runs a compiled engine) for it: ``prefill_launch``
    graphs 0, eager 1, auto the engine's default below (roofline 0).

    SGLang 0.5.8 / 0.5.9: decode batches replay CUDA graphs, but ``enable_piecewise_cuda_graph``
    is False by default (``server_args.py``; "Experimental"), so every extend (prefill) batch
    runs ``model.forward`` eagerly (``model_runner.py`` ``forward_extend``); 0.5.10 turns
    piecewise graphs on but off again for DP attention, ROCm, PD disaggregation, speculative
    decoding and the B200 ``flashinfer_trtllm`` MoE backend, and caps them at 2,048 tokens for
    MLA models. TensorRT-LLM's PyTorch backend (the default since 1.0): ``can_run_cuda_graph
    = not context_requests`` (``_torch/pyexecutor/scheduler.py``), CUDA graphs for
    generation-only batches, ``enable_piecewise_cuda_graph`` False by default; a step holding
    any context chunk runs eagerly (TensorRT-LLM before 1.0 ran TensorRT engines, a compiled
    graph: set graphs). vLLM V1 compiles the model (torch.compile, piecewise CUDA graphs):
    0."""
    auto = by_engine(engine_code, {"roofline": 0, "vllm": 0, "sglang": 1, "trtllm": 1})
    return where(prefill_launch_code == EAGER, 1,
                 where(prefill_launch_code == GRAPHS, 0, auto))


def prefill_host_floor_s(prefill_eager: Value, model_layers: Value, model_layer_kernels: Value,
                         pp: Value, eager_kernel_host_s: Value) -> Value:
    """Least time of a step carrying prompt chunks on an engine that launches it eagerly
    (:func:`prefill_eager`): the host launches each of a pipeline stage's ``L / pp`` layers'
    ``k`` kernels (:func:`planner.spec.figures.layer_kernels`) one after another, at
    ``eager_kernel_host_s`` each (:data:`EAGER_KERNEL_HOST_S`), while the GPU runs them:
    ``eager * L / pp * k * eager_kernel_host_s`` (0 where the engine replays graphs):
    DeepSeek-V3 at PP 1 82.6 ms, Llama-3-8B 18.9 ms. The prefill steps a request waits for
    take ``max(GPU time, this)``: its first-token service (open and closed loop, the SLO
    search), the prefill-only steps of a prefill-first cohort, the first wave, a
    disaggregated prefill worker's steps. The closed loop's step mix behind the throughput
    and the saturation point keeps the GPU time
    (:func:`planner.formulas.serving_cohort.closed_loop_prefill_step_s`)."""
    return prefill_eager * model_layers / pp * model_layer_kernels * eager_kernel_host_s


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
    (``model_layer_kernels``, :func:`planner.spec.figures.layer_kernels`: MoE, shared
    experts, MLA and query/key norms run more than a dense layer) takes
    ``kernel_overhead_s_per_layer * k / DENSE_LAYER_KERNELS``."""
    return kernel_overhead_s_per_layer * model_layer_kernels / DENSE_LAYER_KERNELS


def serving_step_fixed_s(collective_latency_s_per_step: Value, model_layers: Value,
                         engine_step_overhead_s: Value,
                         kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                         host_weight_stream_s: Value, spec_draft_fixed_s: Value) -> Value:
    """Per-step time independent of the batch: engine overhead, the layers' kernel launch and
    tail time (:func:`_layer_kernel_s`: an MoE layer runs more kernels), the latency of the
    step's collectives (:func:`planner.formulas.expert_parallel.collective_latency_s_per_step`:
    2 all-reduces per layer under TP, 2 MoE exchange collectives per layer under attention DP,
    ``pp - 1`` pipeline hand-offs), and the stream of weights offloaded to host memory
    (:func:`planner.formulas.offload.host_weight_stream_s`, 0 without offload), and the
    drafter's passes under speculative decoding
    (:func:`planner.formulas.speculative.spec_draft_fixed_s`, 0 without)."""
    return (engine_step_overhead_s
            + model_layers * _layer_kernel_s(kernel_overhead_s_per_layer, model_layer_kernels)
            + collective_latency_s_per_step) + host_weight_stream_s + spec_draft_fixed_s


def _busiest_rank_extra_s(tokens: Value, serving_expert_weights_s: Value,
                          expert_gemm_s_per_token: Value, model_experts: Value,
                          model_experts_per_token: Value, expert_ranks: Value,
                          expert_rank_max_sd: Value) -> tuple[Value, Value]:
    """(compute, memory) seconds the busiest expert-parallel rank adds to a step of
    ``tokens`` tokens over the mean GPU (:mod:`planner.formulas.expert_parallel`): its extra
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
    (:func:`planner.formulas.speculative.serving_decode_flops` over the steps)."""
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
                 expert_rank_max_sd: Value = 0, host_floor: Value = 0) -> Value:
    """One step carrying ``p = prefill_tokens`` prompt tokens and ``d = decode_tokens``
    decodes, as the operators run one after another, each bound by its own limit:

    * the GEMMs (projections, MLP or experts, router; LM head for decodes):
      ``max((p + d) * gemm + d * lm_head, weights touched)``, on the busiest of
      ``expert_ranks`` expert-parallel ranks (:mod:`planner.formulas.expert_parallel`: its
      extra routed-expert work, ``expert_gemm`` a token, and the extra share of its experts
      it reads; both exactly 0 for one rank);
    * attention: the prefill chunks by their core FLOPs, ``p * (prefill compute - gemm)``,
      then the decodes by the KV each reads, ``max(d * core FLOPs, d * KV)``;
    * element-wise work and collectives per token, ``(p + d) * token_s``; the fixed step.

    Under speculative decoding each decode is ``verify = k + 1`` tokens for the GEMMs, the
    LM head, element-wise work and collectives, and one KV read with ``k + 1`` queries
    (``decode_compute`` is then the whole verify step's and the drafts').

    A step the engine launches kernel by kernel from Python (a prefill step without CUDA
    graphs, :func:`prefill_host_floor_s`) takes at least the host's time to launch them,
    ``host_floor``: the GPU then waits on the host, ``max(GPU time, host_floor)``."""
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
    gpu = (gemms + prefill_attention + decode_attention
           + (prefill_tokens + decode_tokens_through) * token_s + fixed)
    if isinstance(host_floor, (int, float)) and host_floor == 0:  # decode steps: no MAX() in
        return gpu  # their Excel formulas
    return maximum(gpu, host_floor)
