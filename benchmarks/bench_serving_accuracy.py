"""Benchmark: accuracy of the serving-engine model against published measurements,
cross-validated by source group.

Scores, with the planner's defaults, every scorable aggregated run of the development files in
``--measurements DIR`` (default ``../shared/measurements``, the public data kept beside the
project; never copied into the repository):

* ``serving_perf_dev.json`` (GPUStack ``vllm bench serve`` runs, TRT-LLM 1.0 offline tables,
  the Qwen3 speed table),
* ``aic_silicon_dev.json`` (NVIDIA AIConfigurator silicon rows: mean TTFT/TPOT at fixed
  concurrency),
* ``inferencex_dsr1_dev.json`` (InferenceX DeepSeek-R1 runs: mean TTFT, TPOT, E2E and output
  tokens/s per GPU),
* ``vllm_kv_dev.json`` (vLLM start-up logs: KV-cache tokens),

and prints per mode, engine, GPU, concurrency band and metric the count, median and p90 of
``|predicted/measured - 1|`` and the signed median of ``predicted/measured - 1``, then the same
by metric, by band and by source group. It prints; it does not assert. Runs that cannot be
scored are counted with the reason.

    python -m benchmarks.bench_serving_accuracy [--measurements DIR] [--details] [--cv-fit]
        [--inferencex-lengths] [--mtp-script-drafts]

Cross-validation. A source group is one publication or one silicon set: GPUStack, TRT-LLM
1.0, Qwen3 speed, AIC rows by GPU, InferenceX rows by GPU. The default figures scores every
group with the planner's defaults; no default of the model is fitted to these runs (each input
default and GPU figure cites a datasheet, engine code or a measurement outside them; where a
default was read off one of these groups the input's help says so, and ``--cv-fit`` removes
that dependence). ``--cv-fit`` is the calibrated check: for each group ``g``, the calibration
parameters (:data:`planner.compute.calibration.PARAMETERS`) are fitted per GPU and engine on the
runs of every OTHER group and ``g`` is scored with them (its defaults where no other group has
that GPU and engine), so no fitted value has seen the group it scores.

Mapping (explicit, never silent; the issue-23 mapping for AIC and InferenceX rows):

* InferenceX MTP rows (``spec_decoding`` mtp) of aggregated runs are scored with
  ``spec_method = mtp`` at the method's defaults (one draft token; acceptance length 1.875
  from the DeepSeek-V3 report's 85-90 %: the runs publish no acceptance rate, and none is
  fitted to them) in mode ``mtp``, source groups ``InferenceX MTP <gpu>``; ``--cv-fit`` fits
  on runs without speculation only; disaggregated MTP runs the same way, the decode workers
  drafting and verifying (mode ``mtp disagg``, groups ``InferenceX MTP <gpu> disagg``, fitted
  on disaggregated runs without speculation). Disaggregated rows (mode
  ``disagg``, :mod:`planner.formulas.disagg`): ``serving_mode = disaggregated`` with each
  pool's workers, TP (GPUs per worker), EP and attention DP as published (AIC: ``tp *
  attention_dp`` GPUs per worker as for its aggregated rows; InferenceX: ``*_tp``, checked
  against ``num_*_gpu``), the scenario's own ``tp``/``gpus``/``ep`` the decode worker's; the
  measured throughput of an InferenceX disaggregated run is its per-GPU output rate times its
  decode GPUs (:func:`ix_disagg_case`). Engine from ``engine`` (Dynamo-orchestrated rows by their
  backend; AMD ATOM has no engine model: not scored). Fixed lengths ISL/OSL,
  ``output_tokens_cv`` 0 (``--inferencex-lengths``: the runs of InferenceX origin at the
  lengths their client drew, uniform over ``[0.8 L, L]``, :func:`inferencex_lengths`);
  ``concurrency = max_concurrency`` (closed loop).
* GPUs: AIC ``tp * pp * attention_dp`` of the one worker (with attention DP > 1 the planner's
  ``tp`` is that GPU count with ``attention_dp`` on, experts over ``moe_ep``); InferenceX
  ``decode_tp`` GPUs (``decode_dp_attention``, ``decode_ep`` as given); measured throughput =
  output tokens/s per GPU times those GPUs. An AIC row with more clients than its worker's
  ``batch_size`` on every attention-DP rank (8 rows: 448 clients on a TP2 worker of batch 14,
  with a published TTFT of 0.75 s, no queue) ran several workers it does not count: not scored.
* Weights from ``gemm_quant_mode``/``moe_quant_mode`` (``fp8``/``fp8_block`` fp8, ``nvfp4``
  nvfp4, ``int4_wo`` int4, none bf16); InferenceX ``fp4`` is nvfp4 on NVIDIA parts and mxfp4 on
  AMD (the MXFP4 checkpoint AMD publishes).
* KV dtype: fp8 where the engine's launch default for that checkpoint is fp8, else the model
  dtype. InferenceX: fp8 (its launch scripts set it on these parts, measurements README).
  TRT-LLM with fp8/nvfp4 weights: fp8 (TRT-LLM serves ModelOpt checkpoints, whose
  ``hf_quant_config.json`` sets ``kv_cache_quant_algo: FP8``; ``KvCacheConfig.dtype`` ``auto``
  takes it), except Qwen's own FP8 checkpoints in the GPUStack runs (no KV quantization in
  their config). vLLM and SGLang: ``kv_cache_dtype auto`` = the model dtype.
* Models: quantized checkpoints use their base model's config (same architecture);
  Llama-3.1-70B uses the Llama-3.3-70B config (same architecture), DeepSeek-R1 and
  DeepSeek-V3.1 the DeepSeek-V3 seed, MiniMax-M2.5 ``configs-2026/MiniMax-M2.7.json`` (same
  architecture, ``configs-2026/SOURCES.md``); a config whose ``model_type`` the planner does
  not read yet is not scored. gpt-oss-120b: ``tests/fixtures/serving_configs/gpt-oss-120b.json``
  (its checkpoint's own MXFP4 scheme, :data:`NATIVE_QUANT`).
* serving_perf records as before: GPU names ("A100-SXM4 (memory size not stated)" as
  ``a100-80gb``), engine defaults by the engine version's documented rules (vLLM 0.11
  ``max_num_seqs`` 1024 / ``max_num_batched_tokens`` 8192 on H100/H200, 256 / 2048 on A100;
  SGLang ``mem_fraction_static`` as printed, else 0.88; TRT-LLM ``free_gpu_memory_fraction``
  0.95 as the offline table states "in many cases", 0.9 for trtllm-serve). Modes: burst =
  closed loop with ``concurrency = num_requests``; fixed concurrency = closed loop (finite run
  of ``num_requests``, :mod:`planner.compute.harness`); offline = the saturation output rate;
  single request = closed loop at 1, scored on output tokens/s (the table's prompt + output
  "speed" times ``G / (S + G)``). Burst and offline TTFT are queueing for the whole run: only
  throughput is scored there.
* Front ends (:mod:`planner.formulas.frontends`): each engine's own HTTP server; NVIDIA's
  own AIC rows ("Dynamo + engine") the Dynamo frontend's latency (``request_latency_s``;
  they publish no throughput, so its serialized work does not enter).
* Finite runs: InferenceX runs (and AIC rows of InferenceX origin) are ``10 c`` requests
  (:data:`INFERENCEX_REQUESTS_PER_CLIENT`), scored as the finite run they are
  (:mod:`planner.compute.harness`: drain, and the first wave's mean TTFT).
* InferenceX runs publish output tokens/s per GPU always, the mean TTFT, TPOT and E2E on
  some (the others give medians and tails only): means are scored where published (the
  statistic the model predicts), never a median in their place.
* Bands of concurrent clients: 1-4, 8-32, 64-256, >256; offline, burst and single are their
  own band.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from planner.compute.calibration import Predictor, Run, run_table
from planner.compute.inputs import INFERENCE_INPUTS, parse_inputs
from planner.compute.table import graph
from planner.core.errors import PlannerError
from planner.formulas.frontends import FRONTENDS
from planner.service import scenario_columns
from planner.spec.catalog import load_gpus, spec_from_file

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "fixtures" / "serving_configs"
SHARED = ROOT.parent / "shared"
"""The public data kept beside the project (``../shared``: measurements, configs-2026)."""
GPU_CATALOG = load_gpus()
"""The shipped catalog (``seeds/gpus.toml``), which lists every GPU the measurements use."""

MODELS = {
    "Qwen/Qwen3-8B": "qwen3-8b", "Qwen/Qwen3-8B-FP8": "qwen3-8b",
    "Qwen/Qwen3-14B": "qwen3-14b", "Qwen/Qwen3-14B-FP8": "qwen3-14b",
    "Qwen/Qwen3-14B-AWQ": "qwen3-14b",
    "Qwen/Qwen3-32B": "qwen3-32b", "Qwen/Qwen3-32B-FP8": "qwen3-32b",
    "Qwen/Qwen3-32B-AWQ": "qwen3-32b",
    "Qwen/Qwen3-30B-A3B": "qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B-FP8": "qwen3-30b-a3b",
    "Qwen/Qwen3-235B-A22B": "qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "Qwen/Qwen3-235B-A22B-Instruct-2507": "qwen3-235b-a22b",
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": "qwen3-235b-a22b",
    "nvidia/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b-instruct",
    "nvidia/Llama-3.3-70B-Instruct-FP8": "llama-3.3-70b-instruct",
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b-instruct",
    "Qwen/Qwen2.5-7B-Instruct": "qwen2.5-7b-instruct",
    "Qwen/Qwen2-7B-Instruct": "qwen2-7b-instruct",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": str(ROOT / "seeds" / "models" / "mixtral-8x7b"),
    # AIC and InferenceX rows (same architecture as the config named; module docstring)
    "meta-llama/Llama-3.1-70B": "llama-3.3-70b-instruct",
    "nvidia/Qwen3-32B-NVFP4": "qwen3-32b",
    "deepseek-ai/DeepSeek-V3": str(ROOT / "seeds" / "models" / "deepseek-v3"),
    "deepseek-ai/DeepSeek-R1": str(ROOT / "seeds" / "models" / "deepseek-v3"),
    "nvidia/DeepSeek-V3.1-NVFP4": str(ROOT / "seeds" / "models" / "deepseek-v3"),
    "moonshotai/Kimi-K2.5": str(SHARED / "configs-2026" / "Kimi-K2.5"),
    "MiniMaxAI/MiniMax-M2.5": str(SHARED / "configs-2026" / "MiniMax-M2.7"),
    "Qwen/Qwen3.5-397B-A17B": str(SHARED / "configs-2026" / "Qwen3.5-397B-A17B"),
    "zhipuai/GLM-5": str(SHARED / "configs-2026" / "GLM-5"),
    "openai/gpt-oss-120b": "gpt-oss-120b",
}
NATIVE_QUANT = {"openai/gpt-oss-120b"}
"""Checkpoints published only quantized (gpt-oss: MXFP4 experts, 16-bit attention, its
``quantization_config``): scored with ``weight_dtype auto`` whatever quant-mode label the
source gives (AIC labels these rows ``nvfp4``), and no ModelOpt KV quantization."""
GPUS = {
    "H100-SXM5-80GB": "h100-sxm", "H200-SXM-141GB": "h200", "A100-SXM4-80GB": "a100-80gb",
    "A100-SXM4 (memory size not stated)": "a100-80gb", "H20-96GB": "h20",
    "NVIDIA GeForce RTX 3090 (24 GB)": "rtx-3090", "NVIDIA A100 80GB": "a100-80gb",
    "B200-SXM-180GB": "b200", "GB200 (B200 in NVL72, 186GB)": "gb200",
    "MI355X-288GB": "mi355x",
}


MEASUREMENTS = SHARED / "measurements"


def config_path(model: str) -> Path:
    """The config.json fixture of a measurement's model id (KeyError when unmapped)."""
    name = MODELS[model.split(" (")[0]]
    return Path(name + ".json") if name.startswith("/") else CONFIGS / f"{name}.json"


def model_config_name(case: Case) -> str:
    """The config a case is scored with, by its file name: a ``configs-2026`` model
    (``MiniMax-M2.7``, ``Qwen3.5-397B-A17B``, ``Kimi-K2.5``, ``GLM-5``, read from
    ``../shared/configs-2026``) or a fixture / seed config (:data:`MODELS`)."""
    path = Path(case.run.model)
    return path.parent.name if path.name == "config.json" else path.stem


def gpu_for(name: str) -> str:
    """Catalog GPU of a measurement's GPU name (H100 80GB variants map to h100-sxm)."""
    if name in GPUS:
        return GPUS[name]
    if "H100" in name:
        return "h100-sxm"
    raise KeyError(name)


def engine_for(engine: str) -> str:
    """Engine key of a measurement's engine label."""
    low = engine.lower()
    for key, word in (("trtllm", "tensorrt"), ("sglang", "sglang"), ("vllm", "vllm")):
        if word in low:
            return key
    raise KeyError(engine)


def weight_dtype(label: str) -> str:
    """Planner weight dtype of a record's ``weights_dtype`` label."""
    low = label.lower()
    return "int4" if "int4" in low else ("fp8" if low.startswith("fp8") else "bf16")


GRAPH = graph("inference")


def evaluate(model: str, gpu_name: str, engine: str, roofline: dict[str, Any],
             engine_inputs: dict[str, Any]) -> dict[str, Any]:
    """Both models' columns for one scenario (roofline inputs and serving inputs)."""
    gpu = GPU_CATALOG[gpu_name]
    values = parse_inputs(INFERENCE_INPUTS, roofline)
    cols = {**scenario_columns(spec_from_file(config_path(model)), gpu, values),
            **engine_inputs, "engine": engine}
    return GRAPH.compute(cols)


def _setting(text: str, key: str) -> float | None:
    m = re.search(rf"{key}\s*=?\s*([0-9.]+)", text)
    return float(m.group(1)) if m else None


MODES = {"online_burst_all_at_once": "burst", "online_fixed_concurrency": "concurrency",
         "single_request_batch1": "single", "offline_max_throughput": "offline"}
"""Benchmark modes of the development set -> run modes of :mod:`planner.compute.calibration`."""


SHAREGPT_OUTPUT_TOKENS_CV = 1.0
"""Coefficient of variation of output lengths of ShareGPT runs (``vllm bench serve
--dataset-name sharegpt``, ShareGPT_V3_unfiltered_cleaned_split.json: the completion length of
each sampled conversation caps its output). An ASSUMPTION, not a measured or fitted figure: no
published statistic of the output lengths under vllm bench's filter was found; chat answers
are long-tailed, about exponential (cv 1). Not fitted to these runs. Random datasets
(``--random-output-len`` without ``--ignore-eos``: nearly every request reaches the length)
and synthetic fixed-length ones keep cv 0."""


def record_settings(r: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run settings (model config name, GPU, engine, TP/PP/GPUs, weight dtype) and engine
    settings by scenario input name of one serving_perf record (the mapping choices above);
    ``tests/fixtures/benchruns/make_fixtures.py`` writes them as import flags."""
    engine = engine_for(r["engine"])
    tp, pp = int(r.get("tp") or 1), int(r.get("pp") or 1)
    flags = {"model": Path(MODELS[r["model"].split(" (")[0]]).name, "gpu": gpu_for(r["gpu"]),
             "engine": engine, "tp": tp, "pp": pp, "gpus": int(r.get("gpu_count") or tp * pp),
             "weight_dtype": weight_dtype(r["weights_dtype"])}
    settings: dict[str, Any] = {"max_model_len": 40960}
    if "sharegpt" in (r.get("dataset") or "").lower():
        settings["output_tokens_cv"] = SHAREGPT_OUTPUT_TOKENS_CV
    text = r.get("engine_settings") or ""
    if r.get("ep"):
        settings["ep"] = int(r["ep"])
    if engine == "sglang":
        settings["mem_fraction_static"] = _setting(text, "mem_fraction_static") or 0.88
    elif engine == "trtllm":
        settings["attention_dp"] = 1 if "enable_attention_dp true" in text else 0
        settings["free_gpu_memory_fraction"] = 0.95 if "0.95" in text else 0.9
    return flags, settings


def record_run(r: dict[str, Any], kv_dtype: str | None = None) -> Run:
    """One serving_perf record as a measured run (its published figures; single-request speed,
    which counts prompt and generated tokens, as output tokens/s ``speed * G / (S + G)``)."""
    flags, settings = record_settings(r)
    s, g = float(r["input_tokens"]["value"]), float(r["output_tokens"]["value"])
    met = r["metrics"]
    mode = MODES[r["benchmark_mode"]]
    values: dict[str, Any] = {
        **{k: v for k, v in flags.items() if k not in ("model", "gpu")}, "mode": mode,
        "kv_dtype": kv_dtype, "input_tokens": s, "output_tokens": g,
        "concurrency": r.get("max_concurrency") if mode != "single" else 1,
        "num_requests": r.get("num_requests"),
        "ttft_mean_ms": met.get("ttft_mean_ms"), "tpot_mean_ms": met.get("tpot_mean_ms"),
        "output_tokens_per_s": (met["prompt_plus_output_tok_s_single_request"] * g / (s + g)
                                if "prompt_plus_output_tok_s_single_request" in met
                                else met["output_tok_s"])}
    return Run(0, str(config_path(r["model"])), flags["gpu"], values, settings)


def kv_record(r: dict[str, Any]) -> dict[str, Any]:
    """KV-cache tokens (old ``token_capacity`` and new ``engine_token_capacity``) for one vLLM
    start-up."""
    gpu_name = gpu_for(r["gpu_type"])
    tp = int(r["tensor_parallel_size"])
    v0 = r["engine"] == "V0"
    # 0: the engine's default (planner.formulas.derived); V0 without chunked prefill: its own
    limits = ({"max_num_batched_tokens": 2048, "max_num_seqs": 256} if v0
              else {"max_num_batched_tokens": 0, "max_num_seqs": 0})
    inputs = {"tp": tp, "gpu_memory_utilization": r["gpu_memory_utilization"],
              "max_model_len": float(r["max_model_len"]),
              "max_num_seqs": float(r["max_num_seqs"] or limits["max_num_seqs"]),
              "max_num_batched_tokens": float(r["max_num_batched_tokens"]
                                              or limits["max_num_batched_tokens"]),
              "chunked_prefill": 0.0 if v0 else 1.0, "vllm_v0_accounting": 1.0 if v0 else 0.0}
    out = evaluate(r["model"], gpu_name, "vllm", {"tp": tp, "gpus": tp}, inputs)
    old = evaluate(r["model"], gpu_name, "roofline", {"tp": tp, "gpus": tp}, inputs)
    logged = r["logged"]["kv_cache_tokens"]
    return {"id": r["id"], "gpu": gpu_name, "logged": logged,
            "old": float(old["token_capacity"]), "new": float(out["token_capacity"])}


def _stats(errors: list[float]) -> str:
    """``median |e|  p90 |e|  signed median`` of relative errors, in percent."""
    if not errors:
        return f"{'-':>7} {'-':>7} {'-':>8}"
    e = np.array(errors) * 100
    a = np.abs(e)
    return f"{np.median(a):6.1f}% {np.percentile(a, 90):6.1f}% {np.median(e):+7.1f}%"


# ------------------------------------------------------------------ records -> cases


@dataclass(frozen=True, slots=True)
class Case:
    """One scorable run: its source group, table labels, the run the predictor scores, and the
    measured mean E2E (seconds) where the source gives one."""

    id: str
    group: str
    mode: str
    engine: str
    gpu: str
    band: str
    run: Run
    e2e_s: float | None = None


def band(mode: str, clients: float | None) -> str:
    """Concurrency band of a run: ``1-4``, ``8-32``, ``64-256``, ``>256`` clients; offline,
    burst and single-request runs are their own band."""
    if mode in ("offline", "burst", "single"):
        return mode
    c = float(clients or 0)
    return "1-4" if c <= 4 else "8-32" if c <= 32 else "64-256" if c <= 256 else ">256"


def _trtllm_kv(engine: str, weights: str, model: str) -> str | None:
    """KV dtype of a TRT-LLM run by its launch default (module docstring): fp8 for fp8/nvfp4
    weights except Qwen's own FP8 checkpoints; ``None`` (the model dtype) otherwise."""
    if engine != "trtllm" or weights not in ("fp8", "nvfp4"):
        return None
    return None if model.startswith("Qwen/") and model.endswith("-FP8") else "fp8"


def perf_case(r: dict[str, Any]) -> Case:
    """A serving_perf record as a case (KeyError when a name has no mapping)."""
    flags, _settings = record_settings(r)
    model = r["model"].split(" (")[0]
    kv = _trtllm_kv(flags["engine"], flags["weight_dtype"], model)
    if flags["engine"] == "trtllm" and "gpustack" in r["id"]:
        kv = None  # trtllm-serve runs of Qwen's own FP8 checkpoints
    run = record_run(r, kv)
    group = r["source_group"].split(":")[0].split(" (")[0]
    mode = str(run.values["mode"])
    return Case(r["id"], group, mode, flags["engine"], flags["gpu"],
                band(mode, run.values.get("concurrency")), run)


_AIC_WEIGHTS = {"fp8": "fp8", "fp8_block": "fp8", "nvfp4": "nvfp4", "int4_wo": "int4",
                "None": "bf16", "": "bf16"}


def aic_case(r: dict[str, Any]) -> Case:
    """An aggregated AIC silicon row as a case (KeyError when unmapped)."""
    engine = engine_for(r["engine"])
    gemm, moe = str(r.get("gemm_quant_mode")), str(r.get("moe_quant_mode"))
    weights = _AIC_WEIGHTS[gemm if gemm not in ("None", "") else moe]
    if r["model"] in NATIVE_QUANT:
        weights = "auto"
    p = r["parallelism"]
    tp, pp = int(p.get("tp_size") or 1), int(p.get("pp_size") or 1)
    dp = int(p.get("attention_dp_size") or 1)
    gpus = tp * pp * dp
    model = r["model"]
    config_path(model)
    if r.get("max_concurrency") is None:
        raise KeyError("max_concurrency")
    batch = p.get("batch_size")
    if batch and int(r["max_concurrency"]) > int(batch) * dp:
        # more clients than the worker's configured batch on every attention-DP rank, yet no
        # queueing in the published TTFT: the run had several workers whose count the row does
        # not give (e.g. 448 clients on a TP2 GB200 worker of batch 14)
        raise KeyError("replicas (max_concurrency > batch_size x attention_dp)")
    settings: dict[str, Any] = {}
    if int(p.get("moe_ep_size") or 1) > 1:
        settings["ep"] = int(p["moe_ep_size"])
    if dp > 1:
        settings["attention_dp"] = 1
    if "Dynamo" in str(r.get("origin")):  # NVIDIA's AIC runs: Dynamo's frontend + the engine
        settings["request_latency_s"] = FRONTENDS["dynamo"].request_latency_s
    gpu = gpu_for(r["gpu"])
    clients = int(r["max_concurrency"])
    met = r["metrics"]
    values = {"engine": engine, "tp": tp * dp, "pp": pp, "gpus": gpus, "mode": "concurrency",
              "weight_dtype": weights, "kv_dtype": _trtllm_kv(engine, weights, model),
              "input_tokens": r["input_tokens"]["value"],
              "output_tokens": r["output_tokens"]["value"], "concurrency": clients,
              "num_requests": (INFERENCEX_REQUESTS_PER_CLIENT * clients
                               if r["origin"].startswith("InferenceX") else None),
              "ttft_mean_ms": met.get("ttft_mean_ms"),
              "tpot_mean_ms": met.get("tpot_mean_ms"),
              "output_tokens_per_s": None}  # AIC publishes no throughput
    run = Run(0, str(config_path(model)), gpu, values, settings)
    return Case(r["id"], f"AIC {gpu}", "concurrency", engine, gpu, band("concurrency", clients),
                run)


INFERENCEX_REQUESTS_PER_CLIENT = 10
"""Requests per client of an InferenceX run: its client runs ``benchmark_serving.py
--num-prompts $(( $CONC * 10 )) --max-concurrency $CONC --request-rate inf --ignore-eos``
(InferenceMAX README, "Benchmark Client Configuration"), so a run is ``10 c`` requests whose
first ``c`` start at once. AIC rows of InferenceX origin are the same runs; NVIDIA's own AIC
rows state no request count (scored as the steady state)."""


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


MTP_SCRIPT_DRAFTS = False
"""``--mtp-script-drafts``: score MTP runs with their launch scripts' draft tokens
(:func:`ix_mtp_draft_tokens`) and the acceptance the i.i.d. model gives at that ``k`` (an
extrapolation: the DeepSeek-V3 report's 85-90 % is the second token's only); by default the
method's defaults, one draft token accepted at 87.5 % (the pair the source covers)."""


def ix_mtp_draft_tokens(engine: str, amd: bool, attention_dp: bool) -> int:
    """Draft tokens per step of an InferenceX MTP run, from its launch script
    (SemiAnalysisAI/InferenceX ``benchmarks/dsr1_*_mtp.sh``): TensorRT-LLM
    ``num_nextn_predict_layers`` 3, 1 with attention DP (``dsr1_fp8_h200_trt_mtp.sh``,
    ``dsr1_fp4_b200_trt_mtp.sh``); SGLang on NVIDIA ``--speculative-num-steps 2``
    (``dsr1_fp8_b200_mtp.sh``: 3 draft tokens with top-1 = the root and 2 drafts); SGLang on
    AMD ``--speculative-algorithm EAGLE`` without steps (``dsr1_fp8_mi355x_mtp.sh``), so
    SGLang's own choice for DeepSeek-V3 architectures, 3 steps
    (``server_args.auto_choose_speculative_params``). A configuration of the runs, not a
    fitted figure; the acceptance stays the method's default."""
    if engine == "trtllm":
        return 1 if attention_dp else 3
    return 3 if amd else 2


def ix_case(r: dict[str, Any]) -> Case:
    """An aggregated InferenceX run as a case; an MTP run (``spec_decoding`` mtp) with
    ``spec_method = mtp`` at the method's defaults (one draft token; its launch script's with
    :data:`MTP_SCRIPT_DRAFTS`, :func:`ix_mtp_draft_tokens`) and the method's default
    acceptance (:data:`planner.formulas.speculative.ACCEPTANCE_RATE`: the runs publish no
    acceptance rate, and none is fitted to them), in mode ``mtp`` and its own source group."""
    engine = engine_for(r["engine"])
    p = r["parallelism"]
    tp = int(p["decode_tp"])
    gpu = gpu_for(r["gpu"])
    amd = gpu.startswith("mi")
    weights = {"fp8": "fp8", "fp4": "mxfp4" if amd else "nvfp4"}[r["weights_precision"]]
    settings: dict[str, Any] = {}
    if int(p.get("decode_ep") or 1) > 1:
        settings["ep"] = int(p["decode_ep"])
    if p.get("decode_dp_attention"):
        settings["attention_dp"] = 1
    mtp = r.get("spec_decoding") == "mtp"
    if mtp:
        settings["spec_method"] = "mtp"
        if MTP_SCRIPT_DRAFTS:
            settings["spec_draft_tokens"] = ix_mtp_draft_tokens(
                engine, amd, bool(p.get("decode_dp_attention")))
    met = r["metrics"]
    clients = int(r["max_concurrency"])
    values = {"engine": engine, "tp": tp, "pp": 1, "gpus": tp, "mode": "concurrency",
              "weight_dtype": weights, "kv_dtype": "fp8",
              "input_tokens": r["input_tokens"]["value"],
              "output_tokens": r["output_tokens"]["value"], "concurrency": clients,
              "num_requests": INFERENCEX_REQUESTS_PER_CLIENT * clients,
              "ttft_mean_ms": _ms(met.get("mean_ttft_s")),
              "tpot_mean_ms": _ms(met.get("mean_tpot_s")),
              "output_tokens_per_s": met["output_tput_per_gpu_tok_s"] * tp}
    run = Run(0, str(config_path(r["model"])), gpu, values, settings)
    return Case(r["id"], f"InferenceX {'MTP ' if mtp else ''}{gpu}",
                "mtp" if mtp else "concurrency", engine, gpu, band("concurrency", clients), run,
                met.get("mean_e2el_s"))


def _pool(pool: str, tp: int, ep: int, dp: bool, workers: int) -> dict[str, Any]:
    """One pool's scenario inputs (issue 25): its workers, TP (the worker's GPUs), EP and
    attention DP, all explicit (none follows the scenario's)."""
    return {f"{pool}_workers": workers, f"{pool}_tp": tp, f"{pool}_ep": max(ep, 1),
            f"{pool}_attention_dp": "on" if dp else "off"}


def aic_disagg_case(r: dict[str, Any]) -> Case:
    """A disaggregated AIC silicon row as a case (KeyError when unmapped): per pool its
    workers, ``tp * attention_dp`` GPUs per worker (the aggregated rows' convention) with
    attention DP on where ``attention_dp_size > 1``, experts over ``moe_ep_size``; the
    scenario's own ``tp``/``gpus`` are the decode worker's (they carry the model's checks)."""
    engine = engine_for(r["engine"])
    gemm, moe = str(r.get("gemm_quant_mode")), str(r.get("moe_quant_mode"))
    weights = _AIC_WEIGHTS[gemm if gemm not in ("None", "") else moe]
    p = r["parallelism"]
    model = r["model"]
    config_path(model)
    if r.get("max_concurrency") is None:
        raise KeyError("max_concurrency")
    pp = int(p.get("decode_pp_size") or 1)
    if int(p.get("prefill_pp_size") or 1) != pp:
        raise KeyError("prefill_pp_size != decode_pp_size")
    settings: dict[str, Any] = {"serving_mode": "disaggregated"}
    tps = {}
    for pool in ("prefill", "decode"):
        if p.get(f"{pool}_num_workers") is None:
            raise KeyError(f"{pool}_num_workers")
        tp, dp = int(p[f"{pool}_tp_size"] or 1), int(p[f"{pool}_attention_dp_size"] or 1)
        tps[pool] = tp * dp
        settings.update(_pool(pool, tp * dp, int(p.get(f"{pool}_moe_ep_size") or 1), dp > 1,
                              int(p[f"{pool}_num_workers"])))
    settings["ep"] = settings["decode_ep"]
    settings["attention_dp"] = int(settings["decode_attention_dp"] == "on")
    if "Dynamo" in str(r.get("origin")):
        settings["request_latency_s"] = FRONTENDS["dynamo"].request_latency_s
    gpu = gpu_for(r["gpu"])
    clients = int(r["max_concurrency"])
    met = r["metrics"]
    values = {"engine": engine, "tp": tps["decode"], "pp": pp, "gpus": tps["decode"] * pp,
              "mode": "concurrency", "weight_dtype": weights,
              "kv_dtype": _trtllm_kv(engine, weights, model),
              "input_tokens": r["input_tokens"]["value"],
              "output_tokens": r["output_tokens"]["value"], "concurrency": clients,
              "num_requests": (INFERENCEX_REQUESTS_PER_CLIENT * clients
                               if r["origin"].startswith("InferenceX") else None),
              "ttft_mean_ms": met.get("ttft_mean_ms"),
              "tpot_mean_ms": met.get("tpot_mean_ms"),
              "output_tokens_per_s": None}  # AIC publishes no throughput
    run = Run(0, str(config_path(model)), gpu, values, settings)
    return Case(r["id"], f"AIC {gpu} disagg", "disagg", engine, gpu,
                band("concurrency", clients), run)


def ix_disagg_case(r: dict[str, Any]) -> Case:
    """A disaggregated InferenceX run without speculative decoding as a case: per pool
    ``*_num_workers`` workers of ``*_tp`` GPUs (``num_*_gpu / workers``, checked),
    ``*_dp_attention``, ``*_ep``; measured throughput = output tokens/s per GPU times the
    DECODE GPUs: InferenceX divides a disaggregated run's output rate by its decode GPUs, not
    by all of them (on every such run with a published mean E2E, ``c * G / E2E`` over the
    per-GPU figure is 1.0-1.15 x ``num_decode_gpu``: 8.9 for 8P + 8D at c = 1, where a
    single client cannot exceed ``G / E2E``; 18.2-18.5 for 8P + 16D; 83-85 for 8P + 72D)."""
    engine = engine_for(r["engine"])
    p = r["parallelism"]
    gpu = gpu_for(r["gpu"])
    amd = gpu.startswith("mi")
    weights = {"fp8": "fp8", "fp4": "mxfp4" if amd else "nvfp4"}[r["weights_precision"]]
    settings: dict[str, Any] = {"serving_mode": "disaggregated"}
    for pool in ("prefill", "decode"):
        tp, workers = int(p[f"{pool}_tp"]), int(p[f"{pool}_num_workers"])
        if tp * workers != int(p[f"num_{pool}_gpu"]):
            raise KeyError(f"num_{pool}_gpu != {pool}_tp * {pool}_num_workers")
        settings.update(_pool(pool, tp, int(p.get(f"{pool}_ep") or 1),
                              bool(p.get(f"{pool}_dp_attention")), workers))
    settings["ep"] = settings["decode_ep"]
    settings["attention_dp"] = int(settings["decode_attention_dp"] == "on")
    mtp = r.get("spec_decoding") == "mtp"
    if mtp:  # the decode workers draft and verify (as ix_case's aggregated MTP runs)
        settings["spec_method"] = "mtp"
        if MTP_SCRIPT_DRAFTS:
            settings["spec_draft_tokens"] = ix_mtp_draft_tokens(
                engine, amd, bool(p.get("decode_dp_attention")))
    met = r["metrics"]
    clients = int(r["max_concurrency"])
    tp = settings["decode_tp"]
    values = {"engine": engine, "tp": tp, "pp": 1, "gpus": tp, "mode": "concurrency",
              "weight_dtype": weights, "kv_dtype": "fp8",
              "input_tokens": r["input_tokens"]["value"],
              "output_tokens": r["output_tokens"]["value"], "concurrency": clients,
              "num_requests": INFERENCEX_REQUESTS_PER_CLIENT * clients,
              "ttft_mean_ms": _ms(met.get("mean_ttft_s")),
              "tpot_mean_ms": _ms(met.get("mean_tpot_s")),
              "output_tokens_per_s": met["output_tput_per_gpu_tok_s"]
              * int(p["num_decode_gpu"])}
    run = Run(0, str(config_path(r["model"])), gpu, values, settings)
    return Case(r["id"], f"InferenceX {'MTP ' if mtp else ''}{gpu} disagg",
                "mtp disagg" if mtp else "disagg", engine, gpu,
                band("concurrency", clients), run, met.get("mean_e2el_s"))


INFERENCEX_RANGE_RATIO = 0.8
"""InferenceX's random-dataset length draw: every run sets ``--random-range-ratio 0.8``
(``RANDOM_RANGE_RATIO: 0.8`` in ``.github/workflows/benchmark-tmpl.yml`` and
``benchmark-multinode-tmpl.yml``; the measurements README: "lengths are drawn from [0.8 L, L]"),
and its ``utils/bench_serving/benchmark_serving.py`` ``sample_random_requests`` draws input and
output lengths uniformly from the integers ``[int(L * ratio), L]``."""
INFERENCEX_LENGTHS = False
"""``--inferencex-lengths``: score the runs of InferenceX origin (InferenceX rows, AIC rows
copied from its database) with the lengths their client drew (:func:`inferencex_lengths`)
instead of the issue-23 mapping's fixed ISL/OSL with ``output_tokens_cv`` 0."""


def inferencex_lengths(values: dict[str, Any], settings: dict[str, Any],
                       ratio: float = INFERENCEX_RANGE_RATIO) -> None:
    """Set a case's lengths to the uniform draw over ``[ratio L, L]``
    (:data:`INFERENCEX_RANGE_RATIO`): mean input and output ``(1 + ratio)/2 * L`` and output
    coefficient of variation ``(1 - ratio) / (sqrt(3) (1 + ratio))`` (a uniform on ``[a, b]``
    has standard deviation ``(b - a)/sqrt(12)``): 0.9 L and 0.0642 at 0.8. A spread of output
    lengths spreads the clients' completions, so the closed loop's prompts no longer return
    and prefill as one cohort (:func:`planner.formulas.serving._cohort_tokens`)."""
    mean = (1 + ratio) / 2
    values["input_tokens"] = float(values["input_tokens"]) * mean
    values["output_tokens"] = float(values["output_tokens"]) * mean
    settings["output_tokens_cv"] = (1 - ratio) / (3 ** 0.5 * (1 + ratio))


def load_cases(folder: Path) -> tuple[list[Case], dict[str, int]]:
    """Every scorable case of the development files in ``folder`` and the count of records
    left out, by reason (with :data:`INFERENCEX_LENGTHS`, the runs of InferenceX origin at the
    lengths their client drew, :func:`inferencex_lengths`)."""
    cases: list[Case] = []
    left: dict[str, int] = defaultdict(int)

    def add(make: Any, r: dict[str, Any], source: str) -> None:
        try:
            case = make(r)
        except KeyError as exc:
            left[f"{source}: no mapping for {exc.args[0]!r}"] += 1
            return
        if INFERENCEX_LENGTHS and (source.startswith("inferencex")
                                   or str(r.get("origin", "")).startswith("InferenceX")):
            inferencex_lengths(case.run.values, case.run.settings)
        cases.append(case)

    for r in json.loads((folder / "serving_perf_dev.json").read_text())["records"]:
        add(perf_case, r, "serving_perf")
    for r in json.loads((folder / "aic_silicon_dev.json").read_text())["records"]:
        add(aic_case if r["serving_mode"] == "aggregated" else aic_disagg_case, r,
            "aic" if r["serving_mode"] == "aggregated" else "aic disagg")
    for r in json.loads((folder / "inferencex_dsr1_dev.json").read_text())["records"]:
        if r.get("spec_decoding") not in ("none", "mtp"):
            left[f"inferencex: speculative decoding {r.get('spec_decoding')!r}"] += 1
            continue
        add(ix_case if r["serving_mode"] == "aggregated" else ix_disagg_case, r,
            "inferencex" if r["serving_mode"] == "aggregated" else "inferencex disagg")
    return [Case(c.id, c.group, c.mode, c.engine, c.gpu, c.band,
                 Run(i, c.run.model, c.run.gpu, c.run.values, c.run.settings), c.e2e_s)
            for i, c in enumerate(cases)], dict(left)


# ------------------------------------------------------------------ scoring


def _specs(cases: list[Case], left: dict[str, int]) -> tuple[list[Case], dict[str, Any]]:
    """The cases whose model config the planner reads, and the specs by path."""
    specs: dict[str, Any] = {}
    bad: dict[str, str] = {}
    for path in sorted({c.run.model for c in cases}):
        try:
            specs[path] = spec_from_file(Path(path))
        except PlannerError as exc:
            bad[path] = str(exc).split(":")[0][:60]
    kept = []
    for c in cases:
        if c.run.model in bad:
            left[f"config not readable yet ({Path(c.run.model).name}: {bad[c.run.model]})"] = \
                left.get(f"config not readable yet ({Path(c.run.model).name}: "
                         f"{bad[c.run.model]})", 0) + 1
        else:
            kept.append(c)
    return kept, specs


Scores = dict[int, dict[str, tuple[float, float]]]
"""Case index -> metric -> (measured, predicted)."""


def _predictor(cases: list[Case], specs: dict[str, Any], left: dict[str, int]
               ) -> Predictor | None:
    """One predictor over ``cases``; a case the sheet refuses (validation) is tried alone and
    counted as left out with its reason."""
    try:
        return Predictor(run_table([c.run for c in cases]), specs, GPU_CATALOG)
    except PlannerError:
        if len(cases) == 1:
            raise
    good = []
    for c in cases:
        try:
            Predictor(run_table([c.run]), specs, GPU_CATALOG)
            good.append(c)
        except PlannerError as exc:
            left[f"refused by the sheet: {str(exc)[:70]}"] = left.get(
                f"refused by the sheet: {str(exc)[:70]}", 0) + 1
    return Predictor(run_table([c.run for c in good]), specs, GPU_CATALOG) if good else None


def score(cases: list[Case], specs: dict[str, Any], left: dict[str, int],
          params_for: Any = None) -> Scores:
    """Measured and predicted figures of every case, grouped by (GPU, engine) predictors;
    ``params_for(gpu, engine, predictor)`` gives the parameter vector (None: defaults)."""
    out: Scores = {}
    by: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for c in cases:
        by[(c.gpu, c.engine)].append(c)
    for (gpu, engine), group in sorted(by.items()):
        pred = _predictor(group, specs, left)
        if pred is None:
            continue
        for _rid, why in pred.runs.skipped:
            left[why[:90]] = left.get(why[:90], 0) + 1
        params = params_for(gpu, engine, pred) if params_for else None
        predicted = pred.predict(params)
        e2e = np.broadcast_to(np.asarray(pred.graph.compute(pred.columns(params), ["e2e_mean_s"])[
            "e2e_mean_s"], dtype=np.float64), (len(pred.runs.runs),))
        ids = [r.id for r in pred.runs.runs]
        for i, row in enumerate(pred.rows):
            rid = ids[int(row)]
            out.setdefault(rid, {})[str(pred.metrics[i])] = (float(pred.measured[i]),
                                                             float(predicted[i]))
        for k, rid in enumerate(ids):
            c = CASES[rid]
            if c.e2e_s:
                out.setdefault(rid, {})["e2e"] = (c.e2e_s, float(e2e[k]))
    return out


CASES: dict[int, Case] = {}
"""Every loaded case by its run id (filled by :func:`main`)."""


def cv_fit_scores(cases: list[Case], specs: dict[str, Any], left: dict[str, int]) -> Scores:
    """Leave-one-group-out calibrated scores (module docstring): each group scored with the
    parameters fitted per GPU and engine on every other group's runs."""
    from planner.compute.calibration import fit

    out: Scores = {}
    groups = sorted({c.group for c in cases})
    for g in groups:
        held = [c for c in cases if c.group == g]
        # the disaggregated rows calibrate the disaggregated groups only (and the aggregated
        # rows the aggregated), so adding them moved no aggregated figure; fitted on runs
        # without speculative decoding only: no fitted value has seen an MTP run
        disagg = held[0].mode.endswith("disagg")
        train = [c for c in cases if c.group != g and not c.mode.startswith("mtp")
                 and (c.mode == "disagg") == disagg]
        fitted: dict[tuple[str, str], dict[str, float]] = {}
        for key in sorted({(c.gpu, c.engine) for c in held}):
            mine = [c for c in train if (c.gpu, c.engine) == key]
            if not mine:
                continue
            try:
                pred = _predictor(mine, specs, {})
                if pred is not None:
                    fitted[key] = fit(pred).parameters
            except PlannerError:  # too few figures for the parameters: defaults
                continue

        def params_for(gpu: str, engine: str, pred: Predictor,
                       fitted: dict[tuple[str, str], dict[str, float]] = fitted) -> Any:
            p = fitted.get((gpu, engine))
            if p is None:
                return None
            return [p.get(q.name, float(x)) for q, x in zip(pred.parameters, pred.start(),
                                                               strict=True)]

        out.update(score(held, specs, left if g == groups[0] else {}, params_for))
    return out


# ------------------------------------------------------------------ tables

METRIC_ORDER = ("throughput", "ttft", "tpot", "e2e")
BAND_ORDER = ("single", "1-4", "8-32", "64-256", ">256", "burst", "offline")


EP_BAND_ORDER = ("ep1", "ep2-8", "ep>8")


def parallel_shape(case: Case) -> tuple[str, bool]:
    """A case's expert-parallel band (``ep1``, ``ep2-8``, ``ep>8``: inside an 8-GPU board or
    beyond it) and whether it runs data-parallel attention, from its scenario settings."""
    ep = int(case.run.settings.get("ep") or 1)
    band_ = "ep1" if ep <= 1 else ("ep2-8" if ep <= 8 else "ep>8")
    return band_, bool(case.run.settings.get("attention_dp"))


def _errors(scores: Scores, key: Any) -> dict[Any, list[float]]:
    out: dict[Any, list[float]] = defaultdict(list)
    for rid, metrics in scores.items():
        c = CASES[rid]
        for metric, (measured, predicted) in metrics.items():
            if measured > 0:
                out[key(c, metric)].append(predicted / measured - 1)
    return out


def print_tables(title: str, scores: Scores) -> None:
    """The four tables of one scoring (module docstring)."""
    head = f"{'n':>4}  {'median':>7} {'p90':>7} {'signed':>8}"
    print(f"\n== {title}: |pred/meas - 1| median, p90, signed median ==")
    print(f"{'mode':12} {'engine':7} {'gpu':10} {'band':7} {'metric':10} {head}")
    rows = _errors(scores, lambda c, m: (c.mode, c.engine, c.gpu, c.band, m))
    order = {b: i for i, b in enumerate(BAND_ORDER)}
    for k in sorted(rows, key=lambda k: (k[0], k[1], k[2], order[k[3]],
                                         METRIC_ORDER.index(k[4]))):
        print(f"{k[0]:12} {k[1]:7} {k[2]:10} {k[3]:7} {k[4]:10} {len(rows[k]):4d}  "
              f"{_stats(rows[k])}")
    print(f"\n-- {title}: by metric (all runs) --")
    for k, e in sorted(_errors(scores, lambda c, m: m).items(),
                       key=lambda kv: METRIC_ORDER.index(kv[0])):
        print(f"{k:10} {len(e):4d}  {_stats(e)}")
    print(f"\n-- {title}: by mode and metric (disagg: disaggregated prefill/decode) --")
    for k, e in sorted(_errors(scores, lambda c, m: (c.mode, m)).items(),
                       key=lambda kv: (kv[0][0], METRIC_ORDER.index(kv[0][1]))):
        print(f"{k[0]:12} {k[1]:10} {len(e):4d}  {_stats(e)}")
    print(f"\n-- {title}: by concurrency band and metric --")
    for k, e in sorted(_errors(scores, lambda c, m: (c.band, m)).items(),
                       key=lambda kv: (order[kv[0][0]], METRIC_ORDER.index(kv[0][1]))):
        print(f"{k[0]:8} {k[1]:10} {len(e):4d}  {_stats(e)}")
    print(f"\n-- {title}: by model config and metric --")
    for k, e in sorted(_errors(scores, lambda c, m: (model_config_name(c), m)).items(),
                       key=lambda kv: (kv[0][0], METRIC_ORDER.index(kv[0][1]))):
        print(f"{k[0][:34]:34} {k[1]:10} {len(e):4d}  {_stats(e)}")
    print(f"\n-- {title}: by expert-parallel band, attention DP and metric --")
    for k, e in sorted(_errors(scores, lambda c, m: (*parallel_shape(c), m)).items(),
                       key=lambda kv: (EP_BAND_ORDER.index(kv[0][0]), kv[0][1],
                                       METRIC_ORDER.index(kv[0][2]))):
        print(f"{k[0]:6} {'adp' if k[1] else 'tp':4} {k[2]:10} {len(e):4d}  {_stats(e)}")
    print(f"\n-- {title}: by source group and metric --")
    for k, e in sorted(_errors(scores, lambda c, m: (c.group, m)).items(),
                       key=lambda kv: (kv[0][0], METRIC_ORDER.index(kv[0][1]))):
        print(f"{k[0][:34]:34} {k[1]:10} {len(e):4d}  {_stats(e)}")


def _split_mtp(scores: Scores) -> tuple[Scores, Scores]:
    """(runs without speculative decoding, MTP runs): the MTP runs are tabled on their own
    lines, so the other tables are the figures they were before MTP runs were scored."""
    plain = {rid: m for rid, m in scores.items() if not CASES[rid].mode.startswith("mtp")}
    return plain, {rid: m for rid, m in scores.items() if CASES[rid].mode.startswith("mtp")}


def main(argv: list[str] | None = None) -> None:
    """Score every case and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--details", action="store_true", help="print every scored figure")
    parser.add_argument("--measurements", type=Path, default=MEASUREMENTS,
                        help="folder holding the development files (default ../shared/"
                             "measurements)")
    parser.add_argument("--cv-fit", action="store_true",
                        help="also score each source group with calibration parameters "
                             "fitted on the other groups (slow)")
    parser.add_argument("--inferencex-lengths", action="store_true",
                        help="score runs of InferenceX origin at the lengths their client drew "
                             "(uniform over [0.8 L, L]) instead of fixed ISL/OSL")
    parser.add_argument("--mtp-script-drafts", action="store_true",
                        help="score MTP runs with their launch scripts' draft tokens (2-3) "
                             "instead of the method's default (1)")
    args = parser.parse_args(argv)
    global MTP_SCRIPT_DRAFTS, INFERENCEX_LENGTHS
    MTP_SCRIPT_DRAFTS = args.mtp_script_drafts
    INFERENCEX_LENGTHS = args.inferencex_lengths
    folder = args.measurements
    print(f"measurements: {folder}")

    print("\n== vLLM start-ups: KV-cache tokens (GPU KV cache size) ==")
    print(f"{'record':64} {'logged':>9} {'roofline':>9} {'err':>7} {'engine':>9} {'err':>7}")
    for r in json.loads((folder / "vllm_kv_dev.json").read_text()):
        k = kv_record(r)
        old_err, new_err = k["old"] / k["logged"] - 1, k["new"] / k["logged"] - 1
        print(f"{k['id'][:64]:64} {k['logged']:9d} {k['old']:9.0f} "
              f"{old_err:+7.1%} {k['new']:9.0f} {new_err:+7.1%}")

    cases, left = load_cases(folder)
    cases, specs = _specs(cases, left)
    CASES.clear()
    CASES.update({c.run.id: c for c in cases})
    scores = score(cases, specs, left)
    if args.details:
        for rid, metrics in sorted(scores.items()):
            for metric, (measured, predicted) in metrics.items():
                print(f"{CASES[rid].id[:72]:72} {metric:10} meas {measured:10.4g} "
                      f"pred {predicted:10.4g} {predicted / measured - 1:+7.1%}")
    print(f"\nscored runs: {len(scores)} of {len(cases)} mapped "
          f"({sum(CASES[r].mode.startswith('mtp') for r in scores)} of them MTP); figures: "
          f"{sum(len(m) for m in scores.values())}")
    plain, mtp = _split_mtp(scores)
    print_tables("defaults (no value fitted to these runs)", plain)
    if mtp:
        drafts = "launch scripts' draft tokens" if MTP_SCRIPT_DRAFTS else "method's defaults"
        print_tables(f"MTP runs (spec_method mtp, the {drafts}), defaults", mtp)
    if args.cv_fit:
        cv_plain, cv_mtp = _split_mtp(cv_fit_scores(cases, specs, {}))
        print_tables("leave-one-group-out calibration", cv_plain)
        if cv_mtp:
            print_tables("MTP runs, leave-one-group-out calibration (fitted on runs without "
                         "speculation)", cv_mtp)
    print("\nnot scored:")
    for why, n in sorted(left.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d}  {why}")
    print("not scored by design: TTFT/TPOT of burst and offline runs (queueing of the whole "
          "run), E2E where the source publishes none")


if __name__ == "__main__":
    main()
