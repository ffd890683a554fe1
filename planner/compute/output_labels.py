"""Label, unit and display flags of every output column, keyword-built (:class:`ColumnMeta`).

Why a module of its own: these are data, one entry per formula of
:mod:`planner.formulas.scenario` (about 300), which :mod:`planner.compute.outputs` joins to the
formulas; kept apart, the registry's code stays readable and each entry says what it sets
(``signed=True``, ``integer=True``) instead of a row of positional booleans.
"""

from __future__ import annotations

from typing import NamedTuple


class ColumnMeta(NamedTuple):
    """How a column is shown: its label, its unit (a key of :data:`planner.core.units.FORMATS`),
    and for output columns whether negative values are meaningful and whether it is a whole
    count. A named tuple, so ``meta[:2]`` is still ``(label, unit)``."""

    label: str
    unit: str
    description: str = ""
    """One line saying what the column is (model and GPU figures; an output's description is
    its formula's docstring)."""
    signed: bool = False
    """True when negative values are meaningful (a shortfall shows as a negative headroom)."""
    integer: bool = False
    """True for whole counts (replicas, sequences, tokens): reported as ints."""


def _slo_search(k: int) -> dict[str, ColumnMeta]:
    """The columns of step ``k`` of the SLO's replica search (:mod:`planner.formulas.slo`)."""
    step = f"Replica search {k}"
    return {
        f"slo_search_{k}_rate": ColumnMeta(label=f"{step}: rate per replica", unit="requests/s"),
        f"slo_search_{k}_step_s": ColumnMeta(label=f"{step}: step", unit="s"),
        f"slo_search_{k}_work": ColumnMeta(label=f"{step}: work per step", unit="count"),
        f"slo_search_{k}_tpot_s": ColumnMeta(label=f"{step}: TPOT", unit="s"),
        f"slo_search_{k}_ttft_s": ColumnMeta(label=f"{step}: TTFT at the percentile", unit="s"),
        f"slo_search_{k}_meets": ColumnMeta(label=f"{step}: middle meets SLO", unit="bool"),
        f"slo_search_{k}_low": ColumnMeta(label=f"{step}: from", unit="count", integer=True),
        f"slo_search_{k}_high": ColumnMeta(label=f"{step}: to", unit="count", integer=True),
    }


META: dict[str, ColumnMeta] = {
    "prefill_tokens_computed": ColumnMeta(
        label="Prompt tokens computed (after prefix cache)", unit="tokens"),
    "prefix_cache_shared_tokens": ColumnMeta(label="Prefix-cache shared tokens", unit="tokens"),
    "prefill_flops_computed": ColumnMeta(
        label="Prefill FLOPs computed (after prefix cache)", unit="FLOPs"),
    "spec_draft_tokens_effective": ColumnMeta(
        label="Draft tokens per step (effective)", unit="tokens"),
    "spec_acceptance_length_effective": ColumnMeta(
        label="Acceptance length (effective)", unit="tokens"),
    "spec_verify_tokens": ColumnMeta(label="Verified tokens per sequence per step", unit="tokens"),
    "decode_steps_per_request": ColumnMeta(label="Decode steps per request", unit="count"),
    "spec_draft_kv_layers": ColumnMeta(label="Drafter KV layers", unit="count"),
    "spec_kv_token_factor": ColumnMeta(
        label="Pool tokens per context token (drafter KV)", unit="count"),
    "spec_draft_weights_bytes_per_gpu": ColumnMeta(label="Drafter weights per GPU", unit="B"),
    "spec_draft_flops_per_step": ColumnMeta(
        label="Drafter FLOPs per sequence per step", unit="FLOPs"),
    "serving_decode_flops": ColumnMeta(label="Decode FLOPs per request (serving)", unit="FLOPs"),
    "serving_request_flops": ColumnMeta(label="FLOPs per request (serving)", unit="FLOPs"),
    "spec_draft_kv_s_per_step": ColumnMeta(label="Drafter KV time per sequence per step", unit="s"),
    "spec_draft_fixed_s": ColumnMeta(label="Drafter time per step (fixed)", unit="s"),
    "replicas": ColumnMeta(label="Replicas", unit="count", integer=True),
    "model_params_other": ColumnMeta(label="Other params (norms, biases)", unit="params"),
    "weight_bits_effective": ColumnMeta(label="Bits per quantized weight", unit="bits"),
    "embedding_bits": ColumnMeta(label="Bits per embedding weight", unit="bits"),
    "weights_bytes": ColumnMeta(label="Weights (replica)", unit="B"),
    "weights_bytes_per_gpu": ColumnMeta(label="Weights per GPU", unit="B"),
    "reserve_bytes_per_gpu": ColumnMeta(label="Reserve per GPU", unit="B"),
    "kv_budget_bytes": ColumnMeta(label="KV budget per GPU", unit="B", signed=True),
    "kv_bytes_per_token": ColumnMeta(label="KV per token", unit="B"),
    "tp_kv_fraction": ColumnMeta(label="KV share per TP rank", unit="fraction"),
    "context_tokens": ColumnMeta(label="Final context", unit="tokens", integer=True),
    "kv_bytes_per_sequence": ColumnMeta(label="KV per sequence", unit="B"),
    "kv_bytes_per_sequence_per_gpu": ColumnMeta(label="KV per sequence per GPU", unit="B"),
    "state_bytes_per_sequence": ColumnMeta(label="Fixed state per sequence", unit="B"),
    "tp_state_fraction": ColumnMeta(label="State share per TP rank", unit="fraction"),
    "state_bytes_per_sequence_per_gpu": ColumnMeta(
        label="Fixed state per sequence per GPU", unit="B"),
    "memory_bytes_per_sequence_per_gpu": ColumnMeta(label="Memory per sequence per GPU", unit="B"),
    "kv_in_use_bytes_per_gpu": ColumnMeta(label="KV and state in use per GPU", unit="B"),
    "kv_headroom_bytes": ColumnMeta(label="KV headroom per GPU", unit="B", signed=True),
    "fits": ColumnMeta(label="Fits", unit="bool"),
    "shortfall_bytes": ColumnMeta(label="Shortfall per GPU", unit="B"),
    "max_concurrent_sequences": ColumnMeta(
        label="Max concurrent sequences", unit="sequences", integer=True),
    "token_capacity": ColumnMeta(label="KV token capacity", unit="tokens", integer=True),
    "max_context_tokens": ColumnMeta(label="Max context at batch", unit="tokens", integer=True),
    "weight_offload_bytes_per_gpu": ColumnMeta(label="Weights offloaded per GPU", unit="B"),
    "weights_on_gpu_bytes_per_gpu": ColumnMeta(label="Weights on GPU per GPU", unit="B"),
    "kv_offload_bytes_per_token": ColumnMeta(label="Host KV per token per GPU", unit="B"),
    "kv_offload_tokens": ColumnMeta(
        label="KV tokens gained in host memory", unit="tokens", integer=True),
    "kv_offload_sequences": ColumnMeta(
        label="Sequences gained in host memory", unit="sequences", integer=True),
    "held_sequences": ColumnMeta(
        label="Sequences held (GPU + host)", unit="sequences", integer=True),
    "host_weight_stream_s": ColumnMeta(label="Host-link weight stream per pass", unit="s"),
    "weight_offload_bytes_per_token": ColumnMeta(
        label="Host-link weight bytes per token", unit="B"),
    "kv_swap_in_bytes_per_gpu": ColumnMeta(label="Prompt KV swap-in per GPU", unit="B"),
    "kv_swap_in_s": ColumnMeta(label="Prompt KV swap-in time", unit="s"),
    "kv_swap_in_ttft_ratio": ColumnMeta(label="Swap-in / TTFT", unit="fraction"),
    "matmul_params_per_token": ColumnMeta(label="Matmul weights per token", unit="params"),
    "prefill_flops": ColumnMeta(label="Prefill FLOPs", unit="FLOPs"),
    "mean_decode_context_tokens": ColumnMeta(label="Mean decode context", unit="tokens"),
    "decode_step_flops": ColumnMeta(label="Decode step FLOPs (batch)", unit="FLOPs"),
    "decode_flops": ColumnMeta(label="Decode FLOPs (request)", unit="FLOPs"),
    "request_flops": ColumnMeta(label="Request FLOPs", unit="FLOPs"),
    "decode_bytes_per_step": ColumnMeta(label="Bytes read per decode step", unit="B"),
    "ttft_compute_s": ColumnMeta(label="TTFT compute bound", unit="s"),
    "ttft_memory_s": ColumnMeta(label="TTFT memory bound", unit="s"),
    "ttft_s": ColumnMeta(label="TTFT", unit="s"),
    "tpot_compute_s": ColumnMeta(label="TPOT compute bound", unit="s"),
    "tpot_memory_s": ColumnMeta(label="TPOT memory bound", unit="s"),
    "tpot_s": ColumnMeta(label="TPOT", unit="s"),
    "e2e_latency_s": ColumnMeta(label="End-to-end latency", unit="s"),
    "batch_prefill_s": ColumnMeta(label="Batch prefill time", unit="s"),
    "cycle_s": ColumnMeta(label="Batch cycle time", unit="s"),
    "requests_per_s": ColumnMeta(label="Requests per second", unit="requests/s"),
    "throughput_tokens_per_s": ColumnMeta(label="Output throughput", unit="tokens/s"),
    "decode_tokens_per_s": ColumnMeta(label="Decode rate", unit="tokens/s"),
    "input_tokens_per_s": ColumnMeta(label="Input throughput", unit="tokens/s"),
    "meets_target_rate": ColumnMeta(label="Meets target rate", unit="bool"),
    "gpus_for_target_rate": ColumnMeta(label="GPUs for target rate", unit="GPUs", integer=True),
    "cost_usd_per_hour": ColumnMeta(label="Cost per hour", unit="USD/h"),
    "cost_usd_per_month": ColumnMeta(label="Cost per month", unit="USD/month"),
    "prefill_time_share": ColumnMeta(label="Prefill time share", unit="fraction"),
    "cost_usd_per_million_input_tokens": ColumnMeta(
        label="Cost per M input tokens", unit="USD/Mtok"),
    "cost_usd_per_million_output_tokens": ColumnMeta(
        label="Cost per M output tokens", unit="USD/Mtok"),
    "tokens_per_day": ColumnMeta(label="Output tokens per day", unit="tokens/day"),
    "train_matmul_params": ColumnMeta(label="N (matmul weights per token)", unit="params"),
    "lora_trainable_params": ColumnMeta(label="LoRA parameters", unit="params", integer=True),
    "trainable_params": ColumnMeta(label="Trainable parameters", unit="params", integer=True),
    "train_attention_flops_per_token": ColumnMeta(
        label="Attention FLOPs per token", unit="FLOPs/token"),
    "train_flops_per_token": ColumnMeta(label="Training FLOPs per token", unit="FLOPs/token"),
    "train_flops": ColumnMeta(label="Training FLOPs", unit="FLOPs"),
    "train_time_s": ColumnMeta(label="Training time", unit="s"),
    "gpu_hours": ColumnMeta(label="GPU-hours", unit="GPU-h"),
    "train_cost_usd": ColumnMeta(label="Training cost", unit="USD"),
    "data_parallel": ColumnMeta(label="Data-parallel ranks", unit="count", integer=True),
    "model_state_bytes_per_gpu": ColumnMeta(label="Model state per GPU", unit="B"),
    "activation_bytes_per_gpu": ColumnMeta(label="Activations per GPU", unit="B"),
    "train_memory_bytes_per_gpu": ColumnMeta(label="Training memory per GPU", unit="B"),
    "train_fits": ColumnMeta(label="Training fits", unit="bool"),
    "tokens_for_gpu_hours": ColumnMeta(label="Tokens for GPU-hour budget", unit="tokens"),
    "tokens_for_usd": ColumnMeta(label="Tokens for USD budget", unit="tokens"),
    # serving engine (planner.formulas.serving_columns)
    "rope_cache_bytes": ColumnMeta(label="Rotary table", unit="B"),
    "attention_replicated_bytes_per_gpu": ColumnMeta(label="Replicated attention (DP)", unit="B"),
    "engine_weights_bytes_per_gpu": ColumnMeta(label="Engine weights per GPU", unit="B"),
    "profile_tokens": ColumnMeta(label="Profiling batch", unit="tokens", integer=True),
    "profile_sequences": ColumnMeta(label="Profiling sequences", unit="sequences", integer=True),
    "ffn_width_per_token": ColumnMeta(label="FFN width per token", unit="elements"),
    "forward_activation_bytes": ColumnMeta(label="Profile forward activations", unit="B"),
    "sampler_activation_bytes": ColumnMeta(label="Profile sampler activations", unit="B"),
    "moe_workspace_bytes": ColumnMeta(label="Fused-MoE workspace kept (profile)", unit="B"),
    "profile_hidden_bytes": ColumnMeta(label="Profile hidden states kept", unit="B"),
    "activation_peak_bytes": ColumnMeta(label="Activation peak (profile)", unit="B"),
    "non_torch_bytes": ColumnMeta(label="Non-torch memory", unit="B"),
    "engine_kv_bytes_per_gpu": ColumnMeta(label="Engine KV pool per GPU", unit="B", signed=True),
    "kv_fraction_per_gpu": ColumnMeta(label="KV share per GPU", unit="fraction"),
    "kv_bytes_per_token_per_gpu": ColumnMeta(label="KV per token per GPU", unit="B"),
    "engine_block_tokens": ColumnMeta(label="Engine KV block", unit="tokens", integer=True),
    "engine_kv_tokens": ColumnMeta(label="Engine KV tokens", unit="tokens", integer=True),
    "engine_state_tokens": ColumnMeta(label="Fixed state as pool tokens", unit="tokens"),
    "engine_token_capacity": ColumnMeta(label="KV tokens (engine)", unit="tokens", integer=True),
    "engine_memory_used_bytes": ColumnMeta(label="Engine memory per GPU", unit="B"),
    "engine_fits": ColumnMeta(label="Engine fits", unit="bool"),
    "matmul_efficiency_effective": ColumnMeta(label="Matmul efficiency", unit="fraction"),
    "bandwidth_efficiency_effective": ColumnMeta(label="Bandwidth efficiency", unit="fraction"),
    "load_mode": ColumnMeta(label="Load mode", unit="code"),
    "replica_request_rate_per_s": ColumnMeta(label="Rate per replica", unit="requests/s"),
    "micro_batch_request_rate_per_s": ColumnMeta(label="Rate per micro-batch", unit="requests/s"),
    "request_tokens": ColumnMeta(label="Tokens per request", unit="tokens"),
    "prefill_steps_per_request": ColumnMeta(label="Prefill steps", unit="count"),
    "residence_steps": ColumnMeta(label="Steps per request", unit="count"),
    "max_running_batch": ColumnMeta(label="Max running batch", unit="sequences", integer=True),
    "serving_compute_s_per_request": ColumnMeta(label="Compute per request", unit="s"),
    "serving_kv_memory_s_per_request": ColumnMeta(label="KV traffic per request", unit="s"),
    "serving_dense_weights_s": ColumnMeta(label="Dense weight read", unit="s"),
    "serving_expert_weights_s": ColumnMeta(label="Expert weight read", unit="s"),
    "tp_link_kind": ColumnMeta(label="TP link (0 domain, 1 PCIe, 2 network)", unit="code"),
    "tp_link_bytes_per_s": ColumnMeta(label="TP link bandwidth per direction", unit="B/s"),
    "ep_link_bytes_per_s": ColumnMeta(label="EP link bandwidth per direction", unit="B/s"),
    "tp_hop_latency_s": ColumnMeta(label="Collective step latency", unit="s"),
    "moe_exchange_code": ColumnMeta(
        label="MoE exchange (0 in all-reduce, 1 gather/scatter, 2 all-to-all)", unit="code"),
    "moe_dispatch_bytes": ColumnMeta(label="MoE dispatch bytes per element", unit="B"),
    "moe_comm_s_per_token": ColumnMeta(label="MoE exchange per token", unit="s"),
    "moe_collective_latency_s": ColumnMeta(label="MoE exchange collective latency", unit="s"),
    "collective_latency_s_per_step": ColumnMeta(label="Collective latency per step", unit="s"),
    "serving_comm_s_per_token": ColumnMeta(label="Communication per token", unit="s"),
    "serving_activation_s_per_token": ColumnMeta(label="Element-wise per token", unit="s"),
    "serving_token_s": ColumnMeta(label="Per-token extra time", unit="s"),
    "serving_step_fixed_s": ColumnMeta(label="Fixed step time", unit="s"),
    "prefill_eager": ColumnMeta(label="Eager prefill (1: launched op by op)", unit="code"),
    "prefill_host_floor_s": ColumnMeta(label="Eager prefill host launch time", unit="s"),
    "prefill_compute_s_per_token": ColumnMeta(label="Prefill compute per token", unit="s"),
    "decode_compute_s_per_token": ColumnMeta(label="Decode compute per token", unit="s"),
    "decode_kv_s_per_token": ColumnMeta(label="KV traffic per decode token", unit="s"),
    "gemm_s_per_token": ColumnMeta(label="GEMM compute per token", unit="s"),
    "lm_head_s_per_token": ColumnMeta(label="Logits compute per token", unit="s"),
    "expert_ranks": ColumnMeta(label="Expert-parallel ranks", unit="GPUs", integer=True),
    "expert_rank_max_sd": ColumnMeta(
        label="Busiest expert rank (standard deviations over the mean)", unit="σ"),
    "expert_gemm_s_per_token": ColumnMeta(label="Routed-expert GEMM compute per token",
                                          unit="s"),
    "saturation_requests_per_step": ColumnMeta(label="Requests per step (saturated)", unit="count"),
    "saturation_prefill_tokens": ColumnMeta(label="Prefill step prompt tokens (saturated)",
                                            unit="tokens"),
    "saturation_prefill_decodes": ColumnMeta(label="Prefill step decodes (saturated)",
                                             unit="sequences"),
    "saturation_prefill_step_s": ColumnMeta(label="Prefill step (saturated)", unit="s"),
    "saturation_decode_step_s": ColumnMeta(label="Decode-only step (saturated)", unit="s"),
    "saturation_step_s": ColumnMeta(label="Step (saturated)", unit="s"),
    "saturation_requests_per_s_replica": ColumnMeta(
        label="Saturation rate per replica", unit="requests/s"),
    "saturation_requests_per_s": ColumnMeta(label="Saturation rate", unit="requests/s"),
    "saturation_output_tokens_per_s": ColumnMeta(label="Offline max output", unit="tokens/s"),
    "frontend_code": ColumnMeta(label="Front end", unit="code"),
    "request_latency_effective_s": ColumnMeta(label="Front-end latency", unit="s"),
    "request_overhead_effective_s": ColumnMeta(label="Front-end work per request", unit="s"),
    "stream_overhead_effective_s_per_token": ColumnMeta(label="Front-end work per token", unit="s"),
    "frontend_requests_per_s_replica": ColumnMeta(
        label="Front-end cap per replica", unit="requests/s"),
    "serving_capacity_requests_per_s_replica": ColumnMeta(
        label="Capacity per replica", unit="requests/s"),
    "gpu_utilization": ColumnMeta(label="Engine utilization", unit="fraction"),
    "utilization": ColumnMeta(label="Utilization", unit="fraction"),
    "overloaded": ColumnMeta(label="Overloaded", unit="bool"),
    "serving_step_0_s": ColumnMeta(label="Step, iteration 0", unit="s"),
    "serving_step_1_s": ColumnMeta(label="Step, iteration 1", unit="s"),
    "serving_step_2_s": ColumnMeta(label="Step, iteration 2", unit="s"),
    "serving_step_3_s": ColumnMeta(label="Step, iteration 3", unit="s"),
    "serving_step_4_s": ColumnMeta(label="Step, iteration 4", unit="s"),
    "serving_step_5_s": ColumnMeta(label="Step, iteration 5", unit="s"),
    "serving_step_6_s": ColumnMeta(label="Step, iteration 6", unit="s"),
    "closed_loop_batch": ColumnMeta(label="Closed-loop batch", unit="sequences"),
    "operating_requests_per_step": ColumnMeta(label="Requests per step", unit="count"),
    "micro_batch_requests_per_step": ColumnMeta(
        label="Requests per micro-batch step", unit="count"),
    "running_batch": ColumnMeta(label="Running batch", unit="sequences"),
    "step_compute_s": ColumnMeta(label="Step: compute", unit="s"),
    "step_memory_s": ColumnMeta(label="Step: memory", unit="s"),
    "step_communication_s": ColumnMeta(label="Step: communication", unit="s"),
    "step_elementwise_s": ColumnMeta(label="Step: element-wise", unit="s"),
    "step_overhead_s": ColumnMeta(label="Step: overhead", unit="s"),
    "step_host_link_s": ColumnMeta(label="Step: host link", unit="s"),
    "closed_loop_step_s": ColumnMeta(label="Closed-loop mean step", unit="s"),
    "closed_loop_prefill_tokens": ColumnMeta(label="Closed-loop prefill step prompt tokens",
                                             unit="tokens"),
    "closed_loop_prefill_decodes": ColumnMeta(label="Closed-loop prefill step decodes",
                                              unit="sequences"),
    "closed_loop_prefill_step_s": ColumnMeta(label="Closed-loop prefill step", unit="s"),
    "closed_loop_decode_step_s": ColumnMeta(label="Closed-loop decode step", unit="s"),
    "step_s": ColumnMeta(label="Step time", unit="s"),
    "prefill_first": ColumnMeta(label="Prefill-first scheduler", unit="code"),
    "cohort_ttft_steps": ColumnMeta(label="Cohort steps to first token", unit="count"),
    "prefill_only_step_s": ColumnMeta(label="Prefill-only step", unit="s"),
    "tpot_mean_s": ColumnMeta(label="TPOT under load", unit="s"),
    "ttft_service_s": ColumnMeta(label="TTFT without queueing", unit="s"),
    "queue_wait_mean_s": ColumnMeta(label="Queue wait (mean)", unit="s"),
    "queue_wait_p50_s": ColumnMeta(label="Queue wait p50", unit="s"),
    "queue_wait_p90_s": ColumnMeta(label="Queue wait p90", unit="s"),
    "queue_wait_p99_s": ColumnMeta(label="Queue wait p99", unit="s"),
    "step_alignment_s": ColumnMeta(label="Step alignment wait", unit="s"),
    "wave_prefill_tokens_per_step": ColumnMeta(label="Wave prefill tokens per step", unit="tokens"),
    "wave_prefill_step_s": ColumnMeta(label="Wave prefill step", unit="s"),
    "wave_ttft_steps": ColumnMeta(label="Wave steps to first token", unit="count"),
    "wave_ttft_mean_s": ColumnMeta(label="First-wave TTFT (mean)", unit="s"),
    "ttft_mean_s": ColumnMeta(label="TTFT under load (mean)", unit="s"),
    "ttft_p50_s": ColumnMeta(label="TTFT p50 under load", unit="s"),
    "ttft_p90_s": ColumnMeta(label="TTFT p90 under load", unit="s"),
    "ttft_p99_s": ColumnMeta(label="TTFT p99 under load", unit="s"),
    "e2e_mean_s": ColumnMeta(label="End-to-end under load", unit="s"),
    "serving_requests_per_s": ColumnMeta(label="Served requests", unit="requests/s"),
    "output_tokens_per_s": ColumnMeta(label="Output tokens under load", unit="tokens/s"),
    "engine_requests_per_s": ColumnMeta(label="Requests/s (engine)", unit="requests/s"),
    # disaggregated prefill/decode (planner.formulas.disagg, issue 25)
    "prefill_workers_effective": ColumnMeta(label="Prefill workers", unit="count", integer=True),
    "decode_workers_effective": ColumnMeta(label="Decode workers", unit="count", integer=True),
    "prefill_gpus": ColumnMeta(label="Prefill pool GPUs", unit="count", integer=True),
    "decode_gpus": ColumnMeta(label="Decode pool GPUs", unit="count", integer=True),
    "deployment_gpus": ColumnMeta(label="Deployment GPUs", unit="count", integer=True),
    "disagg_cost_usd_per_hour": ColumnMeta(label="Both pools' cost", unit="USD/h"),
    "prefill_gemm_s_per_token": ColumnMeta(label="Prefill GEMM per token", unit="s"),
    "prefill_expert_ranks": ColumnMeta(label="Prefill expert-parallel ranks", unit="GPUs",
                                       integer=True),
    "prefill_expert_rank_max_sd": ColumnMeta(
        label="Prefill busiest expert rank (standard deviations)", unit="σ"),
    "prefill_expert_gemm_s_per_token": ColumnMeta(label="Prefill routed-expert GEMM per token",
                                                  unit="s"),
    "prefill_token_compute_s": ColumnMeta(label="Prefill compute per token", unit="s"),
    "prefill_attention_replicated_bytes_per_gpu": ColumnMeta(
        label="Prefill replicated attention", unit="B"),
    "prefill_dense_weights_s": ColumnMeta(label="Prefill dense weight read", unit="s"),
    "prefill_expert_weights_s": ColumnMeta(label="Prefill expert weight read", unit="s"),
    "prefill_tp_link_bytes_per_s": ColumnMeta(label="Prefill TP link bandwidth per direction",
                                              unit="B/s"),
    "prefill_ep_link_bytes_per_s": ColumnMeta(label="Prefill EP link bandwidth per direction",
                                              unit="B/s"),
    "prefill_token_s": ColumnMeta(label="Prefill per-token extra time", unit="s"),
    "prefill_step_fixed_s": ColumnMeta(label="Prefill fixed step time", unit="s"),
    "prefill_step_s": ColumnMeta(label="Prefill step (full budget)", unit="s"),
    "prefill_chunk_step_s": ColumnMeta(label="Prefill step (one prompt)", unit="s"),
    "prefill_capacity_requests_per_s": ColumnMeta(label="Prefill pool capacity", unit="requests/s"),
    "prefill_service_s": ColumnMeta(label="Prefill time per prompt", unit="s"),
    "decode_matmul_efficiency_effective": ColumnMeta(
        label="Decode matmul efficiency", unit="fraction"),
    "decode_bandwidth_efficiency_effective": ColumnMeta(
        label="Decode bandwidth efficiency", unit="fraction"),
    "decode_gemm_s_per_token": ColumnMeta(label="Decode GEMM per token", unit="s"),
    "decode_expert_ranks": ColumnMeta(label="Decode expert-parallel ranks", unit="GPUs",
                                      integer=True),
    "decode_expert_rank_max_sd": ColumnMeta(
        label="Decode busiest expert rank (standard deviations)", unit="σ"),
    "decode_expert_gemm_s_per_token": ColumnMeta(label="Decode routed-expert GEMM per token",
                                                 unit="s"),
    "decode_lm_head_s_per_token": ColumnMeta(label="Decode logits per token", unit="s"),
    "decode_token_compute_s": ColumnMeta(label="Decode compute per token (pool)", unit="s"),
    "decode_pool_kv_s_per_token": ColumnMeta(label="Decode KV traffic per token (pool)", unit="s"),
    "decode_attention_replicated_bytes_per_gpu": ColumnMeta(
        label="Decode replicated attention", unit="B"),
    "decode_dense_weights_s": ColumnMeta(label="Decode dense weight read", unit="s"),
    "decode_expert_weights_s": ColumnMeta(label="Decode expert weight read", unit="s"),
    "decode_tp_link_bytes_per_s": ColumnMeta(label="Decode TP link bandwidth per direction",
                                             unit="B/s"),
    "decode_ep_link_bytes_per_s": ColumnMeta(label="Decode EP link bandwidth per direction",
                                             unit="B/s"),
    "decode_token_s": ColumnMeta(label="Decode per-token extra time", unit="s"),
    "decode_spec_draft_kv_s_per_step": ColumnMeta(label="Decode drafter KV per step (pool)",
                                                   unit="s"),
    "decode_spec_draft_fixed_s": ColumnMeta(label="Decode drafter fixed time (pool)", unit="s"),
    "decode_step_fixed_s": ColumnMeta(label="Decode fixed step time", unit="s"),
    "decode_kv_bytes_per_token_per_gpu": ColumnMeta(label="Decode KV per token per GPU", unit="B"),
    "decode_kv_pool_bytes_per_gpu": ColumnMeta(
        label="Decode KV pool per GPU", unit="B", signed=True),
    "decode_engine_block_tokens": ColumnMeta(label="Decode KV block", unit="tokens",
                                             integer=True),
    "decode_token_capacity": ColumnMeta(
        label="Decode KV tokens per worker", unit="tokens", integer=True),
    "prefill_kv_bytes_per_token_per_gpu": ColumnMeta(
        label="Prefill KV per token per GPU", unit="B"),
    "prefill_kv_pool_bytes_per_gpu": ColumnMeta(
        label="Prefill KV pool per GPU", unit="B", signed=True),
    "prefill_engine_block_tokens": ColumnMeta(label="Prefill KV block", unit="tokens",
                                              integer=True),
    "prefill_token_capacity": ColumnMeta(
        label="Prefill KV tokens per worker", unit="tokens", integer=True),
    "pools_fit": ColumnMeta(label="Both pools fit", unit="bool"),
    "decode_max_running_batch": ColumnMeta(
        label="Decode max running batch", unit="sequences", integer=True),
    "decode_saturation_step_s": ColumnMeta(label="Decode step (full batch)", unit="s"),
    "decode_capacity_requests_per_s": ColumnMeta(label="Decode pool capacity", unit="requests/s"),
    "disagg_saturation_requests_per_s": ColumnMeta(
        label="Disaggregated capacity", unit="requests/s"),
    "kv_transfer_link_kind": ColumnMeta(
        label="KV transfer link (0 domain, 2 network)", unit="code"),
    "kv_transfer_bytes": ColumnMeta(label="KV moved per prompt", unit="B"),
    "kv_transfer_link_bytes_per_s": ColumnMeta(label="KV transfer bandwidth", unit="B/s"),
    "kv_transfer_s": ColumnMeta(label="KV transfer per prompt", unit="s"),
    "decode_arrivals_steps_per_s": ColumnMeta(
        label="Decode tokens arriving per worker", unit="tokens/s"),
    "decode_batch_0": ColumnMeta(label="Decode batch, estimate 0", unit="sequences"),
    **{f"decode_batch_{k}{kind}_step_s": ColumnMeta(
        label=f"Decode step at batch iterate {k}{' + 1' if kind else ''}", unit="s")
       for k in (0, 1, 2) for kind in ("", "_next")},
    "decode_batch_1": ColumnMeta(label="Decode batch, iteration 1", unit="sequences"),
    "decode_batch_2": ColumnMeta(label="Decode batch, iteration 2", unit="sequences"),
    "decode_batch_3": ColumnMeta(label="Decode batch per worker", unit="sequences"),
    "disagg_tpot_mean_s": ColumnMeta(label="TPOT, decode pool", unit="s"),
    "disagg_path_latency_s": ColumnMeta(label="Front end and P/D hand-over", unit="s"),
    "disagg_cycle_s": ColumnMeta(label="Request cycle without queueing", unit="s"),
    "disagg_requests_per_s": ColumnMeta(label="Served requests (disaggregated)", unit="requests/s"),
    "prefill_utilization": ColumnMeta(label="Prefill pool utilization", unit="fraction"),
    "decode_utilization": ColumnMeta(label="Decode pool utilization", unit="fraction"),
    "disagg_overloaded": ColumnMeta(label="A pool overloaded", unit="bool"),
    "prefill_queue_wait_mean_s": ColumnMeta(label="Prefill queue wait (mean)", unit="s"),
    "decode_slot_wait_s": ColumnMeta(label="Decode slot wait", unit="s"),
    "disagg_ttft_service_s": ColumnMeta(label="Prefill + transfer + first decode", unit="s"),
    "disagg_ttft_mean_s": ColumnMeta(label="TTFT disaggregated (mean)", unit="s"),
    "disagg_ttft_p50_s": ColumnMeta(label="TTFT disaggregated p50", unit="s"),
    "disagg_ttft_p90_s": ColumnMeta(label="TTFT disaggregated p90", unit="s"),
    "disagg_ttft_p99_s": ColumnMeta(label="TTFT disaggregated p99", unit="s"),
    "prefill_wave_s": ColumnMeta(label="Prefill of a cohort of clients", unit="s"),
    "disagg_wave_ttft_mean_s": ColumnMeta(label="First-wave TTFT disaggregated", unit="s"),
    "ttft_slo_percentile_s": ColumnMeta(label="TTFT at the objective's percentile", unit="s"),
    "saturated": ColumnMeta(label="Saturated (queue overloaded)", unit="bool"),
    "meets_slo": ColumnMeta(label="Meets SLO", unit="bool"),
    "slo_queue_utilization": ColumnMeta(
        label="Utilisation with no wait at the TTFT percentile", unit="fraction"),
    "slo_requests_per_step": ColumnMeta(label="Work per step the SLO allows", unit="count"),
    "slo_step_s": ColumnMeta(label="Longest step the SLO allows", unit="s"),
    "slo_step_requests_per_s_replica": ColumnMeta(
        label="Rate per replica the SLO's step allows", unit="requests/s"),
    "slo_requests_per_s_replica": ColumnMeta(
        label="Rate per replica within SLO", unit="requests/s"),
    "slo_replicas_low": ColumnMeta(
        label="Replicas needed, search from", unit="count", integer=True),
    "slo_replicas_high": ColumnMeta(label="Replicas needed, search to", unit="count", integer=True),
    **{name: meta for k in range(1, 11) for name, meta in _slo_search(k).items()},
    "disagg_decode_slo_batch": ColumnMeta(
        label="Decode batch per worker the TPOT objective allows", unit="sequences"),
    "disagg_decode_capacity_requests_per_s_worker": ColumnMeta(
        label="Capacity per decode worker", unit="requests/s"),
    "disagg_decode_slo_requests_per_s_worker": ColumnMeta(
        label="Rate per decode worker within SLO", unit="requests/s"),
    "disagg_decode_workers_needed": ColumnMeta(label="Decode workers needed", unit="count",
                                               integer=True),
    "disagg_sized_decode_arrivals_steps_per_s": ColumnMeta(
        label="Decode work arriving per needed worker", unit="sequences"),
    **{f"disagg_sized_decode_batch_{k}{kind}_step_s": ColumnMeta(
        label=f"Sized decode step at batch iterate {k}{' + 1' if kind else ''}", unit="s")
       for k in (0, 1, 2) for kind in ("", "_next")},
    **{f"disagg_sized_decode_batch_{k}": ColumnMeta(
        label=f"Decode batch at the needed count, iteration {k}", unit="sequences")
       for k in range(4)},
    "disagg_sized_tpot_s": ColumnMeta(label="TPOT at the needed decode count", unit="s"),
    "disagg_prefill_capacity_requests_per_s_worker": ColumnMeta(
        label="Capacity per prefill worker", unit="requests/s"),
    "disagg_prefill_wait_room_nic_s": ColumnMeta(
        label="Prefill wait the TTFT objective leaves (network KV)", unit="s", signed=True),
    "disagg_prefill_wait_room_domain_s": ColumnMeta(
        label="Prefill wait the TTFT objective leaves (NVLink KV)", unit="s", signed=True),
    **{f"disagg_prefill_u_{kind}_{k}": ColumnMeta(
        label=f"sqrt(prefill utilisation bound), {kind} KV, iteration {k}", unit="fraction")
       for kind in ("nic", "domain") for k in range(1, 7)},
    "disagg_prefill_workers_nic": ColumnMeta(label="Prefill workers needed (network KV)",
                                             unit="count", integer=True),
    "disagg_prefill_workers_domain": ColumnMeta(label="Prefill workers needed (NVLink KV)",
                                                unit="count", integer=True),
    "disagg_kv_link_kind_needed": ColumnMeta(
        label="KV link of the needed deployment (0 NVLink, 2 network)", unit="code"),
    "disagg_prefill_workers_needed": ColumnMeta(label="Prefill workers needed", unit="count",
                                                integer=True),
    "disagg_prefill_slo_requests_per_s_worker": ColumnMeta(
        label="Rate per prefill worker within SLO", unit="requests/s"),
    "disagg_prefill_gpus_needed": ColumnMeta(label="Prefill GPUs needed", unit="GPUs",
                                             integer=True),
    "disagg_decode_gpus_needed": ColumnMeta(label="Decode GPUs needed", unit="GPUs",
                                            integer=True),
    "replicas_needed": ColumnMeta(label="Replicas needed", unit="count", integer=True),
    "gpus_needed": ColumnMeta(label="GPUs needed", unit="GPUs", integer=True),
    "cost_usd_per_month_needed": ColumnMeta(label="Cost of the needed GPUs", unit="USD/month"),
}
"""Every output column's label, unit and flags, by name."""
