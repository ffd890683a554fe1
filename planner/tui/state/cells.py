"""What the UI's grid shows for a scenario: its columns, their widths and each cell's text and
style. Pure functions over scenarios and their outputs; no widgets. The details pane's text
is in :mod:`planner.tui.state.details`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
from rich.text import Text

from planner.compute import verdict
from planner.compute.outputs import format_value, output_columns
from planner.spec.domain import Scenario

__all__ = ["format_value"]
from planner.compute.table import inputs_of

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
:data:`planner.compute.verdict.VERDICT`, the same fields every screen leads with."""

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
    members = _group_members(kind, pinned)
    cols = [("name", header("scenario", ""), "meta")]
    cols += [(n, header(outputs[n].label, outputs[n].unit), "output") for n in pinned]
    for group in GROUPS:
        if group in folded:
            cols.append((f"group:{group}", header(f"▸ {group}", "g unfolds"), "group"))
        else:
            cols += members[group]
    return tuple(cols)


def _group_members(kind: str, pinned: tuple[str, ...]
                   ) -> dict[str, list[tuple[str, str, str]]]:
    """(key, header, role) of each group's columns, by group: the inputs (model, GPU, a
    training row's LoRA targets, then the inputs), then the key outputs not ``pinned``."""
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
    return members


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
        rest, rest_outputs, rest_row = _past_measured(rows[MEASURED_ROWS:])
    if rest:
        picked += _extremes(columns, rest, rest_outputs, rest_row)
    _widen(widths, columns, picked)
    return widths


def _past_measured(tail: Sequence[tuple[Scenario, Mapping[str, Any]]]
                   ) -> tuple[list[Scenario], Callable[[str], Sequence[Any]],
                              Callable[[int], Mapping[str, Any]]]:
    """The rows past the measured ones as ``rest``, ``rest_outputs`` and ``rest_row`` (see
    :func:`column_widths`)."""
    def outputs_of(key: str) -> list[Any]:
        return [out.get(key) for _sc, out in tail]

    def row_at(at: int) -> Mapping[str, Any]:
        return tail[at][1]

    return [sc for sc, _out in tail], outputs_of, row_at


def _widen(widths: dict[str, int], columns: tuple[tuple[str, str, str], ...],
           picked: list[tuple[Scenario, Mapping[str, Any]]]) -> None:
    """Widen each value column of ``widths`` to its widest cell among the ``picked`` rows."""
    for key, _header, role in columns:
        if key == "name" or role == "group":
            continue
        widest = max((cell_width(sc, out, key, role) for sc, out in picked), default=0)
        widths[key] = max(widths[key], widest)


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
    :func:`planner.compute.verdict.fits`) or its training memory fits."""
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
    """A verdict column's cell (:mod:`planner.compute.verdict`): a dash where the scenario has
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
