"""SGLang's ``python -m sglang.bench_serving`` results: it prints vLLM's ``Serving Benchmark
Result`` block (``sglang-text``) with a few lines renamed (:data:`SGLANG_ALIASES`) and a few
more (``Backend:``, ``Input token throughput``, ``E2E Latency``: :func:`is_sglang`), and its
``--output-file`` appends one JSON object per run with vLLM's key names and
``"backend": "sglang"`` (``sglang-json``). Both are read by :mod:`planner.io.bench.vllm`'s
parsers; this module holds what tells SGLang apart.
"""

from __future__ import annotations

SGLANG_ALIASES: dict[str, str] = {
    "Traffic request rate": "Request rate configured (RPS)",
    "Max request concurrency": "Maximum request concurrency",
    "Max reqeuest concurrency": "Maximum request concurrency",  # sic, SGLang 0.4 prints this
}
"""``sglang.bench_serving`` line names that differ from vLLM's, mapped to vLLM's."""


def is_sglang(lines: list[str]) -> bool:
    """Whether pasted ``Serving Benchmark Result`` output is SGLang's (lines vLLM does not
    print)."""
    return any(line.startswith("Backend:") or "E2E Latency" in line
               or line.startswith("Input token throughput") for line in lines)


def json_format(data: dict[str, object]) -> str:
    """``sglang-json`` for a result object SGLang wrote (its ``backend`` starts with
    ``sglang``), else ``vllm-json``."""
    backend = str(data.get("backend") or "")
    return "sglang-json" if backend.startswith("sglang") else "vllm-json"
