"""TensorRT-LLM's ``trtllm-bench throughput`` report (``trtllm-text``): one offline run, its
``PERFORMANCE OVERVIEW`` figures, parallelism and the engine's runtime limits.
"""

from __future__ import annotations

from planner.io.bench.records import (
    CSV_HEADER,
    INT_FIELDS,
    BenchFileError,
    RunRecord,
    checked_number,
)

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
    requests = _read_lines(lines, name, values, settings)
    if values["output_tokens_per_s"] is None:
        raise BenchFileError(f"{name}:{start + 1}: the report has no 'Total Output Throughput "
                             "(tokens/sec)' line")
    values["mode"] = "offline"
    values["engine"] = "trtllm"
    values["num_requests"] = (int(requests) if requests is not None and requests < 2**63
                              else requests)
    return [RunRecord(f"{name}:{start + 1}", "trtllm-text", values, settings)]


def _read_lines(lines: list[str], name: str, values: dict[str, str | int | float | None],
                settings: dict[str, float]) -> float | None:
    """Every ``key: value`` line of the report (one without a value, or ``None``, skipped)
    read by :func:`_read_line`; returns the number of requests, if a line gives it."""
    requests: float | None = None
    for index, line in enumerate(lines):
        key, sep, rest = line.partition(":")
        key, rest = key.strip(), rest.strip()
        if not sep or not rest or rest.lower() == "none":
            continue
        requests = _read_line(key, rest, f"{name}:{index + 1}", values, settings, requests)
    return requests


def _read_line(key: str, rest: str, where: str, values: dict[str, str | int | float | None],
               settings: dict[str, float], requests: float | None) -> float | None:
    """One ``key: value`` line of the report into ``values`` (the model, a figure of
    :data:`TRTLLM_KEYS`) or ``settings`` (:data:`TRTLLM_SETTINGS`, a percentage as a
    fraction); returns the number of requests, read from its line or as it was."""
    if key == "Model":
        values["model"] = rest
    elif key == "Number of requests":
        return float(checked_number(rest, key, where, False))
    elif key in TRTLLM_KEYS:
        field_name = TRTLLM_KEYS[key]
        values[field_name] = checked_number(rest.replace(",", ""), key, where,
                                            field_name in INT_FIELDS)
    elif key in TRTLLM_SETTINGS:
        number = checked_number(rest.rstrip("%"), key, where, False)
        settings[TRTLLM_SETTINGS[key]] = (number / 100 if rest.endswith("%")
                                          else float(number))
    return requests
