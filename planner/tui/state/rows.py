"""The scenario sheet's rules as plain functions: which rows a grid shows and in what order,
how a row recomputes with an edit, what explains an output, and which editor a cell gets.

They hold no state and touch no widget, so :mod:`planner.tui.sheet` stays about the screen
and these stay easy to read on their own. Scenarios are evaluated here, in the UI thread:
the estimator is fast enough that an edited row is shown recomputed before it is saved.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from planner.compute import verdict
from planner.compute.explain import render_text
from planner.compute.table import inputs_of
from planner.core.errors import PlannerError
from planner.spec.domain import Change, Scenario
from planner.tui.state import cells
from planner.tui.state.cell_edit import CellEdit
from planner.tui.state.editline import LineBuffer
from planner.tui.state.types import GpuInfo, ModelInfo

if TYPE_CHECKING:
    from planner.compute.explain import ExplainNode
    from planner.compute.inputs import InputColumn
    from planner.compute.profiles import CalibrationFigures

CHOICE_FIELDS = ("model", "gpu")
"""Cells chosen from the catalog."""

Outputs = Mapping[str, Any]
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
    if key in TEXT_FIELDS:
        return (0, str(getattr(sc, key)).lower())
    value = sc.inputs.get(key, outputs.get(key))
    if isinstance(value, (int, float)):
        return (0, float(value))
    return (1, str(value))


TEXT_FIELDS = ("name", "model", "gpu", "lora_targets")
"""Columns held on the scenario itself (sorted case-insensitively), not in its inputs."""


SHARED_VALUES_PER_INPUT = 4_096
"""Distinct values of one input remembered by :func:`share_values`; past that many the input
is left alone (its values rarely repeat, and remembering them would cost more than it saves)."""


def share_values(scenarios: list[Scenario], seen: dict[str, dict[Any, Any]] | None = None
                 ) -> list[Scenario]:
    """``scenarios`` with equal input values made one object, input by input (returned as
    given; their ``inputs`` dicts are updated in place).

    A fleet read from the database has a fresh float or string object for every input of
    every row, ~1.2 KB per scenario; in a big fleet most values repeat (defaults, a few
    dtypes), so sharing them saves ~100 MB at 100,000 scenarios. A value is only replaced by
    one of the same type that prints the same (1 and 1.0 and True are equal in Python but
    shown differently, and so are 0.0 and -0.0). ``seen`` (input → its values met) carries
    the shared values over from one call to the next."""
    seen = {} if seen is None else seen
    for sc in scenarios:
        _share_inputs(sc.inputs, seen)
    return scenarios


def _share_inputs(inputs: dict[str, Any], seen: dict[str, dict[Any, Any]]) -> None:
    """One scenario's ``inputs`` with each value replaced by the equal one met before (see
    :func:`share_values`), in place."""
    for key, value in inputs.items():
        known = seen.get(key)
        if known is None:
            known = seen[key] = {}
        elif len(known) >= SHARED_VALUES_PER_INPUT:  # values that rarely repeat
            continue
        try:
            kept = known.setdefault(value, value)
        except TypeError:  # unhashable: kept as is
            continue
        if kept is not value and type(kept) is type(value) and (
                value != 0 or repr(kept) == repr(value)):
            inputs[key] = kept


def haystack(sc: Scenario) -> str:
    """What the filter searches in a scenario: name, model, GPU and notes, lower case."""
    return " ".join((sc.name, sc.model, sc.gpu, sc.notes)).lower()


def visible(scenarios: Mapping[int, Scenario], outputs: Mapping[int, Outputs], kind: str,
            filter_text: str, sort_key: tuple[str, bool] | None) -> list[int]:
    """The ids a grid shows, in order: the kind's scenarios that contain ``filter_text``,
    sorted by ``sort_key`` (column, descending) or else by name.

    The rule, row by row; :class:`KindIndex` computes the same order on arrays."""
    ids = [i for i, s in scenarios.items() if s.kind == kind]
    if filter_text:
        needle = filter_text.lower()
        ids = [i for i in ids if needle in haystack(scenarios[i])]
    ids.sort(key=lambda i: scenarios[i].name)
    if sort_key is not None:
        key, reverse = sort_key
        ids.sort(key=lambda i: sort_value(scenarios[i], outputs[i], key), reverse=reverse)
        if key in verdict.COST_COLUMNS:  # a cost that buys no deployment sorts last
            ids.sort(key=lambda i: not verdict.usable(outputs[i]))
    return ids


STRING_ARRAY_LIMIT_BYTES = 64 << 20
"""Largest fixed-width string array the filter searches in one numpy call (4 bytes a
character times the longest haystack times the rows); past it, notes long enough to make the
array huge, the haystacks are searched one by one."""


def _contains(texts: np.ndarray, needle: str) -> np.ndarray:
    """Which of ``texts`` (a numpy string array, or an object array of str) contain
    ``needle``: one vectorized call on fixed-width strings (~1.5 ms for 100,000 rows)."""
    if texts.dtype.kind == "U":
        find = getattr(getattr(np, "strings", None), "find", None) or np.char.find
        found: np.ndarray = find(texts, needle) >= 0
        return found
    return np.fromiter((needle in t for t in texts), dtype=bool, count=len(texts))


def _string_array(texts: list[str]) -> np.ndarray:
    """``texts`` as a fixed-width numpy string array, or an object array when that would
    take more than :data:`STRING_ARRAY_LIMIT_BYTES`."""
    longest = max(map(len, texts), default=1)
    if 4 * longest * len(texts) > STRING_ARRAY_LIMIT_BYTES:
        return np.array(texts, dtype=object)
    return np.array(texts, dtype=f"<U{max(1, longest)}")


class KindIndex:
    """One kind's scenarios as arrays, in name order: what the grid filters and sorts on.

    ``ids`` (int64) and the filter's haystacks (``texts``) are aligned and kept in name order
    as rows come, go or are renamed (an insert or delete is one array copy, not a rebuild).
    Filtering is one vectorized substring search over ``texts`` (narrowed to the previous
    matches while the text typed only grows); sorting is one stable ``argsort`` over a column
    gathered from the rows, cached until a row changes. Both reproduce :func:`visible`."""

    def __init__(self, scenarios: Sequence[Scenario]) -> None:
        ordered = sorted(scenarios, key=lambda sc: sc.name)
        self.ids = np.fromiter((sc.id for sc in ordered), dtype=np.int64, count=len(ordered))
        self.names: list[str] = [sc.name for sc in ordered]
        self._texts = _string_array([haystack(sc) for sc in ordered])
        self._pending: list[tuple[int, str | None]] = []
        """Changes of :attr:`texts` not applied yet, in order: (position, haystack) an
        insert, (position, None) a delete."""
        self.generation = 0
        """Bumped on every change of a row: what the caches below are valid for."""
        self._filter: tuple[int, str, np.ndarray] | None = None
        self._sort: tuple[int, str, bool, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    # ---- changes
    def changed(self) -> None:
        """A row's values changed (not its name or haystack): drop the cached sort."""
        self.generation += 1

    def add(self, sc: Scenario) -> None:
        """Insert a scenario at its place in name order."""
        at = bisect.bisect_right(self.names, sc.name)
        self.names.insert(at, sc.name)
        self.ids = np.insert(self.ids, at, sc.id)
        self._pending.append((at, haystack(sc)))
        self.generation += 1

    def remove(self, sid: int) -> bool:
        """Take a scenario out; False if it is not here."""
        where = np.flatnonzero(self.ids == sid)
        if not len(where):
            return False
        at = int(where[0])
        del self.names[at]
        self.ids = np.delete(self.ids, at)
        self._pending.append((at, None))
        self.generation += 1
        return True

    @property
    def texts(self) -> np.ndarray:
        """The filter's haystacks (:func:`haystack`), aligned with :attr:`ids`: a
        fixed-width string array, or an object array past :data:`STRING_ARRAY_LIMIT_BYTES`.

        A row action changes them lazily: at 100,000 rows the array is ~24 MB, and copying
        it for each insert and delete took 12-24 ms of a new, rename or delete; the changes
        wait here until the next filter reads them (one copy each, as before)."""
        texts = self._texts
        for at, text in self._pending:
            if text is None:
                texts = np.delete(texts, at)
                continue
            if texts.dtype.kind == "U" and len(text) > texts.dtype.itemsize // 4:  # widen
                fits = 4 * len(text) * (len(texts) + 1) <= STRING_ARRAY_LIMIT_BYTES
                texts = texts.astype(f"<U{len(text)}" if fits else object)
            texts = np.insert(texts, at, text)
        self._texts, self._pending = texts, []
        return texts

    def replace(self, sc: Scenario) -> None:
        """A scenario changed (renamed, new notes...): take it out and put it back in place."""
        self.remove(sc.id)
        self.add(sc)

    # ---- the view
    def matching(self, filter_text: str) -> np.ndarray | None:
        """Boolean mask over ``ids`` of the rows whose haystack contains ``filter_text``
        (None: no filter)."""
        if not filter_text:
            return None
        needle = filter_text.lower()
        cached = self._filter
        if cached is not None and cached[0] == self.generation:
            if cached[1] == needle:
                return cached[2]
            if cached[1] and cached[1] in needle:  # typing on: search the matches only
                mask = cached[2].copy()
                rows = np.flatnonzero(mask)
                mask[rows] = _contains(self.texts[rows], needle)
                self._filter = (self.generation, needle, mask)
                return mask
        mask = _contains(self.texts, needle)
        self._filter = (self.generation, needle, mask)
        return mask

    def order(self, key: str, reverse: bool, scenarios: Mapping[int, Scenario],
              outputs: Mapping[int, Outputs]) -> np.ndarray:
        """Positions in ``ids`` sorted by column ``key`` (stable, ties in name order; numbers
        before text, text case-insensitive, as :func:`sort_value`)."""
        cached = self._sort
        if cached is not None and cached[:3] == (self.generation, key, reverse):
            return cached[3]
        values = self._column(key, scenarios, outputs)
        keys = _sort_keys(key, values)
        order = _stable_order(keys, reverse)
        if key in verdict.COST_COLUMNS:  # a cost that buys no deployment sorts last
            usable = self._usable(outputs)[order]
            order = np.concatenate((order[usable], order[~usable]))
        self._sort = (self.generation, key, reverse, order)
        return order

    def _column(self, key: str, scenarios: Mapping[int, Scenario],
                outputs: Mapping[int, Outputs]) -> list[Any] | np.ndarray:
        """Column ``key`` of the rows in ``ids`` order: a text field lower-cased, an input
        from the scenarios, an output read as a column where the outputs can gather one."""
        ids = self.ids.tolist()
        if key in TEXT_FIELDS:
            return [str(getattr(scenarios[i], key)).lower() for i in ids]
        return self._field_column(key, ids, [scenarios[i].inputs for i in ids], outputs)

    def _field_column(self, key: str, ids: list[int], held: list[dict[str, Any]],
                      outputs: Mapping[int, Outputs]) -> list[Any] | np.ndarray:
        """Column ``key`` of the rows ``ids`` (their inputs ``held``): an input when every
        row holds it, an output read as a column when none does, else row by row."""
        gather = getattr(outputs, "gather", None)
        has = [key in inputs for inputs in held]
        if all(has):  # an input
            return [inputs[key] for inputs in held]
        if gather is not None and not any(has):  # an output: read as a column
            return gather(key, self.ids)
        return [inputs[key] if here else outputs[i].get(key)
                for i, inputs, here in zip(ids, held, has, strict=True)]

    def _usable(self, outputs: Mapping[int, Outputs]) -> np.ndarray:
        """Per position in ``ids``: the row fits and is not saturated
        (:func:`planner.compute.verdict.usable`), read as columns where the outputs are."""
        gather = getattr(outputs, "gather", None)
        if gather is None:
            return np.fromiter((verdict.usable(outputs[i]) for i in self.ids.tolist()),
                               dtype=bool, count=len(self.ids))
        fits = np.asarray(gather("engine_fits", self.ids), dtype=object)
        saturated = np.asarray(gather("saturated", self.ids), dtype=object)
        return np.fromiter(((f is None or bool(f)) and not bool(s)
                            for f, s in zip(fits, saturated, strict=True)),
                           dtype=bool, count=len(self.ids))

    def visible(self, filter_text: str, sort_key: tuple[str, bool] | None,
                scenarios: Mapping[int, Scenario], outputs: Mapping[int, Outputs]
                ) -> np.ndarray:
        """The ids the grid shows, in order (as :func:`visible`)."""
        mask = self.matching(filter_text)
        if sort_key is None:
            return self.ids if mask is None else self.ids[mask]
        order = self.order(*sort_key, scenarios, outputs)
        if mask is not None:
            order = order[mask[order]]
        return self.ids[order]


def _sort_keys(key: str, values: list[Any] | np.ndarray) -> tuple[np.ndarray, ...]:
    """The keys :func:`_stable_order` sorts ``values`` of column ``key`` by: text for a text
    field, the numbers for a numeric column, else text, then number, numbers first."""
    gathered = np.asarray(values)  # numbers (and flags) come out as a numeric dtype
    if key in TEXT_FIELDS:
        return (np.array(values, dtype=str),)
    if gathered.dtype.kind in "biuf":
        return (gathered.astype(np.float64),)
    numeric = np.fromiter((isinstance(v, (int, float)) for v in values), dtype=bool,
                          count=len(values))
    number = np.array([float(v) if n else 0.0 for v, n in zip(values, numeric, strict=True)])
    text = np.array(["" if n else str(v) for v, n in zip(values, numeric, strict=True)],
                    dtype=str)
    return (text, number, ~numeric)


def _stable_order(keys: tuple[np.ndarray, ...], reverse: bool) -> np.ndarray:
    """A stable sort's permutation by ``keys`` (the last the primary, as ``np.lexsort``);
    descending keeps ties in their original order, as ``list.sort(reverse=True)``."""
    count = len(keys[0])
    if not reverse:
        return (np.argsort(keys[0], kind="stable") if len(keys) == 1
                else np.lexsort(keys)).astype(np.int64)
    flipped = tuple(k[::-1] for k in keys)
    ascending = (np.argsort(flipped[0], kind="stable") if len(keys) == 1
                 else np.lexsort(flipped))
    return (count - 1 - ascending[::-1]).astype(np.int64)


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
        return _choice_edit(sc, key, reference, column)
    unit = f" [{column.measured_unit}]" if column.measured_unit else ""
    text = str(cells.cell(sc, outputs, key, "input")).replace(",", "")
    return CellEdit(sc.id, key, reference + unit, f"{column.help} · {column.allowed()}",
                    column.parse, LineBuffer.of(text))


def _choice_edit(sc: Scenario, key: str, reference: str, column: InputColumn) -> CellEdit:
    """The editor of a choice input (its choices) or a flag (yes or no)."""
    choices = list(column.choices) if column.kind == "choice" else ["yes", "no"]
    current = str(sc.inputs[key]) if column.kind == "choice" else (
        "yes" if sc.inputs[key] else "no")
    return CellEdit.of_choices(sc.id, key, reference, column.help, column.parse, choices,
                               current)


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
