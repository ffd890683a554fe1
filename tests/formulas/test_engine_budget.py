"""SGLang's default token budget follows the GPU's memory as its server does
(``python/sglang/srt/server_args.py`` ``_handle_gpu_memory_settings``: ``chunked_prefill_size``
2048 below 35 GiB, 4096 below 60 GiB, 8192 below 160 GiB, else 16384); the other engines keep
theirs, and a set ``max_num_batched_tokens`` wins."""

from __future__ import annotations

from planner.core.units import GiB
from planner.formulas.derived import (
    max_num_batched_tokens_effective,
    sglang_chunked_prefill_size,
)
from planner.formulas.engine_memory import ENGINES
from planner.spec.catalog import load_gpus
from planner.spec.gpu import gpu_figures

GPUS = load_gpus()


def _budget(gpu: str) -> float:
    return float(sglang_chunked_prefill_size(gpu_figures(GPUS[gpu])["gpu_usable_memory_bytes"]))


def test_sglang_chunked_prefill_size_by_gpu_memory() -> None:
    expected = {"t4": 2048, "l4": 2048, "rtx-4090": 2048, "a10": 2048,  # < 35 GiB
                "a100-40gb": 4096, "l40s": 4096,                           # 35-60 GiB
                "a100-80gb": 8192, "h100-sxm": 8192, "h20": 8192, "h200": 8192,
                "b200": 16384, "gb200": 16384, "mi300x": 16384, "mi355x": 16384}
    assert {g: _budget(g) for g in expected} == expected
    # the bounds are SGLang's, exclusive: 160 GiB is the first of the large tier
    assert float(sglang_chunked_prefill_size(160 * GiB - 1)) == 8192
    assert float(sglang_chunked_prefill_size(160 * GiB)) == 16384
    assert float(sglang_chunked_prefill_size(35 * GiB)) == 4096


def test_budget_default_per_engine_and_override() -> None:
    mem = gpu_figures(GPUS["b200"])["gpu_usable_memory_bytes"]
    by = {e: float(max_num_batched_tokens_effective(0, ENGINES[e], 1, mem))
          for e in ("vllm", "sglang", "trtllm")}
    assert by == {"vllm": 8192, "sglang": 16384, "trtllm": 8192}
    assert float(max_num_batched_tokens_effective(4096, ENGINES["sglang"], 1, mem)) == 4096
    assert float(max_num_batched_tokens_effective(0, ENGINES["vllm"], 0, mem)) == 2048
