"""Short names of current model families resolve to their Hub ids through the Hugging Face cache
(issue 26), with the ``hf download`` hint when the cache lacks them; nothing touches the network
(``HF_HUB_OFFLINE=1``, a cache laid out in a temporary folder as ``huggingface_hub`` lays it
out). The config.json in the cache is one of the small configs of ``fixtures/hf_configs_2026``
(``tiny-deepseek-v32``: 199,600 parameters, measured with transformers 5.23 in
``fixtures/hf_counts_2026.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.service import hub_names
from tests.helpers import run
from tests.spec.test_hub import _snapshot

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "hf_configs_2026" / "tiny-deepseek-v32.json"
COMMIT = "d" * 40


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "hf-cache"
    _snapshot(cache, "deepseek-ai/DeepSeek-V3.2", COMMIT,
              {"config.json": json.loads(TINY.read_text(encoding="utf-8"))}, ref="main")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    return cache


def test_names_of_the_current_families() -> None:
    expected = {
        "llama-3.1-8b-instruct": "meta-llama/Llama-3.1-8B-Instruct",
        "Llama-3.3-70B-Instruct": "meta-llama/Llama-3.3-70B-Instruct",
        "qwen3-8b": "Qwen/Qwen3-8B", "QWEN3.5-27B": "Qwen/Qwen3.5-27B",
        "deepseek-r1": "deepseek-ai/DeepSeek-R1", "deepseek-v3.2": "deepseek-ai/DeepSeek-V3.2",
        "gpt-oss-120b": "openai/gpt-oss-120b", "gemma-3-27b-it": "google/gemma-3-27b-it",
        "gemma-4-31b": "google/gemma-4-31B-it", "glm-4.5-air": "zai-org/GLM-4.5-Air",
        "glm-5": "zai-org/GLM-5", "kimi-k2": "moonshotai/Kimi-K2-Instruct",
        "minimax-m2": "MiniMaxAI/MiniMax-M2",
        "mistral-7b-instruct": "mistralai/Mistral-7B-Instruct-v0.3",
        " deepseek-v3 ": "deepseek-ai/DeepSeek-V3",
        "deepseek-r1-0528": "deepseek-ai/DeepSeek-R1-0528",
        "qwen3-235b-a22b-instruct-2507": "Qwen/Qwen3-235B-A22B-Instruct-2507",
        "kimi-k2-instruct-0905": "moonshotai/Kimi-K2-Instruct-0905"}
    assert {name: hub_names.hub_id_for(name) for name in expected} == expected
    assert hub_names.hub_id_for("llama-9") is None
    assert len(hub_names.HUB_IDS) == len(set(hub_names.HUB_IDS)) == 63
    assert len(hub_names.known_names()) == 63 + len(hub_names.ALIASES) == 80


def test_a_short_name_reads_its_hub_config_from_the_cache(hf_cache: Path) -> None:
    code, out, err = run("model", "inspect", "deepseek-v3.2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["model_type"] == "deepseek_v32"
    assert data["params"]["total"] == 199_600  # transformers 5.23 (hf_counts_2026.json)


def test_a_catalog_name_wins_over_the_name_table(hf_cache: Path) -> None:
    """``deepseek-v3`` is a catalog model (seeds/models): read from the database, not the
    Hub (whose cache here does not hold it)."""
    code, out, err = run("model", "inspect", "deepseek-v3", "--json")
    assert code == 0, err
    assert json.loads(out)["params"]["total"] == 671_026_404_352  # hf_param_counts.json


def test_a_short_name_not_in_the_cache_gives_the_download_hint(hf_cache: Path) -> None:
    code, out, err = run("estimate", "--model", "glm-5", "--gpu", "b200")
    assert code == 2 and out == ""
    assert ("zai-org/GLM-5: config.json is not in the Hugging Face cache "
            f"({hf_cache}) and HF_HUB_OFFLINE is set; fill it on a machine with network: "
            "`hf download zai-org/GLM-5 config.json`") in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_import_by_short_name_records_the_hub_id(hf_cache: Path) -> None:
    code, _out, err = run("model", "import", "deepseek-v3.2")
    assert code == 0, err
    code, out, _err = run("model", "list", "--json")
    listed = {m["name"]: m for m in json.loads(out)}
    assert "DeepSeek-V3.2" in listed
