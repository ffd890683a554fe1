"""Use cases over Excel reports: export fleets to a workbook that still computes, and import
the inputs a reader edited there (all rows, or on any error none)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from planner.service.catalog import Catalog
from planner.service.evaluation import Evaluation
from planner.service.fleets import Fleets
from planner.service.scenarios import Scenarios
from planner.store.engine import write_transaction


class Reports:
    """Export and import over the other use cases of one workspace."""

    def __init__(self, engine: Engine, catalog: Catalog, fleets: Fleets, scenarios: Scenarios,
                 evaluation: Evaluation) -> None:
        self.engine = engine
        self.catalog = catalog
        self.fleets = fleets
        self.scenarios = scenarios
        self.evaluation = evaluation

    def export(self, path: Any, fleets: list[str] | None = None, *, force: bool = False,
               sweeps: list[Any] | None = None, progress: Callable[[int], None] | None = None
               ) -> Any:
        """Write an Excel report of ``fleets`` (default: all) that still computes."""
        # lazy: openpyxl, which only an export needs (the UI starts without it)
        from planner.report.export import ExportReport, build_workbook, save_workbook

        names = fleets or [f.name for f in self.fleets.fleets()]
        scenarios = [s for name in names for s in self.scenarios.scenarios(name)]
        models, gpus = self.catalog.models(), self.catalog.gpus()
        built = build_workbook(scenarios, models, gpus, sweeps=sweeps or (), progress=progress)
        save_workbook(built, Path(path), force=force)
        return ExportReport(Path(path), sum(s.kind == "inference" for s in scenarios),
                            sum(s.kind == "training" for s in scenarios), len(models), len(gpus),
                            len(sweeps or ()), built.workbook.sheetnames)

    def import_workbook(self, path: Any, *, fleet: str | None = None,
                        dry_run: bool = False) -> list[Any]:
        """Apply a report's edited inputs (all rows or, on any error, none); returns the row
        plans (with ``dry_run``, without applying them)."""
        # lazy: openpyxl and pandas, which only an import needs
        from planner.report.importer import read_plan

        existing = {sc.id: sc for sc in self.scenarios.scenarios()}
        models, gpus = self.evaluation.catalog_specs()
        plans = read_plan(Path(path), existing=existing, models=models, gpus=gpus,
                          default_fleet=fleet, fleets={f.name for f in self.fleets.fleets()})
        if dry_run:
            return plans
        with write_transaction(self.engine) as s:
            for plan in plans:
                if plan.id is None:
                    self.scenarios.new_in(s, plan.fleet, plan.fields)
                elif plan.fields:
                    self.scenarios.set_in(s, plan.fleet, plan.name, plan.fields, plan.version)
        return plans
