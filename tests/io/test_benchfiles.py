"""The benchmark file parsers (issue 12): the generic CSV and one error per bad-file kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.io.bench.generic_csv import parse_csv
from planner.io.bench.records import CSV_HEADER, BenchFileError, read_text
from planner.io.bench.vllm import parse_vllm_summary

HEADER = ",".join(CSV_HEADER)


def test_csv_row_with_unknowns() -> None:
    text = HEADER + "\nllama-3-8b,h100-sxm,1,1,,vllm,bf16,,concurrency,,16,1024,128,2500,80,,,12,\n"
    (record,) = parse_csv(text, "runs.csv")
    assert record.source == "runs.csv:2"
    assert record.values["concurrency"] == 16 and record.values["pp"] is None
    assert record.values["output_tokens_per_s"] == 2500.0 and record.values["kv_dtype"] is None


@pytest.mark.parametrize("body,message", [
    ("model,gpu\nx,y\n", "runs.csv:1: the header must be exactly"),
    (HEADER + "\nm,g,1,1,1,vllm,,,rate,-1,,,,,,,,,\n", "runs.csv:2: request_rate '-1'"),
    (HEADER + "\nm,g,1,1,1,vllm,,,rate,nan,,,,,,,,,\n", "runs.csv:2: request_rate 'nan'"),
    (HEADER + "\nm,g,1,1,1,vllm,,,rate\n", "runs.csv:2: 9 cells"),
    (HEADER + "\nm,g,1,1,1,tgi,,,rate,,,,,,,,,,\n", "runs.csv:2: engine 'tgi'"),
])
def test_csv_bad_rows(body: str, message: str) -> None:
    with pytest.raises(BenchFileError, match="^" + message.replace("(", r"\(")):
        parse_csv(body, "runs.csv")


def test_huge_and_binary_files_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    with big.open("wb") as f:
        f.truncate(100 * 1024 * 1024)
    with pytest.raises(BenchFileError, match="larger than"):
        read_text(big)
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"\x89PNG\x00\x01\xff")
    with pytest.raises(BenchFileError, match="binary data"):
        read_text(junk)


VLLM_BLOCK = """============ Serving Benchmark Result ============
Successful requests:                     1000
Benchmark duration (s):                  106.82
Total input tokens:                      217393
Total generated tokens:                  201605
Request throughput (req/s):              9.36
Output token throughput (tok/s):         1887.28
Mean TTFT (ms):                          120.50
Median TTFT (ms):                        98.10
P99 TTFT (ms):                           400.00
Mean TPOT (ms):                          30.20
Mean ITL (ms):                           29.90
==================================================
"""


def test_vllm_summary_block() -> None:
    (record,) = parse_vllm_summary("noise\n" + VLLM_BLOCK, "run.txt")
    assert record.source == "run.txt:2"
    assert record.values["output_tokens_per_s"] == 1887.28
    assert record.values["ttft_p50_ms"] == 98.1 and record.values["concurrency"] is None
    assert record.values["input_tokens"] == pytest.approx(217.393)


def test_vllm_summary_wrong_format() -> None:
    with pytest.raises(BenchFileError, match=r"^x\.txt:1: no 'Serving Benchmark Result'"):
        parse_vllm_summary("hello\n", "x.txt")


def test_vllm_result_json() -> None:
    from planner.io.bench.vllm import parse_vllm_json

    text = ('{"request_rate": "inf", "max_concurrency": 16, "completed": 100,'
            ' "total_input_tokens": 102400, "total_output_tokens": 12800,'
            ' "output_throughput": 2500.5, "mean_ttft_ms": 80.0, "mean_tpot_ms": 12.5}')
    (record,) = parse_vllm_json(text, "r.json")
    assert record.values["concurrency"] == 16 and record.values["request_rate"] is None
    assert record.values["input_tokens"] == 1024 and record.values["itl_mean_ms"] is None
    with pytest.raises(BenchFileError, match="no output_throughput"):
        parse_vllm_json('{"a": 1}', "r.json")


TRTLLM = """===========================================================
= WORLD + RUNTIME INFORMATION
===========================================================
Model:                  nvidia/Llama-3.3-70B-Instruct-FP8
TP Size:                2
PP Size:                1
EP Size:                None
Max Runtime Batch Size: 2048
Max Runtime Tokens:     8192
KV Memory Percentage:   95.00%
Number of requests:             3000
Average Input Length (tokens):  128.0000
Average Output Length (tokens): 2048.0000
===========================================================
= PERFORMANCE OVERVIEW
===========================================================
Total Output Throughput (tokens/sec):             6,378.5000
"""


def test_trtllm_report() -> None:
    """A trtllm-bench throughput report: offline, settings become scenario inputs (the TRT-LLM
    perf-overview H100 TP2 128/128 cell is 6,378 output tokens/s)."""
    from planner.io.bench.dispatch import parse_text

    (record,) = parse_text(TRTLLM, "trt.txt")
    assert (record.source, record.source_format) == ("trt.txt:15", "trtllm-text")
    v = record.values
    assert (v["mode"], v["engine"], v["tp"], v["pp"], v["num_requests"]) == (
        "offline", "trtllm", 2, 1, 3000)
    assert (v["input_tokens"], v["output_tokens"], v["output_tokens_per_s"]) == (
        128.0, 2048.0, 6378.5)
    assert record.settings == {"max_num_seqs": 2048.0, "max_num_batched_tokens": 8192.0,
                               "free_gpu_memory_fraction": 0.95}
    with pytest.raises(BenchFileError, match=r"^t\.txt:15: the report has no 'Total Output"):
        parse_text(TRTLLM.replace("Total Output", "Total Input"), "t.txt")
    with pytest.raises(BenchFileError, match=r"^t\.txt:5: TP Size '-2' must be"):
        parse_text(TRTLLM.replace("TP Size:                2", "TP Size: -2"), "t.txt")


SGLANG = """#Input tokens: 1024
============ Serving Benchmark Result ============
Backend:                                 sglang
Traffic request rate:                    4.0
Max reqeuest concurrency:                not set
Successful requests:                     200
Benchmark duration (s):                  50.00
Total input tokens:                      204800
Total generated tokens:                  25600
Request throughput (req/s):              4.00
Input token throughput (tok/s):          4096.00
Output token throughput (tok/s):         512.00
Total token throughput (tok/s):          4608.00
----------------End-to-End Latency----------------
Mean E2E Latency (ms):                   1500.00
---------------Time to First Token----------------
Mean TTFT (ms):                          120.00
Median TTFT (ms):                        110.00
P99 TTFT (ms):                           300.00
---------------Inter-Token Latency----------------
Mean ITL (ms):                           11.00
==================================================
"""


def test_sglang_bench_serving() -> None:
    """SGLang prints the vLLM block title with its own lines: a finite rate is an open loop."""
    from planner.io.bench.dispatch import parse_text

    (record,) = parse_text(SGLANG, "sgl.txt")
    v = record.values
    assert record.source_format == "sglang-text"
    assert (v["mode"], v["request_rate"], v["concurrency"], v["num_requests"]) == (
        "rate", 4.0, None, 200)
    assert (v["input_tokens"], v["output_tokens"]) == (1024.0, 128.0)
    assert (v["ttft_mean_ms"], v["ttft_p99_ms"], v["itl_mean_ms"], v["tpot_mean_ms"]) == (
        120.0, 300.0, 11.0, None)
    with pytest.raises(BenchFileError, match=r"^s\.txt:5: Maximum request concurrency 'x'"):
        parse_text(SGLANG.replace("not set", "x").replace("Max reqeuest", "Max request"),
                   "s.txt")


def guidellm_report(strategy: dict[str, object], tps: object = 480.0) -> str:
    import json

    def dist(mean: object, **more: object) -> dict[str, object]:
        return {"successful": {"mean": mean, **more}}

    return json.dumps({"benchmarks": [{
        "args": {"strategy": strategy}, "worker": {"backend_model": "Qwen/Qwen3-8B"},
        "metrics": {"output_tokens_per_second": dist(tps),
                    "time_to_first_token_ms": dist(60.0, median=55.0,
                                                   percentiles={"p99": 140.0}),
                    "time_per_output_token_ms": dist(8.0),
                    "prompt_token_count": dist(512.0), "output_token_count": dist(256.0)}}]})


@pytest.mark.parametrize("strategy,mode,rate,clients", [
    ({"type_": "synchronous"}, "single", None, 1),
    ({"type_": "concurrent", "streams": 16}, "concurrency", None, 16),
    ({"type_": "constant", "rate": 2.5}, "rate", 2.5, None),
    ({"type_": "poisson", "rate": 3}, "rate", 3.0, None),
    ({"type_": "throughput"}, "burst", None, None),
])
def test_guidellm_report(strategy: dict[str, object], mode: str, rate: float | None,
                         clients: int | None) -> None:
    from planner.io.bench.dispatch import parse_text

    (record,) = parse_text(guidellm_report(strategy), "g.json")
    v = record.values
    assert (record.source, record.source_format) == ("g.json:1#benchmarks[0]", "guidellm-json")
    assert (v["mode"], v["request_rate"], v["concurrency"], v["model"]) == (
        mode, rate, clients, "Qwen/Qwen3-8B")
    assert (v["output_tokens_per_s"], v["ttft_p50_ms"], v["ttft_p99_ms"], v["tpot_mean_ms"],
            v["input_tokens"], v["output_tokens"]) == (480.0, 55.0, 140.0, 8.0, 512.0, 256.0)


def test_guidellm_and_json_errors() -> None:
    from planner.io.bench.dispatch import parse_text

    with pytest.raises(BenchFileError, match=r"^g\.json:1: benchmarks\[0\]: "
                                             r"output_tokens_per_second\.mean '-1\.0'"):
        parse_text(guidellm_report({"type_": "synchronous"}, tps=-1.0), "g.json")
    with pytest.raises(BenchFileError, match=r"^g\.json:1: the GuideLLM report holds no "):
        parse_text('{"benchmarks": []}', "g.json")
    with pytest.raises(BenchFileError, match=r"^g\.json:1: JSON that is neither"):
        parse_text('{"results": []}', "g.json")
    with pytest.raises(BenchFileError, match=r"^g\.json:3: not JSON"):
        parse_text('{\n "benchmarks":\n ]', "g.json")
    with pytest.raises(BenchFileError, match=r"^e\.txt:1: the file is empty"):
        parse_text("  \n", "e.txt")


def test_sglang_output_file_json_lines() -> None:
    """sglang.bench_serving --output-file appends one JSON object per run (vLLM's keys);
    a bad line is named by its number."""
    from planner.io.bench.dispatch import parse_text

    line = ('{"backend": "sglang", "request_rate": Infinity, "max_concurrency": %d, '
            '"completed": 100, "total_input_tokens": 102400, "total_output_tokens": 25600, '
            '"output_throughput": %s, "mean_ttft_ms": 90.5, "mean_tpot_ms": 12.0}')
    text = line % (8, "800.0") + "\n" + line % (1, "120.0") + "\n"
    first, second = parse_text(text, "s.jsonl")
    assert (first.source, first.source_format) == ("s.jsonl:1", "sglang-json")
    assert (first.values["mode"], first.values["concurrency"], second.values["mode"]) == (
        "concurrency", 8, "single")
    assert (first.values["input_tokens"], first.values["output_tokens"],
            second.values["output_tokens_per_s"]) == (1024.0, 256.0, 120.0)
    with pytest.raises(BenchFileError, match=r"^s\.jsonl:2: output_throughput 'nan'"):
        parse_text(line % (8, "800.0") + "\n" + line % (1, "NaN") + "\n", "s.jsonl")
