"""Many scenarios at once: validate input columns, attach model and GPU figures, evaluate.

A *table* maps column names to either one value (shared by every row) or a 1-D array with one
value per row: ``model`` and ``gpu`` names, ``kind``, ``lora_targets`` and the input columns of
:mod:`planner.compute.inputs` (absent ones take their defaults). Validation is vectorized and
names the column, the first bad row and the allowed range; model and GPU figures are looked up
once per distinct name. Everything downstream is one formula-graph call, so a 100,000-cell
sweep or a million-row DataFrame costs milliseconds per formula.

Beside it: one scenario as Python values in :mod:`planner.compute.one_row`, the kinds' inputs
and graphs in :mod:`planner.compute.kinds`, name lookups in :mod:`planner.compute.specs`, the
deployment rules in :mod:`planner.compute.parallelism` (all importable from here as before).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from planner.compute.distinct import factorize, table_length, take
from planner.compute.draft import add_draft_columns
from planner.compute.inputs import TRAINING_DEFAULT_OVERRIDES
from planner.compute.kinds import FIGURE_NAMES, KINDS, graph, inputs_of
from planner.compute.one_row import evaluate_row as evaluate_row  # re-exported: its old home
from planner.compute.one_row import evaluate_row_parts as evaluate_row_parts
from planner.compute.one_row import interpret_row as interpret_row
from planner.compute.one_row import row_function as row_function
from planner.compute.one_row import row_inputs as row_inputs
from planner.compute.parallelism import PARALLELISM_RULES as PARALLELISM_RULES
from planner.compute.parallelism import check_parallelism, parallelism_violations
from planner.compute.parallelism import parallelism_reasons as parallelism_reasons
from planner.compute.profiles import CalibrationFigures, apply_calibration
from planner.compute.specs import lookup
from planner.compute.validation import RowError, check_array, row_label
from planner.core.errors import PlannerError, ValidationError
from planner.formulas.disagg_inputs import DECODE_GPU_SAME, decode_gpu_figures
from planner.formulas.ops import Coded, NumpyOnFirstUse
from planner.spec.architecture import ModelSpec
from planner.spec.figures import model_figures
from planner.spec.gpu import GpuSpec, compute_dtype, gpu_figures
from planner.spec.params import lora_dims

if TYPE_CHECKING:
    import numpy as np

    from planner.compute.validation import RowLabels
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none


def validate(table: Mapping[str, Any], kind: str, *, labels: RowLabels | None = None
             ) -> dict[str, Any]:
    """Validated input columns (choices as lower-case texts, or :class:`Coded` columns of
    them; numbers as float64 arrays), defaults filled in. Raises :class:`RowError` for the
    first bad value (:func:`planner.compute.validation.check_array`)."""
    n = table_length(table)
    base = {c.name: c.default for c in inputs_of(kind)}
    if kind == "training":
        base.update(TRAINING_DEFAULT_OVERRIDES)
    return {column.name: check_array(column, table.get(column.name, base[column.name]), n, labels)
            for column in inputs_of(kind)}


def row_columns(spec: ModelSpec, gpu: GpuSpec, values: Mapping[str, Any],
                decode: GpuSpec | None = None) -> dict[str, Any]:
    """The formula columns of one validated scenario: model figures, GPU figures (and the
    decode pool's, ``decode``: None = the scenario's GPU) and the inputs (the graph derives
    bits, codes and bytes from them). Checks the cross-field rules."""
    check_scenario(spec, gpu, values, "inference")
    if decode is None and values.get("decode_gpu", DECODE_GPU_SAME) != DECODE_GPU_SAME:
        # lazy: the shipped catalog (no other is at hand), only for a named decode GPU
        from planner.spec.catalog import resolve_gpu

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
    (:mod:`planner.compute.profiles`; ``profiles`` None: no profiles, ``auto`` = none)."""
    if kind not in KINDS:
        raise ValidationError("kind", "one of " + ", ".join(KINDS), value=kind)
    n = table_length(table)
    values = validate(table, kind, labels=labels)
    m_codes, m_names = lookup("model", table.get("model"), models, n, labels)
    g_codes, g_names = lookup("GPU", table.get("gpu"), gpus, n, labels)
    specs = [models[name] for name in m_names]
    cols: dict[str, Any] = {}
    figures = [model_figures(s).as_dict() for s in specs]
    for name in FIGURE_NAMES:
        cols[name] = take([f[name] for f in figures], m_codes)
    check_parallelism(values["tp"], values["pp"], values["gpus"],
                      take([s.attention.num_heads for s in specs], m_codes),
                      take([s.num_layers for s in specs], m_codes),
                      lambda i: specs[m_codes[i]].name, labels)
    gpu_specs = [gpus[name] for name in g_names]
    cols.update(_gpu_columns(gpu_specs, g_codes))
    _check_compute_dtypes(gpu_specs, g_codes, values["weight_dtype"])
    if kind == "inference":
        cols.update(_decode_gpu_columns(values["decode_gpu"], g_codes, g_names, gpus, n,
                                        labels, values["weight_dtype"]))
        cols.update(values)
        _add_inference_columns(cols, n, models, g_names, g_codes, labels, profiles)
    else:
        cols.update(values)
        cols["model_lora_dims"] = _lora_dims(table, values, specs, m_codes, n, labels)
    return cols


def _add_inference_columns(cols: dict[str, Any], n: int, models: Mapping[str, ModelSpec],
                           g_names: list[str], g_codes: np.ndarray, labels: RowLabels | None,
                           profiles: Sequence[CalibrationFigures] | None) -> None:
    """An inference table's draft-model figures and each row's calibration profile in place
    (:func:`~planner.compute.profiles.apply_calibration`); a bad profile names the first row
    that picks it."""
    add_draft_columns(cols, n, models)
    try:
        apply_calibration(cols, g_names, g_codes, n, profiles)
    except ValidationError as exc:  # name the first row that picks the bad profile
        row = getattr(exc, "row_index", None)
        raise RowError("calibration", exc.allowed,
                       None if row is None or (labels is None and n == 1)
                       else row_label(labels, row), exc.value) from None


def _gpu_columns(gpu_specs: list[GpuSpec], codes: np.ndarray) -> dict[str, Any]:
    figures = [gpu_figures(g) for g in gpu_specs]
    return {name: take([f[name] for f in figures], codes) for name in figures[0]}


def _decode_gpu_columns(decode_gpu: Any, g_codes: np.ndarray, g_names: list[str],
                        gpus: Mapping[str, GpuSpec], n: int, labels: RowLabels | None,
                        weight_dtype: Any) -> dict[str, Any]:
    """The decode pool's GPU figures (:func:`planner.formulas.disagg_inputs.decode_gpu_figures`)
    for every row: the ``decode_gpu`` named (``same``: the row's GPU), looked up once per
    distinct (GPU, decode GPU) pair; an unknown name is refused naming ``decode_gpu``."""
    row_gpu = np.asarray(g_names, dtype=object)[g_codes]
    if isinstance(decode_gpu, str):
        names = row_gpu if decode_gpu == DECODE_GPU_SAME else np.full(n, decode_gpu, dtype=object)
    else:
        raw = np.asarray(decode_gpu, dtype=object)
        names = np.where(raw == DECODE_GPU_SAME, row_gpu, raw)
    d_codes, d_names = lookup("decode_gpu", names, gpus, n, labels)
    d_specs = [gpus[name] for name in d_names]
    _check_compute_dtypes(d_specs, d_codes, weight_dtype)
    pair = g_codes * len(d_names) + d_codes
    keys = sorted(set(pair.tolist()))
    figures = [decode_gpu_figures(gpus[g_names[k // len(d_names)]], d_specs[k % len(d_names)])
               for k in keys]
    index = np.searchsorted(np.asarray(keys), pair)
    return {name: take([f[name] for f in figures], index) for name in figures[0]}


def _check_compute_dtypes(gpu_specs: list[GpuSpec], g_codes: np.ndarray, weight_dtype: Any
                          ) -> None:
    """Every (GPU, weight dtype) pair in the table has a tensor path
    (:func:`~planner.spec.gpu.compute_dtype` names the GPU and the dtype otherwise)."""
    if isinstance(weight_dtype, Coded):
        w_codes, w_names = weight_dtype.codes, weight_dtype.levels
    else:
        w_codes, w_names = np.zeros(len(g_codes), dtype=np.intp), (weight_dtype,)
    # sorted(set(...)), not np.unique: the same keys in the same order, without importing
    # numpy.ma (~40 ms of a one-scenario command's start-up)
    for key in sorted(set((g_codes * len(w_names) + w_codes).tolist())):
        compute_dtype(gpu_specs[key // len(w_names)], w_names[key % len(w_names)])


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
    n = table_length(table)
    return {k: (v.texts() if isinstance(v, Coded)
                else np.broadcast_to(np.array(v, dtype=object), (n,)) if isinstance(v, str)
                else np.broadcast_to(v, (n,)) if np.ndim(v) == 0 else v)
            for k, v in values.items()}
