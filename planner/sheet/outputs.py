"""Output columns: each formula of :mod:`planner.estimator.scenario` with its label, unit,
display format and one-line description (the formula's docstring), in one registry.

The CLI tables, ``explain``, the terminal UI and the Excel export read labels, units and formats
from here; the formula itself is the estimator function, so there is one definition of each
figure. Model and GPU figures (``model_*``, ``gpu_*``) are inputs of the sheet too, described in
:data:`FIGURE_COLUMNS`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from planner.estimator import scenario
from planner.estimator.figures import ModelFigures
from planner.estimator.gpu import PEAK_DTYPES
from planner.sheet.inputs import input_columns
from planner.units import FORMATS


@dataclass(frozen=True, slots=True)
class OutputColumn:
    """A computed column: ``formula`` is the estimator function named ``name``."""

    name: str
    label: str
    unit: str
    description: str
    formula: Callable[..., Any]
    signed: bool = False
    """True when negative values are meaningful (a shortfall shows as a negative headroom)."""
    integer: bool = False
    """True for whole counts (replicas, sequences, tokens): reported as ints."""

    @property
    def inputs(self) -> tuple[str, ...]:
        """Columns the formula reads (derived from its signature)."""
        return tuple(inspect.signature(self.formula).parameters)

    def format(self, value: Any) -> str:
        """``value`` with its unit, for display."""
        return FORMATS[self.unit](value)


# name: (label, unit, signed[, integer])
META: dict[str, tuple[str, str, bool] | tuple[str, str, bool, bool]] = {
    "prefill_tokens_computed": ("Prompt tokens computed (after prefix cache)", "tokens", False),
    "prefix_cache_shared_tokens": ("Prefix-cache shared tokens", "tokens", False),
    "prefill_flops_computed": ("Prefill FLOPs computed (after prefix cache)", "FLOPs", False),
    "spec_draft_tokens_effective": ("Draft tokens per step (effective)", "tokens", False),
    "spec_acceptance_length_effective": ("Acceptance length (effective)", "tokens", False),
    "spec_verify_tokens": ("Verified tokens per sequence per step", "tokens", False),
    "decode_steps_per_request": ("Decode steps per request", "count", False),
    "spec_draft_kv_layers": ("Drafter KV layers", "count", False),
    "spec_kv_token_factor": ("Pool tokens per context token (drafter KV)", "count", False),
    "spec_draft_weights_bytes_per_gpu": ("Drafter weights per GPU", "B", False),
    "spec_draft_flops_per_step": ("Drafter FLOPs per sequence per step", "FLOPs", False),
    "serving_decode_flops": ("Decode FLOPs per request (serving)", "FLOPs", False),
    "serving_request_flops": ("FLOPs per request (serving)", "FLOPs", False),
    "spec_draft_kv_s_per_step": ("Drafter KV time per sequence per step", "s", False),
    "spec_draft_fixed_s": ("Drafter time per step (fixed)", "s", False),
    "replicas": ("Replicas", "count", False, True),
    "model_params_other": ("Other params (norms, biases)", "params", False),
    "weight_bits_effective": ("Bits per quantized weight", "bits", False),
    "embedding_bits": ("Bits per embedding weight", "bits", False),
    "weights_bytes": ("Weights (replica)", "B", False),
    "weights_bytes_per_gpu": ("Weights per GPU", "B", False),
    "reserve_bytes_per_gpu": ("Reserve per GPU", "B", False),
    "kv_budget_bytes": ("KV budget per GPU", "B", True),
    "kv_bytes_per_token": ("KV per token", "B", False),
    "tp_kv_fraction": ("KV share per TP rank", "fraction", False),
    "context_tokens": ("Final context", "tokens", False, True),
    "kv_bytes_per_sequence": ("KV per sequence", "B", False),
    "kv_bytes_per_sequence_per_gpu": ("KV per sequence per GPU", "B", False),
    "state_bytes_per_sequence": ("Fixed state per sequence", "B", False),
    "tp_state_fraction": ("State share per TP rank", "fraction", False),
    "state_bytes_per_sequence_per_gpu": ("Fixed state per sequence per GPU", "B", False),
    "memory_bytes_per_sequence_per_gpu": ("Memory per sequence per GPU", "B", False),
    "kv_in_use_bytes_per_gpu": ("KV and state in use per GPU", "B", False),
    "kv_headroom_bytes": ("KV headroom per GPU", "B", True),
    "fits": ("Fits", "bool", False),
    "shortfall_bytes": ("Shortfall per GPU", "B", False),
    "max_concurrent_sequences": ("Max concurrent sequences", "sequences", False, True),
    "token_capacity": ("KV token capacity", "tokens", False, True),
    "max_context_tokens": ("Max context at batch", "tokens", False, True),
    "weight_offload_bytes_per_gpu": ("Weights offloaded per GPU", "B", False),
    "weights_on_gpu_bytes_per_gpu": ("Weights on GPU per GPU", "B", False),
    "kv_offload_bytes_per_token": ("Host KV per token per GPU", "B", False),
    "kv_offload_tokens": ("KV tokens gained in host memory", "tokens", False, True),
    "kv_offload_sequences": ("Sequences gained in host memory", "sequences", False, True),
    "held_sequences": ("Sequences held (GPU + host)", "sequences", False, True),
    "host_weight_stream_s": ("Host-link weight stream per pass", "s", False),
    "weight_offload_bytes_per_token": ("Host-link weight bytes per token", "B", False),
    "kv_swap_in_bytes_per_gpu": ("Prompt KV swap-in per GPU", "B", False),
    "kv_swap_in_s": ("Prompt KV swap-in time", "s", False),
    "kv_swap_in_ttft_ratio": ("Swap-in / TTFT", "fraction", False),
    "matmul_params_per_token": ("Matmul weights per token", "params", False),
    "prefill_flops": ("Prefill FLOPs", "FLOPs", False),
    "mean_decode_context_tokens": ("Mean decode context", "tokens", False),
    "decode_step_flops": ("Decode step FLOPs (batch)", "FLOPs", False),
    "decode_flops": ("Decode FLOPs (request)", "FLOPs", False),
    "request_flops": ("Request FLOPs", "FLOPs", False),
    "decode_bytes_per_step": ("Bytes read per decode step", "B", False),
    "ttft_compute_s": ("TTFT compute bound", "s", False),
    "ttft_memory_s": ("TTFT memory bound", "s", False),
    "ttft_s": ("TTFT", "s", False),
    "tpot_compute_s": ("TPOT compute bound", "s", False),
    "tpot_memory_s": ("TPOT memory bound", "s", False),
    "tpot_s": ("TPOT", "s", False),
    "e2e_latency_s": ("End-to-end latency", "s", False),
    "batch_prefill_s": ("Batch prefill time", "s", False),
    "cycle_s": ("Batch cycle time", "s", False),
    "requests_per_s": ("Requests per second", "requests/s", False),
    "throughput_tokens_per_s": ("Output throughput", "tokens/s", False),
    "decode_tokens_per_s": ("Decode rate", "tokens/s", False),
    "input_tokens_per_s": ("Input throughput", "tokens/s", False),
    "meets_target_rate": ("Meets target rate", "bool", False),
    "gpus_for_target_rate": ("GPUs for target rate", "GPUs", False, True),
    "cost_usd_per_hour": ("Cost per hour", "USD/h", False),
    "cost_usd_per_month": ("Cost per month", "USD/month", False),
    "prefill_time_share": ("Prefill time share", "fraction", False),
    "cost_usd_per_million_input_tokens": ("Cost per M input tokens", "USD/Mtok", False),
    "cost_usd_per_million_output_tokens": ("Cost per M output tokens", "USD/Mtok", False),
    "tokens_per_day": ("Output tokens per day", "tokens/day", False),
    "train_matmul_params": ("N (matmul weights per token)", "params", False),
    "lora_trainable_params": ("LoRA parameters", "params", False, True),
    "trainable_params": ("Trainable parameters", "params", False, True),
    "train_attention_flops_per_token": ("Attention FLOPs per token", "FLOPs/token", False),
    "train_flops_per_token": ("Training FLOPs per token", "FLOPs/token", False),
    "train_flops": ("Training FLOPs", "FLOPs", False),
    "train_time_s": ("Training time", "s", False),
    "gpu_hours": ("GPU-hours", "GPU-h", False),
    "train_cost_usd": ("Training cost", "USD", False),
    "data_parallel": ("Data-parallel ranks", "count", False, True),
    "model_state_bytes_per_gpu": ("Model state per GPU", "B", False),
    "activation_bytes_per_gpu": ("Activations per GPU", "B", False),
    "train_memory_bytes_per_gpu": ("Training memory per GPU", "B", False),
    "train_fits": ("Training fits", "bool", False),
    "tokens_for_gpu_hours": ("Tokens for GPU-hour budget", "tokens", False),
    "tokens_for_usd": ("Tokens for USD budget", "tokens", False),
    # serving engine (planner.estimator.serving_columns)
    "rope_cache_bytes": ("Rotary table", "B", False),
    "attention_replicated_bytes_per_gpu": ("Replicated attention (DP)", "B", False),
    "engine_weights_bytes_per_gpu": ("Engine weights per GPU", "B", False),
    "profile_tokens": ("Profiling batch", "tokens", False, True),
    "profile_sequences": ("Profiling sequences", "sequences", False, True),
    "ffn_width_per_token": ("FFN width per token", "elements", False),
    "forward_activation_bytes": ("Profile forward activations", "B", False),
    "sampler_activation_bytes": ("Profile sampler activations", "B", False),
    "moe_workspace_bytes": ("Fused-MoE workspace kept (profile)", "B", False),
    "profile_hidden_bytes": ("Profile hidden states kept", "B", False),
    "activation_peak_bytes": ("Activation peak (profile)", "B", False),
    "non_torch_bytes": ("Non-torch memory", "B", False),
    "engine_kv_bytes_per_gpu": ("Engine KV pool per GPU", "B", True),
    "kv_fraction_per_gpu": ("KV share per GPU", "fraction", False),
    "kv_bytes_per_token_per_gpu": ("KV per token per GPU", "B", False),
    "engine_kv_tokens": ("Engine KV tokens", "tokens", False, True),
    "engine_state_tokens": ("Fixed state as pool tokens", "tokens", False),
    "engine_token_capacity": ("KV tokens (engine)", "tokens", False, True),
    "engine_memory_used_bytes": ("Engine memory per GPU", "B", False),
    "engine_fits": ("Engine fits", "bool", False),
    "matmul_efficiency_effective": ("Matmul efficiency", "fraction", False),
    "bandwidth_efficiency_effective": ("Bandwidth efficiency", "fraction", False),
    "load_mode": ("Load mode", "code", False),
    "replica_request_rate_per_s": ("Rate per replica", "requests/s", False),
    "micro_batch_request_rate_per_s": ("Rate per micro-batch", "requests/s", False),
    "request_tokens": ("Tokens per request", "tokens", False),
    "prefill_steps_per_request": ("Prefill steps", "count", False),
    "residence_steps": ("Steps per request", "count", False),
    "max_running_batch": ("Max running batch", "sequences", False, True),
    "serving_compute_s_per_request": ("Compute per request", "s", False),
    "serving_kv_memory_s_per_request": ("KV traffic per request", "s", False),
    "serving_dense_weights_s": ("Dense weight read", "s", False),
    "serving_expert_weights_s": ("Expert weight read", "s", False),
    "tp_link_kind": ("TP link (0 domain, 1 PCIe, 2 network)", "code", False),
    "tp_link_bytes_per_s": ("TP link bandwidth per direction", "B/s", False),
    "ep_link_bytes_per_s": ("EP link bandwidth per direction", "B/s", False),
    "tp_hop_latency_s": ("Collective step latency", "s", False),
    "moe_exchange_code": ("MoE exchange (0 in all-reduce, 1 gather/scatter, 2 all-to-all)",
                          "code", False),
    "moe_dispatch_bytes": ("MoE dispatch bytes per element", "B", False),
    "moe_comm_s_per_token": ("MoE exchange per token", "s", False),
    "moe_collective_latency_s": ("MoE exchange collective latency", "s", False),
    "collective_latency_s_per_step": ("Collective latency per step", "s", False),
    "serving_comm_s_per_token": ("Communication per token", "s", False),
    "serving_activation_s_per_token": ("Element-wise per token", "s", False),
    "serving_token_s": ("Per-token extra time", "s", False),
    "serving_step_fixed_s": ("Fixed step time", "s", False),
    "prefill_compute_s_per_token": ("Prefill compute per token", "s", False),
    "decode_compute_s_per_token": ("Decode compute per token", "s", False),
    "decode_kv_s_per_token": ("KV traffic per decode token", "s", False),
    "gemm_s_per_token": ("GEMM compute per token", "s", False),
    "lm_head_s_per_token": ("Logits compute per token", "s", False),
    "saturation_requests_per_step": ("Requests per step (saturated)", "count", False),
    "saturation_step_s": ("Step (saturated)", "s", False),
    "saturation_requests_per_s_replica": ("Saturation rate per replica", "requests/s", False),
    "saturation_requests_per_s": ("Saturation rate", "requests/s", False),
    "saturation_output_tokens_per_s": ("Offline max output", "tokens/s", False),
    "frontend_code": ("Front end", "code", False),
    "request_latency_effective_s": ("Front-end latency", "s", False),
    "request_overhead_effective_s": ("Front-end work per request", "s", False),
    "stream_overhead_effective_s_per_token": ("Front-end work per token", "s", False),
    "frontend_requests_per_s_replica": ("Front-end cap per replica", "requests/s", False),
    "serving_capacity_requests_per_s_replica": ("Capacity per replica", "requests/s", False),
    "gpu_utilization": ("Engine utilization", "fraction", False),
    "utilization": ("Utilization", "fraction", False),
    "overloaded": ("Overloaded", "bool", False),
    "serving_step_0_s": ("Step, iteration 0", "s", False),
    "serving_step_1_s": ("Step, iteration 1", "s", False),
    "serving_step_2_s": ("Step, iteration 2", "s", False),
    "serving_step_3_s": ("Step, iteration 3", "s", False),
    "serving_step_4_s": ("Step, iteration 4", "s", False),
    "serving_step_5_s": ("Step, iteration 5", "s", False),
    "serving_step_6_s": ("Step, iteration 6", "s", False),
    "closed_loop_batch": ("Closed-loop batch", "sequences", False),
    "operating_requests_per_step": ("Requests per step", "count", False),
    "micro_batch_requests_per_step": ("Requests per micro-batch step", "count", False),
    "running_batch": ("Running batch", "sequences", False),
    "step_compute_s": ("Step: compute", "s", False),
    "step_memory_s": ("Step: memory", "s", False),
    "step_communication_s": ("Step: communication", "s", False),
    "step_elementwise_s": ("Step: element-wise", "s", False),
    "step_overhead_s": ("Step: overhead", "s", False),
    "step_host_link_s": ("Step: host link", "s", False),
    "closed_loop_step_s": ("Closed-loop mean step", "s", False),
    "closed_loop_prefill_step_s": ("Closed-loop prefill step", "s", False),
    "closed_loop_decode_step_s": ("Closed-loop decode step", "s", False),
    "step_s": ("Step time", "s", False),
    "prefill_first": ("Prefill-first scheduler", "code", False),
    "cohort_ttft_steps": ("Cohort steps to first token", "count", False),
    "prefill_only_step_s": ("Prefill-only step", "s", False),
    "tpot_mean_s": ("TPOT under load", "s", False),
    "ttft_service_s": ("TTFT without queueing", "s", False),
    "queue_wait_mean_s": ("Queue wait (mean)", "s", False),
    "queue_wait_p50_s": ("Queue wait p50", "s", False),
    "queue_wait_p90_s": ("Queue wait p90", "s", False),
    "queue_wait_p99_s": ("Queue wait p99", "s", False),
    "step_alignment_s": ("Step alignment wait", "s", False),
    "wave_prefill_tokens_per_step": ("Wave prefill tokens per step", "tokens", False),
    "wave_prefill_step_s": ("Wave prefill step", "s", False),
    "wave_ttft_steps": ("Wave steps to first token", "count", False),
    "wave_ttft_mean_s": ("First-wave TTFT (mean)", "s", False),
    "ttft_mean_s": ("TTFT under load (mean)", "s", False),
    "ttft_p50_s": ("TTFT p50 under load", "s", False),
    "ttft_p90_s": ("TTFT p90 under load", "s", False),
    "ttft_p99_s": ("TTFT p99 under load", "s", False),
    "e2e_mean_s": ("End-to-end under load", "s", False),
    "serving_requests_per_s": ("Served requests", "requests/s", False),
    "output_tokens_per_s": ("Output tokens under load", "tokens/s", False),
    "engine_requests_per_s": ("Requests/s (engine)", "requests/s", False),
    # disaggregated prefill/decode (planner.estimator.disagg, issue 25)
    "prefill_workers_effective": ("Prefill workers", "count", False, True),
    "decode_workers_effective": ("Decode workers", "count", False, True),
    "prefill_gpus": ("Prefill pool GPUs", "count", False, True),
    "decode_gpus": ("Decode pool GPUs", "count", False, True),
    "deployment_gpus": ("Deployment GPUs", "count", False, True),
    "disagg_cost_usd_per_hour": ("Both pools' cost", "USD/h", False),
    "prefill_gemm_s_per_token": ("Prefill GEMM per token", "s", False),
    "prefill_token_compute_s": ("Prefill compute per token", "s", False),
    "prefill_attention_replicated_bytes_per_gpu": ("Prefill replicated attention", "B", False),
    "prefill_dense_weights_s": ("Prefill dense weight read", "s", False),
    "prefill_expert_weights_s": ("Prefill expert weight read", "s", False),
    "prefill_token_s": ("Prefill per-token extra time", "s", False),
    "prefill_step_fixed_s": ("Prefill fixed step time", "s", False),
    "prefill_step_s": ("Prefill step (full budget)", "s", False),
    "prefill_chunk_step_s": ("Prefill step (one prompt)", "s", False),
    "prefill_capacity_requests_per_s": ("Prefill pool capacity", "requests/s", False),
    "prefill_service_s": ("Prefill time per prompt", "s", False),
    "decode_matmul_efficiency_effective": ("Decode matmul efficiency", "fraction", False),
    "decode_bandwidth_efficiency_effective": ("Decode bandwidth efficiency", "fraction",
                                              False),
    "decode_gemm_s_per_token": ("Decode GEMM per token", "s", False),
    "decode_lm_head_s_per_token": ("Decode logits per token", "s", False),
    "decode_token_compute_s": ("Decode compute per token (pool)", "s", False),
    "decode_pool_kv_s_per_token": ("Decode KV traffic per token (pool)", "s", False),
    "decode_attention_replicated_bytes_per_gpu": ("Decode replicated attention", "B", False),
    "decode_dense_weights_s": ("Decode dense weight read", "s", False),
    "decode_expert_weights_s": ("Decode expert weight read", "s", False),
    "decode_token_s": ("Decode per-token extra time", "s", False),
    "decode_step_fixed_s": ("Decode fixed step time", "s", False),
    "decode_kv_bytes_per_token_per_gpu": ("Decode KV per token per GPU", "B", False),
    "decode_kv_pool_bytes_per_gpu": ("Decode KV pool per GPU", "B", True),
    "decode_token_capacity": ("Decode KV tokens per worker", "tokens", False, True),
    "prefill_kv_bytes_per_token_per_gpu": ("Prefill KV per token per GPU", "B", False),
    "prefill_kv_pool_bytes_per_gpu": ("Prefill KV pool per GPU", "B", True),
    "prefill_token_capacity": ("Prefill KV tokens per worker", "tokens", False, True),
    "pools_fit": ("Both pools fit", "bool", False),
    "decode_max_running_batch": ("Decode max running batch", "sequences", False, True),
    "decode_saturation_step_s": ("Decode step (full batch)", "s", False),
    "decode_capacity_requests_per_s": ("Decode pool capacity", "requests/s", False),
    "disagg_saturation_requests_per_s": ("Disaggregated capacity", "requests/s", False),
    "kv_transfer_link_kind": ("KV transfer link (0 domain, 2 network)", "code", False),
    "kv_transfer_bytes": ("KV moved per prompt", "B", False),
    "kv_transfer_link_bytes_per_s": ("KV transfer bandwidth", "B/s", False),
    "kv_transfer_s": ("KV transfer per prompt", "s", False),
    "decode_arrivals_steps_per_s": ("Decode tokens arriving per worker", "tokens/s", False),
    "decode_batch_0": ("Decode batch, estimate 0", "sequences", False),
    "decode_batch_1": ("Decode batch, iteration 1", "sequences", False),
    "decode_batch_2": ("Decode batch, iteration 2", "sequences", False),
    "decode_batch_3": ("Decode batch per worker", "sequences", False),
    "disagg_tpot_mean_s": ("TPOT, decode pool", "s", False),
    "disagg_cycle_s": ("Request cycle without queueing", "s", False),
    "disagg_requests_per_s": ("Served requests (disaggregated)", "requests/s", False),
    "prefill_utilization": ("Prefill pool utilization", "fraction", False),
    "decode_utilization": ("Decode pool utilization", "fraction", False),
    "disagg_overloaded": ("A pool overloaded", "bool", False),
    "prefill_queue_wait_mean_s": ("Prefill queue wait (mean)", "s", False),
    "decode_slot_wait_s": ("Decode slot wait", "s", False),
    "disagg_ttft_service_s": ("Prefill + transfer + first decode", "s", False),
    "disagg_ttft_mean_s": ("TTFT disaggregated (mean)", "s", False),
    "disagg_ttft_p50_s": ("TTFT disaggregated p50", "s", False),
    "disagg_ttft_p90_s": ("TTFT disaggregated p90", "s", False),
    "disagg_ttft_p99_s": ("TTFT disaggregated p99", "s", False),
    "prefill_wave_s": ("Prefill of a cohort of clients", "s", False),
    "disagg_wave_ttft_mean_s": ("First-wave TTFT disaggregated", "s", False),
    "ttft_slo_percentile_s": ("TTFT at the objective's percentile", "s", False),
    "saturated": ("Saturated (queue overloaded)", "bool", False),
    "meets_slo": ("Meets SLO", "bool", False),
    "slo_queue_utilization": ("Utilisation with no wait at the TTFT percentile", "fraction",
                              False),
    "slo_requests_per_step": ("Work per step the SLO allows", "count", False),
    "slo_step_s": ("Longest step the SLO allows", "s", False),
    "slo_step_requests_per_s_replica": ("Rate per replica the SLO's step allows",
                                        "requests/s", False),
    "slo_requests_per_s_replica": ("Rate per replica within SLO", "requests/s", False),
    "slo_replicas_low": ("Replicas needed, search from", "count", False, True),
    "slo_replicas_high": ("Replicas needed, search to", "count", False, True),
    **{name: entry for k in range(1, 11) for name, entry in (
        (f"slo_search_{k}_rate", (f"Replica search {k}: rate per replica", "requests/s",
                                  False)),
        (f"slo_search_{k}_step_s", (f"Replica search {k}: step", "s", False)),
        (f"slo_search_{k}_work", (f"Replica search {k}: work per step", "count", False)),
        (f"slo_search_{k}_tpot_s", (f"Replica search {k}: TPOT", "s", False)),
        (f"slo_search_{k}_ttft_s", (f"Replica search {k}: TTFT at the percentile", "s",
                                    False)),
        (f"slo_search_{k}_meets", (f"Replica search {k}: middle meets SLO", "bool", False)),
        (f"slo_search_{k}_low", (f"Replica search {k}: from", "count", False, True)),
        (f"slo_search_{k}_high", (f"Replica search {k}: to", "count", False, True)))},
    "disagg_decode_slo_batch": ("Decode batch per worker the TPOT objective allows",
                                "sequences", False),
    "disagg_decode_capacity_requests_per_s_worker": ("Capacity per decode worker",
                                                     "requests/s", False),
    "disagg_decode_slo_requests_per_s_worker": ("Rate per decode worker within SLO",
                                                "requests/s", False),
    "disagg_decode_workers_needed": ("Decode workers needed", "count", False, True),
    "disagg_sized_decode_arrivals_steps_per_s": ("Decode work arriving per needed worker",
                                                 "sequences", False),
    **{f"disagg_sized_decode_batch_{k}": (f"Decode batch at the needed count, iteration {k}",
                                          "sequences", False) for k in range(4)},
    "disagg_sized_tpot_s": ("TPOT at the needed decode count", "s", False),
    "disagg_prefill_capacity_requests_per_s_worker": ("Capacity per prefill worker",
                                                      "requests/s", False),
    "disagg_prefill_wait_room_nic_s": ("Prefill wait the TTFT objective leaves (network KV)",
                                       "s", True),
    "disagg_prefill_wait_room_domain_s": ("Prefill wait the TTFT objective leaves (NVLink KV)",
                                          "s", True),
    **{f"disagg_prefill_u_{kind}_{k}": (f"sqrt(prefill utilisation bound), {kind} KV, "
                                        f"iteration {k}", "fraction", False)
       for kind in ("nic", "domain") for k in range(1, 7)},
    "disagg_prefill_workers_nic": ("Prefill workers needed (network KV)", "count", False, True),
    "disagg_prefill_workers_domain": ("Prefill workers needed (NVLink KV)", "count", False,
                                      True),
    "disagg_kv_link_kind_needed": ("KV link of the needed deployment (0 NVLink, 2 network)",
                                   "code", False),
    "disagg_prefill_workers_needed": ("Prefill workers needed", "count", False, True),
    "disagg_prefill_slo_requests_per_s_worker": ("Rate per prefill worker within SLO",
                                                 "requests/s", False),
    "disagg_prefill_gpus_needed": ("Prefill GPUs needed", "GPUs", False, True),
    "disagg_decode_gpus_needed": ("Decode GPUs needed", "GPUs", False, True),
    "replicas_needed": ("Replicas needed", "count", False, True),
    "gpus_needed": ("GPUs needed", "GPUs", False, True),
    "cost_usd_per_month_needed": ("Cost of the needed GPUs", "USD/month", False),
}

GPU_COLUMNS: dict[str, tuple[str, str, str]] = {
    "gpu_memory_bytes": ("GPU memory", "B", "Memory of one GPU."),
    "gpu_flops_per_s": ("GPU peak", "FLOP/s",
                        "Dense tensor peak of one GPU at the scenario's compute dtype."),
    "gpu_bandwidth_bytes_per_s": ("GPU bandwidth", "B/s", "Memory bandwidth of one GPU."),
    "price_usd_per_gpu_hour": ("GPU price", "USD/GPU-h", "Price of one GPU-hour."),
    **{f"gpu_{d}_peak": (f"GPU {d} peak", "FLOP/s", f"Dense {d} tensor peak of one GPU "
                         "(0: no tensor path for it).") for d in PEAK_DTYPES},
    "gpu_usable_memory_bytes": ("GPU memory seen by the runtime", "B",
                                "Memory the runtime sees (torch total_memory)."),
    "gpu_matmul_efficiency_16bit": ("GPU 16-bit GEMM share", "fraction",
                                    "Achievable share of the 16-bit tensor peak."),
    "gpu_matmul_efficiency_8bit": ("GPU 8-bit GEMM share", "fraction",
                                   "Achievable share of the 8-bit tensor peak."),
    "gpu_bandwidth_efficiency": ("GPU bandwidth share", "fraction",
                                 "Achievable share of memory bandwidth on streaming reads."),
    "gpu_interconnect_bytes_per_s": ("GPU interconnect", "B/s",
                                     "GPU-to-GPU bandwidth of one GPU (both directions)."),
    "gpu_runtime_context_bytes": ("GPU runtime context", "B",
                                  "Memory the CUDA/ROCm context takes before any tensor."),
    "gpu_nvlink_domain_gpus": ("GPU scale-up domain", "GPUs",
                               "GPUs one NVLink/Infinity Fabric domain joins at the listed "
                               "interconnect (1: PCIe only; 0: unknown)."),
    "gpu_mesh_links_per_gpu": ("GPU mesh links", "count",
                               "Point-to-point scale-up links the interconnect is split over "
                               "(0: a switched fabric)."),
    "gpu_pcie_gen": ("GPU PCIe generation", "code", "PCIe generation of the x16 host link "
                     "(0: unknown)."),
    "gpu_nic_gbit_per_s": ("GPU scale-out NIC", "Gb/s", "Scale-out network per GPU, one "
                           "direction (0: none assumed)."),
}
"""Columns that come from the scenario's GPU (``gpu_flops_per_s`` is derived from the peaks
and the weight dtype, :func:`planner.estimator.derived.gpu_flops_per_s`)."""

DECODE_GPU_COLUMNS: dict[str, tuple[str, str, str]] = {
    **{("decode_gpu_price_usd_per_gpu_hour" if key == "price_usd_per_gpu_hour"
        else f"decode_{key}"): (f"Decode {label}", unit, f"The decode pool's GPU: {text}")
       for key, (label, unit, text) in GPU_COLUMNS.items() if key != "gpu_flops_per_s"},
    "decode_gpu_same": ("Decode GPU is the scenario's (1/0)", "code",
                        "1 when the decode pool runs on the scenario's own GPU type."),
}
"""Columns that come from the decode pool's GPU (``decode_gpu``; issue 25)."""
GPU_COLUMNS.update(DECODE_GPU_COLUMNS)

DERIVED_META: dict[str, tuple[str, str]] = {
    "weight_bits": ("Weight bits", "bits"),
    "kv_bits": ("KV bits", "bits"),
    "state_recurrent_bits": ("State bits", "bits"),
    "spec_method_code": ("Speculation method", "code"),
    "reserve_bytes": ("Reserve", "B"),
    "quant_group_size_effective": ("Quant group (effective)", "count"),
    "quant_scale_bits_effective": ("Scale bits (effective)", "bits"),
    "weight_auto_number": ("Checkpoint weights (1/0)", "code"),
    "matmul_path_code": ("Matmul path", "code"),
    "keep_embeddings_16bit_number": ("16-bit embeddings (1/0)", "code"),
    "activation_recompute_number": ("Recompute (1/0)", "code"),
    "include_attention_flops_number": ("Attention FLOPs (1/0)", "code"),
    "attention_convention_code": ("Attention FLOPs convention", "code"),
    "logits_convention_code": ("Prefill logits convention", "code"),
    "gpu_flops_per_s": GPU_COLUMNS["gpu_flops_per_s"][:2],
    "model_lora_dims": ("LoRA dims", "count"),
    "engine_code": ("Engine code", "code"),
    "chunked_prefill_number": ("Chunked prefill (1/0)", "code"),
    "vllm_v0_accounting_number": ("vLLM V0 memory (1/0)", "code"),
    "attention_dp_number": ("Attention DP (1/0)", "code"),
    "vllm_large_part": ("vLLM large-part defaults (1/0)", "code"),
    "max_num_seqs_effective": ("Max seqs (effective)", "sequences"),
    "max_num_batched_tokens_effective": ("Step tokens (effective)", "tokens"),
    "block_size_effective": ("Block (effective)", "tokens"),
    "max_model_len_effective": ("Max model len (effective)", "tokens"),
    "gpu_compute_bits": ("Compute dtype bits", "bits"),
    "gpu_matmul_efficiency": ("GPU matmul efficiency", "fraction"),
    "slo_percentile_number": ("TTFT objective percentile", "count"),
    "kv_offload_bytes_per_gpu": ("Host KV store per GPU", "B"),
    "host_link_bytes_per_s": ("Host link (one direction)", "B/s"),
    "serving_mode_code": ("Serving mode (0 aggregated, 1 disaggregated)", "code"),
    "prefill_tp_effective": ("Prefill TP (effective)", "count"),
    "decode_tp_effective": ("Decode TP (effective)", "count"),
    "prefill_ep_effective": ("Prefill EP (effective)", "GPUs"),
    "decode_ep_effective": ("Decode EP (effective)", "GPUs"),
    "prefill_attention_dp_number": ("Prefill attention DP (1/0)", "code"),
    "decode_attention_dp_number": ("Decode attention DP (1/0)", "code"),
    "decode_gpu_flops_per_s": ("Decode GPU peak", "FLOP/s"),
    "decode_gpu_matmul_efficiency": ("Decode GPU matmul efficiency", "fraction"),
}
"""Label and unit of every derived input column (their formulas are in
:mod:`planner.estimator.derived`; ``model_lora_dims`` is looked up per model and targets)."""

_FIGURE_UNITS = {"params": "params", "elems": "elements", "flops_per_pair": "FLOPs/pair",
                 "tokens": "tokens"}


@cache
def figure_columns() -> dict[str, tuple[str, str, str]]:
    """Columns that come from the scenario's model: name → (label, unit, description)."""
    out = {}
    for name, field in ModelFigures.__dataclass_fields__.items():
        unit = next((u for k, u in _FIGURE_UNITS.items() if k in name), "count")
        doc = _field_doc(name)
        out[name] = (name.removeprefix("model_").replace("_", " ").capitalize(), unit,
                     doc or f"Model figure {name}.")
        del field
    return out


def _field_doc(name: str) -> str:
    """The attribute docstring of a ModelFigures field, read from the source."""
    source = inspect.getsource(ModelFigures)
    marker = f"    {name}: int\n"
    at = source.find(marker)
    if at < 0:
        return ""
    rest = source[at + len(marker):].lstrip()
    if rest.startswith('"""'):
        return " ".join(rest[3:rest.index('"""', 3)].split())
    return ""


def _description(formula: Callable[..., Any]) -> str:
    doc = inspect.getdoc(formula) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return first


@cache
def output_columns() -> dict[str, OutputColumn]:
    """Every output column, inference and training, by name (formula order)."""
    formulas = {f.__name__: f for f in scenario.INFERENCE}
    for f in scenario.TRAINING:  # a name both kinds compute: the inference formula (issue 25's
        formulas.setdefault(f.__name__, f)  # cost_usd_per_hour adds both pools' cost)
    missing = sorted(set(formulas) - set(META))
    if missing:
        raise RuntimeError(f"output columns without metadata: {missing}")
    return {name: OutputColumn(name, META[name][0], META[name][1], _description(f), f,
                               *META[name][2:]) for name, f in formulas.items()}


def column_label(name: str) -> tuple[str, str]:
    """(label, unit) of any column: output, input, model figure or GPU figure."""
    outputs = output_columns()
    if name in outputs:
        return outputs[name].label, outputs[name].unit
    if name in GPU_COLUMNS:
        return GPU_COLUMNS[name][:2]
    if name in figure_columns():
        return figure_columns()[name][:2]
    if name in DERIVED_META:
        return DERIVED_META[name]
    column = input_columns().get(name)
    if column is not None:
        return column.label, column.unit
    return name, ""


def format_value(name: str, value: Any) -> str:
    """``value`` of column ``name`` with its unit."""
    _, unit = column_label(name)
    formatter = FORMATS.get(unit)
    if formatter is None or isinstance(value, str):
        return f"{value} {unit}".strip()
    return formatter(value)
