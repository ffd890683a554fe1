"""A GPU as the estimator sees it: memory, dense tensor throughput per dtype, bandwidth, price.

Figures are in base units (bytes, FLOP/s, bytes/s, USD per GPU-hour). Throughput is the dense
tensor-core peak; which dtype's peak applies to a scenario follows from its weight dtype
(:func:`compute_dtype`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.core.errors import ValidationError
from planner.core.units import DTYPES, WEIGHT_AUTO
from planner.spec.quant_config import COMPUTE_PATHS, QuantScheme


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One GPU model. ``flops_per_s`` maps a compute dtype (bf16, fp16, fp8, int8, int4) to its
    dense peak; a dtype the part lacks is absent."""

    name: str
    memory_bytes: int
    flops_per_s: dict[str, float]
    bandwidth_bytes_per_s: float
    price_usd_per_hour: float = 0.0
    vendor: str = ""
    label: str = ""
    interconnect_bytes_per_s: float = 0.0
    power_w: float = 0.0
    price_is_example: bool = False
    source: str = ""
    notes: dict[str, str] = field(default_factory=dict)
    usable_memory_bytes: int = 0
    """Memory the runtime sees (torch ``total_memory``), below the marketing capacity: an
    "80 GB" H100 shows 79.19 GiB. 0 = unknown: :func:`usable_memory_bytes` falls back to
    ``memory_bytes * DEFAULT_USABLE_FRACTION``."""
    matmul_efficiency: float = 0.0
    """Achievable share of the dense tensor peak on large GEMMs (0 = unknown:
    ``DEFAULT_MATMUL_EFFICIENCY``)."""
    bandwidth_efficiency: float = 0.0
    """Achievable share of the memory bandwidth on streaming reads (0 = unknown:
    ``DEFAULT_BANDWIDTH_EFFICIENCY``)."""
    matmul_efficiency_8bit: float = 0.0
    """Achievable share of the 8-bit (fp8/int8) tensor peak (0 = unknown:
    ``matmul_efficiency * EIGHT_BIT_GEMM_SHARE``)."""
    runtime_context_bytes: int = 0
    """Device memory the CUDA/ROCm context and library workspaces take before any tensor
    (0 = unknown: ``DEFAULT_RUNTIME_CONTEXT_BYTES``)."""
    serving_source: str = ""
    """Where the four serving figures above come from."""
    nvlink_domain_gpus: int = 0
    """GPUs one scale-up fabric joins at ``interconnect_bytes_per_s`` (1 = PCIe only, 2 = an
    NVLink bridge pair, 8 = an NVSwitch or Infinity Fabric board, 72 = NVL72; 0 = unknown: the
    interconnect is taken for any group). See :mod:`planner.formulas.topology`."""
    mesh_links_per_gpu: int = 0
    """0 for a switched fabric; else the point-to-point links the interconnect is split over
    (AMD Instinct: 7, one to each peer)."""
    pcie_gen: int = 0
    """PCIe generation of the x16 host link (3-6; 0 = unknown)."""
    nic_gbit_per_s: float = 0.0
    """Scale-out NIC bandwidth per GPU, one direction, Gb/s (0 = none assumed)."""
    topology_source: str = ""
    """Where the four topology figures above come from."""
    compute_capability: float = 0.0
    """CUDA compute capability ``major.minor`` of an NVIDIA part (B200 10.0, B300 10.3, RTX PRO
    6000 Blackwell 12.0; NVIDIA's "CUDA GPU Compute Capability" table); 0 for other vendors or
    unknown. Engines choose kernels, block alignments and cache dtypes by it."""


COMPUTE_DTYPES: dict[str, tuple[str, ...]] = {
    name: d.compute for name, d in DTYPES.items() if d.weight}
"""Compute dtype tried for each weight dtype, best first
(:attr:`planner.core.units.Dtype.compute`)."""

PATH_DTYPES: dict[str, tuple[str, ...]] = {
    "16bit": ("bf16", "fp16"), "fp8": ("fp8", "bf16", "fp16"), "int8": ("int8", "bf16", "fp16"),
    "int4": ("int4", "bf16", "fp16"), "fp4": ("nvfp4", "bf16", "fp16"),
    "mxfp4": ("mxfp4", "bf16", "fp16")}
"""Tensor dtypes tried for each matmul path (:data:`~planner.spec.quant_config.COMPUTE_PATHS`),
best first: a part without the low-bit path runs the dequantized weights in 16 bit (an NVFP4
checkpoint is W4A4 on Blackwell's FP4 tensor cores, W4A16 on a Hopper)."""

W4A4_BY_DEFAULT: tuple[str, ...] = ("nvfp4",)
"""Weight dtypes whose serving kernels quantize the activations too under ``quant_mode`` auto,
so the matmuls run on the weights' low-bit tensor path where the part has one. NVFP4 is the
ModelOpt scheme (``quant_algo`` NVFP4, ``NVFP4_DEFAULT_CFG``: weights and inputs E2M1 with FP8
scales per 16), which the engines serve W4A4: vLLM ``modelopt.py``
``ModelOptNvFp4LinearMethod.apply`` quantizes the input with ``scaled_fp4_quant`` and
multiplies with ``cutlass_scaled_fp4_mm`` on SM100, falling back to Marlin W4A16 only where
the part has no FP4 tensor cores (``is_fp4_marlin_supported``, SM80+); TensorRT-LLM's NVFP4
linear (``_torch/modules/linear.py``, ``QuantAlgo.NVFP4``) likewise. The checkpoint path
(:attr:`planner.spec.quant_config.QuantScheme.compute_path`) already reads an NVFP4
``quantization_config`` so; this makes the explicit ``weight_dtype nvfp4`` agree. MXFP4 stays
weight-only (gpt-oss's MoE kernels take 16-bit activations on Hopper)."""

DEFAULT_PATH: dict[str, str] = {
    name: (DTYPES[name].activation_path if name in W4A4_BY_DEFAULT
           else c[0] if c and c[0] in COMPUTE_PATHS else "16bit")
    for name, c in COMPUTE_DTYPES.items()}
"""The matmul path of each weight dtype under ``quant_mode`` auto: fp8 and int8 W8A8, NVFP4
W4A4 (:data:`W4A4_BY_DEFAULT`; W4A16 on a part without FP4 tensor cores, :data:`PATH_DTYPES`),
the rest 16-bit (int4 and MXFP4 weight-only)."""

LOW_BIT_PATH: dict[str, str] = {name: d.activation_path for name, d in DTYPES.items() if d.weight}
"""The matmul path of each weight dtype under ``quant_mode`` weight_activation."""


def matmul_path(weight_dtype: str, quant_mode: str = "auto",
                quantization: QuantScheme | None = None) -> str:
    """The matmul path (:data:`PATH_DTYPES`) of a scenario: 16-bit for ``weight_only``; the
    weights' low-bit path for ``weight_activation``; under ``auto`` the dtype's default, or
    for ``weight_dtype`` auto the checkpoint's own (``quantization``). The formula columns
    ``matmul_path_code`` and ``gpu_flops_per_s`` follow the same rule."""
    if quant_mode == "weight_only":
        return "16bit"
    if weight_dtype == WEIGHT_AUTO:
        if quantization is None:
            return "16bit"
        return (quantization.low_bit_path if quant_mode == "weight_activation"
                else quantization.compute_path)
    if quant_mode == "weight_activation":
        return LOW_BIT_PATH.get(weight_dtype, "16bit")
    return DEFAULT_PATH.get(weight_dtype, "16bit")


PEAK_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "int4", "nvfp4", "mxfp4")
"""Tensor-core dtypes whose dense peak a GPU lists (``gpu_<dtype>_peak`` columns)."""


def gpu_figures(gpu: GpuSpec) -> dict[str, float]:
    """The GPU's figures as the scenario columns the formulas read: memory in bytes, bandwidth
    in bytes/s, price in USD per GPU-hour, and the dense peak of every tensor dtype in FLOP/s
    (0 where the part has no tensor path for it)."""
    return {
        "gpu_memory_bytes": gpu.memory_bytes,
        "gpu_bandwidth_bytes_per_s": gpu.bandwidth_bytes_per_s,
        "price_usd_per_gpu_hour": gpu.price_usd_per_hour,
        **{f"gpu_{d}_peak": gpu.flops_per_s.get(d, 0.0) for d in PEAK_DTYPES},
        **serving_figures(gpu),
    }


def serving_figures(gpu: GpuSpec) -> dict[str, float]:
    """The figures the serving model reads, the catalog's or, where it gives none, the
    documented default: memory the runtime sees, achievable GEMM shares at 16 and 8 bit,
    achievable bandwidth share, interconnect bandwidth, the runtime's context memory and the
    wiring (:func:`topology_figures`)."""
    sixteen = gpu.matmul_efficiency or DEFAULT_MATMUL_EFFICIENCY
    return {
        "gpu_usable_memory_bytes": float(gpu.usable_memory_bytes
                                         or round(gpu.memory_bytes * DEFAULT_USABLE_FRACTION)),
        "gpu_matmul_efficiency_16bit": sixteen,
        "gpu_matmul_efficiency_8bit": gpu.matmul_efficiency_8bit
        or sixteen * EIGHT_BIT_GEMM_SHARE,
        "gpu_bandwidth_efficiency": gpu.bandwidth_efficiency or DEFAULT_BANDWIDTH_EFFICIENCY,
        "gpu_interconnect_bytes_per_s": gpu.interconnect_bytes_per_s,
        "gpu_runtime_context_bytes": float(gpu.runtime_context_bytes
                                           or DEFAULT_RUNTIME_CONTEXT_BYTES),
        **topology_figures(gpu),
    }


def topology_figures(gpu: GpuSpec) -> dict[str, float]:
    """The wiring figures :mod:`planner.formulas.topology` reads: scale-up domain size, mesh
    links per GPU, PCIe generation and scale-out NIC Gb/s per GPU (0 where unknown); and the
    CUDA compute capability the engines' kernel choices read (0: not CUDA or unknown)."""
    return {
        "gpu_nvlink_domain_gpus": float(gpu.nvlink_domain_gpus),
        "gpu_mesh_links_per_gpu": float(gpu.mesh_links_per_gpu),
        "gpu_pcie_gen": float(gpu.pcie_gen),
        "gpu_nic_gbit_per_s": float(gpu.nic_gbit_per_s),
        "gpu_compute_capability": float(gpu.compute_capability),
    }


def compute_dtype(gpu: GpuSpec, weight_dtype: str, quant_mode: str = "auto",
                  quantization: QuantScheme | None = None) -> str:
    """The dtype whose peak FLOP/s a scenario with ``weight_dtype`` weights runs at on ``gpu``:
    the first of its matmul path's dtypes (:func:`matmul_path`) that the GPU lists."""
    for candidate in PATH_DTYPES[matmul_path(weight_dtype, quant_mode, quantization)]:
        if gpu.flops_per_s.get(candidate):
            return candidate
    raise ValidationError("gpu", f"{gpu.name} lists no tensor throughput usable for "
                          f"{weight_dtype} weights", value=sorted(gpu.flops_per_s))


DEFAULT_USABLE_FRACTION = 0.99
"""Share of the listed memory the runtime sees when the catalog gives no figure: an H100's
80 GiB shows as 79.19 GiB to torch (0.9899), an RTX 3090's 24 GiB as 23.58 GiB (0.9825)."""
DEFAULT_MATMUL_EFFICIENCY = 0.7
"""Achievable GEMM share of the dense peak when the catalog gives none (H100-class figure)."""
DEFAULT_BANDWIDTH_EFFICIENCY = 0.85
"""Achievable streaming-read share of the bandwidth when the catalog gives none."""
EIGHT_BIT_GEMM_SHARE = 0.75
"""8-bit GEMMs deliver about 1.5x the 16-bit GEMM throughput in practice, not the datasheet's
2x (Transformer Engine / cuBLASLt FP8 GEMM benchmarks on H100: scaling, casts and smaller
per-byte arithmetic intensity at serving shapes), so their achievable share of the 8-bit peak is
0.75 of the 16-bit share."""
DEFAULT_RUNTIME_CONTEXT_BYTES = 512 * 2**20
"""CUDA context when the catalog gives none: vLLM 0.19's worker-init snapshot on an H100 shows
``cuda_memory=0.51GiB`` before any tensor is allocated."""
