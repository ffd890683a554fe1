"""What the UI shows for a scenario: grid cells and the details pane (memory bar, latency,
throughput, cost, and the explanation of the selected output). Pure functions over scenarios
and their outputs; no widgets."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from planner.domain import Scenario
from planner.sheet.outputs import column_label, format_value, output_columns

__all__ = ["format_value"]
from planner.sheet.table import inputs_of
from planner.units import fmt_bytes_gib, fmt_seconds, fmt_usd

KEY_OUTPUTS = {
    "inference": ("fits", "max_concurrent_sequences", "max_context_tokens", "kv_headroom_bytes",
                  "weights_bytes_per_gpu", "ttft_s", "tpot_s", "e2e_latency_s",
                  "throughput_tokens_per_s", "cost_usd_per_hour", "cost_usd_per_month",
                  "cost_usd_per_million_output_tokens", "ttft_p50_s", "ttft_p99_s",
                  "tpot_mean_s", "saturation_requests_per_s", "meets_slo",
                  "replicas_needed", "gpus_needed"),
    "training": ("train_fits", "trainable_params", "train_flops", "train_time_s", "gpu_hours",
                 "train_cost_usd", "train_memory_bytes_per_gpu", "tokens_for_usd"),
}
"""Output columns shown in the grid (the details pane and explain reach every output)."""


@cache
def grid_columns(kind: str) -> tuple[tuple[str, str, str], ...]:
    """(key, header, role) of every grid column: name, model, gpu, inputs, key outputs."""
    cols = [("name", "scenario", "meta"), ("model", "model", "meta"), ("gpu", "GPU", "meta")]
    if kind == "training":
        cols.append(("lora_targets", "LoRA targets", "meta"))
    for c in inputs_of(kind):
        unit = f"\n[{c.measured_unit}]" if c.measured_unit else "\n "
        cols.append((c.name, f"{c.name}{unit}", "input"))
    outputs = output_columns()
    for name in KEY_OUTPUTS[kind]:
        cols.append((name, f"{name}\n[{outputs[name].unit}]", "output"))
    return tuple(cols)


WIDE = {"model": 22, "gpu": 12, "lora_targets": 14, "notes": 24}


def column_width(key: str, header: str) -> int:
    """A grid column's width: its header, or room for typical values."""
    return max(WIDE.get(key, 10), *(len(line) for line in header.split("\n")))


def fits_of(kind: str, outputs: dict[str, Any]) -> bool:
    """Whether the scenario fits (inference) or its training memory fits."""
    return bool(outputs.get("fits" if kind == "inference" else "train_fits", True))


def cell(sc: Scenario, outputs: dict[str, Any], key: str, role: str) -> Any:
    """One grid cell: meta and inputs as plain text, outputs styled and with units."""
    if key == "name":
        text = Text(sc.name)
        if not fits_of(sc.kind, outputs):
            text = Text("✗ " + sc.name, style="bold red")
        if outputs.get("calibration_profile"):  # computed with a fitted profile's figures
            text.append(" ≈", style="bold cyan")
        return text
    if role == "meta":
        return str(getattr(sc, key))
    if role == "input":
        value = sc.inputs[key]
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return f"{value:,.1f}" if abs(value) < 10 else f"{value:,.0f}"
        return f"{value:,}" if isinstance(value, int) else str(value)
    value = outputs.get(key)
    if value is None:
        return Text("–", style="dim")
    shown = format_value(key, value)
    style = "italic cyan"
    if key in ("fits", "train_fits"):
        style = "bold green" if value else "bold red"
    elif key == "kv_headroom_bytes" and value < 0:
        style = "bold red"
    return Text(shown, style=style, justify="right")


@cache
def _roles(kind: str) -> dict[str, str]:
    return {key: role for key, _header, role in grid_columns(kind)}


class GridRow(Mapping[Any, Any]):
    """One grid row: column key (or its text) to cell, formatted only when drawn. A 5,000-row
    grid builds 5,000 of these cheaply, and only the visible cells are ever formatted."""

    __slots__ = ("marked", "outputs", "sc")

    def __init__(self, sc: Scenario, outputs: dict[str, Any], marked: bool = False) -> None:
        self.sc, self.outputs, self.marked = sc, outputs, marked

    def __getitem__(self, key: Any) -> Any:
        name = getattr(key, "value", key)  # a DataTable ColumnKey or a plain str
        role = _roles(self.sc.kind).get(name)
        if role is None:
            raise KeyError(key)
        value = cell(self.sc, self.outputs, name, role)
        text = Text(value) if isinstance(value, str) else value
        if name == "name" and self.marked:
            text = Text("● ", style="bold yellow") + text
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(_roles(self.sc.kind))

    def __len__(self) -> int:
        return len(_roles(self.sc.kind))


def memory_bar(outputs: dict[str, Any], gpu_memory_bytes: float, width: int = 48) -> Text:
    """Weights / KV in use / free headroom / reserve against one GPU's memory."""
    weights = max(0.0, outputs["weights_bytes_per_gpu"])
    reserve = max(0.0, outputs["reserve_bytes_per_gpu"])
    budget = max(0.0, outputs["kv_budget_bytes"])
    in_use = min(outputs["kv_in_use_bytes_per_gpu"], budget)
    free = max(0.0, budget - in_use)
    parts = (("weights", weights, "blue"), ("KV in use", in_use, "magenta"),
             ("free", free, "green"), ("reserve", reserve, "yellow"))
    total = max(gpu_memory_bytes, weights + in_use + free + reserve, 1.0)
    bar = Text()
    used = 0
    for i, (_, amount, color) in enumerate(parts):
        cells = round(width * amount / total) if i < len(parts) - 1 else max(
            0, width - used)
        cells = min(cells, width - used)
        bar.append("█" * cells, style=color)
        used += cells
    legend = Text()
    for label, amount, color in parts:
        legend.append("■ ", style=color)
        legend.append(f"{label} {fmt_bytes_gib(amount)}  ")
    if not outputs["fits"]:
        legend.append(f"\nshort {fmt_bytes_gib(outputs['shortfall_bytes'])} per GPU",
                      style="bold red")
    return Text.assemble(bar, "\n", legend)


def details(sc: Scenario, outputs: dict[str, Any], gpu_memory_bytes: float,
            explanation: str = "") -> Group:
    """The details pane of one scenario."""
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
        parts += [Text(f"\nMemory per GPU ({fmt_bytes_gib(gpu_memory_bytes)})", style="bold"),
                  memory_bar(outputs, gpu_memory_bytes)]
        rows = [
            ("TTFT", f"{fmt_seconds(outputs['ttft_s'])} ({outputs['ttft_bound']} bound)"),
            ("TPOT", f"{fmt_seconds(outputs['tpot_s'])} ({outputs['tpot_bound']} bound)"),
            ("end-to-end", fmt_seconds(outputs["e2e_latency_s"])),
            ("throughput", f"{outputs['throughput_tokens_per_s']:,.1f} tokens/s"),
            ("max sequences", f"{outputs['max_concurrent_sequences']:,}"),
            ("max context", f"{outputs['max_context_tokens']:,} tokens"),
            ("cost", f"{fmt_usd(outputs['cost_usd_per_hour'])}/h, "
                     f"{fmt_usd(outputs['cost_usd_per_month'])}/month"),
            ("per M tokens", f"in {fmt_usd(outputs['cost_usd_per_million_input_tokens'])}, "
                             f"out {fmt_usd(outputs['cost_usd_per_million_output_tokens'])}"),
        ]
        if sc.inputs.get("engine", "roofline") != "roofline":
            rows += serving_rows(sc, outputs)
    else:
        rows = [(column_label(k)[0], format_value(k, outputs[k])) for k in KEY_OUTPUTS["training"]]
    for label, value in rows:
        table.add_row(label, value)
    parts += [Text(""), table]
    if explanation:
        parts += [Text("\nWhy (formula and values):", style="bold"), Text(explanation)]
    return Group(*parts)


def serving_rows(sc: Scenario, outputs: dict[str, Any]) -> list[tuple[str, str]]:
    """What the serving engine model adds to the details pane: the engine's KV pool, the
    operating step split into compute, memory, communication and overhead, the queueing,
    and the latencies under the offered load."""
    ms = fmt_seconds
    split = ", ".join(f"{name} {ms(outputs[key])}" for name, key in (
        ("compute", "step_compute_s"), ("memory", "step_memory_s"),
        ("communication", "step_communication_s"), ("element-wise", "step_elementwise_s"),
        ("overhead", "step_overhead_s")))
    mode = {0: "offline maximum", 1: "open loop at the target rate", 2: "closed loop"}.get(
        int(outputs["serving_mode"]), "")
    return [
        ("engine", f"{sc.inputs['engine']} ({mode})"),
        ("KV pool", f"{outputs['engine_kv_tokens']:,} tokens, "
                    f"{fmt_bytes_gib(outputs['engine_kv_bytes_per_gpu'])} per GPU"),
        ("step", f"{ms(outputs['step_s'])} = max(compute, memory) + the rest: {split}"),
        ("running batch", f"{outputs['running_batch']:,.1f} sequences "
                          f"(utilization {outputs['utilization']:.0%})"),
        ("queue wait", f"mean {ms(outputs['queue_wait_mean_s'])}, "
                       f"p99 {ms(outputs['queue_wait_p99_s'])}"),
        ("TTFT under load", f"mean {ms(outputs['ttft_mean_s'])}, p50 "
                            f"{ms(outputs['ttft_p50_s'])}, p99 {ms(outputs['ttft_p99_s'])}"),
        ("TPOT under load", ms(outputs["tpot_mean_s"])),
        ("saturation", f"{outputs['saturation_requests_per_s']:,.2f} requests/s, "
                       f"{outputs['saturation_output_tokens_per_s']:,.0f} output tokens/s"),
        ("meets SLO", "yes" if outputs["meets_slo"] else "no"),
        *calibration_rows(outputs),
    ]


def calibration_rows(outputs: dict[str, Any]) -> list[tuple[str, str]]:
    """The calibration profile a row was computed with and its held-out error (none: no
    row)."""
    profile = outputs.get("calibration_profile")
    if not profile:
        return []
    error = outputs.get("calibration_holdout_error")
    shown = "no held-out runs" if error is None else f"held-out throughput error {error:.1%}"
    return [("calibration", f"{profile} (fitted figures; {shown})")]
