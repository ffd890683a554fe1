"""The engines' choices that depend on the GPU's compute capability (issue 26 item 2).

Each figure is derived by hand from the published config.json files in
``../shared/configs-2026`` and the engines' source, cited in each test:

* vLLM's hybrid block alignment (``HybridAttentionMambaModelConfig.verify_and_update_config``,
  ``vllm/model_executor/models/config.py``): ``kernel_block_alignment_size`` 16, or 32 when
  ``current_platform.is_device_capability_family(100)`` (compute capability 10.x: B200 and
  GB200 10.0, B300 and GB300 10.3) and ``model_config.get_head_size() == 256``;
* SGLang's default cache dtype for DeepSeek-V3.2 / GLM-5 (``server_args.py``,
  ``_set_default_nsa_kv_cache_dtype``): ``"fp8_e4m3" if major >= 10 else "bfloat16"``; its
  pool counts ``kv_lora_rank + qk_rope_head_dim`` elements at the cache dtype plus the indexer's
  ``index_head_dim + index_head_dim // 128 * 4`` bytes per layer and token
  (``ModelRunnerKVCacheMixin.get_cell_size_per_token``): 576 + 132 = 708 B at fp8, 1,152 + 132
  = 1,284 B at bf16;
* vLLM's ``auto`` for DeepSeek-V3.2 is the model dtype since PR 27121 ("Disable fp8 kv-cache
  by default for DeepSeek V3.2"): bf16 whatever the GPU.

Compute capabilities from NVIDIA's table (developer.nvidia.com/cuda-gpus), in the catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.catalog import load_gpus, spec_from_file
from planner.errors import ValidationError
from planner.estimator.engine_memory import vllm_block_alignment
from planner.service.gpu_records import spec_from_user
from tests.conftest import estimate

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT.parent / "shared" / "configs-2026"
GPUS = load_gpus()


def _spec(name: str) -> Any:
    return spec_from_file(PUBLISHED / f"{name}.json", name)


def test_the_catalog_knows_each_nvidia_parts_compute_capability() -> None:
    figures = {name: GPUS[name].compute_capability for name in (
        "b200", "gb200", "b300", "gb300", "rtx-pro-6000", "h100-sxm", "h200", "h20", "l40s",
        "a10", "a100-80gb", "t4", "mi355x", "gaudi3", "tpu-v6e")}
    assert figures == {"b200": 10.0, "gb200": 10.0, "b300": 10.3, "gb300": 10.3,
                       "rtx-pro-6000": 12.0, "h100-sxm": 9.0, "h200": 9.0, "h20": 9.0,
                       "l40s": 8.9, "a10": 8.6, "a100-80gb": 8.0, "t4": 7.5, "mi355x": 0.0,
                       "gaudi3": 0.0, "tpu-v6e": 0.0}
    assert sum(1 for g in GPUS.values() if g.compute_capability) == 19


def test_compute_capability_is_validated() -> None:
    base = {"memory_gib": 24, "bf16_tflops": 100, "memory_bandwidth_gb_per_s": 900}
    assert spec_from_user("card", {**base, "compute_capability": "10.3"}) \
        .compute_capability == 10.3
    for bad in ("10.25", "-1", "100"):
        with pytest.raises(ValidationError, match="compute_capability"):
            spec_from_user("card", {**base, "compute_capability": bad})


@pytest.mark.parametrize(("capability", "head", "tokens"), [
    (10.0, 256, 32), (10.3, 256, 32), (12.0, 256, 16), (9.0, 256, 16), (10.0, 128, 16),
    (0.0, 256, 16)])
def test_vllm_block_alignment(capability: float, head: int, tokens: int) -> None:
    assert vllm_block_alignment(capability, head) == tokens


@pytest.mark.parametrize(("gpu", "block"), [("b300", 416), ("gb300", 416), ("h200", 400),
                                            ("rtx-pro-6000", 400)])
def test_qwen3_5_block_follows_the_compute_capability(gpu: str, block: int) -> None:
    """Qwen3.5-27B at TP 8: a 400,896 B DeltaNet page against 1,024 B per attention token, head
    size 256: ``32 * ceil(400,896 / 32,768)`` = 416 tokens on 10.3, ``16 * ceil(400,896 /
    16,384)`` = 400 on 9.0 and on 12.0 (another family); 48 state pages of ``block x 1,024`` B
    over 16,384 B per context token."""
    r = estimate(_spec("Qwen3.5-27B"), GPUS[gpu], engine="vllm", gpus=8, tp=8,
                 prompt_tokens=1024, output_tokens=128, max_num_seqs=100_000)
    assert r["engine_state_tokens"] == 48 * block * 1024 / 16_384
    assert r["engine_token_capacity"] % block == 0


@pytest.mark.parametrize(("gpu", "per_token"), [
    ("b200", 61 * (576 + 132)), ("b300", 61 * (576 + 132)), ("rtx-pro-6000", 61 * (576 + 132)),
    ("h200", 61 * (1152 + 132)), ("mi355x", 61 * (1152 + 132))])
def test_sglang_caches_deepseek_v3_2_at_fp8_from_compute_capability_10(
        gpu: str, per_token: int) -> None:
    """SGLang, kv_dtype at its default: 43,188 B a token on 10.0 and above, 78,324 B on Hopper
    and AMD parts (no CUDA compute capability: ROCm reports major 9)."""
    r = estimate(_spec("DeepSeek-V3.2"), GPUS[gpu], engine="sglang", gpus=8, tp=8,
                 prompt_tokens=1024, output_tokens=128)
    assert r["kv_bytes_per_token_per_gpu"] == per_token


def test_an_explicit_kv_dtype_and_vllm_keep_their_dtype() -> None:
    """An explicit 16-bit choice (fp16) keeps SGLang at 16 bit on a B200; vLLM's auto is bf16
    for V3.2 (78,324 B) and GLM-5 (78 x 1,284 = 100,152 B); an fp8 choice under vLLM is its
    656 B ``fp8_ds_mla`` row (61 x 788 = 48,068 B). GLM-5 under SGLang on a B200: 78 x 708 =
    55,224 B."""
    b200 = GPUS["b200"]
    v32 = _spec("DeepSeek-V3.2")
    common: dict[str, Any] = {"gpus": 8, "tp": 8, "prompt_tokens": 1024, "output_tokens": 128}
    assert estimate(v32, b200, engine="sglang", kv_dtype="fp16", **common)[
        "kv_bytes_per_token_per_gpu"] == 61 * 1284 == 78_324
    assert estimate(v32, b200, engine="vllm", **common)["kv_bytes_per_token_per_gpu"] == 78_324
    assert estimate(v32, b200, engine="vllm", kv_dtype="fp8", **common)[
        "kv_bytes_per_token_per_gpu"] == 61 * 788 == 48_068
    glm = _spec("GLM-5")
    assert estimate(glm, b200, engine="vllm", **common)["kv_bytes_per_token_per_gpu"] \
        == 78 * 1284 == 100_152
    assert estimate(glm, b200, engine="sglang", **common)["kv_bytes_per_token_per_gpu"] \
        == 78 * 708 == 55_224


def test_other_models_keep_bf16_under_sglang_on_blackwell() -> None:
    """The default stays 16 bit for a model SGLang has no rule for (Qwen3.5-27B: 16 full layers
    of 1 KV head x 256 per rank at TP 8, K and V, 2 B: 16,384 B a token)."""
    r = estimate(_spec("Qwen3.5-27B"), GPUS["b200"], engine="sglang", gpus=8, tp=8,
                 prompt_tokens=1024, output_tokens=128)
    assert r["kv_bytes_per_token_per_gpu"] == 16 * 2 * 256 * 2 == 16_384


def test_sglang_pages_deepseek_dsa_and_v4_in_its_own_page_sizes() -> None:
    """SGLang's pool is whole pages (``max_total_num_tokens // page_size * page_size``): 64
    tokens for DeepSeek-V3.2 on a CUDA part even with ``block_size`` 1 (``server_args.py``
    sets ``page_size = 64`` for DSA), 256 for DeepSeek-V4 by default, 1 for DSA on ROCm."""
    common: dict[str, Any] = {"gpus": 8, "tp": 8, "prompt_tokens": 1024, "output_tokens": 128}
    for block_size in (0, 1):
        r = estimate(_spec("DeepSeek-V3.2"), GPUS["b200"], engine="sglang",
                     block_size=block_size, **common)
        assert r["engine_kv_tokens"] == r["engine_kv_bytes_per_gpu"] // (64 * 61 * 708) * 64
        assert r["engine_kv_bytes_per_gpu"] // (61 * 708) % 64 != 0  # rounding takes effect
    v4 = estimate(_spec("DeepSeek-V4-Flash"), GPUS["b200"], engine="sglang", **common)
    assert v4["engine_kv_tokens"] == v4["engine_kv_bytes_per_gpu"] // (256 * 3440) * 256
    rocm = estimate(_spec("DeepSeek-V3.2"), GPUS["mi355x"], engine="sglang", **common)
    assert rocm["engine_kv_tokens"] == rocm["engine_kv_bytes_per_gpu"] // (61 * 1284)
