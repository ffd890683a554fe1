"""config.json reading: defaults of the real implementations, and clear errors naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.core.errors import ConfigError
from planner.spec.catalog import load_config, spec_from_file
from planner.spec.figures import model_figures
from planner.spec.hf_config import spec_from_config

BASE = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 8, "intermediate_size": 96, "vocab_size": 100}


def test_unknown_model_type_lists_supported() -> None:
    with pytest.raises(ConfigError) as err:
        spec_from_config({**BASE, "model_type": "bert"})
    assert err.value.key == "model_type"
    assert "'bert' is not supported" in str(err.value)
    assert "deepseek_v3" in str(err.value)


def test_missing_model_type() -> None:
    cfg = dict(BASE)
    del cfg["model_type"]
    with pytest.raises(ConfigError, match="model_type"):
        spec_from_config(cfg)


@pytest.mark.parametrize("key", ["hidden_size", "num_hidden_layers", "num_attention_heads",
                                 "intermediate_size", "vocab_size"])
def test_missing_required_key_is_named(key: str) -> None:
    cfg = {k: v for k, v in BASE.items() if k != key}
    with pytest.raises(ConfigError) as err:
        spec_from_config(cfg, "tiny")
    assert err.value.key == key
    assert str(err.value) == f"tiny: config key {key!r} is required for this model_type but missing"


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("hidden_size", "64", "must be an integer"),
    ("hidden_size", 0, "must be at least 1"),
    ("num_key_value_heads", 3, "must divide num_attention_heads"),
    ("tie_word_embeddings", "yes", "must be true or false"),
])
def test_bad_values_are_named(key: str, value: object, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as err:
        spec_from_config({**BASE, key: value})
    assert err.value.key == key


def test_head_dim_must_divide_when_absent() -> None:
    with pytest.raises(ConfigError) as err:
        spec_from_config({**BASE, "hidden_size": 60})
    assert err.value.key == "head_dim"


def test_missing_kv_heads_means_mha_and_explicit_head_dim_is_kept() -> None:
    s = spec_from_config({**BASE, "head_dim": 32})
    attn = s.layers[0].attention
    assert (attn.num_kv_heads, attn.head_dim) == (8, 32)
    assert attn.num_heads * attn.head_dim != s.hidden_size


def test_gemma2_alternates_local_and_global_layers() -> None:
    s = spec_from_config({"model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 4,
                          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                          "intermediate_size": 96, "vocab_size": 100, "sliding_window": 32})
    assert [layer.sliding_window for layer in s.layers] == [32, None, 32, None]
    f = model_figures(s)
    assert f.model_kv_elems_per_token_full == f.model_kv_elems_per_token_window == 2 * 2 * 2 * 16


def test_layer_types_list_is_honoured_and_checked() -> None:
    cfg = {**BASE, "model_type": "qwen3", "use_sliding_window": True, "sliding_window": 16,
           "layer_types": ["sliding_attention", "full_attention"]}
    assert [layer.sliding_window for layer in spec_from_config(cfg).layers] == [16, None]
    with pytest.raises(ConfigError, match="one type for each"):
        spec_from_config({**cfg, "layer_types": ["full_attention"]})


def test_mla_caches_its_latent() -> None:
    s = spec_from_file(Path(__file__).parents[2] / "seeds" / "models" / "deepseek-v3.json")
    f = model_figures(s)
    assert f.model_kv_elems_per_token_full == 61 * (512 + 64)
    assert f.model_kv_heads == 1


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match=r"not valid JSON \(line 1, column 2"):
        load_config(bad)
    arr = tmp_path / "arr.json"
    arr.write_text(json.dumps([1, 2]))
    with pytest.raises(ConfigError, match="JSON object"):
        load_config(arr)


FIXTURES = Path(__file__).parents[1] / "fixtures" / "hf_configs"


def test_gemma3_five_local_layers_to_one_global() -> None:
    s = spec_from_file(FIXTURES / "gemma-3-1b-it.json")
    windows = [layer.sliding_window for layer in s.layers]
    assert [i for i, w in enumerate(windows) if w is None] == [5, 11, 17, 23]
    assert set(windows) == {512, None}
    f = model_figures(s)
    assert f.model_kv_elems_per_token_full == 4 * 2 * 1 * 256
    assert f.model_kv_elems_per_token_window == 22 * 2 * 1 * 256
    assert f.model_sliding_window_tokens == 512


def test_gpt_oss_alternates_128_token_windows_from_layer_0() -> None:
    s = spec_from_file(FIXTURES / "gpt-oss-20b.json")
    assert [layer.sliding_window for layer in s.layers[:4]] == [128, None, 128, None]
    f = model_figures(s)
    assert f.model_kv_elems_per_token_full == f.model_kv_elems_per_token_window == 12 * 2 * 8 * 64


def test_gpt_oss_120b_fixture_has_the_model_cards_116_83b_parameters() -> None:
    """The serving-measurement fixture typed from the 20b file (tests/fixtures/serving_configs/
    sources.toml): openai/gpt-oss-120b's model card gives 116.83B total parameters."""
    from planner.spec.params import count_params

    s = spec_from_file(Path(__file__).parents[1] / "fixtures" / "serving_configs"
                       / "gpt-oss-120b.json")
    assert len(s.layers) == 36
    assert count_params(s).total == 116_829_156_672


def test_llama4_chunks_three_layers_of_four_and_interleaves_moe() -> None:
    cfg = json.loads((FIXTURES / "llama-4-scout-17b-16e-instruct.json").read_text())
    s = spec_from_config(cfg)
    assert [layer.sliding_window for layer in s.layers[:4]] == [8192, 8192, 8192, None]
    assert s.is_moe and s.vision_params == 871_932_416
    maverick_like = {**cfg["text_config"], "interleave_moe_layer_step": 2}
    s2 = spec_from_config(maverick_like)
    kinds = [type(layer.ffn).__name__ for layer in s2.layers[:4]]
    assert kinds == ["Mlp", "Moe", "Mlp", "Moe"]
    assert s2.layers[0].ffn.intermediate_size == 16384


def test_deepseek_v2_q_lora_rank_null_set_or_absent() -> None:
    cfg = json.loads((FIXTURES / "deepseek-v2-lite.json").read_text())
    assert spec_from_config(cfg).layers[0].attention.q_lora_rank == 0
    absent = {k: v for k, v in cfg.items() if k != "q_lora_rank"}
    assert spec_from_config(absent).layers[0].attention.q_lora_rank == 1536  # config default
    assert spec_from_config({**cfg, "q_lora_rank": 768}).layers[0].attention.q_lora_rank == 768


def test_qwen3_next_layer_kinds_and_bad_heads() -> None:
    cfg = json.loads((FIXTURES / "qwen3-next-80b-a3b-instruct.json").read_text())
    s = spec_from_config(cfg)
    kinds = [type(layer.attention).__name__ for layer in s.layers[:4]]
    assert kinds == ["LinearAttention"] * 3 + ["Attention"]
    assert s.attention.output_gate and s.attention.num_heads == 16
    with pytest.raises(ConfigError) as err:
        spec_from_config({**cfg, "linear_num_value_heads": 24, "linear_num_key_heads": 16})
    assert err.value.key == "linear_num_value_heads"
    with pytest.raises(ConfigError, match="unsupported entries \\['mamba'\\]"):
        spec_from_config({**cfg, "num_hidden_layers": 2,
                          "layer_types": ["mamba", "full_attention"]})


def test_multimodal_errors_name_the_key() -> None:
    cfg = json.loads((FIXTURES / "llava-1.5-7b-hf.json").read_text())
    with pytest.raises(ConfigError) as err:
        spec_from_config({k: v for k, v in cfg.items() if k != "vision_config"})
    assert err.value.key == "vision_config"
    with pytest.raises(ConfigError) as err:
        spec_from_config({**cfg, "text_config": {**cfg["text_config"], "model_type": "phi3"}})
    assert err.value.key == "text_config.model_type" and "'phi3' is not supported" in str(err.value)
    with pytest.raises(ConfigError) as err:
        spec_from_config({**cfg, "vision_config": {**cfg["vision_config"],
                                                   "model_type": "pixtral"}})
    assert err.value.key == "vision_config.model_type"
    with pytest.raises(ConfigError) as err:
        spec_from_config({**cfg, "vision_config": {**cfg["vision_config"], "patch_size": 15}})
    assert err.value.key == "vision_config.patch_size"
    with pytest.raises(ConfigError) as err:
        spec_from_config({**cfg, "text_config": {**cfg["text_config"], "hidden_size": "big"}})
    assert err.value.key == "text_config.hidden_size" and "must be an integer" in str(err.value)
    no_depth = {k: v for k, v in cfg["vision_config"].items() if k != "num_hidden_layers"}
    with pytest.raises(ConfigError) as err:
        spec_from_config({**cfg, "vision_config": no_depth})
    assert err.value.key == "vision_config.num_hidden_layers"
