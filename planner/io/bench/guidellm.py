"""GuideLLM's benchmarks report (``guidellm-json``, ``guidellm benchmark --output-path``): one
run per entry of ``benchmarks``, its mode from the strategy that drove it.
"""

from __future__ import annotations

from typing import Any

from planner.io.bench.records import (
    CSV_HEADER,
    BenchFileError,
    RunRecord,
    checked_number,
    json_value,
)


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
    data = json_value(text, name)
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
        values = _metric_values(metrics, where)
        values.update(_strategy_fields(bench, where))
        worker = bench.get("worker")
        if isinstance(worker, dict) and isinstance(worker.get("backend_model"), str):
            values["model"] = worker["backend_model"]
        records.append(RunRecord(f"{name}:1#benchmarks[{i}]", "guidellm-json", values))
    return records


def _metric_values(metrics: dict[str, Any], where: str) -> dict[str, str | int | float | None]:
    """A record's fields from a benchmark's ``metrics`` (:data:`GUIDELLM_METRICS`), every
    other field ``None``; refused without an output throughput."""
    values: dict[str, str | int | float | None] = dict.fromkeys(CSV_HEADER)
    for key, stat, field_name, scale in GUIDELLM_METRICS:
        raw = _stat(metrics, key, stat)
        if raw is not None:
            values[field_name] = float(checked_number(str(raw), f"{key}.{stat}", where,
                                                      False)) * scale
    if values["output_tokens_per_s"] is None:
        raise BenchFileError(f"{where}: no output_tokens_per_second.successful.mean")
    return values


def _strategy_fields(bench: dict[str, Any], where: str) -> dict[str, str | int | float | None]:
    """The mode (and its clients or rate) of a benchmark's strategy (``config.strategy``, else
    ``args.strategy``): synchronous = single, concurrent = ``streams`` clients, constant or
    poisson = open loop at ``rate``, throughput = burst; nothing for another strategy."""
    strategy: object = None
    for holder in ("args", "config"):
        section = bench.get(holder)
        if isinstance(section, dict) and isinstance(section.get("strategy"), dict):
            strategy = section["strategy"]
    if not isinstance(strategy, dict):
        return {}
    kind = strategy.get("type_")
    if kind == "synchronous":
        return {"mode": "single", "concurrency": 1}
    if kind == "concurrent":
        return {"concurrency": checked_number(str(strategy.get("streams")), "strategy.streams",
                                              where, True), "mode": "concurrency"}
    if kind in ("constant", "poisson"):
        return {"request_rate": checked_number(str(strategy.get("rate")), "strategy.rate",
                                               where, False), "mode": "rate"}
    if kind == "throughput":
        return {"mode": "burst"}
    return {}
