"""Human-readable terminal tables for the CLI: every figure with its unit.

Only formatting lives here (rich tables over the dicts :mod:`planner.service` returns); the CLI
imports it lazily so ``--json`` runs never load rich. Rich reads ``[...]`` in a string as markup,
so every user text (a name, a label, a source, a note) goes through :func:`esc` first: a scenario
named ``[/x]`` prints as ``[/x]`` instead of raising ``MarkupError``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from planner.compute import verdict
from planner.core.units import (
    GB,
    GiB,
    fmt_bytes,
    fmt_bytes_gib,
    fmt_count,
    fmt_flops,
    fmt_seconds,
    fmt_usd,
)
from planner.present import cell as _cell
from planner.present import comparison_table
from planner.spec.gpu import GpuSpec

console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
"""Wide when piped, so tables written to a file or a pager are not squeezed to 80 columns."""


def esc(value: Any) -> str:
    """``value`` as text with rich markup escaped: user text printed verbatim."""
    return escape(str(value))


def figure_table(title: str, rows: Iterable[tuple[str, str]], *, note: str = "") -> Table:
    """A borderless two-column table: a bold label and its right-aligned figure per row, the
    note as its caption."""
    table = Table(title=title, title_justify="left", show_header=False, box=None,
                  padding=(0, 2), caption=note or None, caption_justify="left")
    table.add_column("figure", style="bold")
    table.add_column("value", justify="right")
    for label, value in rows:
        table.add_row(label, value)
    return table


def model_list(rows: list[dict[str, Any]]) -> None:
    """Catalog models, one per line."""
    table = Table(title="Catalog models")
    for column, justify in (("name", "left"), ("type", "left"), ("params total", "right"),
                            ("params active", "right"), ("KV/token bf16", "right"),
                            ("source", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        table.add_row(esc(r["name"]), esc(r["model_type"]), fmt_count(r["params_total"]),
                      fmt_count(r["params_active"]), fmt_bytes(r["kv_bytes_per_token"]),
                      esc(r["source"]))
    console.print(table)


def model_inspect(info: dict[str, Any]) -> None:
    """Parameter breakdown and architecture of one model."""
    p = info["params"]
    rows = [(k, f"{fmt_count(v)} params") for k, v in p.items()
            if k not in ("total", "active")]
    rows += [("total", f"{fmt_count(p['total'])} params"),
             ("active per token", f"{fmt_count(p['active'])} params"),
             (f"KV cache per token ({info['kv_dtype']})",
              f"{fmt_count(info['kv_bytes_per_token'])} B "
              f"({fmt_bytes(info['kv_bytes_per_token'])})")]
    if info["state_bytes_per_sequence"]:
        rows.append(("fixed state per sequence (16 bit)",
                     f"{fmt_count(info['state_bytes_per_sequence'])} B "
                     f"({fmt_bytes(info['state_bytes_per_sequence'])})"))
    if info["vision_params"]:
        rows.append(("vision tower and projector (not in total)",
                     f"{fmt_count(info['vision_params'])} params"))
    console.print(figure_table(f"{esc(info['name'])} ({esc(info['model_type'])})", rows))
    arch = info["architecture"]
    console.print(figure_table("architecture", [(esc(k.replace("_", " ")), esc(v))
                                          for k, v in arch.items()]))
    ck = info.get("checkpoint")
    if ck:
        console.print(figure_table("checkpoint", _checkpoint_rows(ck)))


def _checkpoint_rows(ck: dict[str, Any]) -> list[tuple[str, str]]:
    """:func:`model_inspect`'s checkpoint rows: its fields, the weights as stored and the
    safetensors index total against them where there is one."""
    rows = [(esc(k.replace("_", " ")), esc(", ".join(v) if isinstance(v, list) else v))
            for k, v in ck.items()
            if k not in ("weights_bytes", "index_total_bytes", "weights_vs_index")]
    rows.append(("weights (as stored)", f"{fmt_count(ck['weights_bytes'])} B "
                                        f"({fmt_bytes(ck['weights_bytes'])})"))
    if "index_total_bytes" in ck:
        rows.append(("safetensors index total", f"{fmt_count(ck['index_total_bytes'])} B "
                                                f"({ck['weights_vs_index']:+.2%})"))
    return rows


def gpu_list(gpus: list[GpuSpec]) -> None:
    """The GPU catalog."""
    table = Table(title="Catalog GPUs (dense tensor peaks)")
    table.caption = f"* {verdict.UNMEASURED_NOTE} (estimates on these parts are less sure)"
    table.caption_justify = "left"
    for column in ("name", "memory GiB", "bf16 TFLOP/s", "fp8 TFLOP/s", "int8 TOP/s",
                   "bandwidth GB/s", "power W", "USD/GPU-h", "serving efficiencies"):
        table.add_column(column, justify="left" if column in ("name", "serving efficiencies")
                         else "right")
    for g in gpus:
        def peak(dtype: str, g: GpuSpec = g) -> str:
            value = g.flops_per_s.get(dtype)
            return f"{value / 1e12:,.1f}" if value else "–"
        price = f"{g.price_usd_per_hour:,.2f}" + (" (example)" if g.price_is_example else "")
        table.add_row(esc(g.name), f"{g.memory_bytes / GiB:,.0f}", peak("bf16") if
                      g.flops_per_s.get("bf16") else peak("fp16") + " (fp16)",
                      peak("fp8"), peak("int8"), f"{g.bandwidth_bytes_per_s / GB:,.0f}",
                      f"{g.power_w:,.0f}", price,
                      "measured" if verdict.gpu_measured(g) else "[yellow]defaults *[/]")
    console.print(table)


def _gpu_line(gpu: GpuSpec, result: dict[str, Any]) -> str:
    price = fmt_usd(gpu.price_usd_per_hour) + "/GPU-h" + (
        " (example price)" if gpu.price_is_example else "")
    peak = gpu.flops_per_s.get(result["compute_dtype"], 0.0)
    return (f"{esc(gpu.label or gpu.name)}: {fmt_bytes_gib(gpu.memory_bytes)}, "
            f"{peak / 1e12:,.1f} TFLOP/s {result['compute_dtype']} dense, "
            f"{gpu.bandwidth_bytes_per_s / GB:,.0f} GB/s, {price}")


def estimate(r: dict[str, Any], gpu: GpuSpec) -> None:
    """An inference estimate in four short tables (after the verdict, when it applies)."""
    i = r["inputs"]
    console.print(f"[bold]{esc(r['model'])}[/] on {i['gpus']} × {_gpu_line(gpu, r)}")
    console.print(f"tp={i['tp']} pp={i['pp']} replicas={r['replicas']}  batch={i['batch']}  "
                  f"prompt={i['prompt_tokens']:,} tokens  output={i['output_tokens']:,} tokens  "
                  f"weights={i['weight_dtype']} kv={i['kv_dtype']}  MFU={i['mfu']:g} "
                  f"MBU={i['mbu']:g}\n")
    engine = str(i.get("engine", "roofline"))
    if verdict.applies(i):
        console.print(figure_table(verdict_title(i), verdict_rows(r, i)))
    weights = _weight_rows(r)
    if engine != "roofline":
        memory_rows = _engine_memory_rows(r, weights)
        memory_title = f"Memory per GPU ({esc(engine)}'s accounting)"
    else:
        memory_rows = _roofline_memory_rows(r, i, weights)
        memory_title = "Memory per GPU"
    console.print(figure_table(memory_title, [*memory_rows, *_host_kv_rows(r, i)]))
    console.print(figure_table("Compute per request", [
        ("prefill", fmt_flops(r["prefill_flops"])),
        ("decode (G−1 steps)", fmt_flops(r["decode_flops"])),
        ("whole request", fmt_flops(r["request_flops"])),
        (f"one decode step (batch {i['batch']})", fmt_flops(r["decode_step_flops"])),
        ("bytes read per decode step", f"{r['decode_bytes_per_step'] / GB:,.2f} GB"),
    ]))
    _latency_and_cost(r, i)


def _weight_rows(r: dict[str, Any]) -> list[tuple[str, str]]:
    """The weights per GPU, and their split between host memory and the GPU when offloaded."""
    weights = [("weights", fmt_bytes_gib(r["weights_bytes_per_gpu"], 4))]
    if r["weight_offload_bytes_per_gpu"] > 0:
        weights += [("  in host memory (streamed every pass)",
                     fmt_bytes_gib(r["weight_offload_bytes_per_gpu"], 4)),
                    ("  on the GPU", fmt_bytes_gib(r["weights_on_gpu_bytes_per_gpu"], 4))]
    return weights


def _host_kv_rows(r: dict[str, Any], i: dict[str, Any]) -> list[tuple[str, str]]:
    """The host KV store's rows (tokens, sequences held, swap-in time) when it has memory."""
    if i["kv_offload_gib"] <= 0:
        return []
    return [("host KV store: tokens (per replica)", f"{fmt_count(r['kv_offload_tokens'])} tokens"),
            ("sequences held, GPU + host", fmt_count(r["held_sequences"])),
            (f"prompt swap-in over {i['host_link_gb_per_s']:g} GB/s",
             fmt_seconds(r["kv_swap_in_s"]))]


def _roofline_memory_rows(r: dict[str, Any], i: dict[str, Any],
                          weights: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The roofline's memory accounting per GPU: reserve, KV budget, KV in use and headroom,
    whether it fits, and the concurrency and context it leaves."""
    short = fmt_bytes_gib(r["shortfall_bytes"])
    fits = "[green]yes[/]" if r["fits"] else f"[red]no: short {short}/GPU[/]"
    return [
        ("GPU memory", fmt_bytes_gib(r["gpu_memory_bytes"], 4)),
        *weights,
        ("reserve", fmt_bytes_gib(r["reserve_bytes_per_gpu"], 4)),
        ("KV budget", fmt_bytes_gib(r["kv_budget_bytes"], 4)),
        ("KV per token (per sequence, whole model)",
         f"{fmt_count(r['kv_bytes_per_token'])} B ({fmt_bytes(r['kv_bytes_per_token'])})"),
        (f"KV per sequence at {r['context_tokens']:,} tokens",
         fmt_bytes(r["kv_bytes_per_sequence_per_gpu"])),
        (f"KV in use (batch {i['batch']})", fmt_bytes_gib(r["kv_in_use_bytes_per_gpu"], 4)),
        ("KV headroom", fmt_bytes_gib(r["kv_headroom_bytes"], 4)),
        ("fits", fits),
        ("max concurrent sequences (per replica)", fmt_count(r["max_concurrent_sequences"])),
        ("token capacity (per replica)", f"{fmt_count(r['token_capacity'])} tokens"),
        (f"max context at batch {i['batch']}", f"{fmt_count(r['max_context_tokens'])} tokens"),
    ]


def _latency_and_cost(r: dict[str, Any], i: dict[str, Any]) -> None:
    """The estimate's last two tables: the idle-server latency and throughput bounds, and the
    cost per hour, month and million tokens."""
    link = (f" + {fmt_seconds(r['host_weight_stream_s'])} host link"
            if r["weight_offload_bytes_per_gpu"] > 0 else "")
    bounds = ("Idle-server bounds (one request at a time, no queue; lower bounds, not the "
              "verdict)" if verdict.applies(i) else "Latency and throughput (lower bounds)")
    console.print(figure_table(bounds, [
        ("time to first token", f"{fmt_seconds(r['ttft_s'])} ({r['ttft_bound']} bound{link})"),
        ("time per output token",
         f"{fmt_seconds(r['tpot_s'])} ({r['tpot_bound']} bound{link})"),
        ("end-to-end request", fmt_seconds(r["e2e_latency_s"])),
        ("output throughput", f"{r['throughput_tokens_per_s']:,.1f} tokens/s"),
        ("decode rate", f"{r['decode_tokens_per_s']:,.1f} tokens/s"),
        ("requests", f"{r['requests_per_s']:,.3f} requests/s"),
    ]))
    console.print(figure_table("Cost", [
        ("per hour", fmt_usd(r["cost_usd_per_hour"])),
        ("per month", fmt_usd(r["cost_usd_per_month"])),
        ("per million input tokens", fmt_usd(r["cost_usd_per_million_input_tokens"])),
        ("per million output tokens", fmt_usd(r["cost_usd_per_million_output_tokens"])),
    ], note="GPU time split: prefill share billed to input tokens, decode share to output"
            + ("; per-token costs at the idle-server throughput above." if verdict.applies(i)
               else ".")))


def verdict_title(i: dict[str, Any]) -> str:
    """The verdict table's title: the offered load, the objectives and the engine it is for."""
    rate = i.get("target_requests_per_s") or 0
    load = (f"{rate:,.4g} requests/s offered" if rate else
            f"{i['concurrency']:,} clients" if i.get("concurrency") else "no target rate")
    slo = []
    if i.get("slo_ttft_s"):
        slo.append(f"TTFT p{i.get('slo_percentile', '99')} ≤ {fmt_seconds(i['slo_ttft_s'])}")
    if i.get("slo_tpot_s"):
        slo.append(f"TPOT ≤ {fmt_seconds(i['slo_tpot_s'])}")
    objectives = ", ".join(slo) if slo else "no SLO set"
    return f"Verdict ({esc(load)}; {esc(objectives)}; engine {esc(i.get('engine', 'roofline'))})"


def verdict_rows(r: dict[str, Any], i: dict[str, Any]) -> list[tuple[str, str]]:
    """:func:`planner.compute.verdict.rows`, the state coloured."""
    out = []
    for label, text in verdict.rows(r, i):
        if label == "verdict":
            colour = "green" if text.startswith(verdict.MEETS) else "red"
            text = f"[bold {colour}]{esc(text)}[/]"
        else:
            text = esc(text)
        out.append((label, text))
    return out


def _engine_memory_rows(r: dict[str, Any],
                        weights: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The engine's memory accounting (docs/serving.md), in place of the roofline's reserve and
    KV budget: one accounting per engine."""
    engine_fits = "[green]yes[/]" if r["engine_fits"] else "[red]no[/]"
    return [
        ("GPU memory", fmt_bytes_gib(r["gpu_memory_bytes"], 4)),
        *weights,
        ("activation peak (profiling run)", fmt_bytes_gib(r["activation_peak_bytes"], 4)),
        ("non-torch memory", fmt_bytes_gib(r["non_torch_bytes"], 4)),
        ("KV pool", fmt_bytes_gib(r["engine_kv_bytes_per_gpu"], 4)),
        ("KV per token (per GPU)", fmt_bytes(r["kv_bytes_per_token_per_gpu"])),
        ("KV token capacity (per replica)", f"{fmt_count(r['engine_token_capacity'])} tokens"),
        ("max running batch", f"{fmt_count(r['max_running_batch'])} sequences"),
        ("engine memory in use", fmt_bytes_gib(r["engine_memory_used_bytes"], 4)),
        ("engine fits", engine_fits),
    ]


def train(r: dict[str, Any], gpu: GpuSpec) -> None:
    """A training estimate."""
    i = r["inputs"]
    mode = (f"LoRA r={i['lora_rank']} on {esc(r['lora_targets'])}" if i["lora_rank"]
            else "full training")
    console.print(f"[bold]{esc(r['model'])}[/] {mode} on {i['gpus']} × {_gpu_line(gpu, r)}")
    console.print(f"tokens={i['train_tokens']:,.0f}  seq={i['train_seq_len']:,}  "
                  f"micro-batch={i['micro_batch_size']}  ZeRO-{i['zero_stage']}  "
                  f"tp={i['tp']} pp={i['pp']} dp={r['data_parallel']}  MFU={i['mfu']:g}\n")
    fits = "[green]yes[/]" if r["train_fits"] else "[red]no[/]"
    rows = [
        ("trainable parameters", fmt_count(r["trainable_params"])),
        ("compute", f"{r['train_flops']:.4g} FLOPs ({fmt_flops(r['train_flops'])})"),
        ("time", fmt_seconds(r["train_time_s"])),
        ("GPU-hours", f"{r['gpu_hours']:,.1f} GPU-h"),
        ("cost", fmt_usd(r["train_cost_usd"])),
        ("model state per GPU", fmt_bytes_gib(r["model_state_bytes_per_gpu"])),
        ("activations per GPU", fmt_bytes_gib(r["activation_bytes_per_gpu"])),
        ("memory per GPU", fmt_bytes_gib(r["train_memory_bytes_per_gpu"])),
        ("fits", fits),
    ]
    if i["budget_usd"]:
        rows.append((f"tokens for {fmt_usd(i['budget_usd'])}",
                     f"{r['tokens_for_usd']:,.0f} tokens"))
    if i["budget_gpu_hours"]:
        rows.append((f"tokens for {i['budget_gpu_hours']:,.0f} GPU-h",
                     f"{r['tokens_for_gpu_hours']:,.0f} tokens"))
    console.print(figure_table("Training", rows))


def scenario_list(scenarios: list[Any], outputs: list[dict[str, Any]]) -> None:
    """Scenarios with their headline outputs; rows that do not fit are marked."""
    inference = [(s, o) for s, o in zip(scenarios, outputs, strict=True) if s.kind == "inference"]
    training = [(s, o) for s, o in zip(scenarios, outputs, strict=True) if s.kind == "training"]
    if inference:
        console.print(_inference_list(inference))
    if training:
        console.print(_training_list(training))
    if not scenarios:
        console.print("no scenarios")


def _list_table(title: str, headers: tuple[str, ...]) -> Table:
    """An empty list table: the scenario, model and GPU columns left-aligned, figures right."""
    table = Table(title=title)
    for column in headers:
        table.add_column(column, justify="left" if column in ("scenario", "model", "GPU")
                         else "right")
    return table


def _inference_list(rows: list[tuple[Any, dict[str, Any]]]) -> Table:
    """The inference scenarios' table: shape, whether it fits (by the engine's accounting),
    the verdict's list cells, the idle bounds and the hourly cost."""
    table = _list_table("Inference scenarios", (
        "scenario", "model", "GPU", "GPUs", "batch", "prompt+output tokens", "fits",
        *verdict.LIST_HEADERS, "idle TTFT", "idle TPOT", "USD/h"))
    for s, o in rows:
        i = s.inputs
        fits = ("yes" if o["engine_fits"] else  # one accounting per engine
                f"[red]no (−{fmt_bytes_gib(o['shortfall_bytes'])})[/]"
                if o["shortfall_bytes"] > 0 else "[red]no[/]")
        table.add_row(esc(f"{s.fleet}/{s.name}"), esc(s.model), esc(s.gpu), str(i["gpus"]),
                      str(i["batch"]),
                      f"{i['prompt_tokens']:,}+{i['output_tokens']:,}", fits,
                      *map(esc, verdict.list_cells(o, i)), fmt_seconds(o["ttft_s"]),
                      fmt_seconds(o["tpot_s"]), fmt_usd(o["cost_usd_per_hour"]))
    return table


def _training_list(rows: list[tuple[Any, dict[str, Any]]]) -> Table:
    """The training scenarios' table: tokens, trainable parameters, FLOPs, time, GPU-hours,
    cost, memory per GPU and whether it fits."""
    table = _list_table("Training scenarios", (
        "scenario", "model", "GPU", "GPUs", "tokens", "trainable params", "FLOPs", "time",
        "GPU-h", "USD", "memory/GPU", "fits"))
    for s, o in rows:
        table.add_row(esc(f"{s.fleet}/{s.name}"), esc(s.model), esc(s.gpu),
                      str(s.inputs["gpus"]),
                      f"{s.inputs['train_tokens']:,.0f}", fmt_count(o["trainable_params"]),
                      f"{o['train_flops']:.3g}", fmt_seconds(o["train_time_s"]),
                      f"{o['gpu_hours']:,.1f}", fmt_usd(o["train_cost_usd"]),
                      fmt_bytes_gib(o["train_memory_bytes_per_gpu"]),
                      "yes" if o["train_fits"] else "[red]no[/]")
    return table


RICH_MAX_ROWS = 1_000
"""Sweeps up to this many printed rows are drawn as a rich table; longer ones are streamed as
plain aligned text (:mod:`planner.cli.stream`), in time linear in the rows."""


def _text_or_cell(name: str) -> Callable[[Any], str]:
    """The formatter of a varied input's values: names as they are, numbers with units."""
    if name in ("gpu", "model"):
        return str
    return lambda v: str(v) if isinstance(v, str) else _cell(name, v)


def _figure(name: str) -> Callable[[Any], str]:
    """The formatter of an output's values: numbers with units, text (a note) as it is."""
    return lambda v: v if isinstance(v, str) else _cell(name, v)


def sweep(sc: Any, grid: Any, frame: Any, columns: list[str]) -> None:
    """A one- or two-way sensitivity table: a rich table when it is short, streamed plain
    text (with a progress bar on stderr when long) otherwise."""
    # lazy: the streaming writer, only when a sweep is printed
    from planner.cli import stream

    varied = [v.column for v in grid.variations]
    plain_title = f"{sc.fleet}/{sc.name}: " + " × ".join(varied)
    notes = frame["note"].tolist()
    if len(varied) == 2 and len(columns) == 1:
        _two_way(plain_title, frame, varied, columns[0], notes)
        return
    names = list(dict.fromkeys((*varied, *(["gpus"] if "gpus" in frame.columns else []),
                                *columns)))
    body = [stream.format_column(frame[c].tolist(),
                                 _text_or_cell(c) if c in varied else _figure(c))
            for c in names]
    headers, left = names, [c in ("gpu", "model") for c in names]
    if any(notes):  # once, not once per row
        body.append(notes)
        headers, left = [*headers, "note"], [*left, True]
    if len(frame) > RICH_MAX_ROWS:
        stream.write_table(plain_title, headers, body, left)
        return
    _rich_columns(esc(plain_title), headers, left, body)


def _rich_columns(title: str, headers: list[str], left: list[bool], body: list[list[str]]
                  ) -> None:
    """Print ``body`` (formatted columns) as a rich table, each column left- or right-aligned."""
    table = Table(title=title)
    for h, is_left in zip(headers, left, strict=True):
        table.add_column(h, justify="left" if is_left else "right")
    for row_cells in zip(*body, strict=True):
        table.add_row(*map(esc, row_cells))
    console.print(table)


def _two_way(plain_title: str, frame: Any, varied: list[str], column: str,
             notes: list[str]) -> None:
    """A two-way table of one output: the first varied input down, the second across (rich
    when it has at most :data:`RICH_MAX_ROWS` rows and 40 columns, streamed text otherwise);
    a row's note in place of its figure."""
    # lazy: the streaming writer, only when a sweep is printed
    from planner.cli import stream

    row_key, col_key = varied
    row_values, col_cells = frame[row_key].tolist(), frame[col_key].tolist()
    figures = stream.format_column(frame[column].tolist(), _figure(column))
    col_values = list(dict.fromkeys(col_cells))
    at: dict[Any, dict[Any, int]] = {}  # one pass: row value → column value → first row
    for i, (r, v) in enumerate(zip(row_values, col_cells, strict=True)):
        at.setdefault(r, {}).setdefault(v, i)
    col_labels = stream.format_column(col_values, _text_or_cell(col_key))
    if len(at) > RICH_MAX_ROWS or len(col_values) > 40:
        body = [stream.format_column(list(at), _text_or_cell(row_key))]
        for v in col_values:
            body.append([(notes[j] or figures[j]) if (j := by_col.get(v)) is not None
                         else "" for by_col in at.values()])
        stream.write_table(f"{plain_title} → {column}", [f"{row_key} \\ {col_key}",
                                                          *col_labels], body,
                           [False] * (1 + len(col_values)))
        return
    table = Table(title=f"{esc(plain_title)} → {column}")
    table.add_column(f"{row_key} \\ {col_key}", justify="right")
    for label in col_labels:
        table.add_column(esc(label), justify="right")
    for r, by_col in at.items():
        table.add_row(esc(_text_or_cell(row_key)(r)),
                      *_two_way_cells(by_col, col_values, notes, figures))
    console.print(table)


def _two_way_cells(by_col: dict[Any, int], col_values: list[Any], notes: list[str],
                   figures: list[str]) -> list[str]:
    """One row of the rich two-way table: per column value its figure, the row's note
    (dim) in its place, or nothing where the grid has no such point."""
    cells = []
    for v in col_values:
        j = by_col.get(v)
        note = notes[j] if j is not None else ""
        cells.append(f"[dim]{esc(note)}[/]" if note else
                     esc(figures[j]) if j is not None else "")
    return cells


def comparison(scenarios: list[Any], rows: list[Any]) -> None:
    """Print :func:`comparison_table`."""
    console.print(comparison_table(scenarios, rows))


def rollup(totals: list[Any]) -> None:
    """Fleet totals and the scenarios that do not fit."""
    for t in totals:
        gpus = ", ".join(f"{n}× {esc(g)}" for g, n in t.gpus_by_type.items()) or "none"
        counted = t.scenarios - len(t.not_counted)
        console.print(figure_table(f"Fleet {esc(t.fleet)} ({counted} of {t.scenarios} scenarios "
                             "counted)" if t.not_counted else
                             f"Fleet {esc(t.fleet)} ({t.scenarios} scenarios)", [
            ("GPUs serving", gpus),
            ("cost per hour", fmt_usd(t.cost_usd_per_hour)),
            ("cost per month", fmt_usd(t.cost_usd_per_month)),
            ("output tokens per day", f"{t.tokens_per_day:,.0f} tokens/day"),
            ("training projects", f"{fmt_usd(t.training_cost_usd)}, "
                                  f"{t.training_gpu_hours:,.1f} GPU-h"),
        ]))
        if t.not_counted:
            console.print("options not chosen (not counted): "
                          + ", ".join(esc(n) for n in t.not_counted))
        if t.not_fitting:
            console.print("[red]does not fit:[/] " + ", ".join(
                f"{esc(name)} (short {fmt_bytes_gib(short)}/GPU)" for name, short in t.not_fitting))
