"""Offload to host memory (issue 13 item 4): weights streamed over the host link, a host KV
store, their figures by hand, zero offload leaving every figure as it was, and the workbook
recomputing the new columns in independent engines."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planner import service
from planner.cli import cli
from planner.compute.inputs import INFERENCE_INPUTS, parse_inputs
from planner.compute.table import graph
from planner.core.errors import ValidationError
from planner.service import Workspace
from planner.spec import catalog
from tests.io.test_report import N_INFERENCE, compare_outputs, formulas_values, workbook_values
from tests.libreoffice import recalculate, soffice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
GPUS = catalog.load_gpus()
LLAMA3_8B_WEIGHTS_B = 16_060_522_496
"""Llama-3-8B bf16 weights, docs/formulas.md golden table."""
GOLDEN_24GIB = dict(batch=6, prompt_tokens=8192, output_tokens=1, reserve_gib=3.0,
                    reserve_fraction=0.0)
"""The demo scenario llama3-8b-24gib-6x8k (RTX 4090, 24 GiB): KV budget 6.0425 GiB → 6
sequences of 8192 tokens."""
OFFLOAD_COLUMNS = ("weight_offload_bytes_per_gpu", "weights_on_gpu_bytes_per_gpu",
                   "kv_offload_bytes_per_token", "kv_offload_tokens", "kv_offload_sequences",
                   "held_sequences", "host_weight_stream_s", "weight_offload_bytes_per_token",
                   "kv_swap_in_bytes_per_gpu", "kv_swap_in_s", "kv_swap_in_ttft_ratio",
                   "step_host_link_s")

ZERO_WITHOUT_OFFLOAD = ("weight_offload_bytes_per_gpu", "host_weight_stream_s",
                        "weight_offload_bytes_per_token", "step_host_link_s",
                        "kv_offload_tokens", "kv_offload_sequences")


def _estimate(model: str, gpu: str, **inputs: Any) -> dict[str, Any]:
    return service.estimate(catalog.resolve_model_spec(model), GPUS[gpu], inputs)


def test_weight_offload_frees_kv_budget_and_adds_the_stream_by_hand() -> None:
    """Llama-3-8B bf16 on the 24 GiB RTX 4090, 3 GiB reserved, 8192-token sequences, a quarter
    of the weights in host memory over a 32 GB/s PCIe Gen4 x16 link:

    * offloaded 16,060,522,496 · 0.25 = 4,015,130,624 B; on the GPU 12,045,391,872 B;
    * KV budget 24 GiB − 3 GiB − 12,045,391,872 = 25,769,803,776 − 3,221,225,472 −
      12,045,391,872 = 10,503,186,432 B (9.78 GiB, was 6.0425 GiB) → floor(9.78) = 9 sequences
      of 1 GiB (was 6); headroom at batch 6: 10,503,186,432 − 6 GiB = 4,060,735,488 B;
    * every forward pass streams 4,015,130,624 B / 32e9 B/s = 0.125472832 s, added to TTFT,
      TPOT and the batch prefill; per decoded token at batch 6, 4,015,130,624 / 6 B cross the
      link."""
    base = _estimate("llama-3-8b", "rtx-4090", **GOLDEN_24GIB)
    off = _estimate("llama-3-8b", "rtx-4090", **GOLDEN_24GIB, weight_offload_fraction=0.25)
    assert off["weights_bytes_per_gpu"] == base["weights_bytes_per_gpu"] == LLAMA3_8B_WEIGHTS_B
    assert off["weight_offload_bytes_per_gpu"] == 4_015_130_624
    assert off["weights_on_gpu_bytes_per_gpu"] == 12_045_391_872
    assert off["kv_budget_bytes"] == 10_503_186_432
    assert (base["max_concurrent_sequences"], off["max_concurrent_sequences"]) == (6, 9)
    assert off["kv_headroom_bytes"] == 4_060_735_488 and off["fits"]
    stream = 4_015_130_624 / 32e9
    assert stream == pytest.approx(0.125472832, rel=1e-15)
    assert off["host_weight_stream_s"] == pytest.approx(stream, rel=1e-15)
    assert off["weight_offload_bytes_per_token"] == pytest.approx(4_015_130_624 / 6, rel=1e-15)
    for name in ("ttft_s", "tpot_s", "batch_prefill_s"):
        assert off[name] == pytest.approx(base[name] + stream, rel=1e-12), name
    assert off["tpot_memory_s"] == base["tpot_memory_s"]  # the stream is outside max(c, m)
    assert off["decode_tokens_per_s"] == pytest.approx(6 / (base["tpot_s"] + stream), rel=1e-12)
    # the link is the whole story at this size: 7.97 tokens/s per sequence at most
    assert off["decode_tokens_per_s"] < 6 / stream


def test_tensor_and_pipeline_parallel_stream_and_kv_shards_by_hand() -> None:
    """Llama-3-8B on 4 H100s, tp 2 × pp 2, half the weights offloaded over a 64 GB/s PCIe Gen5
    link, 1 GiB of host KV per GPU, batch 4:

    * weights per GPU 16,060,522,496 / 4 = 4,015,130,624 B; offloaded 2,007,565,312 B;
    * a token passes 2 stages, each streaming its share: 2,007,565,312 · 2 / 64e9 =
      0.062736416 s per forward pass (the 2 TP ranks stream at once over their own links);
    * the replica moves 2,007,565,312 · 4 GPUs / 4 sequences = 2,007,565,312 B per token;
    * host KV per token per GPU: 131,072 · ceil(8/2)/8 / 2 = 32,768 B, so 1 GiB holds
      1,073,741,824 / 32,768 = 32,768 tokens of the replica;
    * swapping back a 1024-token prompt: 1024 · 32,768 = 33,554,432 B per GPU, 33,554,432 /
      64e9 = 0.000524288 s."""
    out = _estimate("llama-3-8b", "h100-sxm", gpus=4, tp=2, pp=2, batch=4,
                    weight_offload_fraction=0.5, kv_offload_gib=1, host_link_gb_per_s=64)
    assert out["weights_bytes_per_gpu"] == 4_015_130_624
    assert out["weight_offload_bytes_per_gpu"] == 2_007_565_312
    assert out["host_weight_stream_s"] == pytest.approx(0.062736416, rel=1e-15)
    assert out["weight_offload_bytes_per_token"] == 2_007_565_312
    assert out["kv_offload_bytes_per_token"] == 32_768
    assert out["kv_offload_tokens"] == 32_768
    assert out["kv_swap_in_bytes_per_gpu"] == 33_554_432
    assert out["kv_swap_in_s"] == pytest.approx(0.000524288, rel=1e-15)


def test_host_kv_store_adds_tokens_and_sequences_held_by_hand() -> None:
    """The 24 GiB golden scenario with 64 GiB of host memory for KV per GPU:
    64 · 2^30 / 131,072 B per token = 524,288 tokens; 64 GiB / 1 GiB per 8192-token sequence
    = 64 sequences parked beside the 6 that run: 70 held. The running figures do not move
    (attention reads KV from GPU memory). Bringing a prompt back costs its KV, 8192 · 131,072 =
    1,073,741,824 B, over 32 GB/s: 0.033554432 s, against a prefill of the same prompt
    (``kv_swap_in_ttft_ratio`` = swap-in / TTFT)."""
    base = _estimate("llama-3-8b", "rtx-4090", **GOLDEN_24GIB)
    out = _estimate("llama-3-8b", "rtx-4090", **GOLDEN_24GIB, kv_offload_gib=64)
    assert (out["kv_offload_tokens"], out["kv_offload_sequences"]) == (524_288, 64)
    assert out["held_sequences"] == 70
    assert out["kv_swap_in_bytes_per_gpu"] == 1_073_741_824
    assert out["kv_swap_in_s"] == pytest.approx(0.033554432, rel=1e-15)
    assert out["kv_swap_in_ttft_ratio"] == pytest.approx(0.033554432 / out["ttft_s"],
                                                         rel=1e-12)
    for name in graph("inference").outputs:
        if name not in OFFLOAD_COLUMNS:
            assert out[name] == base[name], name
    assert 0 < out["kv_swap_in_ttft_ratio"] < 1  # fetching 8192 tokens beats prefilling them


def test_qwen3_next_swap_in_carries_the_fixed_state() -> None:
    """A linear-attention model brings its fixed state back with its KV: Qwen3-Next-80B-A3B
    holds 39,518,208 B of Gated DeltaNet state per sequence (docs/formulas.md) and 24 KiB of KV
    per token in its full-attention layers, so a 1000-token prompt is 1000 · 24,576 +
    39,518,208 = 64,094,208 B on one GPU."""
    spec = catalog.spec_from_file(Path(__file__).parents[1] / "fixtures" / "hf_configs"
                                  / "qwen3-next-80b-a3b-instruct.json",
                                  "qwen3-next-80b-a3b-instruct")
    out = service.estimate(spec, GPUS["h200"], {"prompt_tokens": 1000, "kv_offload_gib": 1})
    assert out["state_bytes_per_sequence"] == 39_518_208
    assert out["kv_bytes_per_token"] == 24_576
    assert out["kv_swap_in_bytes_per_gpu"] == 64_094_208


def test_serving_engine_pool_and_step_carry_the_offload() -> None:
    """vLLM on an H100 with a quarter of Llama-3-8B offloaded over 32 GB/s: the KV pool grows by
    the 4,015,130,624 offloaded bytes; every engine step carries the 0.125472832 s stream (its
    own ``step_host_link_s`` part and the fixed part of the fixed point), so the offline
    maximum falls."""
    inputs = dict(engine="vllm", prompt_tokens=1024, output_tokens=128)
    base = _estimate("llama-3-8b", "h100-sxm", **inputs)
    off = _estimate("llama-3-8b", "h100-sxm", **inputs, weight_offload_fraction=0.25)
    assert off["engine_weights_bytes_per_gpu"] == pytest.approx(
        base["engine_weights_bytes_per_gpu"] - 4_015_130_624, abs=1e-3)
    assert off["engine_kv_bytes_per_gpu"] == pytest.approx(
        base["engine_kv_bytes_per_gpu"] + 4_015_130_624, abs=1e-3)
    assert off["engine_kv_tokens"] > base["engine_kv_tokens"]
    assert base["step_host_link_s"] == 0
    assert off["step_host_link_s"] == pytest.approx(0.125472832, rel=1e-15)
    assert off["serving_step_fixed_s"] == pytest.approx(base["serving_step_fixed_s"]
                                                        + 0.125472832, rel=1e-12)
    # offline is the closed loop at the full batch: its mean step of prefill and decode-only
    # steps, each holding the fixed part (and so the stream) once
    assert off["step_s"] == pytest.approx(off["closed_loop_step_s"], rel=1e-12)
    assert off["closed_loop_decode_step_s"] > 0.125472832
    assert off["closed_loop_prefill_step_s"] > 0.125472832
    assert off["tpot_mean_s"] > base["tpot_mean_s"] + 0.12
    assert off["saturation_output_tokens_per_s"] < base["saturation_output_tokens_per_s"]


def _demo_inference_scenarios() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(name, model, gpu, inputs) of every inference scenario of the shipped demo fleet."""
    data = tomllib.loads((catalog.seeds_dir() / "fleets.toml").read_text(encoding="utf-8"))
    out = []
    for fleet in data["fleets"]:
        for item in fleet["scenarios"]:
            if item.get("kind", "inference") != "inference":
                continue
            inputs = {k: v for k, v in item.items()
                      if k not in ("name", "notes", "model", "gpu", "option_of", "chosen")}
            out.append((item["name"], item["model"], item["gpu"], inputs))
    return out


@pytest.mark.parametrize("link", [32.0, 64.0, 450.0])
def test_zero_offload_leaves_every_golden_figure_exactly(link: float) -> None:
    """No offload: every output of every inference scenario of the demo fleet (the golden
    figures of docs/formulas.md) is bit-for-bit what it is without the offload inputs, whatever
    the host link; the offloaded bytes, the stream and the host capacity are 0
    (``held_sequences`` is the GPU's own)."""
    cases = _demo_inference_scenarios()
    assert len(cases) == 8  # five worked examples, and the 70B chat option group
    for name, model, gpu, inputs in cases:
        spec = catalog.resolve_model_spec(model)
        base = service.estimate(spec, GPUS[gpu], inputs)
        zero = service.estimate(spec, GPUS[gpu], {
            **inputs, "weight_offload_fraction": 0, "kv_offload_gib": 0,
            "host_link_gb_per_s": link})
        for column in graph("inference").outputs:
            if column not in OFFLOAD_COLUMNS:
                assert zero[column] == base[column], (name, column)
        assert [zero[n] for n in ZERO_WITHOUT_OFFLOAD] == [0] * 6, name
        assert zero["held_sequences"] == zero["max_concurrent_sequences"]
        assert zero["weights_on_gpu_bytes_per_gpu"] == zero["weights_bytes_per_gpu"]
        # what a swap-in would cost is shown either way: the prompt's KV over the link
        assert zero["kv_swap_in_s"] == zero["kv_swap_in_bytes_per_gpu"] / (link * 1e9)
    golden = dict(zip([c[0] for c in cases], cases, strict=True))["llama3-8b-24gib-6x8k"]
    out = service.estimate(catalog.resolve_model_spec(golden[1]), GPUS[golden[2]], golden[3])
    # 6.0425 GiB → 6 sequences of 8192 tokens (docs/formulas.md)
    assert (out["kv_budget_bytes"], out["max_concurrent_sequences"]) == (6_488_055_808, 6)


@pytest.mark.parametrize(("field", "raw", "allowed"), [
    ("weight_offload_fraction", 1.5, "a number from 0 to 1"),
    ("weight_offload_fraction", -0.1, "a number from 0 to 1"),
    ("kv_offload_gib", -1, "a number from 0 to 1,000,000"),
    ("host_link_gb_per_s", 0, "a number above 0 and at most 100,000"),
])
def test_bad_offload_inputs_name_the_field_and_range(field: str, raw: Any,
                                                     allowed: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_inputs(INFERENCE_INPUTS, {field: raw})
    assert caught.value.field == field and allowed in str(caught.value)


@pytest.mark.libreoffice
def test_offload_recomputes_in_excel_engines(ws: Workspace, tmp_path: Path) -> None:
    """Offload scenarios on the roofline, vLLM (open loop, with pp) and SGLang (closed loop):
    every output cell the workbook computes, the new columns included, equals Python's in the
    formulas engine and in LibreOffice."""
    assert soffice() is not None, "LibreOffice is required: .ci/run installs libreoffice-calc"
    ws.new_fleet("offload")
    cases = {
        "roofline-4090": dict(model="llama-3-8b", gpu="rtx-4090", **GOLDEN_24GIB,
                              weight_offload_fraction=0.25, kv_offload_gib=64),
        "vllm-pp": dict(model="llama-3-70b", gpu="h100-pcie", engine="vllm", gpus=4, tp=2,
                        pp=2, weight_offload_fraction=0.1, kv_offload_gib=128,
                        host_link_gb_per_s=64, target_requests_per_s=0.5),
        "sglang-closed": dict(model="mixtral-8x7b", gpu="h200", engine="sglang", gpus=2, tp=2,
                              concurrency=16, weight_offload_fraction=0.3,
                              host_link_gb_per_s=450, kv_offload_gib=200),
    }
    for name, fields in cases.items():
        ws.new_scenario("offload", name, **fields)
    path = tmp_path / "offload.xlsx"
    ws.export(path, ["offload"])
    scenarios = ws.scenarios("offload")
    expected = ws.evaluate_many(scenarios)
    assert expected[0]["kv_budget_bytes"] == 10_503_186_432
    assert all(e["host_weight_stream_s"] > 0 for e in expected)
    assert compare_outputs(formulas_values(path), scenarios, expected) == 3 * N_INFERENCE
    recalculated = recalculate(path, tmp_path / "lo")
    assert compare_outputs(workbook_values(recalculated), scenarios, expected) == \
        3 * N_INFERENCE


def test_estimate_command_shows_the_offload() -> None:
    """``planner estimate`` shows the weights split between host and GPU, the host KV store
    and the stream beside each latency bound (the README's example); without offload none of
    these lines appear."""
    args = ["estimate", "--model", "llama-3-8b", "--gpu", "rtx-4090", "--prompt", "8192",
            "--output", "1", "--reserve-gib", "3", "--reserve-fraction", "0", "--batch", "6"]
    plain = CliRunner().invoke(cli, args)
    result = CliRunner().invoke(cli, [*args, "--weight-offload-fraction", "0.25",
                                      "--kv-offload-gib", "64"])
    assert plain.exit_code == result.exit_code == 0, result.output
    for line in ("in host memory (streamed every pass)", "3.7394 GiB", "on the GPU",
                 "11.2181 GiB", "KV budget", "9.7819 GiB", "524,288 tokens",
                 "sequences held, GPU + host", "33.55 ms", "+ 125.47 ms host link"):
        assert line in result.stdout, line
        assert line == "KV budget" or line not in plain.stdout, line
    assert "6.0425 GiB" in plain.stdout
