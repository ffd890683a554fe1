"""What-if tools over one scenario: sensitivity tables (sweeps) and goal seek (solve).

A *variation* is a column and the values to try: ``batch=1,2,4,...,256`` (a list, with ``...``
continuing an arithmetic or geometric progression), ``gpus=1..64`` (an inclusive integer
range), ``gpu=h100-sxm,h200`` or ``gpu=*`` (every GPU). The grid is the product of the
variations over the base scenario; it evaluates in one vectorized call. Combinations that break a
cross-field rule (``gpus`` not a multiple of ``tp*pp``, ``tp`` not dividing the heads) are kept
in the table as invalid rows with the reason, never silently dropped.

Solve picks, among the grid rows that satisfy a constraint (:mod:`planner.compute.expr`), the one
with the largest or smallest objective; ties go to the lowest cost per hour, then the first in
grid order. Answers are exact integers: the grid lists every candidate, and a single integer
variable whose range is too large to list is searched by bisection on the constraint (which
must then hold for all values on one side of the answer, as "fits" does for context or batch);
the answer is checked at the boundary.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.compute import expr as expressions
from planner.compute.distinct import factorize
from planner.compute.inputs import InputColumn, input_columns
from planner.compute.kinds import graph, inputs_of
from planner.compute.outputs import GPU_COLUMNS, figure_columns, output_columns
from planner.compute.parallelism import parallelism_reasons
from planner.compute.profiles import CalibrationFigures
from planner.compute.table import evaluate_table
from planner.core.errors import (
    PlannerError,
    ValidationError,
    close_matches,
    echo,
    not_one_of,
    or_list,
)
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec

MAX_GRID = 5_000_000
"""Largest grid a sweep or solve evaluates (rows)."""
BRUTE_FORCE_LIMIT = 2_000_000
"""A single integer variable with more candidates than this is solved by bisection."""


@dataclass(frozen=True, slots=True)
class Variation:
    """One varied column and the values to try, in order."""

    column: str
    values: tuple[Any, ...]


def _progression(items: list[float], last: float, column: str) -> list[float]:
    """``a, b, ..., z``: arithmetic if b-a is constant, geometric if b/a is; up to ``last``."""
    if len(items) < 2:
        raise ValidationError(column, "needs at least two values before '...' to continue")
    out = _arithmetic(items, last)
    if out is None:
        out = _geometric(items, last)
    if out is None:
        raise ValidationError(column, "values before '...' must step by a constant difference "
                              "or ratio toward the last value", value=items)
    if abs(out[-1] - last) > 1e-9 * max(1.0, abs(last)):
        raise ValidationError(column, f"the progression {items[0]:g}, {items[1]:g}, ... does "
                              f"not reach {last:g}", value=last)
    return out


def _arithmetic(items: list[float], last: float) -> list[float] | None:
    """``items`` continued by their constant difference up to ``last`` (within 1e-9 of a
    step), or None when the difference is not constant, zero or away from ``last``."""
    diffs = {b - a for a, b in itertools.pairwise(items)}
    if not (len(diffs) == 1 and (step := diffs.pop()) != 0 and (last - items[-1]) * step > 0):
        return None
    out = list(items)
    while (out[-1] + step - last) * step <= 1e-9 * abs(step):
        out.append(out[-1] + step)
    return out


def _geometric(items: list[float], last: float) -> list[float] | None:
    """``items`` continued by their constant ratio (> 1) up to ``last``, or None."""
    ratios = {b / a for a, b in itertools.pairwise(items) if a} if all(items) else set()
    if not (len(ratios) == 1 and (ratio := ratios.pop()) > 1 and last > items[-1]):
        return None
    out = list(items)
    while out[-1] * ratio <= last * (1 + 1e-12):
        out.append(out[-1] * ratio)
    return out


def parse_variation(text: str, *, gpus: Sequence[str] = (), models: Sequence[str] = (),
                    columns: Mapping[str, InputColumn] | None = None) -> Variation:
    """``column=values`` (see the module docstring); each value is validated for its column."""
    column, sep, spec = text.partition("=")
    column = column.strip()
    if not sep or not column or not spec.strip():
        raise ValidationError(text, "write a variation as column=v1,v2,... or column=a..b")
    known = dict(columns or {})
    if column not in known and column not in ("gpu", "model"):
        raise ValidationError(column, not_one_of(column, ["gpu", "model", *sorted(known)],
                                                 "is not an input that can vary",
                                                 "`planner estimate --help` lists them"))
    if column in ("gpu", "model"):
        return _catalog_variation(column, spec, list(gpus if column == "gpu" else models))
    col = known[column]
    if col.kind in ("choice", "bool", "text"):
        return Variation(column, _listed(col, spec))
    return Variation(column, _numbers(col, column, spec.strip()))


def _listed(col: InputColumn, spec: str) -> tuple[Any, ...]:
    """The values of a choice, flag or text column (``calibration=none,auto,my-profile``):
    each parsed by the column's rule; ``*`` every choice, or both truth values."""
    if col.kind != "text" and spec.strip() == "*":
        return col.choices if col.kind == "choice" else (False, True)
    return tuple(col.parse(v) for v in spec.split(","))


def _catalog_variation(column: str, spec: str, catalog: list[str]) -> Variation:
    """``gpu=`` / ``model=``: names of the catalog (case-insensitively), or ``*`` for all;
    an unknown name is refused with the closest names."""
    if spec.strip() == "*":
        return Variation(column, tuple(catalog))
    lower = {c.lower(): c for c in catalog}
    picked = []
    for item in (v.strip() for v in spec.split(",")):
        if item.lower() not in lower:
            close = close_matches(item, catalog)
            noun = "GPUs" if column == "gpu" else "models"
            raise ValidationError(column, (f"one of the catalog's {len(catalog)} "
                                           f"{noun} (or *)") + (
                f"; did you mean {or_list(close)}?" if close else ""), value=item)
        picked.append(lower[item.lower()])
    return Variation(column, tuple(picked))


def _numbers(col: InputColumn, column: str, spec: str) -> tuple[Any, ...]:
    """The values of a numeric column: a range ``a..b`` (integers), a progression
    ``a, b, ..., z`` (:func:`_progression`) or a list, each parsed by the column's rule."""
    if ".." in spec and "..." not in spec:
        low_text, _, high_text = spec.partition("..")
        low, high = col.parse(low_text), col.parse(high_text)
        if high < low or col.kind != "int":
            raise ValidationError(column, "a range a..b needs integers with a <= b", value=spec)
        if high - low + 1 > MAX_GRID:
            raise ValidationError(column, f"a range of at most {MAX_GRID:,} values", value=spec)
        return tuple(range(int(low), int(high) + 1))
    parts = [p.strip() for p in spec.split(",")]
    if "..." in parts:
        at = parts.index("...")
        if at != len(parts) - 2:
            raise ValidationError(column, "'...' must come just before the last value")
        head = [float(col.parse(p)) for p in parts[:at]]
        values = _progression(head, float(col.parse(parts[-1])), column)
    else:
        values = [col.parse(p) for p in parts]
    return tuple(col.parse(round(v) if col.kind == "int" else v) for v in values)


@dataclass(slots=True)
class Grid:
    """Rows of a what-if grid: the varied columns, validity, and the evaluated columns."""

    variations: list[Variation]
    varied: dict[str, np.ndarray]
    valid: np.ndarray
    reasons: np.ndarray
    values: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.valid)


def _grid_table(base: Mapping[str, Any], variations: Sequence[Variation]
                ) -> tuple[dict[str, Any], dict[str, np.ndarray], int]:
    sizes = [len(v.values) for v in variations]
    total = int(np.prod(sizes)) if sizes else 1
    if total > MAX_GRID:
        raise ValidationError("vary", f"the grid has {total:,} rows; at most {MAX_GRID:,}")
    seen = set()
    for v in variations:
        if v.column in seen:
            raise ValidationError(v.column, "is varied twice")
        seen.add(v.column)
    index = np.indices(sizes).reshape(len(sizes), -1) if sizes else np.zeros((0, 1), int)
    table = dict(base)
    varied: dict[str, np.ndarray] = {}
    for k, v in enumerate(variations):
        kind = object if isinstance(v.values[0], str) else None
        arr = np.asarray(v.values, dtype=kind)[index[k]]
        table[v.column] = arr
        varied[v.column] = arr
    return table, varied, total


def _validity(table: Mapping[str, Any], models: Mapping[str, ModelSpec], n: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose tp/pp/gpus fit the model (:data:`planner.compute.table.PARALLELISM_RULES`),
    and why not."""
    codes, names = factorize(table["model"], n)
    lower = {k.lower(): models[k] for k in models}
    specs = [lower.get(str(name).strip().lower()) for name in names]
    heads = np.array([s.attention.num_heads if s else 1 for s in specs], float)[codes]
    layers = np.array([s.num_layers if s else 1 for s in specs], float)[codes]
    tp, pp, gpus = (np.asarray(table.get(k, 1), dtype=float) for k in ("tp", "pp", "gpus"))
    reasons = parallelism_reasons(tp, pp, gpus, heads, layers, n)
    return reasons == "", reasons


def build_grid(base: Mapping[str, Any], variations: Sequence[Variation],
               models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec], *,
               kind: str = "inference", outputs: Sequence[str] | None = None,
               progress: Callable[[int, int], None] | None = None,
               profiles: Sequence[CalibrationFigures] | None = None) -> Grid:
    """Evaluate the product of ``variations`` over the ``base`` scenario (valid rows only;
    ``profiles``: the calibration profiles the ``calibration`` input may pick)."""
    table, varied, n = _grid_table(base, variations)
    valid, reasons = _validity(table, models, n)
    grid = Grid(list(variations), varied, valid, reasons)
    if not valid.any():
        return grid
    rows = {k: (np.asarray(v)[valid] if np.ndim(v) == 1 and not isinstance(v, str) else v)
            for k, v in table.items()}
    values = evaluate_table(rows, models, gpus, kind, outputs, progress=progress,
                            profiles=profiles)
    every = bool(valid.all())
    for name, value in values.items():
        if every:  # no invalid row to blank out: keep the arrays (broadcast views stay views)
            grid.values[name] = value
            continue
        full = np.full(n, np.nan, dtype=object if np.asarray(value).dtype == object else float)
        full[valid] = value
        grid.values[name] = full
    for column, arr in varied.items():
        grid.values[column] = arr
    return grid


def known_columns(kind: str) -> set[str]:
    """Every column a constraint or objective may name."""
    g = graph(kind)
    return (set(g.formulas) | set(g.derived) | {c.name for c in inputs_of(kind)}
            | set(figure_columns()) | set(GPU_COLUMNS) | {"model", "gpu"})


@dataclass(slots=True)
class Solution:
    """The best grid row, or none; with how many candidates were tried and were feasible."""

    found: bool
    objective: str
    sense: str
    values: dict[str, Any]
    candidates: int
    feasible: int
    method: str
    note: str = ""


def _constraint_mask(node: expressions.Node | None, values: Mapping[str, Any], n: int
                     ) -> np.ndarray:
    if node is None:
        return np.ones(n, dtype=bool)
    with np.errstate(invalid="ignore"):
        mask = expressions.holds(node, values)
    mask = np.broadcast_to(np.asarray(mask), (n,))
    if mask.dtype == object:
        mask = np.array([bool(m) if m == m else False for m in mask])
    return mask.astype(bool)


def _pick(values: Mapping[str, Any], mask: np.ndarray, objective: str, sense: str
          ) -> int | None:
    obj = np.asarray(values[objective], dtype=float)
    obj = np.broadcast_to(obj, mask.shape)
    ok = mask & np.isfinite(obj)
    if not ok.any():
        return None
    cost = np.broadcast_to(np.asarray(values.get("cost_usd_per_hour", 0.0), dtype=float),
                           mask.shape)
    key_obj = -obj if sense == "max" else obj
    order = np.lexsort((np.arange(len(obj)), np.nan_to_num(cost, nan=np.inf), key_obj))
    return int(next(i for i in order if ok[i]))


def _integer_columns() -> set[str]:
    """The integer inputs and the whole-count outputs (reported as ints)."""
    return ({c.name for c in input_columns().values() if c.kind == "int"}
            | {c.name for c in output_columns().values() if c.integer})


def _row(values: Mapping[str, Any], i: int) -> dict[str, Any]:
    """Row ``i`` as plain Python values; integer inputs and counts as ints."""
    ints = _integer_columns()
    out = {}
    for k, v in values.items():
        item = v[i] if np.ndim(v) == 1 and not isinstance(v, str) else v
        item = item.item() if hasattr(item, "item") else item
        if k in ints and isinstance(item, float) and item.is_integer():
            item = int(item)
        out[k] = item
    return out


def _checked_query(objective: str, sense: str, constraint: str | None, kind: str
                   ) -> tuple[set[str], expressions.Node | None]:
    """The columns of ``kind`` and the parsed ``constraint`` of a solve, after checking the
    sense, the objective and the constraint's names (shared by :func:`solve` and
    :func:`solve_best`)."""
    if sense not in ("max", "min"):
        raise ValidationError("sense", "max or min", value=sense)
    known = known_columns(kind)
    if objective not in known:
        close = close_matches(objective, sorted(known))
        raise PlannerError(f"unknown column {echo(objective)} to {sense}imize"
                           + (f"; did you mean {or_list(close)}?" if close else ""))
    node = None
    if constraint:
        node = expressions.parse(constraint)
        expressions.check_names(constraint, node, known)
        texts, conditions = typed_columns(kind)
        expressions.check_types(constraint, node, texts, conditions)
    return known, node


def typed_columns(kind: str) -> tuple[set[str], set[str]]:
    """The columns of ``kind`` a constraint reads as text (``model``, ``gpu``, choice and text
    inputs) and as conditions (yes/no inputs and outputs: ``fits``, ``meets_slo``)."""
    inputs = inputs_of(kind)
    texts = {"model", "gpu"} | {c.name for c in inputs if c.kind in ("choice", "text")}
    conditions = ({c.name for c in inputs if c.kind == "bool"}
                  | {name for name, c in output_columns().items() if c.unit == "bool"})
    return texts, conditions


def solve(base: Mapping[str, Any], objective: str, sense: str, constraint: str | None,
          variations: Sequence[Variation], models: Mapping[str, ModelSpec],
          gpus: Mapping[str, GpuSpec], *, kind: str = "inference",
          columns: Mapping[str, InputColumn] | None = None,
          profiles: Sequence[CalibrationFigures] | None = None) -> Solution:
    """Best row of the grid subject to ``constraint`` (see the module docstring)."""
    known, node = _checked_query(objective, sense, constraint, kind)
    variations = list(variations)
    inputs = dict(columns or {c.name: c for c in inputs_of(kind)})
    if not variations:
        low, high = _objective_range(base, objective, inputs, models)
        if high - low + 1 > BRUTE_FORCE_LIMIT:
            return _bisect(base, objective, sense, node, low, high, models, gpus, kind,
                           profiles)
        variations = [Variation(objective, tuple(range(low, high + 1)))]
    grid = build_grid(base, variations, models, gpus, kind=kind,
                      outputs=_wanted(known, node, objective, kind), profiles=profiles)
    values = {**{k: v for k, v in base.items()}, **grid.values}
    mask = _constraint_mask(node, values, len(grid)) & grid.valid
    best = _pick(values, mask, objective, sense)
    return Solution(best is not None, objective, sense,
                    _row(values, best) if best is not None else {}, len(grid),
                    int(mask.sum()), "grid")


def _objective_range(base: Mapping[str, Any], objective: str,
                     inputs: Mapping[str, InputColumn],
                     models: Mapping[str, ModelSpec]) -> tuple[int, int]:
    """The values an integer input being solved for may take without ``--vary``: its bounds
    (``prompt_tokens``: at most the model's positions); a computed or non-integer objective
    needs the values to try."""
    if objective not in inputs:
        raise ValidationError("vary", f"{objective} is computed: say what may change "
                              "(--vary column=values)")
    col = inputs[objective]
    if col.kind != "int":
        raise ValidationError("vary", f"give the values of {objective} to try (--vary)")
    low, high = int(col.minimum or 0), int(col.maximum or 0)
    if objective == "prompt_tokens":
        spec = models[str(base["model"])]
        if spec.max_position_embeddings:
            high = min(high, spec.max_position_embeddings)
    return low, high


def _wanted(known: set[str], node: expressions.Node | None, objective: str, kind: str
            ) -> list[str]:
    """The formula columns a solve evaluates: those the constraint names, the objective and
    ``cost_usd_per_hour`` (the tie-break)."""
    wanted = sorted((known & (expressions.names(node) if node else set()))
                    | {objective, "cost_usd_per_hour"} - {"model", "gpu"})
    return [w for w in wanted if w in graph(kind).formulas]


def _bisect(base: Mapping[str, Any], variable: str, sense: str,
            node: expressions.Node | None, low: int, high: int,
            models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec], kind: str,
            profiles: Sequence[CalibrationFigures] | None = None) -> Solution:
    """Exact integer answer for one variable over a huge range, assuming the constraint holds
    on one side of the answer (all values below it when maximizing, above when minimizing)."""
    evaluated = 0

    def feasible(points: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        nonlocal evaluated
        evaluated += len(points)
        table = {**base, variable: points}
        valid, _ = _validity(table, models, len(points))
        values = {**base, **evaluate_table(table, models, gpus, kind, profiles=profiles)}
        return _constraint_mask(node, values, len(points)) & valid, values

    # probe a log-spaced set of points to find a feasible/infeasible boundary bracket
    probes = np.unique(np.concatenate([np.geomspace(max(low, 1), high, 64).round(),
                                       [low, high]]).astype(np.int64))
    ok, _ = feasible(probes)
    if not ok.any():
        return Solution(False, variable, sense, {}, evaluated, 0, "bisection")
    answer = _boundary(lambda x: bool(feasible(np.array([x]))[0][0]), probes, ok, sense)
    mask, values = feasible(np.array([answer]))
    note = ""
    neighbour = answer + (1 if sense == "max" else -1)
    if low <= neighbour <= high and feasible(np.array([neighbour]))[0][0]:
        note = f"the constraint also holds at {neighbour}: it is not monotone in {variable}"
    return Solution(bool(mask[0]), variable, sense, _row(values, 0), evaluated,
                    int(ok.sum()), "bisection", note)


def _boundary(holds: Callable[[int], bool], probes: np.ndarray, ok: np.ndarray, sense: str
              ) -> int:
    """The largest (``max``) or smallest (``min``) value where the constraint ``holds``, by
    bisection between the last feasible probe and the next one (the first feasible probe and
    the one before it)."""
    if sense == "max":
        j = int(np.flatnonzero(ok).max())
        lo, hi = int(probes[j]), (int(probes[j + 1]) if j + 1 < len(probes) else None)
        if hi is None:
            lo = hi = int(probes[j])
        while hi is not None and hi - lo > 1:
            mid = (lo + hi) // 2
            if holds(mid):
                lo = mid
            else:
                hi = mid
        return lo
    j = int(np.flatnonzero(ok).min())
    hi = int(probes[j])
    lo = int(probes[j - 1]) if j > 0 else hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def solve_best(base: Mapping[str, Any], objective: str, sense: str, constraint: str | None,
               variations: Sequence[Variation], models: Mapping[str, ModelSpec],
               gpus: Mapping[str, GpuSpec], count: int, *, kind: str = "inference",
               profiles: Sequence[CalibrationFigures] | None = None
               ) -> list[dict[str, Any]]:
    """The ``count`` best rows of the grid of ``variations`` that satisfy ``constraint``, best
    first, in :func:`solve`'s order (the objective, then ``cost_usd_per_hour``, then grid
    order). Each is the varied columns' values and the objective's: what ``solve --as-options``
    writes as options of the solved scenario. Only a grid (``variations`` given) is ranked."""
    known, node = _checked_query(objective, sense, constraint, kind)
    if not variations:
        raise ValidationError("vary", "say what may change (--vary column=values) to rank "
                              "answers as options")
    grid = build_grid(base, variations, models, gpus, kind=kind,
                      outputs=_wanted(known, node, objective, kind), profiles=profiles)
    values = {**dict(base.items()), **grid.values}
    mask = _constraint_mask(node, values, len(grid)) & grid.valid
    obj = np.broadcast_to(np.asarray(values[objective], dtype=float), mask.shape)
    ok = mask & np.isfinite(obj)
    cost = np.broadcast_to(np.asarray(values.get("cost_usd_per_hour", 0.0), dtype=float),
                           mask.shape)
    order = np.lexsort((np.arange(len(obj)), np.nan_to_num(cost, nan=np.inf),
                        -obj if sense == "max" else obj))
    picked = [int(i) for i in order if ok[i]][:count]
    keys = [*(v.column for v in variations), objective]
    return [{k: v for k, v in _row(values, i).items() if k in keys} for i in picked]
