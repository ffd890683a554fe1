"""Sizing a disaggregated deployment for the target rate in closed form (issue 25 item 2):
the fewest prefill workers and decode workers, at the scenario's per-pool parallelism and GPU
types, that carry ``target_requests_per_s`` within the SLO, as formula columns.

Why this module exists: ``gpus_needed`` and ``cost_usd_per_month_needed`` answer "how many GPUs
does this scenario need for its target rate" in every view (sheet, workbook, plans, compare).
The aggregated answer (:mod:`planner.formulas.slo`) searches one replica count; a
disaggregated deployment has two pools whose counts separate, and for fixed per-pool
parallelism each count is a ceiling formula of the rate and that pool's per-worker capacity at
the SLO (``_replicas_for``: ``max(ceil(rate / slo rate), floor(rate / capacity) + 1)``, a
pool loaded to its full capacity being overloaded). Open loop at the target rate, as the
aggregated sizing:

* decode pool: a worker running ``b`` sequences steps in ``step(b)`` (the decode step of
  :mod:`planner.formulas.disagg`, a maximum of lines in ``b`` plus a fixed part), so the TPOT
  objective holds up to the batch ``b_T = pp * min((T - F) / (g + a), (T - F - W) / a)``
  (``T`` the objective, ``F`` the fixed step, ``W`` every weight read, ``g`` the GEMM and LM
  head per token, ``a`` attention, element-wise and collectives per token, all per
  micro-batch token); at most ``B_max``. A worker's rate at batch ``b`` is Little's law's
  ``b / ((G - 1) step(b))``, increasing in ``b``, so the most a worker carries within the
  objective is that rate at ``b* = min(b_T, B_max)``;
* prefill pool: a worker's capacity is ``pp * budget / S / step(budget)``; the TTFT
  objective's quantile of the prefill queue (the serving model's
  :func:`planner.formulas.disagg_load._ttft_quantile`: ``step / (2 (1 - rho)) * (ln rho +
  ln(1/(1-p)))``, ``ln z ~ -(1-z)/sqrt(z)``) must fit in what the objective leaves after the
  prefill, the KV transfer, the first decode step (at the decode count above) and the front
  end, ``R``. With ``u = sqrt(rho)`` and ``k = 2 R / step`` that is ``h(u) = k u^3 + u^2 +
  (t - k) u - 1 <= 0`` (``t = ln(1/(1-p))``); ``h`` is convex and increasing on ``[0, 1]``
  with ``h(0) = -1``, ``h(1) = t``, so Newton's iterations from ``u = 1`` fall monotonically
  to its root (:data:`NEWTON_STEPS` columns; the utilisation bound is ``u^2``);
* the KV moves over NVLink only when both pools fit in one domain, which depends on the
  counts: the prefill count is found for both links, and the domain's is taken when its
  deployment fits in the domain (every smaller count fails on either link, the domain being
  the faster), else the network's.

Exact against a brute-force search of the serving model's ``meets_slo`` over both counts for a
dense model (tests/test_disagg_sizing.py) with one proviso: the decode count is the least that
meets the TPOT objective, and the prefill count the least given that decode count; a larger
decode pool shortens the first decode step, which could let one prefill worker fewer meet the
TTFT objective (the first decode step is a few milliseconds of a TTFT objective in the
hundreds). For a mixture of experts every routed expert is counted as read when inverting the
TPOT objective (as :func:`planner.formulas.slo.slo_requests_per_step` does): the decode count
meets the objective, possibly a worker above the least.
"""

from __future__ import annotations

from collections.abc import Callable

from planner.formulas import disagg_decode, disagg_load, topology
from planner.formulas.made_columns import formula_column, settled
from planner.formulas.ops import Value, ceil, floor, maximum, minimum, safe_div, where
from planner.formulas.speculative import per_output_token

NEWTON_STEPS = 6
"""Newton iterations of the prefill utilisation bound, from ``u = 1``: the error squares at
each (quadratic convergence), within 1e-12 of the root after these on every workload of
tests/test_disagg_sizing.py."""

_HUGE = 1e12
_LN_TAILS = (0.6931471805599453, 2.302585092994046, 4.605170185988091)
"""``ln(1/(1-p))`` for p = 0.5, 0.9, 0.99 (the serving model's quantile constants)."""


def _workers_for(target_requests_per_s: Value, rate_per_worker: Value,
                 capacity_per_worker: Value) -> Value:
    """Workers that keep each at or below ``rate_per_worker`` and strictly below its capacity,
    at least 1: ``max(ceil(target / rate), floor(target / capacity) + 1)``; 0 where the rate
    is 0 (as :func:`planner.formulas.slo._replicas_for`)."""
    count = maximum(ceil(safe_div(target_requests_per_s, rate_per_worker, 0.0)),
                    floor(safe_div(target_requests_per_s, capacity_per_worker, 0.0)) + 1)
    return where(rate_per_worker > 0, count, 0)


# ------------------------------------------------------------------- decode pool


def disagg_decode_slo_batch(slo_tpot_s: Value, decode_max_running_batch: Value, pp: Value,
                            decode_token_compute_s: Value, decode_pool_kv_s_per_token: Value,
                            decode_token_s: Value, decode_step_fixed_s: Value,
                            decode_dense_weights_s: Value, decode_expert_weights_s: Value,
                            decode_gemm_s_per_token: Value,
                            decode_lm_head_s_per_token: Value, spec_verify_tokens: Value,
                            spec_acceptance_length_effective: Value) -> Value:
    """Largest running batch per decode worker whose step meets the TPOT objective, at most
    ``B_max`` (``B_max`` without one; 0 where not even one sequence's step does):
    ``b_T = pp * min((T' - F) / (g + a), (T' - F - W) / a)`` with ``g`` GEMM + LM head and
    ``a`` attention (``max(core FLOPs, KV)``) + element-wise per sequence, ``W`` every weight
    (sequences). Under speculation a sequence's step verifies ``v = k + 1`` tokens (``g`` and
    the element-wise work ``v``-fold) and advances it ``a_s`` tokens, so the step may take
    ``T' = a_s T``; without, ``v = a_s = 1``."""
    g = (decode_gemm_s_per_token + decode_lm_head_s_per_token) * spec_verify_tokens
    a = maximum(maximum(decode_token_compute_s - g, 0), decode_pool_kv_s_per_token) \
        + decode_token_s * spec_verify_tokens
    room = slo_tpot_s * spec_acceptance_length_effective - decode_step_fixed_s
    weights = decode_dense_weights_s + decode_expert_weights_s
    by_tpot = pp * minimum(safe_div(room, g + a, _HUGE), safe_div(room - weights, a, _HUGE))
    bound = minimum(by_tpot, decode_max_running_batch)
    return where(slo_tpot_s > 0, where(by_tpot >= 1, bound, 0), decode_max_running_batch)


def disagg_decode_capacity_requests_per_s_worker(decode_max_running_batch: Value,
                                                 output_tokens: Value,
                                                 decode_saturation_step_s: Value,
                                                 spec_acceptance_length_effective: Value
                                                 ) -> Value:
    """Most requests per second one decode worker completes:
    ``B_max / ((G - 1) / a * step(B_max))`` (``a`` tokens a step under speculation, else 1;
    unbounded for ``G = 1``)."""
    steps = maximum(output_tokens - 1, 1) / spec_acceptance_length_effective
    return where(output_tokens > 1, decode_max_running_batch
                 / (steps * decode_saturation_step_s), _HUGE)


def disagg_decode_slo_requests_per_s_worker(
        disagg_decode_slo_batch: Value, output_tokens: Value, pp: Value,
        decode_token_compute_s: Value, decode_pool_kv_s_per_token: Value,
        decode_token_s: Value, decode_step_fixed_s: Value, decode_dense_weights_s: Value,
        decode_expert_weights_s: Value, model_experts: Value, model_experts_per_token: Value,
        decode_gemm_s_per_token: Value, decode_lm_head_s_per_token: Value,
        decode_expert_gemm_s_per_token: Value, decode_expert_ranks: Value,
        decode_expert_rank_max_sd: Value, spec_verify_tokens: Value,
        spec_acceptance_length_effective: Value) -> Value:
    """Most requests per second one decode worker carries within the TPOT objective: Little's
    law at :func:`disagg_decode_slo_batch`, ``b* / ((G - 1) / a * step(b*))`` (0 where no
    batch meets it; unbounded for ``G = 1``)."""
    step = disagg_decode._decode_step_at(disagg_decode_slo_batch, pp, decode_token_compute_s,
                                         decode_pool_kv_s_per_token, decode_token_s,
                                         decode_step_fixed_s, decode_dense_weights_s,
                                         decode_expert_weights_s, model_experts,
                                         model_experts_per_token, decode_gemm_s_per_token,
                                         decode_lm_head_s_per_token, decode_expert_gemm_s_per_token,
                                         decode_expert_ranks, decode_expert_rank_max_sd,
                                         spec_verify_tokens)
    steps = maximum(output_tokens - 1, 1) / spec_acceptance_length_effective
    rate = where(output_tokens > 1, disagg_decode_slo_batch / (steps * step), _HUGE)
    return where(disagg_decode_slo_batch > 0, rate, 0)


def disagg_decode_workers_needed(target_requests_per_s: Value,
                                 disagg_decode_slo_requests_per_s_worker: Value,
                                 disagg_decode_capacity_requests_per_s_worker: Value,
                                 pools_fit: Value) -> Value:
    """Fewest decode workers that carry the target rate within the TPOT objective and below
    the pool's capacity (:func:`_workers_for`); 0 with no target, where the pools do not
    start, or where no batch meets the objective."""
    count = _workers_for(target_requests_per_s, disagg_decode_slo_requests_per_s_worker,
                         disagg_decode_capacity_requests_per_s_worker)
    return where(pools_fit, where(target_requests_per_s > 0, count, 0), 0)


def disagg_sized_decode_arrivals_steps_per_s(target_requests_per_s: Value,
                                             disagg_decode_workers_needed: Value,
                                             output_tokens: Value,
                                             spec_acceptance_length_effective: Value) -> Value:
    """:func:`planner.formulas.disagg_load.decode_arrivals_steps_per_s` at the decode count
    :func:`disagg_decode_workers_needed`."""
    return disagg_load.decode_arrivals_steps_per_s(target_requests_per_s,
                                                   disagg_decode_workers_needed, output_tokens,
                                                   spec_acceptance_length_effective)


def disagg_sized_decode_batch_0(disagg_sized_decode_arrivals_steps_per_s: Value,
                                decode_max_running_batch: Value, pp: Value,
                                decode_token_compute_s: Value,
                                decode_pool_kv_s_per_token: Value, decode_token_s: Value,
                                decode_step_fixed_s: Value, decode_dense_weights_s: Value,
                                decode_expert_weights_s: Value, model_experts: Value,
                                model_experts_per_token: Value, decode_gemm_s_per_token: Value,
                                decode_lm_head_s_per_token: Value,
                                decode_expert_gemm_s_per_token: Value, decode_expert_ranks: Value,
                                decode_expert_rank_max_sd: Value,
                                spec_verify_tokens: Value) -> Value:
    """Open loop's first estimate of the batch per decode worker at the needed count
    (:func:`planner.formulas.disagg_load.decode_batch_0`): ``c * step(1)``."""
    idle = disagg_decode._decode_step_at(1, pp, decode_token_compute_s,
                                         decode_pool_kv_s_per_token, decode_token_s,
                                         decode_step_fixed_s, decode_dense_weights_s,
                                         decode_expert_weights_s, model_experts,
                                         model_experts_per_token, decode_gemm_s_per_token,
                                         decode_lm_head_s_per_token, decode_expert_gemm_s_per_token,
                                         decode_expert_ranks, decode_expert_rank_max_sd,
                                         spec_verify_tokens)
    return minimum(maximum(disagg_sized_decode_arrivals_steps_per_s * idle, 1),
                   decode_max_running_batch)


def _sized_batch(k: int) -> Callable[..., Value]:
    return formula_column(
        f"disagg_sized_decode_batch_{k}",
        f"Batch per decode worker at the needed count, Newton iteration {k} of "
        "``b = c * step(b)`` (:func:`planner.formulas.disagg_load.newton_batch`, the serving "
        "model's own iterations).",
        (f"disagg_sized_decode_batch_{k - 1}", "disagg_sized_decode_arrivals_steps_per_s",
         "decode_max_running_batch", f"disagg_sized_decode_batch_{k - 1}_step_s",
         f"disagg_sized_decode_batch_{k - 1}_next_step_s"), disagg_load.newton_batch,
        settled(f"disagg_sized_decode_batch_{k - 1}", f"disagg_sized_decode_batch_{k - 2}")
        if k >= 2 else None)


SIZED_BATCH_STEPS: tuple = disagg_load.batch_steps("disagg_sized_decode_batch")
"""The decode step at each iterate of the sized batch and at one sequence more."""

disagg_sized_decode_batch_1, disagg_sized_decode_batch_2, disagg_sized_decode_batch_3 = (
    _sized_batch(k) for k in (1, 2, 3))


disagg_sized_tpot_s = formula_column(
    "disagg_sized_tpot_s",
    "TPOT at the needed decode count (s): the decode step at its batch over the tokens it "
    "advances a sequence (what :func:`planner.formulas.disagg_load.disagg_tpot_mean_s` gives "
    "at that count).",
    ("disagg_sized_decode_batch_3", *disagg_decode._DECODE_STEP_COLUMNS,
     "spec_acceptance_length_effective"),
    lambda *args: per_output_token(disagg_decode._decode_step_at(*args[:-1]), args[-1]))


# ------------------------------------------------------------------- prefill pool


def disagg_prefill_capacity_requests_per_s_worker(pp: Value,
                                                  max_num_batched_tokens_effective: Value,
                                                  prompt_tokens: Value,
                                                  prefill_step_s: Value) -> Value:
    """Most prompts per second one prefill worker completes: ``pp * budget / S / step``."""
    return pp * max_num_batched_tokens_effective / prompt_tokens / prefill_step_s


def _transfer_s(link: int, kv_transfer_bytes: Value, gpu_interconnect_bytes_per_s: Value,
                gpu_nic_gbit_per_s: Value, decode_gpu_nic_gbit_per_s: Value,
                gpu_pcie_gen: Value, prefill_tp_effective: Value, decode_tp_effective: Value,
                prefill_attention_dp_number: Value, decode_attention_dp_number: Value) -> Value:
    """One prompt's KV transfer over ``link`` (:func:`planner.formulas.disagg_load.kv_transfer_s`
    with the link given)."""
    rate = disagg_load.kv_transfer_link_bytes_per_s(link, gpu_interconnect_bytes_per_s,
                                                    gpu_nic_gbit_per_s, decode_gpu_nic_gbit_per_s,
                                                    gpu_pcie_gen, prefill_tp_effective,
                                                    decode_tp_effective,
                                                    prefill_attention_dp_number,
                                                    decode_attention_dp_number)
    return disagg_load.kv_transfer_s(kv_transfer_bytes, rate, link)


def _room(link: int) -> Callable[..., Value]:
    kind = "domain" if link == topology.LINK_DOMAIN else "nic"
    where_ = ("inside the NVLink domain" if link == topology.LINK_DOMAIN
              else "over the network")

    def body(slo_ttft_s: Value, prefill_service_s: Value, disagg_sized_tpot_s: Value,
             spec_acceptance_length_effective: Value, disagg_path_latency_s: Value,
             *transfer: Value) -> Value:
        moved = _transfer_s(link, *transfer)
        return slo_ttft_s - prefill_service_s - moved \
            - disagg_sized_tpot_s * spec_acceptance_length_effective - disagg_path_latency_s

    return formula_column(f"disagg_prefill_wait_room_{kind}_s",
                   "What the TTFT objective leaves for the prefill queue's wait with the KV "
                   f"moved {where_} (s): ``slo_ttft_s`` - prefill - transfer - the first "
                   "decode step at the needed decode count - the path's latency (front end "
                   "and hand-over).",
                   ("slo_ttft_s", "prefill_service_s", "disagg_sized_tpot_s",
                    "spec_acceptance_length_effective", "disagg_path_latency_s",
                    "kv_transfer_bytes",
                    "gpu_interconnect_bytes_per_s", "gpu_nic_gbit_per_s",
                    "decode_gpu_nic_gbit_per_s", "gpu_pcie_gen", "prefill_tp_effective",
                    "decode_tp_effective", "prefill_attention_dp_number",
                    "decode_attention_dp_number"), body)


disagg_prefill_wait_room_nic_s = _room(topology.LINK_NIC)
disagg_prefill_wait_room_domain_s = _room(topology.LINK_DOMAIN)


def _newton_u(previous: Value, room: Value, prefill_step_s: Value,
              slo_percentile_number: Value) -> Value:
    """One Newton step on ``h(u) = k u^3 + u^2 + (t - k) u - 1`` (``k = 2 R / step``), from
    above the root (``h`` convex and increasing on [0, 1]: the iterates fall to it)."""
    t = where(slo_percentile_number == 50, _LN_TAILS[0],
              where(slo_percentile_number == 90, _LN_TAILS[1], _LN_TAILS[2]))
    k = 2 * maximum(room, 0) / prefill_step_s
    u = previous
    h = k * u * u * u + u * u + (t - k) * u - 1
    slope = 3 * k * u * u + 2 * u + t - k
    return maximum(u - safe_div(h, slope, 0.0), 0)


def _u_step(kind: str, k: int) -> Callable[..., Value]:
    previous = f"disagg_prefill_u_{kind}_{k - 1}"

    def body(*args: Value) -> Value:
        if k == 1:
            return _newton_u(1, *args)
        return _newton_u(*args)

    params = (() if k == 1 else (previous,)) + (
        f"disagg_prefill_wait_room_{kind}_s", "prefill_step_s", "slo_percentile_number")
    return formula_column(f"disagg_prefill_u_{kind}_{k}",
                   f"Square root of the prefill pool's utilisation bound (KV over the "
                   f"{'NVLink domain' if kind == 'domain' else 'network'}), Newton iteration "
                   f"{k} from 1 (:func:`_newton_u`).", params, body,
                   settled(previous, f"disagg_prefill_u_{kind}_{k - 2}") if k >= 3 else None)


PREFILL_NEWTON: tuple[Callable[..., Value], ...] = tuple(
    _u_step(kind, k) for kind in ("nic", "domain") for k in range(1, NEWTON_STEPS + 1))
"""The Newton columns of the prefill utilisation bound, network link first."""


def _workers(kind: str) -> Callable[..., Value]:
    def body(slo_ttft_s: Value, room: Value, u: Value, target_requests_per_s: Value,
             capacity: Value) -> Value:
        rho = where(slo_ttft_s > 0, minimum(u * u, 1), 1)
        count = _workers_for(target_requests_per_s, rho * capacity, capacity)
        return where(slo_ttft_s > 0, where(room >= 0, count, 0), count)

    return formula_column(f"disagg_prefill_workers_{kind}",
                   "Fewest prefill workers that carry the target rate below capacity with the "
                   "TTFT objective's quantile of the prefill queue within its room, the KV "
                   f"moved {'inside the NVLink domain' if kind == 'domain' else 'over the network'}"
                   " (0 where the room is negative).",
                   ("slo_ttft_s", f"disagg_prefill_wait_room_{kind}_s",
                    f"disagg_prefill_u_{kind}_{NEWTON_STEPS}", "target_requests_per_s",
                    "disagg_prefill_capacity_requests_per_s_worker"), body)


disagg_prefill_workers_nic = _workers("nic")
disagg_prefill_workers_domain = _workers("domain")


def disagg_kv_link_kind_needed(disagg_decode_workers_needed: Value,
                               disagg_prefill_workers_domain: Value,
                               prefill_tp_effective: Value, decode_tp_effective: Value,
                               pp: Value, decode_gpu_same: Value,
                               gpu_nvlink_domain_gpus: Value) -> Value:
    """The KV link of the needed deployment (code of :data:`topology.LINK_DOMAIN` /
    ``LINK_NIC``): the NVLink domain where the domain link's prefill count and the needed
    decode pool fit in one domain of one GPU type
    (:func:`planner.formulas.disagg_load.kv_transfer_link_kind`'s test), else the network."""
    gpus = (disagg_prefill_workers_domain * prefill_tp_effective
            + disagg_decode_workers_needed * decode_tp_effective) * pp
    fits = decode_gpu_same * (gpu_nvlink_domain_gpus > 1) * (gpus <= gpu_nvlink_domain_gpus) \
        * (disagg_prefill_workers_domain > 0)
    return where(fits > 0, topology.LINK_DOMAIN, topology.LINK_NIC)


def disagg_prefill_workers_needed(disagg_decode_workers_needed: Value,
                                  disagg_kv_link_kind_needed: Value,
                                  disagg_prefill_workers_nic: Value,
                                  disagg_prefill_workers_domain: Value) -> Value:
    """Fewest prefill workers for the target rate within the SLO, beside the needed decode
    pool: the count of the link :func:`disagg_kv_link_kind_needed` names (every smaller count
    fails on either link, the domain being the faster); 0 where the decode pool has no count
    or the objective leaves no room."""
    count = where(disagg_kv_link_kind_needed == topology.LINK_DOMAIN,
                  disagg_prefill_workers_domain, disagg_prefill_workers_nic)
    return where(disagg_decode_workers_needed > 0, count, 0)


def disagg_prefill_slo_requests_per_s_worker(
        slo_ttft_s: Value, disagg_kv_link_kind_needed: Value,
        disagg_prefill_u_nic_6: Value, disagg_prefill_u_domain_6: Value,
        disagg_prefill_capacity_requests_per_s_worker: Value) -> Value:
    """Most requests per second one prefill worker carries within the TTFT objective beside
    the needed decode pool: the utilisation bound ``u^2`` of the needed link times its
    capacity (its capacity without a TTFT objective)."""
    u = where(disagg_kv_link_kind_needed == topology.LINK_DOMAIN, disagg_prefill_u_domain_6,
              disagg_prefill_u_nic_6)
    rho = where(slo_ttft_s > 0, minimum(u * u, 1), 1)
    return rho * disagg_prefill_capacity_requests_per_s_worker


def disagg_prefill_gpus_needed(disagg_prefill_workers_needed: Value,
                               disagg_decode_workers_needed: Value, prefill_tp_effective: Value,
                               pp: Value) -> Value:
    """GPUs of the needed prefill pool: ``workers * prefill_tp * pp`` (0 where either pool
    has no count)."""
    both = where(disagg_decode_workers_needed > 0, disagg_prefill_workers_needed, 0)
    return both * prefill_tp_effective * pp


def disagg_decode_gpus_needed(disagg_prefill_workers_needed: Value,
                              disagg_decode_workers_needed: Value, decode_tp_effective: Value,
                              pp: Value) -> Value:
    """GPUs of the needed decode pool: ``workers * decode_tp * pp`` (0 where either pool has
    no count)."""
    both = where(disagg_prefill_workers_needed > 0, disagg_decode_workers_needed, 0)
    return both * decode_tp_effective * pp


COLUMNS: tuple[Callable[..., Value], ...] = (
    disagg_decode_slo_batch, disagg_decode_capacity_requests_per_s_worker,
    disagg_decode_slo_requests_per_s_worker, disagg_decode_workers_needed,
    disagg_sized_decode_arrivals_steps_per_s, disagg_sized_decode_batch_0,
    SIZED_BATCH_STEPS[0], SIZED_BATCH_STEPS[1], disagg_sized_decode_batch_1,
    SIZED_BATCH_STEPS[2], SIZED_BATCH_STEPS[3], disagg_sized_decode_batch_2,
    SIZED_BATCH_STEPS[4], SIZED_BATCH_STEPS[5], disagg_sized_decode_batch_3,
    disagg_sized_tpot_s, disagg_prefill_capacity_requests_per_s_worker,
    disagg_prefill_wait_room_nic_s, disagg_prefill_wait_room_domain_s, *PREFILL_NEWTON,
    disagg_prefill_workers_nic, disagg_prefill_workers_domain, disagg_kv_link_kind_needed,
    disagg_prefill_workers_needed, disagg_prefill_slo_requests_per_s_worker,
    disagg_prefill_gpus_needed, disagg_decode_gpus_needed)
"""The sizing columns in dependency order (after the disaggregated operating point and
``engine_fits``; before ``replicas_needed``)."""
