"""The benchmark file parsers (issue 12): the generic CSV and one error per bad-file kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.report.benchfiles import (
    CSV_HEADER,
    BenchFileError,
    parse_csv,
    parse_vllm_summary,
    read_text,
)

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
    from planner.report.benchfiles import parse_vllm_json

    text = ('{"request_rate": "inf", "max_concurrency": 16, "completed": 100,'
            ' "total_input_tokens": 102400, "total_output_tokens": 12800,'
            ' "output_throughput": 2500.5, "mean_ttft_ms": 80.0, "mean_tpot_ms": 12.5}')
    (record,) = parse_vllm_json(text, "r.json")
    assert record.values["concurrency"] == 16 and record.values["request_rate"] is None
    assert record.values["input_tokens"] == 1024 and record.values["itl_mean_ms"] is None
    with pytest.raises(BenchFileError, match="no output_throughput"):
        parse_vllm_json('{"a": 1}', "r.json")
