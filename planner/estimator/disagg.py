"""Disaggregated prefill/decode serving (issue 25 item 1): prefill workers and decode workers,
each pool with its own parallelism, GPU type, engine limits and KV pool, and the KV of every
prompt moved from a prefill worker to a decode worker.

Why this module exists: about a third of the serving runs published in 2026 (NVIDIA Dynamo,
SGLang PD disaggregation, vLLM's KV connectors, InferenceX and AIConfigurator's silicon set)
serve the two phases on separate GPUs, so that long prompts never stall the decode steps and
each phase runs at the parallelism that suits it. The aggregated model
(:mod:`planner.estimator.serving`) cannot express it. Every public function here is a scenario
column over the operator set (:mod:`planner.estimator.ops`); they reuse the aggregated model's
per-operator building blocks (GEMM, attention, KV, element-wise, collective and fixed-step
figures per token, :func:`planner.estimator.serving._step_kind_s`) with each pool's TP, EP,
attention DP and GPU as arguments, so a pool's step is the same sum of operators as an
aggregated step that carries only prompt chunks (prefill) or only decodes (decode).

With ``serving_mode = aggregated`` none of these columns enters an existing output: the
contract outputs (``ttft_*``, ``tpot_mean_s``, ``serving_requests_per_s``,
``saturation_requests_per_s``, ``cost_usd_per_hour``, ``deployment_gpus``) take
``where(serving_mode_code == DISAGGREGATED, disaggregated, aggregated)``, which returns the
aggregated figure bit for bit (tests/formulas/test_disagg.py).

The model, per worker unless the name says otherwise (``Wp``, ``Wd`` workers; ``S`` prompt,
``G`` output tokens; ``budget`` the engine's token budget, ``max_num_batched_tokens``):

* prefill pool: a step carries up to ``budget`` prompt tokens; its time is the operator sum
  at the prefill TP/EP on the scenario's GPU; capacity ``Wp * pp * budget / S / step(budget)``
  requests/s; a prompt's service ``ceil(S / budget)`` steps of its own chunk; its queue
  (Pollaczek-Khinchine M/D/1 with a full step as the service unit) ``rho / (2 (1 - rho)) *
  step``;
* decode pool: a step carries one token for each running sequence, bounded by the decode
  pool's own KV pool and ``max_num_seqs``; TPOT is the step at the operating batch (closed
  loop ``min(clients / Wd, B_max)``; open loop the batch Little's law gives,
  ``b = rate / Wd * (G - 1) * step(b)``, solved by Newton iterations); capacity
  ``Wd * B_max / ((G - 1) * step(B_max))``;
* KV transfer: ``S * kv_bytes_per_token`` bytes (the model's KV at the KV dtype) over NVLink
  when both pools fit in one scale-up domain of the same GPU type (an NVL72 rack), else over
  the NIC; one link per GPU pair (each prefill rank sends its shard to a decode rank, NIXL /
  Mooncake RDMA writes), plus one hop latency
  (:data:`planner.estimator.topology.NVLINK_HOP_LATENCY_S` / ``NIC_HOP_LATENCY_S``);
* ``TTFT = prefill queue + decode-slot wait + prefill + transfer + first decode step + the
  front end's path``; throughput: the slower pool caps the deployment; a closed loop of ``M``
  clients completes ``X = min(M / cycle, capacity)`` requests/s (``cycle`` the unqueued
  request), and whatever waiting Little's law then leaves, ``M / X - cycle``, is the queue
  of the saturated pool; the first wave of a benchmark (all ``M`` at once) waits for each
  other's prompts (:func:`prefill_wave_s`);
* GPUs ``Wp * prefill_tp * pp + Wd * decode_tp * pp``; cost each pool at its GPU's price;
  the pools sized for the target rate (``gpus_needed``): :mod:`planner.estimator.disagg_slo`.

Not modelled: the decode pool's weights are the scenario's per GPU scaled by ``tp /
decode_tp`` (weights shard evenly over TP; the rotary table and data-parallel attention's
replicated projections are taken per pool), the router's own latency beyond the front end's,
calibration profiles on the decode GPU (the catalog's figures), prefix caching and
speculative decoding (other items of the issue).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from planner.estimator import derived, memory, pool_links, serving, topology
from planner.estimator import engine_memory as em
from planner.estimator import expert_parallel as xp
from planner.estimator.gpu import GpuSpec, gpu_figures
from planner.estimator.ops import Value, lookup, maximum, minimum, safe_div, where

AGGREGATED, DISAGGREGATED = 0, 1
"""``serving_mode_code`` values."""
SERVING_MODES: dict[str, int] = {"aggregated": AGGREGATED, "disaggregated": DISAGGREGATED}
POOL_ATTENTION_DP_CODES: dict[str, int] = {"follow": -1, "on": 1, "off": 0}
"""``<pool>_attention_dp`` choices: -1 follow the scenario's ``attention_dp``."""
DECODE_GPU_SAME = "same"
"""``decode_gpu`` value meaning the scenario's own GPU."""
_HUGE = 1e12


def decode_gpu_figures(gpu: GpuSpec, decode: GpuSpec) -> dict[str, float]:
    """The decode pool's GPU figures as scenario columns: every figure of
    :func:`planner.estimator.gpu.gpu_figures` under ``decode_gpu_<figure>`` (the price as
    ``decode_gpu_price_usd_per_gpu_hour``), and ``decode_gpu_same`` 1 when the decode GPU is
    the scenario's (needed for one NVLink domain to join both pools). Not a column."""
    out = {f"decode_{k}" if k.startswith("gpu_") else f"decode_gpu_{k}": float(v)
           for k, v in gpu_figures(decode).items()}
    out["decode_gpu_same"] = 1.0 if decode.name == gpu.name else 0.0
    return out


# ------------------------------------------------------------------- derived inputs


def serving_mode_code(serving_mode: Value) -> Value:
    """0 aggregated, 1 disaggregated (:data:`SERVING_MODES`)."""
    return lookup(serving_mode, SERVING_MODES)


def prefill_tp_effective(prefill_tp: Value, tp: Value) -> Value:
    """TP of a prefill worker: ``prefill_tp``, or the scenario's ``tp`` when 0."""
    return where(prefill_tp > 0, prefill_tp, tp)


def decode_tp_effective(decode_tp: Value, tp: Value) -> Value:
    """TP of a decode worker: ``decode_tp``, or the scenario's ``tp`` when 0."""
    return where(decode_tp > 0, decode_tp, tp)


def prefill_ep_effective(prefill_ep: Value, ep: Value) -> Value:
    """EP of a prefill worker: ``prefill_ep``, or the scenario's ``ep`` when 0."""
    return where(prefill_ep > 0, prefill_ep, ep)


def decode_ep_effective(decode_ep: Value, ep: Value) -> Value:
    """EP of a decode worker: ``decode_ep``, or the scenario's ``ep`` when 0."""
    return where(decode_ep > 0, decode_ep, ep)


def prefill_attention_dp_number(prefill_attention_dp: Value,
                                attention_dp_number: Value) -> Value:
    """1 where the prefill workers run data-parallel attention (``on``, or ``follow`` and
    the scenario's ``attention_dp``)."""
    code = lookup(prefill_attention_dp, POOL_ATTENTION_DP_CODES)
    return where(code < 0, attention_dp_number, code)


def decode_attention_dp_number(decode_attention_dp: Value,
                               attention_dp_number: Value) -> Value:
    """1 where the decode workers run data-parallel attention (``on``, or ``follow`` and the
    scenario's ``attention_dp``)."""
    code = lookup(decode_attention_dp, POOL_ATTENTION_DP_CODES)
    return where(code < 0, attention_dp_number, code)


def decode_gpu_flops_per_s(matmul_path_code: Value, decode_gpu_bf16_peak: Value,
                           decode_gpu_fp16_peak: Value, decode_gpu_fp8_peak: Value,
                           decode_gpu_int8_peak: Value, decode_gpu_int4_peak: Value,
                           decode_gpu_nvfp4_peak: Value, decode_gpu_mxfp4_peak: Value) -> Value:
    """Dense tensor peak of one decode GPU on the scenario's matmul path
    (:func:`planner.estimator.derived.gpu_flops_per_s` of the decode GPU's peaks)."""
    return derived.gpu_flops_per_s(matmul_path_code, decode_gpu_bf16_peak, decode_gpu_fp16_peak,
                                   decode_gpu_fp8_peak, decode_gpu_int8_peak,
                                   decode_gpu_int4_peak, decode_gpu_nvfp4_peak,
                                   decode_gpu_mxfp4_peak)


def decode_gpu_matmul_efficiency(matmul_path_code: Value, decode_gpu_fp8_peak: Value,
                                 decode_gpu_int8_peak: Value, decode_gpu_int4_peak: Value,
                                 decode_gpu_nvfp4_peak: Value, decode_gpu_mxfp4_peak: Value,
                                 decode_gpu_matmul_efficiency_16bit: Value,
                                 decode_gpu_matmul_efficiency_8bit: Value,
                                 decode_gpu_flops_per_s: Value, decode_gpu_bf16_peak: Value,
                                 decode_gpu_fp16_peak: Value) -> Value:
    """The decode GPU's achievable GEMM share at its compute dtype
    (:func:`planner.estimator.derived.gpu_matmul_efficiency`)."""
    bits = derived.gpu_compute_bits(matmul_path_code, decode_gpu_fp8_peak, decode_gpu_int8_peak,
                                    decode_gpu_int4_peak, decode_gpu_nvfp4_peak,
                                    decode_gpu_mxfp4_peak)
    return derived.gpu_matmul_efficiency(bits, decode_gpu_matmul_efficiency_16bit,
                                         decode_gpu_matmul_efficiency_8bit,
                                         decode_gpu_flops_per_s, decode_gpu_bf16_peak,
                                         decode_gpu_fp16_peak)


DERIVED: tuple = (serving_mode_code, prefill_tp_effective, decode_tp_effective,
                  prefill_ep_effective, decode_ep_effective, prefill_attention_dp_number,
                  decode_attention_dp_number, decode_gpu_flops_per_s,
                  decode_gpu_matmul_efficiency)
"""The derived inputs of this module, in dependency order (after ``attention_dp_number`` and
``matmul_path_code``)."""


# ------------------------------------------------------------------- pools and cost


def prefill_workers_effective(prefill_workers: Value, replicas: Value) -> Value:
    """Prefill workers: ``prefill_workers``, or the scenario's replicas when 0."""
    return where(prefill_workers > 0, prefill_workers, replicas)


def decode_workers_effective(decode_workers: Value, replicas: Value) -> Value:
    """Decode workers: ``decode_workers``, or the scenario's replicas when 0."""
    return where(decode_workers > 0, decode_workers, replicas)


def prefill_gpus(prefill_workers_effective: Value, prefill_tp_effective: Value,
                 pp: Value) -> Value:
    """GPUs of the prefill pool: ``workers * prefill_tp * pp``."""
    return prefill_workers_effective * prefill_tp_effective * pp


def decode_gpus(decode_workers_effective: Value, decode_tp_effective: Value, pp: Value) -> Value:
    """GPUs of the decode pool: ``workers * decode_tp * pp``."""
    return decode_workers_effective * decode_tp_effective * pp


def deployment_gpus(serving_mode_code: Value, gpus: Value, prefill_gpus: Value,
                    decode_gpus: Value) -> Value:
    """GPUs the deployment holds: ``gpus`` aggregated; both pools' disaggregated."""
    return where(serving_mode_code == DISAGGREGATED, prefill_gpus + decode_gpus, gpus)


def disagg_cost_usd_per_hour(prefill_gpus: Value, price_usd_per_gpu_hour: Value,
                             decode_gpus: Value, decode_gpu_price_usd_per_gpu_hour: Value
                             ) -> Value:
    """Hourly cost of the two pools, each at its GPU's price (USD/h)."""
    return prefill_gpus * price_usd_per_gpu_hour + decode_gpus * decode_gpu_price_usd_per_gpu_hour


def cost_usd_per_hour(gpus: Value, price_usd_per_gpu_hour: Value, serving_mode_code: Value,
                      disagg_cost_usd_per_hour: Value) -> Value:
    """Hourly cost of the deployment (USD/h): ``gpus * price`` aggregated
    (:func:`planner.estimator.cost.cost_usd_per_hour`), both pools' disaggregated."""
    return where(serving_mode_code == DISAGGREGATED, disagg_cost_usd_per_hour,
                 gpus * price_usd_per_gpu_hour)


COST: tuple = (prefill_workers_effective, decode_workers_effective, prefill_gpus, decode_gpus,
               deployment_gpus, disagg_cost_usd_per_hour)
"""The pool sizes and their cost, before ``cost_usd_per_hour``."""


# ------------------------------------------------------------------- prefill pool


def prefill_gemm_s_per_token(matmul_params_per_token: Value, prefill_tp_effective: Value,
                             gpu_flops_per_s: Value, matmul_efficiency_effective: Value) -> Value:
    """GEMM seconds per prompt token on a prefill GPU (:func:`serving.gemm_s_per_token`)."""
    return serving.gemm_s_per_token(matmul_params_per_token, prefill_tp_effective,
                                    gpu_flops_per_s, matmul_efficiency_effective)


def prefill_expert_ranks(prefill_ep_effective: Value, model_experts: Value) -> Value:
    """Expert ranks of a prefill worker (:func:`expert_parallel.expert_ranks` at its EP)."""
    return xp.expert_ranks(prefill_ep_effective, model_experts)


def prefill_expert_rank_max_sd(prefill_expert_ranks: Value) -> Value:
    """The busiest prefill expert rank's excess in standard deviations
    (:func:`expert_parallel.expert_rank_max_sd`)."""
    return xp.expert_rank_max_sd(prefill_expert_ranks)


def prefill_expert_gemm_s_per_token(model_matmul_experts_active_params: Value,
                                    prefill_tp_effective: Value, gpu_flops_per_s: Value,
                                    matmul_efficiency_effective: Value) -> Value:
    """Routed-expert GEMM seconds per prompt token on a prefill GPU
    (:func:`expert_parallel.expert_gemm_s_per_token`)."""
    return xp.expert_gemm_s_per_token(model_matmul_experts_active_params,
                                                   prefill_tp_effective, gpu_flops_per_s,
                                                   matmul_efficiency_effective)


def prefill_token_compute_s(prefill_flops: Value, prompt_tokens: Value,
                            prefill_tp_effective: Value, gpu_flops_per_s: Value,
                            matmul_efficiency_effective: Value) -> Value:
    """Compute seconds per prompt token on a prefill GPU
    (:func:`serving.prefill_compute_s_per_token`)."""
    return serving.prefill_compute_s_per_token(prefill_flops, prompt_tokens, prefill_tp_effective,
                                               gpu_flops_per_s, matmul_efficiency_effective)


def prefill_attention_replicated_bytes_per_gpu(
        prefill_attention_dp_number: Value, prefill_tp_effective: Value, pp: Value,
        model_hidden_size: Value, model_attn_flops_per_pair_full: Value,
        model_attn_flops_per_pair_window: Value, model_kv_elems_per_token_full: Value,
        model_kv_elems_per_token_window: Value, model_attn_matmul_params_other: Value,
        weight_bits_effective: Value) -> Value:
    """Attention weights data-parallel attention replicates on a prefill GPU
    (:func:`engine_memory.attention_replicated_bytes_per_gpu`)."""
    return em.attention_replicated_bytes_per_gpu(
        prefill_attention_dp_number, prefill_tp_effective, pp, model_hidden_size,
        model_attn_flops_per_pair_full, model_attn_flops_per_pair_window,
        model_kv_elems_per_token_full, model_kv_elems_per_token_window,
        model_attn_matmul_params_other, weight_bits_effective)


def prefill_dense_weights_s(model_matmul_dense_params: Value, model_lm_head_matmul_params: Value,
                            weight_bits_effective: Value, embedding_bits: Value,
                            prefill_tp_effective: Value, pp: Value,
                            prefill_attention_replicated_bytes_per_gpu: Value,
                            gpu_bandwidth_bytes_per_s: Value,
                            bandwidth_efficiency_effective: Value) -> Value:
    """Seconds a prefill step reads the dense weights (:func:`serving.serving_dense_weights_s`)."""
    return serving.serving_dense_weights_s(
        model_matmul_dense_params, model_lm_head_matmul_params, weight_bits_effective,
        embedding_bits, prefill_tp_effective, pp, prefill_attention_replicated_bytes_per_gpu,
        gpu_bandwidth_bytes_per_s, bandwidth_efficiency_effective)


def prefill_expert_weights_s(model_matmul_experts_params: Value, weight_bits_effective: Value,
                             prefill_tp_effective: Value, gpu_bandwidth_bytes_per_s: Value,
                             bandwidth_efficiency_effective: Value) -> Value:
    """Seconds to read every routed expert on a prefill GPU
    (:func:`serving.serving_expert_weights_s`)."""
    return serving.serving_expert_weights_s(model_matmul_experts_params, weight_bits_effective,
                                            prefill_tp_effective, gpu_bandwidth_bytes_per_s,
                                            bandwidth_efficiency_effective)


def _pool_step_fixed_s(tp: Value, pp: Value, ep: Value, attention_dp_number: Value,
                       model_layers: Value, model_experts: Value,
                       model_experts_per_token: Value, engine_code: Value,
                       nvlink_domain_gpus: Value, collective_latency_s: Value,
                       engine_step_overhead_s: Value, kernel_overhead_s_per_layer: Value,
                       model_layer_kernels: Value, host_weight_stream_s: Value) -> Value:
    """Batch-independent time of a pool's step (:func:`serving.serving_step_fixed_s` with the
    pool's collectives, :func:`planner.estimator.expert_parallel.collective_latency_s_per_step`
    at its TP, EP and attention DP). Not a column."""
    code = xp.moe_exchange_code(tp, ep, attention_dp_number, model_experts,
                                model_experts_per_token, engine_code, nvlink_domain_gpus)
    moe_latency = xp.moe_collective_latency_s(code, tp, ep, nvlink_domain_gpus,
                                              collective_latency_s)
    latency = xp.collective_latency_s_per_step(tp, pp, attention_dp_number, model_layers, code,
                                               collective_latency_s, moe_latency)
    return serving.serving_step_fixed_s(latency, model_layers, engine_step_overhead_s,
                                        kernel_overhead_s_per_layer, model_layer_kernels,
                                        host_weight_stream_s, 0)  # no drafter in a pool


def prefill_step_fixed_s(prefill_tp_effective: Value, pp: Value, prefill_ep_effective: Value,
                         prefill_attention_dp_number: Value, model_layers: Value,
                         model_experts: Value, model_experts_per_token: Value,
                         engine_code: Value, gpu_nvlink_domain_gpus: Value,
                         collective_latency_s: Value, engine_step_overhead_s: Value,
                         kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                         host_weight_stream_s: Value) -> Value:
    """Batch-independent time of a prefill step (:func:`_pool_step_fixed_s` at the prefill
    TP/EP on the scenario's GPU)."""
    return _pool_step_fixed_s(prefill_tp_effective, pp, prefill_ep_effective,
                              prefill_attention_dp_number, model_layers, model_experts,
                              model_experts_per_token, engine_code, gpu_nvlink_domain_gpus,
                              collective_latency_s, engine_step_overhead_s,
                              kernel_overhead_s_per_layer, model_layer_kernels,
                              host_weight_stream_s)


def _prefill_step_at(tokens: Value, prefill_token_compute_s: Value, prefill_token_s: Value,
                     prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                     prefill_expert_weights_s: Value, model_experts: Value,
                     model_experts_per_token: Value, prefill_gemm_s_per_token: Value,
                     prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                     prefill_expert_rank_max_sd: Value) -> Value:
    """A prefill-only step of ``tokens`` prompt tokens (:func:`serving._step_kind_s` with no
    decodes), on the busiest of the prefill worker's expert ranks. Not a column."""
    return serving._step_kind_s(tokens, 0, prefill_token_compute_s, 0, 0, prefill_token_s,
                                prefill_step_fixed_s, prefill_dense_weights_s,
                                prefill_expert_weights_s, model_experts, model_experts_per_token,
                                prefill_gemm_s_per_token, 0, 1, prefill_expert_gemm_s_per_token,
                                prefill_expert_ranks, prefill_expert_rank_max_sd)


def prefill_step_s(max_num_batched_tokens_effective: Value, pp: Value,
                   prefill_token_compute_s: Value, prefill_token_s: Value,
                   prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                   prefill_expert_weights_s: Value, model_experts: Value,
                   model_experts_per_token: Value, prefill_gemm_s_per_token: Value,
                   prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                   prefill_expert_rank_max_sd: Value) -> Value:
    """A full prefill step: the token budget of prompt chunks, one micro-batch carrying
    ``1/pp`` of it (the serving step's convention)."""
    return _prefill_step_at(max_num_batched_tokens_effective / pp, prefill_token_compute_s,
                            prefill_token_s, prefill_step_fixed_s, prefill_dense_weights_s,
                            prefill_expert_weights_s, model_experts, model_experts_per_token,
                            prefill_gemm_s_per_token, prefill_expert_gemm_s_per_token,
                            prefill_expert_ranks, prefill_expert_rank_max_sd)


def prefill_chunk_step_s(prompt_tokens: Value, max_num_batched_tokens_effective: Value,
                         pp: Value, prefill_token_compute_s: Value, prefill_token_s: Value,
                         prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                         prefill_expert_weights_s: Value, model_experts: Value,
                         model_experts_per_token: Value,
                         prefill_gemm_s_per_token: Value,
                         prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                         prefill_expert_rank_max_sd: Value) -> Value:
    """A prefill step carrying one prompt's chunk alone, ``min(S, budget)`` tokens."""
    chunk = minimum(prompt_tokens, max_num_batched_tokens_effective)
    return _prefill_step_at(chunk / pp, prefill_token_compute_s, prefill_token_s,
                            prefill_step_fixed_s, prefill_dense_weights_s,
                            prefill_expert_weights_s, model_experts, model_experts_per_token,
                            prefill_gemm_s_per_token, prefill_expert_gemm_s_per_token,
                            prefill_expert_ranks, prefill_expert_rank_max_sd)


def prefill_capacity_requests_per_s(prefill_workers_effective: Value, pp: Value,
                                    max_num_batched_tokens_effective: Value,
                                    prompt_tokens: Value, prefill_step_s: Value) -> Value:
    """Most prompts per second the prefill pool completes:
    ``Wp * pp * budget / S / step(budget)`` (every step full of prompt chunks)."""
    return (prefill_workers_effective * pp * max_num_batched_tokens_effective / prompt_tokens
            / prefill_step_s)


def prefill_service_s(prefill_steps_per_request: Value, prefill_chunk_step_s: Value) -> Value:
    """Time a prompt spends in prefill once admitted: ``ceil(S / budget)`` steps of its own
    chunk."""
    return prefill_steps_per_request * prefill_chunk_step_s


# ------------------------------------------------------------------- decode pool


def decode_matmul_efficiency_effective(matmul_efficiency: Value,
                                       decode_gpu_matmul_efficiency: Value) -> Value:
    """Achievable tensor share on a decode GPU (:func:`serving.matmul_efficiency_effective`)."""
    return serving.matmul_efficiency_effective(matmul_efficiency, decode_gpu_matmul_efficiency)


def decode_bandwidth_efficiency_effective(bandwidth_efficiency: Value,
                                          decode_gpu_bandwidth_efficiency: Value) -> Value:
    """Achievable bandwidth share on a decode GPU
    (:func:`serving.bandwidth_efficiency_effective`)."""
    return serving.bandwidth_efficiency_effective(bandwidth_efficiency,
                                                  decode_gpu_bandwidth_efficiency)


def decode_gemm_s_per_token(matmul_params_per_token: Value, decode_tp_effective: Value,
                            decode_gpu_flops_per_s: Value,
                            decode_matmul_efficiency_effective: Value) -> Value:
    """GEMM seconds per decode token on a decode GPU (:func:`serving.gemm_s_per_token`)."""
    return serving.gemm_s_per_token(matmul_params_per_token, decode_tp_effective,
                                    decode_gpu_flops_per_s, decode_matmul_efficiency_effective)


def decode_expert_ranks(decode_ep_effective: Value, model_experts: Value) -> Value:
    """Expert ranks of a decode worker (:func:`expert_parallel.expert_ranks` at its EP)."""
    return xp.expert_ranks(decode_ep_effective, model_experts)


def decode_expert_rank_max_sd(decode_expert_ranks: Value) -> Value:
    """The busiest decode expert rank's excess in standard deviations
    (:func:`expert_parallel.expert_rank_max_sd`)."""
    return xp.expert_rank_max_sd(decode_expert_ranks)


def decode_expert_gemm_s_per_token(model_matmul_experts_active_params: Value,
                                   decode_tp_effective: Value, decode_gpu_flops_per_s: Value,
                                   decode_matmul_efficiency_effective: Value) -> Value:
    """Routed-expert GEMM seconds per decode token on a decode GPU
    (:func:`expert_parallel.expert_gemm_s_per_token`)."""
    return xp.expert_gemm_s_per_token(model_matmul_experts_active_params,
                                                   decode_tp_effective, decode_gpu_flops_per_s,
                                                   decode_matmul_efficiency_effective)


def decode_lm_head_s_per_token(model_lm_head_matmul_params: Value, decode_tp_effective: Value,
                               decode_gpu_flops_per_s: Value,
                               decode_matmul_efficiency_effective: Value) -> Value:
    """Logits seconds per decode token on a decode GPU (:func:`serving.lm_head_s_per_token`)."""
    return serving.lm_head_s_per_token(model_lm_head_matmul_params, decode_tp_effective,
                                       decode_gpu_flops_per_s,
                                       decode_matmul_efficiency_effective)


def decode_token_compute_s(decode_flops: Value, output_tokens: Value,
                           decode_tp_effective: Value, decode_gpu_flops_per_s: Value,
                           decode_matmul_efficiency_effective: Value) -> Value:
    """Compute seconds of one decode token on a decode GPU
    (:func:`serving.decode_compute_s_per_token`)."""
    return serving.decode_compute_s_per_token(decode_flops, output_tokens - 1,
                                              decode_tp_effective,
                                              decode_gpu_flops_per_s,
                                              decode_matmul_efficiency_effective)


def decode_pool_kv_s_per_token(output_tokens: Value, prompt_tokens: Value,
                          mean_decode_context_tokens: Value, output_tokens_cv: Value,
                          kv_bytes_per_token: Value, model_kv_heads: Value,
                          decode_tp_effective: Value, decode_attention_dp_number: Value,
                          state_bytes_per_sequence: Value, model_state_heads: Value,
                          decode_gpu_bandwidth_bytes_per_s: Value,
                          decode_bandwidth_efficiency_effective: Value) -> Value:
    """KV memory seconds of one decode token on a decode GPU: the request's KV traffic
    (:func:`serving.serving_kv_memory_s_per_request`, the share per GPU at the decode TP and
    attention DP, :func:`engine_memory.kv_fraction_per_gpu`) over its ``G - 1`` decodes
    (:func:`serving.decode_kv_s_per_token`)."""
    fraction = em.kv_fraction_per_gpu(memory.tp_kv_fraction(model_kv_heads, decode_tp_effective),
                                      decode_tp_effective, decode_attention_dp_number)
    per_request = serving.serving_kv_memory_s_per_request(
        output_tokens, prompt_tokens, output_tokens - 1, 0, mean_decode_context_tokens,
        output_tokens_cv,
        kv_bytes_per_token, fraction, state_bytes_per_sequence,
        memory.tp_state_fraction(model_state_heads, decode_tp_effective),
        decode_gpu_bandwidth_bytes_per_s, decode_bandwidth_efficiency_effective)
    return serving.decode_kv_s_per_token(per_request, output_tokens - 1)


def decode_attention_replicated_bytes_per_gpu(
        decode_attention_dp_number: Value, decode_tp_effective: Value, pp: Value,
        model_hidden_size: Value, model_attn_flops_per_pair_full: Value,
        model_attn_flops_per_pair_window: Value, model_kv_elems_per_token_full: Value,
        model_kv_elems_per_token_window: Value, model_attn_matmul_params_other: Value,
        weight_bits_effective: Value) -> Value:
    """Attention weights data-parallel attention replicates on a decode GPU
    (:func:`engine_memory.attention_replicated_bytes_per_gpu`)."""
    return em.attention_replicated_bytes_per_gpu(
        decode_attention_dp_number, decode_tp_effective, pp, model_hidden_size,
        model_attn_flops_per_pair_full, model_attn_flops_per_pair_window,
        model_kv_elems_per_token_full, model_kv_elems_per_token_window,
        model_attn_matmul_params_other, weight_bits_effective)


def decode_dense_weights_s(model_matmul_dense_params: Value, model_lm_head_matmul_params: Value,
                           weight_bits_effective: Value, embedding_bits: Value,
                           decode_tp_effective: Value, pp: Value,
                           decode_attention_replicated_bytes_per_gpu: Value,
                           decode_gpu_bandwidth_bytes_per_s: Value,
                           decode_bandwidth_efficiency_effective: Value) -> Value:
    """Seconds a decode step reads the dense weights (:func:`serving.serving_dense_weights_s`)."""
    return serving.serving_dense_weights_s(
        model_matmul_dense_params, model_lm_head_matmul_params, weight_bits_effective,
        embedding_bits, decode_tp_effective, pp, decode_attention_replicated_bytes_per_gpu,
        decode_gpu_bandwidth_bytes_per_s, decode_bandwidth_efficiency_effective)


def decode_expert_weights_s(model_matmul_experts_params: Value, weight_bits_effective: Value,
                            decode_tp_effective: Value, decode_gpu_bandwidth_bytes_per_s: Value,
                            decode_bandwidth_efficiency_effective: Value) -> Value:
    """Seconds to read every routed expert on a decode GPU
    (:func:`serving.serving_expert_weights_s`)."""
    return serving.serving_expert_weights_s(model_matmul_experts_params, weight_bits_effective,
                                            decode_tp_effective, decode_gpu_bandwidth_bytes_per_s,
                                            decode_bandwidth_efficiency_effective)


def decode_step_fixed_s(decode_tp_effective: Value, pp: Value, decode_ep_effective: Value,
                        decode_attention_dp_number: Value, model_layers: Value,
                        model_experts: Value, model_experts_per_token: Value,
                        engine_code: Value, decode_gpu_nvlink_domain_gpus: Value,
                        collective_latency_s: Value, engine_step_overhead_s: Value,
                        kernel_overhead_s_per_layer: Value, model_layer_kernels: Value,
                        host_weight_stream_s: Value) -> Value:
    """Batch-independent time of a decode step (:func:`_pool_step_fixed_s` at the decode
    TP/EP on the decode GPU's domain)."""
    return _pool_step_fixed_s(decode_tp_effective, pp, decode_ep_effective,
                              decode_attention_dp_number, model_layers, model_experts,
                              model_experts_per_token, engine_code,
                              decode_gpu_nvlink_domain_gpus, collective_latency_s,
                              engine_step_overhead_s, kernel_overhead_s_per_layer,
                              model_layer_kernels, host_weight_stream_s)


def decode_kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full: Value,
                                      model_kv_elems_per_token_window: Value, kv_bits: Value,
                                      model_kv_heads_growing: Value, decode_tp_effective: Value,
                                      decode_attention_dp_number: Value, pp: Value,
                                      engine_code: Value,
                                      model_indexer_elems_per_token: Value,
                                      model_sparse_mla_layers: Value,
                                      model_vllm_v4_kv_bytes_per_token: Value) -> Value:
    """KV bytes one context token takes on one decode GPU
    (:func:`engine_memory.kv_bytes_per_token_per_gpu` at the decode TP and attention DP)."""
    return em.kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full,
                                         model_kv_elems_per_token_window, kv_bits,
                                         model_kv_heads_growing, decode_tp_effective,
                                         decode_attention_dp_number, pp, engine_code,
                                         model_indexer_elems_per_token, model_sparse_mla_layers,
                                         model_vllm_v4_kv_bytes_per_token)


def decode_kv_pool_bytes_per_gpu(engine_code: Value, vllm_v0_accounting_number: Value,
                                 decode_gpu_usable_memory_bytes: Value,
                                 decode_gpu_memory_bytes: Value,
                                 gpu_memory_utilization: Value, mem_fraction_static: Value,
                                 free_gpu_memory_fraction: Value,
                                 weights_on_gpu_bytes_per_gpu: Value, tp: Value,
                                 decode_tp_effective: Value, rope_cache_bytes: Value,
                                 decode_attention_replicated_bytes_per_gpu: Value,
                                 activation_peak_bytes: Value,
                                 decode_gpu_runtime_context_bytes: Value, non_torch_gib: Value,
                                 comm_buffer_gib: Value, reserve_bytes_per_gpu: Value) -> Value:
    """Bytes of KV pool per decode GPU (:func:`engine_memory.engine_kv_bytes_per_gpu` on the
    decode GPU): its weights are the scenario's per GPU times ``tp / decode_tp`` (they shard
    evenly over TP) with the rotary table and the decode pool's replicated attention
    (:func:`engine_memory.engine_weights_bytes_per_gpu`); the engine's non-torch memory at the
    decode TP (:func:`engine_memory.non_torch_bytes`); the roofline: memory - reserve - weights
    (:func:`memory.kv_budget_bytes`)."""
    sharded = weights_on_gpu_bytes_per_gpu * tp / decode_tp_effective
    weights = em.engine_weights_bytes_per_gpu(engine_code, sharded, rope_cache_bytes,
                                              decode_attention_replicated_bytes_per_gpu,
                                              0)  # no drafter in a pool
    non_torch = em.non_torch_bytes(engine_code, vllm_v0_accounting_number,
                                   decode_gpu_runtime_context_bytes, non_torch_gib,
                                   decode_tp_effective, comm_buffer_gib)
    budget = memory.kv_budget_bytes(decode_gpu_memory_bytes, reserve_bytes_per_gpu, sharded)
    return em.engine_kv_bytes_per_gpu(engine_code, vllm_v0_accounting_number,
                                      decode_gpu_usable_memory_bytes, gpu_memory_utilization,
                                      mem_fraction_static, free_gpu_memory_fraction, weights,
                                      activation_peak_bytes, non_torch, budget)


def decode_engine_block_tokens(engine_code: Value, block_size_effective: Value,
                               state_bytes_per_sequence_per_gpu: Value, tp: Value,
                               decode_tp_effective: Value, model_state_layers: Value,
                               decode_kv_bytes_per_token_per_gpu: Value,
                               model_kv_layers: Value, model_vllm_v4_kv_bytes_per_token: Value,
                               decode_gpu_compute_capability: Value,
                               model_attention_head_dim: Value) -> Value:
    """Tokens per KV block of a decode worker's engine
    (:func:`engine_memory.engine_block_tokens` at the decode TP, the state per GPU scaled by
    ``tp / decode_tp``, on the decode GPU: its compute capability sets vLLM's alignment)."""
    return em.engine_block_tokens(engine_code, block_size_effective,
                                  state_bytes_per_sequence_per_gpu * tp / decode_tp_effective,
                                  model_state_layers, decode_kv_bytes_per_token_per_gpu,
                                  model_kv_layers, model_vllm_v4_kv_bytes_per_token,
                                  decode_gpu_compute_capability, model_attention_head_dim)


def decode_token_capacity(decode_kv_pool_bytes_per_gpu: Value,
                          decode_kv_bytes_per_token_per_gpu: Value,
                          decode_engine_block_tokens: Value, engine_code: Value,
                          model_growing_layers: Value, model_window_layers: Value,
                          model_state_layers: Value) -> Value:
    """KV tokens one decode worker's pool holds, whole blocks of its own
    (:func:`engine_memory.kv_tokens_in`)."""
    return em.kv_tokens_in(decode_kv_pool_bytes_per_gpu, decode_kv_bytes_per_token_per_gpu,
                           decode_engine_block_tokens, engine_code, model_growing_layers,
                           model_window_layers, model_state_layers)


def decode_max_running_batch(max_num_seqs_effective: Value, decode_token_capacity: Value,
                             mean_decode_context_tokens: Value, engine_state_tokens: Value,
                             output_tokens: Value, output_tokens_cv: Value, engine_code: Value,
                             prompt_tokens: Value) -> Value:
    """Most sequences a decode worker runs at once: ``max_num_seqs`` and its KV pool
    (:func:`serving.max_running_batch`)."""
    return serving.max_running_batch(max_num_seqs_effective, decode_token_capacity,
                                     mean_decode_context_tokens, engine_state_tokens,
                                     output_tokens, output_tokens_cv, engine_code,
                                     prompt_tokens, 0, 1, 0)  # no prefix cache or speculation


def prefill_kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full: Value,
                                       model_kv_elems_per_token_window: Value, kv_bits: Value,
                                       model_kv_heads_growing: Value,
                                       prefill_tp_effective: Value,
                                       prefill_attention_dp_number: Value, pp: Value,
                                       engine_code: Value,
                                       model_indexer_elems_per_token: Value,
                                       model_sparse_mla_layers: Value,
                                       model_vllm_v4_kv_bytes_per_token: Value) -> Value:
    """KV bytes one context token takes on one prefill GPU
    (:func:`engine_memory.kv_bytes_per_token_per_gpu` at the prefill TP and attention DP)."""
    return em.kv_bytes_per_token_per_gpu(model_kv_elems_per_token_full,
                                         model_kv_elems_per_token_window, kv_bits,
                                         model_kv_heads_growing, prefill_tp_effective,
                                         prefill_attention_dp_number, pp, engine_code,
                                         model_indexer_elems_per_token, model_sparse_mla_layers,
                                         model_vllm_v4_kv_bytes_per_token)


def prefill_kv_pool_bytes_per_gpu(engine_code: Value, vllm_v0_accounting_number: Value,
                                  gpu_usable_memory_bytes: Value, gpu_memory_bytes: Value,
                                  gpu_memory_utilization: Value, mem_fraction_static: Value,
                                  free_gpu_memory_fraction: Value,
                                  weights_on_gpu_bytes_per_gpu: Value, tp: Value,
                                  prefill_tp_effective: Value, rope_cache_bytes: Value,
                                  prefill_attention_replicated_bytes_per_gpu: Value,
                                  activation_peak_bytes: Value,
                                  gpu_runtime_context_bytes: Value, non_torch_gib: Value,
                                  comm_buffer_gib: Value, reserve_bytes_per_gpu: Value) -> Value:
    """Bytes of KV pool per prefill GPU: :func:`decode_kv_pool_bytes_per_gpu`'s accounting on
    the scenario's GPU at the prefill TP (a prefill worker is the same engine, holding the
    prompts it computes until their KV is sent)."""
    return decode_kv_pool_bytes_per_gpu(
        engine_code, vllm_v0_accounting_number, gpu_usable_memory_bytes, gpu_memory_bytes,
        gpu_memory_utilization, mem_fraction_static, free_gpu_memory_fraction,
        weights_on_gpu_bytes_per_gpu, tp, prefill_tp_effective, rope_cache_bytes,
        prefill_attention_replicated_bytes_per_gpu, activation_peak_bytes,
        gpu_runtime_context_bytes, non_torch_gib, comm_buffer_gib, reserve_bytes_per_gpu)


def prefill_engine_block_tokens(engine_code: Value, block_size_effective: Value,
                                state_bytes_per_sequence_per_gpu: Value, tp: Value,
                                prefill_tp_effective: Value, model_state_layers: Value,
                                prefill_kv_bytes_per_token_per_gpu: Value,
                                model_kv_layers: Value, model_vllm_v4_kv_bytes_per_token: Value,
                                gpu_compute_capability: Value,
                                model_attention_head_dim: Value) -> Value:
    """Tokens per KV block of a prefill worker's engine (:func:`decode_engine_block_tokens`
    at the prefill TP, on the scenario's GPU)."""
    return em.engine_block_tokens(engine_code, block_size_effective,
                                  state_bytes_per_sequence_per_gpu * tp / prefill_tp_effective,
                                  model_state_layers, prefill_kv_bytes_per_token_per_gpu,
                                  model_kv_layers, model_vllm_v4_kv_bytes_per_token,
                                  gpu_compute_capability, model_attention_head_dim)


def prefill_token_capacity(prefill_kv_pool_bytes_per_gpu: Value,
                           prefill_kv_bytes_per_token_per_gpu: Value,
                           prefill_engine_block_tokens: Value, engine_code: Value,
                           model_growing_layers: Value, model_window_layers: Value,
                           model_state_layers: Value) -> Value:
    """KV tokens one prefill worker's pool holds, whole blocks of its own
    (:func:`engine_memory.kv_tokens_in`)."""
    return em.kv_tokens_in(prefill_kv_pool_bytes_per_gpu, prefill_kv_bytes_per_token_per_gpu,
                           prefill_engine_block_tokens, engine_code, model_growing_layers,
                           model_window_layers, model_state_layers)


def pools_fit(prefill_kv_pool_bytes_per_gpu: Value, prefill_token_capacity: Value,
              decode_kv_pool_bytes_per_gpu: Value, decode_token_capacity: Value,
              prompt_tokens: Value, context_tokens: Value, engine_state_tokens: Value) -> Value:
    """Whether both pools start and hold a request: a positive KV pool on each, one prompt
    (with its fixed state) in a prefill worker's pool and one full-length context in a decode
    worker's (:func:`engine_memory.engine_fits`'s test, per pool). ``engine_fits`` is this in
    a disaggregated deployment."""
    prefill_ok = (prefill_kv_pool_bytes_per_gpu > 0) * (
        prefill_token_capacity >= prompt_tokens + engine_state_tokens)
    decode_ok = (decode_kv_pool_bytes_per_gpu > 0) * (
        decode_token_capacity >= context_tokens + engine_state_tokens)
    return prefill_ok * decode_ok > 0


_DECODE_STEP_COLUMNS = (
    "pp", "decode_token_compute_s", "decode_pool_kv_s_per_token", "decode_token_s",
    "decode_step_fixed_s", "decode_dense_weights_s", "decode_expert_weights_s", "model_experts",
    "model_experts_per_token", "decode_gemm_s_per_token", "decode_lm_head_s_per_token",
    "decode_expert_gemm_s_per_token", "decode_expert_ranks", "decode_expert_rank_max_sd")
"""The columns a decode step reads besides its batch, in :func:`_decode_step_at`'s order."""


def _decode_step_at(batch: Value, pp: Value, decode_token_compute_s: Value,
                    decode_pool_kv_s_per_token: Value, decode_token_s: Value,
                    decode_step_fixed_s: Value, decode_dense_weights_s: Value,
                    decode_expert_weights_s: Value, model_experts: Value,
                    model_experts_per_token: Value, decode_gemm_s_per_token: Value,
                    decode_lm_head_s_per_token: Value, decode_expert_gemm_s_per_token: Value,
                    decode_expert_ranks: Value, decode_expert_rank_max_sd: Value) -> Value:
    """A decode-only step of ``batch`` running sequences (:func:`serving._step_kind_s` with
    no prompt tokens), one micro-batch of ``batch / pp``, on the busiest of the decode
    worker's expert ranks. Not a column."""
    return serving._step_kind_s(0, maximum(batch, 1) / pp, 0, decode_token_compute_s,
                                decode_pool_kv_s_per_token, decode_token_s, decode_step_fixed_s,
                                decode_dense_weights_s, decode_expert_weights_s, model_experts,
                                model_experts_per_token, decode_gemm_s_per_token,
                                decode_lm_head_s_per_token, 1, decode_expert_gemm_s_per_token,
                                decode_expert_ranks, decode_expert_rank_max_sd)


def decode_saturation_step_s(decode_max_running_batch: Value, pp: Value,
                             decode_token_compute_s: Value, decode_pool_kv_s_per_token: Value,
                             decode_token_s: Value, decode_step_fixed_s: Value,
                             decode_dense_weights_s: Value, decode_expert_weights_s: Value,
                             model_experts: Value, model_experts_per_token: Value,
                             decode_gemm_s_per_token: Value,
                             decode_lm_head_s_per_token: Value,
                       decode_expert_gemm_s_per_token: Value, decode_expert_ranks: Value,
                       decode_expert_rank_max_sd: Value) -> Value:
    """A decode step at the decode worker's full batch."""
    return _decode_step_at(decode_max_running_batch, pp, decode_token_compute_s,
                           decode_pool_kv_s_per_token, decode_token_s, decode_step_fixed_s,
                           decode_dense_weights_s, decode_expert_weights_s, model_experts,
                           model_experts_per_token, decode_gemm_s_per_token,
                           decode_lm_head_s_per_token, decode_expert_gemm_s_per_token,
                           decode_expert_ranks, decode_expert_rank_max_sd)


def decode_capacity_requests_per_s(decode_workers_effective: Value,
                                   decode_max_running_batch: Value, output_tokens: Value,
                                   decode_saturation_step_s: Value) -> Value:
    """Most requests per second the decode pool completes:
    ``Wd * B_max / ((G - 1) * step(B_max))`` (the prefill makes the first token; unbounded
    for ``G = 1``)."""
    return where(output_tokens > 1,
                 decode_workers_effective * decode_max_running_batch
                 / (maximum(output_tokens - 1, 1) * decode_saturation_step_s), _HUGE)


def disagg_saturation_requests_per_s(prefill_capacity_requests_per_s: Value,
                                     decode_capacity_requests_per_s: Value) -> Value:
    """Most requests per second the disaggregated deployment completes: the slower pool's."""
    return minimum(prefill_capacity_requests_per_s, decode_capacity_requests_per_s)


POOLS: tuple = (
    prefill_expert_ranks, prefill_expert_rank_max_sd, prefill_expert_gemm_s_per_token,
    prefill_gemm_s_per_token, prefill_token_compute_s, prefill_attention_replicated_bytes_per_gpu,
    prefill_dense_weights_s, prefill_expert_weights_s, pool_links.prefill_tp_link_bytes_per_s,
    pool_links.prefill_ep_link_bytes_per_s, pool_links.prefill_token_s, prefill_step_fixed_s,
    prefill_step_s, prefill_chunk_step_s, prefill_capacity_requests_per_s, prefill_service_s,
    decode_matmul_efficiency_effective, decode_bandwidth_efficiency_effective,
    decode_expert_ranks, decode_expert_rank_max_sd, decode_expert_gemm_s_per_token,
    decode_gemm_s_per_token, decode_lm_head_s_per_token, decode_token_compute_s,
    decode_pool_kv_s_per_token, decode_attention_replicated_bytes_per_gpu, decode_dense_weights_s,
    decode_expert_weights_s, pool_links.decode_tp_link_bytes_per_s,
    pool_links.decode_ep_link_bytes_per_s, pool_links.decode_token_s, decode_step_fixed_s,
    decode_kv_bytes_per_token_per_gpu, decode_kv_pool_bytes_per_gpu,
    decode_engine_block_tokens, decode_token_capacity,
    decode_max_running_batch, decode_saturation_step_s, decode_capacity_requests_per_s,
    disagg_saturation_requests_per_s, prefill_kv_bytes_per_token_per_gpu,
    prefill_kv_pool_bytes_per_gpu, prefill_engine_block_tokens, prefill_token_capacity, pools_fit)
"""The two pools' steps and capacities, before ``saturation_requests_per_s``."""


# ------------------------------------------------------------------- KV transfer


def kv_transfer_link_kind(decode_gpu_same: Value, prefill_gpus: Value, decode_gpus: Value,
                          gpu_nvlink_domain_gpus: Value) -> Value:
    """Path the KV cache takes from a prefill to a decode worker (code of
    :data:`planner.estimator.topology.LINK_DOMAIN` / ``LINK_NIC``): the scale-up domain when
    both pools are of one GPU type and all their GPUs fit in one domain of more than one GPU
    (``nvlink_domain_gpus``: a GB200 NVL72 rack holds 72), else the network."""
    fits = decode_gpu_same * (gpu_nvlink_domain_gpus > 1) * (
        prefill_gpus + decode_gpus <= gpu_nvlink_domain_gpus)
    return where(fits > 0, topology.LINK_DOMAIN, topology.LINK_NIC)


def kv_transfer_bytes(prompt_tokens: Value, kv_bytes_per_token: Value) -> Value:
    """Bytes of KV one prompt hands from prefill to decode: ``S * kv_bytes_per_token`` (the
    whole model's KV at the KV dtype, :func:`memory.kv_bytes_per_token`)."""
    return prompt_tokens * kv_bytes_per_token


def kv_transfer_link_bytes_per_s(kv_transfer_link_kind: Value,
                                 gpu_interconnect_bytes_per_s: Value, gpu_nic_gbit_per_s: Value,
                                 decode_gpu_nic_gbit_per_s: Value, gpu_pcie_gen: Value,
                                 prefill_tp_effective: Value, decode_tp_effective: Value,
                                 prefill_attention_dp_number: Value,
                                 decode_attention_dp_number: Value) -> Value:
    """Bytes/s the transfer of one prompt's KV reaches: per GPU pair NVLink's per-direction
    bandwidth (``interconnect / 2``) inside the domain, else the slower NIC of the two GPUs
    (:func:`topology.nic_bytes_per_s`; PCIe where no NIC is known), times the GPU pairs that
    send at once: each rank of a tensor-parallel worker holds a shard of every sequence's KV
    and sends it from its own link (NIXL / Mooncake RDMA from every GPU), ``min(prefill
    ranks, decode ranks)``; under data-parallel attention a sequence lives on one rank (1)."""
    nic = topology.nic_bytes_per_s(minimum(gpu_nic_gbit_per_s, decode_gpu_nic_gbit_per_s))
    network = where(nic > 0, nic, topology.pcie_bytes_per_s(gpu_pcie_gen))
    link = where(kv_transfer_link_kind == topology.LINK_DOMAIN,
                 gpu_interconnect_bytes_per_s / 2, network)
    senders = where(prefill_attention_dp_number > 0, 1, prefill_tp_effective)
    receivers = where(decode_attention_dp_number > 0, 1, decode_tp_effective)
    return link * minimum(senders, receivers)


def kv_transfer_s(kv_transfer_bytes: Value, kv_transfer_link_bytes_per_s: Value,
                  kv_transfer_link_kind: Value) -> Value:
    """Seconds to move one prompt's KV: one hop's latency
    (:data:`topology.NVLINK_HOP_LATENCY_S` in the domain, :data:`topology.NIC_HOP_LATENCY_S`
    across the network: nccl-tests small-message figures) plus bytes over the link's
    bandwidth."""
    latency = where(kv_transfer_link_kind == topology.LINK_DOMAIN,
                    topology.NVLINK_HOP_LATENCY_S, topology.NIC_HOP_LATENCY_S)
    return latency + safe_div(kv_transfer_bytes, kv_transfer_link_bytes_per_s, _HUGE)


# ------------------------------------------------------------------- operating point


def newton_batch(previous: Value, rate: Value, b_max: Value, step: Value,
                 next_step: Value) -> Value:
    """One Newton step of the open loop's decode batch ``b = c * step(b)`` (``c`` = ``rate``,
    :func:`decode_arrivals_steps_per_s`): the step is linearized at ``previous`` with the
    slope of one more sequence, ``s = next_step - step``, ``b' = c (step - s b) / (1 - c s)``,
    at most ``B_max`` (``B_max`` where ``c s >= 1``: the pool is saturated). ``step`` and
    ``next_step`` are columns of their own (:func:`step_column`), so each iteration's
    formula names them instead of repeating the step's operator sum."""
    slope = next_step - step
    denominator = 1 - rate * slope
    solved = safe_div(rate * (step - slope * previous), denominator, _HUGE)
    solved = where(denominator > 0, solved, b_max)
    return minimum(maximum(solved, 1), b_max)


def formula_column(name: str, doc: str, params: tuple[str, ...],
                   body: Callable[..., Value]) -> Callable[..., Value]:
    """A formula column ``name`` reading ``params`` in order (for families of columns that
    are the same formula at every iteration, made rather than written out)."""
    def column(*args: Value) -> Value:
        return body(*args)

    column.__name__ = column.__qualname__ = name
    column.__doc__ = doc
    column.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Value")
         for p in params], return_annotation="Value")
    return column


def step_column(name: str, batch_column: str, more: int = 0) -> Callable[..., Value]:
    """The column ``name``: the decode step (s) at ``batch_column`` plus ``more`` sequences
    (:func:`_decode_step_at`)."""
    what = f"``{batch_column}``" + (f" + {more} sequence" if more else "")
    return formula_column(
        name, f"Decode step (s) at {what} running sequences per decode worker "
        "(:func:`planner.estimator.disagg._decode_step_at`): a Newton iteration's point.",
        (batch_column, *_DECODE_STEP_COLUMNS),
        lambda batch, *step: _decode_step_at(batch + more, *step))


def decode_arrivals_steps_per_s(target_requests_per_s: Value, decode_workers_effective: Value,
                                output_tokens: Value) -> Value:
    """Open loop: decode-token work arriving per second at one decode worker, in sequences:
    ``rate / Wd * (G - 1)`` (Little's law gives ``b = this * step``)."""
    return safe_div(target_requests_per_s, decode_workers_effective, 0.0) * maximum(
        output_tokens - 1, 0)


def decode_batch_0(load_mode: Value, concurrency: Value, decode_workers_effective: Value,
                   decode_max_running_batch: Value, decode_arrivals_steps_per_s: Value,
                   pp: Value, decode_token_compute_s: Value, decode_pool_kv_s_per_token: Value,
                   decode_token_s: Value, decode_step_fixed_s: Value,
                   decode_dense_weights_s: Value, decode_expert_weights_s: Value,
                   model_experts: Value, model_experts_per_token: Value,
                   decode_gemm_s_per_token: Value, decode_lm_head_s_per_token: Value,
                       decode_expert_gemm_s_per_token: Value, decode_expert_ranks: Value,
                       decode_expert_rank_max_sd: Value) -> Value:
    """Running sequences per decode worker, first estimate: closed loop ``min(clients / Wd,
    B_max)``; offline ``B_max``; open loop ``c * step(1)`` (the idle step)."""
    closed = minimum(maximum(safe_div(concurrency, decode_workers_effective, 0.0), 1),
                     decode_max_running_batch)
    idle = _decode_step_at(1, pp, decode_token_compute_s, decode_pool_kv_s_per_token,
                           decode_token_s,
                           decode_step_fixed_s, decode_dense_weights_s, decode_expert_weights_s,
                           model_experts, model_experts_per_token, decode_gemm_s_per_token,
                           decode_lm_head_s_per_token, decode_expert_gemm_s_per_token,
                           decode_expert_ranks, decode_expert_rank_max_sd)
    open_ = minimum(maximum(decode_arrivals_steps_per_s * idle, 1), decode_max_running_batch)
    return where(load_mode == serving.CLOSED_LOOP, closed,
                 where(load_mode == serving.OPEN_LOOP, open_, decode_max_running_batch))


def _batch_iteration(k: int) -> Callable[..., Value]:
    def body(previous: Value, load_mode: Value, rate: Value, b_max: Value, step: Value,
             next_step: Value) -> Value:
        newton = newton_batch(previous, rate, b_max, step, next_step)
        return where(load_mode == serving.OPEN_LOOP, newton, previous)

    return formula_column(
        f"decode_batch_{k}",
        f"Running sequences per decode worker, Newton iteration {k} of the open loop's "
        "``b = c * step(b)`` (:func:`newton_batch`); other modes keep the first estimate.",
        (f"decode_batch_{k - 1}", "load_mode", "decode_arrivals_steps_per_s",
         "decode_max_running_batch", f"decode_batch_{k - 1}_step_s",
         f"decode_batch_{k - 1}_next_step_s"), body)


BATCH_STEPS: tuple = tuple(
    column for k in (0, 1, 2) for column in (
        step_column(f"decode_batch_{k}_step_s", f"decode_batch_{k}"),
        step_column(f"decode_batch_{k}_next_step_s", f"decode_batch_{k}", 1)))
"""The decode step at each iterate of the open loop's batch and at one sequence more: the
points :func:`newton_batch` linearizes at."""
decode_batch_1, decode_batch_2, decode_batch_3 = (_batch_iteration(k) for k in (1, 2, 3))


def disagg_tpot_mean_s(decode_batch_3: Value, pp: Value, decode_token_compute_s: Value,
                       decode_pool_kv_s_per_token: Value, decode_token_s: Value,
                       decode_step_fixed_s: Value, decode_dense_weights_s: Value,
                       decode_expert_weights_s: Value, model_experts: Value,
                       model_experts_per_token: Value, decode_gemm_s_per_token: Value,
                       decode_lm_head_s_per_token: Value,
                       decode_expert_gemm_s_per_token: Value, decode_expert_ranks: Value,
                       decode_expert_rank_max_sd: Value) -> Value:
    """Mean time per output token of a disaggregated deployment: a decode step at the
    operating batch (no prompt chunk ever enters a decode step)."""
    return _decode_step_at(decode_batch_3, pp, decode_token_compute_s, decode_pool_kv_s_per_token,
                           decode_token_s, decode_step_fixed_s, decode_dense_weights_s,
                           decode_expert_weights_s, model_experts, model_experts_per_token,
                           decode_gemm_s_per_token, decode_lm_head_s_per_token,
                           decode_expert_gemm_s_per_token, decode_expert_ranks,
                           decode_expert_rank_max_sd)


def disagg_cycle_s(prefill_service_s: Value, kv_transfer_s: Value, disagg_tpot_mean_s: Value,
                   output_tokens: Value, request_latency_effective_s: Value) -> Value:
    """A closed-loop client's request without any queueing: prefill, transfer, the first
    decode step and ``G - 1`` decode steps in all, and the front end's path."""
    return (prefill_service_s + kv_transfer_s + maximum(output_tokens - 1, 1) * disagg_tpot_mean_s
            + request_latency_effective_s)


def disagg_requests_per_s(load_mode: Value, target_requests_per_s: Value, concurrency: Value,
                          disagg_cycle_s: Value, disagg_saturation_requests_per_s: Value
                          ) -> Value:
    """Completed requests per second: open loop the offered rate up to the slower pool's
    capacity; closed loop ``clients / cycle`` (Little's law) up to it; offline the capacity."""
    closed = minimum(safe_div(concurrency, disagg_cycle_s, 0.0), disagg_saturation_requests_per_s)
    open_ = minimum(target_requests_per_s, disagg_saturation_requests_per_s)
    return where(load_mode == serving.CLOSED_LOOP, closed,
                 where(load_mode == serving.OPEN_LOOP, open_, disagg_saturation_requests_per_s))


def prefill_utilization(load_mode: Value, target_requests_per_s: Value,
                        disagg_requests_per_s: Value,
                        prefill_capacity_requests_per_s: Value) -> Value:
    """Busy share of the prefill pool: offered (open loop) or completed requests per second
    over its capacity."""
    offered = where(load_mode == serving.OPEN_LOOP, target_requests_per_s, disagg_requests_per_s)
    return offered / prefill_capacity_requests_per_s


def decode_utilization(load_mode: Value, target_requests_per_s: Value,
                       disagg_requests_per_s: Value,
                       decode_capacity_requests_per_s: Value) -> Value:
    """Busy share of the decode pool: offered (open loop) or completed requests per second
    over its capacity."""
    offered = where(load_mode == serving.OPEN_LOOP, target_requests_per_s, disagg_requests_per_s)
    return offered / decode_capacity_requests_per_s


def disagg_overloaded(load_mode: Value, prefill_utilization: Value,
                      decode_utilization: Value) -> Value:
    """Open loop at or beyond either pool's capacity: a queue grows without bound."""
    return (load_mode == serving.OPEN_LOOP) * (
        maximum(prefill_utilization, decode_utilization) >= 1) > 0


def decode_slot_wait_s(load_mode: Value, concurrency: Value, decode_workers_effective: Value,
                       decode_max_running_batch: Value, disagg_requests_per_s: Value,
                       decode_utilization: Value) -> Value:
    """Wait for a decode slot: closed loop, clients beyond the decode pool's running
    sequences wait ``(M - Wd * B_max) / throughput`` (Little's law); open loop
    :data:`serving.QUEUE_WAIT_CAP_S` at ``rho >= 1`` (0 below: the decode batch grows to hold
    the arrivals); offline 0."""
    waiting = maximum(concurrency - decode_workers_effective * decode_max_running_batch, 0)
    closed = safe_div(waiting, disagg_requests_per_s, 0.0)
    open_ = where(decode_utilization >= 1, serving.QUEUE_WAIT_CAP_S, 0)
    return where(load_mode == serving.CLOSED_LOOP, closed,
                 where(load_mode == serving.OPEN_LOOP, open_, 0))


def prefill_queue_wait_mean_s(load_mode: Value, prefill_utilization: Value,
                              prefill_step_s: Value, concurrency: Value,
                              prefill_capacity_requests_per_s: Value,
                              disagg_requests_per_s: Value, disagg_cycle_s: Value,
                              decode_slot_wait_s: Value) -> Value:
    """Mean wait of a prompt for the prefill pool: Pollaczek-Khinchine for M/D/1 with one full
    step as the service unit, ``rho / (2 (1 - rho)) * step`` (exact when prompts fill whole
    steps, an upper estimate for prompts that share one). Open loop at ``rho >= 1``:
    :data:`serving.QUEUE_WAIT_CAP_S`. Closed loop: the clients' cycle holds whatever waiting
    Little's law leaves beyond the unqueued cycle and the decode-slot wait, ``M / X - cycle -
    decode wait`` (the queue of a saturated pool), and at least the M/D/1 wait below
    saturation (at most every client's prompt ahead, ``M / capacity``). Unlike the aggregated
    closed loop, cohorts do not persist: the prompts of a wave leave the prefill pool one
    after another and so return one after another (the first wave's wait is
    :func:`prefill_wave_s`, which a finite benchmark run weighs in,
    :func:`planner.sheet.harness.finite_run_ttft`). Offline 0."""
    rho = minimum(prefill_utilization, 1)
    wait = minimum(safe_div(rho * prefill_step_s, 2 * (1 - rho), serving.QUEUE_WAIT_CAP_S),
                   serving.QUEUE_WAIT_CAP_S)
    open_ = where(prefill_utilization >= 1, serving.QUEUE_WAIT_CAP_S, wait)
    below = where(prefill_utilization < 1,
                  minimum(wait, safe_div(concurrency, prefill_capacity_requests_per_s, 0.0)), 0)
    little = safe_div(concurrency, disagg_requests_per_s, 0.0) - disagg_cycle_s \
        - decode_slot_wait_s
    closed = maximum(below, little)
    return where(load_mode == serving.OPEN_LOOP, open_,
                 where(load_mode == serving.CLOSED_LOOP, closed, 0))


def disagg_ttft_service_s(prefill_service_s: Value, kv_transfer_s: Value,
                          disagg_tpot_mean_s: Value) -> Value:
    """Time from a prompt's admission to its first token at the client: prefill, the KV
    transfer and the first decode step."""
    return prefill_service_s + kv_transfer_s + disagg_tpot_mean_s


def disagg_ttft_mean_s(prefill_queue_wait_mean_s: Value, decode_slot_wait_s: Value,
                       disagg_ttft_service_s: Value, request_latency_effective_s: Value) -> Value:
    """Mean TTFT disaggregated: prefill queue + decode-slot wait + prefill + transfer + first
    decode step + the front end's path (``request_latency_effective_s``)."""
    return (prefill_queue_wait_mean_s + decode_slot_wait_s + disagg_ttft_service_s
            + request_latency_effective_s)


def _ttft_quantile(p: float, prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                   decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                   request_latency_effective_s: Value) -> Value:
    """The p-quantile of TTFT: a prompt waits with probability ``rho`` and then an
    exponential time of mean ``W / rho``, so the wait's quantile is ``max(0, W / rho *
    (ln rho + ln(1/(1-p))))`` (``ln rho`` by :func:`serving._ln_approx`); the rest taken as
    fixed."""
    rho = minimum(maximum(prefill_utilization, 1e-12), 1)
    tail = {0.5: 0.6931471805599453, 0.9: 2.302585092994046, 0.99: 4.605170185988091}[p]
    wait = maximum(0, prefill_queue_wait_mean_s / rho * (serving._ln_approx(rho) + tail))
    wait = minimum(wait, serving.QUEUE_WAIT_CAP_S)
    return wait + decode_slot_wait_s + disagg_ttft_service_s + request_latency_effective_s


def disagg_ttft_p50_s(prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                      decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                      request_latency_effective_s: Value) -> Value:
    """Median TTFT disaggregated (:func:`_ttft_quantile`)."""
    return _ttft_quantile(0.5, prefill_utilization, prefill_queue_wait_mean_s,
                          decode_slot_wait_s, disagg_ttft_service_s, request_latency_effective_s)


def disagg_ttft_p90_s(prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                      decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                      request_latency_effective_s: Value) -> Value:
    """90th-percentile TTFT disaggregated (:func:`_ttft_quantile`)."""
    return _ttft_quantile(0.9, prefill_utilization, prefill_queue_wait_mean_s,
                          decode_slot_wait_s, disagg_ttft_service_s, request_latency_effective_s)


def disagg_ttft_p99_s(prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                      decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                      request_latency_effective_s: Value) -> Value:
    """99th-percentile TTFT disaggregated (:func:`_ttft_quantile`)."""
    return _ttft_quantile(0.99, prefill_utilization, prefill_queue_wait_mean_s,
                          decode_slot_wait_s, disagg_ttft_service_s, request_latency_effective_s)


def prefill_wave_s(concurrency: Value, prefill_workers_effective: Value, prompt_tokens: Value,
                   max_num_batched_tokens_effective: Value, prefill_steps_per_request: Value,
                   pp: Value, prefill_token_compute_s: Value, prefill_token_s: Value,
                   prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                   prefill_expert_weights_s: Value, model_experts: Value,
                   model_experts_per_token: Value, prefill_gemm_s_per_token: Value,
                   prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                   prefill_expert_rank_max_sd: Value) -> Value:
    """Mean time from arrival to the end of its prefill of a prompt of the ``M`` closed-loop
    clients that arrive together (the first wave of a benchmark): each prefill worker takes
    ``M / Wp`` prompts at once,
    :func:`serving.wave_ttft_steps` steps of :func:`serving.wave_prefill_tokens_per_step`
    prompt tokens each."""
    batch = maximum(safe_div(concurrency, prefill_workers_effective, 0.0), 1)
    # a prefill worker runs no decodes: its prompts have the whole budget (prefill_first 1)
    steps = serving.wave_ttft_steps(batch, prompt_tokens, max_num_batched_tokens_effective,
                                    prefill_steps_per_request, 1)
    tokens = serving.wave_prefill_tokens_per_step(batch, prompt_tokens,
                                                  max_num_batched_tokens_effective)
    step = _prefill_step_at(tokens / pp, prefill_token_compute_s, prefill_token_s,
                            prefill_step_fixed_s, prefill_dense_weights_s,
                            prefill_expert_weights_s, model_experts, model_experts_per_token,
                            prefill_gemm_s_per_token, prefill_expert_gemm_s_per_token,
                            prefill_expert_ranks, prefill_expert_rank_max_sd)
    return steps * step


def disagg_wave_ttft_mean_s(prefill_wave_s: Value, kv_transfer_s: Value,
                            disagg_tpot_mean_s: Value, request_latency_effective_s: Value
                            ) -> Value:
    """Mean TTFT of a closed loop's first wave (its ``M`` clients start at once): the cohort's
    prefill (:func:`prefill_wave_s`), the transfer, the first decode step and the front end's
    path."""
    return prefill_wave_s + kv_transfer_s + disagg_tpot_mean_s + request_latency_effective_s


LOAD: tuple = (
    kv_transfer_link_kind, kv_transfer_bytes, kv_transfer_link_bytes_per_s, kv_transfer_s,
    decode_arrivals_steps_per_s, decode_batch_0, BATCH_STEPS[0], BATCH_STEPS[1], decode_batch_1,
    BATCH_STEPS[2], BATCH_STEPS[3], decode_batch_2, BATCH_STEPS[4], BATCH_STEPS[5], decode_batch_3,
    disagg_tpot_mean_s, disagg_cycle_s, disagg_requests_per_s, prefill_utilization,
    decode_utilization, disagg_overloaded, decode_slot_wait_s, prefill_wave_s,
    prefill_queue_wait_mean_s,
    disagg_ttft_service_s, disagg_ttft_mean_s, disagg_ttft_p50_s, disagg_ttft_p90_s,
    disagg_ttft_p99_s, disagg_wave_ttft_mean_s)
"""The operating point, after the front end's columns and before ``tpot_mean_s``."""

