"""Disaggregated prefill/decode serving (issue 25 item 1): prefill workers and decode workers,
each pool with its own parallelism, GPU type, engine limits and KV pool, and the KV of every
prompt moved from a prefill worker to a decode worker.

Why this module exists: about a third of the serving runs published in 2026 (NVIDIA Dynamo,
SGLang PD disaggregation, vLLM's KV connectors, InferenceX and AIConfigurator's silicon set)
serve the two phases on separate GPUs, so that long prompts never stall the decode steps and
each phase runs at the parallelism that suits it. The aggregated model
(:mod:`planner.formulas.serving`) cannot express it. Every public function here is a scenario
column over the operator set (:mod:`planner.formulas.ops`); they reuse the aggregated model's
per-operator building blocks (GEMM, attention, KV, element-wise, collective and fixed-step
figures per token, :func:`planner.formulas.serving_step._step_kind_s`) with each pool's TP, EP,
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
  (:data:`planner.formulas.topology.NVLINK_HOP_LATENCY_S` / ``NIC_HOP_LATENCY_S``);
* ``TTFT = prefill queue + decode-slot wait + prefill + transfer + first decode step + the
  front end's path + the hand-over's orchestration`` (``disagg_handover_s``, 0.11 s: the
  router's serial dispatch of the decode leg and the decode engine's step-boundary pick-up
  of the pull, vLLM PR #51919; :data:`~planner.formulas.disagg_load.DISAGG_HANDOVER_S`);
  throughput: the slower pool caps the deployment; a closed loop of ``M``
  clients completes ``X = min(M / cycle, capacity)`` requests/s (``cycle`` the unqueued
  request), and whatever waiting Little's law then leaves, ``M / X - cycle``, is the queue
  of the saturated pool; the first wave of a benchmark (all ``M`` at once) waits for each
  other's prompts (:func:`~planner.formulas.disagg_load.prefill_wave_s`);
* GPUs ``Wp * prefill_tp * pp + Wd * decode_tp * pp``; cost each pool at its GPU's price;
  the pools sized for the target rate (``gpus_needed``): :mod:`planner.formulas.disagg_slo`.

Not modelled: the decode pool's weights are the scenario's per GPU scaled by ``tp /
decode_tp`` (weights shard evenly over TP; the rotary table and data-parallel attention's
replicated projections are taken per pool), the hand-over's dependence on load and engine,
calibration profiles on the decode GPU (the catalog's figures), prefix caching in either
pool, and the drafter's weights or passes in the prefill pool.

Speculative decoding (``spec_method``, :mod:`planner.formulas.speculative`) runs in the decode
pool: each decode step verifies ``k + 1`` tokens per sequence (GEMMs, LM head, element-wise
work) and advances it ``a`` tokens, so TPOT is the step over ``a`` and a request runs
``(G - 1)/a`` steps (the pool's capacity, the open loop's arrivals, the TPOT objective's
batch, which may take ``a T`` a step); the first decode step in TTFT is one step; the
drafter's passes join the decode step's fixed time
(:func:`~planner.formulas.disagg_decode.decode_spec_draft_fixed_s`) and its KV reads the
per-step traffic (:func:`~planner.formulas.disagg_decode.decode_spec_draft_kv_s_per_step`);
its MTP KV layer and ``k`` lookahead slots shrink the batch the decode pool holds, and its
weights the decode pool's memory.

Where the columns live (issue 27: no module over 500 lines), lowest first:
:mod:`planner.formulas.disagg_inputs` (the serving mode, each pool's TP, EP, attention DP and
decode GPU, the pools' GPUs and cost); :mod:`planner.formulas.disagg_prefill` (the prefill
pool's step, capacity and service); :mod:`planner.formulas.disagg_decode` (the decode pool's
per-token figures, step and capacity); :mod:`planner.formulas.disagg_kv_pools` (each pool's
KV pool, the decode batch it allows, ``pools_fit``); :mod:`planner.formulas.disagg_load` (the
KV transfer and the operating point). The pools' links are
:mod:`planner.formulas.pool_links`. This module keeps the column tuples in dependency order
(:data:`DERIVED`, :data:`COST`, :data:`POOLS`, :data:`LOAD`) and re-exports the names the
tests and older callers reach as ``disagg.NAME``.
"""

from __future__ import annotations

from planner.formulas import pool_links
from planner.formulas.disagg_decode import _DECODE_STEP_COLUMNS as _DECODE_STEP_COLUMNS
from planner.formulas.disagg_decode import _decode_step_at as _decode_step_at
from planner.formulas.disagg_decode import (
    decode_attention_replicated_bytes_per_gpu,
    decode_bandwidth_efficiency_effective,
    decode_capacity_requests_per_s,
    decode_dense_weights_s,
    decode_expert_gemm_s_per_token,
    decode_expert_rank_max_sd,
    decode_expert_ranks,
    decode_expert_weights_s,
    decode_gemm_s_per_token,
    decode_lm_head_s_per_token,
    decode_matmul_efficiency_effective,
    decode_pool_kv_s_per_token,
    decode_saturation_step_s,
    decode_spec_draft_fixed_s,
    decode_spec_draft_kv_s_per_step,
    decode_step_fixed_s,
    decode_token_compute_s,
    disagg_saturation_requests_per_s,
)
from planner.formulas.disagg_inputs import COST as COST
from planner.formulas.disagg_inputs import DERIVED as DERIVED
from planner.formulas.disagg_inputs import SERVING_MODES as SERVING_MODES
from planner.formulas.disagg_kv_pools import (
    decode_engine_block_tokens,
    decode_kv_bytes_per_token_per_gpu,
    decode_kv_pool_bytes_per_gpu,
    decode_max_running_batch,
    decode_token_capacity,
    pools_fit,
    prefill_engine_block_tokens,
    prefill_kv_bytes_per_token_per_gpu,
    prefill_kv_pool_bytes_per_gpu,
    prefill_token_capacity,
)
from planner.formulas.disagg_load import LOAD as LOAD
from planner.formulas.disagg_prefill import (
    prefill_attention_replicated_bytes_per_gpu,
    prefill_capacity_requests_per_s,
    prefill_chunk_step_s,
    prefill_dense_weights_s,
    prefill_expert_gemm_s_per_token,
    prefill_expert_rank_max_sd,
    prefill_expert_ranks,
    prefill_expert_weights_s,
    prefill_gemm_s_per_token,
    prefill_service_s,
    prefill_step_fixed_s,
    prefill_step_s,
    prefill_token_compute_s,
)

POOLS: tuple = (
    prefill_expert_ranks, prefill_expert_rank_max_sd, prefill_expert_gemm_s_per_token,
    prefill_gemm_s_per_token, prefill_token_compute_s, prefill_attention_replicated_bytes_per_gpu,
    prefill_dense_weights_s, prefill_expert_weights_s, pool_links.prefill_tp_link_bytes_per_s,
    pool_links.prefill_ep_link_bytes_per_s, pool_links.prefill_token_s, prefill_step_fixed_s,
    prefill_step_s, prefill_chunk_step_s, prefill_capacity_requests_per_s, prefill_service_s,
    decode_matmul_efficiency_effective, decode_bandwidth_efficiency_effective,
    decode_expert_ranks, decode_expert_rank_max_sd, decode_expert_gemm_s_per_token,
    decode_gemm_s_per_token, decode_lm_head_s_per_token, decode_token_compute_s,
    decode_kv_bytes_per_token_per_gpu, decode_spec_draft_kv_s_per_step,
    decode_pool_kv_s_per_token, decode_attention_replicated_bytes_per_gpu, decode_dense_weights_s,
    decode_expert_weights_s, decode_spec_draft_fixed_s, pool_links.decode_tp_link_bytes_per_s,
    pool_links.decode_ep_link_bytes_per_s, pool_links.decode_token_s, decode_step_fixed_s,
    decode_kv_pool_bytes_per_gpu,
    decode_engine_block_tokens, decode_token_capacity,
    decode_max_running_batch, decode_saturation_step_s, decode_capacity_requests_per_s,
    disagg_saturation_requests_per_s, prefill_kv_bytes_per_token_per_gpu,
    prefill_kv_pool_bytes_per_gpu, prefill_engine_block_tokens, prefill_token_capacity, pools_fit)
"""The two pools' steps and capacities, before ``saturation_requests_per_s``."""
