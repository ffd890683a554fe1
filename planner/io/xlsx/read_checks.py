"""The scenario sheets' input cells checked a column at a time (:mod:`planner.compute.checks`, the
checks of ``planner scenario import``): each distinct text parsed once, numbers range-checked
as arrays, then the rules across columns once per distinct model, GPU and dtype. Split from
:mod:`planner.io.xlsx.read_scenarios`, which turns the checked rows into plans."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.compute.checks import Problems, check_column, check_rules
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec


@dataclass(slots=True)
class Checked:
    """A sheet's input columns checked column-wise: per input, the parsed value of each
    record and the problem of each bad one (by record index); per record, the first rule
    across columns it breaks (column, reason)."""

    values: dict[str, list[Any]]
    errors: dict[str, dict[int, str]]
    rules: dict[int, tuple[str, str]]


def check_columns(records: list[tuple[int, dict[str, Any], set[str]]],
                   columns: dict[str, Any], kind: str, inputs: dict[str, Any],
                   lower_models: dict[str, str], lower_gpus: dict[str, str],
                   models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> Checked:
    """Every input cell of ``records`` (``columns``: per input, its cells as a Series, one
    per record; a missing column is all empty) validated one column at a time
    (:func:`planner.compute.checks.check_column`: each distinct text parsed once, numbers
    checked as arrays), then the rules across columns once per distinct model, GPU and dtype
    (:func:`planner.compute.checks.check_rules`) over the rows whose cells are each valid."""
    import numpy as np

    n = len(records)
    values, errors, arrays, ok = _check_inputs(records, columns, inputs)
    model_names = np.array(_catalog_names(records, lower_models, "model"), dtype=object)
    gpu_names = np.array(_catalog_names(records, lower_gpus, "gpu"), dtype=object)
    targets = np.array([str(cell.get("lora_targets") or "q,v") for _r, cell, _f in records],
                       dtype=object)
    ok &= (model_names != "") & (gpu_names != "")
    ok &= np.fromiter((not f for _r, _c, f in records), dtype=bool, count=n)
    rules = Problems(cap=n + 1)
    check_rules(ok, np.full(n, kind == "training"), model_names, gpu_names, arrays, targets,
                models, gpus, None, rules, calibration=False)
    return Checked(values, errors, _first_rules(rules))


def _catalog_names(records: list[tuple[int, dict[str, Any], set[str]]],
                   lower: dict[str, str], column: str) -> list[str]:
    """Each record's ``column`` cell as the catalog's name (any case), ``""`` if unknown."""
    return [lower.get(str(cell[column] or "").lower()) or "" for _r, cell, _f in records]


def _first_rules(rules: Problems) -> dict[int, tuple[str, str]]:
    """The first rule across columns each record breaks, as (column, reason), by record."""
    first: dict[int, tuple[str, str]] = {}
    for p in rules.items:
        first.setdefault(p.row, (p.column, p.message))
    return first


def _check_inputs(records: list[tuple[int, dict[str, Any], set[str]]],
                  columns: dict[str, Any], inputs: dict[str, Any]
                  ) -> tuple[dict[str, list[Any]], dict[str, dict[int, str]], dict[str, Any],
                             Any]:
    """Each input column checked alone (:func:`planner.compute.checks.check_column`, the
    cells refused as formulas or marks skipped): per input its parsed values as a list, its
    problems by record and its array; and per record whether all its cells are valid."""
    import numpy as np
    import pandas as pd

    n = len(records)
    values: dict[str, list[Any]] = {}
    errors: dict[str, dict[int, str]] = {}
    arrays: dict[str, Any] = {}
    ok = np.ones(n, dtype=bool)
    for key, spec in inputs.items():
        series = columns.get(key)
        if series is None:
            series = pd.Series([None] * n, dtype=object)
        skip = np.fromiter((key in f for _r, _c, f in records), dtype=bool, count=n)
        problems = Problems(cap=n + 1)
        arrays[key], wrong = check_column(spec, series, problems, show_value=False, skip=skip)
        values[key] = arrays[key].tolist()
        errors[key] = {p.row: p.message for p in problems.items}
        ok &= ~wrong & ~skip
    return values, errors, arrays, ok
