"""One scenario evaluated as Python values, in tens of microseconds.

:func:`evaluate_row` validates a one-row table with the checks and messages of the table path
(:func:`planner.compute.table.build_columns`), then runs the graph's compiled row function
(:mod:`planner.compute.rowfn`; the first row of a kind is interpreted instead, see
:data:`_rows_interpreted`). Why a module of its own: the UI and ``planner estimate`` evaluate
one row at a time, and this path keeps its own caches of parsed defaults and of each model's
and GPU's figures so that a row costs no numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from planner.compute.draft import add_draft_columns
from planner.compute.inputs import TRAINING_DEFAULT_OVERRIDES, InputColumn
from planner.compute.kinds import FIGURE_NAMES, KINDS, graph, inputs_of
from planner.compute.parallelism import check_parallelism
from planner.compute.profiles import APPLIED_COLUMN, CalibrationFigures, apply_calibration
from planner.compute.rowfn import RowFunction, compile_row
from planner.compute.specs import ONE_ROW, lookup_one
from planner.compute.validation import RowError, check_array, parse_cell
from planner.core.errors import ValidationError
from planner.formulas.disagg_inputs import DECODE_GPU_SAME, decode_gpu_figures
from planner.formulas.ops import Coded, NumpyOnFirstUse
from planner.spec.architecture import ModelSpec
from planner.spec.figures import model_figures
from planner.spec.gpu import GpuSpec, compute_dtype, gpu_figures
from planner.spec.params import lora_dims

if TYPE_CHECKING:
    import numpy as np
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none


def evaluate_row(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
                 gpus: Mapping[str, GpuSpec], kind: str = "inference", *,
                 profiles: Sequence[CalibrationFigures] | None = None) -> dict[str, Any]:
    """One scenario (``table`` of one value per column): every validated input, derived and
    output column as a plain Python value, not a one-element array. The same validation (and
    the same messages) as :func:`evaluate_table`, then the graph's compiled row function
    (:mod:`planner.compute.rowfn`): the figures are bit for bit those of the vectorized path
    (``tests/compute/test_thin_row.py``, ``tests/compute/test_rowfn.py``), in tens of
    microseconds."""
    cols, derived, outputs = evaluate_row_parts(table, models, gpus, kind, profiles=profiles)
    return {**cols, **derived, **outputs}


def evaluate_row_parts(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
                       gpus: Mapping[str, GpuSpec], kind: str = "inference", *,
                       profiles: Sequence[CalibrationFigures] | None = None
                       ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """:func:`evaluate_row` as three new dicts, without merging them: the input columns
    (:func:`row_inputs`), the derived columns and the output columns (in the graph's order)."""
    for value in table.values():
        if type(value) not in _PLAIN and np.ndim(value) != 0:
            raise ValidationError("table", "evaluate_row takes one value per column")
    cols = row_inputs(table, models, gpus, kind, profiles=profiles)
    function = _row_functions.get(kind)
    if function is None:
        if kind not in _rows_interpreted:  # the first row of a kind: not worth compiling
            _rows_interpreted.add(kind)
            return (cols, *interpret_row(kind, cols))
        function = row_function(kind)
    derived, outputs = function(cols)
    return cols, derived, outputs


_row_functions: dict[str, RowFunction] = {}


_rows_interpreted: set[str] = set()
"""Kinds whose first row was evaluated by :func:`interpret_row`. Writing and compiling the
row function costs ~40 ms, forty times one interpreted row: a process that evaluates one
scenario (``planner estimate``) never pays it, one that evaluates a second compiles then."""


def interpret_row(kind: str, cols: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One row's columns (:func:`row_inputs`) through the formula graph itself, formula by
    formula on Python scalars: the derived and the output columns, with the figures of the
    compiled row function (``tests/compute/test_rowfn.py``), without compiling it."""
    g = graph(kind)
    values = g.compute(cols)
    plain = _PLAIN
    derived, outputs = ({k: values[k] if type(values[k]) in plain else _scalar(values[k])
                         for k in names} for names in (g.derived, g.outputs))
    return derived, outputs


def row_function(kind: str) -> RowFunction:
    """The compiled one-row function of a scenario kind's graph, built once per process
    (:func:`planner.compute.rowfn.compile_row`)."""
    function = _row_functions.get(kind)
    if function is None:
        texts = frozenset(c.name for c in inputs_of(kind) if c.kind in ("choice", "text"))
        function = _row_functions[kind] = compile_row(graph(kind), texts)
    return function


@cache
def _row_defaults(kind: str) -> dict[str, Any]:
    """Every input column's validated default, as :func:`validate` gives it for one row."""
    base = {c.name: c.default for c in inputs_of(kind)}
    if kind == "training":
        base.update(TRAINING_DEFAULT_OVERRIDES)
    return {c.name: parse_cell(c, base[c.name]) for c in inputs_of(kind)}


@cache
def _input_positions(kind: str) -> dict[str, tuple[int, InputColumn]]:
    return {c.name: (i, c) for i, c in enumerate(inputs_of(kind))}


_SPEC_CACHE_SIZE = 256


_model_cache: dict[int, tuple[ModelSpec, dict[str, float], float, float]] = {}


_gpu_cache: dict[int, tuple[GpuSpec, dict[str, float], set[str]]] = {}


def _model_columns(spec: ModelSpec) -> tuple[dict[str, float], float, float]:
    """The model's figure columns (floats, as :func:`take` makes them for one row), its
    attention heads and layers; worked out once per spec object (the entry holds the spec, so
    its id cannot be reused while cached)."""
    hit = _model_cache.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1], hit[2], hit[3]
    figures = model_figures(spec).as_dict()
    columns = {name: float(figures[name]) for name in FIGURE_NAMES}
    if len(_model_cache) >= _SPEC_CACHE_SIZE:
        _model_cache.clear()
    entry = (spec, columns, float(spec.attention.num_heads), float(spec.num_layers))
    _model_cache[id(spec)] = entry
    return entry[1], entry[2], entry[3]


def _gpu_entry(gpu: GpuSpec) -> tuple[dict[str, float], set[str]]:
    """The GPU's figure columns (floats) and the weight dtypes already found to have a tensor
    path on it; once per GPU spec object."""
    hit = _gpu_cache.get(id(gpu))
    if hit is not None and hit[0] is gpu:
        return hit[1], hit[2]
    if len(_gpu_cache) >= _SPEC_CACHE_SIZE:
        _gpu_cache.clear()
    entry: tuple[GpuSpec, dict[str, float], set[str]] = (
        gpu, {k: float(v) for k, v in gpu_figures(gpu).items()}, set())
    _gpu_cache[id(gpu)] = entry
    return entry[1], entry[2]


def _decode_gpu_entry(gpu: GpuSpec, decode_gpu: str, gpus: Mapping[str, GpuSpec],
                      weight_dtype: str) -> dict[str, float]:
    """One row's decode-pool GPU figures (:func:`_decode_gpu_columns` for one row)."""
    decode = gpu if decode_gpu == DECODE_GPU_SAME else lookup_one("decode_gpu", decode_gpu, gpus)
    if decode is not gpu:
        compute_dtype(decode, weight_dtype)
    key = (id(gpu), id(decode))
    hit = _decode_cache.get(key)
    if hit is not None and hit[0] is gpu and hit[1] is decode:
        return hit[2]
    figures = decode_gpu_figures(gpu, decode)
    if len(_decode_cache) >= _SPEC_CACHE_SIZE:
        _decode_cache.clear()
    _decode_cache[key] = (gpu, decode, figures)
    return figures


_decode_cache: dict[tuple[int, int], tuple[GpuSpec, GpuSpec, dict[str, float]]] = {}


def _first(pair: tuple[int, InputColumn]) -> int:
    return pair[0]


def row_inputs(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
               gpus: Mapping[str, GpuSpec], kind: str = "inference", *,
               profiles: Sequence[CalibrationFigures] | None = None) -> dict[str, Any]:
    """:func:`build_columns` of a one-row table, as Python values (floats, and texts for the
    choice and text inputs), with the same checks in the same order and the same messages.
    Parsed defaults and each model's and GPU's figures are worked out once and reused."""
    if kind not in KINDS:
        raise ValidationError("kind", "one of " + ", ".join(KINDS), value=kind)
    values = _row_values(table, kind)
    spec = lookup_one("model", table.get("model"), models)
    gpu = lookup_one("GPU", table.get("gpu"), gpus)
    model_columns, heads, layers = _model_columns(spec)
    tp, pp, n_gpus = values["tp"], values["pp"], values["gpus"]
    if heads % tp != 0 or pp > layers or n_gpus % (tp * pp) != 0:
        check_parallelism(tp, pp, n_gpus, heads, layers, lambda _i: spec.name, ONE_ROW)
    gpu_columns, dtypes_ok = _gpu_entry(gpu)
    if values["weight_dtype"] not in dtypes_ok:
        compute_dtype(gpu, values["weight_dtype"])
        dtypes_ok.add(values["weight_dtype"])
    cols = {**model_columns, **gpu_columns, **values}
    if kind == "inference":
        _add_inference_columns(cols, gpu, gpus, models, profiles)
    else:
        cols["model_lora_dims"] = 0.0
        if values["lora_rank"] > 0:
            targets = table.get("lora_targets", "q,v")
            try:
                cols["model_lora_dims"] = float(lora_dims(spec, str(targets)))
            except ValidationError as exc:
                raise RowError("lora_targets", exc.allowed, None, targets) from None
    return cols


def _row_values(table: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """Every input of a one-row table: its parsed defaults with the given inputs parsed in
    their place, in the order :func:`~planner.compute.table.validate` checks them."""
    values = dict(_row_defaults(kind))
    positions = _input_positions(kind)
    given = [positions[k] for k in table if k in positions]
    if len(given) > 1:
        given.sort(key=_first)  # the order validate() checks them in
    for _i, column in given:
        raw = table[column.name]
        if type(raw) in _PLAIN:
            values[column.name] = parse_cell(column, raw)
        else:
            values[column.name] = check_array(column, raw, 1, ONE_ROW)
    return values


def _add_inference_columns(cols: dict[str, Any], gpu: GpuSpec, gpus: Mapping[str, GpuSpec],
                           models: Mapping[str, ModelSpec],
                           profiles: Sequence[CalibrationFigures] | None) -> None:
    """An inference row's decode-pool GPU figures, draft-model figures and calibration
    profile (:func:`~planner.compute.profiles.apply_calibration`), as Python values."""
    cols.update(_decode_gpu_entry(gpu, cols["decode_gpu"], gpus, cols["weight_dtype"]))
    add_draft_columns(cols, 1, models)
    choice = cols.get("calibration", "auto")
    if choice == "none" or (choice == "auto" and not profiles):
        cols[APPLIED_COLUMN] = ""  # what apply_calibration does, without its arrays
        return
    try:
        apply_calibration(cols, [gpu.name], np.zeros(1, dtype=np.intp), 1, profiles)
    except ValidationError as exc:
        raise RowError("calibration", exc.allowed, None, exc.value) from None
    for name, value in cols.items():
        if type(value) not in _PLAIN:
            cols[name] = _scalar(value)


_PLAIN = frozenset({float, int, bool, str})
"""Values a one-row evaluation mostly holds already (no conversion needed)."""


def _scalar(value: Any) -> Any:
    """The one value of a one-row column as a Python value."""
    if isinstance(value, Coded):
        return value.levels[int(value.codes[0])]
    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0] if value.ndim else value[()]
    if isinstance(value, np.generic):
        return value.item()
    return value
