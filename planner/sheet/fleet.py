"""Evaluate stored scenarios in bulk, through the same vectorized path as a DataFrame.

The scenarios become one table per kind (:mod:`planner.sheet.table`): one formula-graph call
evaluates all of them, however many there are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from planner.domain import Scenario
from planner.estimator.architecture import ModelSpec
from planner.estimator.gpu import GpuSpec, compute_dtype
from planner.sheet.outputs import output_columns
from planner.sheet.profiles import APPLIED_COLUMN, CalibrationFigures
from planner.sheet.table import KINDS, evaluate_table, graph, inputs_of


def evaluate_scenarios(scenarios: list[Scenario], models: Mapping[str, ModelSpec],
                       gpus: Mapping[str, GpuSpec],
                       profiles: Sequence[CalibrationFigures] | None = None
                       ) -> list[dict[str, Any]]:
    """Every output column of each scenario, in the order given (``profiles``: the calibration
    profiles their ``calibration`` input may pick)."""
    results: list[dict[str, Any]] = [{} for _ in scenarios]
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
        values = evaluate_table(table, models, gpus, kind,
                                labels=[f"{sc.fleet}/{sc.name}" for sc in rows],
                                profiles=profiles)
        outputs = graph(kind).outputs
        columns = [np.asarray(values[name]).tolist() for name in outputs]  # one C pass each
        applied = np.broadcast_to(np.asarray(values.get(APPLIED_COLUMN, ""), dtype=object),
                                  (len(rows),))
        errors = {p.label: p.holdout_throughput_error for p in profiles or ()}
        integer = output_columns()
        for k, name in enumerate(outputs):
            if integer[name].integer:
                columns[k] = [int(v) for v in columns[k]]
        for j, (i, row) in enumerate(zip(index, zip(*columns, strict=True), strict=True)):
            out: dict[str, Any] = dict(zip(outputs, row, strict=True))
            sc = scenarios[i]
            out["compute_dtype"] = compute_dtype(gpus[sc.gpu], sc.inputs["weight_dtype"],
                                                 sc.inputs["quant_mode"],
                                                 models[sc.model].quantization)
            out["gpu_memory_bytes"] = gpus[sc.gpu].memory_bytes
            if kind == "inference":
                out[APPLIED_COLUMN] = str(applied[j])
                out["calibration_holdout_error"] = errors.get(out[APPLIED_COLUMN])
                out["ttft_bound"] = ("compute" if out["ttft_compute_s"] >= out["ttft_memory_s"]
                                     else "memory")
                out["tpot_bound"] = ("compute" if out["tpot_compute_s"] >= out["tpot_memory_s"]
                                     else "memory")
            results[i] = out
    return results
