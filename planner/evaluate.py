"""Evaluate stored scenarios in bulk: one vectorized formula-graph call per scenario kind.

Each scenario becomes a row of numeric columns (model figures, GPU figures at its compute dtype,
numeric inputs); rows are stacked into numpy columns and the inference or training graph runs
once over all of them. 10,000 scenarios cost the same number of formula calls as one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from planner import service
from planner.domain import Scenario
from planner.estimator.architecture import ModelSpec
from planner.estimator.figures import model_figures
from planner.estimator.gpu import GpuSpec, compute_dtype
from planner.sheet.inputs import INFERENCE_INPUTS, TRAINING_INPUTS, numeric_columns

INTEGER_OUTPUTS = service.INTEGER_OUTPUTS


def _row_columns(sc: Scenario, spec: ModelSpec, gpu: GpuSpec, figures: dict[str, int],
                 lora_dims: int) -> dict[str, Any]:
    names = {c.name for c in (INFERENCE_INPUTS if sc.kind == "inference" else TRAINING_INPUTS)}
    values = {k: v for k, v in sc.inputs.items() if k in names}
    cols = {**figures, **service.gpu_columns(gpu, values["weight_dtype"]),
            **numeric_columns(values)}
    if sc.kind == "training":
        cols["model_lora_dims"] = lora_dims
    return cols


def evaluate_scenarios(scenarios: list[Scenario], models: Mapping[str, ModelSpec],
                       gpus: Mapping[str, GpuSpec]) -> list[dict[str, Any]]:
    """Every output column of each scenario, in the order given."""
    figures = {name: model_figures(spec).as_dict() for name, spec in models.items()}
    results: list[dict[str, Any] | None] = [None] * len(scenarios)
    for kind, graph in (("inference", service.inference_graph()),
                        ("training", service.training_graph())):
        index = [i for i, sc in enumerate(scenarios) if sc.kind == kind]
        if not index:
            continue
        rows = []
        for i in index:
            sc = scenarios[i]
            spec = models[sc.model]
            dims = (service.lora_dims(spec, sc.lora_targets)
                    if kind == "training" and sc.inputs.get("lora_rank") else 0)
            rows.append(_row_columns(sc, spec, gpus[sc.gpu], figures[sc.model], dims))
        columns = {key: np.array([r[key] for r in rows], dtype=np.float64) for key in rows[0]}
        values = graph.evaluate(columns)
        for j, i in enumerate(index):
            out: dict[str, Any] = {}
            for name in graph.outputs:
                value = values[name][j].item()
                if name in INTEGER_OUTPUTS:
                    value = int(value)
                elif isinstance(value, bool) or values[name].dtype == np.bool_:
                    value = bool(value)
                out[name] = value
            sc = scenarios[i]
            out["compute_dtype"] = compute_dtype(gpus[sc.gpu], sc.inputs["weight_dtype"])
            if kind == "inference":
                out["ttft_bound"] = ("compute" if out["ttft_compute_s"] >= out["ttft_memory_s"]
                                     else "memory")
                out["tpot_bound"] = ("compute" if out["tpot_compute_s"] >= out["tpot_memory_s"]
                                     else "memory")
            results[i] = out
    return [r for r in results if r is not None]
