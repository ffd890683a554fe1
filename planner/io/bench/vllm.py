"""vLLM's ``vllm bench serve`` results: the pasted ``Serving Benchmark Result`` blocks
(``vllm-text``; SGLang's output, the same block, is read here too as ``sglang-text``), the
``--save-result`` JSON object (``vllm-json``) and JSON lines of result objects (SGLang's
``--output-file``, or vLLM results concatenated).
"""

from __future__ import annotations

from planner.io.bench.records import (
    CSV_HEADER,
    INT_FIELDS,
    BenchFileError,
    RunRecord,
    checked_number,
    json_number,
    json_value,
    per_request,
    run_mode,
)
from planner.io.bench.sglang import SGLANG_ALIASES, is_sglang, json_format

VLLM_SUMMARY_KEYS: dict[str, str] = {
    "Request rate configured (RPS)": "request_rate",
    "Maximum request concurrency": "concurrency",
    "Output token throughput (tok/s)": "output_tokens_per_s",
    "Mean TTFT (ms)": "ttft_mean_ms",
    "Median TTFT (ms)": "ttft_p50_ms",
    "P99 TTFT (ms)": "ttft_p99_ms",
    "Mean TPOT (ms)": "tpot_mean_ms",
    "Mean ITL (ms)": "itl_mean_ms",
}
"""``vllm bench serve`` summary lines -> record fields."""

UNSET = frozenset({"", "none", "not set", "-"})
"""What vllm and SGLang print for a setting not given (no concurrency cap): unknown."""


VLLM_JSON_KEYS: dict[str, str] = {
    "request_rate": "request_rate", "max_concurrency": "concurrency",
    "output_throughput": "output_tokens_per_s", "mean_ttft_ms": "ttft_mean_ms",
    "median_ttft_ms": "ttft_p50_ms", "p99_ttft_ms": "ttft_p99_ms",
    "mean_tpot_ms": "tpot_mean_ms", "mean_itl_ms": "itl_mean_ms",
}
"""``vllm bench serve --save-result`` JSON keys -> record fields."""


def _block_starts(lines: list[str]) -> list[int]:
    """The index of each ``Serving Benchmark Result`` title line."""
    return [i for i, line in enumerate(lines) if "Serving Benchmark Result" in line]


def _preamble(lines: list[str], start: int) -> range:
    """The settings lines printed just above a block (at most 8, back to the previous
    block's closing ``====`` line)."""
    first = start
    while first > 0 and start - first < 8 and not lines[first - 1].lstrip("# ").startswith("="):
        first -= 1
    return range(first, start)


def parse_vllm_summary(text: str, name: str) -> list[RunRecord]:
    """Each ``Serving Benchmark Result`` block of pasted ``vllm bench serve`` output (or of
    ``sglang.bench_serving`` output, which prints the same block with a few more lines)."""
    records: list[RunRecord] = []
    lines = text.splitlines()
    starts = _block_starts(lines)
    if not starts:
        raise BenchFileError(f"{name}:1: no 'Serving Benchmark Result' block (not vllm output)")
    fmt = "sglang-text" if is_sglang(lines) else "vllm-text"
    for block, start in enumerate(starts):
        end = starts[block + 1] if block + 1 < len(starts) else len(lines)
        records.append(RunRecord(f"{name}:{start + 1}", fmt,
                                 _block_values(lines, start, end, name)))
    return records


def _block_values(lines: list[str], start: int, end: int,
                  name: str) -> dict[str, str | int | float | None]:
    """One result block's record (lines ``start`` to ``end``, and the rate and concurrency
    settings vLLM and SGLang print just above it): its figures, the per-request token counts
    from the totals, and the run's mode."""
    values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
    totals: dict[str, float] = {}
    rate_infinite: list[bool] = []
    for index in [*_preamble(lines, start), *range(start + 1, end)]:
        key, sep, rest = lines[index].partition(":")
        if not sep or rest.strip().lower() in UNSET:
            continue
        key, rest = key.strip().lstrip("#").strip(), rest.strip()
        key = SGLANG_ALIASES.get(key, key)
        where = f"{name}:{index + 1}"
        if key in ("Total input tokens", "Total generated tokens", "Successful requests"):
            totals[key] = float(checked_number(rest, key, where, False))
        elif key == "Request rate configured (RPS)" and rest.lower() == "inf":
            rate_infinite.append(True)
            values["request_rate"] = None
        elif key in VLLM_SUMMARY_KEYS:
            field_name = VLLM_SUMMARY_KEYS[key]
            values[field_name] = checked_number(rest, key, where, field_name in INT_FIELDS)
    if values.get("output_tokens_per_s") is None:
        raise BenchFileError(f"{name}:{start + 1}: the block has no output token throughput")
    per_request(values, totals.get("Total input tokens"),
                totals.get("Total generated tokens"), totals.get("Successful requests"))
    run_mode(values, rate_infinite[0] if rate_infinite else None,
             totals.get("Successful requests"))
    return values


def parse_vllm_json(text: str, name: str) -> list[RunRecord]:
    """A ``vllm bench serve --save-result`` JSON object (one run)."""
    data = json_value(text, name)
    if not isinstance(data, dict) or "output_throughput" not in data:
        raise BenchFileError(f"{name}:1: not a vllm bench serve result (no output_throughput)")
    return [result_object(data, f"{name}:1", "vllm-json")]


def parse_jsonl(text: str, name: str) -> list[RunRecord]:
    """One result object per line: ``sglang.bench_serving --output-file`` (it appends a line
    per run, vLLM's key names, ``"backend": "sglang"``), or vllm results concatenated."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        data = json_value(line, name, number)
        if not isinstance(data, dict) or "output_throughput" not in data:
            raise BenchFileError(f"{name}:{number}: not a bench_serving result "
                                 "(no output_throughput)")
        records.append(result_object(data, f"{name}:{number}", json_format(data)))
    return records


def result_object(data: dict[str, object], where: str, fmt: str) -> RunRecord:
    """A run from a result object with vLLM's key names (vllm and SGLang both write them)."""
    values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
    for key, field_name in VLLM_JSON_KEYS.items():
        raw = data.get(key)
        if raw is None or raw == "inf" or (key == "request_rate" and raw == float("inf")):
            continue
        values[field_name] = checked_number(str(raw), key, where, field_name in INT_FIELDS)
    completed = json_number(data, "completed", where)
    per_request(values, json_number(data, "total_input_tokens", where),
                 json_number(data, "total_output_tokens", where), completed)
    rate = data.get("request_rate")
    run_mode(values, rate in ("inf", float("inf"), None), completed)
    return RunRecord(where, fmt, values)
