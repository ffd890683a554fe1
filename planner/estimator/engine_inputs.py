"""Input columns the serving-engine formulas read, as data for the sheet's input registry.

Each :class:`EngineInput` gives name, unit, kind, default, bounds and help, plus
``engine_defaults``: the default per engine where the engines differ (keys of
:data:`planner.estimator.engine_memory.ENGINES`). The integrator registers them beside
``planner.sheet.inputs.INFERENCE_INPUTS`` and maps ``engine`` (a choice) to ``engine_code``
with :data:`~planner.estimator.engine_memory.ENGINES`; ``0`` in an ``*_efficiency`` input means
"take the GPU catalog's figure" (resolution order of DESIGN.md: scenario, calibration, catalog,
engine default).

The GPU columns the formulas read (``gpu_usable_memory_bytes``, ``gpu_matmul_efficiency``,
``gpu_bandwidth_efficiency``, ``gpu_interconnect_bytes_per_s``, ``gpu_runtime_context_bytes``)
come from :func:`planner.estimator.gpu.serving_gpu_columns`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from planner.estimator.engine_memory import ENGINES

Kind = Literal["int", "float", "choice", "bool"]


@dataclass(frozen=True, slots=True)
class EngineInput:
    """One input column of the serving model."""

    name: str
    unit: str
    kind: Kind
    default: Any
    minimum: float | None
    maximum: float | None
    help: str
    engine_defaults: dict[str, Any] = field(default_factory=dict)
    choices: tuple[str, ...] = ()


ENGINE_INPUTS: tuple[EngineInput, ...] = (
    EngineInput("engine", "engine", "choice", "roofline", None, None,
                "Serving engine whose memory accounting and scheduling are modelled; "
                "roofline = today's fixed-reserve model. Column engine_code = ENGINES[engine].",
                choices=tuple(ENGINES)),
    EngineInput("gpu_memory_utilization", "fraction", "float", 0.9, 0.01, 1.0,
                "vLLM --gpu-memory-utilization: share of the usable GPU memory vLLM may use "
                "(weights, activations and KV pool; vllm/config/cache.py default 0.9)."),
    EngineInput("mem_fraction_static", "fraction", "float", 0.88, 0.01, 1.0,
                "SGLang --mem-fraction-static: share of GPU memory for weights and the KV pool "
                "(server_args.py sets ~0.88 for 80 GB parts at TP 1, lower for small GPUs)."),
    EngineInput("free_gpu_memory_fraction", "fraction", "float", 0.9, 0.01, 1.0,
                "TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction: share of the memory free "
                "after weights and warm-up that becomes KV cache (default 0.9)."),
    EngineInput("max_num_batched_tokens", "tokens", "int", 8192, 1, 10_000_000,
                "Token budget of one engine step (prefill chunks + one token per decode). vLLM "
                "0.19 defaults: 8192 on H100-class parts, 2048 on A100 and smaller "
                "(engine/arg_utils.py, OpenAI server); SGLang chunked_prefill_size 8192; "
                "TRT-LLM max_num_tokens 8192.",
                engine_defaults={"vllm": 8192, "sglang": 8192, "trtllm": 8192}),
    EngineInput("max_num_seqs", "sequences", "int", 256, 1, 1_000_000,
                "Most sequences running at once. vLLM: 1024 on H100-class parts, 256 on A100 "
                "and smaller; SGLang max_running_requests (derived, ~1024 on 80 GB parts); "
                "TRT-LLM max_batch_size 2048.",
                engine_defaults={"vllm": 256, "sglang": 1024, "trtllm": 2048,
                                 "roofline": 256}),
    EngineInput("block_size", "tokens", "int", 16, 1, 4096,
                "KV-cache block (page) size: vLLM 16, SGLang page_size 1, TRT-LLM "
                "tokens_per_block 32.",
                engine_defaults={"vllm": 16, "sglang": 1, "trtllm": 32, "roofline": 1}),
    EngineInput("max_model_len", "tokens", "int", 8192, 1, 10_000_000,
                "Longest sequence the engine accepts (sizes vLLM V0's profiling batch without "
                "chunked prefill)."),
    EngineInput("chunked_prefill", "bool", "bool", True, None, None,
                "Chunked prefill on (vLLM V1, SGLang, TRT-LLM): prompts are split into "
                "max_num_batched_tokens chunks mixed with decodes."),
    EngineInput("vllm_v0_accounting", "bool", "bool", False, None, None,
                "Use vLLM V0's (<= 0.6) memory accounting: non-torch memory includes the CUDA "
                "context (vllm/worker/worker.py determine_num_available_blocks)."),
    EngineInput("non_torch_gib", "GiB", "float", 0.25, 0.0, 100.0,
                "vLLM V1: memory the profile run adds outside torch at TP 1 (cuBLAS "
                "workspaces; 0.24-0.25 GiB in vLLM 0.19 logs on H100)."),
    EngineInput("comm_buffer_gib", "GiB", "float", 1.82, 0.0, 100.0,
                "Communication buffers per GPU when TP > 1 (NCCL + vLLM custom all-reduce): "
                "vLLM 0.19 logs 2.07 GiB non-torch at TP 2 vs 0.25 at TP 1."),
    EngineInput("cuda_graph_gib", "GiB", "float", 0.9, 0.0, 100.0,
                "CUDA-graph memory per GPU (counts toward fitting, not toward the KV pool; "
                "vLLM 0.19 logs 0.76-0.93 GiB on H100)."),
    EngineInput("sampler_bytes_per_logit", "B", "float", 12.0, 0.0, 1000.0,
                "Sampler memory per (sequence, vocabulary entry) in the profile run: fp32 "
                "logits (4) + int64 indices of the top-k/top-p sort (8). vLLM 0.19 logs imply "
                "~15, vLLM 0.10 <= ~8."),
    EngineInput("activation_bytes", "B", "float", 2.0, 0.5, 8.0,
                "Bytes per activation element (bf16/fp16: 2)."),
    EngineInput("matmul_efficiency", "fraction", "float", 0.0, 0.0, 1.0,
                "Achievable share of the dense tensor peak; 0 = the GPU catalog's figure."),
    EngineInput("bandwidth_efficiency", "fraction", "float", 0.0, 0.0, 1.0,
                "Achievable share of memory bandwidth; 0 = the GPU catalog's figure."),
    EngineInput("engine_step_overhead_s", "s", "float", 0.0008, 0.0, 10.0,
                "Fixed time per engine step outside the GPU kernels (scheduling, input "
                "preparation, sampling, detokenize hand-off); ~0.5-1 ms in vLLM V1 and SGLang "
                "step profiles."),
    EngineInput("kernel_overhead_s_per_layer", "s", "float", 0.00004, 0.0, 1.0,
                "Launch and tail time per decoder layer per step (~10 kernels x ~4 us with "
                "CUDA graphs): what keeps small-batch decode below streaming bandwidth."),
    EngineInput("request_latency_s", "s", "float", 0.04, 0.0, 100.0,
                "Front-end latency one request adds to its TTFT: HTTP, chat template, "
                "tokenization, the hand-offs between API server, engine and detokenizer "
                "processes, the first streamed chunk. GPUStack's vllm bench serve runs on H100 at "
                "concurrency 1-8 show 20-65 ms of TTFT above the prefill (vLLM 0.11 ~50, "
                "SGLang 0.5 ~20, trtllm-serve 1.2 ~45)."),
    EngineInput("request_overhead_s", "s", "float", 0.02, 0.0, 100.0,
                "Front-end work per request that runs serialized in the API server process "
                "(parse, template, tokenize, respond): with stream_overhead_s_per_token it caps "
                "HTTP serving at 1/(request_overhead_s + G*stream_overhead_s_per_token) "
                "requests/s per replica (vLLM's OpenAI server tops out near 45 requests/s on "
                "4-token requests in GPUStack's burst runs)."),
    EngineInput("stream_overhead_s_per_token", "s", "float", 0.0002, 0.0, 1.0,
                "Front-end time per streamed output token (detokenize, one server-sent "
                "event), serialized with request_overhead_s in the API server process; caps "
                "HTTP serving at 1/(request_overhead_s + G*this) requests/s per replica."),
    EngineInput("collective_latency_s", "s", "float", 0.00001, 0.0, 1.0,
                "Latency of one all-reduce or all-to-all over NVLink at small sizes (~10 us, "
                "nccl-tests / vLLM custom all-reduce)."),
    EngineInput("collective_efficiency", "fraction", "float", 0.7, 0.01, 1.0,
                "Achievable share of the per-direction link bandwidth (interconnect / 2) in a "
                "ring all-reduce (nccl-tests bus bandwidth ~300-350 of 450 GB/s on H100 "
                "NVLink)."),
    EngineInput("ep", "GPUs", "int", 1, 1, 1024,
                "Expert-parallel group size (MoE): experts spread over ep GPUs, tokens move "
                "by all-to-all."),
    EngineInput("attention_dp", "bool", "bool", False, None, None,
                "Data-parallel attention for MoE (TRT-LLM enable_attention_dp, SGLang "
                "--enable-dp-attention): each GPU attends for its own requests, no TP "
                "all-reduce, no replicated KV heads, attention weights replicated on every GPU; "
                "experts stay expert-parallel."),
    EngineInput("concurrency", "requests", "int", 0, 0, 100_000_000,
                "Closed-loop clients (vllm bench serve --max-concurrency), whole deployment; "
                "0 = open loop at target_requests_per_s (or offline maximum when that is 0)."),
    EngineInput("service_scv", "ratio", "float", 1.0, 0.0, 100.0,
                "Squared coefficient of variation of request service time (1 = exponential, "
                "0 = fixed lengths), for the Allen-Cunneen queueing correction."),
)
"""Serving-model inputs in registry order."""


def input_defaults(engine: str = "roofline") -> dict[str, Any]:
    """Numeric default of every serving input for ``engine`` (``engine`` itself becomes
    ``engine_code``; bools become 0/1)."""
    out: dict[str, Any] = {}
    for col in ENGINE_INPUTS:
        if col.name == "engine":
            out["engine_code"] = ENGINES[engine]
            continue
        value = col.engine_defaults.get(engine, col.default)
        out[col.name] = float(value) if isinstance(value, bool) else value
    return out


def vllm_default_limits(gpu_memory_gib: float, gpu_label: str) -> dict[str, int]:
    """vLLM's defaults for the OpenAI server (``engine/arg_utils.py``,
    ``_set_default_args``): ``max_num_batched_tokens`` 8192 and ``max_num_seqs`` 1024 on parts
    with >= 70 GiB that are not A100, else 2048 and 256."""
    big = gpu_memory_gib >= 70 and "a100" not in gpu_label.lower()
    return ({"max_num_batched_tokens": 8192, "max_num_seqs": 1024} if big
            else {"max_num_batched_tokens": 2048, "max_num_seqs": 256})
