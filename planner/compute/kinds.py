"""The two kinds of scenario (inference, training): their input columns and formula graphs.

Why a module of its own: the table path (:mod:`planner.compute.table`), the one-row path
(:mod:`planner.compute.one_row`), sweeps and the workbook all ask "which inputs, which graph" for
a kind; here that answer has one home that imports no evaluation code.
"""

from __future__ import annotations

from functools import cache

from planner.compute.graph import FormulaGraph
from planner.compute.inputs import INFERENCE_INPUTS, TRAINING_INPUTS, InputColumn
from planner.formulas import scenario
from planner.spec.figures import ModelFigures

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
