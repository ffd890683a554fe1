"""The architectures of 2025–2026 (issue 26) against what transformers 5.23 builds.

``fixtures/hf_counts_2026.json`` is written by ``scripts/hf_counts_2026.py`` with transformers
5.23.0 and torch: it builds each model on the meta device and counts ``p.numel()`` (total, active
per token, embedding, LM head, vision tower), and runs the text model over one sequence at two
lengths to measure the cache transformers returns (KV elements and bytes, recurrent and
convolution state, DeepSeek-V4's compressor overlap). The planner must match every figure
exactly, for

* the small configs under ``fixtures/hf_configs_2026`` (written for these tests, one or two per
  architecture, with the keys of the published files; sources in ``sources.toml`` there), and
* the 15 published config.json files of ``../shared/configs-2026`` (read from there, never
  copied into the repository; SOURCES.md there says where each comes from).

Conventions of the comparison, as for the older architectures (``test_params_fixtures.py``):
transformers' sliding-window layers keep ``w - 1`` tokens (the planner sizes a window at ``w``,
the decoded token included, as vLLM allocates it); transformers keeps ``kernel`` convolution
columns per channel where ``kernel - 1`` suffice (vLLM), so the planner's state is one column
fewer. DeepSeek-V4's compressed entries are ``floor(T/ratio)`` per layer: the fixture's lengths
are multiples of 128, where the planner's per-token share is exact and the compressor's buffer
of a block still filling is empty.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from planner.formulas.memory import state_bytes_per_sequence
from planner.spec.architecture import LinearAttention, Mamba2
from planner.spec.catalog import load_config, spec_from_file
from planner.spec.figures import model_figures
from planner.spec.hf_config import READERS, spec_from_config
from planner.spec.hf_readers_2026 import READERS_2026
from planner.spec.params import count_params

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "hf_counts_2026.json").read_text())
MODELS = FIXTURE["models"]
SMALL = ROOT / "tests" / "fixtures" / "hf_configs_2026"
PUBLISHED = ROOT.parent / "shared" / "configs-2026"


def _path(name: str) -> Path:
    entry = MODELS[name]
    if entry["published"]:
        return PUBLISHED / Path(entry["config"]).name
    return ROOT / entry["config"]


def test_fixture_provenance() -> None:
    assert FIXTURE["generated_by"] == "scripts/hf_counts_2026.py"
    assert FIXTURE["transformers_version"] == "5.23.0"
    published = sorted(n for n, m in MODELS.items() if m["published"])
    small = sorted(n for n, m in MODELS.items() if not m["published"])
    assert len(published) == 15
    assert small == sorted(p.stem for p in SMALL.glob("*.json"))
    assert len(small) == 12


def test_every_2026_model_type_is_registered_and_measured() -> None:
    types = {m["model_type"] for m in MODELS.values()}
    assert types == {"deepseek_v32", "glm_moe_dsa", "deepseek_v4", "qwen3_5", "qwen3_5_moe",
                     "nemotron_h", "minimax_m2", "mimo_v2_flash", "gemma4", "kimi_k25",
                     "llama4"}
    assert set(READERS_2026) <= set(READERS)
    small_types = {m["model_type"] for m in MODELS.values() if not m["published"]}
    assert small_types == types


def test_small_configs_record_their_source() -> None:
    with (SMALL / "sources.toml").open("rb") as fh:
        sources = tomllib.load(fh)
    assert sorted(sources) == sorted(p.stem for p in SMALL.glob("*.json"))
    for name, record in sources.items():
        assert record["shape_of"].startswith("configs-2026/"), name
        assert (PUBLISHED / Path(record["shape_of"]).name).name.endswith(".json")
        assert record["written"], name


@pytest.mark.parametrize("name", sorted(MODELS))
def test_parameters_match_transformers(name: str) -> None:
    expected = MODELS[name]
    spec = spec_from_file(_path(name), name)
    counts = count_params(spec)
    assert (counts.total, counts.active, counts.embedding, counts.lm_head, spec.vision_params) \
        == (expected["total"], expected["active"], expected["embedding"], expected["lm_head"],
            expected["vision"])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_cache_matches_transformers(name: str) -> None:
    """KV elements and bytes at both measured lengths, and the fixed state, exactly."""
    cache = MODELS[name]["cache"]
    spec = spec_from_file(_path(name), name)
    f = model_figures(spec)
    window = f.model_sliding_window_tokens
    for i, tokens in enumerate(cache["tokens"]):
        kept = min(tokens, window - 1) if window else 0
        elems = f.model_kv_elems_per_token_full * tokens + f.model_kv_elems_per_token_window * kept
        assert elems == cache["kv_elems"][i]
        assert elems * 2 == cache["kv_bytes"][i]  # bf16 KV, as transformers keeps it
        assert cache["buffer_elems"][i] == 0
        assert cache["recurrent_elems"][i] == f.model_state_recurrent_elems_per_sequence
    mixers = [layer.attention for layer in spec.layers
              if isinstance(layer.attention, (LinearAttention, Mamba2))]
    one_column = sum(m.conv_dim for m in mixers)
    assert cache["conv_elems"][0] == sum(m.conv_dim * m.conv_kernel for m in mixers)
    assert f.model_state_elems_per_sequence == (cache["recurrent_elems"][0]
                                                + cache["conv_elems"][0] - one_column
                                                + cache["overlap_elems"][0])
    # bytes of the fixed state at the dtypes transformers keeps (the convolution columns the
    # planner counts at 16 bit, the recurrent state at the config's state dtype)
    planner_bytes = state_bytes_per_sequence(f.model_state_elems_per_sequence,
                                             f.model_state_recurrent_elems_per_sequence,
                                             f.model_state_recurrent_bits)
    hf_bytes = (cache["recurrent_bytes"][0] + cache["conv_bytes"][0] - 2 * one_column
                + cache["overlap_bytes"][0])
    assert planner_bytes == hf_bytes


# ------------------------------------------------------------ the figures the issue quotes
def test_deepseek_v32_indexer_keys_add_22_percent() -> None:
    """DeepSeek-V3.2 in bf16: 61 layers x (512 latent + 64 rope + 128 indexer key) x 2 B =
    85,888 B per token, 15,616 B (22.2%) over DeepSeek-V3's latent alone."""
    f = model_figures(spec_from_file(PUBLISHED / "DeepSeek-V3.2.json", "DeepSeek-V3.2"))
    assert f.model_kv_elems_per_token_full * 2 == 85_888 == 61 * (576 + 128) * 2
    assert 61 * 128 * 2 == 15_616
    assert f.model_sparse_topk_tokens == 2048
    # attention core over the top 2048 tokens: 61 layers x 2*128*(192 + 128) per pair
    assert f.model_attn_flops_per_pair_sparse == 61 * 2 * 128 * (192 + 128)
    # the indexer scores every cached token: 2 * 64 heads * 128 per pair and layer
    assert f.model_attn_flops_per_pair_full == 61 * 2 * 64 * 128


def test_glm52_only_full_indexer_layers_store_keys() -> None:
    """GLM-5.2's IndexShare: 21 of 78 layers compute (and cache) their own indexer."""
    f = model_figures(spec_from_file(PUBLISHED / "GLM-5.2.json", "GLM-5.2"))
    assert f.model_kv_elems_per_token_full == 78 * 576 + 21 * 128
    g = model_figures(spec_from_file(PUBLISHED / "GLM-5.json", "GLM-5"))
    assert g.model_kv_elems_per_token_full == 78 * (576 + 128)


def test_deepseek_v4_flash_cache_is_a_per_token_term_plus_megabytes_per_sequence() -> None:
    """V4-Flash, bf16: 21 CSA layers keep (512 + 128)/4 = 160 elements per token, 20 HCA
    layers 512/128 = 4, so 3,440 elements (6,880 B) per token; every layer's window holds
    127 tokens of 512 (the 2 pure sliding layers K and V apart): 45 x 512 x 127 x 2 B =
    5,852,160 B per sequence past 128 tokens; CSA's overlap state 21 x 2 x 4 x 640 x 2 B."""
    spec = spec_from_file(PUBLISHED / "DeepSeek-V4-Flash.json", "DeepSeek-V4-Flash")
    f = model_figures(spec)
    assert f.model_kv_elems_per_token_full == 21 * 160 + 20 * 4 == 3440
    assert f.model_kv_elems_per_token_window == (41 + 2 * 2) * 512
    assert f.model_kv_elems_per_token_window * (f.model_sliding_window_tokens - 1) * 2 \
        == 5_852_160
    assert f.model_state_elems_per_sequence == 21 * 2 * 4 * (512 + 128)


def test_nemotron_super_reads_infinity_and_keeps_fp32_ssm_state() -> None:
    """NVIDIA-Nemotron-3-Super's config.json holds ``"time_step_limit": [0.0, Infinity]``,
    which transformers reads as a float; the SSM state is float32
    (``mamba_ssm_cache_dtype``): 40 Mamba-2 layers x 128 heads x 64 x 128 at 4 B =
    167,772,160 B, plus the convolution window 40 x 10,240 x 3 at 2 B."""
    path = PUBLISHED / "NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json"
    assert load_config(path)["time_step_limit"] == [0.0, float("inf")]
    f = model_figures(spec_from_file(path, "nemotron-3-super"))
    assert f.model_state_recurrent_bits == 32
    assert f.model_state_recurrent_elems_per_sequence * 4 == 167_772_160
    assert state_bytes_per_sequence(f.model_state_elems_per_sequence,
                                    f.model_state_recurrent_elems_per_sequence,
                                    32) == 167_772_160 + 40 * 10_240 * 3 * 2


def test_llama4_maverick_without_vision_config_reads_its_text_model() -> None:
    """The abridged Maverick file has no ``vision_config``: transformers'
    ``AutoModelForCausalLM`` builds the text model alone (400.7 B total, 17.2 B active)."""
    spec = spec_from_file(PUBLISHED / "Llama-4-Maverick-17B-128E-Instruct.json", "maverick")
    counts = count_params(spec)
    assert (counts.total, counts.active) == (400_711_848_960, 17_184_691_200)
    assert spec.vision_params == 0


def test_quantized_checkpoints_read_their_quantization_config() -> None:
    """Gemma-4-31B-IT-NVFP4 (modelopt NVFP4, W4A4) takes the fp4 matmul path; Kimi-K2.5's
    int4 compressed-tensors scheme sits inside ``text_config`` (W4A16)."""
    gemma = spec_from_file(PUBLISHED / "Gemma-4-31B-IT-NVFP4.json", "gemma-4-31b-nvfp4")
    assert gemma.quantization is not None and gemma.quantization.compute_path == "fp4"
    kimi = spec_from_file(PUBLISHED / "Kimi-K2.5.json", "kimi-k2.5")
    assert kimi.quantization is not None and kimi.quantization.weight_bits == 4
    assert kimi.quantization.compute_path == "16bit"


def test_deepseek_v4_fp4_experts_are_stored_as_mxfp4() -> None:
    """DeepSeek-V4's ``expert_dtype`` "fp4" (vLLM ``DeepseekV4FP8Config``: ``Mxfp4MoEMethod``
    for the routed experts, FP8 blocks for the rest): each routed expert matrix takes 4 bits
    a weight + one 8-bit scale per 32 inputs (4.25) instead of 8 bits + one fp32 scale per
    128 x 128 block. By hand from V4-Flash's keys (43 layers, 256 experts, hidden 4096,
    moe_intermediate_size 2048): per layer and expert gate and up (4096 -> 2048) and down
    (2048 -> 4096), each 8,388,608 weights: fp8 8,388,608 x 8 + 16 x 32 x 32 bits, MXFP4
    8,388,608 x 4.25; the checkpoint shrinks by 43 x 256 x 3 x (67,125,248 - 35,651,584) bits
    = 129.9 GB, and the matmul path stays fp8."""
    from dataclasses import replace

    from planner.spec.quant_config import checkpoint_bits

    spec = spec_from_file(PUBLISHED / "DeepSeek-V4-Flash.json", "DeepSeek-V4-Flash")
    scheme = spec.quantization
    assert scheme is not None and scheme.experts is not None
    assert scheme.experts.dtype == "mxfp4" and scheme.compute_path == "fp8"
    fp4 = checkpoint_bits(spec, scheme).matmul
    fp8 = checkpoint_bits(spec, replace(scheme, experts=None)).matmul
    n = 4096 * 2048
    per_matrix = (n * 8 + 16 * 32 * 32) - n * 17 // 4
    assert (per_matrix, n * 17 // 4) == (67_125_248 - 35_651_584, 35_651_584)
    assert fp8 - fp4 == 43 * 256 * 3 * per_matrix
    cfg = json.loads((PUBLISHED / "DeepSeek-V4-Flash.json").read_text())
    base = spec_from_config({**cfg, "expert_dtype": "fp8"}, "flash-base")
    assert base.quantization is not None and base.quantization.experts is None


def test_kimi_k2_at_the_top_level_reads_as_its_k25_text_model() -> None:
    """A Kimi-K2 config (``model_type`` kimi_k2) is Kimi-K2.5's text model: the same counts."""
    cfg = json.loads((SMALL / "tiny-kimi-k2.5.json").read_text())
    spec = spec_from_config({**cfg["text_config"], "tie_word_embeddings": False}, "k2")
    counts = count_params(spec)
    assert spec.model_type == "kimi_k2"
    assert (counts.total, counts.active) == (MODELS["tiny-kimi-k2.5"]["total"],
                                             MODELS["tiny-kimi-k2.5"]["active"])


def test_bad_2026_keys_name_the_key() -> None:
    cfg = json.loads((SMALL / "tiny-deepseek-v4.json").read_text())
    with pytest.raises(Exception, match="compress_ratios"):
        spec_from_config({**cfg, "compress_ratios": [0, 3, 4, 4, 0, 0]})
    nemo = json.loads((SMALL / "tiny-nemotron-h.json").read_text())
    with pytest.raises(Exception, match="hybrid_override_pattern"):
        spec_from_config({**nemo, "hybrid_override_pattern": "MEX"})
    with pytest.raises(Exception, match=r"num_experts_per_tok.*at most n_routed_experts"):
        spec_from_config({**nemo, "num_experts_per_tok": 9})


@pytest.mark.parametrize(("change", "message"), [
    ({"max_position_embeddings": 0},
     "config key 'max_position_embeddings' must be at least 1 (an integer from 1 to "
     "2,147,483,647), got 0"),
    ({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 10**20}},
     "config key 'quantization_config.group_size' must be an integer from -1 to 16,777,216, "
     "got a number of 21 digits"),
    ({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 0}},
     "config key 'quantization_config.group_size' must be -1 (one group per column) or from 1 "
     "to 16,777,216, got 0"),
    ({"num_experts_per_tok": 9},
     "config key 'num_experts_per_tok' must be from 1 to the 8 experts per layer, got 9"),
])
def test_config_keys_out_of_range_are_refused_naming_the_key(change: dict, message: str) -> None:
    """Issue 28's wrong accepts and unclear errors on config.json: each refused in one line
    naming the key and its allowed range (a top-k above the experts used to reach the
    database and come back as a CHECK-constraint message)."""
    cfg = json.loads((ROOT / "seeds" / "models" / "mixtral-8x7b.json").read_text())
    with pytest.raises(Exception) as err:
        spec_from_config({**cfg, **change}, "mixtral")
    assert str(err.value) == f"mixtral: {message}"
    assert "\n" not in str(err.value)


def test_sparse_attention_flops_count_the_top_k_tokens_only() -> None:
    """DeepSeek-V3.2 prefill of S = 4,096 tokens: the attention core reads at most the 2,048
    indexer-selected tokens per query, 2048*2049/2 + (4096-2048)*2048 = 6,292,480 pairs (a full
    causal mask would keep 8,390,656); the indexer scores all 8,390,656. Decode at T = 10,000:
    min(T, 2048) pairs per step for the core, T for the indexer."""
    from planner.formulas.flops import decode_step_flops, prefill_flops

    f = model_figures(spec_from_file(PUBLISHED / "DeepSeek-V3.2.json", "DeepSeek-V3.2"))
    core, index = 61 * 2 * 128 * (192 + 128), 61 * 2 * 64 * 128
    args = dict(matmul_params_per_token=0, model_lm_head_matmul_params=0,
                model_attn_flops_per_pair_full=f.model_attn_flops_per_pair_full,
                model_attn_flops_per_pair_window=0, model_sliding_window_tokens=0,
                attention_convention_code=0, logits_convention_code=0,
                model_attn_flops_per_pair_sparse=f.model_attn_flops_per_pair_sparse,
                model_sparse_topk_tokens=f.model_sparse_topk_tokens)
    assert prefill_flops(4096, **args) == core * 6_292_480 + index * 8_390_656
    step = decode_step_flops(10_000, 1, 0, 0, f.model_attn_flops_per_pair_full, 0, 0,
                             f.model_attn_flops_per_pair_sparse, f.model_sparse_topk_tokens)
    assert step == core * 2048 + index * 10_000


def test_engines_keep_indexer_keys_at_fp8_with_scales() -> None:
    """vLLM and SGLang cache a DSA indexer key as 128 fp8 values and one float32 scale (132 B
    per token and layer) whatever kv_dtype: DeepSeek-V3.2 in bf16 takes 61 x (576 x 2 + 132) =
    78,324 B per token in their pools, 85,888 B in transformers' cache; at fp8 KV SGLang
    61 x (576 + 132) = 43,188 B, vLLM 61 x (656 + 132) = 48,068 B (FlashMLA sparse's
    ``fp8_ds_mla`` row: 512 fp8 + 16 B scales + 128 B bf16 RoPE). The roofline view and
    TRT-LLM keep kv_dtype; GLM-5.2 only on 21 layers."""
    from planner.formulas.engine_memory import SGLANG, TRTLLM, VLLM, kv_bytes_per_token_per_gpu

    f = model_figures(spec_from_file(PUBLISHED / "DeepSeek-V3.2.json", "DeepSeek-V3.2"))
    assert f.model_indexer_elems_per_token == 61 * 128

    def pool(engine: int, bits: int) -> float:
        return kv_bytes_per_token_per_gpu(f.model_kv_elems_per_token_full,
                                          f.model_kv_elems_per_token_window, bits, 1, 1, 0, 1,
                                          engine, f.model_indexer_elems_per_token,
                                          f.model_sparse_mla_layers,
                                          f.model_vllm_v4_kv_bytes_per_token)

    assert f.model_sparse_mla_layers == 61
    assert pool(VLLM, 16) == pool(SGLANG, 16) == pytest.approx(78_324)
    assert pool(SGLANG, 8) == pytest.approx(43_188)
    assert pool(VLLM, 8) == pytest.approx(48_068)
    assert pool(TRTLLM, 16) == pool(0, 16) == 85_888
    g = model_figures(spec_from_file(PUBLISHED / "GLM-5.2.json", "GLM-5.2"))
    assert g.model_indexer_elems_per_token == 21 * 128
