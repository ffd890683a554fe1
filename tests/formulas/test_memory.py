"""Weight bytes per dtype, KV sharding under tensor parallelism, sliding windows, MoE reads."""

from __future__ import annotations

import pytest

from planner import service
from planner.core.units import GiB, MiB
from planner.formulas.latency import weights_read_bytes
from planner.spec.figures import model_figures
from tests.conftest import estimate, gpu, spec

LLAMA3_MATMUL = 6_979_321_856
LLAMA3_EMBED_AND_HEAD = 2 * 525_336_576
LLAMA3_NORMS = 266_240


@pytest.mark.parametrize(("dtype", "expected_bytes"), [
    ("bf16", 16_060_522_496),
    ("fp16", 16_060_522_496),
    ("fp8", LLAMA3_MATMUL * 1 + LLAMA3_EMBED_AND_HEAD * 2 + LLAMA3_NORMS * 2),
    ("int8", LLAMA3_MATMUL * 1 + LLAMA3_EMBED_AND_HEAD * 2 + LLAMA3_NORMS * 2),
    # int4 with 16-bit scales per 128 weights: 4.125 bits per weight; never 0 bytes (bits // 8).
    ("int4", LLAMA3_MATMUL * 4.125 / 8 + LLAMA3_EMBED_AND_HEAD * 2 + LLAMA3_NORMS * 2),
])
def test_weight_bytes_per_dtype(dtype: str, expected_bytes: float) -> None:
    assert estimate("llama-3-8b", weight_dtype=dtype)["weights_bytes"] == expected_bytes


def test_int4_without_group_scales_and_with_quantized_embeddings() -> None:
    r = estimate("llama-3-8b", weight_dtype="int4", quant_group_size=0,
                 keep_embeddings_16bit=False)
    assert r["weights_bytes"] == (LLAMA3_MATMUL + LLAMA3_EMBED_AND_HEAD) * 4 / 8 + LLAMA3_NORMS * 2


def test_tp_splits_kv_heads_then_replicates() -> None:
    """Llama-3-8B has 8 KV heads: tp=8 → 1/8 of the cache per GPU; tp=16 and 32 still 1/8."""
    for tp, fraction in ((1, 1.0), (2, 0.5), (8, 0.125), (16, 0.125), (32, 0.125)):
        r = estimate("llama-3-8b", gpus=tp, tp=tp)
        assert r["tp_kv_fraction"] == fraction, tp
        assert r["weights_bytes_per_gpu"] == 16_060_522_496 / tp


def test_mla_latent_is_replicated_across_tp() -> None:
    r = estimate("deepseek-v3", gpu(memory_gib=141), gpus=8, tp=8, weight_dtype="fp8")
    assert r["tp_kv_fraction"] == 1.0
    assert r["kv_bytes_per_token"] == 61 * (512 + 64) * 2


def test_pipeline_stages_split_weights_and_kv() -> None:
    r = estimate("llama-3-8b", gpus=4, tp=2, pp=2)
    assert r["weights_bytes_per_gpu"] == 16_060_522_496 / 4
    assert r["kv_bytes_per_sequence_per_gpu"] == r["kv_bytes_per_sequence"] / 4


def test_sliding_window_caps_kv_per_sequence() -> None:
    """Mistral-7B v0.1 windows every layer at 4096 tokens: 128 KiB/token up to 512 MiB."""
    short = estimate("mistral-7b", prompt_tokens=1000, output_tokens=1)
    long_ = estimate("mistral-7b", prompt_tokens=30000, output_tokens=1)
    assert short["kv_bytes_per_sequence"] == 1000 * 128 * 1024
    assert long_["kv_bytes_per_sequence"] == 512 * MiB
    assert long_["max_context_tokens"] == 32768  # capped by max_position_embeddings


def test_moe_decode_reads_only_touched_experts() -> None:
    f = model_figures(spec("mixtral-8x7b"))
    one = weights_read_bytes(1, f.model_matmul_dense_params, f.model_matmul_experts_params,
                             f.model_experts, f.model_experts_per_token,
                             f.model_lm_head_matmul_params, 16, 16)
    assert one == 2 * (f.model_matmul_dense_params + f.model_matmul_experts_params * 2 / 8
                       + f.model_lm_head_matmul_params)
    many = weights_read_bytes(1000, f.model_matmul_dense_params, f.model_matmul_experts_params,
                              f.model_experts, f.model_experts_per_token,
                              f.model_lm_head_matmul_params, 16, 16)
    assert many == pytest.approx(2 * (f.model_matmul_dense_params + f.model_matmul_experts_params
                                      + f.model_lm_head_matmul_params), rel=1e-12)


def test_reserve_fraction_and_gib_add_up() -> None:
    r = estimate("llama-3-8b", gpu(memory_gib=80), reserve_gib=2, reserve_fraction=0.1)
    assert r["reserve_bytes_per_gpu"] == 2 * GiB + 8 * GiB


def test_weights_alone_too_large() -> None:
    r = estimate("llama-3-70b", gpu(memory_gib=80))
    assert r["fits"] is False
    assert r["kv_budget_bytes"] < 0
    assert r["max_concurrent_sequences"] == 0
    assert r["max_context_tokens"] == 0
    assert r["shortfall_bytes"] == -r["kv_budget_bytes"] + r["kv_in_use_bytes_per_gpu"]


def test_cross_field_validation() -> None:
    from planner.core.errors import ValidationError

    with pytest.raises(ValidationError, match="gpus: must be a multiple of tp\\*pp = 4"):
        estimate("llama-3-8b", gpus=2, tp=2, pp=2)
    with pytest.raises(ValidationError, match="tp: must divide the 32 attention heads"):
        estimate("llama-3-8b", gpus=3, tp=3)
    with pytest.raises(ValidationError, match="pp: must be at most the 32 layers"):
        estimate("llama-3-8b", gpus=64, pp=64)
    with pytest.raises(ValidationError, match="lora_targets"):
        service.train(spec("llama-3-8b"), gpu(), {"lora_rank": 8}, lora_targets="qq")
