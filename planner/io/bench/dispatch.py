"""Which parser reads a benchmark result file, told by content, not by file name:

* ``csv``: the documented generic CSV, exact header ``CSV_HEADER``, one row per run
  (:mod:`.generic_csv`);
* ``vllm-text``: pasted ``vllm bench serve`` output, one run per ``Serving Benchmark Result``
  block; ``vllm-json``: its ``--save-result`` JSON (:mod:`.vllm`);
* ``sglang-text``: ``python -m sglang.bench_serving`` output (same block title as vLLM, told apart
  by its ``Backend:``, ``Input token throughput`` or ``E2E Latency`` lines); ``sglang-json``: its
  ``--output-file`` JSON lines (one run per line, vLLM's key names) (:mod:`.sglang`);
* ``trtllm-text``: ``trtllm-bench throughput`` report (``PERFORMANCE OVERVIEW`` section)
  (:mod:`.trtllm`);
* ``guidellm-json``: a GuideLLM benchmarks report (``{"benchmarks": [...]}``), one run each
  (:mod:`.guidellm`).

Every record is checked (:func:`planner.io.bench.records.check_record`) before it is returned.
"""

from __future__ import annotations

import json
from pathlib import Path

from planner.io.bench.generic_csv import parse_csv
from planner.io.bench.guidellm import parse_guidellm
from planner.io.bench.records import (
    MAX_JSON_DEPTH,
    BenchFileError,
    RunRecord,
    check_record,
    json_depth,
    json_value,
    read_text,
)
from planner.io.bench.trtllm import parse_trtllm
from planner.io.bench.vllm import parse_jsonl, parse_vllm_json, parse_vllm_summary

FORMATS = ("csv", "vllm-text", "vllm-json", "sglang-text", "sglang-json", "trtllm-text",
           "guidellm-json")
"""Every format :func:`parse_file` reads."""


def _several_objects(text: str) -> bool:
    """Whether ``text`` is JSON lines: a first object followed by more data."""
    if json_depth(text) > MAX_JSON_DEPTH:
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


def _parse_text(text: str, name: str) -> list[RunRecord]:
    """The records of ``text`` by the parser its content calls for."""
    stripped = text.lstrip()
    first = stripped.splitlines()[0].strip() if stripped else ""
    if not stripped:
        raise BenchFileError(f"{name}:1: the file is empty")
    if first.startswith("model,") or first.replace(" ", "").startswith("model,gpu"):
        return parse_csv(text, name)
    if stripped.startswith("{") and _several_objects(stripped):
        return parse_jsonl(text, name)
    if stripped.startswith(("{", "[")):
        return _parse_json(text, name)
    if "PERFORMANCE OVERVIEW" in text:
        return parse_trtllm(text, name)
    if "Serving Benchmark Result" in text:
        return parse_vllm_summary(text, name)
    raise BenchFileError(f"{name}:1: not a benchmark result this planner reads (expected the "
                         "generic CSV header, vllm/SGLang 'Serving Benchmark Result' output, "
                         "trtllm-bench 'PERFORMANCE OVERVIEW', vllm --save-result JSON or a "
                         "GuideLLM report)")


def _parse_json(text: str, name: str) -> list[RunRecord]:
    """A JSON file: a GuideLLM report (``benchmarks``) or a vllm bench serve result
    (``output_throughput``); anything else refused."""
    data = json_value(text, name)
    if isinstance(data, dict) and "benchmarks" in data:
        return parse_guidellm(text, name)
    if isinstance(data, dict) and "output_throughput" in data:
        return parse_vllm_json(text, name)
    raise BenchFileError(f"{name}:1: JSON that is neither a vllm bench serve result (no "
                         "output_throughput) nor a GuideLLM report (no benchmarks)")


def parse_file(path: Path) -> list[RunRecord]:
    """Records of one benchmark file (size, binary and encoding checked first)."""
    return parse_text(read_text(path), str(path))
