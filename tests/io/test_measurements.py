"""Importing measured benchmark runs (issue 12 item 1): every development record through the
real parsers, the CLI, dedup, and one clear error per kind of bad file with nothing stored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planner.cli import cli
from planner.io.bench.records import CSV_HEADER, BenchFileError
from planner.service import Workspace

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "fixtures" / "benchruns"
CONFIGS = ROOT / "tests" / "fixtures" / "serving_configs"
DEV = ROOT / "tests" / "fixtures" / "measurements" / "serving_perf_dev.json"
HEADER = ",".join(CSV_HEADER)


def dev_workspace(path: Path) -> Workspace:
    """A seeded database (its catalog has the H20) with the development set's models (the
    serving config fixtures) added."""
    ws = Workspace.open(f"sqlite:///{path}")
    ws.import_models([(p.stem, p.read_text(), "fixture") for p in sorted(CONFIGS.glob("*.json"))])
    return ws


PLAN_SCENARIO = {"model": "qwen3-8b", "gpu": "h100-sxm", "engine": "vllm", "concurrency": 8,
                 "prompt_tokens": 233, "output_tokens": 221}
"""The workload of the calibrated-plan tests (a GPUStack H100 + vLLM run's shape)."""


def calibrated_plan(ws: Workspace) -> Any:
    """The development set imported and fitted on H100 + vLLM (the profile, returned), and a
    fleet ``plan`` with the same workload twice: ``calibrated`` (auto) and ``catalog``
    (calibration none)."""
    import_dev_set(ws)
    profile = ws.calibrate(gpu="h100-sxm", engine="vllm")
    ws.new_fleet("plan")
    ws.new_scenario("plan", "calibrated", **PLAN_SCENARIO)
    ws.new_scenario("plan", "catalog", **PLAN_SCENARIO, calibration="none")
    return profile


def import_dev_set(ws: Workspace) -> list[Any]:
    """Import every fixture file of the manifest with its flags; the new runs."""
    added = []
    for entry in json.loads((RUNS / "manifest.json").read_text()):
        result = ws.import_measurements([RUNS / entry["file"]], entry["flags"],
                                        entry["settings"])
        assert len(result.added) == len(entry["ids"]), entry["file"]
        added += result.added
    return added


@pytest.mark.slow
def test_dev_set_imports_through_every_parser(tmp_path: Path) -> None:
    with dev_workspace(tmp_path / "p.db") as ws:
        added = import_dev_set(ws)
        # the development set's 191 records (serving_perf_dev.json record_count)
        assert len(added) == json.loads(DEV.read_text())["record_count"] == 191
        formats = Counter(m.source_format for m in added)
        assert formats == {"vllm-text": 80, "trtllm-text": 57, "sglang-text": 48,
                           "vllm-json": 4, "guidellm-json": 2}
        modes = Counter(m.values["mode"] for m in added)
        # GPUStack: 79 bursts, fixed concurrency 1 (single), 2, 4 (x4), 8; Qwen3 speed: 48 single
        assert modes == {"burst": 79, "offline": 57, "single": 49, "concurrency": 6}
        # a record's figures survive: GPUStack Qwen3-8B SGLang c=4 (quote: 525.59 tok/s,
        # mean TTFT 27.70 ms, mean TPOT 7.19 ms; 23260/22061 tokens over 100 requests)
        run = next(m for m in added if m.source_format == "guidellm-json"
                   and m.values["weight_dtype"] == "bf16")
        assert run.values["output_tokens_per_s"] == 525.59
        assert (run.values["ttft_mean_ms"], run.values["tpot_mean_ms"]) == (27.70, 7.19)
        assert run.values["input_tokens"] == pytest.approx(232.60)
        assert run.values["concurrency"] == 4 and run.settings["mem_fraction_static"] == 0.88
        # a TRT-LLM cell: Llama-3.3-70B FP8 on H200, 128/128, 3,803 output tok/s
        trt = [m for m in added if m.source_format == "trtllm-text" and m.gpu == "h200"
               and m.model == "llama-3.3-70b-instruct" and m.values["input_tokens"] == 128
               and m.values["output_tokens"] == 128]
        assert [m.values["output_tokens_per_s"] for m in trt] == [3803.0]
        assert trt[0].settings["free_gpu_memory_fraction"] == 0.95
        # a second import of the same files stores nothing new
        entry = json.loads((RUNS / "manifest.json").read_text())[0]
        again = ws.import_measurements([RUNS / entry["file"]], entry["flags"], entry["settings"])
        assert (len(again.added), again.duplicates) == (0, len(entry["ids"]))
        assert len(ws.measurements()) == 191


@pytest.mark.slow
def test_cli_import_list_show_delete(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'c.db'}"
    csv = tmp_path / "runs.csv"
    csv.write_text(HEADER + "\nllama-3-8b,h100-sxm,1,1,1,vllm,bf16,,concurrency,,16,1024,128,"
                   "2500,80,,,12,\nllama-3-8b,h100-sxm,1,1,1,vllm,bf16,,rate,4,,1024,128,"
                   "480,60,,,9,\n")
    runner = CliRunner()
    out = runner.invoke(cli, ["--db", db, "bench", "import", str(csv), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == {"added": [1, 2], "duplicates": 0, "files": 1}
    listed = json.loads(runner.invoke(cli, ["--db", db, "bench", "list", "--json"]).stdout)
    assert [(r["id"], r["mode"], r["output_tokens_per_s"]) for r in listed] == [
        (1, "concurrency", 2500.0), (2, "rate", 480.0)]
    shown = json.loads(runner.invoke(cli, ["--db", db, "bench", "show", "2", "--json"]).stdout)
    assert shown["request_rate"] == 4.0 and shown["kv_dtype"] is None
    assert shown["source"] == f"{csv}:3"
    out = runner.invoke(cli, ["--db", db, "bench", "delete", "1", "7"])
    assert out.exit_code == 2 and "unknown measurement '7'" in out.stderr
    out = runner.invoke(cli, ["--db", db, "bench", "delete", "1", "--json"])
    assert json.loads(out.stdout) == {"deleted": 1}
    listed = json.loads(runner.invoke(cli, ["--db", db, "bench", "list", "--json"]).stdout)
    assert [r["id"] for r in listed] == [2]


@pytest.mark.slow
def test_flags_fill_unknowns_and_conflicts_are_named(tmp_path: Path) -> None:
    block = (RUNS / "vllm-json").glob("*.json").__next__()
    with Workspace.open(f"sqlite:///{tmp_path / 'f.db'}") as ws:
        result = ws.import_measurements([block], {"model": "llama-3-8b", "gpu": "h100-sxm",
                                                  "engine": "vllm", "tp": 1},
                                        {"max_num_seqs": 256})
        (run,) = result.added
        assert (run.values["tp"], run.values["pp"], run.values["gpus"]) == (1, None, None)
        assert run.settings == {"max_num_seqs": 256.0}
        trt = next((RUNS / "trtllm").glob("*tp1*"))
        with pytest.raises(BenchFileError, match=r"tp is 1 in the file but --tp gives 2"):
            ws.import_measurements([trt], {"model": "llama-3-8b", "gpu": "h100-sxm", "tp": 2})
        with pytest.raises(Exception, match=r"max_num_seqs"):
            ws.import_measurements([trt], {"model": "llama-3-8b", "gpu": "h100-sxm"},
                                   {"max_num_seqs": -3})
        assert len(ws.measurements()) == 1


def _bad_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    def write(name: str, text: str | bytes) -> Path:
        path = tmp / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return path

    big = tmp / "huge.txt"
    with big.open("wb") as fh:  # sparse: 100 MiB without writing them
        fh.truncate(100 * 1024 * 1024)
    row = "llama-3-8b,h100-sxm,1,1,1,vllm,bf16,,concurrency,,16,1024,128,{tps},80,,,12,"
    return {
        "wrong format": (write("notes.txt", "hello\nworld\n"),
                         "notes.txt:1: not a benchmark result this planner reads"),
        "missing columns": (write("cols.csv", "model,gpu,tp\nllama-3-8b,h100-sxm,1\n"),
                            "cols.csv:1: the header must be exactly"),
        "negative figure": (write("neg.csv", HEADER + "\n" + row.format(tps="-5") + "\n"),
                            "neg.csv:2: output_tokens_per_s '-5' must be a finite number >= 0"),
        "NaN figure": (write("nan.json", '{"output_throughput": NaN, "completed": 1}'),
                       "nan.json:1: output_throughput 'nan' must be a finite number >= 0"),
        "unknown model": (write("model.csv", HEADER + "\n" + row.format(tps="9").replace(
            "llama-3-8b", "no-such-model") + "\n"), "model.csv:2: unknown model 'no-such-model'"),
        "unknown GPU": (write("gpu.csv", HEADER + "\n" + row.format(tps="9").replace(
            "h100-sxm", "tpu-v9") + "\n"), "gpu.csv:2: unknown GPU 'tpu-v9'"),
        "100 MB file": (big, "huge.txt: is 104,857,600 bytes, larger than the 10 MiB a "
                             "benchmark result file may be"),
        "binary garbage": (write("junk.bin", b"\x7fELF\x02\x01\x00\x00\xff\xfe"),
                           "junk.bin: binary data, not a benchmark result file"),
    }


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wrong format", "missing columns", "negative figure",
                                  "NaN figure", "unknown model", "unknown GPU", "100 MB file",
                                  "binary garbage"])
def test_bad_file_one_clear_error_nothing_stored(tmp_path: Path, kind: str) -> None:
    """A good file imported together with the bad one is not stored either (all or none);
    the CLI prints the one error and exits 2."""
    path, message = _bad_files(tmp_path)[kind]
    good = tmp_path / "good.csv"
    good.write_text(HEADER + "\nllama-3-8b,h100-sxm,1,1,1,vllm,bf16,,single,,1,100,100,50,"
                    "20,,,10,\n")
    db = f"sqlite:///{tmp_path / 'b.db'}"
    out = CliRunner().invoke(cli, ["--db", db, "bench", "import", str(good), str(path)])
    assert out.exit_code == 2
    (line,) = [x for x in out.stderr.splitlines() if x.startswith("Error:")]
    assert line.startswith(f"Error: {tmp_path / message.split(':')[0]}" + ":"), line
    assert message.split(":", 1)[1] in line
    assert "Traceback" not in out.output
    listed = CliRunner().invoke(cli, ["--db", db, "bench", "list", "--json"])
    assert json.loads(listed.stdout) == []


def test_import_calibrate_use_on_each_backend(db_url: str, tmp_path: Path) -> None:
    """Migration 0006's tables and the scenarios' calibration column on SQLite and PostgreSQL:
    runs in, a fit stored twice (versions 1 and 2), a scenario that names the profile."""
    csv = tmp_path / "h100.csv"
    rows = [f"llama-3-8b,h100-sxm,1,1,1,vllm,bf16,,concurrency,,{c},1024,128,{tps},{ttft},,,"
            f"{tpot}," for c, tps, ttft, tpot in ((1, 95, 70, 10.2), (8, 700, 85, 11.0),
                                                   (32, 2100, 140, 14.5), (64, 3300, 210, 18.0))]
    csv.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    with Workspace.open(db_url) as ws:
        result = ws.import_measurements([csv])
        assert [m.values["concurrency"] for m in result.added] == [1, 8, 32, 64]
        assert ws.import_measurements([csv]).duplicates == 4
        first = ws.calibrate(gpu="h100-sxm", engine="vllm", holdout=0.0, name="lab")
        second = ws.calibrate(gpu="h100-sxm", engine="vllm", holdout=0.0, name="lab")
        assert (first.version, second.version) == (1, 2)
        assert first.parameters == second.parameters and len(first.fit_ids) == 4
        assert first.summary()["holdout"] == {"throughput_median_abs_error": None,
                                              "ttft_median_abs_error": None,
                                              "tpot_median_abs_error": None}
        assert first.errors["after"]["throughput_median_abs_error"] < first.errors["before"][
            "throughput_median_abs_error"]
        ws.new_fleet("plan")
        ws.new_scenario("plan", "chat", model="llama-3-8b", gpu="h100-sxm", engine="vllm",
                        concurrency=8, calibration="lab")
        (sc,) = ws.scenarios("plan")
        assert sc.inputs["calibration"] == "lab"
        (out,) = ws.evaluate_many([sc])
        assert out["calibration_profile"] == "lab v2"
        assert ws.delete_measurements([m.id for m in result.added]) == 4
        assert ws.measurements() == []
