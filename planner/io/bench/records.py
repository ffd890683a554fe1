"""Benchmark result files in: the run record every parser returns, and its checks.

Issue 12 imports measured serving runs. The parsers (one module per format beside this one,
told apart by content in :mod:`planner.io.bench.dispatch`) only read and check files (no
database, no model): each returns :class:`RunRecord` values with every setting the file does
not hold left as ``None`` (unknown, never guessed) and the ``FILE:line`` it came from, or raises
:class:`BenchFileError` naming that place. They sit in the io layer because, like the workbook
importer, they are file formats at the edge of the planner.

How the run was driven is the record's ``mode``: ``offline`` (trtllm-bench, no front end),
``burst`` (every request sent at once: infinite rate, no concurrency cap; only its throughput
is comparable with a steady state), ``concurrency`` (closed loop of ``concurrency`` clients),
``single`` (one request at a time) or ``rate`` (Poisson arrivals at ``request_rate``).
Engine settings a file states (trtllm-bench's KV memory percentage, batch and token limits)
go into ``settings`` under the planner's scenario input names.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from planner.core.errors import PlannerError
from planner.core.files import FileRefused, read_regular

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
    (:func:`planner.core.files.read_regular`)."""
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


def json_value(text: str, name: str, line: int | None = None) -> object:
    """``text`` (the whole file ``name``, or its line ``line``) parsed as JSON, nesting
    bounded by :data:`MAX_JSON_DEPTH` (checked before parsing, so no recursion limit is
    reached); one clear error naming FILE:line otherwise."""
    where = f"{name}:{line or 1}"
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise BenchFileError(f"{where}: JSON nested more than {MAX_JSON_DEPTH} levels deep; a "
                             "benchmark result nests a few levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchFileError(f"{name}:{line or exc.lineno}: not JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # an integer of more than 4,300 digits
        raise BenchFileError(f"{where}: not JSON a benchmark result holds ({exc})") from None


_JSON_MARK = re.compile(r'["\[\]{}]')
"""The characters :func:`json_depth` reads outside strings: a quote and the brackets."""
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.S)
"""The rest of a JSON string after its opening quote, to its closing quote (an escaped
character, whatever it is, is skipped)."""


def json_depth(text: str) -> int:
    """Deepest nesting of ``[`` and ``{`` in ``text`` outside strings (an upper bound: a
    malformed text may count more, which is refused anyway); counting stops once it is over
    :data:`MAX_JSON_DEPTH`. A string left open runs to the end of the text."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return 0
    depth = deepest = 0
    pos = 0
    while (mark := _JSON_MARK.search(text, pos)) is not None:
        pos = mark.end()
        ch = mark.group()
        if ch == '"':
            rest = _STRING_REST.match(text, pos)
            if rest is None:  # an unterminated string: the rest of the text is in it
                break
            pos = rest.end()
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                break
        else:
            depth -= 1
    return deepest


def checked_number(text: str, name: str, where: str, integer: bool) -> int | float:
    """``text`` as a finite number >= 0 (``integer``: a whole number >= 1); an error naming
    ``where`` and the field ``name`` otherwise."""
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


def json_number(data: dict[str, object], key: str, where: str) -> float | None:
    raw = data.get(key)
    return None if raw is None else float(checked_number(str(raw), key, where, False))




def per_request(values: dict[str, str | int | float | None], total_in: float | None,
                 total_out: float | None, completed: float | None) -> None:
    """Mean tokens per request from the totals, when the request count is known."""
    if completed:
        values["input_tokens"] = total_in / completed if total_in is not None else None
        values["output_tokens"] = total_out / completed if total_out is not None else None


def run_mode(values: dict[str, str | int | float | None], rate_infinite: bool | None,
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


def check_record(record: RunRecord) -> None:
    """:class:`BenchFileError` naming the field if a figure of ``record`` is impossible: a
    count outside 1 to :data:`COUNT_LIMITS`, a figure not above 0 or beyond
    :data:`FIGURE_LIMITS` (a negative or zero duration, no completed request, 10^308
    tokens/s)."""
    _check_counts(record)
    _check_figures(record)


def _check_counts(record: RunRecord) -> None:
    """Refuse a count of ``record`` outside 1 to its :data:`COUNT_LIMITS` (0 requests: the
    run measured nothing)."""
    for key, most in COUNT_LIMITS.items():
        value = record.values.get(key)
        if key == "num_requests" and value == 0:
            raise BenchFileError(f"{record.source}: no request completed (num_requests 0): "
                                 "the run measured nothing")
        if value is not None and not (isinstance(value, (int, float)) and 1 <= value <= most):
            raise BenchFileError(f"{record.source}: {key} {_shown(value)} must be a whole "
                                 f"number from 1 to {most:,}")


def _check_figures(record: RunRecord) -> None:
    """Refuse a figure of ``record`` not above 0 or beyond its :data:`FIGURE_LIMITS`."""
    for key, (top, unit) in FIGURE_LIMITS.items():
        value = record.values.get(key)
        if value is not None and not (isinstance(value, (int, float)) and 0 < value <= top):
            raise BenchFileError(f"{record.source}: {key} {_shown(value)} must be above 0 and "
                                 f"at most {top:,.0f} {unit}")


def _shown(value: object) -> str:
    """A value as an error echoes it: at most 40 characters."""
    text = f"{value:.6g}" if isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
