"""``planner scenario list`` written as it is produced: the table and the JSON.

The table is the one :func:`planner.cli.render.scenario_list` draws with rich, character for
character when printed to a file or a pipe (:func:`planner.cli.stream.write_box_table`), but
each column is formatted once over the fleet's evaluated arrays (a value that repeats is
formatted once) and the rows are written in chunks, so a 100,000-scenario fleet costs about
what its ``--json`` costs instead of rich measuring and holding every cell (issue 14, item 2).
On a terminal, a short fleet (at most :data:`RICH_MAX_ROWS` rows per table)
is still drawn by rich, with colour; a table wider than the console is too.

The JSON is the list ``--json`` always printed, one scenario record at a time
(:func:`planner.cli.stream.write_json_list`): memory is a chunk of records, not the fleet's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

from planner.cli import stream
from planner.domain import Scenario
from planner.sheet.fleet import FleetValues, output_list
from planner.units import fmt_bytes_gib, fmt_count, fmt_seconds, fmt_usd

RICH_CONSOLE_WIDTH = 200
"""The width rich draws at when stdout is not a terminal (:data:`planner.cli.render.console`);
a wider table is left to rich, which wraps it the way it always did."""

INFERENCE_HEADERS = ("scenario", "model", "GPU", "GPUs", "batch", "prompt+output tokens",
                     "fits", "max seqs", "TTFT", "TPOT", "output tokens/s", "USD/h",
                     "USD/M out")
TRAINING_HEADERS = ("scenario", "model", "GPU", "GPUs", "tokens", "trainable params",
                    "FLOPs", "time", "GPU-h", "USD", "memory/GPU", "fits")
RICH_MAX_ROWS = 1_000
"""Tables up to this many rows are drawn by rich on a terminal (the limit sweeps use,
:data:`planner.cli.render.RICH_MAX_ROWS`)."""

TEXT_COLUMNS = 3
"""The first three columns (scenario, model, GPU) hold user text: left-aligned and measured in
terminal cells."""


def _fmt(fn: Callable[[Any], str]) -> Callable[[Sequence[Any]], list[str]]:
    return lambda values: stream.format_column(values, fn)


def _inference_columns(fv: FleetValues, index: list[int], values: Any) -> list[list[str]]:
    rows = [fv.scenarios[i] for i in index]
    out = [[f"{s.fleet}/{s.name}" for s in rows], [s.model for s in rows],
           [s.gpu for s in rows]]
    out.append(_fmt(str)([s.inputs["gpus"] for s in rows]))
    out.append(_fmt(str)([s.inputs["batch"] for s in rows]))
    out.append(_fmt(lambda pair: f"{pair[0]:,}+{pair[1]:,}")(
        [(s.inputs["prompt_tokens"], s.inputs["output_tokens"]) for s in rows]))
    fits = output_list(values, "fits")
    short = _fmt(fmt_bytes_gib)(output_list(values, "shortfall_bytes"))
    out.append(["yes" if f else f"no (−{s})" for f, s in zip(fits, short, strict=True)])
    out.append(_fmt(fmt_count)(output_list(values, "max_concurrent_sequences")))
    out.append(_fmt(fmt_seconds)(output_list(values, "ttft_s")))
    out.append(_fmt(fmt_seconds)(output_list(values, "tpot_s")))
    out.append(_fmt(lambda v: f"{v:,.0f}")(output_list(values, "throughput_tokens_per_s")))
    out.append(_fmt(fmt_usd)(output_list(values, "cost_usd_per_hour")))
    out.append(_fmt(fmt_usd)(output_list(values, "cost_usd_per_million_output_tokens")))
    return out


def _training_columns(fv: FleetValues, index: list[int], values: Any) -> list[list[str]]:
    rows = [fv.scenarios[i] for i in index]
    out = [[f"{s.fleet}/{s.name}" for s in rows], [s.model for s in rows],
           [s.gpu for s in rows]]
    out.append(_fmt(str)([s.inputs["gpus"] for s in rows]))
    out.append(_fmt(lambda v: f"{v:,.0f}")([s.inputs["train_tokens"] for s in rows]))
    out.append(_fmt(fmt_count)(output_list(values, "trainable_params")))
    out.append(_fmt(lambda v: f"{v:.3g}")(output_list(values, "train_flops")))
    out.append(_fmt(fmt_seconds)(output_list(values, "train_time_s")))
    out.append(_fmt(lambda v: f"{v:,.1f}")(output_list(values, "gpu_hours")))
    out.append(_fmt(fmt_usd)(output_list(values, "train_cost_usd")))
    out.append(_fmt(fmt_bytes_gib)(output_list(values, "train_memory_bytes_per_gpu")))
    out.append(["yes" if f else "no" for f in output_list(values, "train_fits")])
    return out


def _width(headers: Sequence[str], columns: Sequence[Sequence[str]]) -> int:
    """The drawn width of a box table (cells measured with ``len``: a lower bound)."""
    return sum(max(len(h), max(map(len, c), default=0)) + 3
               for h, c in zip(headers, columns, strict=True)) + 1


def scenario_table(fv: FleetValues) -> None:
    """Print the inference and the training scenarios of ``fv`` with their headline outputs."""
    tables = []
    for kind, title, headers, build in (
            ("inference", "Inference scenarios", INFERENCE_HEADERS, _inference_columns),
            ("training", "Training scenarios", TRAINING_HEADERS, _training_columns)):
        if kind in fv.by_kind:
            index, values = fv.by_kind[kind]
            tables.append((title, headers, build(fv, index, values)))
    small = all(len(columns[0]) <= RICH_MAX_ROWS for _t, _h, columns in tables)
    too_wide = any(_width(headers, columns) > RICH_CONSOLE_WIDTH
                   for _t, headers, columns in tables)
    if small and (too_wide or sys.stdout.isatty()):
        # lazy: loads rich (~39 ms): a short table on a terminal, in colour
        from planner.cli import render

        render.scenario_list(fv.scenarios, list(fv.records()))
        return
    if not fv.scenarios:
        sys.stdout.write("no scenarios\n")
        return
    for title, headers, columns in tables:
        stream.write_box_table(title, headers, columns,
                               [i < TEXT_COLUMNS for i in range(len(headers))],
                               wide=[i < TEXT_COLUMNS for i in range(len(headers))])


def scenario_json(fv: FleetValues) -> None:
    """Print every scenario of ``fv`` with all its outputs as one JSON list, streamed."""

    def records() -> Any:
        names = [f.name for f in fields(Scenario)]
        for sc, out in zip(fv.scenarios, fv.records(), strict=True):
            # what asdict(sc) gives, without its deep copy: the text printed is the same
            data = {name: getattr(sc, name) for name in names}
            data["outputs"] = out
            yield data

    stream.write_json_list(records(), len(fv.scenarios))
