"""What the UI shows for a scenario: grid cells and the details pane (memory bar, latency,
throughput, cost, and the explanation of the selected output). Pure functions over scenarios
and their outputs; no widgets."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from planner.domain import Scenario
from planner.sheet import verdict
from planner.sheet.outputs import column_label, format_value, output_columns

__all__ = ["format_value"]
from planner.sheet.table import inputs_of
from planner.units import fmt_bytes, fmt_bytes_gib, fmt_seconds, fmt_usd

KEY_OUTPUTS = {
    "inference": ("fits", *verdict.VERDICT, "saturated", "max_concurrent_sequences",
                  "max_context_tokens", "kv_headroom_bytes", "weights_bytes_per_gpu",
                  "engine_token_capacity", "ttft_s", "tpot_s", "e2e_latency_s",
                  "throughput_tokens_per_s", "cost_usd_per_hour", "cost_usd_per_month",
                  "cost_usd_per_million_output_tokens"),
    "training": ("train_fits", "trainable_params", "train_flops", "train_time_s", "gpu_hours",
                 "train_cost_usd", "train_memory_bytes_per_gpu", "tokens_for_usd"),
}
"""Output columns shown in the grid (the details pane and explain reach every output)."""

PINNED = {
    "inference": ("fits", *verdict.VERDICT),
    "training": ("train_fits", "train_time_s", "gpu_hours", "train_cost_usd"),
}
"""The verdicts shown right after the scenario name when the grid opens (``p`` pins or
unpins the output column under the cursor): for inference, fits and the capacity verdict of
:data:`planner.sheet.verdict.VERDICT`, the same fields every screen leads with."""

GROUPS = ("inputs", "memory", "latency", "cost")
"""Column groups, in grid order; ``g`` folds the group under the cursor into one column."""

OUTPUT_GROUP = {
    **dict.fromkeys(("fits", "max_concurrent_sequences", "max_context_tokens",
                     "kv_headroom_bytes", "weights_bytes_per_gpu", "engine_token_capacity",
                     "train_fits", "trainable_params", "train_memory_bytes_per_gpu"),
                    "memory"),
    **dict.fromkeys(("ttft_s", "tpot_s", "e2e_latency_s", "throughput_tokens_per_s",
                     "ttft_p50_s", "ttft_p99_s", "tpot_mean_s", "saturation_requests_per_s",
                     "meets_slo", "saturated", "utilization", "replicas_needed", "gpus_needed",
                     "train_flops", "train_time_s"), "latency"),
    **dict.fromkeys(("cost_usd_per_hour", "cost_usd_per_month", "cost_usd_per_month_needed",
                     "cost_usd_per_million_output_tokens", "gpu_hours", "train_cost_usd",
                     "tokens_for_usd"), "cost"),
}
"""The group of each grid output (inputs and model/GPU are the inputs group)."""

HEADER_HEIGHT = 3
"""Header lines: a label over up to two lines, then its unit."""


def header(label: str, unit: str) -> str:
    """A column header: the label wrapped to at most two lines, then ``[unit]`` (a blank
    line when it has none, or for a yes/no column)."""
    import textwrap

    lines = textwrap.wrap(label, max(10, len(label) // 2 + 4)) or [""]
    if len(lines) > 2:
        lines = [lines[0], " ".join(lines[1:])]
    lines += [""] * (2 - len(lines))
    return "\n".join([*lines, f"[{unit}]" if unit and unit != "bool" else ""])


def group_of(key: str, role: str) -> str:
    """The group a grid column belongs to ('' for the scenario name)."""
    if key == "name":
        return ""
    return OUTPUT_GROUP.get(key, "cost") if role == "output" else "inputs"


@cache
def grid_columns(kind: str, pinned: tuple[str, ...] | None = None,
                 folded: frozenset[str] = frozenset()) -> tuple[tuple[str, str, str], ...]:
    """(key, header, role) of every grid column: the scenario name, the ``pinned`` outputs
    (default :data:`PINNED`), then the groups in order (inputs: model, GPU and the inputs;
    memory, latency, cost: the other key outputs). A group in ``folded`` is one column
    ``group:NAME`` (role ``group``) instead. Headers are labels with units."""
    pinned = PINNED[kind] if pinned is None else pinned
    outputs = output_columns()
    meta = [("model", "model", ""), ("gpu", "GPU", "")]
    if kind == "training":
        meta.append(("lora_targets", "LoRA targets", ""))
    members: dict[str, list[tuple[str, str, str]]] = {g: [] for g in GROUPS}
    members["inputs"] = [(k, header(label, ""), "meta") for k, label, _ in meta]
    for c in inputs_of(kind):
        members["inputs"].append((c.name, header(c.label, c.measured_unit), "input"))
    for name in KEY_OUTPUTS[kind]:
        if name not in pinned:
            members[OUTPUT_GROUP.get(name, "cost")].append(
                (name, header(outputs[name].label, outputs[name].unit), "output"))
    cols = [("name", header("scenario", ""), "meta")]
    cols += [(n, header(outputs[n].label, outputs[n].unit), "output") for n in pinned]
    for group in GROUPS:
        if group in folded:
            cols.append((f"group:{group}", header(f"▸ {group}", "g unfolds"), "group"))
        else:
            cols += members[group]
    return tuple(cols)


WIDE = {"model": 22, "gpu": 12, "lora_targets": 14, "notes": 24}


def column_width(key: str, header: str) -> int:
    """A grid column's width before any value is seen: its header, or room for typical
    values."""
    return max(WIDE.get(key, 10), *(len(line) for line in header.split("\n")))


MEASURED_ROWS = 200
"""Rows whose every cell is measured for the column widths, besides each column's extremes."""


def column_widths(kind: str, rows: Sequence[tuple[Scenario, Mapping[str, Any]]],
                  columns: tuple[tuple[str, str, str], ...] | None = None, *,
                  rest: Sequence[Scenario] = (),
                  rest_outputs: Callable[[str], Sequence[Any]] | None = None,
                  rest_row: Callable[[int], Mapping[str, Any]] | None = None
                  ) -> dict[str, int]:
    """Each grid column's width, wide enough for its header and its values, so no number is
    cut (``1,000,000,00``, ``191.91 EFLO``). Every cell of the first :data:`MEASURED_ROWS`
    rows is measured, and for the others only the rows holding a column's largest and
    smallest value (the longest numbers), so a 5,000-row grid costs a few hundred rows.

    The rows past the first may also come as ``rest`` (scenarios) with ``rest_outputs``
    (output column → its values over ``rest``, read as a column, not row by row) and
    ``rest_row`` (position in ``rest`` → that row's outputs)."""
    columns = grid_columns(kind) if columns is None else columns
    widths = {key: column_width(key, text) for key, text, _role in columns}
    picked = list(rows[:MEASURED_ROWS])
    if rest_outputs is None or rest_row is None:
        tail = rows[MEASURED_ROWS:]
        rest = [sc for sc, _out in tail]
        rest_outputs = (lambda key: [out.get(key) for _sc, out in tail])  # noqa: E731
        rest_row = (lambda at: tail[at][1])  # noqa: E731
    if rest:
        picked += _extremes(columns, rest, rest_outputs, rest_row)
    for key, _header, role in columns:
        if key == "name" or role == "group":
            continue
        widest = max((cell_width(sc, out, key, role) for sc, out in picked), default=0)
        widths[key] = max(widths[key], widest)
    return widths


def _extremes(columns: tuple[tuple[str, str, str], ...], rest: Sequence[Scenario],
              rest_outputs: Callable[[str], Sequence[Any]],
              rest_row: Callable[[int], Mapping[str, Any]]
              ) -> list[tuple[Scenario, Mapping[str, Any]]]:
    """The rows of ``rest`` holding each numeric input or output column's smallest and
    largest value (the longest numbers); a text or missing column adds none."""
    inputs = [sc.inputs for sc in rest]
    picked: list[tuple[Scenario, Mapping[str, Any]]] = []
    for key, _header, role in columns:
        if role not in ("input", "output"):
            continue
        values = np.asarray([row.get(key) for row in inputs] if role == "input"
                            else rest_outputs(key))
        if values.dtype.kind not in "biuf":
            continue  # text or missing: the measured rows stand for the rest
        for at in (int(values.argmin()), int(values.argmax())):
            picked.append((rest[at], rest_row(at)))
    return picked


def cell_width(sc: Scenario, outputs: Mapping[str, Any], key: str, role: str) -> int:
    """How many columns one cell's text takes."""
    value = cell(sc, outputs, key, role)
    return len(value) if isinstance(value, str) else value.cell_len


def fits_of(kind: str, outputs: Mapping[str, Any]) -> bool:
    """Whether the scenario fits (inference: by its engine's own memory accounting,
    :func:`planner.sheet.verdict.fits`) or its training memory fits."""
    if kind == "inference":
        return verdict.fits(outputs)
    return bool(outputs.get("train_fits", True))


NEEDS_TARGET = frozenset({"gpus_for_target_rate", "replicas_needed", "gpus_needed",
                          "cost_usd_per_month_needed"})
"""Outputs sized for the target request rate: without one they are 0, drawn as "no target"."""


_UNMEASURED_GPUS: frozenset[str] = frozenset()
"""GPUs whose serving efficiencies are the planner's defaults, marked ``*`` in the grid."""


def set_unmeasured_gpus(names: frozenset[str]) -> None:
    """Say which GPUs the grid marks as unmeasured (the sheet, when the catalog loads)."""
    global _UNMEASURED_GPUS
    _UNMEASURED_GPUS = frozenset(names)


def cell(sc: Scenario, outputs: Mapping[str, Any], key: str, role: str) -> Any:
    """One grid cell: meta and inputs as plain text, outputs styled and with units."""
    if key == "name":
        return name_cell(sc, outputs)
    if role == "group":
        return Text("…", style="dim")
    if key == "lora_targets" and not sc.inputs.get("lora_rank"):
        return Text("– (rank 0)", style="dim")  # full training: no LoRA targets apply
    if key == "gpu" and sc.gpu in _UNMEASURED_GPUS:  # efficiencies are planner defaults
        return Text(f"{sc.gpu} *", style="yellow")
    if role == "meta":
        return str(getattr(sc, key))
    if role == "input":
        return input_text(sc.inputs[key])
    return output_cell(sc, outputs, key)


def name_cell(sc: Scenario, outputs: Mapping[str, Any]) -> Text:
    """The name cell: dim for an option not counted, ``✗`` in red when it does not fit, ``↳``
    (and ``✓`` when chosen) for an option of another row, ``≈`` when computed with a fitted
    calibration profile's figures."""
    text = Text(sc.name, style="" if sc.chosen else "dim")  # dim: an option not counted
    if not fits_of(sc.kind, outputs):
        text = Text("✗ " + sc.name, style="bold red" if sc.chosen else "red")
    if sc.option_of is not None:  # an option of another row: ↳, and ✓ when chosen
        text = Text("↳ ✓ " if sc.chosen else "↳ ", style="bold" if sc.chosen else "dim") \
            + text
    if outputs.get("calibration_profile"):  # computed with a fitted profile's figures
        text.append(" ≈", style="bold cyan")
    return text


def input_text(value: Any) -> str:
    """An input's cell text: yes/no, whole floats with one decimal under 10 and none above
    (thousands separated), integers separated, anything else as it is."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:,.1f}" if abs(value) < 10 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def output_cell(sc: Scenario, outputs: Mapping[str, Any], key: str) -> Text:
    """An output's cell: a dash when not computed or when it needs a target rate the
    scenario lacks, the verdict's state or figure for a verdict column, else the value with
    its unit (fits in green or red, a negative KV headroom in red)."""
    value = outputs.get(key)
    if value is None:
        return Text("–", style="dim")
    if key in NEEDS_TARGET and not sc.inputs.get("target_requests_per_s"):
        return Text("– no target", style="dim", justify="right")
    if sc.kind == "inference":
        state = verdict_cell(sc, outputs, key)
        if state is not None:
            return state
    shown = format_value(key, value)
    style = "italic cyan"
    if key in ("fits", "train_fits"):
        style = "bold green" if value else "bold red"
    elif key == "kv_headroom_bytes" and value < 0:
        style = "bold red"
    return Text(shown, style=style, justify="right")


STATE_STYLE = {verdict.SATURATED: "bold red", verdict.DOES_NOT_FIT: "bold red",
               verdict.UNREACHABLE: "red", verdict.NO_TARGET: "dim"}
"""How a state shown in place of a number is drawn."""


def verdict_cell(sc: Scenario, outputs: Mapping[str, Any], key: str) -> Text | None:
    """A verdict column's cell (:mod:`planner.sheet.verdict`): a dash where the scenario has
    no verdict, a state ("saturated", "does not fit") where the figure is one, the value as
    every screen shows it otherwise; ``None`` for a column that is no verdict's."""
    if key not in verdict.VERDICT and key not in verdict.SATURATED_NULL and key != "saturated":
        return None
    if not verdict.applies(sc.inputs):
        return Text("–", style="dim", justify="right")
    state = verdict.masked(key, outputs, sc.inputs)
    if state is not None:
        return Text(state, style=STATE_STYLE.get(state, "red"), justify="right")
    shown = verdict.figure(key, outputs, sc.inputs)
    style = "italic cyan"
    if key == "meets_slo":
        style = "bold green" if outputs.get("meets_slo") else "bold red"
    elif key == "saturated":
        style = "bold red" if outputs.get("saturated") else "italic cyan"
    return Text(shown, style=style, justify="right")


@cache
def roles(kind: str) -> dict[str, str]:
    """Column key → role (meta, input, output, group) of a kind's grid, in any layout."""
    every = {key: role for key, _header, role in grid_columns(kind)}
    every.update({f"group:{g}": "group" for g in GROUPS})
    return every


class GridRow(Mapping[Any, Any]):
    """One grid row: column key (or its text) to cell, formatted only when drawn. A 5,000-row
    grid builds 5,000 of these cheaply, and only the visible cells are ever formatted."""

    __slots__ = ("marked", "outputs", "sc")

    def __init__(self, sc: Scenario, outputs: Mapping[str, Any], marked: bool = False) -> None:
        self.sc, self.outputs, self.marked = sc, outputs, marked

    def __getitem__(self, key: Any) -> Any:
        name = getattr(key, "value", key)  # a DataTable ColumnKey or a plain str
        role = roles(self.sc.kind).get(name)
        if role is None:
            raise KeyError(key)
        value = cell(self.sc, self.outputs, name, role)
        text = Text(value) if isinstance(value, str) else value
        if name == "name" and self.marked:
            text = Text("● ", style="bold yellow") + text
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(roles(self.sc.kind))

    def __len__(self) -> int:
        return len(roles(self.sc.kind))


def _stacked_bar(parts: tuple[tuple[str, float, str], ...], total: float,
                 width: int) -> tuple[Text, Text]:
    """A bar of ``width`` cells split among ``parts`` (label, bytes, colour) in proportion to
    ``total`` bytes (the last part takes the cells left), and its legend in GiB."""
    bar, drawn = Text(), 0
    for i, (_, amount, colour) in enumerate(parts):
        n = round(width * amount / total) if i < len(parts) - 1 else max(0, width - drawn)
        n = min(n, width - drawn)
        bar.append("█" * n, style=colour)
        drawn += n
    legend = Text()
    for label, amount, colour in parts:
        legend.append("■ ", style=colour)
        legend.append(f"{label} {fmt_bytes_gib(amount)}  ")
    return bar, legend


def memory_bar(outputs: Mapping[str, Any], gpu_memory_bytes: float, width: int = 48) -> Text:
    """Weights on the GPU (not those offloaded to host memory) / KV in use / free headroom /
    reserve against one GPU's memory."""
    weights = max(0.0, outputs.get("weights_on_gpu_bytes_per_gpu",
                                   outputs["weights_bytes_per_gpu"]))
    reserve = max(0.0, outputs["reserve_bytes_per_gpu"])
    budget = max(0.0, outputs["kv_budget_bytes"])
    in_use = min(outputs["kv_in_use_bytes_per_gpu"], budget)
    free = max(0.0, budget - in_use)
    parts = (("weights", weights, "blue"), ("KV in use", in_use, "magenta"),
             ("free", free, "green"), ("reserve", reserve, "yellow"))
    total = max(gpu_memory_bytes, weights + in_use + free + reserve, 1.0)
    bar, legend = _stacked_bar(parts, total, width)
    if not outputs["fits"]:
        legend.append(f"\nshort {fmt_bytes_gib(outputs['shortfall_bytes'])} per GPU",
                      style="bold red")
    return Text.assemble(bar, "\n", legend)


def engine_memory_bar(outputs: Mapping[str, Any], gpu_memory_bytes: float,
                      width: int = 48) -> Text:
    """The engine's own memory accounting against one GPU (docs/serving.md): weights,
    activation peak and non-torch memory, the KV pool, and what is left; the roofline's
    reserve and KV budget are not shown beside it (one accounting per engine)."""
    weights = max(0.0, float(outputs["engine_weights_bytes_per_gpu"]))
    runtime = max(0.0, float(outputs["activation_peak_bytes"]) + float(
        outputs["non_torch_bytes"]))
    pool = max(0.0, float(outputs["engine_kv_bytes_per_gpu"]))
    used = max(float(outputs["engine_memory_used_bytes"]), weights + runtime + pool)
    free = max(0.0, gpu_memory_bytes - used)
    parts = (("weights", weights, "blue"), ("activations + runtime", runtime, "yellow"),
             ("KV pool", pool, "magenta"), ("free", free, "green"))
    total = max(gpu_memory_bytes, weights + runtime + pool + free, 1.0)
    bar, legend = _stacked_bar(parts, total, width)
    legend.append(f"\nKV token capacity {outputs['engine_token_capacity']:,} tokens per "
                  "replica")
    if not outputs["engine_fits"]:
        legend.append("\nthe engine does not start: does not fit", style="bold red")
    return Text.assemble(bar, "\n", legend)


def verdict_table(sc: Scenario, outputs: Mapping[str, Any]) -> Table:
    """The verdict (:func:`planner.sheet.verdict.rows`) as the details pane shows it, first."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, text in verdict.rows(outputs, sc.inputs):
        if label == "verdict":
            good = text.startswith(verdict.MEETS)
            table.add_row(label, Text(text, style="bold green" if good else "bold red"))
        else:
            table.add_row(label, text)
    return table


def details(sc: Scenario, outputs: Mapping[str, Any], gpu_memory_bytes: float,
            explanation: str = "") -> Group:
    """The details pane of one scenario: for inference with an engine, a target rate or an
    SLO, the verdict first; then memory (the engine's accounting, or the roofline's), then
    the idle-server bounds, labelled as such, and the engine's step and queue."""
    title = Text(f"{sc.fleet}/{sc.name}", style="bold")
    title.append(f"  {sc.model} on {sc.inputs['gpus']} × {sc.gpu} (v{sc.version})",
                 style="dim")
    parts: list[Any] = [title]
    if sc.notes:
        parts.append(Text(sc.notes, style="italic"))
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    if sc.kind == "inference":
        engine = sc.inputs.get("engine", "roofline") != "roofline"
        has_verdict = verdict.applies(sc.inputs)
        if has_verdict:
            parts += [Text("\nVerdict", style="bold"), verdict_table(sc, outputs)]
        if engine:
            parts += [Text(f"\nMemory per GPU, {sc.inputs['engine']}'s accounting "
                           f"({fmt_bytes_gib(gpu_memory_bytes)})", style="bold"),
                      engine_memory_bar(outputs, gpu_memory_bytes)]
        else:
            parts += [Text(f"\nMemory per GPU ({fmt_bytes_gib(gpu_memory_bytes)})",
                           style="bold"), memory_bar(outputs, gpu_memory_bytes)]
        if has_verdict:
            parts.append(Text("\nIdle-server bounds (one request, no queue)", style="bold"))
        rows = [
            ("TTFT", f"{fmt_seconds(outputs['ttft_s'])} ({outputs['ttft_bound']} bound)"),
            ("TPOT", f"{fmt_seconds(outputs['tpot_s'])} ({outputs['tpot_bound']} bound)"),
            ("end-to-end", fmt_seconds(outputs["e2e_latency_s"])),
            ("throughput", f"{outputs['throughput_tokens_per_s']:,.1f} tokens/s"),
        ]
        if not engine:
            rows += [("max sequences", f"{outputs['max_concurrent_sequences']:,}"),
                     ("max context", f"{outputs['max_context_tokens']:,} tokens")]
        rows += [
            ("cost", f"{fmt_usd(outputs['cost_usd_per_hour'])}/h, "
                     f"{fmt_usd(outputs['cost_usd_per_month'])}/month"),
            ("per M tokens", f"in {fmt_usd(outputs['cost_usd_per_million_input_tokens'])}, "
                             f"out {fmt_usd(outputs['cost_usd_per_million_output_tokens'])}"
                             + (" (idle throughput)" if has_verdict else "")),
        ]
        if engine:
            rows += serving_rows(sc, outputs)
        if sc.inputs.get("serving_mode") == "disaggregated":
            rows += disagg_rows(sc, outputs)
    else:
        rows = [(column_label(k)[0], format_value(k, outputs[k])) for k in KEY_OUTPUTS["training"]]
    for label, value in rows:
        table.add_row(label, value)
    parts += [Text(""), table]
    if explanation:
        parts += [Text("\nWhy (formula and values):", style="bold"), Text(explanation)]
    return Group(*parts)


def serving_rows(sc: Scenario, outputs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the serving engine model adds below the verdict: the operating step split into
    compute, memory, communication and overhead, the running batch and the queue (a state,
    "saturated", where the queue grows without bound)."""
    ms = fmt_seconds
    split = ", ".join(f"{name} {ms(outputs[key])}" for name, key in (
        ("compute", "step_compute_s"), ("memory", "step_memory_s"),
        ("communication", "step_communication_s"), ("element-wise", "step_elementwise_s"),
        ("overhead", "step_overhead_s")))
    mode = {0: "offline maximum", 1: "open loop at the target rate", 2: "closed loop"}.get(
        int(outputs["load_mode"]), "")
    wait = (verdict.SATURATED if verdict.is_saturated(outputs) else
            f"mean {ms(outputs['queue_wait_mean_s'])}, p99 {ms(outputs['queue_wait_p99_s'])}")
    return [
        ("engine", f"{sc.inputs['engine']} ({mode})"),
        ("step", f"{ms(outputs['step_s'])} = max(compute, memory) + the rest: {split}"),
        ("running batch", f"{outputs['running_batch']:,.1f} sequences"),
        ("queue wait", wait),
        ("offline maximum", f"{outputs['saturation_output_tokens_per_s']:,.0f} output "
                            "tokens/s"),
        *calibration_rows(outputs),
    ]


def disagg_rows(sc: Scenario, outputs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Both pools of a disaggregated deployment (:mod:`planner.estimator.disagg`): each pool's
    workers, GPUs, step, capacity and utilization, the KV transfer, and TTFT in its parts (the
    contract rows above already show the disaggregated TTFT, TPOT and throughput)."""
    ms = fmt_seconds
    decode_gpu = sc.inputs.get("decode_gpu", "same")
    decode_gpu = sc.gpu if decode_gpu == "same" else decode_gpu
    link = "NVLink" if int(outputs["kv_transfer_link_kind"]) == 0 else "the network"
    return [
        ("prefill pool", f"{outputs['prefill_workers_effective']:g} × "
                         f"{outputs['prefill_gpus'] / outputs['prefill_workers_effective']:g}"
                         f" {sc.gpu}: full step {ms(outputs['prefill_step_s'])}, capacity "
                         f"{outputs['prefill_capacity_requests_per_s']:,.2f} requests/s, "
                         f"utilization {outputs['prefill_utilization']:.0%}, queue "
                         f"{ms(outputs['prefill_queue_wait_mean_s'])}"),
        ("decode pool", f"{outputs['decode_workers_effective']:g} × "
                        f"{outputs['decode_gpus'] / outputs['decode_workers_effective']:g}"
                        f" {decode_gpu}: batch {outputs['decode_batch_3']:,.1f} of "
                        f"{outputs['decode_max_running_batch']:,.0f}, step "
                        f"{ms(outputs['disagg_tpot_mean_s'])}, capacity "
                        f"{outputs['decode_capacity_requests_per_s']:,.2f} requests/s, "
                        f"utilization {outputs['decode_utilization']:.0%}"),
        ("KV transfer", f"{fmt_bytes(outputs['kv_transfer_bytes'])} per prompt over {link} "
                        f"in {ms(outputs['kv_transfer_s'])}"),
        ("TTFT parts", f"queue {ms(outputs['prefill_queue_wait_mean_s'])} + decode slot "
                       f"{ms(outputs['decode_slot_wait_s'])} + prefill "
                       f"{ms(outputs['prefill_service_s'])} + transfer "
                       f"{ms(outputs['kv_transfer_s'])} + first decode "
                       f"{ms(outputs['disagg_tpot_mean_s'])} + front end "
                       f"{ms(outputs['request_latency_effective_s'])}"),
        ("GPUs", f"{outputs['prefill_gpus']:g} prefill + {outputs['decode_gpus']:g} decode = "
                 f"{outputs['deployment_gpus']:g}"),
    ]


def calibration_rows(outputs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The calibration profile a row was computed with and its held-out error (none: no
    row)."""
    profile = outputs.get("calibration_profile")
    if not profile:
        return []
    error = outputs.get("calibration_holdout_error")
    shown = "no held-out runs" if error is None else f"held-out throughput error {error:.1%}"
    return [("calibration", f"{profile} (fitted figures; {shown})")]
