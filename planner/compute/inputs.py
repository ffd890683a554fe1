"""Scenario input columns: type, unit, bounds, default and help, and their validation.

Every input a user can set (from the CLI, the UI or a workbook) is defined here once. Parsing
and checking them is :mod:`planner.compute.validation`'s (:meth:`InputColumn.parse` is its
:func:`~planner.compute.validation.parse_value`): :class:`ValidationError` naming the column and
the allowed range. The numeric columns the formulas read (bits, codes, bytes) are derived from
these by formulas like any other (:mod:`planner.formulas.derived`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from planner.compute.validation import allowed, parse_value
from planner.core.errors import ValidationError, not_one_of
from planner.core.units import WEIGHT_DTYPE_CHOICES
from planner.formulas.derived import KV_DTYPE_CHOICES, QUANT_MODES
from planner.formulas.disagg_load import DISAGG_HANDOVER_S
from planner.formulas.engine_memory import ENGINES
from planner.formulas.flops import ATTENTION_CONVENTIONS, LOGITS_CONVENTIONS
from planner.formulas.serving_step import EAGER_KERNEL_HOST_S, PREFILL_LAUNCHES
from planner.formulas.slo import SLO_PERCENTILES
from planner.formulas.speculative import SPEC_METHODS

Kind = Literal["int", "float", "choice", "bool", "text"]


@dataclass(frozen=True, slots=True)
class InputColumn:
    """One input column. ``minimum``/``maximum`` are inclusive unless ``above_minimum``."""

    name: str
    label: str
    unit: str
    kind: Kind
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    above_minimum: bool = False
    choices: tuple[str, ...] = ()

    @property
    def measured_unit(self) -> str:
        """The unit the value is measured in, for headers and editors; empty for flags, dtypes
        and conventions, whose ``unit`` only names their kind."""
        return "" if self.unit in ("bool", "dtype", "convention", "engine", "percentile") \
            else self.unit

    def allowed(self) -> str:
        """The allowed values in words, for error messages and help text
        (:func:`planner.compute.validation.allowed`)."""
        return allowed(self)

    def parse(self, raw: Any) -> Any:
        """The validated value of ``raw`` (a string or a number); :class:`ValidationError` naming
        this column and :meth:`allowed` otherwise (:func:`planner.compute.validation.parse_value`,
        the one rule every entry point parses inputs by)."""
        return parse_value(self, raw)


LORA_TARGETS = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}(?: *, *[A-Za-z_][A-Za-z0-9_]{0,63})*")
"""``lora_targets``: module names (letters, digits, ``_``; up to 64 each) separated by commas,
such as ``q,v`` or ``q, k, v, o`` or ``all``. Which names a model has is checked against its
modules where the scenario is evaluated (:func:`planner.spec.params.lora_dims`)."""

LORA_TARGETS_MAX_CHARS = 200
LORA_TARGETS_ALLOWED = ("module names separated by commas, such as q,v or q,k,v,o or all "
                        f"(letters, digits and _; at most {LORA_TARGETS_MAX_CHARS} characters)")
"""``lora_targets``' rule in words, for messages."""


def _col(name: str, label: str, unit: str, kind: Kind, default: Any, help: str,
         **bounds: Any) -> InputColumn:
    return InputColumn(name, label, unit, kind, default, help, **bounds)


MAX_TOKENS = 100_000_000

DEPLOYMENT_INPUTS: tuple[InputColumn, ...] = (
    _col("gpus", "GPUs", "count", "int", 1, "GPUs in the deployment (a multiple of tp*pp).",
         minimum=1, maximum=1_000_000),
    _col("tp", "TP", "count", "int", 1, "Tensor-parallel degree: GPUs sharing each layer.",
         minimum=1, maximum=1024),
    _col("pp", "PP", "count", "int", 1, "Pipeline-parallel degree: stages the layers split into.",
         minimum=1, maximum=1024),
    _col("weight_dtype", "Weights", "dtype", "choice", "auto",
         "Weight storage dtype: auto = the checkpoint's own quantization_config (GPTQ, AWQ, "
         "FP8, compressed-tensors, MXFP4, NVFP4, bitsandbytes; 16 bit when it has none), or "
         "one dtype for every matmul weight (int4 with per-group scales; mxfp4 4.25 and "
         "nvfp4 4.5 bits per weight with their scales).", choices=WEIGHT_DTYPE_CHOICES),
    _col("quant_group_size", "Quant group", "weights", "int", -1,
         "Weights per quantization scale; 0 = no per-group scales; -1 = dtype default "
         "(128 for int4, none otherwise).", minimum=-1, maximum=1_000_000),
    _col("quant_scale_bits", "Scale bits", "bits", "int", 16,
         "Bits per quantization scale (and zero point, if any).", minimum=0, maximum=64),
    _col("keep_embeddings_16bit", "16-bit embeddings", "bool", "bool", True,
         "Keep the embedding and LM head in 16 bit when weights are quantized."),
    _col("quant_mode", "Quant mode", "convention", "choice", "auto",
         "Which matmul throughput applies: weight_only (16-bit matmuls on dequantized "
         "weights), weight_activation (W8A8 / W4A4 on the weights' low-bit tensor path where "
         "the GPU has it), auto (fp8/int8 W8A8, NVFP4 W4A4 as vLLM and TensorRT-LLM serve it "
         "where the GPU has FP4 tensor cores, int4/MXFP4 weight-only; a checkpoint's own "
         "scheme for weight_dtype auto).", choices=tuple(QUANT_MODES)),
    _col("reserve_gib", "Reserve", "GiB", "float", 0.0,
         "Fixed memory per GPU held back for activations, workspace and the runtime.",
         minimum=0, maximum=100_000),
    _col("reserve_fraction", "Reserve share", "fraction", "float", 0.10,
         "Share of GPU memory held back (added to reserve_gib).", minimum=0, maximum=0.99),
    _col("mfu", "MFU", "fraction", "float", 0.5,
         "Model FLOPs utilization: achieved share of peak tensor throughput.",
         minimum=0, maximum=1, above_minimum=True),
)

INFERENCE_INPUTS: tuple[InputColumn, ...] = (
    *DEPLOYMENT_INPUTS,
    _col("batch", "Batch", "sequences", "int", 1,
         "Concurrent sequences per replica (the running batch).", minimum=1, maximum=10_000_000),
    _col("prompt_tokens", "Prompt", "tokens", "int", 1024, "Prompt length S.",
         minimum=1, maximum=MAX_TOKENS),
    _col("output_tokens", "Output", "tokens", "int", 128, "Generated tokens G per request.",
         minimum=1, maximum=MAX_TOKENS),
    _col("kv_dtype", "KV", "dtype", "choice", "auto",
         "KV-cache element dtype. auto = the engine's launch default for this checkpoint on "
         "this GPU (--kv-cache-dtype auto): the model dtype (16 bit), except fp8 where the "
         "engine picks it: SGLang for DeepSeek-V3.2 / GLM-5 on compute capability 10 and above "
         "(B200, B300, GB200, GB300, RTX PRO 6000; server_args.py "
         "_set_default_nsa_kv_cache_dtype) and for DeepSeek-V4; vLLM for DeepSeek-V4; vLLM, "
         "SGLang and TRT-LLM for a checkpoint whose quantization_config declares an FP8 KV "
         "cache (ModelOpt kv_cache_scheme / kv_cache_quant_algo). vLLM's auto for "
         "DeepSeek-V3.2 / GLM-5 is bf16 (vLLM PR 27121). bf16, fp16, fp8, int8 mean that "
         "dtype, except vLLM with DeepSeek-V4, whose kernels run fp8 (fp8_ds_mla) whatever "
         "is chosen.",
         choices=KV_DTYPE_CHOICES),
    _col("state_dtype", "State", "dtype", "choice", "auto",
         "Dtype of the recurrent state of Mamba-2 / Gated DeltaNet layers (engines keep it at "
         "16 or 32 bit): auto = the engine's default (vLLM: the config's mamba_ssm_cache_dtype"
         " for Nemotron-H, the model dtype for Gated DeltaNet; otherwise the config's dtype).",
         choices=("auto", "bf16", "fp16", "fp32")),
    _col("mbu", "MBU", "fraction", "float", 0.8,
         "Memory bandwidth utilization: achieved share of peak bandwidth.",
         minimum=0, maximum=1, above_minimum=True),
    _col("target_requests_per_s", "Target rate", "requests/s", "float", 0.0,
         "Request rate the deployment must sustain; 0 = no target.", minimum=0, maximum=1e9),
    _col("hours_per_month", "Hours/month", "h", "float", 730.0,
         "Billed hours per month (730 = 8760/12).", minimum=0, maximum=744, above_minimum=True),
    _col("attention_convention", "Attention FLOPs", "convention", "choice", "causal",
         "Prefill attention FLOPs: causal pairs S(S+1)/2 or the full S x S square.",
         choices=tuple(ATTENTION_CONVENTIONS)),
    _col("logits_convention", "Prefill logits", "convention", "choice", "last",
         "Prefill logits positions: last only (inference), all (training) or none.",
         choices=tuple(LOGITS_CONVENTIONS)),
)

SERVING_INPUTS: tuple[InputColumn, ...] = (
    _col('engine', 'Engine', 'engine', 'choice', 'roofline',
         'Serving engine whose memory accounting and scheduling are modelled; roofline = the '
         'fixed-reserve, idle-server bounds.',
         choices=tuple(ENGINES)),
    _col('gpu_memory_utilization', 'GPU mem util', 'fraction', 'float', 0.9,
         'vLLM --gpu-memory-utilization: share of the usable GPU memory vLLM may use (weights,'
         ' activations and KV pool; vllm/config/cache.py default 0.9).',
         minimum=0.01, maximum=1.0),
    _col('mem_fraction_static', 'Mem frac static', 'fraction', 'float', 0.88,
         'SGLang --mem-fraction-static: share of GPU memory for weights and the KV pool '
         '(server_args.py sets ~0.88 for 80 GB parts at TP 1, lower for small GPUs).',
         minimum=0.01, maximum=1.0),
    _col('free_gpu_memory_fraction', 'Free mem frac', 'fraction', 'float', 0.9,
         'TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction: share of the memory free after '
         'weights and warm-up that becomes KV cache (default 0.9).',
         minimum=0.01, maximum=1.0),
    _col('max_num_batched_tokens', 'Step tokens', 'tokens', 'int', 0,
         "0 = the engine's default (vLLM 8192 on large parts, 2048 otherwise; SGLang by GPU "
         'memory: 2048 below 35 GiB, 4096 below 60 GiB, 8192 below 160 GiB, else 16384; '
         'TRT-LLM 8192). Token budget of one engine step (prefill chunks + one token per '
         'decode).',
         minimum=0, maximum=10000000),
    _col('max_num_seqs', 'Max seqs', 'sequences', 'int', 0,
         "0 = the engine's default (vLLM 1024 on large parts, 256 otherwise; SGLang 1024; TRT-"
         'LLM 2048). Most sequences running at once.',
         minimum=0, maximum=1000000),
    _col('block_size', 'Block', 'tokens', 'int', 0,
         "0 = the engine's default (vLLM 16, SGLang 1, TRT-LLM 32). KV-cache block (page) "
         'size: vLLM 16, SGLang page_size 1, TRT-LLM tokens_per_block 32.',
         minimum=0, maximum=4096),
    _col('max_model_len', 'Max model len', 'tokens', 'int', 0,
         "0 = the model's context length (the engines' default). Longest sequence the engine "
         "accepts (sizes vLLM V0's profiling batch without chunked prefill).",
         minimum=0, maximum=10000000),
    _col('chunked_prefill', 'Chunked prefill', 'bool', 'bool', True,
         'Chunked prefill on (vLLM V1, SGLang, TRT-LLM): prompts are split into '
         'max_num_batched_tokens chunks mixed with decodes.'),
    _col('vllm_v0_accounting', 'vLLM V0 memory', 'bool', 'bool', False,
         "Use vLLM V0's (<= 0.6) memory accounting: non-torch memory includes the CUDA context"
         ' (vllm/worker/worker.py determine_num_available_blocks).'),
    _col('non_torch_gib', 'Non-torch', 'GiB', 'float', 0.25,
         'vLLM V1: memory the profile run adds outside torch at TP 1 (cuBLAS workspaces; '
         '0.24-0.25 GiB in vLLM 0.19 logs on H100).',
         minimum=0.0, maximum=100.0),
    _col('comm_buffer_gib', 'Comm buffers', 'GiB', 'float', 1.82,
         'Communication buffers per GPU when TP > 1 (NCCL + vLLM custom all-reduce): vLLM 0.19'
         ' logs 2.07 GiB non-torch at TP 2 vs 0.25 at TP 1.',
         minimum=0.0, maximum=100.0),
    _col('cuda_graph_gib', 'CUDA graphs', 'GiB', 'float', 0.9,
         'CUDA-graph memory per GPU (counts toward fitting, not toward the KV pool; vLLM 0.19 '
         'logs 0.76-0.93 GiB on H100).',
         minimum=0.0, maximum=100.0),
    _col('sampler_bytes_per_logit', 'Sampler B/logit', 'B', 'float', 12.0,
         'Sampler memory per (sequence, vocabulary entry) in the profile run: fp32 logits (4) '
         '+ int64 indices of the top-k/top-p sort (8). vLLM 0.19 logs imply ~15, vLLM 0.10 <= '
         '~8.',
         minimum=0.0, maximum=1000.0),
    _col('activation_bytes', 'Activation B', 'B', 'float', 2.0,
         'Bytes per activation element (bf16/fp16: 2).',
         minimum=0.5, maximum=8.0),
    _col('matmul_efficiency', 'Matmul eff', 'fraction', 'float', 0.0,
         "Achievable share of the dense tensor peak; 0 = the GPU catalog's figure.",
         minimum=0.0, maximum=1.0),
    _col('bandwidth_efficiency', 'Bandwidth eff', 'fraction', 'float', 0.0,
         "Achievable share of memory bandwidth; 0 = the GPU catalog's figure.",
         minimum=0.0, maximum=1.0),
    _col('engine_step_overhead_s', 'Step overhead', 's', 'float', 0.0008,
         'Fixed time per engine step outside the GPU kernels (scheduling, input preparation, '
         'sampling, detokenize hand-off); ~0.5-1 ms in vLLM V1 and SGLang step profiles.',
         minimum=0.0, maximum=10.0),
    _col('kernel_overhead_s_per_layer', 'Kernel overhead', 's', 'float', 4e-05,
         'Launch and tail time per decoder layer per step (~10 kernels x ~4 us with CUDA '
         'graphs): what keeps small-batch decode below streaming bandwidth.',
         minimum=0.0, maximum=1.0),
    _col('prefill_launch', 'Prefill launch', 'convention', 'choice', 'auto',
         "How the engine launches a prefill step's kernels: auto = the engine's default "
         "(SGLang 0.5.8-0.5.9 and TensorRT-LLM's PyTorch backend eager, vLLM V1 compiled with "
         'piecewise CUDA graphs, roofline graphs); graphs = CUDA graphs or a compiled engine '
         '(SGLang --enable-piecewise-cuda-graph, TensorRT-LLM < 1.0 TensorRT engines); eager '
         "= op by op from Python: a step with prompt chunks takes at least the host's launch "
         'time.', choices=tuple(PREFILL_LAUNCHES)),
    _col('eager_kernel_host_s', 'Eager launch', 's', 'float', EAGER_KERNEL_HOST_S,
         "Host time to launch one kernel of an eager step: 65.6 us from SGLang's DeepSeek-V3 "
         '1-token prefill (sglang PR 12160: 82.6 ms eager, 61 layers of ~20.7 kernels).',
         minimum=0.0, maximum=0.01),
    _col('request_latency_s', 'Request latency', 's', 'float', 0.0,
         'Front-end latency one request adds to its TTFT: HTTP, chat template, tokenization, '
         'the hand-offs between API server, engine and detokenizer processes, the first '
         "streamed chunk; 0 = the front end's figure (vLLM 0.04, SGLang 0.02, trtllm-serve "
         "0.045 from GPUStack's vllm bench serve runs on H100 at concurrency 1-8).",
         minimum=0.0, maximum=100.0),
    _col('request_overhead_s', 'Request work', 's', 'float', 0.0,
         'Front-end work per request in its serialized stage (parse, template, tokenize, '
         "respond); 0 = the front end's figure (vLLM's OpenAI server 0.02: it tops out near 45 "
         "requests/s on 4-token requests in GPUStack's burst runs). With "
         'stream_overhead_s_per_token it caps HTTP serving per replica.',
         minimum=0.0, maximum=100.0),
    _col('stream_overhead_s_per_token', 'Stream work', 's', 'float', 0.0,
         'Front-end time per streamed output token (detokenize, one server-sent event); '
         "0 = the front end's figure (0.0002 for the Python servers). Serialized with "
         "request_overhead_s in one process (vLLM, trtllm-serve) or beside it (SGLang, Triton).",
         minimum=0.0, maximum=1.0),
    _col('collective_latency_s', 'Collective latency', 's', 'float', 1e-05,
         'Latency of one all-reduce or all-to-all over NVLink at small sizes (~10 us, nccl-'
         'tests / vLLM custom all-reduce).',
         minimum=0.0, maximum=1.0),
    _col('collective_efficiency', 'Collective eff', 'fraction', 'float', 0.7,
         'Achievable share of the per-direction link bandwidth (interconnect / 2) in a ring '
         'all-reduce (nccl-tests bus bandwidth ~300-350 of 450 GB/s on H100 NVLink).',
         minimum=0.01, maximum=1.0),
    _col('ep', 'EP', 'GPUs', 'int', 1,
         'Expert-parallel group size (MoE): experts spread over ep GPUs. With tensor-parallel '
         "attention every GPU holds every token and the layer's all-reduce sums the experts' "
         'outputs; with attention_dp the tokens are gathered and reduce-scattered around the '
         "experts, or sent by all-to-all on TRT-LLM's NVL72 path (ep > top-k).",
         minimum=1, maximum=1024),
    _col('attention_dp', 'Attention DP', 'bool', 'bool', False,
         'Data-parallel attention for MoE (TRT-LLM enable_attention_dp, SGLang --enable-dp-'
         'attention): each GPU attends for its own requests, no TP all-reduce, no replicated '
         'KV heads, attention weights replicated on every GPU; each MoE layer gathers the '
         "step's tokens and reduce-scatters its outputs (or dispatches and combines by "
         'all-to-all) over the link the group spans.'),
    _col('concurrency', 'Concurrency', 'requests', 'int', 0,
         'Closed-loop clients (vllm bench serve --max-concurrency), whole deployment; 0 = open'
         ' loop at target_requests_per_s (or offline maximum when that is 0).',
         minimum=0, maximum=100000000),
    _col('output_tokens_cv', 'Output CV', 'ratio', 'float', 0.0,
         'Coefficient of variation of output lengths (standard deviation / mean; 0 = every '
         'request generates output_tokens, ~1 for chat traffic): a running slot holds S + '
         'G(1 + cv^2)/2 KV tokens on average, not S + G/2, so variable outputs fit fewer '
         'requests in the KV pool and read more KV per request.',
         minimum=0.0, maximum=3.0),
    _col('service_scv', 'Service SCV', 'ratio', 'float', 1.0,
         'Squared coefficient of variation of request service time (1 = exponential, 0 = fixed'
         ' lengths), for the Allen-Cunneen queueing correction.',
         minimum=0.0, maximum=100.0),
    _col("slo_ttft_s", "TTFT objective", "s", "float", 0.0,
         "Time to first token the deployment must keep at slo_percentile under its target "
         "rate; 0 = no objective.", minimum=0, maximum=3600),
    _col("slo_percentile", "TTFT percentile", "percentile", "choice", "99",
         "Percentile of TTFT the objective bounds.", choices=tuple(SLO_PERCENTILES)),
    _col("slo_tpot_s", "TPOT objective", "s", "float", 0.0,
         "Mean time per output token the deployment must keep under its target rate; "
         "0 = no objective.", minimum=0, maximum=3600),
    _col("calibration", "Calibration", "profile", "text", "auto",
         "auto, none or a calibration profile name: which fitted efficiency figures "
         "(planner calibrate) replace the GPU's and engine's; auto = the newest profile of the "
         "scenario's GPU and engine, none = the catalog's figures.", choices=("auto", "none")),
)
"""The serving engine's knobs and efficiency parameters (:mod:`planner.formulas.serving`,
:mod:`planner.formulas.engine_memory`). ``0`` in a block size, token budget, sequence limit or
model length means the engine's own default, and in an ``*_efficiency`` the GPU catalog's
figure: derived inputs resolve them (:mod:`planner.formulas.derived`)."""

OFFLOAD_INPUTS: tuple[InputColumn, ...] = (
    _col("weight_offload_fraction", "Weights offloaded", "fraction", "float", 0.0,
         "Share of each GPU's weights kept in host (CPU) memory and streamed over the host "
         "link every forward pass (vLLM --cpu-offload-gb = this share of the weights per GPU "
         "in GiB); frees GPU memory for the KV cache, adds the stream to TTFT, TPOT and every "
         "step.", minimum=0.0, maximum=1.0),
    _col("kv_offload_gib", "KV offload", "GiB", "float", 0.0,
         "Host (CPU) memory per GPU holding KV blocks of sequences that are not running "
         "(vLLM's OffloadingConnector, LMCache max_local_cpu_size; vLLM's "
         "--kv-offloading-size counts all TP ranks: divide it by tp).",
         minimum=0.0, maximum=1_000_000.0),
    _col("host_link_gb_per_s", "Host link", "GB/s", "float", 32.0,
         "One GPU's host link, one direction, in GB/s: PCIe Gen4 x16 32 (A100, L40S, L4, "
         "RTX 4090), Gen5 x16 64 (H100, H200, B200 in HGX boards), NVLink-C2C 450 (GH200, "
         "GB200).", minimum=0.0, maximum=100_000.0, above_minimum=True),
)
"""Offload to host memory (:mod:`planner.formulas.offload`): 0 offload leaves every figure
as it is without these columns."""

POOL_ATTENTION_DP = ("follow", "on", "off")
"""A pool's data-parallel attention: follow = the scenario's ``attention_dp``."""


def _pool(pool: str, what: str) -> tuple[InputColumn, ...]:
    """The parallelism inputs of one pool of a disaggregated deployment (issue 25):
    ``<pool>_workers``, ``<pool>_tp``, ``<pool>_ep``, ``<pool>_attention_dp``; 0 (and
    ``follow``) take the scenario's own figure, so a row written before they existed keeps its
    meaning."""
    return (
        _col(f"{pool}_workers", f"{pool.title()} workers", "count", "int", 0,
             f"Workers (engine instances) of the {what} pool in a disaggregated deployment; "
             "0 = the scenario's replicas (gpus / (tp*pp)).", minimum=0, maximum=100_000),
        _col(f"{pool}_tp", f"{pool.title()} TP", "count", "int", 0,
             f"Tensor-parallel GPUs per {what} worker (with attention DP: the worker's GPUs); "
             "0 = the scenario's tp.", minimum=0, maximum=1024),
        _col(f"{pool}_ep", f"{pool.title()} EP", "GPUs", "int", 0,
             f"Expert-parallel group of a {what} worker (MoE); 0 = the scenario's ep.",
             minimum=0, maximum=1024),
        _col(f"{pool}_attention_dp", f"{pool.title()} attention DP", "convention", "choice",
             "follow", f"Data-parallel attention in the {what} workers: on, off, or follow "
             "the scenario's attention_dp.", choices=POOL_ATTENTION_DP),
    )


DISAGG_INPUTS: tuple[InputColumn, ...] = (
    _col("serving_mode", "Serving mode", "convention", "choice", "aggregated",
         "aggregated: every replica runs prefill and decode (chunked prefill); disaggregated: "
         "prefill workers run the prompts and hand each prompt's KV cache to decode workers "
         "(NVIDIA Dynamo, SGLang PD disaggregation, vLLM's KV connectors), each pool with its "
         "own parallelism and GPU (planner.formulas.disagg).",
         choices=("aggregated", "disaggregated")),
    *_pool("prefill", "prefill"),
    *_pool("decode", "decode"),
    _col("decode_gpu", "Decode GPU", "GPU", "text", "same",
         "same or a GPU catalog name: the decode pool's GPU type in a disaggregated "
         "deployment; same = the scenario's GPU.", choices=("same",)),
    _col("disagg_handover_s", "P/D handover", "s", "float", DISAGG_HANDOVER_S,
         "Orchestration of a prompt's hand-over from its prefill worker to a decode worker, "
         "beyond the KV transfer and the first decode step: the router's serial dispatch of "
         "the decode leg and the decode engine picking the pull up at step boundaries (vLLM "
         "PR 51919, NixlConnector: ~197 ms p50 handover - 29 ms transfer - 58 ms token-1 "
         "recompute = 0.11 s; the default for every engine).", minimum=0.0, maximum=10.0),
)
"""Disaggregated prefill/decode serving (:mod:`planner.formulas.disagg`): with
``serving_mode = aggregated`` none of them changes a figure."""


SPEC_INPUTS: tuple[InputColumn, ...] = (
    _col("spec_method", "Speculation", "method", "choice", "none",
         "Speculative decoding: none; mtp = the checkpoint's multi-token-prediction modules "
         "draft (DeepSeek-V3/R1 num_nextn_predict_layers; vLLM --speculative-config method "
         "deepseek_mtp / mtp, SGLang EAGLE with the MTP head, TensorRT-LLM MTPDecodingConfig);"
         " draft = a separate draft model (spec_draft_model). Each decode step verifies "
         "k + 1 tokens per sequence and advances it by the acceptance length.",
         choices=tuple(SPEC_METHODS)),
    _col("spec_draft_tokens", "Draft tokens", "tokens", "int", 0,
         "Draft tokens k proposed per sequence per decode step; 0 = the method's default (mtp:"
         " the checkpoint's MTP modules, 1 for DeepSeek-V3/R1, TensorRT-LLM max_draft_len "
         "default 1; draft: 5, vLLM's draft-model example).", minimum=0, maximum=64),
    _col("spec_acceptance_length", "Accept length", "tokens", "float", 0.0,
         "Mean tokens accepted per verify step, the bonus token included (1 to k + 1); 0 = "
         "the method's typical value (1 - alpha^(k+1))/(1 - alpha) (Leviathan et al. 2023): "
         "mtp alpha 0.875, the DeepSeek-V3 technical report's 85-90 % second-token acceptance"
         " (k = 1: 1.875); draft alpha 0.7 (k = 5: 2.94).", minimum=0.0, maximum=65.0),
    _col("spec_draft_model", "Draft model", "model", "text", "",
         "a catalog model name, or blank: the draft model of spec_method draft (blank "
         "for none and mtp); its parameters run once per draft token."),
    _col("prefix_cache_hit_fraction", "Prefix hit", "fraction", "float", 0.0,
         "Share of prompt tokens served from the prefix cache (vLLM automatic prefix caching, "
         "SGLang RadixAttention: shared system prompts, few-shot examples, earlier chat "
         "turns): their prefill compute is skipped (attention still reads their KV) and the "
         "cached prefix's blocks are held once in the pool, shared by the running requests.",
         minimum=0.0, maximum=1.0),
)
"""Speculative decoding and prefix caching (issue 25; :mod:`planner.formulas.speculative`,
:mod:`planner.formulas.prefix_cache`): at ``none`` and 0 every figure is as without them."""

INFERENCE_INPUTS = (*INFERENCE_INPUTS, *SERVING_INPUTS, *OFFLOAD_INPUTS, *DISAGG_INPUTS,
                    *SPEC_INPUTS)

TRAINING_INPUTS: tuple[InputColumn, ...] = (
    *DEPLOYMENT_INPUTS,
    _col("train_tokens", "Tokens", "tokens", "float", 1e9, "Training tokens D.",
         minimum=1, maximum=1e16),
    _col("train_seq_len", "Sequence", "tokens", "int", 4096, "Training sequence length.",
         minimum=1, maximum=MAX_TOKENS),
    _col("micro_batch_size", "Micro-batch", "sequences", "int", 1,
         "Sequences per GPU per micro-step (sets activation memory).",
         minimum=1, maximum=100_000),
    _col("zero_stage", "ZeRO", "stage", "int", 1,
         "ZeRO stage: 0 replicate, 1 shard optimizer, 2 + gradients, 3 + parameters.",
         minimum=0, maximum=3),
    _col("activation_recompute", "Recompute", "bool", "bool", True,
         "Full activation recomputation (keep only each layer's input)."),
    _col("include_attention_flops", "Attention FLOPs", "bool", "bool", False,
         "Add the attention-core term to 6*N*D."),
    _col("lora_rank", "LoRA rank", "rank", "int", 0, "LoRA rank r; 0 = full training.",
         minimum=0, maximum=65_536),
    _col("budget_usd", "Budget", "USD", "float", 0.0,
         "A USD budget to convert into training tokens.", minimum=0, maximum=1e12),
    _col("budget_gpu_hours", "Budget", "GPU-h", "float", 0.0,
         "A GPU-hour budget to convert into training tokens.", minimum=0, maximum=1e12),
)

TRAINING_DEFAULT_OVERRIDES = {"mfu": 0.4, "reserve_fraction": 0.0}
"""Training starts from different defaults: MFU 40 %, no serving reserve."""


def defaults(columns: tuple[InputColumn, ...],
             overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Default value of every column in ``columns``."""
    out = {c.name: c.default for c in columns}
    out.update(overrides or {})
    return out


def parse_inputs(columns: tuple[InputColumn, ...], raw: Mapping[str, Any],
                 base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Validate ``raw`` (name → value; unknown names refused) over ``base`` (default: the
    columns' defaults). Raises on the first bad value, naming it."""
    check_known(columns, raw)
    by_name = {c.name: c for c in columns}
    out = dict(base) if base is not None else defaults(columns)
    for name, value in raw.items():
        out[name] = by_name[name].parse(value)
    return out


_known_names: dict[int, tuple[tuple[InputColumn, ...], frozenset[str]]] = {}
"""Per column list (by identity; the entry holds the list): its names."""


def check_known(columns: tuple[InputColumn, ...], raw: Mapping[str, Any]) -> None:
    """Refuse a name in ``raw`` that is not one of ``columns``, listing the inputs."""
    known = _known_names.get(id(columns))
    if known is None or known[0] is not columns:  # once per list, not at every one-row estimate
        known = _known_names[id(columns)] = (columns, frozenset(c.name for c in columns))
    names = known[1]
    for name in raw:
        if name not in names:
            raise ValidationError(name, not_one_of(name, sorted(names), "is not an input",
                                                   "`planner estimate --help` lists them"))


def input_columns() -> dict[str, InputColumn]:
    """Every scenario input column (inference and training), by name."""
    return {c.name: c for c in (*INFERENCE_INPUTS, *TRAINING_INPUTS)}
