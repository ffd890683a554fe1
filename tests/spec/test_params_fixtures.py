"""Exact agreement with the real Hugging Face implementations.

``fixtures/hf_param_counts.json`` is written by ``scripts/hf_param_counts.py``, which instantiates
every config under ``seeds/models`` and ``fixtures/hf_configs`` with transformers on the meta
device and sums ``p.numel()`` per component. The estimator must match every component exactly.
For the small configs the script also runs the model once and measures the cache transformers
returns; the planner's KV elements per token, window and fixed per-sequence state must match it.
Real published configs under ``fixtures/hf_configs`` name their source in
``fixtures/hf_configs/sources.toml``, with how each file was obtained (``provenance``): a
verbatim copy of the published file, copied from a full quotation of it, typed and confirmed by a
measurement of the published checkpoint, or typed from memory and not verified.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from planner.spec.architecture import LinearAttention
from planner.spec.catalog import model_names, model_sources, spec_from_file
from planner.spec.figures import model_figures
from planner.spec.hf_config import SUPPORTED_MODEL_TYPES
from planner.spec.params import count_params

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "hf_param_counts.json").read_text())
MODELS = FIXTURE["models"]
COMPONENTS = ("embedding", "position", "attention", "mlp", "router", "norm", "lm_head",
              "total", "active")


def test_fixture_provenance() -> None:
    assert FIXTURE["generated_by"] == "scripts/hf_param_counts.py"
    assert FIXTURE["transformers_version"] == "5.23.0"
    assert len(MODELS) == len(list((ROOT / "seeds" / "models").glob("*.json"))) + len(
        list((ROOT / "tests" / "fixtures" / "hf_configs").glob("*.json")))
    assert len(MODELS) == 70


def test_every_supported_model_type_has_fixtures() -> None:
    """The older types here; the 2025-2026 ones in fixtures/hf_counts_2026.json
    (test_models_2026.py), whose wrappers' text types are measured through their wrappers."""
    covered = {m["model_type"] for m in MODELS.values()}
    new = json.loads((ROOT / "tests" / "fixtures" / "hf_counts_2026.json").read_text())
    covered |= {m["model_type"] for m in new["models"].values()}
    covered |= {"qwen3_5_text", "qwen3_5_moe_text", "gemma4_text"}
    # kimi_k2: Kimi-K2.5's text_config type, measured through kimi_k25 (transformers 5.23 maps
    # it to DeepseekV3Config and has no class for it at the top level)
    covered |= {"kimi_k2"}
    assert covered == set(SUPPORTED_MODEL_TYPES)
    assert len(SUPPORTED_MODEL_TYPES) == 27 + 14


def test_every_config_on_disk_has_a_fixture() -> None:
    on_disk = {p.stem for d in ("seeds/models", "tests/fixtures/hf_configs")
               for p in (ROOT / d).glob("*.json")}
    assert on_disk == set(MODELS)


def test_published_fixtures_record_their_provenance() -> None:
    """Every entry of hf_configs/sources.toml names a fixture on disk and says how it was made.

    Names with a dot are quoted keys: a bare ``[glm-4.5-air]`` would parse as a nested table.
    """
    folder = ROOT / "tests" / "fixtures" / "hf_configs"
    with (folder / "sources.toml").open("rb") as fh:
        sources = tomllib.load(fh)
    assert len(sources) == 17
    for name, record in sources.items():
        assert (folder / f"{name}.json").exists(), name
        assert record["source"] == f"https://huggingface.co/{record['hub_id']}/blob/main/config.json"
        assert record["provenance"], name
    verbatim = {n for n, r in sources.items() if r["provenance"] == "verbatim copy"}
    assert verbatim == {"llama-4-scout-17b-16e-instruct", "qwen3-next-80b-a3b-thinking",
                        "gpt-oss-20b", "llava-1.5-7b-hf", "gemma-3-1b-it", "gemma-3-27b-it",
                        "phi-3.5-moe-instruct", "qwen2.5-vl-7b-instruct", "olmo-2-1124-13b",
                        "granite-3.0-1b-a400m-instruct"}
    assert all(sources[n]["copy_found"].startswith("github:") for n in verbatim)
    quoted = {n for n, r in sources.items()
              if r["provenance"] == "copied from a quotation of the full file"}
    assert quoted == {"qwen3-next-80b-a3b-instruct"}
    assert all("find_string id" in sources[n]["cross_check"] for n in quoted)
    unverified = {n for n, r in sources.items()
                  if r["provenance"].startswith("typed from memory, not verified")}
    assert unverified == {"olmo-2-1124-7b", "deepseek-v2",
                          "granite-3.0-1b-a400m-base", "gemma-3-4b-it"}
    assert all(sources[n].get("cross_check") for n in unverified)
    # The two types with no verbatim file rest on a measurement of the published checkpoint.
    confirmed = {n for n, r in sources.items()
                 if r["provenance"].startswith("typed, shape confirmed by the published")}
    assert confirmed == {"deepseek-v2-lite", "glm-4.5-air"}
    assert all("find_string id" in sources[n]["checkpoint_check"] for n in confirmed)
    assert verbatim | quoted | unverified | confirmed == set(sources)
    # Every model_type the planner added for current models rests on a verbatim file or on a
    # confirmed one.
    grounded = verbatim | quoted | confirmed
    types = {json.loads((folder / f"{n}.json").read_text())["model_type"] for n in grounded}
    assert {"gpt_oss", "llama4", "gemma3", "gemma3_text", "deepseek_v2", "qwen3_next",
            "glm4_moe", "phimoe", "olmo2", "granitemoe", "llava", "qwen2_5_vl"} <= types


def test_every_catalog_model_has_its_hub_source() -> None:
    """seeds/models/sources.toml gives every catalog config its Hub id (quoted dotted names)."""
    sources = model_sources()
    assert sorted(sources) == model_names()
    assert sources["qwen2.5-32b-instruct"]["hub_id"] == "Qwen/Qwen2.5-32B-Instruct"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_counts_match_transformers(name: str) -> None:
    expected = MODELS[name]
    spec = spec_from_file(ROOT / expected["config"], name)
    counts = count_params(spec).as_dict()
    assert {c: counts[c] for c in COMPONENTS} == {c: expected[c] for c in COMPONENTS}
    assert spec.vision_params == expected["vision"]


def test_olmo2_13b_count_is_its_checkpoint_size() -> None:
    """allenai/OLMo-2-1124-13B is stored in float32: the model.safetensors.index.json vendored
    beside the verbatim config (github:mauer4/Attention-From-Scratch at commit 381a295f, a
    snapshot of the Hub repository) gives metadata.total_size 54,864,793,600 B, which is 4 B
    for every parameter transformers and the planner count, and nothing else."""
    name = "olmo-2-1124-13b"
    spec = spec_from_file(ROOT / MODELS[name]["config"], name)
    total = count_params(spec).total
    assert total == MODELS[name]["total"] == 13_716_198_400
    assert total * 4 == 54_864_793_600


def test_deepseek_v2_lite_count_is_its_checkpoint_size() -> None:
    """deepseek-ai/DeepSeek-V2-Lite is stored in bf16. A public analysis of the checkpoint
    (find_string id 69506398894, "07 — Roofline and Memory Budget", which reads the Hub
    repository's model.safetensors.index.json) quotes ``total_size: 31412968448`` and its own
    per-component accounting: attention 27 x 13,762,560 and norms 27 x (2 x 2048 + 512) + 2048.
    The typed fixture reproduces all three through transformers' count, to the element: its
    shape keys are the published checkpoint's, whatever its byte layout."""
    name = "deepseek-v2-lite"
    spec = spec_from_file(ROOT / MODELS[name]["config"], name)
    counts = count_params(spec)
    assert counts.total == MODELS[name]["total"] == 15_706_484_224
    assert counts.total * 2 == 31_412_968_448
    assert counts.attention == MODELS[name]["attention"] == 27 * 13_762_560
    assert counts.norm == MODELS[name]["norm"] == 27 * (2 * 2048 + 512) + 2048


def test_glm45_air_count_is_the_loaded_models_module_tree() -> None:
    """zai-org/GLM-4.5-Air as transformers 4.54 loads it from the Hub files: a public ms-swift
    conversion log (find_string id 48221590695, model_dir .../ZhipuAI/GLM-4.5-Air) prints the
    loaded ``Glm4MoeConfig`` (every key equal to the fixture's) and the instantiated module
    tree. Summing that tree's printed shapes: embedding and untied LM head 151552 x 4096;
    per layer q_proj 4096 -> 12288 and k/v_proj 4096 -> 1024 with biases, o_proj 12288 -> 4096
    without, two RMSNorms; layer 0 a dense 10944-wide SwiGLU MLP; layers 1-45 128 experts and
    one shared expert 1408 wide and the router's [128, 4096] weight (its
    e_score_correction_bias is a buffer in transformers, not a parameter); a final norm. The
    multi-token-prediction layer of the checkpoint is not instantiated, so not counted."""
    vocab, d = 151_552, 4096
    attention = d * 12288 + 12288 + 2 * (d * 1024 + 1024) + 12288 * d
    moe_layer = 129 * 3 * d * 1408 + 128 * d
    tree = 2 * vocab * d + 46 * (attention + 2 * d) + 3 * d * 10944 + 45 * moe_layer + d
    name = "glm-4.5-air"
    spec = spec_from_file(ROOT / MODELS[name]["config"], name)
    counts = count_params(spec)
    assert counts.total == MODELS[name]["total"] == tree == 106_852_245_504
    assert counts.attention == 46 * attention


def test_multimodal_configs_report_their_vision_tower() -> None:
    """Text model and vision tower (with projector) of the published multimodal configs,
    counted by transformers; the sums are the checkpoints' published sizes (gemma-3-4b-it
    4.30B, gemma-3-27b-it 27B, llava-1.5-7b-hf 7.06B, Qwen2.5-VL-7B-Instruct 8.29B,
    Llama-4-Scout 109B). The 27B tower is the 4B's plus a wider projector (1152 x 5376)."""
    expected = {"gemma-3-4b-it": (3_880_263_168, 419_816_304),
                "gemma-3-27b-it": (27_009_346_304, 423_060_336),
                "llava-1.5-7b-hf": (6_738_939_904, 324_487_168),
                "qwen2.5-vl-7b-instruct": (7_615_616_512, 676_550_144),
                "llama-4-scout-17b-16e-instruct": (107_769_861_120, 871_932_416)}
    for name, (text, vision) in expected.items():
        assert (MODELS[name]["total"], MODELS[name]["vision"]) == (text, vision), name
        spec = spec_from_file(ROOT / MODELS[name]["config"], name)
        assert (count_params(spec).total, spec.vision_params) == (text, vision), name
        assert model_figures(spec).model_vision_params == vision
    # Same SigLIP tower; the projector maps its 1152 features to the text width (2560 vs 5376).
    assert expected["gemma-3-27b-it"][1] - expected["gemma-3-4b-it"][1] == 1152 * (5376 - 2560)


EXPANDED_KV = {"falcon-new-arch"}
"""Falcon's new decoder architecture: transformers repeats the KV heads to every query head
before caching them (``modeling_falcon.py``); serving engines cache the ``num_kv_heads`` the
planner counts."""
CACHED = sorted(name for name, m in MODELS.items() if "cache" in m and name not in EXPANDED_KV)


def test_falcon_new_arch_cache_is_expanded_to_query_heads() -> None:
    name = "falcon-new-arch"
    spec = spec_from_file(ROOT / MODELS[name]["config"], name)
    f = model_figures(spec)
    cache = MODELS[name]["cache"]
    heads, kv_heads = spec.attention.num_heads, spec.attention.num_kv_heads
    assert (heads, kv_heads) == (8, 2)
    per_token = f.model_kv_elems_per_token_full
    assert cache["kv_elems"] == per_token * cache["tokens"] * heads // kv_heads


def test_cache_fixtures_cover_the_new_layer_kinds() -> None:
    kinds = {MODELS[name]["model_type"] for name in CACHED}
    assert {"gemma3_text", "gpt_oss", "llama4_text", "qwen3_next", "olmo2", "glm4_moe",
            "phimoe", "granitemoe"} <= kinds
    assert len(CACHED) == 37


@pytest.mark.parametrize("name", CACHED)
def test_cache_matches_transformers(name: str) -> None:
    """KV elements of one sequence of T tokens: ``full*T + window*min(T, w - 1)`` (transformers'
    sliding and chunked cache layers keep the ``w - 1`` previous tokens; the planner sizes them
    at ``w``, the token being decoded included, as vLLM allocates them). Linear-attention
    layers: the recurrent state exactly; transformers keeps ``kernel`` convolution columns per
    channel where ``kernel - 1`` suffice (vLLM), so the planner's state is one column fewer."""
    cache = MODELS[name]["cache"]
    spec = spec_from_file(ROOT / MODELS[name]["config"], name)
    f = model_figures(spec)
    tokens = cache["tokens"]
    window = f.model_sliding_window_tokens
    kept = min(tokens, window - 1) if window else 0
    assert cache["kv_elems"] == (f.model_kv_elems_per_token_full * tokens
                                 + f.model_kv_elems_per_token_window * kept)
    linear = [layer.attention for layer in spec.layers
              if isinstance(layer.attention, LinearAttention)]
    recurrent = sum(a.num_v_heads * a.head_k_dim * a.head_v_dim for a in linear)
    assert cache["recurrent_state_elems"] == recurrent
    assert cache["conv_state_elems"] == sum(a.conv_dim * a.conv_kernel for a in linear)
    assert f.model_state_elems_per_sequence == (recurrent + cache["conv_state_elems"]
                                                - sum(a.conv_dim for a in linear))
