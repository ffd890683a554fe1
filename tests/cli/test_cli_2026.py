"""The 15 published 2026 configs end to end through the CLI (issue 26, "Done means"):
``planner model inspect <config>`` and ``planner estimate --model <config> --gpu b200 --engine
vllm`` on each, with the token capacity asserted against figures derived by hand.

How the expected figures were made (independently of the planner's code): the cache bytes per
context token and per sequence below are worked out from the config keys quoted in each
comment (layer counts, KV heads, head dims, windows, Mamba/DeltaNet shapes, compress ratios)
and vLLM's rules, cited in ``tests/formulas/test_capacity_2026.py`` and
:mod:`planner.spec.vllm_cache_layout` (block enlargement for state pages, sliding-window
blocks ``min(ceil(T/16), ceil(w/16) + 1)``, group padding, DeepSeek-V4's fp8 layout, the
indexer's 132 B keys). ``inspect``'s parameter counts are checked against transformers 5.23's
own modules (``tests/fixtures/hf_counts_2026.json``, written by ``scripts/hf_counts_2026.py``).
The pool in bytes (``engine_kv_bytes_per_gpu``, vLLM's profile-run accounting, checked on
measured start-ups in ``tests/formulas/test_engine_memory.py``) is read from the estimate: these
tests check what the pool holds. KV bf16, 1,024 prompt + 128 output tokens (1,151 cached at the
end), B200, TP 8; the two models whose 16-bit weights exceed 8 x 180 GB (GLM-5, GLM-5.2)
on 16 GPUs at TP 8 x PP 2, each GPU holding half the layers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.cli import main

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT.parent / "shared" / "configs-2026"
COUNTS = json.loads((ROOT / "tests" / "fixtures" / "hf_counts_2026.json").read_text())["models"]
V4_WINDOW_PAGE = 37_440  # ceil(64 x 584 / 576) x 576: one 64-token block of one layer's window
V4_CSA_STATE_PAGE = 32_832 + 8_640  # 4 tokens of 2*2*512 and 2*2*128 float32, 576-aligned
V4_HCA_STATE_PAGE = 32_832  # 8 tokens of 2*512 float32, 576-aligned

# name -> (gpus, pp, growing bytes per token per GPU, pool tokens a sequence holds beyond its
#          context, block tokens)
EXPECTED: dict[str, tuple[int, int, float, float, int]] = {
    # 61 MLA layers of 512 + 64 latent (bf16, replicated) + 132 B fp8 indexer key
    "DeepSeek-V3.2": (8, 1, 61 * (576 * 2 + 132), 0, 16),
    # text_config: DeepSeek-V3 MLA, 61 layers
    "Kimi-K2.5": (8, 1, 61 * 576 * 2, 0, 16),
    # 62 layers, 8 KV heads of 128: one per GPU at TP 8, K and V
    "MiniMax-M2.7": (8, 1, 62 * 2 * 128 * 2, 0, 16),
    # 78 MLA layers, every one with its indexer; half the layers per GPU at PP 2
    "GLM-5": (16, 2, 78 * (576 * 2 + 132) / 2, 0, 16),
    # 78 MLA layers, indexer keys on the 21 "full" indexer_types only
    "GLM-5.2": (16, 2, (78 * 576 * 2 + 21 * 132) / 2, 0, 16),
    # 2 sliding, 21 CSA, 20 HCA layers: 21 x 180 + 20 x 6.75 B; windows and states per sequence
    "DeepSeek-V4-Flash": (8, 1, 3915,
                          (43 * V4_WINDOW_PAGE * 3 + 21 * V4_CSA_STATE_PAGE * 3
                           + 20 * V4_HCA_STATE_PAGE * 17) / 3915, 256),
    # compress_ratios[:61]: 30 CSA, 31 HCA (MXFP4 experts: 850 GB of weights, 8 GPUs)
    "DeepSeek-V4-Pro": (8, 1, 30 * 180 + 31 * 6.75,
                        (61 * V4_WINDOW_PAGE * 3 + 30 * V4_CSA_STATE_PAGE * 3
                         + 31 * V4_HCA_STATE_PAGE * 17) / (30 * 180 + 31 * 6.75), 256),
    # 10 global layers of 4 KV heads x 512 (one per GPU); 50 local of 16 x 256 in a 1024 window:
    # 51,200 B a windowed token x 65 blocks of 16, at 1 B an element: the checkpoint declares
    # an FP8 KV cache (ModelOpt kv_cache_scheme), which vLLM's --kv-cache-dtype auto takes
    "Gemma-4-31B-IT-NVFP4": (8, 1, 10 * 2 * 512 * 1, 50 * 2 * 2 * 256 * 1 * 1040 / 10_240, 16),
    # 5 global of 2 KV heads x 512 (one per GPU), 25 local of 8 x 256 (one per GPU)
    "gemma-4-26B-A4B": (8, 1, 5 * 2 * 512 * 2, 25 * 2 * 256 * 2 * 1040 / 10_240, 16),
    # 9 full layers of 4 KV heads x (192 + 128); 39 sliding of 8 heads, window 129 = 10 blocks;
    # groups of 9: the sliding layers take 45 layers' memory
    "MiMo-V2-Flash": (8, 1, 9 * 320 * 2, 45 * 320 * 2 * 160 / 5760, 16),
    # 12 NoPE full layers, 36 chunked (8192 > context: 72 blocks), 8 KV heads x 128
    "Llama-4-Maverick-17B-128E-Instruct": (8, 1, 12 * 2 * 128 * 2, 36 * 2 * 128 * 2 * 1152
                                           / 6144, 16),
    # 16 full layers of 4 KV heads x 256 (one per GPU); 48 DeltaNet pages of 416 x 1,024 B
    # (6 value heads x 128 x 128 at mamba_ssm_dtype float32 + 7,680 B conv = 400,896 B; head
    # size 256 on the B200's compute capability 10.0: 32-token alignment, 32 x ceil(400,896 /
    # 32,768) = 416, was 400 at 16)
    "Qwen3.5-27B": (8, 1, 16 * 2 * 256 * 2, 48 * 416 * 1024 / 16_384, 416),
    # 15 full layers of 2 KV heads x 256 (one per GPU: 1,024 B a layer); 45 DeltaNet layers:
    # 8 value heads x 128 x 128 x 4 B (float32) + 1,536 conv x 3 x 2 B = 533,504 B a page,
    # block 32 x ceil(533,504 / 32,768) = 544 (head size 256 on compute capability 10.0; 528
    # at 16-token alignment)
    "Qwen3.5-397B-A17B": (8, 1, 15 * 1024, 45 * 544 * 1024 / 15_360, 544),
    # 6 attention layers of 2 KV heads x 128 (one per GPU); 23 Mamba layers take 24 pages of
    # 528 x 512 B (groups of 6)
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (8, 1, 6 * 512, 24 * 528 * 512 / 3072, 528),
    # 8 attention layers ('*' in hybrid_override_pattern), 40 Mamba layers: 16 heads x 64 x 128
    # float32 (mamba_ssm_cache_dtype) + 1,280 conv x 3 x 2 B = 531,968 B, block
    # 16 x ceil(531,968 / 8,192) = 1,040; groups of 8, no padding
    "NVIDIA-Nemotron-3-Super-120B-A12B-FP8": (8, 1, 8 * 512, 40 * 1040 * 512 / 4096, 1040),
}


def _cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_all_fifteen_are_listed() -> None:
    assert sorted(EXPECTED) == sorted(p.stem for p in PUBLISHED.glob("*.json"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_model_inspect_matches_transformers(name: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = _cli_json(capsys, "model", "inspect", str(PUBLISHED / f"{name}.json"), "--json")
    assert (data["params"]["total"], data["params"]["active"]) == (
        COUNTS[name]["total"], COUNTS[name]["active"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_estimate_on_b200_under_vllm_gives_the_capacity(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    gpus, pp, per_token, state_tokens, block = EXPECTED[name]
    r = _cli_json(capsys, "estimate", "--model", str(PUBLISHED / f"{name}.json"), "--gpu",
                  "b200", "--engine", "vllm", "--gpus", str(gpus), "--tp", "8", "--pp", str(pp),
                  "--json")
    assert r["kv_bytes_per_token_per_gpu"] == pytest.approx(per_token, rel=1e-12)
    assert r["engine_state_tokens"] == pytest.approx(state_tokens, rel=1e-12)
    assert r["engine_kv_bytes_per_gpu"] > 0 and r["engine_fits"]
    capacity = r["engine_kv_bytes_per_gpu"] // (block * per_token) * block
    assert r["engine_token_capacity"] == capacity > 0
