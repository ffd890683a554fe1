"""The planner command: help text, --json contracts, and errors that exit 2 without a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.compute.inputs import INFERENCE_INPUTS
from tests.helpers import run

ESTIMATE_KEYS = {"weights_bytes_per_gpu", "kv_bytes_per_token", "kv_budget_bytes",
                 "max_concurrent_sequences", "token_capacity", "fits", "prefill_flops",
                 "request_flops", "ttft_s", "tpot_s", "e2e_latency_s", "throughput_tokens_per_s",
                 "cost_usd_per_hour", "cost_usd_per_million_output_tokens"}
TRAIN_KEYS = {"train_flops", "train_time_s", "gpu_hours", "cost_usd", "trainable_params",
              "memory_bytes_per_gpu"}


@pytest.mark.slow
def test_top_level_help_lists_commands() -> None:
    code, out, _ = run("--help")
    assert code == 0
    for command in ("estimate", "train", "model", "gpu"):
        assert command in out
    assert "GiB = 2^30 B" in out


def test_estimate_help_documents_every_input() -> None:
    code, out, _ = run("estimate", "--help")
    assert code == 0
    flat = " ".join(out.split())
    for column in INFERENCE_INPUTS:
        assert "--" + column.name.replace("_", "-") in flat, column.name
        assert column.allowed() in flat, column.name
    assert "--prompt" in flat
    assert "[tokens; an integer from 1 to 100,000,000; default: 1024]" in flat
    assert "--gpu-memory-gib" in flat


def test_model_inspect_json_contract() -> None:
    code, out, _ = run("model", "inspect", "llama-3-8b", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["name"] == "llama-3-8b" and data["model_type"] == "llama"
    assert data["params"]["total"] == 8_030_261_248
    assert {"total", "active", "embedding", "attention", "mlp", "norm", "lm_head"} <= set(
        data["params"])
    assert data["kv_bytes_per_token"] == 131_072
    assert all(isinstance(v, int) for v in data["params"].values())


def test_model_inspect_config_path_and_kv_dtype() -> None:
    path = Path(__file__).parents[2] / "seeds" / "models" / "llama-2-7b.json"
    code, out, _ = run("model", "inspect", str(path), "--kv-dtype", "fp8", "--json")
    assert code == 0
    assert json.loads(out)["kv_bytes_per_token"] == 262_144


def test_model_inspect_reports_state_and_vision_tower() -> None:
    fixtures = Path(__file__).parents[1] / "fixtures" / "hf_configs"
    code, out, _ = run("model", "inspect", str(fixtures / "qwen3-next-80b-a3b-instruct.json"),
                       "--json")
    assert code == 0
    data = json.loads(out)
    assert data["state_bytes_per_sequence"] == 39_518_208
    assert data["kv_bytes_per_token"] == 24_576
    assert data["architecture"]["linear_attention_layers"] == 36
    assert data["vision_params"] == 0
    code, out, _ = run("model", "inspect", str(fixtures / "gemma-3-4b-it.json"), "--json")
    data = json.loads(out)
    assert (data["params"]["total"], data["vision_params"]) == (3_880_263_168, 419_816_304)
    assert data["state_bytes_per_sequence"] == 0
    code, out, _ = run("model", "inspect", str(fixtures / "gemma-3-4b-it.json"))
    assert code == 0 and "419,816,304 params" in out and "vision tower" in out


def test_estimate_json_contract_and_golden_case() -> None:
    code, out, _ = run("estimate", "--model", "llama-3-8b", "--gpu-memory-gib", "24",
                       "--gpu-tflops", "200", "--gpu-bandwidth-gbs", "1000", "--reserve-gib", "3",
                       "--reserve-fraction", "0", "--prompt", "8192", "--output", "1", "--batch",
                       "6", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) >= ESTIMATE_KEYS
    assert data["max_concurrent_sequences"] == 6
    assert data["fits"] is True
    assert data["kv_bytes_per_token"] == 131_072


def test_estimate_human_output_has_units() -> None:
    code, out, _ = run("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm")
    assert code == 0
    for text in ("14.9575 GiB", "128.00 KiB", "16.55 TFLOPs", "tokens/s", "$2.50",
                 "example price", "compute bound", "memory bound"):
        assert text in out, text


def test_train_json_contract() -> None:
    code, out, _ = run("train", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--gpus", "8",
                       "--tokens", "2e9", "--zero-stage", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) >= TRAIN_KEYS
    assert data["train_flops"] == 6 * 6_607_077_376 * 2e9
    code, out, _ = run("train", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--lora-rank", "8",
                       "--lora-targets", "q,v", "--json")
    assert json.loads(out)["trainable_params"] == 4_194_304


@pytest.mark.parametrize(("args", "message"), [
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--prompt", "0"),
     "prompt_tokens must be an integer from 1 to 100,000,000 (got '0')"),
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--mfu", "1.5"),
     "mfu must be a number above 0 and at most 1"),
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--kv-dtype", "int4"),
     "kv_dtype must be one of auto, bf16, fp16, fp8, int8"),
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--batch", "2.5"),
     "batch must be an integer from 1"),
    (("estimate", "--model", "llama-9", "--gpu", "h100-sxm"),
     "unknown model 'llama-9'; did you mean"),
    (("estimate", "--model", "llama-3-8b", "--gpu", "h900"),
     "unknown GPU 'h900'; did you mean h200?"),
    (("estimate", "--model", "llama-3-8b"), "give a catalog GPU name, or all of"),
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "3", "--tp", "2"),
     "gpus: must be a multiple of tp*pp = 2"),
    (("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpu-tflops", "-1"),
     "gpu_tflops: must be a number above 0"),
    (("estimate", "--model", "/nonexistent/config.json", "--gpu", "h100-sxm"), "cannot be read"),
    (("model", "inspect", "llama-3-8b", "--kv-dtype", "fp4"), "kv_dtype: must be one of"),
    (("train", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--zero-stage", "4"),
     "zero_stage must be an integer from 0 to 3"),
    (("train", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--lora-rank", "8",
      "--lora-targets", "wq"), "lora_targets: must name modules of llama-3-8b"),
])
def test_bad_input_exits_2_naming_the_field(args: tuple[str, ...], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert message in " ".join(err.split())
    assert "Traceback" not in err + out


@pytest.mark.slow
def test_console_script_runs() -> None:
    exe = Path(sys.executable).parent / "planner"
    assert exe.exists(), "the planner console script is not installed next to this Python"
    proc = subprocess.run([str(exe), "gpu", "list", "--json"], capture_output=True, text=True,
                          check=True)
    names = {g["name"] for g in json.loads(proc.stdout)}
    assert {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "b200", "l40s", "l4",
            "t4", "rtx-4090", "mi300x", "a100-80gb-pcie", "h100-nvl", "h20", "a10", "l20", "mi325x",
            "mi355x", "b300", "gb200", "gaudi3", "tpu-v5e", "tpu-v5p", "tpu-v6e"} <= names


SERVING_CONTRACT = ("--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "2", "--tp", "1",
                    "--engine", "vllm", "--gpu-memory-utilization", "0.9",
                    "--max-num-batched-tokens", "8192", "--max-num-seqs", "256",
                    "--max-model-len", "8192", "--kv-dtype", "fp8", "--json")
SERVING_KEYS = {"output_tokens_per_s", "requests_per_s", "ttft_mean_s", "ttft_p50_s",
                "ttft_p99_s", "tpot_mean_s", "e2e_mean_s", "saturation_requests_per_s",
                "meets_slo", "replicas_needed", "saturation_output_tokens_per_s"}


def test_estimate_serving_contract() -> None:
    """The scripted contract: an engine's settings give its KV token capacity (whole vLLM
    blocks of 16 fp8 tokens); at a request rate or a concurrency, the latency and throughput
    figures under load."""
    code, out, _ = run("estimate", *SERVING_CONTRACT)
    assert code == 0
    idle = json.loads(out)
    assert idle["token_capacity"] == idle["engine_kv_tokens"]
    assert idle["token_capacity"] % 16 == 0 and idle["token_capacity"] > 500_000
    assert idle["inputs"]["engine"] == "vllm"
    assert set(idle) >= SERVING_KEYS
    # an fp8 KV cache holds twice the bf16 tokens of the same pool, to the block
    code, out, _ = run("estimate", *SERVING_CONTRACT[:-3], "--json")
    bf16 = json.loads(out)
    assert abs(idle["token_capacity"] - 2 * bf16["token_capacity"]) <= 16
    code, out, _ = run("estimate", *SERVING_CONTRACT, "--target-requests-per-s", "4",
                       "--slo-ttft-s", "1", "--slo-percentile", "50")
    loaded = json.loads(out)
    assert code == 0 and loaded["requests_per_s"] == pytest.approx(4.0)
    assert loaded["ttft_p99_s"] >= loaded["ttft_p50_s"] > 0
    assert loaded["meets_slo"] is True
    assert loaded["saturation_requests_per_s"] > 4
    code, out, _ = run("estimate", *SERVING_CONTRACT, "--concurrency", "64")
    closed = json.loads(out)
    assert code == 0 and closed["output_tokens_per_s"] > loaded["output_tokens_per_s"]
    assert closed["saturation_output_tokens_per_s"] == loaded["saturation_output_tokens_per_s"]


def test_estimate_roofline_engine_keeps_todays_figures() -> None:
    """engine roofline (the default) gives the figures the planner gave before engines."""
    base = ("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--batch", "32", "--json")
    default = json.loads(run(*base)[1])
    roofline = json.loads(run(*base, "--engine", "roofline")[1])
    for key in ("token_capacity", "requests_per_s", "max_concurrent_sequences", "ttft_s"):
        assert default[key] == roofline[key]
    assert default["token_capacity"] == 467_291


def test_a_rate_may_be_written_per_minute_hour_or_day() -> None:
    """``--target-requests-per-s 2000/min`` is 33.3 requests/s; an unknown period is refused
    with the periods allowed."""
    code, out, _ = run("estimate", *SERVING_CONTRACT, "--target-requests-per-s", "2000/min")
    assert code == 0
    assert json.loads(out)["inputs"]["target_requests_per_s"] == pytest.approx(2000 / 60)
    code, _, err = run("estimate", *SERVING_CONTRACT, "--target-requests-per-s", "9/week")
    assert code == 2 and "target_requests_per_s" in err and "/min" in err
