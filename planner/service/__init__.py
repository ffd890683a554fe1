"""The service layer: the use cases the CLI, the UI and notebooks call.

Two halves, by what they need:

* without a database (:mod:`planner.service.estimates`): inspect a model, estimate a
  deployment, plan training, explain an output. These names are re-exported here, so
  ``from planner import service; service.estimate(...)`` works, and importing this package
  loads neither SQLAlchemy nor pandas (``planner estimate`` starts fast);
* over the fleet database: :class:`Workspace` (:mod:`planner.service.workspace`), a facade
  over the catalog (:mod:`~planner.service.catalog_edits`), fleets and scenarios
  (:mod:`~planner.service.fleets`, :mod:`~planner.service.scenarios`,
  :mod:`~planner.service.history`, :mod:`~planner.service.evaluation`) and reports
  (:mod:`~planner.service.reports`). It is imported on first use of the name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.service.estimates import (
    adhoc_gpu,
    estimate,
    explain,
    inference_graph,
    inspect_model,
    scenario_columns,
    train,
    training_graph,
)

if TYPE_CHECKING:
    from planner.service.workspace import OpenReport, Workspace
    from planner.spec.domain import SavedScenario

__all__ = [
    "OpenReport",
    "SavedScenario",
    "Workspace",
    "adhoc_gpu",
    "estimate",
    "explain",
    "inference_graph",
    "inspect_model",
    "scenario_columns",
    "train",
    "training_graph",
]

_LAZY = {"Workspace": "planner.service.workspace", "OpenReport": "planner.service.workspace",
         "SavedScenario": "planner.spec.domain"}


def __getattr__(name: str) -> Any:
    """Import the database half (SQLAlchemy) only when one of its names is used."""
    from importlib import import_module

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
