"""Benchmark result files in: parsers that turn what people have on disk into run records.

Issue 12 imports measured serving runs. This module only reads and checks files (no database,
no model): each parser returns :class:`RunRecord` values with every setting the file does not
hold left as ``None`` (unknown, never guessed) and the ``FILE:line`` it came from, or raises
:class:`BenchFileError` naming that place. It sits in the report layer because, like the
workbook importer, it is a file format at the edge of the planner.

Formats (:func:`parse_file` tells them apart by content, not by file name):

* ``csv``: the documented generic CSV, exact header :data:`CSV_HEADER`, one row per run;
* ``vllm-text``: pasted ``vllm bench serve`` output, one run per ``Serving Benchmark Result``
  block; ``vllm-json``: its ``--save-result`` JSON;
* ``sglang-text``: ``python -m sglang.bench_serving`` output (same block title as vLLM, told apart
  by its ``Backend:``, ``Input token throughput`` or ``E2E Latency`` lines); ``sglang-json``: its
  ``--output-file`` JSON lines (one run per line, vLLM's key names);
* ``trtllm-text``: ``trtllm-bench throughput`` report (``PERFORMANCE OVERVIEW`` section);
* ``guidellm-json``: a GuideLLM benchmarks report (``{"benchmarks": [...]}``), one run each.

How the run was driven is the record's ``mode``: ``offline`` (trtllm-bench, no front end),
``burst`` (every request sent at once: infinite rate, no concurrency cap; only its throughput
is comparable with a steady state), ``concurrency`` (closed loop of ``concurrency`` clients),
``single`` (one request at a time) or ``rate`` (Poisson arrivals at ``request_rate``).
Engine settings a file states (trtllm-bench's KV memory percentage, batch and token limits)
go into ``settings`` under the planner's scenario input names.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from planner.errors import PlannerError
from planner.files import FileRefused, read_regular

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Larger files are refused before reading (a result file is kilobytes)."""
MAX_JSON_DEPTH = 64
"""Deepest nesting of a JSON result accepted (GuideLLM reports nest about 8 deep)."""

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
MODES = ("offline", "rate", "concurrency", "single", "burst")
"""``burst`` (all requests at once) is what a vllm/SGLang run with an infinite rate and no
concurrency cap does; the generic CSV accepts it too."""


COUNT_LIMITS: dict[str, int] = {"gpus": 1_000_000, "tp": 1_024, "pp": 1_024,
                                "concurrency": 10_000_000, "num_requests": 1_000_000_000}
"""Largest whole-number setting a run may state (each at least 1): beyond any deployment,
and far inside the 64-bit integers the database stores."""
FIGURE_LIMITS: dict[str, tuple[float, str]] = {
    "request_rate": (1e6, "requests/s"), "input_tokens": (1e8, "tokens"),
    "output_tokens": (1e8, "tokens"), "output_tokens_per_s": (1e9, "tokens/s"),
    **{k: (1e8, "ms") for k in ("ttft_mean_ms", "ttft_p50_ms", "ttft_p99_ms", "tpot_mean_ms",
                                "itl_mean_ms")}}
"""Each measured figure must be above 0 and at most this (a run's rate, mean lengths,
throughput and latencies; 10^8 ms is 28 hours): a figure outside is a broken file, and a fit
must never see it."""


class BenchFileError(PlannerError):
    """A benchmark file that cannot be imported; the message starts with ``FILE:line``."""


@dataclass(frozen=True)
class RunRecord:
    """One benchmark run as read: settings and figures (``None`` = unknown)."""

    source: str
    source_format: str
    values: dict[str, str | int | float | None] = field(default_factory=dict)
    settings: dict[str, float] = field(default_factory=dict)
    """Engine settings the file states, by scenario input name (``free_gpu_memory_fraction``,
    ``max_num_seqs``, ``max_num_batched_tokens``)."""


def read_text(path: Path) -> str:
    """The file's text, refusing what is not a regular file (a FIFO, a device, a folder:
    before reading, so nothing blocks), huge files and binary garbage with one clear error
    (:func:`planner.files.read_regular`)."""
    try:
        data = read_regular(path, MAX_FILE_BYTES, "benchmark result file")
    except FileRefused as exc:
        raise BenchFileError(str(exc)) from None
    if b"\x00" in data:
        raise BenchFileError(f"{path}: binary data, not a benchmark result file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BenchFileError(f"{path}: not UTF-8 text (byte {exc.start})") from exc


def _json(text: str, name: str, line: int | None = None) -> object:
    """``text`` (the whole file ``name``, or its line ``line``) parsed as JSON, nesting
    bounded by :data:`MAX_JSON_DEPTH` (checked before parsing, so no recursion limit is
    reached); one clear error naming FILE:line otherwise."""
    where = f"{name}:{line or 1}"
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise BenchFileError(f"{where}: JSON nested more than {MAX_JSON_DEPTH} levels deep; a "
                             "benchmark result nests a few levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchFileError(f"{name}:{line or exc.lineno}: not JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # an integer of more than 4,300 digits
        raise BenchFileError(f"{where}: not JSON a benchmark result holds ({exc})") from None


def _json_depth(text: str) -> int:
    """Deepest nesting of ``[`` and ``{`` in ``text`` outside strings (an upper bound: a
    malformed text may count more, which is refused anyway)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_JSON_DEPTH:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


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

UNSET = frozenset({"", "none", "not set", "-"})
"""What vllm and SGLang print for a setting not given (no concurrency cap): unknown."""

SGLANG_ALIASES: dict[str, str] = {
    "Traffic request rate": "Request rate configured (RPS)",
    "Max request concurrency": "Maximum request concurrency",
    "Max reqeuest concurrency": "Maximum request concurrency",  # sic, SGLang 0.4 prints this
}
"""``sglang.bench_serving`` line names that differ from vLLM's, mapped to vLLM's."""

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


def _mode(values: dict[str, str | int | float | None], rate_infinite: bool | None,
          requests: float | None) -> None:
    """The run's mode from how it was driven: a concurrency cap is a closed loop (one client:
    ``single``); a finite rate is open loop; an infinite or unstated rate with no cap sends every
    request at once (``burst``, ``num_requests`` of them). A count of 0 is kept, for
    :func:`check_record` to refuse: the run measured nothing."""
    values["num_requests"] = (int(requests) if requests is not None and requests < 2**63
                              else requests)
    if values.get("concurrency") is not None:
        values["mode"] = "single" if values["concurrency"] == 1 else "concurrency"
    elif values.get("request_rate") is not None and not rate_infinite:
        values["mode"] = "rate"
    else:
        values["mode"] = "burst"


def _block_starts(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if "Serving Benchmark Result" in line]


def _is_sglang(lines: list[str]) -> bool:
    return any(line.startswith("Backend:") or "E2E Latency" in line
               or line.startswith("Input token throughput") for line in lines)


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
    fmt = "sglang-text" if _is_sglang(lines) else "vllm-text"
    for block, start in enumerate(starts):
        end = starts[block + 1] if block + 1 < len(starts) else len(lines)
        values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
        totals: dict[str, float] = {}
        rate_infinite: list[bool] = []
        # vLLM and SGLang print the rate and concurrency settings just above the block too
        for index in [*_preamble(lines, start), *range(start + 1, end)]:
            key, sep, rest = lines[index].partition(":")
            if not sep or rest.strip().lower() in UNSET:
                continue
            key, rest = key.strip().lstrip("#").strip(), rest.strip()
            key = SGLANG_ALIASES.get(key, key)
            where = f"{name}:{index + 1}"
            if key in ("Total input tokens", "Total generated tokens", "Successful requests"):
                totals[key] = float(_number(rest, key, where, False))
            elif key == "Request rate configured (RPS)" and rest.lower() == "inf":
                rate_infinite.append(True)
                values["request_rate"] = None
            elif key in VLLM_SUMMARY_KEYS:
                field_name = VLLM_SUMMARY_KEYS[key]
                values[field_name] = _number(rest, key, where, field_name in INT_FIELDS)
        if values.get("output_tokens_per_s") is None:
            raise BenchFileError(f"{name}:{start + 1}: the block has no output token throughput")
        _per_request(values, totals.get("Total input tokens"),
                     totals.get("Total generated tokens"), totals.get("Successful requests"))
        _mode(values, rate_infinite[0] if rate_infinite else None,
              totals.get("Successful requests"))
        records.append(RunRecord(f"{name}:{start + 1}", fmt, values))
    return records


def parse_vllm_json(text: str, name: str) -> list[RunRecord]:
    """A ``vllm bench serve --save-result`` JSON object (one run)."""
    data = _json(text, name)
    if not isinstance(data, dict) or "output_throughput" not in data:
        raise BenchFileError(f"{name}:1: not a vllm bench serve result (no output_throughput)")
    return [_result_object(data, f"{name}:1", "vllm-json")]


def parse_jsonl(text: str, name: str) -> list[RunRecord]:
    """One result object per line: ``sglang.bench_serving --output-file`` (it appends a line
    per run, vLLM's key names, ``"backend": "sglang"``), or vllm results concatenated."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        data = _json(line, name, number)
        if not isinstance(data, dict) or "output_throughput" not in data:
            raise BenchFileError(f"{name}:{number}: not a bench_serving result "
                                 "(no output_throughput)")
        backend = str(data.get("backend") or "")
        fmt = "sglang-json" if backend.startswith("sglang") else "vllm-json"
        records.append(_result_object(data, f"{name}:{number}", fmt))
    return records


def _result_object(data: dict[str, object], where: str, fmt: str) -> RunRecord:
    """A run from a result object with vLLM's key names (vllm and SGLang both write them)."""
    values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
    for key, field_name in VLLM_JSON_KEYS.items():
        raw = data.get(key)
        if raw is None or raw == "inf" or (key == "request_rate" and raw == float("inf")):
            continue
        values[field_name] = _number(str(raw), key, where, field_name in INT_FIELDS)
    completed = _json_number(data, "completed", where)
    _per_request(values, _json_number(data, "total_input_tokens", where),
                 _json_number(data, "total_output_tokens", where), completed)
    rate = data.get("request_rate")
    _mode(values, rate in ("inf", float("inf"), None), completed)
    return RunRecord(where, fmt, values)


def _json_number(data: dict[str, object], key: str, where: str) -> float | None:
    raw = data.get(key)
    return None if raw is None else float(_number(str(raw), key, where, False))


def _load_json(text: str, name: str) -> object:
    return _json(text, name)


TRTLLM_KEYS: dict[str, str] = {
    "Total Output Throughput (tokens/sec)": "output_tokens_per_s",
    "Average Input Length (tokens)": "input_tokens",
    "Average Output Length (tokens)": "output_tokens",
    "Average time-to-first-token [TTFT] (ms)": "ttft_mean_ms",
    "Average time-per-output-token [TPOT] (ms)": "tpot_mean_ms",
    "TP Size": "tp",
    "PP Size": "pp",
}
"""``trtllm-bench throughput`` report lines -> record fields."""
TRTLLM_SETTINGS: dict[str, str] = {
    "Max Runtime Batch Size": "max_num_seqs",
    "Max Runtime Tokens": "max_num_batched_tokens",
    "KV Memory Percentage": "free_gpu_memory_fraction",
    "EP Size": "ep",
}
"""``trtllm-bench`` engine lines -> scenario inputs (the percentage becomes a fraction)."""


def parse_trtllm(text: str, name: str) -> list[RunRecord]:
    """A ``trtllm-bench throughput`` report: one offline run (every request queued at once,
    no HTTP front end). Reads the ``Model``, ``TP Size``/``PP Size``, the runtime limits, the
    KV memory percentage and the ``PERFORMANCE OVERVIEW`` / ``REQUEST DETAILS`` figures."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "PERFORMANCE OVERVIEW" in line), None)
    if start is None:
        raise BenchFileError(f"{name}:1: no 'PERFORMANCE OVERVIEW' section "
                             "(not trtllm-bench throughput output)")
    values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
    settings: dict[str, float] = {}
    requests: float | None = None
    for index, line in enumerate(lines):
        key, sep, rest = line.partition(":")
        key, rest = key.strip(), rest.strip()
        if not sep or not rest or rest.lower() == "none":
            continue
        where = f"{name}:{index + 1}"
        if key == "Model":
            values["model"] = rest
        elif key == "Number of requests":
            requests = float(_number(rest, key, where, False))
        elif key in TRTLLM_KEYS:
            field_name = TRTLLM_KEYS[key]
            values[field_name] = _number(rest.replace(",", ""), key, where,
                                         field_name in INT_FIELDS)
        elif key in TRTLLM_SETTINGS:
            number = _number(rest.rstrip("%"), key, where, False)
            settings[TRTLLM_SETTINGS[key]] = (number / 100 if rest.endswith("%")
                                              else float(number))
    if values["output_tokens_per_s"] is None:
        raise BenchFileError(f"{name}:{start + 1}: the report has no 'Total Output Throughput "
                             "(tokens/sec)' line")
    values["mode"] = "offline"
    values["engine"] = "trtllm"
    values["num_requests"] = (int(requests) if requests is not None and requests < 2**63
                              else requests)
    return [RunRecord(f"{name}:{start + 1}", "trtllm-text", values, settings)]


def _stat(metrics: dict[str, object], key: str, stat: str = "mean") -> object:
    """``metrics[key]["successful"][stat]`` (or ``["percentiles"]["p99"]``) of a GuideLLM
    distribution summary; ``None`` when absent."""
    node = metrics.get(key)
    if isinstance(node, dict):
        node = node.get("successful", node)
    if not isinstance(node, dict):
        return None
    if stat == "p99":
        pct = node.get("percentiles")
        return pct.get("p99") if isinstance(pct, dict) else None
    return node.get(stat)


GUIDELLM_METRICS: tuple[tuple[str, str, str, float], ...] = (
    ("output_tokens_per_second", "mean", "output_tokens_per_s", 1.0),
    ("time_to_first_token_ms", "mean", "ttft_mean_ms", 1.0),
    ("time_to_first_token_ms", "median", "ttft_p50_ms", 1.0),
    ("time_to_first_token_ms", "p99", "ttft_p99_ms", 1.0),
    ("time_per_output_token_ms", "mean", "tpot_mean_ms", 1.0),
    ("inter_token_latency_ms", "mean", "itl_mean_ms", 1.0),
    ("prompt_token_count", "mean", "input_tokens", 1.0),
    ("output_token_count", "mean", "output_tokens", 1.0),
)
"""GuideLLM ``metrics`` distribution (successful requests) and statistic -> record field."""


def parse_guidellm(text: str, name: str) -> list[RunRecord]:
    """A GuideLLM benchmarks report (``guidellm benchmark --output-path report.json``): one run
    per entry of ``benchmarks``. The strategy (``args.strategy`` or ``config.strategy``) gives
    the mode: ``synchronous`` = single, ``concurrent`` = closed loop of ``streams`` clients,
    ``constant``/``poisson`` = open loop at ``rate``, ``throughput`` = burst."""
    data = _load_json(text, name)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise BenchFileError(f"{name}:1: not a GuideLLM report (no 'benchmarks' list)")
    if not data["benchmarks"]:
        raise BenchFileError(f"{name}:1: the GuideLLM report holds no benchmarks")
    records = []
    for i, bench in enumerate(data["benchmarks"]):
        where = f"{name}:1: benchmarks[{i}]"
        metrics = bench.get("metrics") if isinstance(bench, dict) else None
        if not isinstance(metrics, dict):
            raise BenchFileError(f"{where}: no 'metrics' object")
        values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
        for key, stat, field_name, scale in GUIDELLM_METRICS:
            raw = _stat(metrics, key, stat)
            if raw is not None:
                values[field_name] = float(_number(str(raw), f"{key}.{stat}", where,
                                                   False)) * scale
        if values["output_tokens_per_s"] is None:
            raise BenchFileError(f"{where}: no output_tokens_per_second.successful.mean")
        strategy: object = None
        for holder in ("args", "config"):
            section = bench.get(holder)
            if isinstance(section, dict) and isinstance(section.get("strategy"), dict):
                strategy = section["strategy"]
        kind = strategy.get("type_") if isinstance(strategy, dict) else None
        if kind == "synchronous":
            values["mode"], values["concurrency"] = "single", 1
        elif kind == "concurrent" and isinstance(strategy, dict):
            values["concurrency"] = _number(str(strategy.get("streams")), "strategy.streams",
                                            where, True)
            values["mode"] = "concurrency"
        elif kind in ("constant", "poisson") and isinstance(strategy, dict):
            values["request_rate"] = _number(str(strategy.get("rate")), "strategy.rate",
                                             where, False)
            values["mode"] = "rate"
        elif kind == "throughput":
            values["mode"] = "burst"
        worker = bench.get("worker")
        if isinstance(worker, dict) and isinstance(worker.get("backend_model"), str):
            values["model"] = worker["backend_model"]
        records.append(RunRecord(f"{name}:1#benchmarks[{i}]", "guidellm-json", values))
    return records


FORMATS = ("csv", "vllm-text", "vllm-json", "sglang-text", "sglang-json", "trtllm-text",
           "guidellm-json")
"""Every format :func:`parse_file` reads."""


def _several_objects(text: str) -> bool:
    """Whether ``text`` is JSON lines: a first object followed by more data."""
    if _json_depth(text) > MAX_JSON_DEPTH:
        return False  # refused by the parser of one object, naming the depth
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.msg == "Extra data"
    except (ValueError, RecursionError):
        return False
    return False


def parse_text(text: str, name: str) -> list[RunRecord]:
    """Records of one file's text, its format told by its content (see the module docstring),
    each checked by :func:`check_record`. An unrecognised file gets one error naming the
    formats."""
    records = _parse_text(text, name)
    for record in records:
        check_record(record)
    return records


def check_record(record: RunRecord) -> None:
    """:class:`BenchFileError` naming the field if a figure of ``record`` is impossible: a
    count outside 1 to :data:`COUNT_LIMITS`, a figure not above 0 or beyond
    :data:`FIGURE_LIMITS` (a negative or zero duration, no completed request, 10^308
    tokens/s)."""
    for key, top in COUNT_LIMITS.items():
        value = record.values.get(key)
        if key == "num_requests" and value == 0:
            raise BenchFileError(f"{record.source}: no request completed (num_requests 0): "
                                 "the run measured nothing")
        if value is not None and not 1 <= value <= top:
            raise BenchFileError(f"{record.source}: {key} {_shown(value)} must be a whole "
                                 f"number from 1 to {top:,}")
    for key, (top, unit) in FIGURE_LIMITS.items():
        value = record.values.get(key)
        if value is not None and not 0 < value <= top:
            raise BenchFileError(f"{record.source}: {key} {_shown(value)} must be above 0 and "
                                 f"at most {top:,.0f} {unit}")


def _shown(value: object) -> str:
    """A value as an error echoes it: at most 40 characters."""
    text = f"{value:.6g}" if isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _parse_text(text: str, name: str) -> list[RunRecord]:
    stripped = text.lstrip()
    first = stripped.splitlines()[0].strip() if stripped else ""
    if not stripped:
        raise BenchFileError(f"{name}:1: the file is empty")
    if first.startswith("model,") or first.replace(" ", "").startswith("model,gpu"):
        return parse_csv(text, name)
    if stripped.startswith("{") and _several_objects(stripped):
        return parse_jsonl(text, name)
    if stripped.startswith(("{", "[")):
        data = _load_json(text, name)
        if isinstance(data, dict) and "benchmarks" in data:
            return parse_guidellm(text, name)
        if isinstance(data, dict) and "output_throughput" in data:
            return parse_vllm_json(text, name)
        raise BenchFileError(f"{name}:1: JSON that is neither a vllm bench serve result (no "
                             "output_throughput) nor a GuideLLM report (no benchmarks)")
    if "PERFORMANCE OVERVIEW" in text:
        return parse_trtllm(text, name)
    if "Serving Benchmark Result" in text:
        return parse_vllm_summary(text, name)
    raise BenchFileError(f"{name}:1: not a benchmark result this planner reads (expected the "
                         "generic CSV header, vllm/SGLang 'Serving Benchmark Result' output, "
                         "trtllm-bench 'PERFORMANCE OVERVIEW', vllm --save-result JSON or a "
                         "GuideLLM report)")


def parse_file(path: Path) -> list[RunRecord]:
    """Records of one benchmark file (size, binary and encoding checked first)."""
    return parse_text(read_text(path), str(path))
