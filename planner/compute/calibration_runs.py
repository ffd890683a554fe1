"""Measured benchmark runs (:class:`Run`) as scenario rows and the figures each is scored on.

The mapping of a run to a scenario, and which figures are scored in which mode, is in
:mod:`planner.compute.calibration`'s docstring; :func:`run_row` is that mapping for one run and
:func:`run_table` for many (one scenario table, the runs that cannot be scored set aside with
the reason).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.compute.inputs import INFERENCE_INPUTS

METRICS: tuple[str, ...] = ("throughput", "ttft", "tpot")


STEADY_MODES = ("concurrency", "single", "rate")


@dataclass(frozen=True, slots=True)
class Run:
    """One measured run as the fit sees it (``None`` = unknown)."""

    id: int
    model: str
    gpu: str
    values: Mapping[str, Any]
    settings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunTable:
    """Scenario rows of the scorable runs and the figures to compare.

    ``pairs`` holds one ``(row, metric, measured)`` per scored figure (measured in tokens/s or
    seconds); ``skipped`` the runs that could not be scored, with the reason."""

    runs: list[Run]
    table: dict[str, Any]
    pairs: list[tuple[int, str, float]]
    skipped: list[tuple[int, str]]


def _round_tokens(value: Any) -> int | None:
    return None if value is None else max(1, round(float(value)))


def run_row(run: Run) -> tuple[dict[str, Any] | None, list[tuple[str, float]], str]:
    """The scenario inputs of one run, its scored figures, and why not when it cannot be
    scored (see the module docstring)."""
    v = run.values
    why = _unscorable(v)
    if why:
        return None, [], why
    prompt, output = _round_tokens(v.get("input_tokens")), _round_tokens(v.get("output_tokens"))
    mode = v.get("mode")
    tp, pp = int(v.get("tp") or 1), int(v.get("pp") or 1)
    row: dict[str, Any] = {
        "model": run.model, "gpu": run.gpu, "engine": v["engine"], "tp": tp, "pp": pp,
        "gpus": int(v.get("gpus") or tp * pp), "prompt_tokens": prompt,
        "output_tokens": output, "concurrency": 0, "target_requests_per_s": 0.0}
    for name in ("weight_dtype", "kv_dtype"):
        if v.get(name) is not None:
            row[name] = v[name]
    load, why = _load(mode, v)
    if why:
        return None, [], why
    row.update(load)
    row.update(run.settings)
    pairs = _scored_figures(mode, v)
    if any(value <= 0 for _, value in pairs):
        return None, [], "a measured figure is 0"
    return row, pairs, ""


def _unscorable(v: Mapping[str, Any]) -> str:
    """Why a run cannot be scored whatever its mode ('' when it can): no engine, no token
    counts, or neither a throughput nor (in a steady-state mode) a latency measured."""
    if v.get("engine") is None:
        return "engine unknown"
    if _round_tokens(v.get("input_tokens")) is None or _round_tokens(
            v.get("output_tokens")) is None:
        return "input or output tokens unknown"
    mode = v.get("mode")
    latency_only = mode in STEADY_MODES and (v.get("ttft_mean_ms") or v.get("tpot_mean_ms"))
    if v.get("output_tokens_per_s") is None and not latency_only:
        return "no measured throughput"
    return ""


def _load(mode: Any, v: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The load inputs of a run's mode (``concurrency`` clients or a
    ``target_requests_per_s``; offline: neither), or why the mode cannot be scored."""
    if mode == "burst":
        if not v.get("num_requests"):
            return {}, "burst with an unknown number of requests"
        return {"concurrency": int(v["num_requests"])}, ""
    if mode in ("concurrency", "single"):
        return {"concurrency": int(v.get("concurrency") or 1)}, ""
    if mode == "rate":
        if not v.get("request_rate"):
            return {}, "rate mode with an unknown request rate"
        return {"target_requests_per_s": float(v["request_rate"])}, ""
    if mode != "offline":
        return {}, f"mode {mode!r} unknown"
    return {}, ""


def _scored_figures(mode: Any, v: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(metric, measured) of a run: its output tokens/s when measured, and in the
    steady-state modes its mean TTFT and TPOT in seconds (a steady-state run may publish
    latencies only: AIC silicon rows)."""
    pairs = ([] if v.get("output_tokens_per_s") is None
             else [("throughput", float(v["output_tokens_per_s"]))])
    if mode in STEADY_MODES:
        if v.get("ttft_mean_ms"):
            pairs.append(("ttft", float(v["ttft_mean_ms"]) / 1e3))
        if v.get("tpot_mean_ms"):
            pairs.append(("tpot", float(v["tpot_mean_ms"]) / 1e3))
    return pairs


def run_table(runs: Sequence[Run]) -> RunTable:
    """:class:`RunTable` of ``runs``: one scenario row per scorable run."""
    rows: list[dict[str, Any]] = []
    kept: list[Run] = []
    pairs: list[tuple[int, str, float]] = []
    skipped: list[tuple[int, str]] = []
    for run in runs:
        row, figures, why = run_row(run)
        if row is None:
            skipped.append((run.id, why))
            continue
        pairs += [(len(rows), metric, value) for metric, value in figures]
        rows.append(row)
        kept.append(run)
    return RunTable(kept, _columns(rows), pairs, skipped)


def _columns(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The rows as columns: every key any row has, a row without it taking the input's
    default; texts and choices as object arrays, flags as bool, numbers as float64."""
    names = sorted({k for r in rows for k in r})
    defaults = {c.name: c.default for c in INFERENCE_INPUTS}
    kinds = {c.name: c.kind for c in INFERENCE_INPUTS}
    return {k: np.array([r.get(k, defaults.get(k)) for r in rows],
                        dtype=object if k in _TEXT or kinds.get(k) == "choice"
                        else bool if kinds.get(k) == "bool" else np.float64) for k in names}


_TEXT = frozenset({"model", "gpu", "engine", "weight_dtype", "kv_dtype"})
