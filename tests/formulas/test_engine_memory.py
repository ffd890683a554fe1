"""The engine memory model reproduces six logged vLLM start-ups (``GPU KV cache size``).

Records: ``tests/fixtures/measurements/vllm_kv_dev.json`` (sources and verbatim log lines in
each record). Settings the logs do not print take vLLM's documented defaults for the version:
V1 on H100-class parts ``max_num_batched_tokens`` 8192 / ``max_num_seqs`` 1024, on A100 2048 /
256 (``engine/arg_utils.py``); V0 0.6 without chunked prefill profiles
``max(max_model_len, 2048)`` tokens for 256 sequences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.compute.graph import FormulaGraph
from planner.compute.inputs import INFERENCE_INPUTS, SERVING_INPUTS, parse_inputs
from planner.compute.table import graph
from planner.formulas import engine_memory as em
from planner.formulas import scenario
from planner.formulas.serving_columns import SERVING, contract_inference
from planner.service import estimate, scenario_columns
from planner.spec.catalog import load_gpus, spec_from_file
from planner.spec.gpu import gpu_figures

ROOT = Path(__file__).resolve().parents[2]
RECORDS = {r["id"]: r for r in json.loads(
    (ROOT / "tests/fixtures/measurements/vllm_kv_dev.json").read_text())}
CONFIGS = {
    "meta-llama/Llama-3.1-8B-Instruct": "tests/fixtures/serving_configs/llama-3.1-8b-instruct.json",
    "Qwen/Qwen2.5-7B-Instruct": "tests/fixtures/serving_configs/qwen2.5-7b-instruct.json",
    "Qwen/Qwen2-7B-Instruct": "tests/fixtures/serving_configs/qwen2-7b-instruct.json",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "seeds/models/mixtral-8x7b.json",
}
GPUS = {"NVIDIA GeForce RTX 3090 (24 GB)": "rtx-3090", "NVIDIA A100 80GB": "a100-80gb"}
CATALOG = load_gpus()
GRAPH = graph("inference")

# record id -> (logged "GPU KV cache size" tokens, this model's prediction, pinned)
EXPECTED = {
    "vllm-issue10517-llama31-8b-rtx3090-20k": (31_232, 31_312),
    "llmd-meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192": (476_016, 478_912),
    "llmd-meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192": (1_044_688, 1_050_544),
    "llmd-qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--8192": (1_096_000, 1_104_608),
    "llmd-mistralai-mixtral-8x7b-i--h100-80gb--tp2pp1dp1--8192": (465_936, 468_128),
    "dennislee22-qwen2-7b-a100-80gb-tp1-gmu0.5": (464_848, 463_392),
}


def start_up(record: dict[str, Any]) -> dict[str, Any]:
    """What ``planner estimate --engine vllm`` computes for one logged start-up's settings
    (vLLM V0 without chunked prefill takes its own limits; V1 the engine's defaults)."""
    gpu = CATALOG[GPUS.get(record["gpu_type"], "h100-sxm")]
    model = CONFIGS[record["model"].split(" (")[0]]
    tp = record["tensor_parallel_size"]
    v0 = record["engine"] == "V0"
    inputs = {
        "engine": "vllm", "tp": tp, "gpus": tp,
        "gpu_memory_utilization": record["gpu_memory_utilization"],
        "max_model_len": record["max_model_len"],
        "max_num_seqs": record["max_num_seqs"] or (256 if v0 else 0),
        "max_num_batched_tokens": record["max_num_batched_tokens"] or (2048 if v0 else 0),
        "chunked_prefill": not v0, "vllm_v0_accounting": v0,
    }
    return estimate(spec_from_file(ROOT / model), gpu, inputs)


def test_records_are_the_six_published_start_ups() -> None:
    assert set(RECORDS) == set(EXPECTED)
    for rid, (logged, _) in EXPECTED.items():
        assert RECORDS[rid]["logged"]["kv_cache_tokens"] == logged


@pytest.mark.parametrize("rid", sorted(EXPECTED))
def test_kv_tokens_within_one_percent_of_the_log(rid: str) -> None:
    logged, pinned = EXPECTED[rid]
    out = start_up(RECORDS[rid])
    tokens = out["engine_token_capacity"]
    assert tokens == pinned
    assert abs(tokens / logged - 1) < 0.01
    assert tokens % 16 == 0  # whole vLLM blocks


def test_profile_run_pieces_match_the_logged_breakdown() -> None:
    """vLLM 0.19 logs weights, activation peak and non-torch memory separately."""
    gib = 2**30
    out = start_up(RECORDS["llmd-meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192"])
    assert out["engine_weights_bytes_per_gpu"] / gib == pytest.approx(14.99, abs=0.01)
    assert out["non_torch_bytes"] / gib == pytest.approx(0.25)
    assert out["activation_peak_bytes"] / gib == pytest.approx(1.89, rel=0.25)
    tp2 = start_up(RECORDS["llmd-meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192"])
    assert tp2["non_torch_bytes"] / gib == pytest.approx(2.07)
    # V0 0.6: peak_torch 17.06 GiB includes the 14.99 GiB of weights: 2.07 GiB of activations
    v0 = start_up(RECORDS["vllm-issue10517-llama31-8b-rtx3090-20k"])
    assert v0["profile_tokens"] == 20_000
    assert v0["forward_activation_bytes"] / gib == pytest.approx(2.07, rel=0.01)
    assert v0["engine_kv_bytes_per_gpu"] / gib == pytest.approx(3.81, rel=0.01)


def test_kv_tokens_shrink_as_max_model_len_grows_without_chunked_prefill() -> None:
    record = dict(RECORDS["vllm-issue10517-llama31-8b-rtx3090-20k"])
    tokens = []
    for length in (8192, 20_000, 35_000):
        record["max_model_len"] = length
        tokens.append(start_up(record)["engine_token_capacity"])
    assert tokens[0] > tokens[1] > tokens[2]


def test_roofline_engine_keeps_todays_token_capacity() -> None:
    out = start_up(RECORDS["llmd-meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192"])
    gpu = load_gpus()["h100-sxm"]
    columns = {
        **scenario_columns(spec_from_file(ROOT / CONFIGS["meta-llama/Llama-3.1-8B-Instruct"]),
                           gpu, parse_inputs(INFERENCE_INPUTS, {})),
        "engine": "roofline"}
    today = FormulaGraph(scenario.ROOFLINE_INFERENCE, scenario.DERIVED_INFERENCE).compute(
        columns)
    contract_graph = FormulaGraph(contract_inference(scenario.ROOFLINE_INFERENCE),
                                  scenario.DERIVED_INFERENCE)
    contract = contract_graph.compute(columns)
    assert contract["engine_token_capacity"] == today["token_capacity"]
    assert contract["token_capacity"] == today["token_capacity"]
    assert contract["requests_per_s"] == today["requests_per_s"]
    assert out["token_capacity"] == out["engine_kv_tokens"] != today["token_capacity"]
    vllm = contract_graph.compute({**columns, "engine": "vllm"})
    assert vllm["token_capacity"] == vllm["engine_kv_tokens"]


def test_other_engines_subtract_what_their_source_says() -> None:
    gib = 2**30
    base = start_up(RECORDS["llmd-meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192"])
    usable = gpu_figures(load_gpus()["h100-sxm"])["gpu_usable_memory_bytes"]
    weights = base["engine_weights_bytes_per_gpu"]
    sglang = em.engine_kv_bytes_per_gpu(em.SGLANG, 0, usable, 0.9, 0.88, 0.9, weights,
                                        base["activation_peak_bytes"], 0.51 * gib, 0)
    assert sglang == pytest.approx(0.88 * usable - weights - 0.51 * gib)
    trt = em.engine_kv_bytes_per_gpu(em.TRTLLM, 0, usable, 0.9, 0.88, 0.9, weights,
                                     gib, 0.51 * gib, 0)
    assert trt == pytest.approx(0.9 * (usable - weights - gib - 0.51 * gib))
    # weights that do not fit leave a negative pool and no tokens
    assert em.engine_kv_tokens(-gib, 131072, 16, em.VLLM, 32, 0, 0) == 0


def test_engine_inputs_are_complete_data() -> None:
    """Every column the serving formulas read is an input of the registry, a derived input, a
    model or GPU figure (or a speculative draft model's, planner/compute/draft.py); every serving
    input has help, a unit and a default in range."""
    from planner.compute.draft import DRAFT_FIGURES

    g = graph("inference")
    needed = g.required_inputs([f.__name__ for f in SERVING])
    inference = {c.name for c in INFERENCE_INPUTS}
    assert all(n in inference or n in DRAFT_FIGURES
               or n.startswith(("model_", "gpu_", "decode_gpu_"))  # decode_gpu: issue 25
               for n in needed), needed
    for col in SERVING_INPUTS:
        assert col.help and col.unit
        if col.kind in ("int", "float"):
            assert col.minimum is not None and col.maximum is not None
            assert col.minimum <= col.default <= col.maximum


def test_data_parallel_attention_pools_kv_and_replicates_attention_weights() -> None:
    """Qwen3-235B-A22B at TP 8 has 4 KV heads: TP replicates each head on two GPUs, DP
    attention does not; its attention projections (94 * 4096 * (64+64+4+4)*128 weights) are
    then whole on every GPU."""
    from planner.spec.figures import model_figures

    spec = spec_from_file(ROOT / "tests/fixtures/serving_configs/qwen3-235b-a22b.json")
    f = model_figures(spec)
    assert em.kv_fraction_per_gpu(0.25, 8, 0) == 0.25
    assert em.kv_fraction_per_gpu(0.25, 8, 1) == 1 / 8
    extra = em.attention_replicated_bytes_per_gpu(
        1, 8, 1, f.model_hidden_size, f.model_attn_flops_per_pair_full,
        f.model_attn_flops_per_pair_window, f.model_kv_elems_per_token_full,
        f.model_kv_elems_per_token_window, f.model_attn_matmul_params_other, 8)
    assert extra == pytest.approx(94 * 4096 * 136 * 128 * 7 / 8)
    assert em.attention_replicated_bytes_per_gpu(
        0, 8, 1, f.model_hidden_size, f.model_attn_flops_per_pair_full,
        f.model_attn_flops_per_pair_window, f.model_kv_elems_per_token_full,
        f.model_kv_elems_per_token_window, f.model_attn_matmul_params_other, 8) == 0
