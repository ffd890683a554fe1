"""Quantized checkpoints: quantization_config → stored weight bytes, against published sizes.

Published figures (each case names its source):

* GPTQ, TheBloke/Llama-2-13B-GPTQ, README "Provided files" table at commit b7db471d
  (https://huggingface.co/TheBloke/Llama-2-13B-GPTQ/blob/b7db471d1789802a3a8e3b93cdd66a9f046f17c3/README.md):
  main (4 bit, group 128, act order False) 7.26 GB; gptq-4bit-32g-actorder_True 8.00 GB;
  gptq-4bit-64g-actorder_True 7.51 GB (the Hub's file sizes, decimal GB, two decimals).
* AWQ, three checkpoints whose own README "Provided files, and AWQ parameters" table is read in
  full (TheBloke's README_AWQ.md-provided-files section; public copies found by exact-substring
  search, find_string ids given; each table has one row, branch main, 4 bit, group 128, GEMM):
  TheBloke/Mistral-7B-v0.1-AWQ 4.15 GB (id 70911152566,
  https://huggingface.co/TheBloke/Mistral-7B-v0.1-AWQ), TheBloke/LlamaGuard-7B-AWQ 3.89 GB
  (id 71342332426, https://huggingface.co/TheBloke/LlamaGuard-7B-AWQ) and
  TheBloke/TinyLlama-1.1B-Chat-v1.0-AWQ 0.77 GB (id 15938422433,
  https://huggingface.co/TheBloke/TinyLlama-1.1B-Chat-v1.0-AWQ). Sizes are the Hub's, decimal GB
  with two decimals. Their configs are typed from the base models' published config.json
  (mistralai/Mistral-7B-v0.1, meta-llama/Llama-2-7b-hf's shape, TinyLlama/TinyLlama-1.1B-Chat-v1.0)
  with TheBloke's AWQ block; the Mistral shape keys equal a transformers dump of
  mistralai/Mistral-7B-v0.1's config vendored in github:zkkython/llmsim
  (hf_config/mistralai__Mistral-7B-v0.1.json at commit 39d00255).
* AWQ, TheBloke/Llama-2-13B-chat-AWQ, README at commit 7d6f9050
  (https://huggingface.co/TheBloke/Llama-2-13B-chat-AWQ/blob/7d6f9050f5627806dcfdb2f96b39aac1aa6bdf63/README.md):
  main (4 bit, group 128) 7.25 GB, read from two sibling Llama-2-13B AWQ checkpoints' tables
  (LLaMA2-13B-Tiefighter-AWQ and Mythalion-13B-AWQ, find_string ids 47308076393 and
  48020247801), not from this checkpoint's own page, whose table no copy found reaches. The
  three checkpoints above are the ones read from their own pages.
* FP8 block-wise, deepseek-ai/DeepSeek-V3 at commit afb92e1f
  (https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/afb92e1fa402c2be2a9eb085312bb02e0384d6c7/model.safetensors.index.json):
  ``metadata.total_size`` 688,586,727,753 B, which includes the multi-token-prediction module
  (layer 61: one more MoE decoder layer, ``eh_proj`` 2d x d, ``enorm``/``hnorm``, its own
  copies of the embedding and of the LM head with ``shared_head.norm``; DeepSeek-V3 README:
  "685B ... includes 671B of the Main Model weights and 14B of the Multi-Token Prediction").
* MXFP4 and NVFP4: bits per weight from their definitions (OCP Microscaling Formats v1.0:
  E2M1 values with one E8M0 scale per 32; NVIDIA NVFP4: E2M1 with one FP8 E4M3 scale per 16
  and one fp32 per tensor).
* MXFP4 end to end, openai/gpt-oss-20b
  (https://huggingface.co/openai/gpt-oss-20b/blob/main/model.safetensors.index.json):
  ``metadata.total_size`` 13,761,264,768 B (read in a verbatim copy of the index vendored in a
  public GitHub repository, beside the same config.json as tests/fixtures/hf_configs).

The configs of the two Llama-2-13B checkpoints are typed from meta-llama/Llama-2-13b-hf's
config.json with the quantization_config blocks TheBloke publishes (tests/fixtures/quantized).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from planner import service
from planner.core.errors import ConfigError
from planner.core.units import DTYPES, GB
from planner.spec.catalog import load_gpus, resolve_model
from planner.spec.hf_config import spec_from_config
from planner.spec.params import count_params
from planner.spec.quant_config import QuantScheme, checkpoint_bits, quant_from_config

FIXTURES = Path(__file__).parents[1] / "fixtures" / "quantized"


def _config(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _bytes(cfg: dict) -> Fraction:
    spec = spec_from_config(cfg)
    return checkpoint_bits(spec, spec.quantization).total_bytes


GPTQ_CASES = [
    # (group_size, desc_act, exact bytes counted, published GB)
    (128, False, 7_255_009_280, 7.26),
    (32, True, 7_998_433_280, 8.00),
    (64, True, 7_502_817_280, 7.51),
]


@pytest.mark.parametrize(("group", "act_order", "exact", "published_gb"), GPTQ_CASES)
def test_gptq_llama2_13b_matches_published_sizes(group: int, act_order: bool, exact: int,
                                                 published_gb: float) -> None:
    cfg = _config("llama-2-13b-gptq.json")
    cfg["quantization_config"].update(group_size=group, desc_act=act_order)
    stored = _bytes(cfg)
    # qweight 4 bit + fp16 scales and 4-bit qzeros per group + int32 g_idx per input row;
    # fp16 embeddings, LM head and norms.
    assert stored == exact
    assert abs(float(stored) / (published_gb * GB) - 1) < 0.01


AWQ_CASES = [
    # (fixture, exact bytes counted, published GB from the checkpoint's own README)
    ("mistral-7b-v0.1-awq.json", 4_150_796_288, 4.15),
    ("llamaguard-7b-awq.json", 3_889_307_648, 3.89),
    ("tinyllama-1.1b-chat-v1.0-awq.json", 765_693_952, 0.77),
]


@pytest.mark.parametrize(("fixture", "exact", "published_gb"), AWQ_CASES)
def test_awq_checkpoints_match_their_published_sizes(fixture: str, exact: int,
                                                     published_gb: float) -> None:
    """AWQ GEMM packing: qweight int32 [in, out/8] (4 bits a weight), qzeros int32
    [in/128, out/8] and fp16 scales [in/128, out] (20 bits per group of 128), no g_idx;
    embeddings, LM head and norms stay fp16 (AutoAWQ quantizes only decoder linears)."""
    stored = _bytes(_config(fixture))
    assert stored == exact
    assert round(float(stored) / GB, 2) == published_gb  # the README's own rounding
    assert abs(float(stored) / (published_gb * GB) - 1) < 0.01


def test_awq_llama2_13b_matches_published_size() -> None:
    stored = _bytes(_config("llama-2-13b-chat-awq.json"))
    assert stored == 7_247_882_240  # GPTQ's figure without g_idx
    assert abs(float(stored) / (7.25 * GB) - 1) < 0.01


def test_fp8_block_deepseek_v3_matches_the_safetensors_index() -> None:
    _name, cfg = resolve_model("deepseek-v3")
    assert cfg["quantization_config"]["weight_block_size"] == [128, 128]
    main = _bytes(cfg)
    assert main == 673_150_552_416  # the main model (what a server loads without MTP)
    # The checkpoint also holds the MTP module: one more decoder layer counted by the same
    # rule, plus eh_proj (2d x d), three norms and copies of the embedding and LM head, in bf16.
    mtp_layer = _bytes({**cfg, "num_hidden_layers": cfg["num_hidden_layers"] + 1}) - main
    d, vocab = cfg["hidden_size"], cfg["vocab_size"]
    mtp_extra = (2 * d * d + 3 * d + 2 * vocab * d) * 2
    published = 688_586_727_753
    assert abs(float(main + mtp_layer + mtp_extra) / published - 1) < 0.0001
    assert abs(float(main) / published - 1) < 0.023  # the main model alone: 2.2 % less


def test_mxfp4_gpt_oss_20b_matches_the_safetensors_index() -> None:
    """Experts in MXFP4 (4-bit E2M1 blocks of 32 with one E8M0 scale: 4.25 bits per weight);
    attention, router, embedding and LM head in bf16 (``modules_to_not_convert``); expert and
    attention biases, sinks and norms in bf16. The count is the index's, to the byte."""
    cfg = json.loads((FIXTURES.parent / "hf_configs" / "gpt-oss-20b.json").read_text())
    assert cfg["quantization_config"]["quant_method"] == "mxfp4"
    stored = _bytes(cfg)
    assert stored == 13_761_264_768
    assert abs(float(stored) / 13_761_264_768 - 1) < 0.01


def test_fp4_formats_bits_per_weight_are_exact() -> None:
    assert DTYPES["mxfp4"].bits_per_weight == 4.25  # 4 + 8/32
    assert DTYPES["nvfp4"].bits_per_weight == 4.5  # 4 + 8/16
    mx = quant_from_config({"quantization_config": {"quant_method": "mxfp4"}})
    assert mx is not None and mx.bits_per_weight(2880, 5760) == Fraction(17, 4)
    nv = quant_from_config({"quantization_config": {
        "quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
        "exclude_modules": ["lm_head"]}})
    assert nv is not None and nv.compute_path == "fp4" and not nv.weight_only
    # 4.5 bits plus two fp32 per-tensor scales (weight_scale_2, input_scale)
    assert nv.bits_per_weight(4096, 4096) == Fraction(9, 2) + Fraction(64, 4096 * 4096)


def test_bitsandbytes_4bit_blocks_and_double_quant() -> None:
    plain = quant_from_config({"quantization_config": {
        "quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}})
    double = quant_from_config({"quantization_config": {
        "quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": True}})
    assert plain is not None and double is not None and plain.dtype == "int4"
    n = 4096 * 4096
    assert plain.matrix_bits(4096, 4096) == n * 4 + n // 64 * 32 + 16 * 32
    # 8-bit absmax per 64, one fp32 per 256 blocks, code tables and offset per tensor
    assert double.matrix_bits(4096, 4096) == (n * 4 + n // 64 * 8 + n // 64 // 256 * 32
                                              + 16 * 32 + 256 * 32 + 32)
    assert double.keeps("lm_head") and not double.keeps("model.layers.0.mlp.up_proj")


def test_compressed_tensors_schemes() -> None:
    w4a16 = quant_from_config({"quantization_config": {
        "quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None,
                                      "weights": {"num_bits": 4, "type": "int",
                                                  "strategy": "group", "group_size": 128,
                                                  "symmetric": True}}},
        "ignore": ["lm_head"]}})
    assert w4a16 is not None and (w4a16.dtype, w4a16.group_size, w4a16.weight_only) == (
        "int4", 128, True)
    # packed int32 values, a 16-bit scale per 128 inputs per output, int64[2] weight_shape
    assert w4a16.matrix_bits(4096, 1024) == 4096 * 1024 * 4 + 32 * 1024 * 16 + 128
    fp8 = quant_from_config({"quantization_config": {
        "quant_method": "compressed-tensors", "format": "float-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"],
                                      "weights": {"num_bits": 8, "type": "float",
                                                  "strategy": "channel", "symmetric": True},
                                      "input_activations": {"num_bits": 8, "type": "float",
                                                            "strategy": "token",
                                                            "dynamic": True}}},
        "ignore": ["lm_head", "re:.*mlp.gate$"]}})
    assert fp8 is not None and (fp8.dtype, fp8.compute_path) == ("fp8", "fp8")
    assert fp8.matrix_bits(4096, 1024) == 4096 * 1024 * 8 + 1024 * 16
    assert fp8.keeps("model.layers.3.mlp.gate") and not fp8.keeps("model.layers.3.mlp.gate_proj")


def test_modules_kept_in_16_bit_count_at_16_bit() -> None:
    """gpt-oss's modules_to_not_convert form (attention and routers stay bf16, the routed
    experts are MXFP4), here on Mixtral-8x7B's shape (Mixtral's expert names w1/w2/w3)."""
    _name, cfg = resolve_model("mixtral-8x7b")
    spec = spec_from_config(cfg)
    scheme = QuantScheme(method="mxfp4", dtype="mxfp4", weight_bits=4, group_size=32,
                         scale_bits=8, keep=("model.layers.*.self_attn", "lm_head"))
    stored = checkpoint_bits(spec, scheme)
    d, f, experts, layers = 4096, 14336, 8, 32
    attention = layers * (2 * d * d + 2 * d * 1024)
    routers = layers * d * experts
    expert_bits = layers * experts * 3 * (d * f * 4 + d * f // 32 * 8)
    assert stored.matmul == expert_bits + (attention + routers) * 16


def test_quantization_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"quantization_config\.quant_method.*'hqq' is not "
                                          r"supported; supported: gptq, awq, fp8"):
        quant_from_config({"quantization_config": {"quant_method": "hqq"}}, "m")
    with pytest.raises(ConfigError, match=r"quantization_config\.bits.*one of 2, 3, 4, 8"):
        quant_from_config({"quantization_config": {"quant_method": "gptq", "bits": 5}}, "m")
    with pytest.raises(ConfigError, match=r"weight_block_size.*two positive integers"):
        quant_from_config({"quantization_config": {"quant_method": "fp8",
                                                   "weight_block_size": [128]}}, "m")


def test_weight_dtype_auto_uses_the_checkpoint_and_an_explicit_dtype_wins() -> None:
    spec = spec_from_config(_config("llama-2-13b-gptq.json"), "llama-2-13b-gptq")
    h100 = load_gpus()["h100-sxm"]
    auto = service.estimate(spec, h100, {})
    assert auto["inputs"]["weight_dtype"] == "auto"
    assert auto["weights_bytes"] == 7_255_009_280
    assert auto["compute_dtype"] == "bf16"  # GPTQ is weight-only
    bf16 = service.estimate(spec, h100, {"weight_dtype": "bf16"})
    assert bf16["weights_bytes"] == count_params(spec).total * 2
    w4a8 = service.estimate(spec, h100, {"quant_mode": "weight_activation"})
    assert w4a8["compute_dtype"] == "bf16"  # an H100 lists no int4 tensor peak


def test_quant_mode_picks_the_matmul_path() -> None:
    _name, cfg = resolve_model("deepseek-v3")
    spec = spec_from_config(cfg, "deepseek-v3")
    h100 = load_gpus()["h100-sxm"]
    assert service.estimate(spec, h100, {"gpus": 8, "tp": 8})["compute_dtype"] == "fp8"
    assert service.estimate(spec, h100, {"gpus": 8, "tp": 8, "quant_mode": "weight_only"}
                            )["compute_dtype"] == "bf16"
    mx = service.estimate(spec, h100, {"gpus": 8, "tp": 8, "weight_dtype": "mxfp4"})
    assert mx["compute_dtype"] == "bf16"
    a100 = load_gpus()["a100-80gb"]
    int8 = service.estimate(spec, a100, {"gpus": 8, "tp": 8, "weight_dtype": "int8"})
    assert int8["compute_dtype"] == "int8"
