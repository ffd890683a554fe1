"""The KV transfer between the pools and a disaggregated deployment's operating point: the
decode batch, TPOT, throughput, each pool's utilization, the waits and the TTFT.

Why this module exists: with the two pools' steps and capacities known
(:mod:`planner.formulas.disagg_prefill`, :mod:`~planner.formulas.disagg_decode`), a
request's latency is its path through them: the prefill queue and the wait for a decode slot,
the prefill, the KV moved over NVLink or the NIC, the first decode step, the front end's path
and the hand-over's orchestration (:func:`disagg_path_latency_s`); the open loop's decode
batch solves ``b = c * step(b)`` by Newton iterations (:func:`newton_batch`), each
iteration's points columns of their own (:func:`step_column`). This module owns those
columns, from ``kv_transfer_link_kind`` to ``disagg_wave_ttft_mean_s`` (:data:`LOAD`). The
model is described in :mod:`planner.formulas.disagg`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per worker unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from collections.abc import Callable

from planner.formulas import serving_cohort, serving_queue, topology
from planner.formulas.disagg_decode import _DECODE_STEP_COLUMNS, _decode_step_at
from planner.formulas.disagg_inputs import _HUGE
from planner.formulas.disagg_prefill import _prefill_step_at
from planner.formulas.made_columns import at_same_point, formula_column, settled
from planner.formulas.ops import Repeats, Value, maximum, minimum, safe_div, where
from planner.formulas.serving_load import CLOSED_LOOP, OPEN_LOOP, QUEUE_WAIT_CAP_S
from planner.formulas.speculative import per_output_token

# ------------------------------------------------------------------- KV transfer


def kv_transfer_link_kind(decode_gpu_same: Value, prefill_gpus: Value, decode_gpus: Value,
                          gpu_nvlink_domain_gpus: Value) -> Value:
    """Path the KV cache takes from a prefill to a decode worker (code of
    :data:`planner.formulas.topology.LINK_DOMAIN` / ``LINK_NIC``): the scale-up domain when
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


def step_column(name: str, batch_column: str, more: int = 0,
                repeats: Repeats | None = None) -> Callable[..., Value]:
    """The column ``name``: the decode step (s) at ``batch_column`` plus ``more`` sequences
    (:func:`_decode_step_at`), with the shortcut ``repeats`` (the same step at the iterate
    before, where the iterates are equal: :func:`~planner.formulas.made_columns.at_same_point`)."""
    what = f"``{batch_column}``" + (f" + {more} sequence" if more else "")
    return formula_column(
        name, f"Decode step (s) at {what} running sequences per decode worker "
        "(:func:`planner.formulas.disagg_decode._decode_step_at`): a Newton iteration's point.",
        (batch_column, *_DECODE_STEP_COLUMNS),
        lambda batch, *step: _decode_step_at(batch + more, *step), repeats)


def batch_steps(batch: str) -> tuple[Callable[..., Value], ...]:
    """The decode step at iterates 0, 1 and 2 of the batch column family ``<batch>_<k>`` and
    at one sequence more (``<batch>_<k>_step_s``, ``<batch>_<k>_next_step_s``): the points
    :func:`newton_batch` linearizes at. From iterate 1 on, each repeats the one before where
    the iterates are equal."""
    columns = []
    for k in (0, 1, 2):
        for suffix, more in (("step_s", 0), ("next_step_s", 1)):
            repeats = (at_same_point(f"{batch}_{k - 1}_{suffix}", f"{batch}_{k}",
                                     f"{batch}_{k - 1}") if k else None)
            columns.append(step_column(f"{batch}_{k}_{suffix}", f"{batch}_{k}", more, repeats))
    return tuple(columns)


def decode_arrivals_steps_per_s(target_requests_per_s: Value, decode_workers_effective: Value,
                                output_tokens: Value,
                                spec_acceptance_length_effective: Value) -> Value:
    """Open loop: decode-step work arriving per second at one decode worker, in sequences:
    ``rate / Wd * (G - 1) / a`` (a request's decode steps, ``a`` tokens each under
    speculation; Little's law gives ``b = this * step``)."""
    return safe_div(target_requests_per_s, decode_workers_effective, 0.0) * maximum(
        output_tokens - 1, 0) / spec_acceptance_length_effective


def decode_batch_0(load_mode: Value, concurrency: Value, decode_workers_effective: Value,
                   decode_max_running_batch: Value, decode_arrivals_steps_per_s: Value,
                   pp: Value, decode_token_compute_s: Value, decode_pool_kv_s_per_token: Value,
                   decode_token_s: Value, decode_step_fixed_s: Value,
                   decode_dense_weights_s: Value, decode_expert_weights_s: Value,
                   model_experts: Value, model_experts_per_token: Value,
                   decode_gemm_s_per_token: Value, decode_lm_head_s_per_token: Value,
                       decode_expert_gemm_s_per_token: Value, decode_expert_ranks: Value,
                       decode_expert_rank_max_sd: Value, spec_verify_tokens: Value) -> Value:
    """Running sequences per decode worker, first estimate: closed loop ``min(clients / Wd,
    B_max)``; offline ``B_max``; open loop ``c * step(1)`` (the idle step)."""
    closed = minimum(maximum(safe_div(concurrency, decode_workers_effective, 0.0), 1),
                     decode_max_running_batch)
    idle = _decode_step_at(1, pp, decode_token_compute_s, decode_pool_kv_s_per_token,
                           decode_token_s,
                           decode_step_fixed_s, decode_dense_weights_s, decode_expert_weights_s,
                           model_experts, model_experts_per_token, decode_gemm_s_per_token,
                           decode_lm_head_s_per_token, decode_expert_gemm_s_per_token,
                           decode_expert_ranks, decode_expert_rank_max_sd, spec_verify_tokens)
    open_ = minimum(maximum(decode_arrivals_steps_per_s * idle, 1), decode_max_running_batch)
    return where(load_mode == CLOSED_LOOP, closed,
                 where(load_mode == OPEN_LOOP, open_, decode_max_running_batch))


def _batch_iteration(k: int) -> Callable[..., Value]:
    def body(previous: Value, load_mode: Value, rate: Value, b_max: Value, step: Value,
             next_step: Value) -> Value:
        newton = newton_batch(previous, rate, b_max, step, next_step)
        return where(load_mode == OPEN_LOOP, newton, previous)

    return formula_column(
        f"decode_batch_{k}",
        f"Running sequences per decode worker, Newton iteration {k} of the open loop's "
        "``b = c * step(b)`` (:func:`newton_batch`); other modes keep the first estimate.",
        (f"decode_batch_{k - 1}", "load_mode", "decode_arrivals_steps_per_s",
         "decode_max_running_batch", f"decode_batch_{k - 1}_step_s",
         f"decode_batch_{k - 1}_next_step_s"), body,
        settled(f"decode_batch_{k - 1}", f"decode_batch_{k - 2}") if k >= 2 else None)


BATCH_STEPS: tuple = batch_steps("decode_batch")
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
                       decode_expert_rank_max_sd: Value, spec_verify_tokens: Value,
                       spec_acceptance_length_effective: Value) -> Value:
    """Mean time per output token of a disaggregated deployment: a decode step at the
    operating batch (no prompt chunk ever enters a decode step) over the tokens it advances a
    sequence, ``a`` under speculation (:func:`planner.formulas.speculative.per_output_token`)."""
    step = _decode_step_at(decode_batch_3, pp, decode_token_compute_s, decode_pool_kv_s_per_token,
                           decode_token_s, decode_step_fixed_s, decode_dense_weights_s,
                           decode_expert_weights_s, model_experts, model_experts_per_token,
                           decode_gemm_s_per_token, decode_lm_head_s_per_token,
                           decode_expert_gemm_s_per_token, decode_expert_ranks,
                           decode_expert_rank_max_sd, spec_verify_tokens)
    return per_output_token(step, spec_acceptance_length_effective)


DISAGG_HANDOVER_S = 0.11
"""Default of ``disagg_handover_s``: the orchestration of a prompt's hand-over from its prefill
worker to a decode worker beyond the KV transfer and the first token's decode step (s). vLLM
PR #51919 (NixlConnector, 3 prefill + 1 decode workers, ``--block-size 64``) measures the
decode-side handover, from the prefill emitting token 1 to the client receiving it, at ~197 ms
p50 against ~29 ms of KV transfer; its first-token seeding removes the recompute of token 1
with a full forward, ~58 ms p50 with its step alignment. The rest, 197 - 29 - 58 = 110 ms, is
the router's serial dispatch of the decode leg after the prefill returns and the decode engine
picking up the pull's metadata and its completion at engine-step boundaries (the RFC, vLLM issue
#50913). The planner counts the transfer (:func:`kv_transfer_s`) and the first decode step
(:func:`disagg_tpot_mean_s`) itself. SGLang's and TensorRT-LLM's P/D paths (under Dynamo or
their own routers) publish no such figure: they take vLLM's, the closest mechanism (a pull or
handshake once the prefill is done, picked up by the decode engine's step loop; Dynamo PR
#13327 describes its default NIXL flow as this sequential hand-off). Not fitted to any run the
planner is scored on."""


def disagg_path_latency_s(request_latency_effective_s: Value, disagg_handover_s: Value
                          ) -> Value:
    """What a disaggregated request's path adds to its TTFT beyond its prefill, KV transfer and
    first decode step (s): the front end's path and the prefill-to-decode hand-over's
    orchestration, ``request_latency_effective_s + disagg_handover_s``
    (:data:`DISAGG_HANDOVER_S`)."""
    return request_latency_effective_s + disagg_handover_s


def disagg_cycle_s(prefill_service_s: Value, kv_transfer_s: Value, disagg_tpot_mean_s: Value,
                   output_tokens: Value, disagg_path_latency_s: Value) -> Value:
    """A closed-loop client's request without any queueing: prefill, transfer, the first
    decode step and ``G - 1`` decode steps in all, and the path's latency (front end and
    hand-over, :func:`disagg_path_latency_s`)."""
    return (prefill_service_s + kv_transfer_s + maximum(output_tokens - 1, 1) * disagg_tpot_mean_s
            + disagg_path_latency_s)


def disagg_requests_per_s(load_mode: Value, target_requests_per_s: Value, concurrency: Value,
                          disagg_cycle_s: Value, disagg_saturation_requests_per_s: Value
                          ) -> Value:
    """Completed requests per second: open loop the offered rate up to the slower pool's
    capacity; closed loop ``clients / cycle`` (Little's law) up to it; offline the capacity."""
    closed = minimum(safe_div(concurrency, disagg_cycle_s, 0.0), disagg_saturation_requests_per_s)
    open_ = minimum(target_requests_per_s, disagg_saturation_requests_per_s)
    return where(load_mode == CLOSED_LOOP, closed,
                 where(load_mode == OPEN_LOOP, open_, disagg_saturation_requests_per_s))


def prefill_utilization(load_mode: Value, target_requests_per_s: Value,
                        disagg_requests_per_s: Value,
                        prefill_capacity_requests_per_s: Value) -> Value:
    """Busy share of the prefill pool: offered (open loop) or completed requests per second
    over its capacity."""
    offered = where(load_mode == OPEN_LOOP, target_requests_per_s, disagg_requests_per_s)
    return offered / prefill_capacity_requests_per_s


def decode_utilization(load_mode: Value, target_requests_per_s: Value,
                       disagg_requests_per_s: Value,
                       decode_capacity_requests_per_s: Value) -> Value:
    """Busy share of the decode pool: offered (open loop) or completed requests per second
    over its capacity."""
    offered = where(load_mode == OPEN_LOOP, target_requests_per_s, disagg_requests_per_s)
    return offered / decode_capacity_requests_per_s


def disagg_overloaded(load_mode: Value, prefill_utilization: Value,
                      decode_utilization: Value) -> Value:
    """Open loop at or beyond either pool's capacity: a queue grows without bound."""
    return (load_mode == OPEN_LOOP) * (
        maximum(prefill_utilization, decode_utilization) >= 1) > 0


def decode_slot_wait_s(load_mode: Value, concurrency: Value, decode_workers_effective: Value,
                       decode_max_running_batch: Value, disagg_requests_per_s: Value,
                       decode_utilization: Value) -> Value:
    """Wait for a decode slot: closed loop, clients beyond the decode pool's running
    sequences wait ``(M - Wd * B_max) / throughput`` (Little's law); open loop
    :data:`QUEUE_WAIT_CAP_S` at ``rho >= 1`` (0 below: the decode batch grows to hold
    the arrivals); offline 0."""
    waiting = maximum(concurrency - decode_workers_effective * decode_max_running_batch, 0)
    closed = safe_div(waiting, disagg_requests_per_s, 0.0)
    open_ = where(decode_utilization >= 1, QUEUE_WAIT_CAP_S, 0)
    return where(load_mode == CLOSED_LOOP, closed,
                 where(load_mode == OPEN_LOOP, open_, 0))


def prefill_queue_wait_mean_s(load_mode: Value, prefill_utilization: Value,
                              prefill_step_s: Value, concurrency: Value,
                              prefill_capacity_requests_per_s: Value,
                              disagg_requests_per_s: Value, disagg_cycle_s: Value,
                              decode_slot_wait_s: Value) -> Value:
    """Mean wait of a prompt for the prefill pool: Pollaczek-Khinchine for M/D/1 with one full
    step as the service unit, ``rho / (2 (1 - rho)) * step`` (exact when prompts fill whole
    steps, an upper estimate for prompts that share one). Open loop at ``rho >= 1``:
    :data:`QUEUE_WAIT_CAP_S`. Closed loop: the clients' cycle holds whatever waiting
    Little's law leaves beyond the unqueued cycle and the decode-slot wait, ``M / X - cycle -
    decode wait`` (the queue of a saturated pool), and at least the M/D/1 wait below
    saturation (at most every client's prompt ahead, ``M / capacity``). Unlike the aggregated
    closed loop, cohorts do not persist: the prompts of a wave leave the prefill pool one
    after another and so return one after another (the first wave's wait is
    :func:`prefill_wave_s`, which a finite benchmark run weighs in,
    :func:`planner.compute.harness.finite_run_ttft`). Offline 0."""
    rho = minimum(prefill_utilization, 1)
    wait = minimum(safe_div(rho * prefill_step_s, 2 * (1 - rho), QUEUE_WAIT_CAP_S),
                   QUEUE_WAIT_CAP_S)
    open_ = where(prefill_utilization >= 1, QUEUE_WAIT_CAP_S, wait)
    below = where(prefill_utilization < 1,
                  minimum(wait, safe_div(concurrency, prefill_capacity_requests_per_s, 0.0)), 0)
    little = safe_div(concurrency, disagg_requests_per_s, 0.0) - disagg_cycle_s \
        - decode_slot_wait_s
    closed = maximum(below, little)
    return where(load_mode == OPEN_LOOP, open_,
                 where(load_mode == CLOSED_LOOP, closed, 0))


def disagg_ttft_service_s(prefill_service_s: Value, kv_transfer_s: Value,
                          disagg_tpot_mean_s: Value,
                          spec_acceptance_length_effective: Value) -> Value:
    """Time from a prompt's admission to its first token at the client: prefill, the KV
    transfer and the first decode step (``TPOT * a``: one step, ``a`` tokens under
    speculation)."""
    return prefill_service_s + kv_transfer_s + disagg_tpot_mean_s * spec_acceptance_length_effective


def disagg_ttft_mean_s(prefill_queue_wait_mean_s: Value, decode_slot_wait_s: Value,
                       disagg_ttft_service_s: Value, disagg_path_latency_s: Value) -> Value:
    """Mean TTFT disaggregated: prefill queue + decode-slot wait + prefill + transfer + first
    decode step + the path's latency (front end and hand-over, :func:`disagg_path_latency_s`)."""
    return (prefill_queue_wait_mean_s + decode_slot_wait_s + disagg_ttft_service_s
            + disagg_path_latency_s)


def _ttft_quantile(p: float, prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                   decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                   disagg_path_latency_s: Value) -> Value:
    """The p-quantile of TTFT: a prompt waits with probability ``rho`` and then an
    exponential time of mean ``W / rho``, so the wait's quantile is ``max(0, W / rho *
    (ln rho + ln(1/(1-p))))`` (``ln rho`` by :func:`serving_queue._ln_approx`); the rest taken as
    fixed."""
    rho = minimum(maximum(prefill_utilization, 1e-12), 1)
    tail = {0.5: 0.6931471805599453, 0.9: 2.302585092994046, 0.99: 4.605170185988091}[p]
    wait = maximum(0, prefill_queue_wait_mean_s / rho * (serving_queue._ln_approx(rho) + tail))
    wait = minimum(wait, QUEUE_WAIT_CAP_S)
    return wait + decode_slot_wait_s + disagg_ttft_service_s + disagg_path_latency_s


def disagg_ttft_p50_s(prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                      decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                      disagg_path_latency_s: Value) -> Value:
    """Median TTFT disaggregated (:func:`_ttft_quantile`)."""
    return _ttft_quantile(0.5, prefill_utilization, prefill_queue_wait_mean_s,
                          decode_slot_wait_s, disagg_ttft_service_s, disagg_path_latency_s)


def disagg_ttft_p90_s(prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                      decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                      disagg_path_latency_s: Value) -> Value:
    """90th-percentile TTFT disaggregated (:func:`_ttft_quantile`)."""
    return _ttft_quantile(0.9, prefill_utilization, prefill_queue_wait_mean_s,
                          decode_slot_wait_s, disagg_ttft_service_s, disagg_path_latency_s)


def disagg_ttft_p99_s(prefill_utilization: Value, prefill_queue_wait_mean_s: Value,
                      decode_slot_wait_s: Value, disagg_ttft_service_s: Value,
                      disagg_path_latency_s: Value) -> Value:
    """99th-percentile TTFT disaggregated (:func:`_ttft_quantile`)."""
    return _ttft_quantile(0.99, prefill_utilization, prefill_queue_wait_mean_s,
                          decode_slot_wait_s, disagg_ttft_service_s, disagg_path_latency_s)


def prefill_wave_s(concurrency: Value, prefill_workers_effective: Value, prompt_tokens: Value,
                   max_num_batched_tokens_effective: Value, prefill_steps_per_request: Value,
                   pp: Value, prefill_token_compute_s: Value, prefill_token_s: Value,
                   prefill_step_fixed_s: Value, prefill_dense_weights_s: Value,
                   prefill_expert_weights_s: Value, model_experts: Value,
                   model_experts_per_token: Value, prefill_gemm_s_per_token: Value,
                   prefill_expert_gemm_s_per_token: Value, prefill_expert_ranks: Value,
                   prefill_expert_rank_max_sd: Value, prefill_host_floor_s: Value) -> Value:
    """Mean time from arrival to the end of its prefill of a prompt of the ``M`` closed-loop
    clients that arrive together (the first wave of a benchmark): each prefill worker takes
    ``M / Wp`` prompts at once,
    :func:`serving_cohort.wave_ttft_steps` steps of
    :func:`serving_cohort.wave_prefill_tokens_per_step` prompt tokens each."""
    batch = maximum(safe_div(concurrency, prefill_workers_effective, 0.0), 1)
    # a prefill worker runs no decodes: its prompts have the whole budget (prefill_first 1)
    steps = serving_cohort.wave_ttft_steps(batch, prompt_tokens, max_num_batched_tokens_effective,
                                           prefill_steps_per_request, 1)
    tokens = serving_cohort.wave_prefill_tokens_per_step(batch, prompt_tokens,
                                                         max_num_batched_tokens_effective)
    step = _prefill_step_at(tokens / pp, prefill_token_compute_s, prefill_token_s,
                            prefill_step_fixed_s, prefill_dense_weights_s,
                            prefill_expert_weights_s, model_experts, model_experts_per_token,
                            prefill_gemm_s_per_token, prefill_expert_gemm_s_per_token,
                            prefill_expert_ranks, prefill_expert_rank_max_sd,
                            prefill_host_floor_s)
    return steps * step


def disagg_wave_ttft_mean_s(prefill_wave_s: Value, kv_transfer_s: Value,
                            disagg_tpot_mean_s: Value, disagg_path_latency_s: Value,
                            spec_acceptance_length_effective: Value) -> Value:
    """Mean TTFT of a closed loop's first wave (its ``M`` clients start at once): the cohort's
    prefill (:func:`prefill_wave_s`), the transfer, the first decode step and the path's latency
    (:func:`disagg_path_latency_s`)."""
    return (prefill_wave_s + kv_transfer_s + disagg_tpot_mean_s * spec_acceptance_length_effective
            + disagg_path_latency_s)


LOAD: tuple = (
    kv_transfer_link_kind, kv_transfer_bytes, kv_transfer_link_bytes_per_s, kv_transfer_s,
    decode_arrivals_steps_per_s, decode_batch_0, BATCH_STEPS[0], BATCH_STEPS[1], decode_batch_1,
    BATCH_STEPS[2], BATCH_STEPS[3], decode_batch_2, BATCH_STEPS[4], BATCH_STEPS[5], decode_batch_3,
    disagg_tpot_mean_s, disagg_path_latency_s, disagg_cycle_s, disagg_requests_per_s,
    prefill_utilization,
    decode_utilization, disagg_overloaded, decode_slot_wait_s, prefill_wave_s,
    prefill_queue_wait_mean_s,
    disagg_ttft_service_s, disagg_ttft_mean_s, disagg_ttft_p50_s, disagg_ttft_p90_s,
    disagg_ttft_p99_s, disagg_wave_ttft_mean_s)
"""The operating point, after the front end's columns and before ``tpot_mean_s``."""
