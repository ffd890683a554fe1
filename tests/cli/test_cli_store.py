"""The database commands of the CLI: reads with --json, one-transaction writes, exit 2 on
mistakes with the database left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run
from tests.store_fixtures import dump

ROOT = Path(__file__).resolve().parents[2]


def default_url(data_dir: Path) -> str:
    return f"sqlite:///{data_dir / 'planner.db'}"


@pytest.mark.slow
def test_first_run_creates_the_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "fresh"))
    code, out, err = run("fleet", "list")
    assert code == 0
    assert "Created the planner database" in err and "seeded 54 catalog rows" in err
    assert out.startswith("demo  (10 scenarios)")
    assert (tmp_path / "fresh" / "planner.db").exists()
    code, _, err = run("fleet", "list")
    assert code == 0 and err == ""


def test_reads_have_json() -> None:
    for args in (("model", "list"), ("model", "show", "mixtral-8x7b"), ("gpu", "list"),
                 ("gpu", "show", "h100-sxm"), ("fleet", "list"), ("scenario", "list"),
                 ("scenario", "show", "demo/llama3-8b-24gib-6x8k"),
                 ("scenario", "history", "demo/llama3-8b-24gib-6x8k"), ("db", "current")):
        code, out, err = run(*args, "--json")
        assert code == 0, (args, err)
        json.loads(out)
    code, out, _ = run("model", "show", "mixtral-8x7b", "--json")
    data = json.loads(out)
    assert (data["params"]["total"], data["params"]["active"]) == (46_702_792_704,
                                                                   12_879_925_248)
    code, out, _ = run("scenario", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["llama3-8b-24gib-6x8k"]["outputs"]["max_concurrent_sequences"] == 6


def test_scenario_commands_round_trip() -> None:
    assert run("fleet", "new", "prod-2027", "--description", "next year")[0] == 0
    code, out, err = run("scenario", "new", "prod-2027/chat", "--model", "llama-3-8b", "--gpu",
                         "h100-sxm", "batch=32", "prompt_tokens=2048", "notes=support bot")
    assert code == 0, err
    code, out, err = run("scenario", "set", "chat", "--fleet", "prod-2027", "gpu=h200",
                         "--if-version", "1")
    assert (code, out.strip()) == (0, "updated prod-2027/chat (version 2)"), err
    code, out, _ = run("scenario", "show", "prod-2027/chat", "--json")
    data = json.loads(out)
    assert (data["gpu"], data["inputs"]["batch"], data["version"]) == ("h200", 32, 2)
    assert data["outputs"]["kv_bytes_per_token"] == 131_072
    code, out, err = run("scenario", "set", "prod-2027/chat", "batch=8", "--if-version", "1")
    assert code == 2 and "changed by someone else" in err and "gpu='h200'" in err
    assert run("scenario", "copy", "prod-2027/chat", "chat-2", "--to-fleet", "demo")[0] == 0
    assert run("fleet", "copy", "prod-2027", "what-if")[0] == 0
    code, out, _ = run("scenario", "history", "prod-2027/chat")
    assert "gpu: 'h100-sxm' → 'h200'" in out
    assert run("scenario", "delete", "prod-2027/chat")[0] == 0
    assert run("fleet", "delete", "what-if", "--yes")[0] == 0


def test_human_list_marks_rows_that_do_not_fit() -> None:
    run("scenario", "set", "demo/llama3-8b-24gib-6x8k", "batch=7")
    code, out, _ = run("scenario", "list", "--fleet", "demo")
    assert code == 0
    assert "demo/llama3-8b-24gib-6x8k" in out and "no (−0.96 GiB)" in out


def test_model_import_and_gpu_add(tmp_path: Path) -> None:
    config = tmp_path / "tiny" / "config.json"
    config.parent.mkdir()
    config.write_text((ROOT / "tests/fixtures/hf_configs/qwen3-moe.json").read_text())
    code, out, err = run("model", "import", str(config.parent), "--source", "org/tiny")
    assert (code, out.strip()) == (0, "imported tiny (qwen3_moe, 341,184 params)"), err
    code, out, err = run("gpu", "add", "my-mi355x", "memory_gib=288", "bf16_tflops=2300",
                         "fp8_tflops=4600", "memory_bandwidth_gb_per_s=8000",
                         "price_usd_per_hour=4")
    assert code == 0, err
    code, out, _ = run("estimate", "--model", "tiny", "--gpu", "my-mi355x", "--json")
    assert json.loads(out)["gpu_memory_bytes"] == 288 * 2**30


@pytest.mark.parametrize(("args", "message"), [
    (("scenario", "set", "demo/llama3-8b-24gib-6x8k", "batch=0"),
     "batch: must be an integer from 1 to 10,000,000 (got '0')"),
    (("scenario", "set", "demo/llama3-8b-24gib-6x8k", "batch"),
     "batch: must be written field=value"),
    (("scenario", "set", "demo/nope", "batch=2"), "unknown scenario in fleet 'demo' 'nope'"),
    (("scenario", "new", "demo/x", "--model", "llama-3-8b", "--gpu", "h100-sxm", "tp=3",
      "gpus=3"), "tp: must divide the 32 attention heads"),
    (("model", "delete", "llama-3-8b"), "is used by 2 scenario(s)"),
    (("gpu", "set", "h100-sxm", "price_usd_per_hour=-1"), "must be a number from 0 to 1e+06"),
    (("gpu", "add", "h100-sxm", "memory_gib=80", "bf16_tflops=1", "memory_bandwidth_gb_per_s=1"),
     "a GPU named 'h100-sxm' already exists"),
    (("fleet", "new", "demo"), "a fleet named 'demo' already exists"),
    (("model", "import", "/nonexistent.json"), "cannot be read"),
    (("db", "downgrade", "42", "--yes"), "unknown revision '42'"),
])
def test_mistakes_exit_2_and_change_nothing(isolated_data_dir: Path, args: tuple[str, ...],
                                            message: str) -> None:
    run("fleet", "list")  # make sure the database exists before the snapshot
    before = dump(default_url(isolated_data_dir))
    code, out, err = run(*args)
    assert code == 2, (out, err)
    assert message in " ".join(err.split()), err
    assert "Traceback" not in out + err
    assert dump(default_url(isolated_data_dir)) == before


def test_bad_import_of_many_imports_none(tmp_path: Path, isolated_data_dir: Path) -> None:
    good = ROOT / "seeds/models/llama-2-7b.json"
    files = []
    for i in range(30):
        path = tmp_path / f"m{i:02d}.json"
        path.write_text(good.read_text() if i != 17 else '{"model_type": "llama"}')
        files.append(str(path))
    run("fleet", "list")
    before = dump(default_url(isolated_data_dir))
    code, _, err = run("model", "import", *files)
    assert code == 2 and "m17: config key 'hidden_size' is required" in err
    assert dump(default_url(isolated_data_dir)) == before


def test_db_commands_on_postgres(postgres_url: str) -> None:
    from tests.store_fixtures import reset_postgres

    reset_postgres(postgres_url)
    code, out, _ = run("--db", postgres_url, "db", "current", "--json")
    assert json.loads(out)["current"] is None
    assert run("--db", postgres_url, "db", "upgrade")[0] == 0
    assert run("--db", postgres_url, "db", "downgrade", "0001", "--yes")[1].startswith(
        "downgraded from 0021 to 0001")
    code, _, err = run("--db", postgres_url, "fleet", "list")
    assert code == 0 and "Upgraded the planner database from revision 0001 to 0021" in err
    # `db upgrade` alone left an empty database: opening it seeded the catalog (issue 16)
    code, out, _ = run("--db", postgres_url, "db", "seed", "--json")
    assert sum(len(v) for v in json.loads(out)["added"].values()) == 0
    code, out, _ = run("--db", postgres_url, "model", "list", "--json")
    assert len(json.loads(out)) == 7
