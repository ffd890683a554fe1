"""Benchmark result files in: parsers that turn what people have on disk into run records.

Issue 12 imports measured serving runs. This module only reads and checks files (no database,
no model): each parser returns :class:`RunRecord` values with every setting the file does not
hold left as ``None`` (unknown, never guessed) and the ``FILE:line`` it came from, or raises
:class:`BenchFileError` naming that place. It sits in the report layer because, like the
workbook importer, it is a file format at the edge of the planner. Parsers so far: the
documented generic CSV. (vLLM, GuideLLM, trtllm-bench and SGLang formats are still to come.)
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from planner.errors import PlannerError

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Larger files are refused before reading (a result file is kilobytes)."""

CSV_HEADER: tuple[str, ...] = (
    "model", "gpu", "gpus", "tp", "pp", "engine", "weight_dtype", "kv_dtype", "mode",
    "request_rate", "concurrency", "input_tokens", "output_tokens", "output_tokens_per_s",
    "ttft_mean_ms", "ttft_p50_ms", "ttft_p99_ms", "tpot_mean_ms", "itl_mean_ms")
"""The generic CSV's exact header, one row per run; an empty cell is unknown."""

TEXT_FIELDS = ("model", "gpu", "engine", "weight_dtype", "kv_dtype", "mode")
INT_FIELDS = ("gpus", "tp", "pp", "concurrency")
FLOAT_FIELDS = ("request_rate", "input_tokens", "output_tokens", "output_tokens_per_s",
                "ttft_mean_ms", "ttft_p50_ms", "ttft_p99_ms", "tpot_mean_ms", "itl_mean_ms")
ENGINES = ("vllm", "sglang", "trtllm")
MODES = ("offline", "rate", "concurrency", "single")


class BenchFileError(PlannerError):
    """A benchmark file that cannot be imported; the message starts with ``FILE:line``."""


@dataclass(frozen=True)
class RunRecord:
    """One benchmark run as read: settings and figures (``None`` = unknown)."""

    source: str
    source_format: str
    values: dict[str, str | int | float | None] = field(default_factory=dict)


def read_text(path: Path) -> str:
    """The file's text, refusing huge files and binary garbage with one clear error."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise BenchFileError(f"{path}: cannot read: {exc.strerror}") from exc
    if size > MAX_FILE_BYTES:
        raise BenchFileError(f"{path}: {size} bytes is larger than the {MAX_FILE_BYTES} byte "
                             "limit for a benchmark result file")
    data = path.read_bytes()
    if b"\x00" in data:
        raise BenchFileError(f"{path}: binary data, not a benchmark result file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BenchFileError(f"{path}: not UTF-8 text (byte {exc.start})") from exc


def _number(text: str, name: str, where: str, integer: bool) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise BenchFileError(f"{where}: {name} {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise BenchFileError(f"{where}: {name} {text!r} must be a finite number >= 0")
    if integer:
        if value != int(value) or value < 1:
            raise BenchFileError(f"{where}: {name} {text!r} must be a whole number >= 1")
        return int(value)
    return value


def parse_csv(text: str, name: str) -> list[RunRecord]:
    """Rows of the generic CSV (exact :data:`CSV_HEADER`); every bad cell names FILE:line."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or tuple(h.strip() for h in header) != CSV_HEADER:
        raise BenchFileError(f"{name}:1: the header must be exactly {','.join(CSV_HEADER)}")
    records: list[RunRecord] = []
    for row in reader:
        where = f"{name}:{reader.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(CSV_HEADER):
            raise BenchFileError(f"{where}: {len(row)} cells, the header has {len(CSV_HEADER)}")
        values: dict[str, str | int | float | None] = {}
        for column, cell in zip(CSV_HEADER, row, strict=True):
            cell = cell.strip()
            if not cell:
                values[column] = None
            elif column in TEXT_FIELDS:
                values[column] = cell
            else:
                values[column] = _number(cell, column, where, column in INT_FIELDS)
        for column in ("model", "gpu"):
            if values[column] is None:
                raise BenchFileError(f"{where}: {column} is required")
        if values["engine"] is not None and values["engine"] not in ENGINES:
            raise BenchFileError(f"{where}: engine {values['engine']!r} is not one of "
                                 f"{', '.join(ENGINES)}")
        if values["mode"] is not None and values["mode"] not in MODES:
            raise BenchFileError(f"{where}: mode {values['mode']!r} is not one of "
                                 f"{', '.join(MODES)}")
        records.append(RunRecord(where, "csv", values))
    return records


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

VLLM_JSON_KEYS: dict[str, str] = {
    "request_rate": "request_rate", "max_concurrency": "concurrency",
    "output_throughput": "output_tokens_per_s", "mean_ttft_ms": "ttft_mean_ms",
    "median_ttft_ms": "ttft_p50_ms", "p99_ttft_ms": "ttft_p99_ms",
    "mean_tpot_ms": "tpot_mean_ms", "mean_itl_ms": "itl_mean_ms",
}
"""``vllm bench serve --save-result`` JSON keys -> record fields."""


def _per_request(values: dict[str, str | int | float | None], total_in: float | None,
                 total_out: float | None, completed: float | None) -> None:
    """Mean tokens per request from the totals, when the request count is known."""
    if completed:
        values["input_tokens"] = total_in / completed if total_in is not None else None
        values["output_tokens"] = total_out / completed if total_out is not None else None


def parse_vllm_summary(text: str, name: str) -> list[RunRecord]:
    """Each ``Serving Benchmark Result`` block of pasted ``vllm bench serve`` output."""
    records: list[RunRecord] = []
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if "Serving Benchmark Result" in line]
    if not starts:
        raise BenchFileError(f"{name}:1: no 'Serving Benchmark Result' block (not vllm output)")
    for block, start in enumerate(starts):
        end = starts[block + 1] if block + 1 < len(starts) else len(lines)
        values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
        totals: dict[str, float] = {}
        for index in range(start + 1, end):
            key, sep, rest = lines[index].partition(":")
            if not sep or not rest.strip():
                continue
            key, rest = key.strip(), rest.strip()
            where = f"{name}:{index + 1}"
            if key in ("Total input tokens", "Total generated tokens", "Successful requests"):
                totals[key] = float(_number(rest, key, where, False))
            elif key == "Request rate configured (RPS)" and rest == "inf":
                values["request_rate"] = None
            elif key in VLLM_SUMMARY_KEYS:
                field_name = VLLM_SUMMARY_KEYS[key]
                values[field_name] = _number(rest, key, where, field_name in INT_FIELDS)
        if values.get("output_tokens_per_s") is None:
            raise BenchFileError(f"{name}:{start + 1}: the block has no output token throughput")
        _per_request(values, totals.get("Total input tokens"),
                     totals.get("Total generated tokens"), totals.get("Successful requests"))
        records.append(RunRecord(f"{name}:{start + 1}", "vllm-text", values))
    return records


def parse_vllm_json(text: str, name: str) -> list[RunRecord]:
    """A ``vllm bench serve --save-result`` JSON object (one run)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchFileError(f"{name}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or "output_throughput" not in data:
        raise BenchFileError(f"{name}:1: not a vllm bench serve result (no output_throughput)")
    values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
    for key, field_name in VLLM_JSON_KEYS.items():
        raw = data.get(key)
        if raw is None or raw == "inf" or (key == "request_rate" and raw == float("inf")):
            continue
        values[field_name] = _number(str(raw), key, f"{name}:1", field_name in INT_FIELDS)
    _per_request(values, data.get("total_input_tokens"), data.get("total_output_tokens"),
                 data.get("completed"))
    return [RunRecord(f"{name}:1", "vllm-json", values)]
