"""How a mixture-of-experts layer exchanges tokens under expert parallelism and data-parallel
attention, and what that exchange costs per step.

Why this module exists: the serving model charged every expert-parallel deployment a dispatch
and a combine all-to-all sized as if each GPU sent every token of the step, whether or not the
engine runs an all-to-all at all, and charged attention-DP deployments with tensor-parallel
experts nothing (issue 25 item 5). What the engines do:

* **Tensor-parallel attention** (no attention DP): after attention's all-reduce every GPU of
  the group holds every token, so experts spread over ``ep`` GPUs need no dispatch: each GPU
  runs its own experts on the tokens routed to them and the layer's all-reduce (the second of
  the two TP all-reduces the model already charges) sums the partial outputs. vLLM uses its
  all-to-all kernels only with data parallelism (``FusedMoEParallelConfig.use_all2all_kernels``
  = ``dp_size > 1 and use_ep``, ``vllm/model_executor/layers/fused_moe/config.py``); SGLang's
  default ``--moe-a2a-backend none`` "disables all-to-all for EP. Uses All-Reduce or
  All-Gather for token dispatch" (docs.sglang.io, Expert Parallelism); TRT-LLM's all-to-all
  requires attention DP (``CutlassFusedMoE.enable_alltoall``). Code :data:`IN_ALLREDUCE`.
* **Attention DP, all-gather / reduce-scatter** (code :data:`GATHER_SCATTER`): each GPU
  attends for its own requests, so before the experts the step's tokens are gathered from
  every DP rank and after them the outputs reduce-scattered back: TRT-LLM's max-throughput
  MoE with attention DP ("[+ fp4_allgather] + FusedMoe Op[no allreduce] + reducescatter",
  ``tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py``), vLLM's default DP+EP
  backend ``allgather_reducescatter``, SGLang's dp-attention ``dp_gather`` / ``dp_scatter``.
  The gathered message of one layer is the whole step's tokens, so each GPU's link carries
  ``(n - 1)/n * d * b`` per step token each way (NCCL all-gather and reduce-scatter bus bytes,
  :func:`planner.formulas.topology.all_gather_s`), over the group's link
  (:func:`planner.formulas.topology.tp_link_bytes_per_s` with ``n = tp``): together the volume
  of one all-reduce, where tensor-parallel attention runs two.
* **Attention DP, all-to-all** (code :data:`ALL_TO_ALL`): each GPU sends each of its own
  tokens to the GPUs holding its ``k`` experts and receives the expert outputs back (dispatch
  and combine). Per token of the sending GPU and layer the dispatch moves
  ``k * (ep - 1)/ep * d * b_dispatch`` bytes under uniform routing (a token's ``k`` experts,
  the share ``(ep - 1)/ep`` of them on other GPUs, one copy per expert as DeepEP's low-latency
  kernels and TRT-LLM's MNNVL all-to-all send them) and the combine the same at ``b_combine``;
  each GPU holds ``1/tp`` of the step's tokens. DeepEP dispatches in FP8 and combines in BF16
  (DeepEP README, Performance: "FP8 dispatching, and BF16 combining"). The link is the EP
  group's (:func:`planner.formulas.topology.ep_link_bytes_per_s`): NVLink inside one NVLink
  domain (an NVL72 rack is one all-to-all island up to EP 72), the NIC's RDMA share beyond it.
  By default only TRT-LLM takes this path, where its condition holds: attention DP, ``tp > 1``,
  ``moe_ep_size > top_k`` and a multi-node NVLink fabric (``MnnvlMemory.supports_mnnvl()``: a
  GB200/GB300 NVL72 domain); DeepEP in SGLang and vLLM is a non-default backend, for which the
  plain functions here (:func:`all_to_all_bytes_per_token`, :func:`all_to_all_s_per_token`)
  serve a caller that selects it.

Each exchange is two collectives per MoE layer (gather and scatter, or dispatch and combine),
each paying ``collective_latency_s`` (the small-message latency of one collective inside the
domain) and one more network step (:data:`planner.formulas.topology.NIC_HOP_LATENCY_S`) when
the group spans hosts. Every layer is counted as an MoE layer, as the serving model counts its
all-reduces (DeepSeek-V3's three dense layers are 3 of 61).

**The busiest expert-parallel rank.** With experts spread over ``ep`` ranks each rank runs
only its own experts, and the layer waits for the busiest one (the combine, or the all-reduce
that sums the experts' outputs, needs every rank's part). Under TP'd experts (``ep`` 1) every
GPU holds a slice of every expert and the work is the mean. Under uniform routing (each token
draws its ``k`` experts from ``E`` without replacement, the router's intent) the busiest rank
carries more than the mean by the spread of a sum of many small draws, ``z_ep`` standard
deviations, ``z_ep`` the expected maximum of ``ep`` standard normal variables
(:func:`expected_max_standard_normal`):

* weights: a rank holds ``m = E/ep`` experts, each touched with probability
  ``q = 1 - (1 - k/E)^T`` (:func:`planner.formulas.latency.expert_touch_fraction`), so the
  busiest rank reads ``min(1, q + z_ep sqrt(q (1 - q)/m))`` of its experts
  (:func:`busiest_rank_touch_extra`: 0.869 -> 0.954 for DeepSeek-V3, 64 tokens, EP 8);
* GEMM work: the (token, expert) pairs a rank computes, mean ``T k/ep``, variance
  ``T k (1/ep)(1 - 1/ep)(E - k)/(E - 1)`` (hypergeometric: a token's ``k`` distinct experts
  among ``E``, ``E/ep`` of them the rank's), so the busiest rank runs
  ``z_ep sqrt(T (ep - 1)(E - k)/(k (E - 1)))`` tokens' worth of expert work more than the mean
  (:func:`busiest_rank_expert_tokens_extra`: 1.4 % more at 8,192 prompt tokens, 8 % at 256
  decodes, DeepSeek-V3 EP 8).

Against routing sampled that way both are within 5 % of the sampled busiest rank (10 % low
where a rank's mean is a few pairs; tests/formulas/test_expert_parallel.py). Uniform routing is the
floor of the imbalance: trained routers are skewed (hot experts), which
is why DeepSeek balances with redundant experts (EPLB, ``deepseek-ai/EPLB``); no measured skew
is assumed here, and the engines' defaults run no redundant experts (SGLang
``--ep-num-redundant-experts`` 0, TRT-LLM's MoE load balancer off unless configured).

The plain functions take ``(ep, tp, attention DP, top-k, hidden size, bytes, links)`` and no
scenario columns, so a disaggregated pool with its own ``ep`` and ``tp`` can call them; the
functions named after scenario columns are the serving sheet's formula columns. All run on the
operator set (:mod:`planner.formulas.ops`): scalars, numpy arrays and Excel formulas alike.
"""

from __future__ import annotations

from planner.formulas.engine_memory import TRTLLM
from planner.formulas.latency import expert_touch_fraction
from planner.formulas.ops import Value, maximum, minimum, power, safe_div, where
from planner.formulas.topology import LINK_NIC, NIC_HOP_LATENCY_S, tp_link_kind

IN_ALLREDUCE, GATHER_SCATTER, ALL_TO_ALL = 0, 1, 2
"""moe_exchange_code: no token exchange of its own (tensor-parallel attention: the layer's
all-reduce sums the experts' partial outputs), all-gather before the experts and
reduce-scatter after them (attention DP, the engines' default), dispatch and combine
all-to-all (attention DP on TRT-LLM's multi-node NVLink path)."""

MNNVL_DOMAIN_GPUS = 72
"""NVLink domain size from which TRT-LLM's MNNVL all-to-all is available: the GB200/GB300
NVL72 rack (``MnnvlMemory.supports_mnnvl()`` needs the multi-node NVLink fabric; HGX boards of
8 do not have it)."""

NVFP4_ELEMENT_BYTES = 0.5 + 1 / 16
"""Bytes per activation element sent as NVFP4: 4 bits plus one FP8 (E4M3) scale per 16
values (TRT-LLM ``fp4_quantize`` with ``scaling_vector_size`` 16 before its all-gather or
all-to-all)."""

MXFP8_ELEMENT_BYTES = 1 + 1 / 32
"""Bytes per activation element sent as MXFP8: 8 bits plus one E8M0 scale per 32 values
(TRT-LLM ``mxfp8_quantize`` on the W4A8 MXFP4 x MXFP8 path, gpt-oss on Blackwell)."""

_NVFP4_PATH, _MXFP4_PATH = 4, 5
"""matmul_path_code of the NVFP4 and MXFP4 paths
(:func:`planner.formulas.derived.matmul_path_code`)."""


# ------------------------------------------------------------------ plain functions


def all_to_all_bytes_per_token(ep: Value, experts_per_token: Value, hidden_size: Value,
                               dispatch_bytes: Value, combine_bytes: Value) -> Value:
    """Bytes one GPU sends in one MoE layer's dispatch and combine for each token it holds:
    ``k * (ep - 1)/ep * d * (b_dispatch + b_combine)`` (a copy of the token to each of its
    ``k`` experts, the share ``(ep - 1)/ep`` of them remote under uniform routing; the combine
    returns one output per expert). DeepSeek-V3 (d 7,168, k 8) over EP 8, FP8 dispatch with
    its scales (1.03125 B) and BF16 combine: 8 * 7/8 * 7,168 * 3.03125 = 152,096 B; 0 for
    ``ep`` 1. Kernels that send one copy per destination GPU instead (DeepEP's high-throughput
    kernels) move ``(ep - 1)(1 - (1 - 1/ep)^k)`` copies
    (:func:`planner.formulas.topology.expert_remote_gpus`): 4.59 instead of 7 at EP 8, the
    7.46 against 7.88 at EP 64 and 7.72 against 7.94 at EP 128 for k 8."""
    remote = experts_per_token * (ep - 1) / maximum(ep, 1)
    return remote * hidden_size * (dispatch_bytes + combine_bytes)


def all_to_all_s_per_token(tp: Value, ep: Value, experts_per_token: Value, hidden_size: Value,
                           dispatch_bytes: Value, combine_bytes: Value,
                           ep_link_bytes_per_s: Value, efficiency: Value) -> Value:
    """Seconds one MoE layer's dispatch and combine add per token of a ``tp``-GPU step under
    attention DP: each GPU holds ``1/tp`` of the tokens and sends
    :func:`all_to_all_bytes_per_token` for each over the EP group's per-direction link times
    ``efficiency`` (all GPUs send at once, so the step's exchange takes one GPU's time):
    ``all_to_all_bytes_per_token / tp / (link * efficiency)``; 0 where the link is unknown."""
    sent = all_to_all_bytes_per_token(ep, experts_per_token, hidden_size, dispatch_bytes,
                                      combine_bytes) / maximum(tp, 1)
    return safe_div(sent, ep_link_bytes_per_s * efficiency, 0.0)


def gather_scatter_bytes_per_token(n: Value, hidden_size: Value, gather_bytes: Value,
                                   scatter_bytes: Value) -> Value:
    """Bytes one GPU's link carries in one MoE layer's all-gather (before the experts) and
    reduce-scatter (after them) over ``n`` data-parallel ranks, per token of the whole step:
    ``(n - 1)/n * d * (b_gather + b_scatter)`` (NCCL bus bytes of all-gather and
    reduce-scatter, whose message is the step's tokens). 8 ranks, d 7,168, BF16 both ways:
    7/8 * 7,168 * 4 = 25,088 B."""
    return (n - 1) / maximum(n, 1) * hidden_size * (gather_bytes + scatter_bytes)


def gather_scatter_s_per_token(n: Value, hidden_size: Value, gather_bytes: Value,
                               scatter_bytes: Value, link_bytes_per_s: Value,
                               efficiency: Value) -> Value:
    """Seconds one MoE layer's all-gather and reduce-scatter add per token of the step:
    :func:`gather_scatter_bytes_per_token` over the DP group's per-direction link times
    ``efficiency``; 0 where the link is unknown."""
    return safe_div(gather_scatter_bytes_per_token(n, hidden_size, gather_bytes, scatter_bytes),
                    link_bytes_per_s * efficiency, 0.0)


def exchange_latency_s(group: Value, gpu_nvlink_domain_gpus: Value,
                       collective_latency_s: Value) -> Value:
    """Latency of one MoE exchange collective (a gather, scatter, dispatch or combine) over a
    group of ``group`` GPUs: ``collective_latency_s`` (one small-message collective inside the
    domain), plus one network step (:data:`NIC_HOP_LATENCY_S`, 8 us) when the group spans
    hosts (:func:`planner.formulas.topology.tp_link_kind`): the RDMA leg's NIC and proxy
    latency after the NVLink sends."""
    spans = tp_link_kind(group, gpu_nvlink_domain_gpus) == LINK_NIC
    return collective_latency_s + where(spans, NIC_HOP_LATENCY_S, 0)


_LN_STEP = 1e-6
"""``ln z`` as ``(z^h - 1)/h`` with ``h`` = 1e-6 (the limit that defines it; relative error
``h |ln z| / 2``, below 1e-5 for ``z > 1e-8``): the operator set has ``power`` and no ``LN``."""

_CHEN_TYLER_BASE = 0.5264
"""Chen & Tyler (1999), "Accurate approximation to the extreme order statistics of Gaussian
samples", Commun. Stat. Simul. Comput. 28(1): the expected maximum of ``n`` standard normal
variables is about ``Phi^-1(0.5264^(1/n))`` (exact values: Harter 1961, "Expected values of
normal order statistics", Biometrika 48)."""

_AS_26_2_23 = (2.515517, 0.802853, 0.010328, 1.432788, 0.189269, 0.001308)
"""Abramowitz & Stegun, Handbook of Mathematical Functions (1964), 26.2.23: the upper-tail
normal quantile ``x_p = t - (c0 + c1 t + c2 t^2)/(1 + d1 t + d2 t^2 + d3 t^3)``,
``t = sqrt(-2 ln p)``, ``|error| < 4.5e-4`` for ``0 < p <= 0.5``."""


_MAX_OF_2 = 0.5641895835477563
"""Expected maximum of two standard normal variables, exactly ``1/sqrt(pi)``."""
_MAX_OF_3 = 0.8462843753216345
"""Expected maximum of three standard normal variables, exactly ``3/(2 sqrt(pi))``."""


def expected_max_standard_normal(n: Value) -> Value:
    """Expected maximum of ``n`` independent standard normal variables, 0 for ``n <= 1``,
    exact for 2 and 3 (:data:`_MAX_OF_2`, :data:`_MAX_OF_3`), else Chen and Tyler's
    ``Phi^-1(0.5264^(1/n))`` (:data:`_CHEN_TYLER_BASE`), the quantile by Abramowitz & Stegun
    26.2.23 (:data:`_AS_26_2_23`) at the upper tail ``p = 1 - 0.5264^(1/n)``: within 1.5 % of
    the exact values from 4 on (4: 1.044 against 1.0294, 8: 1.425 against 1.4236, 72: 2.371
    against 2.3881, 256: 2.807 against 2.8272; tests/formulas/test_expert_parallel.py integrates
    them)."""
    c0, c1, c2, d1, d2, d3 = _AS_26_2_23
    tail = 1 - power(_CHEN_TYLER_BASE, 1 / maximum(n, 1))
    ln_tail = (power(tail, _LN_STEP) - 1) / _LN_STEP
    t = power(maximum(-2 * ln_tail, 0), 0.5)
    x = t - (c0 + c1 * t + c2 * t * t) / (1 + d1 * t + d2 * t * t + d3 * t * t * t)
    return where(n > 3, maximum(x, 0), where(n > 2, _MAX_OF_3, where(n > 1, _MAX_OF_2, 0)))


def busiest_rank_touch_extra(tokens: Value, experts: Value, experts_per_token: Value,
                             expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """Share of a rank's experts the busiest of ``expert_ranks`` ranks reads beyond the mean
    touched share ``q`` (module docstring): ``min(1, q + z sqrt(q (1 - q)/m)) - q`` with
    ``m = E/ep`` experts a rank, ``z`` = ``expert_rank_max_sd``; exactly 0 for one rank.
    DeepSeek-V3 (E 256, k 8), EP 8, 64 tokens: q = 0.869, busiest 0.954, extra 0.085."""
    touched = expert_touch_fraction(tokens, experts, experts_per_token)
    per_rank = maximum(experts / maximum(expert_ranks, 1), 1)
    spread = power(maximum(touched * (1 - touched), 0) / per_rank, 0.5)
    extra = minimum(1, touched + expert_rank_max_sd * spread) - touched
    return where(expert_ranks > 1, extra, 0)


def busiest_rank_expert_tokens_extra(tokens: Value, experts: Value, experts_per_token: Value,
                                     expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """Tokens' worth of routed-expert GEMM work the busiest of ``ep`` ranks runs beyond the
    mean ``T k / ep`` pairs (module docstring): ``z sqrt(T (ep - 1)(E - k)/(k (E - 1)))``;
    exactly 0 for one rank. DeepSeek-V3, EP 8, 8,192 tokens: 1.425 * sqrt(8192 * 7 * 248 /
    (8 * 255)) = 120 tokens (1.5 %)."""
    var = safe_div(tokens * (expert_ranks - 1) * (experts - experts_per_token),
                   experts_per_token * (experts - 1), 0.0)
    return where(expert_ranks > 1, expert_rank_max_sd * power(maximum(var, 0), 0.5), 0)


# ------------------------------------------------------------------ formula columns


def expert_ranks(ep: Value, model_experts: Value) -> Value:
    """Ranks the routed experts are spread over, each holding its own ``E/ep`` experts
    (whole): ``ep`` for an MoE model, 1 for a dense one or TP'd experts (every GPU a slice of
    every expert, so every GPU has the mean work)."""
    return where(model_experts > 1, maximum(ep, 1), 1)


def expert_rank_max_sd(expert_ranks: Value) -> Value:
    """Standard deviations by which the busiest expert rank's load exceeds the mean:
    :func:`expected_max_standard_normal` of ``expert_ranks`` (0 for one rank; 1.425 for 8)."""
    return expected_max_standard_normal(expert_ranks)


def expert_gemm_s_per_token(model_matmul_experts_active_params: Value, tp: Value,
                            gpu_flops_per_s: Value, matmul_efficiency_effective: Value) -> Value:
    """Compute seconds of the routed experts' GEMMs one token runs, on the mean GPU (part of
    :func:`planner.formulas.serving_step.gemm_s_per_token`): ``2 * P_experts_active / (tp * peak
    * efficiency)``; the busiest rank runs
    :func:`busiest_rank_expert_tokens_extra` tokens more of it."""
    return 2 * model_matmul_experts_active_params / (tp * gpu_flops_per_s
                                                     * matmul_efficiency_effective)




def moe_exchange_code(tp: Value, ep: Value, attention_dp_number: Value, model_experts: Value,
                      model_experts_per_token: Value, engine_code: Value,
                      gpu_nvlink_domain_gpus: Value) -> Value:
    """How the MoE layer exchanges tokens (module docstring): :data:`IN_ALLREDUCE` (0) for
    dense models, one GPU or tensor-parallel attention; under attention DP
    :data:`ALL_TO_ALL` (2) where TRT-LLM's MNNVL all-to-all applies (``ep > top_k``, an NVLink
    domain of :data:`MNNVL_DOMAIN_GPUS` or more holding the group), else
    :data:`GATHER_SCATTER` (1)."""
    exchanges = (attention_dp_number > 0) * (tp > 1) * (model_experts > 1)
    mnnvl = ((engine_code == TRTLLM) * (ep > model_experts_per_token)
             * (gpu_nvlink_domain_gpus >= MNNVL_DOMAIN_GPUS) * (ep <= gpu_nvlink_domain_gpus))
    return where(exchanges > 0, where(mnnvl > 0, ALL_TO_ALL, GATHER_SCATTER), IN_ALLREDUCE)


def moe_dispatch_bytes(engine_code: Value, moe_exchange_code: Value, matmul_path_code: Value,
                       gpu_compute_bits: Value, activation_bytes: Value) -> Value:
    """Bytes per element of the tokens sent to the experts (gather or dispatch). TRT-LLM
    quantizes the MoE input before it communicates on its FP4 paths
    (``run_post_quant_allgather or enable_alltoall`` in ``CutlassFusedMoE.forward_chunk``):
    NVFP4 :data:`NVFP4_ELEMENT_BYTES` (0.5625), W4A8 MXFP4 x MXFP8
    :data:`MXFP8_ELEMENT_BYTES` (1.03125), where the GPU runs that path (``gpu_compute_bits``
    4); its FP8 block-scale path (DeepSeek, Qwen3 FP8) and the other engines' gathers send
    ``activation_bytes`` (BF16: 2). Outputs return at ``activation_bytes``."""
    fp4 = (engine_code == TRTLLM) * (moe_exchange_code > IN_ALLREDUCE) * (gpu_compute_bits <= 4)
    return where(fp4 * (matmul_path_code == _NVFP4_PATH) > 0, NVFP4_ELEMENT_BYTES,
                 where(fp4 * (matmul_path_code == _MXFP4_PATH) > 0, MXFP8_ELEMENT_BYTES,
                       activation_bytes))


def moe_comm_s_per_token(moe_exchange_code: Value, tp: Value, ep: Value, model_layers: Value,
                         model_hidden_size: Value, model_experts_per_token: Value,
                         moe_dispatch_bytes: Value, activation_bytes: Value,
                         tp_link_bytes_per_s: Value, ep_link_bytes_per_s: Value,
                         collective_efficiency: Value) -> Value:
    """Interconnect seconds the MoE exchange adds per token of a step, over all layers:
    ``L *`` :func:`gather_scatter_s_per_token` over the ``tp`` DP ranks and their link
    (gather/scatter), ``L *`` :func:`all_to_all_s_per_token` over the EP group's link
    (all-to-all), 0 when the layer's all-reduce carries the experts' outputs."""
    gather = gather_scatter_s_per_token(tp, model_hidden_size, moe_dispatch_bytes,
                                        activation_bytes, tp_link_bytes_per_s,
                                        collective_efficiency)
    a2a = all_to_all_s_per_token(tp, ep, model_experts_per_token, model_hidden_size,
                                 moe_dispatch_bytes, activation_bytes, ep_link_bytes_per_s,
                                 collective_efficiency)
    per_layer = where(moe_exchange_code == GATHER_SCATTER, gather,
                      where(moe_exchange_code == ALL_TO_ALL, a2a, 0))
    return model_layers * per_layer


def moe_collective_latency_s(moe_exchange_code: Value, tp: Value, ep: Value,
                             gpu_nvlink_domain_gpus: Value, collective_latency_s: Value) -> Value:
    """Latency of one MoE exchange collective (:func:`exchange_latency_s`) over the group it
    spans: the ``ep`` GPUs of an all-to-all, the ``tp`` DP ranks of a gather/scatter."""
    group = where(moe_exchange_code == ALL_TO_ALL, ep, tp)
    return exchange_latency_s(group, gpu_nvlink_domain_gpus, collective_latency_s)


def collective_latency_s_per_step(tp: Value, pp: Value, attention_dp_number: Value,
                                  model_layers: Value, moe_exchange_code: Value,
                                  collective_latency_s: Value,
                                  moe_collective_latency_s: Value) -> Value:
    """Latency of one step's collectives (s): two TP all-reduces per layer under
    tensor-parallel attention and ``pp - 1`` pipeline hand-offs at ``collective_latency_s``,
    plus two MoE exchange collectives per layer (gather and scatter, or dispatch and combine)
    at ``moe_collective_latency_s`` where the layer exchanges tokens."""
    allreduces = where((tp > 1) * (attention_dp_number <= 0), 2 * model_layers, 0)
    exchanges = where(moe_exchange_code > IN_ALLREDUCE, 2 * model_layers, 0)
    return (allreduces + pp - 1) * collective_latency_s \
        + exchanges * moe_collective_latency_s
