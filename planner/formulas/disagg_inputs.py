"""A disaggregated deployment's inputs, pools and cost: the serving mode, each pool's TP, EP,
attention DP and decode GPU, the workers and GPUs of each pool, and what they cost an hour.

Why this module exists: every other disaggregated module (:mod:`planner.formulas.disagg_prefill`,
:mod:`~planner.formulas.disagg_decode`, :mod:`~planner.formulas.disagg_kv_pools`,
:mod:`~planner.formulas.disagg_load`) reads a pool's parallelism and GPU from these derived
inputs, and the contract outputs ``deployment_gpus`` and ``cost_usd_per_hour`` take both pools'
GPUs and prices from here. The model is described in :mod:`planner.formulas.disagg`.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`); quantities are per worker unless the name says otherwise;
times in seconds.
"""

from __future__ import annotations

from planner.formulas import derived
from planner.formulas.ops import Value, lookup, where
from planner.spec.gpu import GpuSpec, gpu_figures

AGGREGATED, DISAGGREGATED = 0, 1
"""``serving_mode_code`` values."""
SERVING_MODES: dict[str, int] = {"aggregated": AGGREGATED, "disaggregated": DISAGGREGATED}
POOL_ATTENTION_DP_CODES: dict[str, int] = {"follow": -1, "on": 1, "off": 0}
"""``<pool>_attention_dp`` choices: -1 follow the scenario's ``attention_dp``."""
DECODE_GPU_SAME = "same"
"""``decode_gpu`` value meaning the scenario's own GPU."""
_HUGE = 1e12


def decode_gpu_figures(gpu: GpuSpec, decode: GpuSpec) -> dict[str, float]:
    """The decode pool's GPU figures as scenario columns: every figure of
    :func:`planner.spec.gpu.gpu_figures` under ``decode_gpu_<figure>`` (the price as
    ``decode_gpu_price_usd_per_gpu_hour``), and ``decode_gpu_same`` 1 when the decode GPU is
    the scenario's (needed for one NVLink domain to join both pools). Not a column."""
    out = {f"decode_{k}" if k.startswith("gpu_") else f"decode_gpu_{k}": float(v)
           for k, v in gpu_figures(decode).items()}
    out["decode_gpu_same"] = 1.0 if decode.name == gpu.name else 0.0
    return out


# ------------------------------------------------------------------- derived inputs


def serving_mode_code(serving_mode: Value) -> Value:
    """0 aggregated, 1 disaggregated (:data:`SERVING_MODES`)."""
    return lookup(serving_mode, SERVING_MODES)


def prefill_tp_effective(prefill_tp: Value, tp: Value) -> Value:
    """TP of a prefill worker: ``prefill_tp``, or the scenario's ``tp`` when 0."""
    return where(prefill_tp > 0, prefill_tp, tp)


def decode_tp_effective(decode_tp: Value, tp: Value) -> Value:
    """TP of a decode worker: ``decode_tp``, or the scenario's ``tp`` when 0."""
    return where(decode_tp > 0, decode_tp, tp)


def prefill_ep_effective(prefill_ep: Value, ep: Value) -> Value:
    """EP of a prefill worker: ``prefill_ep``, or the scenario's ``ep`` when 0."""
    return where(prefill_ep > 0, prefill_ep, ep)


def decode_ep_effective(decode_ep: Value, ep: Value) -> Value:
    """EP of a decode worker: ``decode_ep``, or the scenario's ``ep`` when 0."""
    return where(decode_ep > 0, decode_ep, ep)


def prefill_attention_dp_number(prefill_attention_dp: Value,
                                attention_dp_number: Value) -> Value:
    """1 where the prefill workers run data-parallel attention (``on``, or ``follow`` and
    the scenario's ``attention_dp``)."""
    code = lookup(prefill_attention_dp, POOL_ATTENTION_DP_CODES)
    return where(code < 0, attention_dp_number, code)


def decode_attention_dp_number(decode_attention_dp: Value,
                               attention_dp_number: Value) -> Value:
    """1 where the decode workers run data-parallel attention (``on``, or ``follow`` and the
    scenario's ``attention_dp``)."""
    code = lookup(decode_attention_dp, POOL_ATTENTION_DP_CODES)
    return where(code < 0, attention_dp_number, code)


def decode_gpu_flops_per_s(matmul_path_code: Value, decode_gpu_bf16_peak: Value,
                           decode_gpu_fp16_peak: Value, decode_gpu_fp8_peak: Value,
                           decode_gpu_int8_peak: Value, decode_gpu_int4_peak: Value,
                           decode_gpu_nvfp4_peak: Value, decode_gpu_mxfp4_peak: Value) -> Value:
    """Dense tensor peak of one decode GPU on the scenario's matmul path
    (:func:`planner.formulas.derived.gpu_flops_per_s` of the decode GPU's peaks)."""
    return derived.gpu_flops_per_s(matmul_path_code, decode_gpu_bf16_peak, decode_gpu_fp16_peak,
                                   decode_gpu_fp8_peak, decode_gpu_int8_peak,
                                   decode_gpu_int4_peak, decode_gpu_nvfp4_peak,
                                   decode_gpu_mxfp4_peak)


def decode_gpu_matmul_efficiency(matmul_path_code: Value, decode_gpu_fp8_peak: Value,
                                 decode_gpu_int8_peak: Value, decode_gpu_int4_peak: Value,
                                 decode_gpu_nvfp4_peak: Value, decode_gpu_mxfp4_peak: Value,
                                 decode_gpu_matmul_efficiency_16bit: Value,
                                 decode_gpu_matmul_efficiency_8bit: Value,
                                 decode_gpu_flops_per_s: Value, decode_gpu_bf16_peak: Value,
                                 decode_gpu_fp16_peak: Value) -> Value:
    """The decode GPU's achievable GEMM share at its compute dtype
    (:func:`planner.formulas.derived.gpu_matmul_efficiency`)."""
    bits = derived.gpu_compute_bits(matmul_path_code, decode_gpu_fp8_peak, decode_gpu_int8_peak,
                                    decode_gpu_int4_peak, decode_gpu_nvfp4_peak,
                                    decode_gpu_mxfp4_peak)
    return derived.gpu_matmul_efficiency(bits, decode_gpu_matmul_efficiency_16bit,
                                         decode_gpu_matmul_efficiency_8bit,
                                         decode_gpu_flops_per_s, decode_gpu_bf16_peak,
                                         decode_gpu_fp16_peak)


DERIVED: tuple = (serving_mode_code, prefill_tp_effective, decode_tp_effective,
                  prefill_ep_effective, decode_ep_effective, prefill_attention_dp_number,
                  decode_attention_dp_number, decode_gpu_flops_per_s,
                  decode_gpu_matmul_efficiency)
"""The derived inputs of this module, in dependency order (after ``attention_dp_number`` and
``matmul_path_code``)."""


# ------------------------------------------------------------------- pools and cost


def prefill_workers_effective(prefill_workers: Value, replicas: Value) -> Value:
    """Prefill workers: ``prefill_workers``, or the scenario's replicas when 0."""
    return where(prefill_workers > 0, prefill_workers, replicas)


def decode_workers_effective(decode_workers: Value, replicas: Value) -> Value:
    """Decode workers: ``decode_workers``, or the scenario's replicas when 0."""
    return where(decode_workers > 0, decode_workers, replicas)


def prefill_gpus(prefill_workers_effective: Value, prefill_tp_effective: Value,
                 pp: Value) -> Value:
    """GPUs of the prefill pool: ``workers * prefill_tp * pp``."""
    return prefill_workers_effective * prefill_tp_effective * pp


def decode_gpus(decode_workers_effective: Value, decode_tp_effective: Value, pp: Value) -> Value:
    """GPUs of the decode pool: ``workers * decode_tp * pp``."""
    return decode_workers_effective * decode_tp_effective * pp


def deployment_gpus(serving_mode_code: Value, gpus: Value, prefill_gpus: Value,
                    decode_gpus: Value) -> Value:
    """GPUs the deployment holds: ``gpus`` aggregated; both pools' disaggregated."""
    return where(serving_mode_code == DISAGGREGATED, prefill_gpus + decode_gpus, gpus)


def disagg_cost_usd_per_hour(prefill_gpus: Value, price_usd_per_gpu_hour: Value,
                             decode_gpus: Value, decode_gpu_price_usd_per_gpu_hour: Value
                             ) -> Value:
    """Hourly cost of the two pools, each at its GPU's price (USD/h)."""
    return prefill_gpus * price_usd_per_gpu_hour + decode_gpus * decode_gpu_price_usd_per_gpu_hour


def cost_usd_per_hour(gpus: Value, price_usd_per_gpu_hour: Value, serving_mode_code: Value,
                      disagg_cost_usd_per_hour: Value) -> Value:
    """Hourly cost of the deployment (USD/h): ``gpus * price`` aggregated
    (:func:`planner.formulas.cost.cost_usd_per_hour`), both pools' disaggregated."""
    return where(serving_mode_code == DISAGGREGATED, disagg_cost_usd_per_hour,
                 gpus * price_usd_per_gpu_hour)


COST: tuple = (prefill_workers_effective, decode_workers_effective, prefill_gpus, decode_gpus,
               deployment_gpus, disagg_cost_usd_per_hour)
"""The pool sizes and their cost, before ``cost_usd_per_hour``."""
