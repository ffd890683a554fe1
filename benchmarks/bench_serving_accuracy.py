"""Benchmark: accuracy of the serving-engine model against published measurements.

Scores every record of ``serving_perf_dev.json`` (throughput, TTFT, TPOT) and every start-up of
``vllm_kv_dev.json`` (KV-cache tokens) with BOTH today's roofline columns
(``throughput_tokens_per_s``, ``ttft_s``, ``tpot_s``, ``token_capacity`` of
``scenario.INFERENCE``) and the engine model (``SERVING``), and prints the median and p90
``|predicted/measured - 1|`` per benchmark mode, engine and GPU, side by side. It prints; it
does not assert. Records that cannot be scored are listed with the reason.

Measurements are read from ``tests/fixtures/measurements/`` (the published development set,
with sources), or from the folder ``--measurements DIR`` names (files of the same format).

    python -m benchmarks.bench_serving_accuracy [--details] [--measurements DIR]

Mapping choices (explicit, never silent):

* GPUs: "A100-SXM4 (memory size not stated)" is scored as ``a100-80gb`` (the GPUStack lab's
  other A100 rows say 80GB); "H100 80GB" start-ups as ``h100-sxm``; every other name maps one
  to one. H20 is in the shipped catalog; RTX 3090 comes from
  ``tests/fixtures/serving_gpus.toml`` (not in the shipped catalog).
* Models: quantized checkpoints use their base model's config (same architecture) with the
  weight dtype of the record; "fp8" on A100 runs weight-only (bf16 compute, fp8 bytes), which
  ``compute_dtype`` already resolves. AWQ int4: group 128 scales.
* KV dtype: the engines' default (model dtype, bf16) wherever the record says "not stated".
* Engine defaults by the engine version's documented rules (vLLM 0.11 ``max_num_seqs`` 1024 /
  ``max_num_batched_tokens`` 8192 on H100/H200, 256 / 2048 on A100; SGLang
  ``mem_fraction_static`` as printed, else 0.88; TRT-LLM ``free_gpu_memory_fraction`` 0.95 as
  the offline table states "in many cases", 0.9 for trtllm-serve; ``max_batch_size`` 2048).
* Modes: burst = closed loop with ``concurrency = num_requests``; fixed concurrency = closed
  loop; offline = the saturation output rate; single request = closed loop at 1, scored on
  ``(S + G) / e2e`` because the Qwen3 "speed" table counts prompt and generated tokens.
  Roofline: ``batch = min(clients, max_concurrent_sequences)`` (today's columns need a batch).
* In burst and offline modes TTFT is mostly queueing; only throughput is scored there.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from planner.catalog import gpus_from_toml, load_gpus, spec_from_file
from planner.service import scenario_columns
from planner.sheet.calibration import Predictor, Run, run_row, run_table
from planner.sheet.inputs import INFERENCE_INPUTS, parse_inputs
from planner.sheet.table import graph

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "fixtures" / "serving_configs"
GPU_CATALOG = {**load_gpus(), **gpus_from_toml(ROOT / "tests" / "fixtures" / "serving_gpus.toml")}
"""The shipped catalog plus the GPUs the measurements need that it does not list yet (H20,
RTX 3090)."""

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
}
GPUS = {
    "H100-SXM5-80GB": "h100-sxm", "H200-SXM-141GB": "h200", "A100-SXM4-80GB": "a100-80gb",
    "A100-SXM4 (memory size not stated)": "a100-80gb", "H20-96GB": "h20",
    "NVIDIA GeForce RTX 3090 (24 GB)": "rtx-3090", "NVIDIA A100 80GB": "a100-80gb",
}


MEASUREMENTS = ROOT / "tests" / "fixtures" / "measurements"


def config_path(model: str) -> Path:
    """The config.json fixture of a measurement's model id (KeyError when unmapped)."""
    name = MODELS[model.split(" (")[0]]
    return Path(name + ".json") if name.startswith("/") else CONFIGS / f"{name}.json"


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
"""Benchmark modes of the development set -> run modes of :mod:`planner.sheet.calibration`."""


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


def perf_record(r: dict[str, Any], kv_dtype: str | None = None) -> dict[str, Any]:
    """Predictions (old and new) and measured figures for one serving_perf record
    (``kv_dtype`` overrides the engine-default KV dtype, for a sensitivity check). The engine
    model's figures come from the calibration's own mapping of a run to a scenario
    (:func:`planner.sheet.calibration.run_row`), so this benchmark scores what a fit starts
    from."""
    run = record_run(r, kv_dtype)
    row, _pairs, _why = run_row(run)
    assert row is not None, r["id"]
    spec = spec_from_file(Path(run.model))
    predictor = Predictor(run_table([run]), {run.model: spec}, GPU_CATALOG)
    predicted = dict(zip(predictor.metrics, predictor.predict(None), strict=True))
    measured = dict(zip(predictor.metrics, predictor.measured, strict=True))
    # today's roofline columns need a batch: min(clients, what fits)
    engine, clients = row["engine"], int(row["concurrency"])
    base = {"tp": row["tp"], "pp": row["pp"], "gpus": row["gpus"],
            "weight_dtype": row["weight_dtype"], "prompt_tokens": row["prompt_tokens"],
            "output_tokens": row["output_tokens"]}
    if kv_dtype:
        base["kv_dtype"] = kv_dtype
    inputs = {**run.settings, "concurrency": float(clients)}
    first = evaluate(r["model"], run.gpu, engine, base, inputs)
    fit = max(1, int(first["max_concurrent_sequences"]))
    base["batch"] = fit if clients == 0 else max(1, min(clients, fit))
    old = evaluate(r["model"], run.gpu, "roofline", base, inputs)
    s, g = float(r["input_tokens"]["value"]), float(r["output_tokens"]["value"])
    res: dict[str, Any] = {"mode": r["benchmark_mode"], "engine": engine, "gpu": run.gpu,
                           "id": r["id"], "pairs": {}}
    if "prompt_plus_output_tok_s_single_request" in r["metrics"]:
        res["pairs"]["throughput"] = (
            r["metrics"]["prompt_plus_output_tok_s_single_request"],
            (s + g) / float(old["e2e_latency_s"]),
            predicted["throughput"] * (s + g) / g)
        return res
    res["pairs"]["throughput"] = (measured["throughput"], float(old["throughput_tokens_per_s"]),
                                  predicted["throughput"])
    if "ttft" in predicted:
        res["pairs"]["ttft"] = (measured["ttft"], float(old["ttft_s"]), predicted["ttft"])
        res["pairs"]["tpot"] = (measured["tpot"], float(old["tpot_s"]), predicted["tpot"])
    return res


def kv_record(r: dict[str, Any]) -> dict[str, Any]:
    """KV-cache tokens (old ``token_capacity`` and new ``engine_token_capacity``) for one vLLM
    start-up."""
    gpu_name = gpu_for(r["gpu_type"])
    tp = int(r["tensor_parallel_size"])
    v0 = r["engine"] == "V0"
    # 0: the engine's default (planner.estimator.derived); V0 without chunked prefill: its own
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
    if not errors:
        return "      -       -"
    a = np.abs(np.array(errors)) * 100
    return f"{np.median(a):6.1f}% {np.percentile(a, 90):6.1f}%"


def main(argv: list[str] | None = None) -> None:
    """Score every record and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--details", action="store_true", help="print every record")
    parser.add_argument("--measurements", type=Path, default=MEASUREMENTS,
                        help="folder holding serving_perf_dev.json and vllm_kv_dev.json")
    args = parser.parse_args(argv)
    folder = args.measurements
    print(f"measurements: {folder}")

    print("\n== vLLM start-ups: KV-cache tokens (GPU KV cache size) ==")
    print(f"{'record':64} {'logged':>9} {'old':>9} {'err':>7} {'new':>9} {'err':>7}")
    for r in json.loads((folder / "vllm_kv_dev.json").read_text()):
        k = kv_record(r)
        old_err, new_err = k["old"] / k["logged"] - 1, k["new"] / k["logged"] - 1
        print(f"{k['id'][:64]:64} {k['logged']:9d} {k['old']:9.0f} "
              f"{old_err:+7.1%} {k['new']:9.0f} {new_err:+7.1%}")

    data = json.loads((folder / "serving_perf_dev.json").read_text())
    groups: dict[tuple[str, str, str, str], dict[str, list[float]]] = defaultdict(
        lambda: {"old": [], "new": []})
    unscored: list[tuple[str, str]] = []
    for r in data["records"]:
        try:
            res = perf_record(r)
        except KeyError as exc:
            unscored.append((r["id"], f"no mapping for {exc.args[0]!r}"))
            continue
        for metric, (measured, old, new) in res["pairs"].items():
            key = (res["mode"], res["engine"], res["gpu"], metric)
            groups[key]["old"].append(old / measured - 1)
            groups[key]["new"].append(new / measured - 1)
            if args.details:
                print(f"{res['id'][:70]:70} {metric:10} meas {measured:10.4g} "
                      f"old {old:10.4g} new {new:10.4g}")

    print("\n== Serving records: |predicted/measured - 1|, median and p90 ==")
    print(f"{'mode':26} {'engine':7} {'gpu':10} {'metric':10} {'n':>3}   "
          f"{'old median':>10} {'old p90':>7}   {'new median':>10} {'new p90':>7}")
    overall: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
        lambda: {"old": [], "new": []})
    for key in sorted(groups):
        mode, engine, gpu, metric = key
        e = groups[key]
        overall[(mode, metric)]["old"] += e["old"]
        overall[(mode, metric)]["new"] += e["new"]
        print(f"{mode:26} {engine:7} {gpu:10} {metric:10} {len(e['new']):3d}   "
              f"{_stats(e['old'])}     {_stats(e['new'])}")
    print("\n== By mode and metric (all engines and GPUs) ==")
    for (mode, metric), e in sorted(overall.items()):
        print(f"{mode:26} {metric:10} {len(e['new']):3d}   old {_stats(e['old'])}   "
              f"new {_stats(e['new'])}")
    print("\n== Sensitivity: TRT-LLM offline records with an fp8 KV cache ==")
    print("(the records say 'not stated (ModelOpt FP8 checkpoint; FP8 KV likely but unverified)';"
          " the tables above use the engine default, bf16)")
    for gpu in ("h100-sxm", "h200"):
        errs = {"old": [], "new": []}
        for r in data["records"]:
            if r["benchmark_mode"] != "offline_max_throughput" or gpu_for(r["gpu"]) != gpu:
                continue
            measured, old, new = perf_record(r, kv_dtype="fp8")["pairs"]["throughput"]
            errs["old"].append(old / measured - 1)
            errs["new"].append(new / measured - 1)
        print(f"offline_max_throughput     trtllm  {gpu:10} throughput {len(errs['new']):3d}   "
              f"{_stats(errs['old'])}     {_stats(errs['new'])}")
    print(f"\nunscored records: {len(unscored)}")
    for rid, why in unscored:
        print(f"  {rid}: {why}")
    print("not scored by design: TTFT/TPOT of burst records (queueing of the whole burst), "
          "latency of offline records (none published)")


if __name__ == "__main__":
    main()
