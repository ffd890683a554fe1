"""Use cases that compute: every output of stored scenarios, or of a DataFrame of them.

Evaluation needs the parsed specs of the models and GPUs the scenarios name; they come from
the workspace's :class:`~planner.service.specs.SpecCache`, so evaluating after a save reads
only the catalog's row versions, not every row and config.json.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from planner.compute import fleet
from planner.compute import frame as frame_module
from planner.compute.profiles import CalibrationFigures
from planner.service.calibration import calibration_figures
from planner.service.specs import SpecCache
from planner.spec.architecture import ModelSpec
from planner.spec.domain import Scenario
from planner.spec.gpu import GpuSpec
from planner.store.engine import read_session


class Evaluation:
    """Outputs of scenarios with the models and GPUs of the database behind ``engine``."""

    def __init__(self, engine: Engine, specs: SpecCache) -> None:
        self.engine = engine
        self.specs = specs

    def model_specs(self) -> dict[str, ModelSpec]:
        """Every model's spec, by name."""
        with read_session(self.engine) as s:
            return self.specs.model_specs(s)

    def gpu_specs(self) -> dict[str, GpuSpec]:
        """Every GPU's spec, by name."""
        with read_session(self.engine) as s:
            return self.specs.gpu_specs(s)

    def catalog_specs(self) -> tuple[dict[str, ModelSpec], dict[str, GpuSpec]]:
        """Model and GPU specs by name, read in one transaction."""
        with read_session(self.engine) as s:
            return self.specs.model_specs(s), self.specs.gpu_specs(s)

    def profiles(self) -> list[CalibrationFigures]:
        """The calibration profiles a scenario's ``calibration`` input may pick."""
        with read_session(self.engine) as s:
            return calibration_figures(s)

    def evaluate_many(self, scenarios: list[Scenario]) -> list[dict[str, Any]]:
        """Outputs of many scenarios (one vectorized call per kind), calibrated as their
        ``calibration`` input says."""
        models, gpus = self.catalog_specs()
        return fleet.evaluate_scenarios(scenarios, models, gpus, self.profiles())

    def evaluate_columns(self, scenarios: list[Scenario]) -> fleet.FleetValues:
        """:meth:`evaluate_many` kept as columns: for output streamed as it is produced."""
        models, gpus = self.catalog_specs()
        profiles = self.profiles()
        return fleet.FleetValues(scenarios, fleet.evaluate_columns(scenarios, models, gpus,
                                                                   profiles),
                                 models, gpus, profiles)

    def evaluate_frame(self, frame: Any, outputs: Any = None) -> Any:
        """:func:`planner.sheet.evaluate` with this database's models, GPUs and calibration
        profiles."""
        models, gpus = self.catalog_specs()
        return frame_module.evaluate(frame, models, gpus, outputs, self.profiles())
