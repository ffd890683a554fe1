"""A closed loop's cohorts and the steps they run, and the TPOT and TTFT of a request in them.

Why this module exists: in a closed loop (and the offline maximum) requests of fixed lengths
finish and return together, so prefill steps carry a cohort's prompts beside the others'
decodes (:func:`_cohort_tokens`, :func:`closed_loop_prefill_step_s`) and decode-only steps
the rest (:func:`closed_loop_decode_step_s`); a
prefill-first scheduler (SGLang, :func:`prefill_first`) keeps the cohort whole in
prefill-only steps (:func:`cohort_ttft_steps`, :func:`prefill_only_step_s`); the first wave
of a benchmark queues for each other's prefill (:func:`wave_ttft_mean_s`). This module owns
those steps and what a request sees of them: its TPOT (:func:`tpot_mean_s`) and its prefill
service (:func:`ttft_service_s`). tests/formulas/test_scheduler_sim.py checks these closed
forms against a step-by-step scheduler simulation (:mod:`planner.formulas.scheduler_sim`).
The model is described in :mod:`planner.formulas.serving`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per replica unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from planner.formulas.engine_memory import ENGINES
from planner.formulas.latency import expert_touch_fraction
from planner.formulas.ops import Value, maximum, minimum, safe_div, where
from planner.formulas.serving_load import CLOSED_LOOP, OPEN_LOOP, _pick
from planner.formulas.serving_step import _busiest_rank_extra_s, _step_kind_s
from planner.formulas.speculative import per_output_token


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


def _running_in_budget(batch: Value, x: Value, residence_steps: Value) -> Value:
    """Running requests the token budget keeps busy when ``x`` complete per step:
    ``min(batch, max(x * residence_steps, 1))``."""
    return minimum(batch, maximum(x * residence_steps, 1))


def _prefill_share(x: Value, prompt_tokens: Value, n: Value) -> Value:
    """Share of a closed loop's steps that are prefill steps: ``min(x S / n, 1)``."""
    return minimum(x * prompt_tokens / n, 1)


def closed_loop_step_s(closed_loop_prefill_step_s: Value, closed_loop_decode_step_s: Value,
                       operating_requests_per_step: Value, prefill_tokens_computed: Value,
                       closed_loop_prefill_tokens: Value) -> Value:
    """Mean step of a closed loop (and of the offline maximum) at its running batch: a share
    ``min(x S / n, 1)`` of prefill steps (``n`` =
    :func:`planner.formulas.step_mix.closed_loop_prefill_tokens`), the rest decode-only
    steps, each bound by its own limit (a prefill step by compute, a decode step by the
    weights and KV it reads), so the mean step is ``f * prefill + (1 - f) * decode``, not one
    step of the average mix."""
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
    decodes (:mod:`planner.formulas.step_mix`), one micro-batch of ``1/pp`` of them
    (:func:`_step_kind_s`); a request's TTFT is its prefill steps of this, at least the
    host's launch time of an eager step (:func:`ttft_service_s`).

    The step mix behind the throughput (:func:`closed_loop_step_s`) and the saturation point
    keeps this GPU time: with a launch floor on every step that holds prompt chunks, the
    mix's throughput would fall as the batch grows (at the full batch nearly every step of a
    decode-first engine holds a chunk, and TensorRT-LLM then launches every step eagerly), so
    the saturation point at ``B_max`` would no longer be the most the engine completes; that
    needs the best batch, not ``B_max`` (not modelled)."""
    return _step_kind_s(closed_loop_prefill_tokens / pp, closed_loop_prefill_decodes / pp,
                        prefill_compute_s_per_token, decode_compute_s_per_token,
                        decode_kv_s_per_token, serving_token_s, serving_step_fixed_s,
                        serving_dense_weights_s, serving_expert_weights_s, model_experts,
                        model_experts_per_token, gemm_s_per_token, lm_head_s_per_token,
                        spec_verify_tokens, expert_gemm_s_per_token, expert_ranks,
                        expert_rank_max_sd)


def closed_loop_decode_step_s(closed_loop_batch: Value, operating_requests_per_step: Value,
                              residence_steps: Value, pp: Value,
                              prefill_compute_s_per_token: Value,
                              decode_compute_s_per_token: Value, decode_kv_s_per_token: Value,
                              serving_token_s: Value, serving_step_fixed_s: Value,
                              serving_dense_weights_s: Value, serving_expert_weights_s: Value,
                              model_experts: Value, model_experts_per_token: Value,
                              gemm_s_per_token: Value, lm_head_s_per_token: Value,
                              spec_verify_tokens: Value, expert_gemm_s_per_token: Value,
                              expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """A closed loop's decode-only step: one token for each running request the budget keeps
    busy (:func:`_running_in_budget`), one micro-batch of ``1/pp`` of them, each operator bound
    by its own limit (:func:`_step_kind_s`)."""
    batch = _running_in_budget(closed_loop_batch, operating_requests_per_step, residence_steps)
    return _step_kind_s(0, batch / pp, prefill_compute_s_per_token, decode_compute_s_per_token,
                        decode_kv_s_per_token, serving_token_s, serving_step_fixed_s,
                        serving_dense_weights_s, serving_expert_weights_s, model_experts,
                        model_experts_per_token, gemm_s_per_token, lm_head_s_per_token,
                        spec_verify_tokens, expert_gemm_s_per_token, expert_ranks,
                        expert_rank_max_sd)


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
    :func:`planner.formulas.disagg_load.disagg_tpot_mean_s`). Open
    loop: one average step, which carries the average share of other requests' prefill
    chunks. Closed loop and offline: a request's ``G - 1`` decode steps hold the prefill
    steps of the OTHER cohorts, ``p = B S / n - own prefill steps`` per cycle (``n`` prompt
    tokens a prefill step carries), the rest are decode-only:
    ``decode + min(p / (G - 1), 1) * (prefill - decode)`` (its own prefill is in its TTFT,
    not its TPOT). Under speculative decoding a step yields ``a`` tokens per sequence: the
    TPOT is the step over ``a`` (:func:`planner.formulas.speculative.per_output_token`) and a
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
                        expert_ranks: Value, expert_rank_max_sd: Value,
                        prefill_host_floor_s: Value) -> Value:
    """A prefill-only step of a cohort (a prefill-first scheduler, :func:`prefill_first`):
    ``n = min(B S, budget)`` prompt tokens and no decodes, its operators each bound by their
    own limit (:func:`_step_kind_s`), one micro-batch carrying ``1/pp`` of it, at least the
    host's launch time of an eager step
    (:func:`planner.formulas.serving_step.prefill_host_floor_s`)."""
    n = maximum(minimum(closed_loop_batch * prefill_tokens_computed,
                        max_num_batched_tokens_effective), 1)
    return _step_kind_s(n / pp, 0, prefill_compute_s_per_token, decode_compute_s_per_token,
                        decode_kv_s_per_token, serving_token_s, serving_step_fixed_s,
                        serving_dense_weights_s, serving_expert_weights_s, model_experts,
                        model_experts_per_token, gemm_s_per_token, lm_head_s_per_token, 1,
                        expert_gemm_s_per_token, expert_ranks, expert_rank_max_sd,
                        prefill_host_floor_s)


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
                   prefill_only_step_s: Value, prefill_host_floor_s: Value) -> Value:
    """Time from admission to first token: the prefill steps. Open loop: each the operating
    step plus this request's chunk (``min(S, budget)`` tokens of its prefill compute and
    traffic). Closed loop and offline: each a prefill step of its cohort
    (:func:`closed_loop_prefill_step_s`: requests that finish together return together).
    Under a prefill-first scheduler with fixed lengths the cohort stays whole
    (:func:`_cohort_whole`) and a request waits for the prompts ahead of it in its cohort:
    ``cohort_ttft_steps`` prefill-only steps (:func:`cohort_ttft_steps`,
    :func:`prefill_only_step_s`). Each prefill step takes at least the host's launch time
    where the engine runs it eagerly
    (:func:`planner.formulas.serving_step.prefill_host_floor_s`)."""
    chunk = minimum(prefill_tokens_computed, max_num_batched_tokens_effective)
    chunk_compute = prefill_flops_computed * chunk / prefill_tokens_computed / (
        tp * gpu_flops_per_s * matmul_efficiency_effective)
    one = maximum(maximum(step_compute_s + chunk_compute, step_memory_s) + step_elementwise_s
                  + step_communication_s + chunk * serving_token_s + step_overhead_s,
                  prefill_host_floor_s) + step_host_link_s
    # its fixed part holds the host link's stream; an eager step waits for the host's launches
    closed = maximum(closed_loop_prefill_step_s, prefill_host_floor_s)
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
                        expert_ranks: Value, expert_rank_max_sd: Value,
                        prefill_host_floor_s: Value) -> Value:
    """Step time of a step carrying ``n`` prefill tokens of a wave (``n`` =
    :func:`wave_prefill_tokens_per_step`): ``max(n * prefill FLOPs per prompt token / (tp *
    peak * efficiency), weights it touches) + n * per-token work + fixed step time``, one
    micro-batch through the ``pp`` stages carrying ``1/pp`` of it (the serving step's
    convention), on the busiest expert-parallel rank (:func:`_busiest_rank_extra_s`), at
    least the host's launch time of an eager step
    (:func:`planner.formulas.serving_step.prefill_host_floor_s`)."""
    n = wave_prefill_tokens_per_step / pp
    extra_c, extra_m = _busiest_rank_extra_s(n, serving_expert_weights_s,
                                             expert_gemm_s_per_token, model_experts,
                                             model_experts_per_token, expert_ranks,
                                             expert_rank_max_sd)
    compute = n * prefill_flops_computed / prefill_tokens_computed / (tp * gpu_flops_per_s
                                                   * matmul_efficiency_effective) + extra_c
    weights = serving_dense_weights_s + serving_expert_weights_s * expert_touch_fraction(
        n, model_experts, model_experts_per_token) + extra_m
    return maximum(maximum(compute, weights) + n * serving_token_s + serving_step_fixed_s,
                   prefill_host_floor_s)


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
    state over its first ``B`` requests (:func:`planner.compute.harness.finite_run_ttft`).
    Other modes: the steady-state ``ttft_mean_s``.
    Disaggregated: the prefill pool's wave
    (:func:`planner.formulas.disagg_load.disagg_wave_ttft_mean_s`)."""
    wave = _pick(serving_mode_code, disagg_wave_ttft_mean_s,
                 wave_ttft_steps * wave_prefill_step_s + request_latency_effective_s)
    return where(load_mode == CLOSED_LOOP, maximum(wave, ttft_mean_s), ttft_mean_s)
