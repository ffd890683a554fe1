"""Eager prefill (planner.formulas.serving_step, issue 23): an engine that launches a prefill
step op by op from Python (SGLang 0.5.8-0.5.9, TensorRT-LLM's PyTorch backend) takes at least
the host's launch time for it. Hand-computed floors, the step and TTFT they give, the engine
defaults and the overrides, bit-identical figures at ``prefill_launch = graphs``, and bad
inputs refused by name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from planner.compute.table import evaluate_row
from planner.core.errors import PlannerError
from planner.formulas import serving_step
from planner.spec.catalog import load_gpus, resolve_model_spec
from tests.formulas.disagg_golden import GOLDEN, figures, grid_rows

GPUS = load_gpus()
SPECS = {m: resolve_model_spec(m) for m in ("llama-3-8b", "deepseek-v3")}
LLAMA_FLOOR_S = 32 * 9 * 6.56e-5
"""Llama-3-8B: 32 layers of 9 kernels at 65.6 us: 18.8928 ms."""


def row(**inputs: Any) -> dict[str, Any]:
    base = {"model": "llama-3-8b", "gpu": "h100-sxm", "engine": "sglang", "prompt_tokens": 128,
            "output_tokens": 256, "concurrency": 1}
    return evaluate_row({**base, **inputs}, SPECS, GPUS)


def test_the_default_per_kernel_time_is_sglangs_deepseek_v3_log() -> None:
    """65.6 us: sglang PR 12160's eager 1-token DeepSeek-V3 prefill, 82.64 ms, over the 1,260
    kernels its 61 layers count; the floor of that model at PP 1 gives the log back."""
    assert serving_step.EAGER_KERNEL_HOST_S == 6.56e-5
    assert round(82.64e-3 / 1260, 7) == 6.56e-5
    out = row(model="deepseek-v3", gpu="h200", tp=8, gpus=8, weight_dtype="fp8",
              prompt_tokens=1024, output_tokens=1024)
    assert out["prefill_host_floor_s"] == pytest.approx(1260 * 6.56e-5, rel=1e-12)  # 82.656 ms


@pytest.mark.parametrize(("engine", "launch", "eager"), [
    ("sglang", "auto", 1), ("trtllm", "auto", 1), ("vllm", "auto", 0), ("roofline", "auto", 0),
    ("sglang", "graphs", 0), ("trtllm", "graphs", 0), ("vllm", "eager", 1),
    ("roofline", "eager", 1)])
def test_engine_defaults_and_overrides(engine: str, launch: str, eager: int) -> None:
    out = row(engine=engine, prefill_launch=launch)
    assert out["prefill_eager"] == eager
    assert out["prefill_host_floor_s"] == pytest.approx(eager * LLAMA_FLOOR_S, rel=1e-12)


def test_a_short_prefill_is_bound_by_the_host_and_its_ttft_waits_for_it() -> None:
    """128 prompt tokens of Llama-3-8B on an H100 take 7.41 ms of GPU time, under the 18.89 ms
    the host needs to launch them: the prefill-only step (and the first-token service of the
    one request, c = 1) is the floor, and the TTFT gains the difference."""
    eager, graphs = row(), row(prefill_launch="graphs")
    assert graphs["prefill_only_step_s"] < LLAMA_FLOOR_S
    assert eager["prefill_only_step_s"] == pytest.approx(LLAMA_FLOOR_S, rel=1e-12)
    assert eager["ttft_service_s"] == pytest.approx(LLAMA_FLOOR_S, rel=1e-12)
    assert eager["ttft_mean_s"] - graphs["ttft_mean_s"] == pytest.approx(
        LLAMA_FLOOR_S - graphs["prefill_only_step_s"], rel=1e-9)
    trt = row(engine="trtllm")  # decode-first: the request's step is the mixed one, floored
    assert trt["closed_loop_prefill_step_s"] < LLAMA_FLOOR_S
    assert trt["ttft_service_s"] == pytest.approx(LLAMA_FLOOR_S, rel=1e-12)


def test_the_throughput_step_mix_keeps_the_gpu_time() -> None:
    """The floor bounds the steps a request waits for (its TTFT, SGLang's cohort pauses in its
    TPOT), not the step mix behind the throughput and the saturation point: a per-step floor
    there would make throughput fall with the batch (tests/formulas/test_serving.py bounds the
    closed loop by saturation)."""
    for engine in ("sglang", "trtllm"):
        eager, graphs = row(engine=engine), row(engine=engine, prefill_launch="graphs")
        for name in ("closed_loop_step_s", "saturation_requests_per_s", "output_tokens_per_s"):
            assert eager[name] == graphs[name], (engine, name)


def test_a_long_prefill_is_bound_by_the_gpu_and_unchanged() -> None:
    """8,192 prompt tokens: ~208 ms of GPU time, far above the host's 18.9 ms: the same
    figures as with graphs."""
    eager, graphs = row(prompt_tokens=8192), row(prompt_tokens=8192, prefill_launch="graphs")
    assert eager["prefill_only_step_s"] == graphs["prefill_only_step_s"] > 10 * LLAMA_FLOOR_S
    assert eager["ttft_mean_s"] == graphs["ttft_mean_s"]


def test_pipeline_stages_launch_their_own_layers_and_the_time_is_an_input() -> None:
    assert row(pp=2, tp=1, gpus=2)["prefill_host_floor_s"] == pytest.approx(
        LLAMA_FLOOR_S / 2, rel=1e-12)
    assert row(eager_kernel_host_s=1e-4)["prefill_host_floor_s"] == pytest.approx(
        32 * 9 * 1e-4, rel=1e-12)
    assert row(eager_kernel_host_s=0)["ttft_mean_s"] == row(prefill_launch="graphs")[
        "ttft_mean_s"]


def test_graphs_give_the_planner_before_eager_prefill_bit_for_bit() -> None:
    """The 240-row grid of every engine at ``prefill_launch = graphs`` hashes to the figures
    of the planner before this mechanism, all 264 golden columns (tests/formulas/
    disagg_golden.py: ``grid_prefill_graphs`` was the file's ``grid`` before revision 0020)."""
    golden = json.loads(GOLDEN.read_text())
    graphs = golden["grid_prefill_graphs"]
    assert len(graphs) == 264
    rows = [{**r, "prefill_launch": "graphs"} for r in grid_rows()]
    now = figures(rows, sorted(graphs))
    assert [k for k in graphs if now.get(k) != graphs[k]] == []
    moved = {k for k in graphs if golden["grid"][k] != graphs[k]}
    assert {"ttft_mean_s", "ttft_service_s", "prefill_only_step_s", "wave_ttft_mean_s"} <= moved
    assert not moved & {"closed_loop_prefill_step_s", "closed_loop_step_s", "tpot_mean_s",
                        "saturation_requests_per_s", "max_concurrent_sequences"}
    assert len(moved) == 20


@pytest.mark.parametrize(("field", "value", "message"), [
    ("prefill_launch", "jit", "prefill_launch"),
    ("eager_kernel_host_s", -1e-6, "eager_kernel_host_s"),
    ("eager_kernel_host_s", 0.5, "eager_kernel_host_s")])
def test_bad_inputs_are_refused_by_name(field: str, value: Any, message: str) -> None:
    with pytest.raises(PlannerError, match=message):
        row(**{field: value})
