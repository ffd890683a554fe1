"""The scenario sheet's rules as plain functions: which rows a grid shows and in what order,
how a row recomputes with an edit, what explains an output, and which editor a cell gets.

They hold no state and touch no widget, so :mod:`planner.tui.sheet` stays about the screen
and these stay easy to read on their own. Scenarios are evaluated here, in the UI thread:
the estimator is fast enough that an edited row is shown recomputed before it is saved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from planner.domain import Change, Scenario
from planner.errors import PlannerError
from planner.sheet.explain import render_text
from planner.sheet.table import inputs_of
from planner.tui import cells
from planner.tui.cell_edit import CellEdit
from planner.tui.editline import LineBuffer
from planner.tui.types import GpuInfo, ModelInfo

if TYPE_CHECKING:
    from planner.sheet.explain import ExplainNode
    from planner.sheet.inputs import InputColumn
    from planner.sheet.profiles import CalibrationFigures

CHOICE_FIELDS = ("model", "gpu")
"""Cells chosen from the catalog."""

Outputs = dict[str, Any]
"""A scenario's computed columns (values of any column type: numbers, flags, text)."""


def input_column(kind: str, key: str) -> InputColumn | None:
    """The input column ``key`` of a scenario kind (None for name, model, gpu, LoRA targets)."""
    return next((c for c in inputs_of(kind) if c.name == key), None)


def inputs(sc: Scenario) -> dict[str, Any]:
    """The scenario's values of its kind's input columns."""
    names = {c.name for c in inputs_of(sc.kind)}
    return {k: v for k, v in sc.inputs.items() if k in names}


def sort_value(sc: Scenario, outputs: Outputs, key: str) -> tuple[int, float | str]:
    """A sort key for column ``key``: numbers before text, text case-insensitive."""
    if key in ("name", "model", "gpu", "lora_targets"):
        return (0, str(getattr(sc, key)).lower())
    value = sc.inputs.get(key, outputs.get(key))
    if isinstance(value, (int, float)):
        return (0, float(value))
    return (1, str(value))


def visible(scenarios: Mapping[int, Scenario], outputs: Mapping[int, Outputs], kind: str,
            filter_text: str, sort_key: tuple[str, bool] | None) -> list[int]:
    """The ids a grid shows, in order: the kind's scenarios that contain ``filter_text``,
    sorted by ``sort_key`` (column, descending) or else by name."""
    ids = [i for i, s in scenarios.items() if s.kind == kind]
    if filter_text:
        needle = filter_text.lower()
        ids = [i for i in ids if needle in " ".join(
            (scenarios[i].name, scenarios[i].model, scenarios[i].gpu,
             scenarios[i].notes)).lower()]
    if sort_key is not None:
        key, reverse = sort_key
        ids.sort(key=lambda i: sort_value(scenarios[i], outputs[i], key), reverse=reverse)
    else:
        ids.sort(key=lambda i: scenarios[i].name)
    return ids


def explain_tree(sc: Scenario, column: str, models: Sequence[ModelInfo],
                 gpus: Sequence[GpuInfo], depth: int = 8,
                 profiles: Sequence[CalibrationFigures] | None = None) -> ExplainNode | None:
    """The explanation tree of one output (None if its model or GPU is missing); a figure a
    calibration profile replaced is tagged with it."""
    # lazy: ~5 ms of imports, only when this runs
    from planner import service

    try:
        model = next(m for m in models if m.name == sc.model).spec
        gpu = next(g for g in gpus if g.name == sc.gpu).spec
        tree: ExplainNode = service.explain(model, gpu, inputs(sc), column, kind=sc.kind,
                                            lora_targets=sc.lora_targets, depth=depth,
                                            profiles=profiles)
    except (StopIteration, PlannerError):
        return None
    return tree


def explain_text(sc: Scenario, column: str, models: Sequence[ModelInfo],
                 gpus: Sequence[GpuInfo], depth: int = 8,
                 profiles: Sequence[CalibrationFigures] | None = None) -> str:
    """The explanation of one output as text ('' if it cannot be explained)."""

    tree = explain_tree(sc, column, models, gpus, depth, profiles)
    return render_text(tree) if tree is not None else ""


def cell_edit(sc: Scenario, outputs: Outputs, key: str, models: Sequence[ModelInfo],
              gpus: Sequence[GpuInfo]) -> CellEdit:
    """The formula-bar editor for input cell ``key``: choices for the catalog, dtypes and
    flags, a line of text for numbers and LoRA targets."""
    column = input_column(sc.kind, key)
    reference = f"{sc.name} · {key}"
    if key in CHOICE_FIELDS:
        names = [m.name for m in models] if key == "model" else [g.name for g in gpus]
        return CellEdit.of_choices(sc.id, key, reference, "", str, names, getattr(sc, key))
    if key == "lora_targets":
        return CellEdit(sc.id, key, reference,
                        "comma-separated modules: q,k,v,o,gate,up,down or all",
                        lambda text: text.strip(), LineBuffer.of(sc.lora_targets))
    if column is None:
        raise KeyError(key)
    if column.kind in ("choice", "bool"):
        choices = list(column.choices) if column.kind == "choice" else ["yes", "no"]
        current = str(sc.inputs[key]) if column.kind == "choice" else (
            "yes" if sc.inputs[key] else "no")
        return CellEdit.of_choices(sc.id, key, reference, column.help, column.parse, choices,
                                   current)
    unit = f" [{column.measured_unit}]" if column.measured_unit else ""
    text = str(cells.cell(sc, outputs, key, "input")).replace(",", "")
    return CellEdit(sc.id, key, reference + unit, f"{column.help} · {column.allowed()}",
                    column.parse, LineBuffer.of(text))


def describe_step(what: str, changes: Sequence[Change], names: Mapping[int, str]) -> str:
    """What an undo or redo did, in words: for each scenario it touched, each field with the
    value it had and the value it has now, and who made the change and when
    (``names``: scenario id → name)."""
    undo = what == "undo"
    parts = []
    for change in changes:
        name = names.get(change.scenario_id or -1, f"scenario #{change.scenario_id}")
        old, new = ((change.new_value, change.old_value) if undo
                    else (change.old_value, change.new_value))
        parts.append(f"{name} · {change.field} {_shown(old)} → {_shown(new)}")
    first = changes[0] if changes else None
    who = ""
    if first is not None:
        when = first.changed_at.strftime("%Y-%m-%d %H:%M") if first.changed_at else ""
        who = f" (the change {first.author or 'someone (not recorded)'} made"
        who += f" at {when})" if when else ")"
    return f"{what}: " + "; ".join(parts) + who


def _shown(value: object) -> str:
    """A logged value as the grid would show it (text quoted, numbers with separators)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,g}"
    return repr(value) if isinstance(value, str) else str(value)


def changed_fields(old: Scenario, new: Scenario) -> dict[str, Any]:
    """The fields of a scenario that differ between two reads of it, with the new values."""
    out = {k: getattr(new, k) for k in ("name", "model", "gpu", "notes", "lora_targets")
           if getattr(old, k) != getattr(new, k)}
    out.update({k: v for k, v in new.inputs.items() if old.inputs.get(k) != v})
    return out


def edit_text(value: Any) -> str:
    """A value as it is typed in the formula bar (a flag as yes/no)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
