"""Evaluate stored scenarios in bulk, through the same vectorized path as a DataFrame.

The scenarios become one table per kind (:mod:`planner.compute.table`): one formula-graph call
evaluates all of them, however many there are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.compute.outputs import output_columns
from planner.compute.profiles import APPLIED_COLUMN, CalibrationFigures
from planner.compute.table import KINDS, evaluate_table, graph, inputs_of
from planner.spec.architecture import ModelSpec
from planner.spec.domain import Scenario
from planner.spec.gpu import GpuSpec, compute_dtype

RECORD_CHUNK_ROWS = 8_192
"""Rows turned into Python values at a time by :func:`output_records` (a 100,000-row fleet
never holds every output of every row as Python objects at once)."""


def evaluate_columns(scenarios: list[Scenario], models: Mapping[str, ModelSpec],
                     gpus: Mapping[str, GpuSpec],
                     profiles: Sequence[CalibrationFigures] | None = None
                     ) -> dict[str, tuple[list[int], dict[str, Any]]]:
    """Per scenario kind present: (the indices of its scenarios in ``scenarios``, every
    evaluated column over those rows as an array). One vectorized call per kind."""
    by_kind: dict[str, tuple[list[int], dict[str, Any]]] = {}
    for kind in KINDS:
        index = [i for i, sc in enumerate(scenarios) if sc.kind == kind]
        if not index:
            continue
        rows = [scenarios[i] for i in index]
        by_kind[kind] = (index, evaluate_table(scenario_table(rows, kind), models, gpus, kind,
                                               labels=[f"{sc.fleet}/{sc.name}" for sc in rows],
                                               profiles=profiles))
    return by_kind


def scenario_table(rows: Sequence[Scenario], kind: str = "inference") -> dict[str, Any]:
    """The input table of scenarios of one ``kind``, one row each: ``model``, ``gpu``,
    ``lora_targets`` and every input column (texts as object arrays)."""
    table: dict[str, Any] = {
        "model": np.array([sc.model for sc in rows], dtype=object),
        "gpu": np.array([sc.gpu for sc in rows], dtype=object),
        "lora_targets": np.array([sc.lora_targets for sc in rows], dtype=object),
    }
    for column in inputs_of(kind):
        table[column.name] = np.array([sc.inputs[column.name] for sc in rows],
                                      dtype=object if column.kind in ("choice", "text")
                                      else None)
    return table


def output_list(values: Mapping[str, Any], name: str, start: int = 0,
                stop: int | None = None) -> list[Any]:
    """Rows ``start:stop`` of output column ``name`` as Python values: integers for an
    integer column (as :func:`evaluate_scenarios` gives them), floats or booleans otherwise."""
    items = np.asarray(values[name])[start:stop].tolist()  # one C pass
    if output_columns()[name].integer:
        return [int(v) for v in items]
    return items


def compute_dtypes(scenarios: Sequence[Scenario], models: Mapping[str, ModelSpec],
                   gpus: Mapping[str, GpuSpec]) -> list[str]:
    """Each scenario's matmul dtype (:func:`planner.spec.gpu.compute_dtype`), computed
    once per distinct (GPU, model, weight dtype, quantization mode): a fleet repeats few."""
    known: dict[tuple[str, str, str, str], str] = {}
    out: list[str] = []
    for sc in scenarios:
        key = (sc.gpu, sc.model, sc.inputs["weight_dtype"], sc.inputs["quant_mode"])
        dtype = known.get(key)
        if dtype is None:
            dtype = known[key] = compute_dtype(gpus[sc.gpu], sc.inputs["weight_dtype"],
                                               sc.inputs["quant_mode"],
                                               models[sc.model].quantization)
        out.append(dtype)
    return out


def record_columns(scenarios: list[Scenario],
                   by_kind: Mapping[str, tuple[list[int], Mapping[str, Any]]], kind: str,
                   start: int, stop: int, models: Mapping[str, ModelSpec],
                   gpus: Mapping[str, GpuSpec],
                   profiles: Sequence[CalibrationFigures] | None = None) -> dict[str, Any]:
    """Every output column of rows ``start:stop`` of ``kind`` (positions in its
    :func:`evaluate_columns` index), in the order of a scenario's outputs dict: the graph's
    outputs as array slices (no copy; :func:`column_values` turns one into Python values),
    then the columns added from the catalog (``compute_dtype``, ``gpu_memory_bytes``; for
    inference the calibration profile applied, its hold-out error and which bound, compute or
    memory, sets TTFT and TPOT) as lists. One source for :func:`output_records` and the
    column-wise JSON writer of ``scenario list --json``."""
    index, values = by_kind[kind]
    cols: dict[str, Any] = {name: np.asarray(values[name])[start:stop]
                            for name in graph(kind).outputs}
    rows = [scenarios[i] for i in index[start:stop]]
    cols["compute_dtype"] = compute_dtypes(rows, models, gpus)
    cols["gpu_memory_bytes"] = [gpus[sc.gpu].memory_bytes for sc in rows]
    if kind == "inference":
        applied = np.broadcast_to(np.asarray(values.get(APPLIED_COLUMN, ""), dtype=object),
                                  (len(index),))[start:stop]
        _add_inference_records(cols, [str(a) for a in applied.tolist()], profiles)
    return cols


def _add_inference_records(cols: dict[str, Any], applied: list[str],
                           profiles: Sequence[CalibrationFigures] | None) -> None:
    """An inference slice's calibration profile applied per row (``applied``), that
    profile's hold-out throughput error, and which bound (compute or memory) sets TTFT and
    TPOT."""
    errors = {p.label: p.holdout_throughput_error for p in profiles or ()}
    cols[APPLIED_COLUMN] = applied
    cols["calibration_holdout_error"] = [errors.get(a) for a in applied]
    for bound, compute_s, memory_s in (("ttft_bound", "ttft_compute_s", "ttft_memory_s"),
                                       ("tpot_bound", "tpot_compute_s", "tpot_memory_s")):
        cols[bound] = ["compute" if c >= m else "memory" for c, m in
                       zip(column_values(compute_s, cols[compute_s]),
                           column_values(memory_s, cols[memory_s]), strict=True)]


def column_values(name: str, column: Any) -> list[Any]:
    """A column of :func:`record_columns` as the Python values a record holds: an array slice
    as :func:`output_list` converts it (integers for an integer output), a list as it is."""
    if isinstance(column, list):
        return column
    items = column.tolist()  # one C pass
    if name in output_columns() and output_columns()[name].integer:
        return [int(v) for v in items]
    return items


def output_records(scenarios: list[Scenario],
                   by_kind: Mapping[str, tuple[list[int], Mapping[str, Any]]],
                   models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                   profiles: Sequence[CalibrationFigures] | None = None
                   ) -> Iterator[dict[str, Any]]:
    """Every output column of each scenario as a dict, in the order of ``scenarios``, from
    :func:`evaluate_columns`' result; rows are converted :data:`RECORD_CHUNK_ROWS` at a time
    (:func:`record_columns`)."""
    position: dict[int, tuple[str, int]] = {}
    for kind, (index, _values) in by_kind.items():
        for j, i in enumerate(index):
            position[i] = (kind, j)
    cache: dict[str, tuple[int, int, tuple[str, ...], list[tuple[Any, ...]]]] = {}
    for i in range(len(scenarios)):
        kind, j = position[i]
        held = cache.get(kind)
        if held is None or not held[0] <= j < held[1]:
            start = j - j % RECORD_CHUNK_ROWS
            stop = min(start + RECORD_CHUNK_ROWS, len(by_kind[kind][0]))
            cols = record_columns(scenarios, by_kind, kind, start, stop, models, gpus,
                                  profiles)
            held = cache[kind] = (start, stop, tuple(cols), list(zip(
                *(column_values(name, c) for name, c in cols.items()), strict=True)))
        yield dict(zip(held[2], held[3][j - held[0]], strict=True))


@dataclass(frozen=True)
class FleetValues:
    """Evaluated scenarios, kept as columns (:func:`evaluate_columns`): what a streamed
    listing reads, a column or a few rows of records at a time."""

    scenarios: list[Scenario]
    by_kind: Mapping[str, tuple[list[int], Mapping[str, Any]]]
    models: Mapping[str, ModelSpec]
    gpus: Mapping[str, GpuSpec]
    profiles: Sequence[CalibrationFigures] | None = None

    def records(self) -> Iterator[dict[str, Any]]:
        """Each scenario's outputs as :func:`evaluate_scenarios` gives them, one at a time."""
        return output_records(self.scenarios, self.by_kind, self.models, self.gpus,
                              self.profiles)


def evaluate_scenarios(scenarios: list[Scenario], models: Mapping[str, ModelSpec],
                       gpus: Mapping[str, GpuSpec],
                       profiles: Sequence[CalibrationFigures] | None = None
                       ) -> list[dict[str, Any]]:
    """Every output column of each scenario, in the order given (``profiles``: the calibration
    profiles their ``calibration`` input may pick)."""
    by_kind = evaluate_columns(scenarios, models, gpus, profiles)
    return list(output_records(scenarios, by_kind, models, gpus, profiles))
