"""Models by Hugging Face Hub id, from a Hugging Face cache built in a temporary folder.

Nothing here touches the network: ``HF_HUB_OFFLINE=1`` and ``HF_HUB_CACHE`` points at a cache
laid out as ``huggingface_hub`` lays it out (``models--org--name/refs/<branch>`` holding the
commit, ``snapshots/<commit>/<file>``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.service import hub
from planner.spec.catalog import resolve_model
from tests.helpers import run

FIXTURES = Path(__file__).parents[1] / "fixtures" / "quantized"
MAIN = "a" * 40
BRANCH = "b" * 40
LLAMA3 = "c" * 40


def _snapshot(cache: Path, repo: str, commit: str, files: dict[str, object],
              ref: str | None = None) -> None:
    folder = cache / ("models--" + repo.replace("/", "--"))
    (folder / "snapshots" / commit).mkdir(parents=True)
    for name, content in files.items():
        (folder / "snapshots" / commit / name).write_text(json.dumps(content), encoding="utf-8")
    if ref:
        (folder / "refs").mkdir(exist_ok=True)
        (folder / "refs" / ref).write_text(commit, encoding="utf-8")


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "hf-cache"
    gptq = json.loads((FIXTURES / "llama-2-13b-gptq.json").read_text(encoding="utf-8"))
    _snapshot(cache, "TheBloke/Llama-2-13B-GPTQ", MAIN, {"config.json": gptq}, ref="main")
    act_order = json.loads(json.dumps(gptq))
    act_order["quantization_config"].update(group_size=32, desc_act=True)
    _snapshot(cache, "TheBloke/Llama-2-13B-GPTQ", BRANCH, {"config.json": act_order},
              ref="gptq-4bit-32g-actorder_True")
    _name, llama3 = resolve_model("llama-3-8b")
    # meta-llama/Meta-Llama-3-8B's index: metadata.total_size 16,060,522,496 B (bf16 weights,
    # docs/formulas.md)
    index = {"metadata": {"total_size": 16_060_522_496}, "weight_map": {}}
    _snapshot(cache, "meta-llama/Meta-Llama-3-8B", LLAMA3,
              {"config.json": llama3, "model.safetensors.index.json": index}, ref="main")
    # An older AutoGPTQ upload: the settings in quantize_config.json beside config.json.
    old = {k: v for k, v in gptq.items() if k != "quantization_config"}
    side = {k: v for k, v in gptq["quantization_config"].items() if k != "quant_method"}
    _snapshot(cache, "TheBloke/Llama-2-13B-GPTQ-old", MAIN,
              {"config.json": old, "quantize_config.json": side}, ref="main")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    return cache


def test_hub_ids_are_told_apart_from_paths_and_names(tmp_path: Path) -> None:
    assert hub.parse_hub_id("TheBloke/Llama-2-13B-GPTQ@gptq-4bit-32g-actorder_True") == (
        "TheBloke/Llama-2-13B-GPTQ", "gptq-4bit-32g-actorder_True")
    assert hub.parse_hub_id("meta-llama/Meta-Llama-3-8B") == ("meta-llama/Meta-Llama-3-8B", None)
    assert hub.parse_hub_id("llama-3-8b") is None
    assert not hub.is_hub_id("configs/llama.json")
    (tmp_path / "org" / "name").mkdir(parents=True)
    assert not hub.is_hub_id(str(tmp_path / "org" / "name"))


def test_import_offline_from_the_cache_records_repo_and_commit(hf_cache: Path) -> None:
    code, out, err = run("model", "import", "TheBloke/Llama-2-13B-GPTQ")
    assert code == 0, err
    assert out.startswith("imported Llama-2-13B-GPTQ (llama, 13,015,864,320 params) from "
                          "TheBloke/Llama-2-13B-GPTQ@aaaaaaaaaaaa; weights as stored 7.26 GB")
    code, out, _ = run("model", "show", "Llama-2-13B-GPTQ", "--json")
    data = json.loads(out)
    assert (data["hub_repo"], data["hub_revision"]) == ("TheBloke/Llama-2-13B-GPTQ", MAIN)
    assert data["source"] == f"https://huggingface.co/TheBloke/Llama-2-13B-GPTQ/blob/{MAIN}/config.json"
    assert data["config"]["quantization_config"]["quant_method"] == "gptq"
    assert data["checkpoint"]["weights_bytes"] == 7_255_009_280
    # --model names it by Hub id wherever a model is named
    code, out, err = run("estimate", "--model", "TheBloke/Llama-2-13B-GPTQ", "--gpu", "h100-sxm",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["weights_bytes"] == 7_255_009_280
    assert run("fleet", "new", "q")[0] == 0
    code, _, err = run("scenario", "new", "q/gptq", "--model", "TheBloke/Llama-2-13B-GPTQ",
                       "--gpu", "h100-sxm")
    assert code == 0, err
    code, out, _ = run("scenario", "show", "q/gptq", "--json")
    assert json.loads(out)["model"] == "Llama-2-13B-GPTQ"
    # and as a field: the scenario (and its change log) keeps the model's own name
    assert run("scenario", "set", "q/gptq", "model=llama-2-7b")[0] == 0
    code, _, err = run("scenario", "set", "q/gptq", "model=TheBloke/Llama-2-13B-GPTQ")
    assert code == 0, err
    code, out, _ = run("scenario", "show", "q/gptq", "--json")
    assert json.loads(out)["model"] == "Llama-2-13B-GPTQ"
    code, out, _ = run("scenario", "history", "q/gptq")
    assert "model: 'llama-2-7b' → 'Llama-2-13B-GPTQ'" in out
    # and in a bulk import's model column (a repo not imported is an unknown model)
    rows = hf_cache.parent / "rows.csv"
    rows.write_text("name,model,gpu\nbulk,TheBloke/Llama-2-13B-GPTQ@" + MAIN[:7] + ",h100-sxm\n")
    code, _, err = run("scenario", "import", "q", str(rows))
    assert code == 0, err
    code, out, _ = run("scenario", "show", "q/bulk", "--json")
    assert json.loads(out)["model"] == "Llama-2-13B-GPTQ"
    rows.write_text("name,model,gpu\nbulk2,Qwen/Qwen3-8B,h100-sxm\n")
    code, _, err = run("scenario", "import", "q", str(rows))
    assert code == 2 and "unknown model 'Qwen/Qwen3-8B'" in err


def test_import_at_a_revision_and_the_index_cross_check(hf_cache: Path) -> None:
    code, out, err = run("model", "import", "TheBloke/Llama-2-13B-GPTQ@gptq-4bit-32g-actorder_True",
                         "--name", "l13-32g", "--json")
    assert code == 0, err
    row = json.loads(out)[0]
    assert (row["name"], row["hub_revision"]) == ("l13-32g", BRANCH)
    assert row["checkpoint"]["weights_bytes"] == 7_998_433_280  # published 8.00 GB
    code, out, err = run("model", "import", "meta-llama/Meta-Llama-3-8B", "--json")
    assert code == 0, err
    check = json.loads(out)[0]["checkpoint"]
    assert (check["weights_bytes"], check["index_total_bytes"], check["weights_vs_index"]) == (
        16_060_522_496, 16_060_522_496, 0.0)
    # a Hub id not imported is read from the cache for a one-off estimate (nothing saved)
    code, out, err = run("model", "inspect", "TheBloke/Llama-2-13B-GPTQ@" + BRANCH, "--json")
    assert code == 0, err
    assert json.loads(out)["checkpoint"]["group_size"] == 32


@pytest.mark.slow
def test_benchmark_commands_take_the_hub_id_of_an_imported_model(hf_cache: Path,
                                                                  tmp_path: Path) -> None:
    """``bench import``, ``bench list`` and ``calibrate`` name a model by the Hub id it was
    imported from, as ``estimate`` and ``scenario new`` do; the stored runs and the profile
    carry the model's own name."""
    from planner.io.bench.records import CSV_HEADER

    assert run("model", "import", "meta-llama/Meta-Llama-3-8B")[0] == 0
    # the file names the Hub id (as vllm bench serve's results do)
    first = tmp_path / "first.csv"
    first.write_text(",".join(CSV_HEADER) + "\nmeta-llama/Meta-Llama-3-8B,h100-sxm,1,1,1,"
                     "vllm,bf16,,concurrency,,16,1024,128,2500,80,,,12,\n")
    code, out, err = run("bench", "import", str(first), "--json")
    assert code == 0, err
    assert json.loads(out) == {"added": [1], "duplicates": 0, "files": 1}
    # the flag names it by Hub id (and wins over what the file says)
    second = tmp_path / "second.csv"
    second.write_text(",".join(CSV_HEADER) + "\nllama3-8b-local,h100-sxm,1,1,1,vllm,bf16,,"
                      "concurrency,,32,1024,128,4100,95,,,14,\n")
    code, out, err = run("bench", "import", str(second), "--model",
                         "meta-llama/Meta-Llama-3-8B", "--json")
    assert code == 0, err
    assert json.loads(out) == {"added": [2], "duplicates": 0, "files": 1}
    code, out, err = run("bench", "list", "--model", "meta-llama/Meta-Llama-3-8B", "--json")
    assert code == 0, err
    assert [(r["id"], r["model"]) for r in json.loads(out)] == [(1, "Meta-Llama-3-8B"),
                                                                (2, "Meta-Llama-3-8B")]
    code, out, err = run("calibrate", "--model", "meta-llama/Meta-Llama-3-8B@" + LLAMA3[:12],
                         "--holdout", "0", "--json")
    assert code == 0, err
    assert json.loads(out)["profile"] == "h100-sxm-vllm-Meta-Llama-3-8B"
    code, out, err = run("bench", "profiles", "--json")
    assert code == 0, err
    assert [(p["name"], p["model_filter"], p["n_fit"]) for p in json.loads(out)] == [
        ("h100-sxm-vllm-Meta-Llama-3-8B", "Meta-Llama-3-8B", 2)]
    # a Hub id nothing was imported from: the command that imports it, no traceback
    code, _, err = run("bench", "list", "--model", "Qwen/Qwen3-8B")
    assert code == 2 and "planner model import Qwen/Qwen3-8B" in err
    assert "Traceback" not in err


def test_no_cache_and_no_network_is_one_clear_error(hf_cache: Path) -> None:
    code, out, err = run("model", "import", "Qwen/Qwen3-8B-FP8")
    assert code == 2 and out == ""
    assert (f"Qwen/Qwen3-8B-FP8: config.json is not in the Hugging Face cache ({hf_cache}) and "
            "HF_HUB_OFFLINE is set; fill it on a machine with network: `hf download "
            "Qwen/Qwen3-8B-FP8 config.json`, then set HF_HUB_CACHE to it") in err
    assert "Traceback" not in err
    code, out, _ = run("model", "list", "--json")
    assert "Qwen3-8B-FP8" not in out  # nothing imported
    code, _, err = run("model", "import", "TheBloke/Llama-2-13B-GPTQ@nope")
    assert code == 2 and "TheBloke/Llama-2-13B-GPTQ@nope: config.json is not in the" in err


def test_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hub.cache_dir() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "c"))
    assert hub.cache_dir() == tmp_path / "c"


def test_quantize_config_json_beside_config_json_is_read(hf_cache: Path) -> None:
    read = hub.fetch_config("TheBloke/Llama-2-13B-GPTQ-old")
    assert read.config["quantization_config"] == {
        "quant_method": "gptq", "bits": 4, "group_size": 128, "damp_percent": 0.01,
        "desc_act": False, "sym": True, "true_sequential": True, "model_name_or_path": None,
        "model_file_base_name": "model"}
    assert (read.commit, read.index_total_bytes) == (MAIN, None)
    assert hub.fetch_spec("TheBloke/Llama-2-13B-GPTQ-old").quantization is not None


def test_token_offline_flag_and_cache_are_passed_to_huggingface_hub(
        hf_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    calls: list[dict[str, object]] = []
    real = huggingface_hub.hf_hub_download

    def recording(repo_id: str, filename: str, **kwargs: object) -> str:
        calls.append({"repo_id": repo_id, "filename": filename, **kwargs})
        return real(repo_id, filename, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", recording)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    hub.fetch_config("meta-llama/Meta-Llama-3-8B")
    # config.json at the asked revision, then at the commit it resolved to: the side files a
    # config without quantization_config may have, and the safetensors index
    assert [c["filename"] for c in calls] == ["config.json", "quantize_config.json",
                                              "hf_quant_config.json",
                                              "model.safetensors.index.json"]
    assert all(c["token"] == "hf_test_token" and c["local_files_only"] is True
               and c["cache_dir"] == hf_cache for c in calls)
    assert calls[0]["revision"] is None
    assert {c["revision"] for c in calls[1:]} == {LLAMA3}
