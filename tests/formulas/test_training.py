"""Training: 6ND on active matmul weights, ZeRO state, activations, LoRA/QLoRA, budgets."""

from __future__ import annotations

import pytest

from planner import service
from planner.core.units import GiB
from planner.spec.figures import model_figures
from tests.conftest import gpu, spec

N_LLAMA2 = 6_607_077_376          # matmul weights incl. LM head (P_linear, docs/formulas.md)
TOTAL_LLAMA2 = 6_738_415_616


def train(model: str = "llama-2-7b", **inputs: object) -> dict:
    return service.train(spec(model), gpu(tflops=1000, price=2.0), inputs)


def test_six_n_d_and_time_cost() -> None:
    r = train(gpus=8, train_tokens=2e9, mfu=0.5)
    assert r["train_flops"] == 6 * N_LLAMA2 * 2e9
    assert r["train_time_s"] == pytest.approx(r["train_flops"] / (8 * 1000e12 * 0.5))
    assert r["gpu_hours"] == pytest.approx(8 * r["train_time_s"] / 3600)
    assert r["cost_usd"] == pytest.approx(r["gpu_hours"] * 2.0)


def test_moe_trains_on_active_weights() -> None:
    f = model_figures(spec("mixtral-8x7b"))
    r = train("mixtral-8x7b", train_tokens=1e9)
    n = (f.model_matmul_dense_params + f.model_matmul_experts_active_params
         + f.model_lm_head_matmul_params)
    assert r["train_flops"] == 6 * n * 1e9
    assert n < 13e9  # ≈ active, far below the 46.7B total


@pytest.mark.parametrize(("stage", "bytes_per_param"), [
    (0, 16), (1, 4 + 12 / 8), (2, 2 + 14 / 8), (3, 16 / 8)])
def test_zero_stages(stage: int, bytes_per_param: float) -> None:
    r = train(gpus=8, zero_stage=stage)
    assert r["model_state_bytes_per_gpu"] == pytest.approx(TOTAL_LLAMA2 * bytes_per_param)


def test_activation_memory_korthikanti() -> None:
    s, b, d, a, layers = 4096, 1, 4096, 32, 32
    full = train(train_seq_len=s, micro_batch_size=b, activation_recompute=False)
    assert full["activation_bytes_per_gpu"] == s * b * d * (34 + 5 * a * s / d) * layers
    recompute = train(train_seq_len=s, micro_batch_size=b, activation_recompute=True)
    assert recompute["activation_bytes_per_gpu"] == 2 * s * b * d * layers


def test_lora_and_qlora_memory() -> None:
    lora = service.train(spec("llama-2-7b"), gpu(), {"lora_rank": 8}, lora_targets="q,v")
    assert lora["model_state_bytes_per_gpu"] == 2 * TOTAL_LLAMA2 + 16 * 4_194_304
    assert lora["train_flops_per_token"] == 4 * N_LLAMA2 + 6 * 4_194_304
    qlora = service.train(spec("llama-2-7b"), gpu(), {"lora_rank": 8, "weight_dtype": "int4"},
                          lora_targets="q,v")
    assert qlora["model_state_bytes_per_gpu"] < 4.5 * GiB


def test_lora_on_gqa_kv_is_rectangular() -> None:
    """Llama-3-8B K and V are 4096 × 1024: r·(4096+1024) per module."""
    r = service.train(spec("llama-3-8b"), gpu(), {"lora_rank": 16}, lora_targets="k,v")
    assert r["trainable_params"] == 16 * (4096 + 1024) * 2 * 32
    every = service.train(spec("llama-3-8b"), gpu(), {"lora_rank": 16}, lora_targets="all")
    per_layer = (4096 + 4096) * 2 + (4096 + 1024) * 2 + (4096 + 14336) * 3
    assert every["trainable_params"] == 16 * per_layer * 32


def test_budget_buys_tokens() -> None:
    r = train(budget_gpu_hours=1000, budget_usd=2000, mfu=0.4)
    per_token = 6 * N_LLAMA2
    assert r["tokens_for_gpu_hours"] == pytest.approx(1000 * 3600 * 1000e12 * 0.4 / per_token)
    assert r["tokens_for_usd"] == pytest.approx(r["tokens_for_gpu_hours"])


def test_attention_term_is_optional() -> None:
    base = train(train_seq_len=2048)
    with_attn = train(train_seq_len=2048, include_attention_flops=True)
    extra = 3 * 4 * 4096 * 32 * (2048 * 2049 / 2) / 2048
    added = with_attn["train_flops_per_token"] - base["train_flops_per_token"]
    assert added == pytest.approx(extra)
