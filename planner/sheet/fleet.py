"""Evaluate stored scenarios in bulk, through the same vectorized path as a DataFrame.

The scenarios become one table per kind (:mod:`planner.sheet.table`): one formula-graph call
evaluates all of them, however many there are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.domain import Scenario
from planner.estimator.architecture import ModelSpec
from planner.estimator.gpu import GpuSpec, compute_dtype
from planner.sheet.outputs import output_columns
from planner.sheet.profiles import APPLIED_COLUMN, CalibrationFigures
from planner.sheet.table import KINDS, evaluate_table, graph, inputs_of

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
        table: dict[str, Any] = {
            "model": np.array([sc.model for sc in rows], dtype=object),
            "gpu": np.array([sc.gpu for sc in rows], dtype=object),
            "lora_targets": np.array([sc.lora_targets for sc in rows], dtype=object),
        }
        for column in inputs_of(kind):
            table[column.name] = np.array([sc.inputs[column.name] for sc in rows],
                                          dtype=object if column.kind in ("choice", "text")
                                          else None)
        by_kind[kind] = (index, evaluate_table(table, models, gpus, kind,
                                               labels=[f"{sc.fleet}/{sc.name}" for sc in rows],
                                               profiles=profiles))
    return by_kind


def output_list(values: Mapping[str, Any], name: str, start: int = 0,
                stop: int | None = None) -> list[Any]:
    """Rows ``start:stop`` of output column ``name`` as Python values: integers for an
    integer column (as :func:`evaluate_scenarios` gives them), floats or booleans otherwise."""
    items = np.asarray(values[name])[start:stop].tolist()  # one C pass
    if output_columns()[name].integer:
        return [int(v) for v in items]
    return items


def output_records(scenarios: list[Scenario],
                   by_kind: Mapping[str, tuple[list[int], Mapping[str, Any]]],
                   models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                   profiles: Sequence[CalibrationFigures] | None = None
                   ) -> Iterator[dict[str, Any]]:
    """Every output column of each scenario as a dict, in the order of ``scenarios``, from
    :func:`evaluate_columns`' result; rows are converted :data:`RECORD_CHUNK_ROWS` at a time."""
    position: dict[int, tuple[str, int]] = {}
    for kind, (index, _values) in by_kind.items():
        for j, i in enumerate(index):
            position[i] = (kind, j)
    errors = {p.label: p.holdout_throughput_error for p in profiles or ()}
    dtypes: dict[tuple[str, str, str, str], str] = {}
    cache: dict[str, tuple[int, int, list[tuple[Any, ...]], Any]] = {}
    for i, sc in enumerate(scenarios):
        kind, j = position[i]
        values = by_kind[kind][1]
        outputs = graph(kind).outputs
        held = cache.get(kind)
        if held is None or not held[0] <= j < held[1]:
            start = j - j % RECORD_CHUNK_ROWS
            stop = start + RECORD_CHUNK_ROWS
            applied = np.broadcast_to(np.asarray(values.get(APPLIED_COLUMN, ""), dtype=object),
                                      (len(by_kind[kind][0]),))[start:stop]
            held = cache[kind] = (start, start + len(applied),
                                  list(zip(*(output_list(values, name, start, stop)
                                             for name in outputs), strict=True)),
                                  applied)
        k = j - held[0]
        out: dict[str, Any] = dict(zip(outputs, held[2][k], strict=True))
        key = (sc.gpu, sc.model, sc.inputs["weight_dtype"], sc.inputs["quant_mode"])
        dtype = dtypes.get(key)
        if dtype is None:
            dtype = dtypes[key] = compute_dtype(gpus[sc.gpu], sc.inputs["weight_dtype"],
                                                sc.inputs["quant_mode"],
                                                models[sc.model].quantization)
        out["compute_dtype"] = dtype
        out["gpu_memory_bytes"] = gpus[sc.gpu].memory_bytes
        if kind == "inference":
            out[APPLIED_COLUMN] = str(held[3][k])
            out["calibration_holdout_error"] = errors.get(out[APPLIED_COLUMN])
            out["ttft_bound"] = ("compute" if out["ttft_compute_s"] >= out["ttft_memory_s"]
                                 else "memory")
            out["tpot_bound"] = ("compute" if out["tpot_compute_s"] >= out["tpot_memory_s"]
                                 else "memory")
        yield out


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
