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
from typing import Any

import numpy as np

from planner.errors import NotFoundError, PlannerError, ValidationError
from planner.estimator import scenario
from planner.estimator.architecture import ModelSpec
from planner.estimator.figures import ModelFigures, model_figures
from planner.estimator.gpu import GpuSpec, compute_dtype
from planner.sheet.graph import FormulaGraph
from planner.sheet.inputs import (
    INFERENCE_INPUTS,
    TRAINING_DEFAULT_OVERRIDES,
    TRAINING_INPUTS,
    InputColumn,
    default_group_size,
)
from planner.units import DTYPE_BITS, GiB

KINDS = ("inference", "training")
FIGURE_NAMES = tuple(ModelFigures.__dataclass_fields__)


@cache
def graph(kind: str) -> FormulaGraph:
    """The formula graph of a scenario kind."""
    return FormulaGraph(scenario.INFERENCE if kind == "inference" else scenario.TRAINING)


def inputs_of(kind: str) -> tuple[InputColumn, ...]:
    """The input columns of a scenario kind."""
    return INFERENCE_INPUTS if kind == "inference" else TRAINING_INPUTS


class RowError(ValidationError):
    """A bad value in one row of a table: names the column, the row and the allowed range."""

    def __init__(self, column: str, allowed: str, row: Any, value: Any) -> None:
        self.row = row
        super().__init__(column, allowed, value=value)
        self.args = (f"{column} (row {row}): {self.args[0].split(': ', 1)[1]}",)


def _length(table: Mapping[str, Any]) -> int:
    lengths = {len(v) for v in table.values() if np.ndim(v) == 1 and not isinstance(v, str)}
    if len(lengths) > 1:
        raise ValidationError("table", f"columns have different lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 1


_SMALL = 65_536
"""Up to this many rows a dict factorizes faster than importing pandas (about 0.2 s, paid by
every UI start-up); above it, pandas' hash table is several times faster than the dict."""


def _factorize(values: Any, n: int) -> tuple[np.ndarray, list[Any]]:
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

    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
    return codes.astype(np.intp), list(uniques)


def _take(per_value: Sequence[float], codes: np.ndarray) -> Any:
    """``per_value[codes]``, or the single value itself when there is only one: constant
    columns stay scalars and broadcast, which keeps sweeps over one model and GPU cheap."""
    if len(per_value) == 1:
        return float(per_value[0])
    return np.asarray(per_value, dtype=np.float64)[codes]


def _row_label(labels: Sequence[Any] | None, index: int) -> Any:
    return labels[index] if labels is not None else index


def _check_choice(column: InputColumn, values: Any, n: int, labels: Sequence[Any] | None
                  ) -> np.ndarray:
    if np.ndim(values) == 0 or isinstance(values, str):
        return column.parse(values)  # type: ignore[no-any-return]  # one value for every row
    codes, uniques = _factorize(values, n)
    cleaned = []
    for value in uniques:
        text = str(value).strip().lower()
        if text not in column.choices:
            bad = int(np.argmax(codes == uniques.index(value)))
            raise RowError(column.name, column.allowed(), _row_label(labels, bad), value)
        cleaned.append(text)
    return np.asarray(cleaned, dtype=object)[codes]


def _check_number(column: InputColumn, values: Any, n: int, labels: Sequence[Any] | None
                  ) -> np.ndarray:
    if np.ndim(values) == 0 or isinstance(values, str):
        return float(column.parse(values))  # type: ignore[return-value]  # broadcast later
    raw = np.asarray(values)
    if raw.dtype.kind in "biuf":
        arr = raw.astype(np.float64)
        bad = ~np.isfinite(arr) | (raw.dtype.kind == "b")
    else:
        import pandas as pd

        arr = pd.to_numeric(pd.Series(raw, dtype=object).astype(str).str.replace(
            r"[_,]", "", regex=True), errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(arr)
    if column.kind == "int":
        bad |= np.isfinite(arr) & (arr != np.floor(arr))
    if column.minimum is not None:
        bad |= (arr <= column.minimum) if column.above_minimum else (arr < column.minimum)
    if column.maximum is not None:
        bad |= arr > column.maximum
    if bad.any():
        i = int(np.argmax(bad))
        raise RowError(column.name, column.allowed(), _row_label(labels, i), raw[i].item()
                       if hasattr(raw[i], "item") else raw[i])
    return arr


def _check_bool(column: InputColumn, values: Any, n: int, labels: Sequence[Any] | None
                ) -> np.ndarray:
    if np.ndim(values) == 0 or isinstance(values, str):
        return 1.0 if column.parse(values) else 0.0  # type: ignore[return-value]
    codes, uniques = _factorize(values, n)
    parsed = []
    for value in uniques:
        try:
            parsed.append(1.0 if column.parse(value) else 0.0)
        except ValidationError:
            bad = int(np.argmax(codes == uniques.index(value)))
            raise RowError(column.name, column.allowed(), _row_label(labels, bad),
                           value) from None
    return np.asarray(parsed)[codes]


def validate(table: Mapping[str, Any], kind: str, *, labels: Sequence[Any] | None = None
             ) -> dict[str, np.ndarray]:
    """Validated input columns (choices as lower-case strings, numbers as float64 arrays),
    defaults filled in. Raises :class:`RowError` for the first bad value."""
    n = _length(table)
    base = {c.name: c.default for c in inputs_of(kind)}
    if kind == "training":
        base.update(TRAINING_DEFAULT_OVERRIDES)
    out: dict[str, np.ndarray] = {}
    for column in inputs_of(kind):
        values = table.get(column.name, base[column.name])
        if column.kind == "choice":
            out[column.name] = _check_choice(column, values, n, labels)
        elif column.kind == "bool":
            out[column.name] = _check_bool(column, values, n, labels)
        else:
            out[column.name] = _check_number(column, values, n, labels)
    return out


def _lookup(kind: str, names: Any, known: Mapping[str, Any], n: int,
            labels: Sequence[Any] | None) -> tuple[np.ndarray, list[str]]:
    codes, uniques = _factorize(names, n)
    lower = {k.lower(): k for k in known}
    resolved = []
    for value in uniques:
        match = lower.get(str(value).strip().lower())
        if match is None:
            bad = int(np.argmax(codes == uniques.index(value)))
            raise NotFoundError(f"{kind} (row {_row_label(labels, bad)})", str(value),
                                list(known))
        resolved.append(match)
    return codes, resolved


def build_columns(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
                  gpus: Mapping[str, GpuSpec], kind: str = "inference", *,
                  labels: Sequence[Any] | None = None) -> dict[str, np.ndarray]:
    """Numeric formula columns for every row of ``table`` (see the module docstring)."""
    if kind not in KINDS:
        raise ValidationError("kind", "one of " + ", ".join(KINDS), value=kind)
    n = _length(table)
    values = validate(table, kind, labels=labels)
    m_codes, m_names = _lookup("model", table.get("model"), models, n, labels)
    g_codes, g_names = _lookup("GPU", table.get("gpu"), gpus, n, labels)
    specs = [models[name] for name in m_names]
    cols: dict[str, Any] = {}
    for name in FIGURE_NAMES:
        cols[name] = _take([getattr(model_figures(s), name) for s in specs], m_codes)
    _check_parallelism(values, specs, m_codes, labels)

    gpu_specs = [gpus[name] for name in g_names]
    cols["gpu_memory_bytes"] = _take([g.memory_bytes for g in gpu_specs], g_codes)
    cols["gpu_bandwidth_bytes_per_s"] = _take([g.bandwidth_bytes_per_s for g in gpu_specs],
                                              g_codes)
    cols["price_usd_per_gpu_hour"] = _take([g.price_usd_per_hour for g in gpu_specs], g_codes)
    w_codes, w_names = _factorize(values["weight_dtype"], n)
    pair = g_codes * len(w_names) + w_codes
    cols["gpu_flops_per_s"] = _take([g.flops_per_s[compute_dtype(g, w)] for g in gpu_specs
                                     for w in w_names], pair)

    for name, value in values.items():
        if name == "weight_dtype":
            cols["weight_bits"] = _take([DTYPE_BITS[w] for w in w_names], w_codes)
        elif name == "kv_dtype":
            k_codes, k_names = _factorize(value, n)
            cols["kv_bits"] = _take([DTYPE_BITS[k] for k in k_names], k_codes)
        elif name == "reserve_gib":
            cols["reserve_bytes"] = value * GiB
        elif name in ("attention_convention", "logits_convention"):
            from planner.estimator.flops import ATTENTION_CONVENTIONS, LOGITS_CONVENTIONS

            mapping = (ATTENTION_CONVENTIONS if name == "attention_convention"
                       else LOGITS_CONVENTIONS)
            c_codes, c_names = _factorize(value, n)
            cols[name] = _take([mapping[c] for c in c_names], c_codes)
        elif name == "quant_group_size":
            defaults = _take([default_group_size(w) for w in w_names], w_codes)
            cols[name] = np.where(value < 0, defaults, value) if np.ndim(value) or np.ndim(
                defaults) else (defaults if value < 0 else value)
        else:
            cols[name] = value
    if kind == "training":
        cols["model_lora_dims"] = _lora_dims(table, values, specs, m_codes, n, labels)
    return cols


def _check_parallelism(values: Mapping[str, np.ndarray], specs: list[ModelSpec],
                       m_codes: np.ndarray, labels: Sequence[Any] | None) -> None:
    tp, pp, gpus = values["tp"], values["pp"], values["gpus"]
    heads = _take([s.layers[0].attention.num_heads for s in specs], m_codes)
    layers = _take([s.num_layers for s in specs], m_codes)
    checks = (
        ("tp", np.mod(heads, tp) != 0, lambda i: f"must divide the {int(heads[i])} attention "
                                                 f"heads of {specs[m_codes[i]].name}", tp),
        ("pp", pp > layers, lambda i: f"must be at most the {int(layers[i])} layers of "
                                      f"{specs[m_codes[i]].name}", pp),
        ("gpus", np.mod(gpus, tp * pp) != 0,
         lambda i: f"must be a multiple of tp*pp = {int(tp[i] * pp[i])}", gpus),
    )
    n = len(m_codes)
    for name, bad, allowed, arr in checks:
        if np.any(bad):
            i = int(np.argmax(np.broadcast_to(bad, (n,))))
            tp, pp = np.broadcast_to(values["tp"], (n,)), np.broadcast_to(values["pp"], (n,))
            heads = np.broadcast_to(heads, (n,))
            layers = np.broadcast_to(layers, (n,))
            raise RowError(name, allowed(i), _row_label(labels, i),
                           int(np.broadcast_to(arr, (n,))[i]))


def _lora_dims(table: Mapping[str, Any], values: Mapping[str, np.ndarray],
               specs: list[ModelSpec], m_codes: np.ndarray, n: int,
               labels: Sequence[Any] | None) -> np.ndarray:
    from planner.service import lora_dims

    t_codes, t_names = _factorize(table.get("lora_targets", "q,v"), n)
    out = np.zeros(n)
    active = np.broadcast_to(values["lora_rank"] > 0, (n,))
    if not active.any():
        return out
    pairs = m_codes * len(t_names) + t_codes
    for key in np.unique(pairs[active]):
        spec, targets = specs[key // len(t_names)], t_names[key % len(t_names)]
        rows = pairs == key
        try:
            out[rows] = lora_dims(spec, str(targets))
        except ValidationError as exc:
            i = int(np.argmax(rows & active))
            raise RowError("lora_targets", exc.allowed, _row_label(labels, i), targets) from None
    return out


def evaluate_table(table: Mapping[str, Any], models: Mapping[str, ModelSpec],
                   gpus: Mapping[str, GpuSpec], kind: str = "inference",
                   outputs: Sequence[str] | None = None, *,
                   labels: Sequence[Any] | None = None,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """Validated inputs and computed outputs of every row, as arrays."""
    cols = build_columns(table, models, gpus, kind, labels=labels)
    g = graph(kind)
    unknown = [o for o in outputs or () if o not in g.formulas and o not in cols]
    if unknown:
        raise PlannerError(f"unknown column(s) for {kind} scenarios: {', '.join(unknown)}")
    values = g.evaluate(cols, outputs, progress=progress)
    n = _length(table)
    return {k: (np.broadcast_to(v, (n,)) if np.ndim(v) == 0 else v) for k, v in values.items()}
