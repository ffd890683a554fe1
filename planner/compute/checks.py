"""Column-wise validation of a whole table of scenarios, reporting every bad cell.

:func:`planner.compute.table.validate` stops at the first bad value, which suits a sweep or a
DataFrame a program built. A file a person wrote deserves every problem at once, so
:func:`check_table` makes one pass per column over the whole table (types, ranges, allowed
values, unknown model and GPU names, duplicate names within the table and against names
already taken; an empty input cell means "not given": the default of its row's kind, so one
file may mix inference and training rows, each leaving the other kind's columns empty)
and then the rules across columns (parallelism against each model, a tensor path for the
weight dtype on each GPU, LoRA targets, calibration profiles), each evaluated once per
distinct combination, never once per row. Every problem is a :class:`CellProblem` (0-based
row, column, message); the first :data:`MAX_REPORTED` by row are kept with their messages,
all of them are counted.

Rows are numbered from 0; the header is row -1, so a file's line is ``row + 2``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from planner.compute.inputs import (
    INFERENCE_INPUTS,
    LORA_TARGETS,
    LORA_TARGETS_ALLOWED,
    LORA_TARGETS_MAX_CHARS,
    TRAINING_DEFAULT_OVERRIDES,
    TRAINING_INPUTS,
    InputColumn,
)
from planner.compute.kinds import KINDS
from planner.compute.names import name_forbidden_pattern
from planner.compute.parallelism import parallelism_violations
from planner.compute.problems import MAX_REPORTED as MAX_REPORTED  # re-exported: its old home
from planner.compute.problems import CellProblem as CellProblem
from planner.compute.problems import Problems
from planner.compute.profiles import CalibrationFigures, resolve
from planner.compute.validation import check_series, empty_cells
from planner.core.errors import ValidationError, phrase
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec, compute_dtype
from planner.spec.params import lora_dims

SCENARIO_INPUT_COLUMNS: tuple[InputColumn, ...] = tuple(
    {c.name: c for c in (*INFERENCE_INPUTS, *TRAINING_INPUTS)}.values())
"""Every scenario input column, inference and training, once each (the database's columns)."""

REQUIRED = ("name", "model", "gpu")
"""Columns a table of new scenarios must have."""
OPTIONAL_META = ("kind", "notes", "lora_targets")
"""Other scenario fields a table may set (empty: ``inference``, no notes, ``q,v``)."""
META_DEFAULTS = {"kind": "inference", "notes": "", "lora_targets": "q,v"}

_TEXT_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]"
"""Characters free text may not hold: control characters other than tab and line breaks."""


@dataclass(slots=True)
class CheckedTable:
    """A validated table: per row its cleaned name, kind, model and GPU (catalog names),
    notes, LoRA targets, and every scenario input (parsed: int64, float64, bool or text
    arrays); ``problems`` is empty when every cell is valid."""

    n: int
    names: np.ndarray
    kinds: np.ndarray
    models: np.ndarray
    gpus: np.ndarray
    notes: np.ndarray
    lora_targets: np.ndarray
    inputs: dict[str, np.ndarray]
    problems: Problems
    clashes: np.ndarray
    """Rows whose name is already taken (see ``taken`` of :func:`check_table`)."""


def _series(values: Any, n: int) -> pd.Series:
    if isinstance(values, pd.Series):
        return values.reset_index(drop=True)
    if np.ndim(values) == 0:
        return pd.Series([values] * n, dtype=object)
    return pd.Series(np.asarray(values) if not isinstance(values, list) else values)


def _text(s: pd.Series) -> pd.Series:
    """Cells as stripped text ('' for an empty one); numbers as their text (an integral float
    without its ``.0``)."""
    def one(v: Any) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return ""
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)
    if s.dtype == object or pd.api.types.is_string_dtype(s):
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        cleaned = np.array([one(u).strip() for u in uniques] + [""], dtype=object)
        return pd.Series(cleaned[codes])
    return pd.Series([one(v).strip() for v in s.tolist()], dtype=object)


def _same(message: str, _row: int) -> str:
    """``message`` whatever the row (a problem shared by every row of a combination)."""
    return message


def _phrase(exc: ValidationError) -> str:
    """What a :class:`ValidationError` says is allowed, without its field and value."""
    return phrase(exc.allowed)


def check_column(column: InputColumn, s: pd.Series, problems: Problems, *,
                 show_value: bool = True, skip: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(parsed values, bad mask) of one input column, every bad cell reported (``show_value``:
    with the value found). Rows in ``skip`` are not checked (their value is the default)."""
    if skip is not None and skip.any():
        s = s.astype(object)  # a copy that may hold the default whatever the column's type
        s[skip] = column.default
    return check_series(column, s, problems, show_value)


def _lookup(s: pd.Series, known: Collection[str], column: str, noun: str,
            problems: Problems) -> tuple[np.ndarray, np.ndarray]:
    """(catalog names, bad mask): names matched case-insensitively, once per distinct value."""
    text = _text(s)
    codes, uniques = pd.factorize(text, use_na_sentinel=False)
    lower = {k.lower(): k for k in known}
    resolved = [lower.get(str(u).lower()) for u in uniques]
    bad = np.array([r is None for r in resolved], dtype=bool)[codes]
    listing = ", ".join(sorted(known)[:12]) + (", …" if len(known) > 12 else "")
    problems.add_rows(bad, column, lambda r: (
        f"is empty; must be a {noun} of the catalog ({listing})" if not text.iloc[r]
        else f"unknown {noun} {text.iloc[r]!r}; known: {listing}"))
    names = np.asarray([r or "" for r in resolved] + [""], dtype=object)[:-1][codes]
    return names, bad


def check_header(columns: Sequence[Any], problems: Problems) -> None:
    """Every column of a header named once, known, and ``name``, ``model``, ``gpu`` present."""
    known = {*REQUIRED, *OPTIONAL_META, *(c.name for c in SCENARIO_INPUT_COLUMNS)}
    seen: set[str] = set()
    for raw in columns:
        name = str(raw).strip()
        if not name or name.lower().startswith("unnamed:"):
            problems.add(-1, str(raw), "a column has no header; name it or delete it")
        elif name not in known:
            problems.add(-1, name, "unknown column; columns are name, model, gpu, "
                         + ", ".join(OPTIONAL_META) + " and the scenario inputs ("
                         + ", ".join(sorted(c.name for c in SCENARIO_INPUT_COLUMNS)) + ")")
        elif name in seen:
            problems.add(-1, name, "appears twice in the header")
        seen.add(name)
    for name in REQUIRED:
        if name not in seen:
            problems.add(-1, name, "missing column; the header must start with name,model,gpu")


def check_table(table: Mapping[str, Any], *, models: Mapping[str, ModelSpec],
                gpus: Mapping[str, GpuSpec],
                profiles: Sequence[CalibrationFigures] | None = None,
                taken: Collection[str] = (), taken_message: str = "is already taken",
                problems: Problems | None = None) -> CheckedTable:
    """Validate every cell of ``table`` (column name → values, all of one length) as new
    scenarios; see the module docstring. ``taken``: names already used (the fleet's), each
    reported with ``taken_message`` unless the caller clears :attr:`CheckedTable.clashes`
    before looking at the problems (pass ``taken_message=""`` to only mark them)."""
    problems = problems if problems is not None else Problems()
    lengths = {len(v) for v in table.values() if np.ndim(v) == 1}
    if len(lengths) > 1:
        raise ValidationError("table", f"columns have different lengths {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    column = {k: _series(v, n) for k, v in table.items()}
    names, _bad_name, clashes = _check_names(column, n, taken, taken_message, problems)
    kinds, bad_kind = _check_kinds(column, n, problems)
    training = kinds == "training"
    notes = _check_notes(column, n, problems)
    lora_targets, bad_targets = _check_lora_targets(column, n, problems)
    model_names, bad_model = _lookup(column.get("model", pd.Series([""] * n, dtype=object)),
                                     models, "model", "model", problems)
    gpu_names, bad_gpu = _lookup(column.get("gpu", pd.Series([""] * n, dtype=object)),
                                 gpus, "gpu", "GPU", problems)
    inputs, bad_input = _check_inputs(column, n, training, problems)
    # rules across columns, over rows whose cells are each valid
    row_ok = ~(bad_kind | bad_model | bad_gpu | bad_targets)
    for mask in bad_input.values():
        row_ok &= ~mask
    check_rules(row_ok, training, model_names, gpu_names, inputs, lora_targets, models,
                gpus, profiles, problems)
    return CheckedTable(n, names, kinds, model_names, gpu_names, notes, lora_targets, inputs,
                        problems, clashes)


def _check_names(column: Mapping[str, pd.Series], n: int, taken: Collection[str],
                 taken_message: str, problems: Problems
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(names, bad mask, clash mask) of the ``name`` column: stripped, 1-200 characters, no
    control characters, unique within the table, and (``taken``) not already used; a clash
    is reported with ``taken_message`` unless it is empty."""
    names_s = _text(column["name"]) if "name" in column else pd.Series([""] * n, dtype=object)
    length = names_s.str.len().to_numpy()
    control = names_s.str.contains(name_forbidden_pattern(), regex=True).to_numpy(dtype=bool)
    bad_name = (length == 0) | (length > 200) | control
    problems.add_rows(bad_name, "name", lambda r: (
        "is empty; every scenario needs a name" if not names_s.iloc[r]
        else "must be 1 to 200 characters without control characters "
             f"(got {names_s.iloc[r][:40]!r})"))
    names = names_s.to_numpy(dtype=object)
    codes, _uniques = pd.factorize(names_s, use_na_sentinel=False)
    _, first_row = np.unique(codes, return_index=True)
    first = first_row[codes]
    duplicate = (first != np.arange(n)) & ~bad_name
    problems.add_rows(duplicate, "name", lambda r: (
        f"{names[r]!r} is also the name on line {int(first[r]) + 2}; names in a fleet are "
        "unique"))
    clashes = names_s.isin(list(taken)).to_numpy(dtype=bool) & ~bad_name if taken \
        else np.zeros(n, dtype=bool)
    if taken_message:
        problems.add_rows(clashes, "name", lambda r: f"{names[r]!r} {taken_message}")
    return names, bad_name, clashes


def _check_kinds(column: Mapping[str, pd.Series], n: int, problems: Problems
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(kind per row, bad mask): ``inference`` or ``training``; empty or absent: inference."""
    if "kind" not in column:
        return np.full(n, "inference", dtype=object), np.zeros(n, dtype=bool)
    kinds_s = _text(column["kind"]).str.lower()
    kinds_s = kinds_s.where(kinds_s != "", "inference")
    bad_kind = ~kinds_s.isin(KINDS).to_numpy(dtype=bool)
    problems.add_rows(bad_kind, "kind", lambda r: (
        f"must be one of {', '.join(KINDS)} (got {column['kind'].iloc[r]!r})"))
    return kinds_s.to_numpy(dtype=object), bad_kind


def _check_notes(column: Mapping[str, pd.Series], n: int, problems: Problems) -> np.ndarray:
    """The notes per row (empty where absent): text without control characters other than
    tabs and line breaks."""
    if "notes" not in column:
        return np.full(n, "", dtype=object)
    notes_s = column["notes"].map(lambda v: "" if v is None or (isinstance(v, float)
                                                                and np.isnan(v))
                                  else str(v))
    bad_notes = notes_s.str.contains(_TEXT_CONTROL, regex=True).to_numpy(dtype=bool)
    problems.add_rows(bad_notes, "notes", lambda _r: "must be text without control "
                      "characters (tabs and line breaks are allowed)")
    return notes_s.to_numpy(dtype=object)


def _check_lora_targets(column: Mapping[str, pd.Series], n: int, problems: Problems
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(LoRA targets per row, bad mask): :data:`~planner.compute.inputs.LORA_TARGETS`, at most
    :data:`~planner.compute.inputs.LORA_TARGETS_MAX_CHARS`; empty or absent: ``q,v``."""
    if "lora_targets" not in column:
        return np.full(n, "q,v", dtype=object), np.zeros(n, dtype=bool)
    targets_s = _text(column["lora_targets"])
    targets_s = targets_s.where(targets_s != "", "q,v")
    bad_targets = (~targets_s.str.strip().str.fullmatch(LORA_TARGETS.pattern).to_numpy(
        dtype=bool) | (targets_s.str.len().to_numpy() > LORA_TARGETS_MAX_CHARS))
    problems.add_rows(bad_targets, "lora_targets",
                      lambda _r: f"must be {LORA_TARGETS_ALLOWED}")
    return targets_s.to_numpy(dtype=object), bad_targets


def _check_inputs(column: Mapping[str, pd.Series], n: int, training: np.ndarray,
                  problems: Problems) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(parsed values, bad mask) of every input column, given or defaulted: an empty cell is
    "not given", the default of the row's kind (a training row's own defaults where they
    differ); a field of the other kind left empty, e.g. an inference row's train_tokens, is
    simply not given."""
    inputs: dict[str, np.ndarray] = {}
    bad_input: dict[str, np.ndarray] = {}
    for c in SCENARIO_INPUT_COLUMNS:
        if c.name in column:
            empty = empty_cells(column[c.name])
            inputs[c.name], bad_input[c.name] = check_series(c, column[c.name], problems,
                                                             empty=empty)
            if c.name in TRAINING_DEFAULT_OVERRIDES:
                inputs[c.name][empty & training] = TRAINING_DEFAULT_OVERRIDES[c.name]
            continue
        default = np.full(n, c.default, dtype=_dtype(c))
        if c.name in TRAINING_DEFAULT_OVERRIDES:
            default[training] = TRAINING_DEFAULT_OVERRIDES[c.name]
        inputs[c.name], bad_input[c.name] = default, np.zeros(n, dtype=bool)
    return inputs, bad_input


def _dtype(c: InputColumn) -> Any:
    return {"int": np.int64, "float": np.float64, "bool": bool}.get(c.kind, object)


def check_rules(ok: np.ndarray, training: np.ndarray, model_names: np.ndarray,
                gpu_names: np.ndarray, inputs: Mapping[str, np.ndarray],
                lora_targets: np.ndarray, models: Mapping[str, ModelSpec],
                gpus: Mapping[str, GpuSpec], profiles: Sequence[CalibrationFigures] | None,
                problems: Problems, *, calibration: bool = True) -> None:
    """The cross-field rules of :func:`planner.compute.table.check_scenario`, column-wise: each
    evaluated once per distinct (model, GPU, dtype, …) combination among the rows ``ok``
    (``inputs`` lacking a column: its default; ``calibration`` False: named calibration
    profiles are not looked up)."""
    n = len(ok)
    if not ok.any():
        return
    inputs = {**{c.name: np.full(n, c.default, dtype=_dtype(c)) for c in SCENARIO_INPUT_COLUMNS
                 if c.name not in inputs}, **inputs}
    weight_ok = ~_check_parallelism(ok, model_names, models, inputs, problems)
    per_combo = partial(_per_combo, problems)

    def tensor_path(model: str, gpu: str, dtype: str, mode: str) -> None:
        compute_dtype(gpus[gpu], dtype, mode, models[model].quantization)

    per_combo(weight_ok, [model_names, gpu_names, inputs["weight_dtype"],
                          inputs["quant_mode"]], "gpu", tensor_path)
    decode = inputs.get("decode_gpu")
    if decode is not None:  # the decode pool's GPU (issue 25): "same", or one with a path
        per_combo(weight_ok & ~training & (decode != "same"),
                  [decode, model_names, inputs["weight_dtype"], inputs["quant_mode"]],
                  "decode_gpu", partial(_decode_path, models, gpus))
    lora = weight_ok & training & (inputs["lora_rank"] > 0)
    per_combo(lora, [model_names, lora_targets], "lora_targets",
              lambda model, targets: lora_dims(models[model], str(targets)))
    if not calibration:
        return
    choice = inputs["calibration"]
    named = weight_ok & ~training & ~np.isin(choice, ["auto", "none"])
    per_combo(named, [choice, gpu_names, inputs["engine"]], "calibration",
              lambda choice, gpu, engine: resolve(str(choice), gpu, str(engine), profiles))


def _check_parallelism(ok: np.ndarray, model_names: np.ndarray,
                       models: Mapping[str, ModelSpec], inputs: Mapping[str, np.ndarray],
                       problems: Problems) -> np.ndarray:
    """Report each row ``ok`` that breaks a deployment rule
    (:func:`~planner.compute.parallelism.parallelism_violations`: tp, then pp, then gpus; one
    problem per row); the rows not ``ok`` or reported (the rest need no further rule)."""
    m_codes, m_names = pd.factorize(model_names, use_na_sentinel=False)
    specs = [models.get(m, None) for m in m_names]
    heads = np.array([s.attention.num_heads if s else 1 for s in specs], dtype=np.int64)[m_codes]
    layers = np.array([s.num_layers if s else 1 for s in specs], dtype=np.int64)[m_codes]
    tp, pp, count = inputs["tp"], inputs["pp"], inputs["gpus"]
    broken = parallelism_violations(tp, pp, count, heads, layers)
    done = ~ok
    for col in ("tp", "pp", "gpus"):
        mask = np.asarray(broken[col]) & ~done
        def reason(r: int, col: str = col) -> str:
            return {
                "tp": f"must divide the {heads[r]} attention heads of {model_names[r]} "
                      f"(got {tp[r]})",
                "pp": f"must be at most the {layers[r]} layers of {model_names[r]} "
                      f"(got {pp[r]})",
                "gpus": f"must be a multiple of tp*pp = {tp[r] * pp[r]} (got {count[r]})"}[col]

        problems.add_rows(mask, col, reason)
        done = done | mask
    return done


def _per_combo(problems: Problems, mask: np.ndarray, keys: Sequence[np.ndarray], column: str,
               check: Callable[..., object]) -> None:
    """``check(*combination)`` once per distinct combination of ``keys`` among the rows
    ``mask``; a :class:`ValidationError` is reported in ``column`` on every row of it."""
    if not mask.any():
        return
    frame = pd.DataFrame({str(i): k for i, k in enumerate(keys)})[mask]
    codes = np.full(len(mask), -1, dtype=np.int64)
    group_codes, uniques = pd.MultiIndex.from_frame(frame).factorize()
    codes[np.flatnonzero(mask)] = group_codes
    for code, combo in enumerate(uniques):
        try:
            check(*combo)
        except ValidationError as exc:
            message = _phrase(exc) + ("" if exc.value is None else f" (got {exc.value!r})")
            problems.add_rows(codes == code, column, partial(_same, message))


def _decode_path(models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec], name: str,
                 model: str, dtype: str, mode: str) -> None:
    """The decode pool's GPU ``name`` is in the catalog (case-insensitively) and has a tensor
    path for the weights (:func:`~planner.spec.gpu.compute_dtype`)."""
    match = {k.lower(): k for k in gpus}.get(str(name).strip().lower())
    if match is None:
        raise ValidationError("decode_gpu", "same or a GPU of the catalog ("
                              + ", ".join(sorted(gpus)[:12])
                              + (", …" if len(gpus) > 12 else "") + ")", value=name)
    compute_dtype(gpus[match], dtype, mode, models[model].quantization)
