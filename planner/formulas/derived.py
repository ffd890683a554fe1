"""Derived inputs: the numeric columns the formulas read, computed from what the user typed.

A user picks ``int4`` weights, a ``full`` attention convention, a reserve in GiB; the formulas
read bits, convention codes and bytes. Each such column is a formula here like any output, so
the one definition is evaluated over numpy columns (one million rows in one call), rendered as
an Excel formula next to the inputs it reads, and shown by ``explain`` as an input. The tables
they look up are data in one place each: dtypes in :data:`planner.core.units.DTYPES`, conventions in
:mod:`planner.formulas.flops`. Adding a dtype or a convention is one entry there.
"""

from __future__ import annotations

from planner.core.units import (
    DEFAULT_GROUP_SIZE,
    DTYPE_BITS,
    FORMAT_SCALE_BITS,
    KV_DTYPES,
    WEIGHT_AUTO,
    WEIGHT_DTYPES,
    GiB,
)
from planner.formulas.engine_memory import ENGINES, by_engine
from planner.formulas.flops import ATTENTION_CONVENTIONS, LOGITS_CONVENTIONS
from planner.formulas.ops import Value, floor, lookup, minimum, safe_div, where
from planner.formulas.slo import SLO_PERCENTILES
from planner.spec.gpu import DEFAULT_PATH, LOW_BIT_PATH
from planner.spec.quant_config import COMPUTE_PATHS

QUANT_MODES: dict[str, int] = {"auto": 0, "weight_only": 1, "weight_activation": 2}
"""``quant_mode`` choices: ``auto`` (fp8/int8 W8A8, int4 and FP4 weight-only; a checkpoint's
own scheme for ``weight_dtype`` auto), ``weight_only`` (matmuls in 16 bit on dequantized
weights), ``weight_activation`` (W8A8 / W4A4 on the weights' low-bit tensor path where the GPU
lists it)."""


def _by_weight_dtype(table: dict[str, int], auto: int) -> dict[str, int]:
    """A lookup table over every ``weight_dtype`` choice (``auto``'s entry is a placeholder:
    the formulas take the checkpoint's figure for it)."""
    return {WEIGHT_AUTO: auto, **{name: table[name] for name in WEIGHT_DTYPES}}


_WEIGHT_BITS = _by_weight_dtype(DTYPE_BITS, 16)
_GROUP_SIZE = _by_weight_dtype(DEFAULT_GROUP_SIZE, 0)
_SCALE_BITS = _by_weight_dtype(FORMAT_SCALE_BITS, -1)
_DEFAULT_PATH = _by_weight_dtype({n: COMPUTE_PATHS[p] for n, p in DEFAULT_PATH.items()}, 0)
_LOW_BIT_PATH = _by_weight_dtype({n: COMPUTE_PATHS[p] for n, p in LOW_BIT_PATH.items()}, 0)


def weight_auto_number(weight_dtype: Value) -> Value:
    """1 when ``weight_dtype`` is ``auto`` (the checkpoint's own ``quantization_config``
    sets the weights' storage), else 0."""
    return where(weight_dtype == WEIGHT_AUTO, 1, 0)


def weight_bits(weight_dtype: Value, model_checkpoint_weight_bits: Value) -> Value:
    """Bits per weight value of the weight dtype (``int4`` → 4, ``mxfp4`` → 4), from
    :data:`planner.core.units.DTYPES`; for ``auto`` the checkpoint's (16 when unquantized)."""
    return where(weight_dtype == WEIGHT_AUTO, model_checkpoint_weight_bits,
                 lookup(weight_dtype, _WEIGHT_BITS))


def quant_scale_bits_effective(quant_scale_bits: Value, weight_dtype: Value) -> Value:
    """Bits per group scale: the format's own where it fixes one (MXFP4's E8M0 and NVFP4's
    FP8 scales: 8), else ``quant_scale_bits``."""
    fixed = lookup(weight_dtype, _SCALE_BITS)
    return where(fixed >= 0, fixed, quant_scale_bits)


def matmul_path_code(weight_dtype: Value, quant_mode: Value, model_checkpoint_matmul_path: Value,
                     model_checkpoint_low_bit_path: Value) -> Value:
    """Which tensor path the matmuls take (0 16-bit, 1 fp8, 2 int8, 3 int4, 4 fp4):
    ``weight_only`` → 0; ``weight_activation`` → the weights' low-bit path; ``auto`` → the
    dtype's default (fp8/int8 W8A8, others 16-bit), or the checkpoint's own scheme for
    ``weight_dtype`` auto (:func:`planner.spec.gpu.matmul_path`)."""
    auto = weight_dtype == WEIGHT_AUTO
    default = where(auto, model_checkpoint_matmul_path, lookup(weight_dtype, _DEFAULT_PATH))
    low = where(auto, model_checkpoint_low_bit_path, lookup(weight_dtype, _LOW_BIT_PATH))
    return where(quant_mode == "weight_only", 0,
                 where(quant_mode == "weight_activation", low, default))


KV_AUTO = "auto"
"""The ``kv_dtype`` choice that takes the engine's launch default for the checkpoint on the
GPU (``--kv-cache-dtype auto``, :func:`kv_bits`)."""
KV_DTYPE_CHOICES: tuple[str, ...] = (KV_AUTO, *KV_DTYPES)
"""What a scenario's ``kv_dtype`` may be: ``auto`` or a KV dtype
(:data:`planner.core.units.DTYPES`)."""
KV_DTYPE_BITS: dict[str, int] = {KV_AUTO: 0, **{d: DTYPE_BITS[d] for d in KV_DTYPES}}
"""``kv_dtype`` choices and their bits (``auto``: 0, resolved by :func:`kv_bits`)."""
MODEL_DTYPE_KV_BITS = 16
"""Bits of a cache at the model dtype (``torch_dtype`` bf16 / fp16 for every checkpoint the
planner reads: the quantized ones keep their non-matmul tensors at 16 bit too)."""
ENGINE_FP8_KV_BITS = 8
"""Bits of the fp8 (e4m3) cache an engine picks for the architectures of :func:`kv_bits`."""
SGLANG_FP8_KV_MIN_CAPABILITY = 10
"""Compute capability major from which SGLang caches DeepSeek-V3.2 / GLM-5 at fp8 by default."""


def kv_bits(kv_dtype: Value, engine_code: Value, gpu_compute_capability: Value,
            model_sparse_mla_layers: Value, model_vllm_v4_kv_bytes_per_token: Value,
            model_checkpoint_kv_bits: Value) -> Value:
    """Bits per KV-cache element. ``bf16``, ``fp16``, ``fp8``, ``int8`` are that dtype's bits,
    except vLLM with DeepSeek-V4, whose kernels run one layout, ``fp8_ds_mla``, whatever
    ``--kv-cache-dtype`` (:mod:`planner.spec.vllm_cache_layout`): 8 there. ``auto`` is the
    engine's launch default (``--kv-cache-dtype auto``) for the checkpoint on the GPU:

    * SGLang, DeepSeek-V3.2 / GLM-5 (sparse-attention MLA, ``is_deepseek_nsa``): ``"fp8_e4m3"
      if major >= 10 else "bfloat16"`` (``python/sglang/srt/server_args.py``,
      ``_set_default_nsa_kv_cache_dtype``): 8 on compute capability 10 and above (B200,
      B300, GB200, GB300, RTX PRO 6000), 16 on Hopper and on parts without a CUDA compute
      capability (AMD);
    * SGLang, DeepSeek-V4: ``if self.kv_cache_dtype == "auto": self.kv_cache_dtype =
      "fp8_e4m3"`` (``server_args.py``, ``DeepseekV4ForCausalLM``): 8 on every GPU;
    * vLLM, DeepSeek-V4: 8 (``fp8_ds_mla``, above);
    * a checkpoint whose ``quantization_config`` declares an FP8 KV cache
      (``model_checkpoint_kv_bits`` 8, ModelOpt's ``kv_cache_scheme`` / ``kv_cache_quant_algo``):
      8 under vLLM (``resolve_kv_cache_dtype_string``, ``vllm/utils/torch_utils.py``), SGLang
      (``configure_kv_cache_dtype``: ``kv_cache_quant_algo`` "FP8") and TensorRT-LLM
      (``KvCacheConfig.dtype`` "auto": the checkpoint's ``kv_cache_quant_algo``);
    * otherwise the model dtype, 16 (:data:`MODEL_DTYPE_KV_BITS`): vLLM's auto for DeepSeek-V3.2
      / GLM-5 is the model dtype since vLLM PR 27121 ("Disable fp8 kv-cache by default for
      DeepSeek V3.2", October 2025), and the roofline caches as transformers does, at the
      model dtype.

    So ``auto`` equals ``bf16`` for every model and engine but these."""
    chosen = lookup(kv_dtype, KV_DTYPE_BITS)
    sglang = engine_code == ENGINES["sglang"]
    v4 = model_vllm_v4_kv_bytes_per_token > 0
    dsa_fp8 = sglang * (model_sparse_mla_layers > 0) * (
        floor(gpu_compute_capability) >= SGLANG_FP8_KV_MIN_CAPABILITY)
    engine_fp8 = (dsa_fp8 + sglang * v4) > 0
    checkpoint = (engine_code != ENGINES["roofline"]) * model_checkpoint_kv_bits
    auto = where(engine_fp8, ENGINE_FP8_KV_BITS,
                 where(checkpoint > 0, checkpoint, MODEL_DTYPE_KV_BITS))
    vllm_v4 = (engine_code == ENGINES["vllm"]) * v4
    return where(vllm_v4 > 0, ENGINE_FP8_KV_BITS, where(chosen > 0, chosen, auto))


STATE_DTYPE_BITS: dict[str, int] = {"auto": 0, "bf16": 16, "fp16": 16, "fp32": 32}
"""``state_dtype`` choices and their bits (``auto``: the engine's own rule,
:func:`state_recurrent_bits`)."""


def state_recurrent_bits(state_dtype: Value, engine_code: Value,
                         model_state_recurrent_bits: Value,
                         model_state_recurrent_bits_vllm: Value) -> Value:
    """Bits per element of the recurrent (Mamba-2 SSM / Gated DeltaNet) state: the chosen
    ``state_dtype``, or for ``auto`` the engine's default:

    * vLLM's ``mamba_ssm_cache_dtype`` "auto" (``model_state_recurrent_bits_vllm``: the
      config's ``mamba_ssm_cache_dtype`` for Nemotron-H, its ``mamba_ssm_dtype`` for Qwen3.5,
      else the model dtype);
    * SGLang: ``SGLANG_MAMBA_SSM_DTYPE``, else the config's ``mamba_ssm_dtype``, else float32
      (``python/sglang/srt/configs/mamba_utils.py``, ``mamba2_state_dtype``): the config's
      dtype here (``model_state_recurrent_bits``; Nemotron-H's float32 default alike);
    * TensorRT-LLM: ``KvCacheConfig.mamba_ssm_cache_dtype`` "auto" is the checkpoint's
      ``torch_dtype`` (``tensorrt_llm/_torch/pyexecutor/model_loader.py``,
      ``validate_and_set_mamba_ssm_cache_dtype``): 16 bit;
    * roofline: the config's dtype as transformers keeps it.

    The convolution window stays at 16 bit (the model dtype; SGLang's
    ``SGLANG_MAMBA_CONV_DTYPE`` default bfloat16) in every case."""
    chosen = lookup(state_dtype, STATE_DTYPE_BITS)
    auto = where(engine_code == ENGINES["vllm"], model_state_recurrent_bits_vllm,
                 where(engine_code == ENGINES["trtllm"], TRTLLM_STATE_BITS,
                       model_state_recurrent_bits))
    return where(chosen > 0, chosen, auto)


TRTLLM_STATE_BITS = 16
"""Bits TensorRT-LLM keeps a Mamba / linear-attention state at by default: the model dtype
(``torch_dtype``, 16 bit for every checkpoint the planner reads)."""


def reserve_bytes(reserve_gib: Value) -> Value:
    """``reserve_gib`` in bytes (1 GiB = 2^30 B)."""
    return reserve_gib * GiB


def quant_group_size_effective(quant_group_size: Value, weight_dtype: Value) -> Value:
    """Weights per quantization scale: ``quant_group_size``, or the weight dtype's default
    when it is -1 (128 for int4 as GPTQ/AWQ, 32 for MXFP4, 16 for NVFP4, none for 8 and 16
    bit; ``auto`` takes the checkpoint's stored bits instead)."""
    return where(quant_group_size < 0, lookup(weight_dtype, _GROUP_SIZE), quant_group_size)


def keep_embeddings_16bit_number(keep_embeddings_16bit: Value) -> Value:
    """``keep_embeddings_16bit`` as 1 or 0."""
    return where(keep_embeddings_16bit, 1, 0)


def activation_recompute_number(activation_recompute: Value) -> Value:
    """``activation_recompute`` as 1 or 0."""
    return where(activation_recompute, 1, 0)


def include_attention_flops_number(include_attention_flops: Value) -> Value:
    """``include_attention_flops`` as 1 or 0."""
    return where(include_attention_flops, 1, 0)


def attention_convention_code(attention_convention: Value) -> Value:
    """The attention convention's code (0 causal pairs, 1 full square)."""
    return lookup(attention_convention, ATTENTION_CONVENTIONS)


def logits_convention_code(logits_convention: Value) -> Value:
    """The prefill logits convention's code (0 last position, 1 all, 2 none)."""
    return lookup(logits_convention, LOGITS_CONVENTIONS)


_PATH_PEAKS = (("fp8", 1), ("int8", 2), ("int4", 3), ("nvfp4", 4), ("mxfp4", 5))


def gpu_flops_per_s(matmul_path_code: Value, gpu_bf16_peak: Value, gpu_fp16_peak: Value,
                    gpu_fp8_peak: Value, gpu_int8_peak: Value, gpu_int4_peak: Value,
                    gpu_nvfp4_peak: Value, gpu_mxfp4_peak: Value) -> Value:
    """Dense tensor peak of one GPU on the scenario's matmul path: the 16-bit peak (bf16, else
    fp16), or the fp8 / int8 / int4 / NVFP4 / MXFP4 peak where the path is low-bit and the GPU
    lists it (a peak of 0 means the part has no tensor path for that dtype: an FP4 checkpoint
    then runs W4A16 at the 16-bit peak) (:data:`planner.spec.gpu.PATH_DTYPES`). B200,
    NVFP4 checkpoint: 9,000 TFLOP/s dense instead of 2,250."""
    peaks = {"fp8": gpu_fp8_peak, "int8": gpu_int8_peak, "int4": gpu_int4_peak,
             "nvfp4": gpu_nvfp4_peak, "mxfp4": gpu_mxfp4_peak}
    sixteen = where(gpu_bf16_peak > 0, gpu_bf16_peak, gpu_fp16_peak)
    chosen: Value = sixteen
    for name, code in _PATH_PEAKS:
        chosen = where(matmul_path_code == code, where(peaks[name] > 0, peaks[name], sixteen),
                       chosen)
    return chosen


# --------------------------------------------------------------------- serving engine inputs
def engine_code(engine: Value) -> Value:
    """The engine's code (:data:`planner.formulas.engine_memory.ENGINES`: 0 roofline, 1 vllm,
    2 sglang, 3 trtllm)."""
    return lookup(engine, ENGINES)


def chunked_prefill_number(chunked_prefill: Value) -> Value:
    """``chunked_prefill`` as 1 or 0."""
    return where(chunked_prefill, 1, 0)


def vllm_v0_accounting_number(vllm_v0_accounting: Value) -> Value:
    """``vllm_v0_accounting`` as 1 or 0."""
    return where(vllm_v0_accounting, 1, 0)


def attention_dp_number(attention_dp: Value) -> Value:
    """``attention_dp`` as 1 or 0."""
    return where(attention_dp, 1, 0)


def vllm_large_part(gpu_memory_bytes: Value, gpu_fp8_peak: Value) -> Value:
    """1 where vLLM's OpenAI server picks its larger defaults (``engine/arg_utils.py``,
    ``_set_default_args``: 70 GiB or more and not an A100), else 0. The device-name test is
    modelled by the part's FP8 path, which the A100 generation lacks."""
    return where(gpu_memory_bytes >= 70 * GiB, where(gpu_fp8_peak > 0, 1, 0), 0)


def max_num_seqs_effective(max_num_seqs: Value, engine_code: Value,
                           vllm_large_part: Value) -> Value:
    """Most sequences running at once: ``max_num_seqs``, or when 0 the engine's default (vLLM
    1024 on large parts, 256 otherwise; SGLang ~1024 on 80 GB parts; TRT-LLM 2048)."""
    default = by_engine(engine_code, {"roofline": 256, "sglang": 1024, "trtllm": 2048,
                                       "vllm": where(vllm_large_part > 0, 1024, 256)})
    return where(max_num_seqs > 0, max_num_seqs, default)


SGLANG_CHUNKED_PREFILL_TIERS: tuple[tuple[float, int], ...] = (
    (35 * GiB, 2048), (60 * GiB, 4096), (160 * GiB, 8192))
"""SGLang's default ``chunked_prefill_size`` by the memory of one GPU (``python/sglang/srt/
server_args.py``, ``_handle_gpu_memory_settings``, ``gpu_mem`` in MiB from the device):
below 20 and below 35 GiB (T4, A10, 4090) 2048, below 60 GiB (A100 40 GB, L40) 4096, below
90 GiB (H100, A100 80 GB) and below 160 GiB (H20, H200) 8192, else (B200, MI300) 16384, as
(bound, tokens) pairs below which the figure applies. A prefill batch holds at most that many
prompt tokens (``PrefillAdder``: each request added takes its extend length off
``rem_chunk_tokens``; the default ``max_prefill_tokens`` 16384 binds no earlier)."""
SGLANG_CHUNKED_PREFILL_LARGE = 16384
"""SGLang's ``chunked_prefill_size`` on parts of 160 GiB or more (B200, MI300)."""


def sglang_chunked_prefill_size(gpu_usable_memory_bytes: Value) -> Value:
    """SGLang's default token budget of a prefill batch on this GPU
    (:data:`SGLANG_CHUNKED_PREFILL_TIERS`: the memory the runtime sees, what SGLang reads)."""
    out: Value = SGLANG_CHUNKED_PREFILL_LARGE
    for bound, tokens in reversed(SGLANG_CHUNKED_PREFILL_TIERS):
        out = where(gpu_usable_memory_bytes < bound, tokens, out)
    return out


def max_num_batched_tokens_effective(max_num_batched_tokens: Value, engine_code: Value,
                                     vllm_large_part: Value,
                                     gpu_usable_memory_bytes: Value) -> Value:
    """Token budget of one engine step: ``max_num_batched_tokens``, or when 0 the engine's
    default (vLLM 8192 on large parts, 2048 otherwise; SGLang ``chunked_prefill_size`` by GPU
    memory, :func:`sglang_chunked_prefill_size`: 8192 on H100/H200, 16384 on B200/MI300X/
    MI355X; TRT-LLM max_num_tokens 8192)."""
    default = by_engine(engine_code, {
        "roofline": 8192, "sglang": sglang_chunked_prefill_size(gpu_usable_memory_bytes),
        "trtllm": 8192, "vllm": where(vllm_large_part > 0, 8192, 2048)})
    return where(max_num_batched_tokens > 0, max_num_batched_tokens, default)


SGLANG_DSA_PAGE_TOKENS = 64
"""SGLang's page size for DeepSeek-V3.2 / GLM-5 on CUDA, whatever ``--page-size``
(``server_args.py``: ``self.page_size = 64``, "Setting page size to 64 for DeepSeek DSA"; 1 on
ROCm)."""
SGLANG_V4_PAGE_TOKENS = 256
"""SGLang's page size for DeepSeek-V4 when none is given (``if self.page_size is None:
self.page_size = 256``)."""


def block_size_effective(block_size: Value, engine_code: Value,
                         model_sparse_mla_layers: Value,
                         model_vllm_v4_kv_bytes_per_token: Value,
                         gpu_compute_capability: Value) -> Value:
    """KV-cache block size in tokens: ``block_size``, or when 0 the engine's (vLLM 16, SGLang
    page_size 1, TRT-LLM tokens_per_block 32; 1 for the roofline). SGLang sets its own for two
    architectures: 64 for DeepSeek-V3.2 / GLM-5 on a CUDA part (compute capability above 0)
    whatever ``block_size`` (:data:`SGLANG_DSA_PAGE_TOKENS`), 256 for DeepSeek-V4 when
    ``block_size`` is 0 (:data:`SGLANG_V4_PAGE_TOKENS`); its pool is whole pages
    (``max_total_num_tokens // page_size * page_size``)."""
    sglang = engine_code == ENGINES["sglang"]
    default = by_engine(engine_code, {
        "roofline": 1, "vllm": 16, "trtllm": 32,
        "sglang": where(model_vllm_v4_kv_bytes_per_token > 0, SGLANG_V4_PAGE_TOKENS, 1)})
    dsa = sglang * (model_sparse_mla_layers > 0) * (gpu_compute_capability > 0)
    return where(dsa > 0, SGLANG_DSA_PAGE_TOKENS, where(block_size > 0, block_size, default))


def max_model_len_effective(max_model_len: Value, model_max_context_tokens: Value) -> Value:
    """Longest sequence the engine accepts: ``max_model_len``, or when 0 the model's context
    length (the engines' default)."""
    return where(max_model_len > 0, max_model_len, model_max_context_tokens)


def gpu_compute_bits(matmul_path_code: Value, gpu_fp8_peak: Value, gpu_int8_peak: Value,
                     gpu_int4_peak: Value, gpu_nvfp4_peak: Value,
                     gpu_mxfp4_peak: Value) -> Value:
    """Bits of the compute dtype the matmuls run at (the rule of :func:`gpu_flops_per_s`)."""
    peaks = {"fp8": gpu_fp8_peak, "int8": gpu_int8_peak, "int4": gpu_int4_peak,
             "nvfp4": gpu_nvfp4_peak, "mxfp4": gpu_mxfp4_peak}
    chosen: Value = 16
    for name, code in _PATH_PEAKS:
        chosen = where(matmul_path_code == code, where(peaks[name] > 0, DTYPE_BITS[name], 16),
                       chosen)
    return chosen


FOUR_BIT_GEMM_SPEEDUP = 2.03
"""Throughput of W4A4 NVFP4 GEMMs over 16-bit GEMMs on the same Blackwell part, the input's
quantization included: 2.03x (NVIDIA Transformer Engine docs, "GEMM Speedups Across
Precisions", B300, 5B-model shapes hidden 4,096 / intermediate 16,384, autocast mode, which
counts the per-GEMM conversion of the inputs to NVFP4 and their scales, as a serving engine's
``scaled_fp4_quant`` before each ``cutlass_scaled_fp4_mm`` does; the raw kernel reaches 3.55x).
Well short of the datasheet's 4x (B200 9,000 vs 2,250 TFLOP/s dense): the quantization passes
stream the activations and the 16-element block scales, and the smaller per-byte intensity
of 4-bit operands leaves more of the GEMM bandwidth-bound (the 8-bit share of
:data:`planner.spec.gpu.EIGHT_BIT_GEMM_SHARE` for the same reasons)."""


def gpu_matmul_efficiency(gpu_compute_bits: Value, gpu_matmul_efficiency_16bit: Value,
                          gpu_matmul_efficiency_8bit: Value, gpu_flops_per_s: Value,
                          gpu_bf16_peak: Value, gpu_fp16_peak: Value) -> Value:
    """Achievable share of the tensor peak at the compute dtype: the GPU catalog's 8-bit figure
    for FP8/INT8 matmuls, its 16-bit figure for 16-bit ones, and for 4-bit (W4A4) matmuls the
    16-bit share times :data:`FOUR_BIT_GEMM_SPEEDUP` over the ratio of the 4-bit to the 16-bit
    peak: ``eff16 * 2.03 * peak16 / peak4`` (B200: 0.7 * 2.03 / 4 = 0.355 of 9,000 TFLOP/s,
    3,200 TFLOP/s achieved, 2.03x its 16-bit GEMMs), at most the 8-bit share."""
    sixteen_peak = where(gpu_bf16_peak > 0, gpu_bf16_peak, gpu_fp16_peak)
    four = minimum(gpu_matmul_efficiency_16bit * FOUR_BIT_GEMM_SPEEDUP
                   * safe_div(sixteen_peak, gpu_flops_per_s, 1.0), gpu_matmul_efficiency_8bit)
    return where(gpu_compute_bits <= 4, four,
                 where(gpu_compute_bits <= 8, gpu_matmul_efficiency_8bit,
                       gpu_matmul_efficiency_16bit))


def slo_percentile_number(slo_percentile: Value) -> Value:
    """The TTFT objective's percentile as a number (50, 90 or 99)."""
    return lookup(slo_percentile, SLO_PERCENTILES)


# --------------------------------------------------------------------- offload to host memory
def kv_offload_bytes_per_gpu(kv_offload_gib: Value) -> Value:
    """``kv_offload_gib`` in bytes (1 GiB = 2^30 B): host memory per GPU for KV blocks."""
    return kv_offload_gib * GiB


def host_link_bytes_per_s(host_link_gb_per_s: Value) -> Value:
    """``host_link_gb_per_s`` in bytes/s (1 GB = 10^9 B), one direction of one GPU's link."""
    return host_link_gb_per_s * 1e9
