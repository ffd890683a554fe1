"""Many scenarios at once: validate input columns, attach model and GPU figures, evaluate.

A *table* maps column names to either one value (shared by every row) or a 1-D array with one
value per row: ``model`` and ``gpu`` names, ``kind``, ``lora_targets`` and the input columns of
:mod:`planner.sheet.inputs` (absent ones take their defaults). Validation is vectorized and
names the column, the first bad row and the allowed range; model and GPU figures are looked up
once per distinct name. Everything downstream is one formula-graph call, so a 100,000-cell
sweep or a million-row DataFrame costs milliseconds per formula.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from planner.errors import NotFoundError, PlannerError, ValidationError
from planner.estimator import scenario
from planner.estimator.architecture import ModelSpec
from planner.estimator.disagg import DECODE_GPU_SAME, decode_gpu_figures
from planner.estimator.figures import ModelFigures, model_figures
from planner.estimator.gpu import GpuSpec, compute_dtype, gpu_figures
from planner.estimator.ops import Coded, NumpyOnFirstUse
from planner.estimator.params import lora_dims
from planner.sheet.draft import add_draft_columns
from planner.sheet.graph import FormulaGraph
from planner.sheet.inputs import (
    INFERENCE_INPUTS,
    TRAINING_DEFAULT_OVERRIDES,
    TRAINING_INPUTS,
    InputColumn,
)
from planner.sheet.profiles import APPLIED_COLUMN, CalibrationFigures, apply_calibration
from planner.sheet.rowfn import RowFunction, compile_row
from planner.sheet.validation import RowError, check_array, parse_cell, row_label

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np
    import pandas as pd

    RowLabels: TypeAlias = Sequence[Any] | pd.Index
    """What errors name a table's rows by: a DataFrame's index, or a list of labels."""
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none

KINDS = ("inference", "training")
FIGURE_NAMES = tuple(ModelFigures.__dataclass_fields__)


@cache
def graph(kind: str) -> FormulaGraph:
    """The formula graph of a scenario kind: its outputs and its derived inputs."""
    if kind == "inference":
        return FormulaGraph(scenario.INFERENCE, scenario.DERIVED_INFERENCE)
    return FormulaGraph(scenario.TRAINING, scenario.DERIVED_TRAINING)


def inputs_of(kind: str) -> tuple[InputColumn, ...]:
    """The input columns of a scenario kind."""
    return INFERENCE_INPUTS if kind == "inference" else TRAINING_INPUTS


def _length(table: Mapping[str, Any]) -> int:
    lengths = {len(v) for v in table.values() if np.ndim(v) == 1 and not isinstance(v, str)}
    if len(lengths) > 1:
        raise ValidationError("table", f"columns have different lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 1


_SMALL = 65_536
"""Up to this many rows a dict factorizes faster than importing pandas (about 0.2 s, paid by
every UI start-up); above it, pandas' hash table is several times faster than the dict."""


def factorize(values: Any, n: int) -> tuple[np.ndarray, list[Any]]:
    """(codes per row, distinct values in order of first appearance) of a scalar or an array.
    Distinct means unequal under Python's ``==`` and ``hash``, as in ``pandas.factorize``."""
    if np.ndim(values) == 0 or isinstance(values, str):
        return np.zeros(n, dtype=np.intp), [values]
    if n <= _SMALL:
        index: dict[Any, int] = {}
        items = values.tolist() if isinstance(values, np.ndarray) else values
        codes = np.fromiter((index.setdefault(v, len(index)) for v in items), dtype=np.intp,
                            count=n)
        return codes, list(index)
    import pandas as pd

    array = np.asarray(values, dtype=object)
    # one hashing pass; missing values (rare: they are refused as bad values) get -1 there, and
    # only then the slower pass that keeps them as values is taken (~1.5x the time)
    codes, uniques = pd.factorize(array)
    if codes.size and codes.min() < 0:
        codes, uniques = pd.factorize(array, use_na_sentinel=False)
    return codes.astype(np.intp, copy=False), list(uniques)


def _take(per_value: Sequence[float], codes: np.ndarray) -> Any:
    """``per_value[codes]``, or the single value itself when there is only one: constant
    columns stay scalars and broadcast, which keeps sweeps over one model and GPU cheap."""
    if len(per_value) == 1:
        return float(per_value[0])
    return np.asarray(per_value, dtype=np.float64)[codes]


def validate(table: Mapping[str, Any], kind: str, *, labels: RowLabels | None = None
             ) -> dict[str, Any]:
    """Validated input columns (choices as lower-case texts, or :class:`Coded` columns of
    them; numbers as float64 arrays), defaults filled in. Raises :class:`RowError` for the
    first bad value (:func:`planner.sheet.validation.check_array`)."""
    n = _length(table)
    base = {c.name: c.default for c in inputs_of(kind)}
    if kind == "training":
        base.update(TRAINING_DEFAULT_OVERRIDES)
    return {column.name: check_array(column, table.get(column.name, base[column.name]), n, labels)
            for column in inputs_of(kind)}


def _lookup(kind: str, names: Any, known: Mapping[str, Any], n: int,
            labels: RowLabels | None) -> tuple[np.ndarray, list[str]]:
    codes, uniques = factorize(names, n)
    lower = {k.lower(): k for k in known}
    resolved = []
    for value in uniques:
        match = lower.get(str(value).strip().lower())
        if match is None:
            bad = int(np.argmax(codes == uniques.index(value)))
            raise NotFoundError(f"{kind} (row {row_label(labels, bad)})", str(value),
                                list(known))
        resolved.append(match)
    return codes, resolved


def row_columns(spec: ModelSpec, gpu: GpuSpec, values: Mapping[str, Any],
                decode: GpuSpec | None = None) -> dict[str, Any]:
    """The formula columns of one validated scenario: model figures, GPU figures (and the
    decode pool's, ``decode``: None = the scenario's GPU) and the inputs (the graph derives
    bits, codes and bytes from them). Checks the cross-field rules."""
    check_scenario(spec, gpu, values, "inference")
    if decode is None and values.get("decode_gpu", DECODE_GPU_SAME) != DECODE_GPU_SAME:
        # lazy: the shipped catalog (no other is at hand), only for a named decode GPU
        from planner.catalog import resolve_gpu

        decode = resolve_gpu(str(values["decode_gpu"]))
    cols = {**model_figures(spec).as_dict(), **gpu_figures(gpu),
            **decode_gpu_figures(gpu, decode if decode is not None else gpu), **values}
    add_draft_columns(cols, 1)
    return cols


def check_scenario(spec: ModelSpec, gpu: GpuSpec, values: Mapping[str, Any], kind: str,
                   lora_targets: str = "q,v") -> None:
    """The cross-field rules of one validated scenario (parallelism, a tensor path for its
    weight dtype, LoRA targets the model has): :class:`ValidationError` naming the field.
    The rules are :func:`parallelism_violations`, here on plain numbers (an import checks
    thousands of rows one by one)."""
    tp, pp, gpus = int(values["tp"]), int(values["pp"]), int(values["gpus"])
    broken = parallelism_violations(tp, pp, gpus, spec.attention.num_heads,
                                    spec.num_layers)
    if any(bool(b) for b in broken.values()):
        check_parallelism(tp, pp, gpus, spec.attention.num_heads, spec.num_layers,
                          lambda _i: spec.name, [None])
    compute_dtype(gpu, values["weight_dtype"], values.get("quant_mode", "auto"), spec.quantization)
    if kind == "training" and values["lora_rank"]:
        lora_dims(spec, lora_targets)


def build_columns(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
                  gpus: Mapping[str, GpuSpec], kind: str = "inference", *,
                  labels: RowLabels | None = None,
                  profiles: Sequence[CalibrationFigures] | None = None) -> dict[str, Any]:
    """Formula columns for every row of ``table`` (see the module docstring): validated
    inputs, and each model's and GPU's figures taken by code (one lookup per distinct name),
    with the figures of each inference row's calibration profile in place
    (:mod:`planner.sheet.profiles`; ``profiles`` None: no profiles, ``auto`` = none)."""
    if kind not in KINDS:
        raise ValidationError("kind", "one of " + ", ".join(KINDS), value=kind)
    n = _length(table)
    values = validate(table, kind, labels=labels)
    m_codes, m_names = _lookup("model", table.get("model"), models, n, labels)
    g_codes, g_names = _lookup("GPU", table.get("gpu"), gpus, n, labels)
    specs = [models[name] for name in m_names]
    cols: dict[str, Any] = {}
    figures = [model_figures(s).as_dict() for s in specs]
    for name in FIGURE_NAMES:
        cols[name] = _take([f[name] for f in figures], m_codes)
    check_parallelism(values["tp"], values["pp"], values["gpus"],
                      _take([s.attention.num_heads for s in specs], m_codes),
                      _take([s.num_layers for s in specs], m_codes),
                      lambda i: specs[m_codes[i]].name, labels)
    gpu_specs = [gpus[name] for name in g_names]
    for name, column in _gpu_columns(gpu_specs, g_codes).items():
        cols[name] = column
    _check_compute_dtypes(gpu_specs, g_codes, values["weight_dtype"])
    if kind == "inference":
        cols.update(_decode_gpu_columns(values["decode_gpu"], g_codes, g_names, gpus, n,
                                        labels, values["weight_dtype"]))
    cols.update(values)
    if kind == "inference":
        add_draft_columns(cols, n, models)
        try:
            apply_calibration(cols, g_names, g_codes, n, profiles)
        except ValidationError as exc:  # name the first row that picks the bad profile
            row = getattr(exc, "row_index", None)
            raise RowError("calibration", exc.allowed,
                           None if row is None or (labels is None and n == 1)
                           else row_label(labels, row), exc.value) from None
    if kind == "training":
        cols["model_lora_dims"] = _lora_dims(table, values, specs, m_codes, n, labels)
    return cols


def _gpu_columns(gpu_specs: list[GpuSpec], codes: np.ndarray) -> dict[str, Any]:
    figures = [gpu_figures(g) for g in gpu_specs]
    return {name: _take([f[name] for f in figures], codes) for name in figures[0]}


def _decode_gpu_columns(decode_gpu: Any, g_codes: np.ndarray, g_names: list[str],
                        gpus: Mapping[str, GpuSpec], n: int, labels: RowLabels | None,
                        weight_dtype: Any) -> dict[str, Any]:
    """The decode pool's GPU figures (:func:`planner.estimator.disagg.decode_gpu_figures`)
    for every row: the ``decode_gpu`` named (``same``: the row's GPU), looked up once per
    distinct (GPU, decode GPU) pair; an unknown name is refused naming ``decode_gpu``."""
    row_gpu = np.asarray(g_names, dtype=object)[g_codes]
    if isinstance(decode_gpu, str):
        names = row_gpu if decode_gpu == DECODE_GPU_SAME else np.full(n, decode_gpu, dtype=object)
    else:
        raw = np.asarray(decode_gpu, dtype=object)
        names = np.where(raw == DECODE_GPU_SAME, row_gpu, raw)
    d_codes, d_names = _lookup("decode_gpu", names, gpus, n, labels)
    d_specs = [gpus[name] for name in d_names]
    _check_compute_dtypes(d_specs, d_codes, weight_dtype)
    pair = g_codes * len(d_names) + d_codes
    keys = sorted(set(pair.tolist()))
    figures = [decode_gpu_figures(gpus[g_names[k // len(d_names)]], d_specs[k % len(d_names)])
               for k in keys]
    index = np.searchsorted(np.asarray(keys), pair)
    return {name: _take([f[name] for f in figures], index) for name in figures[0]}


def _check_compute_dtypes(gpu_specs: list[GpuSpec], g_codes: np.ndarray, weight_dtype: Any
                          ) -> None:
    """Every (GPU, weight dtype) pair in the table has a tensor path
    (:func:`~planner.estimator.gpu.compute_dtype` names the GPU and the dtype otherwise)."""
    if isinstance(weight_dtype, Coded):
        w_codes, w_names = weight_dtype.codes, weight_dtype.levels
    else:
        w_codes, w_names = np.zeros(len(g_codes), dtype=np.intp), (weight_dtype,)
    # sorted(set(...)), not np.unique: the same keys in the same order, without importing
    # numpy.ma (~40 ms of a one-scenario command's start-up)
    for key in sorted(set((g_codes * len(w_names) + w_codes).tolist())):
        compute_dtype(gpu_specs[key // len(w_names)], w_names[key % len(w_names)])


PARALLELISM_RULES: tuple[tuple[str, str], ...] = (
    ("tp", "tp does not divide the attention heads"),
    ("pp", "pp exceeds the model's layers"),
    ("gpus", "gpus not a multiple of tp*pp"),
)
"""The cross-field rules of a deployment, in the order they are reported: the column each
names and the short reason a sweep shows for an invalid row."""


def parallelism_violations(tp: Any, pp: Any, gpus: Any, heads: Any, layers: Any
                           ) -> dict[str, Any]:
    """Per rule of :data:`PARALLELISM_RULES`, where it is broken (a boolean per row): TP must
    divide the attention heads, PP must not exceed the layers, and the GPUs must be a whole
    number of ``tp*pp`` replicas."""
    if all(isinstance(v, int) for v in (tp, pp, gpus, heads, layers)):  # one row: no numpy
        return {"tp": heads % tp != 0, "pp": pp > layers, "gpus": gpus % (tp * pp) != 0}
    return {"tp": np.mod(heads, tp) != 0, "pp": np.greater(pp, layers),
            "gpus": np.mod(gpus, np.multiply(tp, pp)) != 0}


def parallelism_reasons(tp: Any, pp: Any, gpus: Any, heads: Any, layers: Any, n: int
                        ) -> np.ndarray:
    """The first broken rule's short reason per row ('' where the row is valid)."""
    broken = parallelism_violations(tp, pp, gpus, heads, layers)
    reasons = np.full(n, "", dtype=object)
    for column, reason in reversed(PARALLELISM_RULES):
        reasons[np.broadcast_to(broken[column], (n,))] = reason
    return reasons


def check_parallelism(tp: Any, pp: Any, gpus: Any, heads: Any, layers: Any,
                      model_name: Callable[[int], str], labels: RowLabels | None) -> None:
    """Raise :class:`RowError` naming the column, the rule and the model, for the first row
    that breaks a rule."""
    broken = parallelism_violations(tp, pp, gpus, heads, layers)
    n = max(np.size(a) for a in (tp, pp, gpus, heads, layers))
    for column, _reason in PARALLELISM_RULES:
        if not np.any(broken[column]):
            continue
        i = int(np.argmax(np.broadcast_to(broken[column], (n,))))
        at = {k: np.broadcast_to(v, (n,))[i] for k, v in
              {"tp": tp, "pp": pp, "gpus": gpus, "heads": heads, "layers": layers}.items()}
        allowed = {
            "tp": f"must divide the {int(at['heads'])} attention heads of {model_name(i)}",
            "pp": f"must be at most the {int(at['layers'])} layers of {model_name(i)}",
            "gpus": f"must be a multiple of tp*pp = {int(at['tp'] * at['pp'])}",
        }[column]
        raise RowError(column, allowed, row_label(labels, i), int(at[column]))


def _lora_dims(table: Mapping[str, Any], values: Mapping[str, Any],
               specs: list[ModelSpec], m_codes: np.ndarray, n: int,
               labels: RowLabels | None) -> np.ndarray:
    t_codes, t_names = factorize(table.get("lora_targets", "q,v"), n)
    out = np.zeros(n)
    active = np.broadcast_to(values["lora_rank"] > 0, (n,))
    if not active.any():
        return out
    pairs = m_codes * len(t_names) + t_codes
    for key in sorted(set(pairs[active].tolist())):  # np.unique's keys, without numpy.ma
        spec, targets = specs[key // len(t_names)], t_names[key % len(t_names)]
        rows = pairs == key
        try:
            out[rows] = lora_dims(spec, str(targets))
        except ValidationError as exc:
            i = int(np.argmax(rows & active))
            raise RowError("lora_targets", exc.allowed, row_label(labels, i), targets) from None
    return out


def evaluate_table(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
                   gpus: Mapping[str, GpuSpec], kind: str = "inference",
                   outputs: Sequence[str] | None = None, *,
                   labels: RowLabels | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   profiles: Sequence[CalibrationFigures] | None = None
                   ) -> dict[str, np.ndarray]:
    """Validated inputs and computed outputs of every row, as arrays (``profiles``: the
    calibration profiles the ``calibration`` input may pick)."""
    cols = build_columns(table, models, gpus, kind, labels=labels, profiles=profiles)
    g = graph(kind)
    unknown = [o for o in outputs or () if not g.computes(o) and o not in cols]
    if unknown:
        raise PlannerError(f"unknown column(s) for {kind} scenarios: {', '.join(unknown)}")
    values = g.compute(cols, outputs, progress=progress)
    n = _length(table)
    return {k: (v.texts() if isinstance(v, Coded)
                else np.broadcast_to(np.array(v, dtype=object), (n,)) if isinstance(v, str)
                else np.broadcast_to(v, (n,)) if np.ndim(v) == 0 else v)
            for k, v in values.items()}


def evaluate_row(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
                 gpus: Mapping[str, GpuSpec], kind: str = "inference", *,
                 profiles: Sequence[CalibrationFigures] | None = None) -> dict[str, Any]:
    """One scenario (``table`` of one value per column): every validated input, derived and
    output column as a plain Python value, not a one-element array. The same validation (and
    the same messages) as :func:`evaluate_table`, then the graph's compiled row function
    (:mod:`planner.sheet.rowfn`): the figures are bit for bit those of the vectorized path
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
    (:func:`planner.sheet.rowfn.compile_row`)."""
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


_ONE_ROW = [None]
"""The labels of a one-scenario table: errors name no row."""

_SPEC_CACHE_SIZE = 256
_model_cache: dict[int, tuple[ModelSpec, dict[str, float], float, float]] = {}
_gpu_cache: dict[int, tuple[GpuSpec, dict[str, float], set[str]]] = {}


def _model_columns(spec: ModelSpec) -> tuple[dict[str, float], float, float]:
    """The model's figure columns (floats, as :func:`_take` makes them for one row), its
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
    decode = gpu if decode_gpu == DECODE_GPU_SAME else _one("decode_gpu", decode_gpu, gpus)
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


def _one(kind: str, names: Any, known: Mapping[str, Any]) -> Any:
    """The spec a one-row table names (as :func:`_lookup` resolves it, with its errors)."""
    if len(known) == 1 and type(names) is str and names in known:
        return known[names]
    _codes, resolved = _lookup(kind, names, known, 1, _ONE_ROW)
    return known[resolved[0]]


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
            values[column.name] = check_array(column, raw, 1, _ONE_ROW)
    spec = _one("model", table.get("model"), models)
    gpu = _one("GPU", table.get("gpu"), gpus)
    model_columns, heads, layers = _model_columns(spec)
    tp, pp, n_gpus = values["tp"], values["pp"], values["gpus"]
    if heads % tp != 0 or pp > layers or n_gpus % (tp * pp) != 0:
        check_parallelism(tp, pp, n_gpus, heads, layers, lambda _i: spec.name, _ONE_ROW)
    gpu_columns, dtypes_ok = _gpu_entry(gpu)
    if values["weight_dtype"] not in dtypes_ok:
        compute_dtype(gpu, values["weight_dtype"])
        dtypes_ok.add(values["weight_dtype"])
    cols = {**model_columns, **gpu_columns, **values}
    if kind == "inference":
        cols.update(_decode_gpu_entry(gpu, values["decode_gpu"], gpus, values["weight_dtype"]))
        add_draft_columns(cols, 1, models)
        choice = cols.get("calibration", "auto")
        if choice == "none" or (choice == "auto" and not profiles):
            cols[APPLIED_COLUMN] = ""  # what apply_calibration does, without its arrays
        else:
            try:
                apply_calibration(cols, [gpu.name], np.zeros(1, dtype=np.intp), 1, profiles)
            except ValidationError as exc:
                raise RowError("calibration", exc.allowed, None, exc.value) from None
            for name, value in cols.items():
                if type(value) not in _PLAIN:
                    cols[name] = _scalar(value)
    else:
        cols["model_lora_dims"] = 0.0
        if values["lora_rank"] > 0:
            targets = table.get("lora_targets", "q,v")
            try:
                cols["model_lora_dims"] = float(lora_dims(spec, str(targets)))
            except ValidationError as exc:
                raise RowError("lora_targets", exc.allowed, None, targets) from None
    return cols


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
