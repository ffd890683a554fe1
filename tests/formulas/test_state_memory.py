"""Fixed per-sequence state (Qwen3-Next's Gated DeltaNet layers) in memory, capacity and decode.

Golden figures are computed by hand from the published Qwen3-Next-80B-A3B-Instruct config
(tests/fixtures/hf_configs/qwen3-next-80b-a3b-instruct.json): 48 layers, every 4th full
attention (12 layers, 2 KV heads of 256), 36 linear-attention layers with 16 key and 32 value
heads of 128 and a 4-tap convolution.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.core.units import GiB
from planner.formulas.latency import weights_read_bytes
from planner.spec.catalog import spec_from_file
from planner.spec.figures import model_figures
from tests.conftest import estimate, gpu

ROOT = Path(__file__).resolve().parents[2]
QWEN3_NEXT = spec_from_file(ROOT / "tests/fixtures/hf_configs/qwen3-next-80b-a3b-instruct.json",
                            "qwen3-next-80b-a3b-instruct")
STATE_ELEMS_PER_LAYER = 32 * 128 * 128 + (2 * 16 * 128 + 32 * 128) * (4 - 1)  # 548,864
STATE_BYTES = 36 * STATE_ELEMS_PER_LAYER * 2  # 39,518,208 B = 37.69 MiB at 16 bit
KV_BYTES_PER_TOKEN = 12 * 2 * 2 * 256 * 2  # 24,576 B: only the 12 full-attention layers


def test_qwen3_next_figures() -> None:
    f = model_figures(QWEN3_NEXT)
    assert f.model_state_elems_per_sequence == 36 * STATE_ELEMS_PER_LAYER == 19_759_104
    assert f.model_state_heads == 32
    assert f.model_kv_elems_per_token_full == 12 * 2 * 2 * 256
    assert f.model_kv_elems_per_token_window == 0
    assert f.model_kv_heads == 2
    assert f.model_attention_heads == 16


def test_state_bytes_do_not_grow_with_context() -> None:
    short = estimate(QWEN3_NEXT, gpu(memory_gib=192), prompt_tokens=1000, output_tokens=1)
    long_ = estimate(QWEN3_NEXT, gpu(memory_gib=192), prompt_tokens=100_000, output_tokens=1)
    for r in (short, long_):
        assert r["state_bytes_per_sequence"] == STATE_BYTES == 39_518_208
        assert r["kv_bytes_per_token"] == KV_BYTES_PER_TOKEN
    assert short["kv_bytes_per_sequence"] == 1000 * KV_BYTES_PER_TOKEN
    assert long_["kv_bytes_per_sequence"] == 100_000 * KV_BYTES_PER_TOKEN
    assert short["memory_bytes_per_sequence_per_gpu"] == 1000 * KV_BYTES_PER_TOKEN + STATE_BYTES


def test_state_splits_over_value_heads_and_stages() -> None:
    """tp=4: 32 value heads split 8 per rank (1/4) while the 2 KV heads replicate (1/2)."""
    r = estimate(QWEN3_NEXT, gpu(memory_gib=80), gpus=8, tp=4, pp=2, prompt_tokens=4096,
                 output_tokens=1)
    assert r["tp_state_fraction"] == 0.25
    assert r["tp_kv_fraction"] == 0.5
    assert r["state_bytes_per_sequence_per_gpu"] == STATE_BYTES / 4 / 2
    assert r["memory_bytes_per_sequence_per_gpu"] == (4096 * KV_BYTES_PER_TOKEN / 2 / 2
                                                      + STATE_BYTES / 8)


def test_state_enters_concurrency_capacity_and_context() -> None:
    """One 192 GiB GPU, bf16 weights, 3 GiB reserve, 8 sequences of 8192 tokens:
    budget = 192 GiB - 3 GiB - weights; a sequence takes 8192*24 KiB + 37.69 MiB."""
    batch, tokens = 8, 8192
    r = estimate(QWEN3_NEXT, gpu(memory_gib=192), batch=batch, prompt_tokens=tokens,
                 output_tokens=1, reserve_gib=3, reserve_fraction=0)
    budget = 192 * GiB - 3 * GiB - r["weights_bytes"]
    assert r["kv_budget_bytes"] == pytest.approx(budget, rel=1e-12)
    per_sequence = tokens * KV_BYTES_PER_TOKEN + STATE_BYTES
    assert r["memory_bytes_per_sequence_per_gpu"] == per_sequence
    assert r["kv_in_use_bytes_per_gpu"] == batch * per_sequence
    assert r["max_concurrent_sequences"] == budget // per_sequence
    assert r["token_capacity"] == (budget - batch * STATE_BYTES) // KV_BYTES_PER_TOKEN
    assert r["max_context_tokens"] == min(
        (budget - batch * STATE_BYTES) // (batch * KV_BYTES_PER_TOKEN), 262_144)


def test_models_without_state_are_unchanged() -> None:
    r = estimate("llama-3-8b", gpu(memory_gib=24), batch=6, prompt_tokens=8192,
                 output_tokens=1, reserve_gib=3, reserve_fraction=0)
    assert r["state_bytes_per_sequence"] == 0
    assert r["memory_bytes_per_sequence_per_gpu"] == r["kv_bytes_per_sequence_per_gpu"] == GiB
    assert r["max_concurrent_sequences"] == 6


def test_decode_moves_the_state_each_step() -> None:
    """A decode step reads the weights it touches and the KV at the mean context, and reads and
    writes back each sequence's state: ``+ 2 * batch * 37.69 MiB``, whole replica."""
    batch = 4
    r = estimate(QWEN3_NEXT, gpu(memory_gib=192), batch=batch, prompt_tokens=1024,
                 output_tokens=2)
    f = model_figures(QWEN3_NEXT)
    weights = weights_read_bytes(batch, f.model_matmul_dense_params,
                                 f.model_matmul_experts_params, f.model_experts,
                                 f.model_experts_per_token, f.model_lm_head_matmul_params,
                                 r["weight_bits_effective"], r["embedding_bits"])
    kv = batch * r["mean_decode_context_tokens"] * KV_BYTES_PER_TOKEN
    assert r["decode_bytes_per_step"] == pytest.approx(weights + kv + 2 * batch * STATE_BYTES,
                                                       rel=1e-12)


def test_engine_pool_counts_the_state_per_running_sequence() -> None:
    """vLLM on one 192 GiB GPU pages each Gated DeltaNet layer's state (548,864 elements x
    2 B = 1,097,728 B) in one page padded to an attention page: the attention block grows to
    16 * ceil(1,097,728 / (16 * 2,048)) = 544 tokens (2,048 B per token and layer), the page to
    544 * 2,048 = 1,114,112 B (``HybridAttentionMambaModelConfig``). 36 such pages are
    40,108,032 / 24,576 = 1632 pool tokens (1608 unpadded), so each running request costs its
    mean context plus 1632 tokens."""
    r = estimate(QWEN3_NEXT, gpu(memory_gib=192), engine="vllm", prompt_tokens=2000,
                 output_tokens=200, max_num_seqs=100_000)
    assert STATE_BYTES / KV_BYTES_PER_TOKEN == 1608
    assert r["engine_state_tokens"] == 36 * 544 * 2048 / KV_BYTES_PER_TOKEN == 1632
    assert r["engine_token_capacity"] % 544 == 0  # whole 544-token blocks
    mean = r["mean_decode_context_tokens"]
    assert r["max_running_batch"] == r["engine_token_capacity"] // (mean + 1632)
    sglang = estimate(QWEN3_NEXT, gpu(memory_gib=192), engine="sglang", prompt_tokens=2000,
                      output_tokens=200)
    assert sglang["engine_state_tokens"] == 1608  # SGLang keeps the state unpadded


def test_engine_widths_see_through_linear_attention() -> None:
    """The engine's activation model rebuilds FFN widths from the figures: the Gated DeltaNet
    projections (36 layers of d x (12288 + 64) and 4096 x d) and the query gate (12 layers of
    d x 16*256) are attention, not FFN. What is left is exactly the MoE width per layer:
    10 experts * 3*512 + the shared expert 3*512 + the 512-expert router and the shared gate."""
    f = model_figures(QWEN3_NEXT)
    assert f.model_attn_matmul_params_other == (36 * 2048 * (12288 + 64 + 4096)
                                                + 12 * 2048 * 16 * 256) == 1_313_341_440
    assert f.model_kv_layers == 12
    r = estimate(QWEN3_NEXT, gpu(memory_gib=192), engine="vllm")
    assert r["ffn_width_per_token"] == 10 * 3 * 512 + 3 * 512 + 512 + 1 == 17_409
    assert r["rope_cache_bytes"] == 262_144 * 256 * 2  # head_dim over the 12 KV layers
