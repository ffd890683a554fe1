"""Every golden figure of docs/formulas.md, each under the convention it names, and the articles'
errors that the estimator must not reproduce. Each case cites its source."""

from __future__ import annotations

import dataclasses

import pytest

from planner.core.units import GB, GiB, MiB
from planner.formulas import flops, latency, training
from planner.spec.architecture import ModelSpec
from planner.spec.figures import model_figures
from planner.spec.params import count_params, layer_matmul_weights
from tests.conftest import estimate, gpu, spec


@pytest.mark.parametrize(("model", "total", "active", "source"), [
    ("llama-2-7b", 6_738_415_616, 6_738_415_616, "docs/formulas.md Llama-2-7B total"),
    ("llama-3-8b", 8_030_261_248, 8_030_261_248, "docs/formulas.md Llama-3-8B total"),
    ("mixtral-8x7b", 46_702_792_704, 12_879_925_248, "docs/formulas.md Mixtral total/active"),
    ("qwen2.5-32b-instruct", 32_763_876_352, 32_763_876_352,
     "docs/formulas.md Qwen2.5-32B with q/k/v biases and norms"),
])
def test_parameter_totals(model: str, total: int, active: int, source: str) -> None:
    counts = count_params(spec(model))
    assert (counts.total, counts.active) == (total, active), source


def _without_biases_and_norms(s: ModelSpec) -> ModelSpec:
    layers = tuple(dataclasses.replace(
        layer, norms=0,
        attention=dataclasses.replace(layer.attention, qkv_bias=False, o_bias=False))
        for layer in s.layers)
    return dataclasses.replace(s, layers=layers, final_norm=False)


def test_qwen_simplified_formula_of_article_000() -> None:
    """The simplified count of "Qwen2.5-32B by hand" drops biases and norms: 32,762,757,120."""
    s = _without_biases_and_norms(spec("qwen2.5-32b-instruct"))
    assert count_params(s).total == 32_762_757_120


def test_llama2_p_linear_and_flops_per_token() -> None:
    """P_linear = L(4d²+3d·d_ff)+V·d = 6,607,077,376 → 13.21 GFLOPs/token ("From parameters to
    FLOPs", docs/formulas.md)."""
    f = model_figures(spec("llama-2-7b"))
    p_linear = f.model_matmul_dense_params + f.model_lm_head_matmul_params
    assert p_linear == 6_607_077_376
    assert round(2 * p_linear / 1e9, 2) == 13.21


def test_llama3_per_layer_p_linear() -> None:
    """docs/formulas.md: Llama-3-8B attention + FFN matrices per layer = 218,103,808."""
    s = spec("llama-3-8b")
    dense, experts, _ = layer_matmul_weights(s.layers[0], s.hidden_size)
    assert (dense, experts) == (218_103_808, 0)


@pytest.mark.parametrize(("model", "per_token", "tokens", "total_gib"), [
    ("llama-3-8b", 131_072, 8192, 1),
    ("llama-2-7b", 524_288, 4096, 2),
])
def test_kv_bytes_per_token(model: str, per_token: int, tokens: int, total_gib: int) -> None:
    """docs/formulas.md: 2·L·n_kv·d_h·b (bf16) per token per sequence, and a full sequence."""
    r = estimate(model, prompt_tokens=tokens, output_tokens=1)
    assert r["kv_bytes_per_token"] == per_token
    assert r["kv_bytes_per_sequence"] == total_gib * GiB


def test_llama3_weights_gib() -> None:
    """docs/formulas.md: Llama-3-8B bf16 weights 14.9575 GiB (= 8,030,261,248 × 2 B)."""
    r = estimate("llama-3-8b")
    assert r["weights_bytes"] == 16_060_522_496
    assert round(r["weights_bytes"] / GiB, 4) == 14.9575


def test_24gib_card_holds_six_8k_sequences() -> None:
    """docs/formulas.md: 24 GiB, 3 GiB reserved → KV budget 6.0425 GiB → 6 sequences."""
    r = estimate("llama-3-8b", gpu(memory_gib=24), reserve_gib=3, reserve_fraction=0,
                 prompt_tokens=8192, output_tokens=1, batch=6)
    assert round(r["kv_budget_bytes"] / GiB, 4) == 6.0425
    assert r["max_concurrent_sequences"] == 6
    assert r["fits"] is True
    seven = estimate("llama-3-8b", gpu(memory_gib=24), reserve_gib=3, reserve_fraction=0,
                     prompt_tokens=8192, output_tokens=1, batch=7)
    assert seven["fits"] is False
    assert seven["shortfall_bytes"] == pytest.approx(GiB - 0.0425 * GiB, abs=1e-4 * GiB)


def test_llama3_request_flops_and_final_cache() -> None:
    """docs/formulas.md: S=1024, G=128, B=1, causal, last-position logits: ≈16.55 TFLOPs;
    final cache 1151 tokens = 143.875 MiB."""
    r = estimate("llama-3-8b", prompt_tokens=1024, output_tokens=128, batch=1)
    assert round(r["request_flops"] / 1e12, 2) == 16.55
    assert r["context_tokens"] == 1151
    assert r["kv_bytes_per_sequence"] / MiB == 143.875


def test_llama3_decode_step_at_8192() -> None:
    """docs/formulas.md: one decode step at T=8192, B=1: ≈19.30 GFLOPs, ≈16.08 GB read (all matmul
    weights incl. LM head + KV), 16.1 ms at 1 TB/s, 0.097 ms at 200 TFLOP/s."""
    f = model_figures(spec("llama-3-8b"))
    per_token = flops.matmul_params_per_token(f.model_matmul_dense_params,
                                              f.model_matmul_experts_active_params)
    step = flops.decode_step_flops_at(8192, 1, per_token, f.model_lm_head_matmul_params,
                                      f.model_attn_flops_per_pair_full,
                                      f.model_attn_flops_per_pair_window,
                                      f.model_sliding_window_tokens)
    assert round(step / 1e9, 2) == 19.30
    weights = latency.weights_read_bytes(1, f.model_matmul_dense_params,
                                         f.model_matmul_experts_params, f.model_experts,
                                         f.model_experts_per_token,
                                         f.model_lm_head_matmul_params, 16, 16)
    kv = latency.decode_kv_read_bytes(8192, 1, f.model_kv_elems_per_token_full,
                                      f.model_kv_elems_per_token_window,
                                      f.model_sliding_window_tokens, 16)
    assert round((weights + kv) / GB, 2) == 16.08
    t_memory = latency.memory_seconds(weights, kv, 1, 1.0, 1e12, 1.0)
    t_compute = latency.compute_seconds(step, 1, 200e12, 1.0)
    assert round(t_memory * 1e3, 1) == 16.1
    assert round(t_compute * 1e3, 3) == 0.097


def test_lora_rank8_q_v_llama2() -> None:
    """r=8 on Q and V of every Llama-2-7B layer → 4,194,304 ("Transformer FLOPs and memory")."""
    from planner import service

    s = spec("llama-2-7b")
    r = service.train(s, gpu(), {"lora_rank": 8}, lora_targets="q,v")
    assert r["trainable_params"] == 4_194_304


def test_qwen_prefill_article_000_convention() -> None:
    """Qwen2.5-32B prefill S=1024, full S² attention, no LM head ("Qwen2.5-32B by hand"):
    65.28 TFLOPs → 209 ms at 312 TFLOP/s (MFU 1)."""
    r = estimate("qwen2.5-32b-instruct", gpu(tflops=312, bandwidth_gbs=1e9), prompt_tokens=1024,
                 output_tokens=1, attention_convention="full", logits_convention="none", mfu=1)
    assert round(r["prefill_flops"] / 1e12, 2) == 65.28
    assert round(r["ttft_s"] * 1e3) == 209
    assert r["ttft_bound"] == "compute"


def test_gpt3_training_compute() -> None:
    """docs/formulas.md: GPT-3 175B on 300B tokens, 6·N·D = 3.15e23 FLOPs (the 6.3e23 of
    "LLM compute explained" counts 2P as N and is twice too large)."""
    per_token = training.train_flops_per_token(175e9, 0, 0, 0, 0)
    total = training.train_flops(per_token, 300e9)
    assert total == pytest.approx(3.15e23, rel=1e-12)
    assert total != pytest.approx(6.3e23, rel=0.01)


def test_article_003_finetune_corrected() -> None:
    """The 7B fine-tune of "LLM compute explained" on 2e9 tokens: 8.4e19 FLOPs (not 1.68e20),
    ≈19.4 h (not 39 h) at 1.2 PFLOP/s effective (8 GPUs × 150 TFLOP/s)."""
    total = training.train_flops(training.train_flops_per_token(7e9, 0, 0, 0, 0), 2e9)
    assert total == pytest.approx(8.4e19, rel=1e-12)
    hours = training.train_time_s(total, 8, 150e12, 1.0) / 3600
    assert round(hours, 1) == 19.4


def test_article_003_decode_bound_not_halved() -> None:
    """The bandwidth/(4P) bound of "LLM compute explained" double-counts: a bf16 7B at B=1 on
    2 TB/s decodes at 2e12/(2·7e9) ≈ 143 tokens/s (memory bound)."""
    seconds = latency.memory_seconds(7e9 * 2, 0, 1, 1.0, 2e12, 1.0)
    assert round(1 / seconds) == 143


def test_article_003_kv_uses_8_kv_heads() -> None:
    """The article "LLM compute explained" sizes Llama-3.1-8B's KV for batch 10 × 700 tokens as
    if it had 32 KV heads (≈3.67e9 B, '3.5 GB'); with its 8 KV heads it is 917,504,000 B, 4×
    smaller."""
    r = estimate("llama-3-8b", prompt_tokens=700, output_tokens=1, batch=10)
    assert r["kv_in_use_bytes_per_gpu"] == 917_504_000
    assert r["kv_in_use_bytes_per_gpu"] * 4 == 2 * 10 * 700 * 32 * 4096 * 2


def test_article_003_rule_of_thumb_is_not_used() -> None:
    """The article "LLM compute explained" counts LLaMA-7B with a two-matrix FFN,
    L·(4d² + 2·d·d_ff) + V·d ≈ 5.16B (it prints 5,165,727,744 ≈ 5.17B, having also mis-multiplied
    2·4096·11008 as 90,224,128 instead of 90,177,536); the real gated FFN (3·d·d_ff) and untied
    head give 6.74B."""
    assert 2 * 4096 * 11008 == 90_177_536
    article = 32 * (4 * 4096**2 + 2 * 4096 * 11008) + 32000 * 4096
    assert article == 5_164_236_800
    assert round(count_params(spec("llama-2-7b")).total / 1e9, 2) == 6.74
