"""The capacity verdict: the figures every screen leads with, in one place.

A planner asking "does this deployment carry my load within my SLO, and if not, what does?"
must get one answer whichever screen they read: ``planner estimate`` and ``scenario show``
text, their ``--json``, ``scenario list``, sweeps and solve, the grid's pinned columns, the
details pane and the UI's compare (issue 24). This module says which columns make that
answer (:data:`VERDICT`), when it applies (:func:`applies`), what state a row is in
(:func:`state`: it does not fit, its queue is saturated, it meets or misses the SLO) and how
each figure shows in text (:func:`figure`) and in JSON (:func:`json_outputs`). Every screen
calls these; none re-derives them. The figures themselves are the formula columns of
:mod:`planner.formulas.slo` and :mod:`planner.formulas.serving` (``saturated`` included),
so the workbook computes the same values.

Pure Python over the output dicts; no rich, no Textual, no numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from planner.compute.outputs import format_value
from planner.core.units import fmt_usd

if TYPE_CHECKING:
    from planner.spec.gpu import GpuSpec

VERDICT: tuple[str, ...] = (
    "meets_slo", "gpus_needed", "replicas_needed", "cost_usd_per_month_needed",
    "ttft_p50_s", "ttft_p99_s", "tpot_mean_s", "utilization", "saturation_requests_per_s")
"""The verdict's columns, in the order every screen shows them: meets the SLO, the GPUs and
replicas that carry the target rate within it and their monthly cost, TTFT p50/p99 and TPOT
at the offered load (the deployment as configured), its utilisation and saturation rate."""

SIZING: tuple[str, ...] = ("gpus_needed", "replicas_needed", "cost_usd_per_month_needed")
"""Verdict columns that size a deployment for ``target_requests_per_s``: they mean nothing
without a target rate, or when no deployment of this shape can start."""

AT_LOAD: tuple[str, ...] = ("ttft_p50_s", "ttft_p99_s", "tpot_mean_s", "utilization")
"""Verdict columns that describe the configured deployment at the offered load."""

SATURATED_NULL: tuple[str, ...] = (
    "queue_wait_mean_s", "queue_wait_p50_s", "queue_wait_p90_s", "queue_wait_p99_s",
    "ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "ttft_slo_percentile_s",
    "e2e_mean_s",
    # the disaggregated deployment's waits and latencies (planner.formulas.disagg)
    "prefill_queue_wait_mean_s", "decode_slot_wait_s", "disagg_ttft_mean_s",
    "disagg_ttft_p50_s", "disagg_ttft_p90_s", "disagg_ttft_p99_s")
"""Latencies with a queue wait in them: where ``saturated`` holds they are the queueing
formulas' cap, not a latency, so JSON gives ``null`` and text says "saturated"."""

IDLE_BOUNDS: tuple[str, ...] = ("ttft_s", "tpot_s", "e2e_latency_s", "throughput_tokens_per_s",
                                "requests_per_s")
"""The roofline figures of one request on an idle server: shown below the verdict, labelled
as lower bounds."""

SATURATED = "saturated"
DOES_NOT_FIT = "does not fit"
UNREACHABLE = "SLO unreachable"
NO_TARGET = "no target"
MEETS = "meets SLO"
MISSES = "misses SLO"
STATES = (DOES_NOT_FIT, SATURATED, MISSES, MEETS)
"""What a row can be, worst first."""

VERDICT_LABELS: dict[str, str] = {
    "meets_slo": "meets SLO",
    "gpus_needed": "GPUs needed for the target",
    "replicas_needed": "replicas needed",
    "cost_usd_per_month_needed": "cost of the GPUs needed",
    "ttft_p50_s": "TTFT p50 at the load",
    "ttft_p99_s": "TTFT p99 at the load",
    "tpot_mean_s": "TPOT at the load",
    "utilization": "utilisation",
    "saturation_requests_per_s": "saturation rate",
}
"""The verdict's labels in text (the grid uses the columns' registered labels)."""


def applies(inputs: Mapping[str, Any]) -> bool:
    """Whether a scenario has a verdict: it names a serving engine, a target rate or an
    SLO. A roofline scenario with none of them is the idle-server estimate alone."""
    return (str(inputs.get("engine", "roofline")) != "roofline"
            or bool(inputs.get("target_requests_per_s"))
            or bool(inputs.get("slo_ttft_s")) or bool(inputs.get("slo_tpot_s")))


def _flag(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return bool(value)


def fits(outputs: Mapping[str, Any]) -> bool:
    """One memory accounting per engine: the engine's own (``engine_fits``, which is
    ``fits`` for roofline) where it was computed, else the roofline's ``fits``."""
    if "engine_fits" in outputs:
        return _flag(outputs["engine_fits"])
    return _flag(outputs.get("fits", True))


def is_saturated(outputs: Mapping[str, Any]) -> bool:
    """The ``saturated`` column of the row (false where it was not computed)."""
    return _flag(outputs.get("saturated"))


def state(outputs: Mapping[str, Any]) -> str:
    """The row's state, one of :data:`STATES`: it does not fit, its queue is saturated, it
    misses or it meets the SLO."""
    if not fits(outputs):
        return DOES_NOT_FIT
    if is_saturated(outputs):
        return SATURATED
    return MEETS if _flag(outputs.get("meets_slo")) else MISSES


def usable(outputs: Mapping[str, Any]) -> bool:
    """Whether the row is a deployment worth ranking by cost: it fits and is not saturated.
    Rows that are not are sorted last by cost (:func:`cost_rank`)."""
    return fits(outputs) and not is_saturated(outputs)


def cost_rank(outputs: Mapping[str, Any], cost: float) -> tuple[int, float]:
    """Sort key for a cost column: usable rows by cost, then rows that do not fit or are
    saturated (their cost buys nothing), in their cost order."""
    return (0 if usable(outputs) else 1, cost)


COST_COLUMNS = frozenset({"cost_usd_per_hour", "cost_usd_per_month",
                          "cost_usd_per_month_needed", "cost_usd_per_million_output_tokens",
                          "cost_usd_per_million_input_tokens"})
"""Columns sorted with :func:`cost_rank` ("cheapest" never ranks a deployment that can't
serve)."""


def _sizing_state(outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> str | None:
    """The state a sizing figure shows: no target rate, does not fit, or no replica count
    within the SLO; ``None`` for its number."""
    if not inputs.get("target_requests_per_s"):
        return NO_TARGET
    if not fits(outputs):
        return DOES_NOT_FIT
    if not outputs.get("replicas_needed"):
        return UNREACHABLE
    return None


def masked(name: str, outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> str | None:
    """The state a figure shows instead of its number, or ``None`` for its number: queue
    latencies of a saturated row are "saturated"; the sizing of a row without a target rate
    is "no target", of a row that does not fit "does not fit", and of one no replica count
    can bring within the SLO "SLO unreachable"; the load figures of a row that does not fit
    are "does not fit"."""
    if name in SIZING:
        return _sizing_state(outputs, inputs)
    if name in SATURATED_NULL or name in AT_LOAD or name == "meets_slo":
        if not fits(outputs):
            return DOES_NOT_FIT
        if name in SATURATED_NULL and is_saturated(outputs):
            return SATURATED
    return None


MASKED_COLUMNS = frozenset({*SIZING, *SATURATED_NULL, *AT_LOAD, "meets_slo"})
"""Columns :func:`masked` may show as a state."""

STATE_INPUTS = ("engine_fits", "saturated", "replicas_needed")
"""The outputs :func:`masked` reads (besides ``target_requests_per_s``, an input)."""


def masked_column(name: str, engine_fits: Any, saturated: Any, replicas_needed: Any,
                  target_requests_per_s: Any) -> Any:
    """:func:`masked` over whole columns (numpy arrays, one per argument): an object array of
    the state each row shows instead of its number, ``None`` where it shows the number. The
    same rules, row for row (``tests/compute/test_verdict.py`` checks both agree)."""
    # lazy: numpy, only for a column of rows (a sweep)
    import numpy as np

    fit = np.asarray(engine_fits, dtype=bool)
    n = fit.shape[0]
    out = np.full(n, None, dtype=object)
    if name in SIZING:
        replicas = np.broadcast_to(np.asarray(replicas_needed, dtype=float), (n,))
        target = np.broadcast_to(np.asarray(target_requests_per_s, dtype=float), (n,))
        out[replicas == 0] = UNREACHABLE
        out[~fit] = DOES_NOT_FIT
        out[target == 0] = NO_TARGET
        return out
    if name in SATURATED_NULL:
        out[np.broadcast_to(np.asarray(saturated, dtype=bool), (n,))] = SATURATED
    if name in MASKED_COLUMNS:
        out[~fit] = DOES_NOT_FIT
    return out


def figure(name: str, outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> str:
    """A verdict figure as text: its state (:func:`masked`) or its value with its unit."""
    shown = masked(name, outputs, inputs)
    if shown is not None:
        return shown
    value = outputs.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if name == "meets_slo":
        return "yes" if value else "no"
    if name == "utilization":
        return f"{value:.0%}"
    return format_value(name, value)


def headline(outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> str:
    """One line: the state of the deployment as configured and what the target needs, e.g.
    ``saturated on 4 GPUs: needs 16 GPUs (4 replicas), $29,200.00/month``; a disaggregated
    deployment counts both pools' GPUs and sizes in workers (``needs 4 GPUs (1 prefill + 1
    decode workers)``)."""
    pooled = inputs.get("serving_mode") == "disaggregated" and "deployment_gpus" in outputs
    held = int(outputs["deployment_gpus"]) if pooled else inputs.get("gpus", 1)
    now = f"{state(outputs)} on {held:,} GPUs"
    if state(outputs) == DOES_NOT_FIT:
        return f"{now} (TP {inputs.get('tp', 1)}): no replica count of this shape fits"
    if not inputs.get("target_requests_per_s"):
        return now
    sizing = figure("gpus_needed", outputs, inputs)
    if masked("gpus_needed", outputs, inputs) is None:
        count = (f"{int(outputs['disagg_prefill_workers_needed']):,} prefill + "
                 f"{int(outputs['disagg_decode_workers_needed']):,} decode workers"
                 if pooled and "disagg_prefill_workers_needed" in outputs
                 else f"{outputs['replicas_needed']:,} replicas")
        sizing = (f"needs {outputs['gpus_needed']:,} GPUs ({count}), "
                  f"{figure('cost_usd_per_month_needed', outputs, inputs)}")
    return f"{now}: {sizing}"


def rows(outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The verdict as (label, text) rows, the state first: what the CLI text and the
    details pane print above everything else."""
    out = [("verdict", headline(outputs, inputs))]
    out += [(VERDICT_LABELS[name], figure(name, outputs, inputs)) for name in VERDICT]
    return out


def json_outputs(outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """``outputs`` as scripts read them: queue latencies ``null`` where the row is
    saturated, sizing figures ``null`` where they are a state (no target, does not fit,
    unreachable); ``saturated`` stays, true or false."""
    out = dict(outputs)
    for name in (*SATURATED_NULL, *SIZING):
        if name in out and masked(name, outputs, inputs) not in (None, NO_TARGET):
            out[name] = None
    return out


def json_null_rows(name: str, columns: Mapping[str, Any],
                   target_requests_per_s: Any) -> Any:
    """:func:`json_outputs` over whole columns: a boolean array of the rows whose ``name``
    JSON gives as ``null`` (its figure is a state other than "no target",
    :func:`masked_column`), or ``None`` where no row is (or ``name`` is never masked, or
    ``columns`` lack the state inputs). ``columns``: output arrays of one kind's rows;
    ``target_requests_per_s``: each row's input."""
    if name not in (*SATURATED_NULL, *SIZING) or name not in columns:
        return None
    if not all(n in columns for n in STATE_INPUTS):
        return None
    state = masked_column(name, columns["engine_fits"], columns["saturated"],
                          columns["replicas_needed"], target_requests_per_s)
    hit = (state != None) & (state != NO_TARGET)  # noqa: E711 (elementwise over objects)
    return hit if hit.any() else None


LIST_HEADERS: tuple[str, ...] = ("SLO verdict", "GPUs needed", "USD/month needed")
"""The verdict's columns in ``scenario list`` (beside fits; the idle-server TTFT and TPOT
follow, headed as such)."""


def list_cells(outputs: Mapping[str, Any], inputs: Mapping[str, Any]) -> tuple[str, str, str]:
    """A ``scenario list`` row's verdict cells: the state, the GPUs needed and their monthly
    cost (each a dash where the scenario has no verdict, :func:`applies`)."""
    if not applies(inputs):
        return ("–", "–", "–")
    blocked = masked("gpus_needed", outputs, inputs)
    if blocked is not None:
        return (state(outputs), blocked, blocked)
    return (state(outputs), f"{outputs['gpus_needed']:,}",
            fmt_usd(outputs["cost_usd_per_month_needed"]))


def gpu_measured(gpu: GpuSpec) -> bool:
    """Whether a GPU's serving efficiencies (matmul and bandwidth share) are measured figures
    of its catalog entry, not the planner's defaults: estimates on a part without them are
    less sure, and every screen that ranks or shows GPUs says so."""
    return gpu.matmul_efficiency > 0 and gpu.bandwidth_efficiency > 0


UNMEASURED_NOTE = "serving efficiencies not measured: planner defaults"
"""What a flag on an unmeasured GPU means, in words."""
