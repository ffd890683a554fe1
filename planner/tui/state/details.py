"""What the UI's details pane shows for the selected scenario: the verdict, the memory bar
(the engine's accounting or the roofline's), the idle-server bounds, cost, the engine's step
and queue, the disaggregated pools and the calibration in use, then the explanation of the
selected output. Pure functions over a scenario and its outputs; no widgets (the pane is
:mod:`planner.tui.widgets.details`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from planner.compute import verdict
from planner.compute.outputs import column_label, format_value
from planner.core.units import fmt_bytes, fmt_bytes_gib, fmt_seconds, fmt_usd
from planner.spec.domain import Scenario
from planner.tui.state.cells import KEY_OUTPUTS


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
    """The verdict (:func:`planner.compute.verdict.rows`) as the details pane shows it, first."""
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


def _inference_details(sc: Scenario, outputs: Mapping[str, Any], gpu_memory_bytes: float,
                       parts: list[Any]) -> list[tuple[str, str]]:
    """An inference scenario's details: the verdict and the memory bar (the engine's
    accounting or the roofline's) appended to ``parts``; returns the rows of the bounds
    table (idle-server latency and throughput, cost, the engine's step and queue, the
    disaggregated pools)."""
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
    return rows


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
        rows = _inference_details(sc, outputs, gpu_memory_bytes, parts)
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
    """Both pools of a disaggregated deployment (:mod:`planner.formulas.disagg`): each pool's
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
