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
  by default for DeepSeek V3.2"): bf16 whatever the GPU;
* a ModelOpt checkpoint's FP8 KV cache (``kv_cache_scheme`` ``{"dynamic": false, "num_bits":
  8, "type": "float"}``, Gemma-4-31B-IT-NVFP4's config.json): vLLM's
  ``resolve_kv_cache_dtype_string`` (``vllm/utils/torch_utils.py``) and SGLang's
  ``configure_kv_cache_dtype`` take fp8 for ``auto``.

``kv_dtype`` ``auto`` (the default) is each engine's launch default; an explicit dtype is that
dtype, except vLLM with DeepSeek-V4 (``fp8_ds_mla`` whatever is chosen).

Compute capabilities from NVIDIA's table (developer.nvidia.com/cuda-gpus), in the catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.core.errors import ValidationError
from planner.formulas.engine_memory import vllm_block_alignment
from planner.service.gpu_records import spec_from_user
from planner.spec.catalog import load_gpus, spec_from_file
from tests.conftest import estimate

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT.parent / "shared" / "configs-2026"
GPUS = load_gpus()


def _spec(name: str) -> Any:
    return spec_from_file(PUBLISHED / f"{name}.json", name)


def _columns(spec: Any, gpu: Any, **inputs: Any) -> dict[str, Any]:
    """Every column of the scenario (the outputs and the derived ones, kv_bits among them)."""
    from planner import service
    from planner.compute.inputs import INFERENCE_INPUTS, parse_inputs
    from planner.compute.table import graph

    return graph("inference").compute(service.scenario_columns(
        spec, gpu, parse_inputs(INFERENCE_INPUTS, inputs)))


def test_the_catalog_knows_each_nvidia_parts_compute_capability() -> None:
    figures = {name: GPUS[name].compute_capability for name in (
        "b200", "gb200", "b300", "gb300", "rtx-pro-6000", "h100-sxm", "h200", "h20", "l40s",
        "a10", "a100-80gb", "t4", "mi355x", "gaudi3", "tpu-v6e")}
    assert figures == {"b200": 10.0, "gb200": 10.0, "b300": 10.3, "gb300": 10.3,
                       "rtx-pro-6000": 12.0, "h100-sxm": 9.0, "h200": 9.0, "h20": 9.0,
                       "l40s": 8.9, "a10": 8.6, "a100-80gb": 8.0, "t4": 7.5, "mi355x": 0.0,
                       "gaudi3": 0.0, "tpu-v6e": 0.0}
    # 20 since rtx-3090 joined the shipped catalog from the test fixtures
    assert sum(1 for g in GPUS.values() if g.compute_capability) == 20


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


def test_an_explicit_bf16_is_bf16_and_auto_is_the_engines_default() -> None:
    """SGLang with DeepSeek-V3.2 on a B200: ``auto`` is its fp8 default, 61 x (576 + 132) =
    43,188 B a token; an explicit bf16 is bf16, 61 x (1,152 + 132) = 78,324 B (SGLang runs
    both). ``auto`` and bf16 agree for a model without an engine rule (Qwen3.5-27B)."""
    b200 = GPUS["b200"]
    v32 = _spec("DeepSeek-V3.2")
    common: dict[str, Any] = {"gpus": 8, "tp": 8, "prompt_tokens": 1024, "output_tokens": 128}
    auto = _columns(v32, b200, engine="sglang", kv_dtype="auto", **common)
    bf16 = _columns(v32, b200, engine="sglang", kv_dtype="bf16", **common)
    assert (auto["kv_bits"], auto["kv_bytes_per_token_per_gpu"]) == (8, 61 * 708)
    assert (bf16["kv_bits"], bf16["kv_bytes_per_token_per_gpu"]) == (16, 61 * 1284)
    qwen = _spec("Qwen3.5-27B")
    for engine in ("vllm", "sglang", "trtllm", "roofline"):
        a = _columns(qwen, b200, engine=engine, kv_dtype="auto", **common)
        b = _columns(qwen, b200, engine=engine, kv_dtype="bf16", **common)
        assert a["kv_bits"] == b["kv_bits"] == 16
        assert a["engine_token_capacity"] == b["engine_token_capacity"], engine


def test_vllm_runs_deepseek_v4_at_fp8_whatever_is_chosen() -> None:
    """vLLM's DeepSeek-V4 kernels take one layout, ``fp8_ds_mla`` (584 B entries): kv_bits 8
    and the same pool for auto, bf16 and fp8; SGLang at bf16 keeps a 16-bit cache, 3,440 x 2 =
    6,880 B a token (its auto: fp8, 3,440 B)."""
    b200 = GPUS["b200"]
    v4 = _spec("DeepSeek-V4-Flash")
    common: dict[str, Any] = {"gpus": 8, "tp": 8, "prompt_tokens": 1024, "output_tokens": 128}
    runs = [_columns(v4, b200, engine="vllm", kv_dtype=kv, **common)
            for kv in ("auto", "bf16", "fp8")]
    assert {r["kv_bits"] for r in runs} == {8}
    assert len({r["engine_token_capacity"] for r in runs}) == 1
    sglang = {kv: _columns(v4, b200, engine="sglang", kv_dtype=kv, **common)
              for kv in ("auto", "bf16")}
    assert sglang["auto"]["kv_bytes_per_token_per_gpu"] == 3440
    assert sglang["bf16"]["kv_bytes_per_token_per_gpu"] == 3440 * 2


def test_a_checkpoints_fp8_kv_cache_is_the_engines_auto() -> None:
    """Gemma-4-31B-IT-NVFP4 declares an FP8 KV cache (ModelOpt ``kv_cache_scheme``): ``auto``
    is 8 bit under vLLM, SGLang and TRT-LLM (half the per-token bytes of bf16), 16 bit for the
    roofline (transformers caches at the model dtype); its base config declares none."""
    spec = _spec("Gemma-4-31B-IT-NVFP4")
    assert spec.quantization is not None and spec.quantization.kv_cache_bits == 8
    b200 = GPUS["b200"]
    common: dict[str, Any] = {"gpus": 1, "tp": 1, "prompt_tokens": 1024, "output_tokens": 128}
    for engine, bits in (("vllm", 8), ("sglang", 8), ("trtllm", 8), ("roofline", 16)):
        auto = _columns(spec, b200, engine=engine, kv_dtype="auto", **common)
        bf16 = _columns(spec, b200, engine=engine, kv_dtype="bf16", **common)
        assert (auto["kv_bits"], bf16["kv_bits"]) == (bits, 16), engine
        assert auto["kv_bytes_per_token_per_gpu"] * 16 == bf16["kv_bytes_per_token_per_gpu"] * bits
    assert _spec("gemma-4-26B-A4B").quantization is None


@pytest.mark.parametrize(("qc", "bits"), [
    ({"kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"}}, 8),
    ({"kv_cache_scheme": {"dynamic": True, "num_bits": 8, "type": "float"}}, 0),
    ({"kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "int"}}, 0),
    ({"kv_cache_quant_algo": "FP8"}, 8), ({"kv_cache_quant_algo": "fp8"}, 8),
    ({"kv_cache_quant_algo": None}, 0), ({}, 0)])
def test_modelopt_kv_cache_declarations(qc: dict[str, Any], bits: int) -> None:
    """vLLM's ``get_kv_cache_quant_algo_string``: a static 8-bit float scheme or the string
    FP8 (any case) is fp8; anything else falls back to the model dtype."""
    from planner.spec.quant_config import quant_from_config

    scheme = quant_from_config({"quantization_config": {"quant_method": "modelopt",
                                                         "quant_algo": "FP8", **qc}})
    assert scheme is not None and scheme.kv_cache_bits == bits


def test_kv_bits_agrees_on_numpy_rows_and_its_excel_formula() -> None:
    """kv_bits over a vector of engines, GPUs, models and choices equals the row-by-row
    figures and its rendered (Excel) tree; auto's cases as the docstring lists them."""
    import numpy as np

    from planner.compute import symbolic
    from planner.formulas.derived import kv_bits
    from planner.formulas.engine_memory import ENGINES

    e = ENGINES
    rows = [  # kv_dtype, engine, capability, sparse MLA layers, V4 bytes, checkpoint kv, bits
        ("auto", e["sglang"], 10.0, 61, 0, 0, 8), ("auto", e["sglang"], 9.0, 61, 0, 0, 16),
        ("auto", e["sglang"], 0.0, 61, 0, 0, 16), ("bf16", e["sglang"], 10.0, 61, 0, 0, 16),
        ("auto", e["vllm"], 10.0, 61, 0, 0, 16), ("auto", e["sglang"], 9.0, 0, 3915, 0, 8),
        ("fp16", e["vllm"], 9.0, 0, 3915, 0, 8), ("auto", e["trtllm"], 10.0, 0, 0, 8, 8),
        ("auto", e["roofline"], 10.0, 0, 0, 8, 16), ("fp8", e["roofline"], 10.0, 0, 0, 0, 8),
        ("int8", e["trtllm"], 12.0, 0, 0, 8, 8), ("auto", e["vllm"], 12.0, 0, 0, 0, 16)]
    cols = list(zip(*rows, strict=True))
    names = ("kv_dtype", "engine_code", "gpu_compute_capability", "model_sparse_mla_layers",
             "model_vllm_v4_kv_bytes_per_token", "model_checkpoint_kv_bits")
    vec = {n: (np.array(c, dtype=object) if n == "kv_dtype" else np.array(c, dtype=float))
           for n, c in zip(names, cols[:6], strict=True)}
    got = np.broadcast_to(np.asarray(kv_bits(**vec), dtype=float), (len(rows),))
    assert got.tolist() == [float(b) for b in cols[6]]
    assert [kv_bits(*row[:6]) for row in rows] == list(cols[6])
    expr = symbolic.symbolic(kv_bits)
    assert "auto" in symbolic.excel(expr, lambda ref: ref.upper())
    tree = np.broadcast_to(np.asarray(symbolic.compute_tree(expr, vec), dtype=float),
                           (len(rows),))
    assert tree.tolist() == got.tolist()


def test_explain_shows_how_kv_bits_was_resolved() -> None:
    """``planner scenario explain SCENARIO kv_bits``: the derived column asked for itself shows
    its formula and the six columns it reads (here SGLang, DeepSeek-V3.2, a B200: 8 bits);
    inside another column's tree it stays a leaf."""
    from planner import service

    inputs = {"engine": "sglang", "tp": 8, "gpus": 8}
    root = service.explain(_spec("DeepSeek-V3.2"), GPUS["b200"], inputs, "kv_bits")
    assert root.source == "formula" and root.value == 8 and "lookup(kv_dtype" in root.formula
    assert [c.name for c in root.children] == [
        "kv_dtype", "engine_code", "gpu_compute_capability", "model_sparse_mla_layers",
        "model_vllm_v4_kv_bytes_per_token", "model_checkpoint_kv_bits"]
    assert root.children[0].value == "auto" and root.children[2].value == 10.0
    tree = service.explain(_spec("DeepSeek-V3.2"), GPUS["b200"], inputs,
                           "kv_bytes_per_token_per_gpu")
    leaf = next(c for c in tree.children if c.name == "kv_bits")
    assert (leaf.source, leaf.children) == ("input", [])
