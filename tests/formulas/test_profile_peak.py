"""What vLLM V1 keeps allocated across its profile run's sampler phase (issue 23 item 5): the
fused-MoE workspace of the persistent workspace manager and the forward's hidden states.

Golden figures are computed by hand from the shapes in vLLM's source (cited in
``planner.formulas.profile_run.moe_workspace_bytes``): Qwen3-30B-A3B (d 2,048, 48 layers,
top-8 of 128 experts of width 768; ``tests/fixtures/serving_configs/qwen3-30b-a3b.json``) at the
8,192-token budget: ``workspace13 = 8192*8*max(768, 2048)*2 B`` = 0.25 GiB and ``workspace2 =
8192*8*1536*2 B`` = 0.1875 GiB. The six logged start-ups stay within 1%
(``tests/formulas/test_engine_memory.py``); Mixtral-8x7B TP2's peak moves from 0.97 to 1.08 GiB
against 1.21 logged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.formulas import profile_run
from planner.service import estimate
from planner.spec.catalog import load_gpus, spec_from_file
from tests.formulas.test_engine_memory import RECORDS, start_up

ROOT = Path(__file__).resolve().parents[2]
GIB = 2**30
QWEN3_MOE = spec_from_file(ROOT / "tests/fixtures/serving_configs/qwen3-30b-a3b.json")


def run(engine: str = "vllm", **inputs: object) -> dict:
    return estimate(QWEN3_MOE, load_gpus()["h100-sxm"],
                    {"engine": engine, "tp": 1, "gpus": 1, "max_model_len": 8192, **inputs})


def test_moe_workspace_is_the_modular_kernels_two_buffers() -> None:
    out = run()
    assert out["profile_tokens"] == 8192
    assert out["moe_workspace_bytes"] == 8192 * 8 * (2048 + 2 * 768) * 2
    assert out["moe_workspace_bytes"] / GIB == pytest.approx(0.25 + 0.1875)
    assert out["profile_hidden_bytes"] == 8192 * 2048 * 2
    assert out["activation_peak_bytes"] == pytest.approx(
        out["sampler_activation_bytes"] + out["moe_workspace_bytes"]
        + out["profile_hidden_bytes"])
    # TP 2 splits the expert width: workspace13 stays at d, workspace2 halves
    tp2 = run(tp=2, gpus=2)
    assert tp2["moe_workspace_bytes"] == 8192 * 8 * (2048 + 768) * 2


def test_workspace_chunks_at_the_fused_moe_chunk_size() -> None:
    big = run(max_num_batched_tokens=65536)
    assert big["moe_workspace_bytes"] == (profile_run.FUSED_MOE_CHUNK_TOKENS * 8
                                          * (2048 + 1536) * 2)
    assert big["profile_hidden_bytes"] == 65536 * 2048 * 2


def test_v0_other_engines_and_dense_models_keep_nothing() -> None:
    v0 = run(vllm_v0_accounting=True)
    assert v0["moe_workspace_bytes"] == 0 and v0["profile_hidden_bytes"] == 0
    for engine in ("sglang", "trtllm", "roofline"):
        out = run(engine)
        assert out["moe_workspace_bytes"] == 0 and out["profile_hidden_bytes"] == 0, engine
    dense = start_up(RECORDS["llmd-meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192"])
    assert dense["moe_workspace_bytes"] == 0
    assert dense["profile_hidden_bytes"] == 8192 * 4096 * 2  # 64 MiB


def test_mixtral_peak_moves_toward_the_log() -> None:
    out = start_up(RECORDS["llmd-mistralai-mixtral-8x7b-i--h100-80gb--tp2pp1dp1--8192"])
    # 2 experts of 14,336 split over TP 2: 8192 * 2 * (7168 + 2*7168) * 2 B = 0.656 GiB
    assert out["moe_workspace_bytes"] == 8192 * 2 * (7168 + 2 * 7168) * 2
    assert out["activation_peak_bytes"] / GIB == pytest.approx(1.085, abs=0.005)
    assert abs(out["activation_peak_bytes"] / GIB - 1.21) < abs(0.97 - 1.21)
