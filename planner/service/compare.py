"""Side-by-side comparison of scenarios and the fleet roll-up: pure functions over scenarios
and their evaluated outputs (the workspace supplies both)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from planner.compute import verdict
from planner.core.errors import ValidationError
from planner.spec.domain import Scenario

COMPARE_OUTPUTS = (
    "weights_bytes_per_gpu", "kv_budget_bytes", "kv_headroom_bytes", "fits",
    "max_concurrent_sequences", "max_context_tokens", "ttft_s", "tpot_s", "e2e_latency_s",
    "throughput_tokens_per_s", "requests_per_s", "cost_usd_per_hour", "cost_usd_per_month",
    "cost_usd_per_million_input_tokens", "cost_usd_per_million_output_tokens",
    "train_flops", "train_time_s", "gpu_hours", "train_cost_usd", "trainable_params",
    "train_memory_bytes_per_gpu", "train_fits",
)
DISAGG_OUTPUTS = (
    "deployment_gpus", "prefill_gpus", "decode_gpus", "ttft_mean_s", "tpot_mean_s",
    "output_tokens_per_s", "saturation_requests_per_s", "prefill_utilization",
    "decode_utilization", "kv_transfer_s",
)
"""Outputs compared where any scenario is disaggregated (issue 25): both pools' GPUs, the
serving figures under load (each scenario's own: aggregated or disaggregated) and the pools'
utilization."""


def _disaggregated(sc: Scenario) -> bool:
    return sc.kind == "inference" and sc.inputs.get("serving_mode") == "disaggregated"


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One column across scenarios, with deltas against the first scenario."""

    column: str
    values: list[Any]
    deltas: list[float | None]
    """value - first (None for non-numbers)."""
    ratios: list[float | None]
    """(value - first) / |first| (None when first is 0 or not a number)."""


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


VERDICT_ROW = "verdict"
"""The comparison's first row where a scenario has a verdict: its state and sizing
(:func:`planner.compute.verdict.headline`)."""


def _shown(column: str, record: dict[str, Any], sc: Scenario, outputs: Mapping[str, Any],
           judged: bool) -> Any:
    """A compared value: the record's, or the verdict's state where the figure is one
    ("saturated", "does not fit"), a dash for a verdict figure of a scenario without one."""
    if column == VERDICT_ROW:
        return verdict.headline(outputs, sc.inputs) if judged else "–"
    if sc.kind == "inference" and column in verdict.VERDICT and not judged:
        return "–"
    if sc.kind == "inference" and column in verdict.MASKED_COLUMNS:
        state = verdict.masked(column, outputs, sc.inputs)
        if state is not None:
            return state
    return record.get(column)


def compare(scenarios: Sequence[Scenario], outputs: Sequence[Mapping[str, Any]],
            columns: Sequence[str] | None = None) -> list[CompareRow]:
    """Rows for the inputs that differ, then the key outputs (or ``columns``); where any
    scenario has a verdict (an engine, a target rate or an SLO), the verdict's rows first
    (:data:`planner.compute.verdict.VERDICT`), states in place of figures that are states."""
    if len(scenarios) < 2:
        raise ValidationError("scenarios", "compare needs at least two scenarios")
    records = [{"model": s.model, "gpu": s.gpu, "kind": s.kind, **s.inputs, **o}
               for s, o in zip(scenarios, outputs, strict=True)]
    judged = [s.kind == "inference" and verdict.applies(s.inputs) for s in scenarios]
    if columns is None:
        columns = _default_columns(scenarios, records, any(judged))
    rows = []
    for column in columns:
        values = [_shown(column, r, s, o, judge) for r, s, o, judge
                  in zip(records, scenarios, outputs, judged, strict=True)]
        deltas, ratios = _changes(values)
        rows.append(CompareRow(column, values, deltas, ratios))
    return rows


def _default_columns(scenarios: Sequence[Scenario], records: Sequence[Mapping[str, Any]],
                     judged: bool) -> list[str]:
    """The verdict's rows (when any scenario is judged), the inputs that differ, then the key
    outputs any scenario has (the disaggregated ones first when a scenario is split)."""
    differing = [k for k in ("kind", "model", "gpu", *scenarios[0].inputs)
                 if len({repr(r.get(k)) for r in records}) > 1]
    shown = _present(COMPARE_OUTPUTS, records)
    if any(_disaggregated(s) for s in scenarios):
        shown = _present(DISAGG_OUTPUTS, records) + shown
    lead = [VERDICT_ROW, *verdict.VERDICT] if judged else []
    return [*lead, *differing, *shown]


def _present(columns: Sequence[str], records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``columns`` any record has, in their order."""
    return [c for c in columns if any(c in r for r in records)]


def _changes(values: Sequence[Any]) -> tuple[list[float | None], list[float | None]]:
    """Each value's difference from the first and that difference relative to the first's
    magnitude (None where a value or the first is not a number, or the first is 0)."""
    first = _number(values[0])
    deltas: list[float | None] = []
    ratios: list[float | None] = []
    for v in values:
        x = _number(v)
        deltas.append(None if x is None or first is None else x - first)
        ratios.append(None if x is None or not first else (x - first) / abs(first))
    return deltas, ratios


@dataclass(slots=True)
class FleetRollup:
    """Totals of one fleet's inference scenarios, and the scenarios that do not fit."""

    fleet: str
    gpus_by_type: dict[str, int] = field(default_factory=dict)
    cost_usd_per_hour: float = 0.0
    cost_usd_per_month: float = 0.0
    tokens_per_day: float = 0.0
    training_cost_usd: float = 0.0
    training_gpu_hours: float = 0.0
    not_fitting: list[tuple[str, float]] = field(default_factory=list)
    """(scenario, shortfall in bytes per GPU) of the counted scenarios."""
    scenarios: int = 0
    """Every scenario of the fleet, counted or not."""
    not_counted: list[str] = field(default_factory=list)
    """Options that are not chosen: shown, never added to the totals."""


def counted(scenarios: Sequence[Scenario]) -> list[int]:
    """Indices of the scenarios counted in roll-ups, the Summary, plans and cost totals: the
    chosen ones. Every scenario in no option group is chosen; of each group (a base and its
    options) exactly one is (:mod:`planner.service.options`), so alternatives are compared,
    never summed. The one place that rule lives."""
    return [i for i, s in enumerate(scenarios) if s.chosen]


def rollup(scenarios: Sequence[Scenario], outputs: Sequence[Mapping[str, Any]]
           ) -> list[FleetRollup]:
    """Per-fleet totals of the counted (chosen) scenarios (:func:`counted`): GPUs by type, USD
    per hour and month, tokens per day (inference scenarios, which run continuously); training
    cost and GPU-hours (one-off projects). Options not chosen are listed, not added."""
    if len(scenarios) != len(outputs):
        raise ValueError(f"{len(scenarios)} scenarios but {len(outputs)} outputs")
    fleets: dict[str, FleetRollup] = {}
    gpus: dict[str, dict[str, int]] = defaultdict(dict)
    keep = set(counted(scenarios))
    for i, (s, o) in enumerate(zip(scenarios, outputs, strict=True)):
        f = fleets.setdefault(s.fleet, FleetRollup(s.fleet))
        f.scenarios += 1
        if i not in keep:
            f.not_counted.append(s.name)
            continue
        for gpu, n in _gpus_by_type(s, o):
            gpus[s.fleet][gpu] = gpus[s.fleet].get(gpu, 0) + n
        _add(f, s, o)
    for name, f in fleets.items():
        f.gpus_by_type = dict(sorted(gpus[name].items()))
    return [fleets[k] for k in sorted(fleets)]


def _gpus_by_type(s: Scenario, o: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(GPU type, GPUs) a counted scenario adds to its fleet: an inference deployment's
    configured GPUs, or each pool of a disaggregated one on its own type; none for training."""
    if _disaggregated(s):
        decode = s.inputs.get("decode_gpu", "same")
        return [(s.gpu, int(o["prefill_gpus"])),
                (s.gpu if decode == "same" else decode, int(o["decode_gpus"]))]
    if s.kind == "inference":
        return [(s.gpu, int(s.inputs["gpus"]))]
    return []


def _add(f: FleetRollup, s: Scenario, o: Mapping[str, Any]) -> None:
    """Add a counted scenario's cost to its fleet's totals: an inference scenario's USD per
    hour and month and tokens per day, a training one's USD and GPU-hours; one that does not
    fit is listed with its shortfall per GPU in bytes."""
    if s.kind == "inference":
        f.cost_usd_per_hour += o["cost_usd_per_hour"]
        f.cost_usd_per_month += o["cost_usd_per_month"]
        f.tokens_per_day += o["tokens_per_day"]
        if not o["fits"]:
            f.not_fitting.append((s.name, o["shortfall_bytes"]))
        return
    f.training_cost_usd += o["train_cost_usd"]
    f.training_gpu_hours += o["gpu_hours"]
    if not o["train_fits"]:
        f.not_fitting.append((s.name, o["train_memory_bytes_per_gpu"]
                              - o.get("gpu_memory_bytes", 0)))


def option_group(scenarios: Sequence[Scenario], name: str) -> list[int]:
    """Indices of the option group of the scenario called ``name`` among ``scenarios`` (one
    fleet's): its base first, then the options by name. :class:`ValidationError` when there is
    no such scenario or it is in no group."""
    by_name = {s.name: i for i, s in enumerate(scenarios)}
    if name not in by_name:
        raise ValidationError("scenario", "names no scenario of the fleet; scenarios are "
                              + ", ".join(sorted(by_name)[:20]), value=name)
    base = scenarios[by_name[name]].option_of or name
    options = sorted((s.name, i) for i, s in enumerate(scenarios) if s.option_of == base)
    if not options:
        raise ValidationError("scenario", f"{name} is no one's option and has no options "
                              "(make one with `planner scenario option NAME --of BASE`)")
    return [by_name[base], *(i for _, i in options)]


@dataclass(frozen=True, slots=True)
class OptionRow:
    """One option of a group as ``compare --options`` and the UI show it."""

    name: str
    gpu: str
    """The GPU type; a disaggregated option's two pools (``2 × h100-sxm TP2 + 1 × h200
    TP2``)."""
    base: bool
    """The group's base scenario (the others are its options)."""
    chosen: bool
    """Counted in roll-ups and totals."""
    gpus: int
    """GPUs of the deployment as configured (what the roll-up adds; both pools'
    disaggregated)."""
    gpus_needed: int | None
    """GPUs that carry the target rate within the objectives (None: no target rate, or a
    state: it does not fit, no count meets the SLO; :func:`planner.compute.verdict.masked`)."""
    cost_usd_per_month: float | None
    """Monthly cost of the deployment as configured (None for training)."""
    cost_usd_per_million_output_tokens: float | None
    fits: bool
    meets_slo: bool | None
    """Carries its load within the TTFT/TPOT objectives (None for training)."""
    cheapest_meeting_slo: bool = False
    """The lowest monthly cost among the options that fit and meet the objectives."""


def _pools_text(s: Scenario, o: Mapping[str, Any]) -> str:
    """A disaggregated option's deployment as people write it, prefill pool + decode pool:
    ``2 × h100-sxm TP2 + 1 × h200 TP2`` (workers × GPU, TP per worker;
    :func:`planner.compute.disagg_sizing.pool_text`)."""
    # lazy: the sizing module (numpy, the table evaluator) only for a disaggregated option
    from planner.compute.disagg_sizing import pool_text

    decode = str(s.inputs.get("decode_gpu") or "same")
    tp = int(s.inputs.get("tp") or 1)  # a pool's TP 0 is the scenario's (disagg.*_effective)
    prefill_tp, decode_tp = (int(s.inputs.get(k) or 0) or tp for k in ("prefill_tp", "decode_tp"))
    return (pool_text(s.gpu, prefill_tp, int(o["prefill_workers_effective"])) + " + "
            + pool_text(s.gpu if decode == "same" else decode, decode_tp,
                        int(o["decode_workers_effective"])))


def options_table(scenarios: Sequence[Scenario], outputs: Sequence[Mapping[str, Any]]
                  ) -> list[OptionRow]:
    """An option group side by side (``scenarios``: base first, as :func:`option_group`
    orders them), the cheapest by ``cost_usd_per_month`` among those that fit and meet the
    SLO marked (ties: the first). Inference columns are None for training options."""
    rows = [_option_row(s, o, base=i == 0)
            for i, (s, o) in enumerate(zip(scenarios, outputs, strict=True))]
    meeting = [i for i, r in enumerate(rows) if r.fits and r.meets_slo]
    if meeting:
        best = min(meeting, key=lambda i: rows[i].cost_usd_per_month or 0.0)
        rows[best] = replace(rows[best], cheapest_meeting_slo=True)
    return rows


def _option_row(s: Scenario, o: Mapping[str, Any], *, base: bool) -> OptionRow:
    """One option's row: its deployment, and for inference its GPUs needed at the target
    rate (None without one, or where that is a state), cost and SLO verdict."""
    inference = s.kind == "inference"
    target = float(s.inputs.get("target_requests_per_s") or 0.0)
    per_mtok = _number(o.get("cost_usd_per_million_output_tokens")) if inference else None
    pooled = inference and s.inputs.get("serving_mode") == "disaggregated"
    return OptionRow(
        name=s.name, gpu=_pools_text(s, o) if pooled else s.gpu, base=base, chosen=s.chosen,
        gpus=int(o["deployment_gpus"]) if pooled else int(s.inputs["gpus"]),
        gpus_needed=int(o["gpus_needed"]) if inference and target > 0
        and verdict.masked("gpus_needed", o, s.inputs) is None else None,
        cost_usd_per_month=float(o["cost_usd_per_month"]) if inference else None,
        cost_usd_per_million_output_tokens=per_mtok,
        fits=bool(o["engine_fits"] if pooled else o["fits"] if inference
                  else o["train_fits"]),
        meets_slo=bool(o["meets_slo"]) if inference else None)
