"""What a closed loop's prefill step carries, and the steps at saturation, as columns.

Why this module exists: a closed loop's steps are prefill steps (a cohort's prompt chunks
beside the other requests' decodes) and decode-only steps (:mod:`planner.formulas.serving`,
``closed_loop_step_s``). The prompt tokens and decodes of a prefill step
(:func:`planner.formulas.serving_cohort._prefill_step_tokens`) enter the step's operator sum a
dozen times (GEMMs, touched experts, the busiest expert rank, attention, element-wise work); as
columns of their own each step formula names them once. Inlined, ``saturation_step_s`` ran to
13,466 characters and ``closed_loop_prefill_step_s`` to 9,035 at the workbook's longest cell
references, past Excel's limit of 8,192 characters a formula (Microsoft, "Excel
specifications and limits"). The figures are the same; ``explain`` shows the parts.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`).
"""

from __future__ import annotations

from planner.formulas import serving_cohort
from planner.formulas.ops import Value


def closed_loop_prefill_tokens(closed_loop_batch: Value, operating_requests_per_step: Value,
                               residence_steps: Value, prefill_tokens_computed: Value,
                               max_num_batched_tokens_effective: Value,
                               output_tokens_cv: Value) -> Value:
    """Prompt tokens a closed loop's prefill step carries (tokens): its cohort's chunks in
    what the other requests' decodes leave of the budget
    (:func:`planner.formulas.serving_cohort._prefill_step_tokens` at the running batch)."""
    batch = serving_cohort._running_in_budget(closed_loop_batch, operating_requests_per_step,
                                              residence_steps)
    n, _others = serving_cohort._prefill_step_tokens(batch, prefill_tokens_computed,
                                                     max_num_batched_tokens_effective,
                                                     output_tokens_cv, operating_requests_per_step)
    return n


def closed_loop_prefill_decodes(closed_loop_batch: Value, operating_requests_per_step: Value,
                                residence_steps: Value, prefill_tokens_computed: Value,
                                max_num_batched_tokens_effective: Value,
                                output_tokens_cv: Value) -> Value:
    """Decodes beside the cohort in a closed loop's prefill step (sequences): the running
    requests not in the cohort (:func:`planner.formulas.serving_cohort._prefill_step_tokens`)."""
    batch = serving_cohort._running_in_budget(closed_loop_batch, operating_requests_per_step,
                                              residence_steps)
    _n, others = serving_cohort._prefill_step_tokens(batch, prefill_tokens_computed,
                                                     max_num_batched_tokens_effective,
                                                     output_tokens_cv, operating_requests_per_step)
    return others


def saturation_prefill_tokens(max_running_batch: Value, saturation_requests_per_step: Value,
                              residence_steps: Value, prefill_tokens_computed: Value,
                              max_num_batched_tokens_effective: Value,
                              output_tokens_cv: Value) -> Value:
    """Prompt tokens a prefill step carries at saturation (tokens):
    :func:`closed_loop_prefill_tokens` of ``B_max`` running requests completing
    ``saturation_requests_per_step``."""
    return closed_loop_prefill_tokens(max_running_batch, saturation_requests_per_step,
                                      residence_steps, prefill_tokens_computed,
                                      max_num_batched_tokens_effective, output_tokens_cv)


def saturation_prefill_decodes(max_running_batch: Value, saturation_requests_per_step: Value,
                               residence_steps: Value, prefill_tokens_computed: Value,
                               max_num_batched_tokens_effective: Value,
                               output_tokens_cv: Value) -> Value:
    """Decodes beside the cohort in a prefill step at saturation (sequences):
    :func:`closed_loop_prefill_decodes` at ``B_max``."""
    return closed_loop_prefill_decodes(max_running_batch, saturation_requests_per_step,
                                       residence_steps, prefill_tokens_computed,
                                       max_num_batched_tokens_effective, output_tokens_cv)


def saturation_prefill_step_s(saturation_prefill_tokens: Value,
                              saturation_prefill_decodes: Value, pp: Value,
                              prefill_compute_s_per_token: Value,
                              decode_compute_s_per_token: Value, decode_kv_s_per_token: Value,
                              serving_token_s: Value, serving_step_fixed_s: Value,
                              serving_dense_weights_s: Value, serving_expert_weights_s: Value,
                              model_experts: Value, model_experts_per_token: Value,
                              gemm_s_per_token: Value, lm_head_s_per_token: Value,
                              spec_verify_tokens: Value, expert_gemm_s_per_token: Value,
                              expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """A prefill step at saturation (s):
    :func:`planner.formulas.serving_cohort.closed_loop_prefill_step_s` of the saturated
    cohort's chunks and the others' decodes."""
    return serving_cohort.closed_loop_prefill_step_s(
        saturation_prefill_tokens, saturation_prefill_decodes, pp, prefill_compute_s_per_token,
        decode_compute_s_per_token, decode_kv_s_per_token, serving_token_s,
        serving_step_fixed_s, serving_dense_weights_s, serving_expert_weights_s, model_experts,
        model_experts_per_token, gemm_s_per_token, lm_head_s_per_token, spec_verify_tokens,
        expert_gemm_s_per_token, expert_ranks, expert_rank_max_sd)


def saturation_decode_step_s(max_running_batch: Value, saturation_requests_per_step: Value,
                             residence_steps: Value, pp: Value,
                             prefill_compute_s_per_token: Value,
                             decode_compute_s_per_token: Value, decode_kv_s_per_token: Value,
                             serving_token_s: Value, serving_step_fixed_s: Value,
                             serving_dense_weights_s: Value, serving_expert_weights_s: Value,
                             model_experts: Value, model_experts_per_token: Value,
                             gemm_s_per_token: Value, lm_head_s_per_token: Value,
                             spec_verify_tokens: Value, expert_gemm_s_per_token: Value,
                             expert_ranks: Value, expert_rank_max_sd: Value) -> Value:
    """A decode-only step at saturation (s):
    :func:`planner.formulas.serving_cohort.closed_loop_decode_step_s` of ``B_max`` running
    requests completing ``saturation_requests_per_step``."""
    return serving_cohort.closed_loop_decode_step_s(
        max_running_batch, saturation_requests_per_step, residence_steps, pp,
        prefill_compute_s_per_token, decode_compute_s_per_token, decode_kv_s_per_token,
        serving_token_s, serving_step_fixed_s, serving_dense_weights_s,
        serving_expert_weights_s, model_experts, model_experts_per_token, gemm_s_per_token,
        lm_head_s_per_token, spec_verify_tokens, expert_gemm_s_per_token, expert_ranks,
        expert_rank_max_sd)
