"""Use cases over Excel reports: export fleets to a workbook that still computes, and import
the inputs a reader edited there (all rows, or on any error none)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from planner.domain import ConflictError, DuplicateError
from planner.errors import PlannerError, ValidationError
from planner.service.catalog import Catalog
from planner.service.evaluation import Evaluation
from planner.service.fleets import Fleets
from planner.service.measurements import Measurements
from planner.service.scenarios import Scenarios
from planner.store.engine import write_transaction


class Reports:
    """Export and import over the other use cases of one workspace."""

    def __init__(self, engine: Engine, catalog: Catalog, fleets: Fleets, scenarios: Scenarios,
                 evaluation: Evaluation, measurements: Measurements | None = None) -> None:
        self.engine = engine
        self.catalog = catalog
        self.fleets = fleets
        self.scenarios = scenarios
        self.evaluation = evaluation
        self.measurements = measurements

    def export(self, path: Any, fleets: list[str] | None = None, *, force: bool = False,
               sweeps: list[Any] | None = None, progress: Callable[[int], None] | None = None
               ) -> Any:
        """Write an Excel report of ``fleets`` (default: all) that still computes."""
        # lazy: openpyxl, which only an export needs (the UI starts without it)
        from planner.report.export import ExportReport, build_workbook, save_workbook

        names = fleets or [f.name for f in self.fleets.fleets()]
        scenarios = [s for name in names for s in self.scenarios.scenarios(name)]
        models, gpus = self.catalog.models(), self.catalog.gpus()
        # lazy: as above (numpy-backed run mapping, only an export with runs needs it)
        from planner.sheet.calibration import Run

        runs = [Run(m.id, m.model, m.gpu, m.values, m.settings)
                for m in (self.measurements.list() if self.measurements else [])]
        built = build_workbook(scenarios, models, gpus, sweeps=sweeps or (), progress=progress,
                               profiles=self.evaluation.profiles(), runs=runs)
        save_workbook(built, Path(path), force=force)
        return ExportReport(Path(path), sum(s.kind == "inference" for s in scenarios),
                            sum(s.kind == "training" for s in scenarios), len(models), len(gpus),
                            len(sweeps or ()), built.workbook.sheetnames)

    def import_workbook(self, path: Any, *, fleet: str | None = None,
                        dry_run: bool = False) -> list[Any]:
        """Apply a report's edited inputs (all rows or, on any error, none); returns the row
        plans. A dry run makes every check the import makes, applying the plans in a
        transaction that is then rolled back, so it refuses exactly what the import refuses.
        An error while applying a row names its ``Sheet!Cell (column)``."""
        # lazy: openpyxl and pandas, which only an import needs
        from planner.report.importer import CellError, ImportError_, read_plan

        # lazy: as above
        from planner.report.layout import letters

        existing = {sc.id: sc for sc in self.scenarios.scenarios()}
        models, gpus = self.evaluation.catalog_specs()
        plans = read_plan(Path(path), existing=existing, models=models, gpus=gpus,
                          default_fleet=fleet, fleets={f.name for f in self.fleets.fleets()})
        try:
            with write_transaction(self.engine) as s:
                # new bases before the rows that name them as option_of (a stable sort)
                for plan in sorted(plans, key=lambda p: bool(p.fields.get("option_of"))):
                    try:
                        if plan.id is None:
                            self.scenarios.new_in(s, plan.fleet, plan.fields)
                        elif plan.fields:
                            self.scenarios.set_in(s, plan.fleet, plan.name, plan.fields,
                                                  plan.version)
                    except PlannerError as exc:
                        column = _column_of(exc, letters(plan.kind))
                        cell = f"{letters(plan.kind)[column]}{plan.row}"
                        raise ImportError_(Path(path), [CellError(plan.sheet, cell, column,
                                                                  str(exc))]) from None
                if dry_run:
                    raise _RollBack
        except _RollBack:
            pass
        return plans


class _RollBack(Exception):
    """Raised inside a dry run's transaction so that it is rolled back."""


def _column_of(exc: PlannerError, columns: dict[str, str]) -> str:
    """The sheet column an error applying a row is about."""
    if isinstance(exc, ConflictError):
        return "version"
    if isinstance(exc, DuplicateError):
        return "name"
    if isinstance(exc, ValidationError) and exc.field in columns:
        return exc.field
    return "id"
