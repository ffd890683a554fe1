"""Use cases over Excel reports: export fleets to a workbook that still computes, and import
the inputs a reader edited there (all rows, or on any error none)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from planner.compute.inputs import TRAINING_DEFAULT_OVERRIDES
from planner.core.errors import PlannerError, ValidationError
from planner.service.bulk import insert_checked
from planner.service.catalog_edits import Catalog
from planner.service.evaluation import Evaluation
from planner.service.fleets import Fleets
from planner.service.gpu_records import changed_spec
from planner.service.measurements import Measurements
from planner.service.scenarios import Scenarios
from planner.spec.domain import ConflictError, DuplicateError
from planner.store import queries
from planner.store.engine import write_transaction

if TYPE_CHECKING:
    from planner.compute.problems import Problems


class Reports:
    """Export and import over the other use cases of one workspace."""

    def __init__(self, engine: Engine, catalog: Catalog, fleets: Fleets, scenarios: Scenarios,
                 evaluation: Evaluation, measurements: Measurements | None = None,
                 plans: Callable[[list[str], list[Any]], list[Any]] | None = None) -> None:
        self.engine = engine
        self.plans = plans
        """The plans of the exported fleets that have a horizon (the Plan sheet)."""
        self.catalog = catalog
        self.fleets = fleets
        self.scenarios = scenarios
        self.evaluation = evaluation
        self.measurements = measurements

    def export(self, path: Any, fleets: list[str] | None = None, *, force: bool = False,
               sweeps: list[Any] | None = None, progress: Callable[[int], None] | None = None,
               frontiers: list[tuple[str, Any]] | None = None) -> Any:
        """Write an Excel report of ``fleets`` (default: all) that still computes."""
        # lazy: openpyxl, which only an export needs (the UI starts without it)
        from planner.io.xlsx.workbook import ExportReport, build_workbook, save_workbook

        names, scenarios = self._exported(fleets)
        models, gpus = self.catalog.models(), self.catalog.gpus()
        runs = self._runs()
        built = build_workbook(scenarios, models, gpus, sweeps=sweeps or (), progress=progress,
                               profiles=self.evaluation.profiles(), runs=runs,
                               plans=self.plans(names, scenarios) if self.plans else (),
                               frontiers=frontiers or ())
        save_workbook(built, Path(path), force=force)
        return ExportReport(Path(path), sum(s.kind == "inference" for s in scenarios),
                            sum(s.kind == "training" for s in scenarios), len(models), len(gpus),
                            len(sweeps or ()), built.workbook.sheetnames)

    def _exported(self, fleets: list[str] | None) -> tuple[list[str], list[Any]]:
        """The names of the fleets an export writes (``fleets``, default all) and their
        scenarios, fleet by fleet."""
        names = fleets or [f.name for f in self.fleets.fleets()]
        return names, [s for name in names for s in self.scenarios.scenarios(name)]

    def _runs(self) -> list[Any]:
        """The stored benchmark runs as the Calibration sheet takes them (none without a
        measurements store)."""
        # lazy: numpy-backed run mapping, only an export with runs needs it
        from planner.compute.calibration import Run

        return [Run(m.id, m.model, m.gpu, m.values, m.settings)
                for m in (self.measurements.list() if self.measurements else [])]

    def import_workbook(self, path: Any, *, fleet: str | None = None,
                        dry_run: bool = False) -> list[Any]:
        """Apply a report's edited inputs and GPUs sheet figures (all rows or, on any error,
        none); returns the row plans (kind ``gpu`` for an edited GPU, applied as
        ``planner gpu set`` would, in the same transaction). A dry run makes every check the
        import makes, applying the plans in a transaction that is then rolled back, so it
        refuses exactly what the import refuses.
        An error while applying a row names its ``Sheet!Cell (column)``."""
        # lazy: openpyxl and pandas, which only an import needs
        from planner.io.xlsx.read_scenarios import read_plan

        existing = {sc.id: sc for sc in self.scenarios.scenarios()}
        models, gpus = self.evaluation.catalog_specs()
        versions = {g.name: g.version for g in self.catalog.gpus()}
        plans = read_plan(Path(path), existing=existing, models=models, gpus=gpus,
                          default_fleet=fleet, fleets={f.name for f in self.fleets.fleets()},
                          gpu_versions=versions)
        gpu_plans = [p for p in plans if p.kind == "gpu"]
        _check_gpu_edits(Path(path), gpu_plans, gpus)  # before anything is applied
        try:
            with write_transaction(self.engine) as s:
                self._apply_gpu_edits(s, Path(path), gpu_plans)
                self._apply_rows(s, Path(path), plans)
                if dry_run:
                    raise _RollBack
        except _RollBack:
            pass
        return plans

    def _apply_gpu_edits(self, s: Any, path: Path, gpu_plans: list[Any]) -> None:
        """The GPUs sheet's edits, as ``planner gpu set`` applies them; a refusal names the
        GPU's ``GPUs!Cell`` (its version cell for a conflict, else its name)."""
        # lazy: openpyxl and pandas, which only an import needs
        from planner.io.xlsx.read_scenarios import CellError, ImportError_

        gpu_letters = _gpu_letters()
        for plan in gpu_plans:
            try:
                self.catalog.set_gpu_in(s, plan.name, dict(plan.fields), plan.version)
            except PlannerError as exc:
                column = "version" if isinstance(exc, ConflictError) else "name"
                raise ImportError_(path, [CellError(
                    "GPUs", f"{gpu_letters[column]}{plan.row}", column, str(exc))]) from None

    def _apply_rows(self, s: Any, path: Path, plans: list[Any]) -> None:
        """The scenario rows' plans: new rows that are no one's option first, in one batch
        (they may be the bases other rows name); then edits, rows joining a group last (a
        stable sort); then new options, one at a time through the option rules. A refusal
        names the row's ``Sheet!Cell (column)``."""
        plain, new_options = _new_rows(plans)
        if plain:
            self._create(s, path, plain)
        for plan in [*_edits_in_order(plans), *new_options]:
            self._apply_row(s, path, plan)

    def _apply_row(self, s: Any, path: Path, plan: Any) -> None:
        """One row's plan: a new option created through the option rules, or an edit
        guarded by the version the export wrote; a refusal names its ``Sheet!Cell``."""
        # lazy: openpyxl and pandas, which only an import needs
        from planner.io.xlsx.layout import letters

        # lazy: as above
        from planner.io.xlsx.read_scenarios import CellError, ImportError_

        try:
            if plan.id is None:
                self.scenarios.new_in(s, plan.fleet, plan.fields)
            else:
                self.scenarios.set_in(s, plan.fleet, plan.name, plan.fields, plan.version)
        except PlannerError as exc:
            column = _column_of(exc, letters(plan.kind))
            cell = f"{letters(plan.kind)[column]}{plan.row}"
            raise ImportError_(path, [CellError(plan.sheet, cell, column,
                                                str(exc))]) from None

    def _create(self, s: Any, path: Path, plans: list[Any]) -> None:
        """The new rows of a workbook, per fleet: checked whole (names, notes, calibration
        profiles: what creating one scenario checks besides the cells the plan has read) and
        written with one batched INSERT (:func:`planner.service.bulk.insert_checked`), not a
        scenario at a time. Every problem names its ``Sheet!Cell (column)``."""
        # lazy: pandas, which only an import needs
        from planner.compute.checks import Problems, check_table

        # lazy: openpyxl, which only an import needs
        from planner.io.xlsx.read_scenarios import ImportError_

        models, gpus = self.evaluation.catalog_specs()
        profiles = self.evaluation.profiles()
        by_fleet: dict[str, list[Any]] = {}
        for plan in plans:
            by_fleet.setdefault(plan.fleet, []).append(plan)
        for fleet, group in by_fleet.items():
            problems = Problems(cap=50)
            checked = check_table(_new_rows_table(group), models=models, gpus=gpus,
                                  profiles=profiles, problems=problems)
            if problems:
                raise ImportError_(path, _cell_errors(group, problems))
            insert_checked(s, queries.fleet_row(s, fleet).id, checked)


def _new_rows(plans: list[Any]) -> tuple[list[Any], list[Any]]:
    """The plans of new scenario rows: (those that are no one's option, the new options)."""
    creates = [p for p in plans if p.id is None and p.kind != "gpu"]
    return ([p for p in creates if not p.fields.get("option_of")],
            [p for p in creates if p.fields.get("option_of")])


def _edits_in_order(plans: list[Any]) -> list[Any]:
    """The plans that edit a stored scenario, rows joining a group last (a stable sort)."""
    edits = [p for p in plans if p.kind != "gpu" and p.id is not None and p.fields]
    return sorted(edits, key=lambda p: bool(p.fields.get("option_of")))


def _new_rows_table(group: list[Any]) -> dict[str, list[Any]]:
    """The columns :func:`planner.compute.checks.check_table` checks of one fleet's new rows:
    each field as the row gives it, else its default (a training row's own defaults)."""
    # lazy: pandas, which only an import needs
    from planner.compute.checks import SCENARIO_INPUT_COLUMNS

    table: dict[str, list[Any]] = {
        key: [p.fields.get(key, default) for p in group]
        for key, default in (("name", ""), ("kind", "inference"), ("model", ""),
                             ("gpu", ""), ("notes", ""), ("lora_targets", "q,v"))}
    for c in SCENARIO_INPUT_COLUMNS:
        table[c.name] = [p.fields.get(c.name, TRAINING_DEFAULT_OVERRIDES.get(
            c.name, c.default) if p.kind == "training" else c.default) for p in group]
    return table


def _cell_errors(group: list[Any], problems: Problems) -> list[Any]:
    """Each problem found in new rows as the ``Sheet!Cell (column)`` it is about (a problem
    of no sheet column: the row's name cell)."""
    # lazy: openpyxl and pandas, which only an import needs
    from planner.io.xlsx.layout import letters

    # lazy: as above
    from planner.io.xlsx.read_scenarios import CellError

    errors = []
    for problem in problems.first():
        plan = group[problem.row]
        columns = letters(plan.kind)
        column = problem.column if problem.column in columns else "name"
        errors.append(CellError(plan.sheet, f"{columns[column]}{plan.row}", column,
                                problem.message))
    return errors


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


def _gpu_letters() -> dict[str, str]:
    """The GPUs sheet's column letter of each field, in its layout's order."""
    from openpyxl.utils import get_column_letter

    # lazy: openpyxl and pandas, which only an import needs
    from planner.io.xlsx.layout import GPU_SHEET

    return {key: get_column_letter(i) for i, (key, *_r) in enumerate(GPU_SHEET, 1)}


def _check_gpu_edits(path: Path, gpu_plans: list[Any], gpus: dict[str, Any]) -> None:
    """Every GPU edit of the GPUs sheet checked (:func:`changed_spec`) before anything is
    applied: all refusals at once, each naming its ``GPUs!Cell (field)``."""
    # lazy: openpyxl and pandas, which only an import needs
    from planner.io.xlsx.read_scenarios import CellError, ImportError_

    gpu_letters = _gpu_letters()
    errors = []
    for plan in gpu_plans:
        try:
            changed_spec(gpus[plan.name], dict(plan.fields))
        except ValidationError as exc:
            key = exc.field if exc.field in gpu_letters else "name"
            errors.append(CellError("GPUs", f"{gpu_letters[key]}{plan.row}", key,
                                    str(exc).split(": ", 1)[-1]))
    if errors:
        raise ImportError_(path, errors)
