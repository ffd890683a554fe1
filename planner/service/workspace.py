"""The fleet database as one object: :class:`Workspace`, the library API the CLI and the UI
share.

A facade: opening (migrate, first-run seed) and closing live here; every other method hands
over to the use case that owns it (:mod:`~planner.service.catalog_edits`,
:mod:`~planner.service.fleets`, :mod:`~planner.service.scenarios`,
:mod:`~planner.service.history`, :mod:`~planner.service.evaluation`,
:mod:`~planner.service.reports`). They share the engine and one
:class:`~planner.service.specs.SpecCache` of parsed models and GPUs.

Every public method is one transaction: it commits whole or, on any error, leaves the database
exactly as it was. Methods take names and plain values and return :mod:`planner.spec.domain`
objects, never ORM rows.

Concurrency: rows carry a version. An edit may name the version it was based on
(``expected_version``); if the row has moved on, :class:`ConflictError` lists what changed and
nothing is written. Write transactions take the write lock up front (SQLite ``BEGIN IMMEDIATE``,
PostgreSQL ``SELECT … FOR UPDATE``) so two writers never interleave a read and a write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from planner.compute.fleet import FleetValues
from planner.core.errors import PlannerError
from planner.core.settings import database_url, is_default
from planner.service.bulk import BulkImport, BulkResult, Clash
from planner.service.calibration import Calibration, Profile
from planner.service.catalog_edits import Catalog
from planner.service.edits import CheckedEdit
from planner.service.evaluation import Evaluation
from planner.service.fleets import Fleets
from planner.service.history import History
from planner.service.hub import HubConfig, fetch_config
from planner.service.measurements import ImportResult, Measurement, Measurements
from planner.service.plans import Plans
from planner.service.reports import Reports
from planner.service.scenarios import Scenarios
from planner.service.specs import SpecCache
from planner.spec.architecture import ModelSpec
from planner.spec.domain import (
    Change,
    Fleet,
    GpuInfo,
    ModelInfo,
    SavedScenario,
    Scenario,
    SeedReport,
)
from planner.spec.gpu import GpuSpec
from planner.store import migrate
from planner.store.engine import database_error, make_engine, read_session, write_transaction
from planner.store.seed import seed_all, unseeded_and_empty


@dataclass(frozen=True, slots=True)
class OpenReport:
    """What opening the database did: schema revisions and the first-run seeding."""

    url: str
    revision_before: str | None
    revision: str
    seeded: SeedReport | None


class Workspace:
    """The fleet database at ``url`` (default: settings), migrated to head on open."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self.open_report: OpenReport | None = None
        self._specs = SpecCache()
        self._catalog = Catalog(engine, self._specs)
        self._fleets = Fleets(engine)
        self._scenarios = Scenarios(engine, self._specs)
        self._history = History(engine, self._scenarios)
        self._evaluation = Evaluation(engine, self._specs)
        self._measurements = Measurements(engine, self._specs)
        self._calibration = Calibration(engine, self._specs, self._measurements)
        self._reports = Reports(engine, self._catalog, self._fleets, self._scenarios,
                                self._evaluation, self._measurements, self._plans_for_export)
        self._bulk = BulkImport(engine, self._specs, self._evaluation)
        self._plans = Plans(engine, self._scenarios, self._evaluation)

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, url: str | None = None, *, upgrade: bool = True, seed: bool = True) -> Workspace:
        """Open (creating, migrating and seeding on first run) the database at ``url``."""
        resolved = database_url(url)
        ws = cls(make_engine(resolved, create_folder=is_default(resolved)), resolved)
        if upgrade:
            try:
                before, after = migrate.ensure_schema(ws.engine)
                seeded = ws.seed() if seed and ws._unseeded_and_empty() else None
                if seeded is not None and not seeded.total_added:
                    seeded = None  # another client seeded it while this one waited
            except PlannerError:
                ws.close()
                raise
            except Exception as exc:
                ws.close()
                known = database_error(exc, resolved)
                if known is not None:
                    raise known from exc
                raise PlannerError(f"cannot open database {_safe(resolved)}: {exc}") from exc
            ws.open_report = OpenReport(resolved, before, after, seeded)
        return ws

    def _unseeded_and_empty(self) -> bool:
        """Seeding commits after the schema: a database whose schema committed without its
        catalog (a first run killed in between, ``db upgrade`` on a new file, ``downgrade
        base`` + ``upgrade head``) is detected here and seeded on open."""
        with read_session(self.engine) as session:
            return unseeded_and_empty(session)

    def close(self) -> None:
        """Release connections."""
        self.engine.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def seed(self) -> SeedReport:
        """Add what is new in ``seeds/`` (idempotent; never overwrites a user's edit)."""
        try:
            with write_transaction(self.engine) as session:
                return seed_all(session, self._scenarios.build_row)
        except BaseException:
            self._specs.invalidate()  # specs parsed from rows the rollback undid
            raise

    # ------------------------------------------------------------------ models
    def models(self) -> list[ModelInfo]:
        """Every model, by name."""
        return self._catalog.models()

    def model(self, name: str) -> ModelInfo:
        """One model by name (case-insensitive)."""
        return self._catalog.model(name)

    def import_model(self, config: dict[str, Any] | str, name: str, *, source: str = "custom",
                     notes: str = "") -> ModelInfo:
        """Add a model from config.json text (kept verbatim) or a parsed dict; refuses a
        duplicate name."""
        return self._catalog.import_models([(name, config, source)], notes=notes)[0]

    def import_hub_model(self, ref: str, name: str | None = None, *, notes: str = ""
                         ) -> tuple[ModelInfo, HubConfig]:
        """Add the model of Hub id ``ref`` (``org/name[@revision]``): its config.json read from
        the Hugging Face cache or the Hub (:func:`planner.service.hub.fetch_config`), stored
        with the repo id and the commit it was read at. Returns the model and what was read
        (the safetensors index's total size, for the cross-check)."""
        hub = fetch_config(ref)
        info = self._catalog.import_models(
            [(name or hub.name, hub.config, hub.source_url, hub.repo_id, hub.commit)],
            notes=notes)[0]
        return info, hub

    def import_models(self, items: Iterable[tuple[Any, ...]], *,
                      notes: str = "", progress: Callable[[int], None] | None = None
                      ) -> list[ModelInfo]:
        """Add many models in one transaction: all of them, or (on any error) none."""
        return self._catalog.import_models(items, notes=notes, progress=progress)

    def delete_model(self, name: str) -> None:
        """Delete a model no scenario uses; else :class:`InUseError` listing the scenarios."""
        self._catalog.delete_model(name)

    def set_model_notes(self, name: str, notes: str) -> ModelInfo:
        """Replace a model's notes."""
        return self._catalog.set_model_notes(name, notes)

    # ------------------------------------------------------------------ GPUs
    def gpus(self) -> list[GpuInfo]:
        """Every GPU, by name."""
        return self._catalog.gpus()

    def gpu(self, name: str) -> GpuInfo:
        """One GPU by name (case-insensitive)."""
        return self._catalog.gpu(name)

    def add_gpu(self, name: str, record: dict[str, Any]) -> GpuInfo:
        """Add a GPU from unit-suffixed figures (``memory_gib``, ``bf16_tflops``, …)."""
        return self._catalog.add_gpu(name, record)

    def set_gpu(self, name: str, changes: dict[str, Any],
                expected_version: int | None = None) -> GpuInfo:
        """Change some figures of a GPU (a price, say); every scenario on it follows."""
        return self._catalog.set_gpu(name, changes, expected_version)

    def delete_gpu(self, name: str) -> None:
        """Delete a GPU no scenario uses; else :class:`InUseError` listing the scenarios."""
        self._catalog.delete_gpu(name)

    # ------------------------------------------------------------------ fleets
    def fleets(self) -> list[Fleet]:
        """Every fleet with its scenario count."""
        return self._fleets.fleets()

    def fleet(self, name: str) -> Fleet:
        """One fleet by name."""
        return self._fleets.fleet(name)

    def new_fleet(self, name: str, description: str = "") -> Fleet:
        """Create an empty fleet."""
        return self._fleets.new_fleet(name, description)

    def copy_fleet(self, source: str, name: str, description: str | None = None) -> Fleet:
        """A what-if copy of a fleet and all its scenarios."""
        return self._fleets.copy_fleet(source, name, description)

    def delete_fleet(self, name: str) -> int:
        """Delete a fleet and its scenarios; returns how many scenarios went with it."""
        return self._fleets.delete_fleet(name)

    # ------------------------------------------------------------------ scenarios
    def scenarios(self, fleet: str | None = None, limit: int | None = None,
                  after: str | None = None) -> list[Scenario]:
        """Scenarios of one fleet (or of all), by fleet and name; with ``limit``, the first
        that many (a view shows its first screen before the rest is read); with ``after``,
        one fleet's named after it (the next page: a big fleet read a page at a time)."""
        return self._scenarios.scenarios(fleet, limit, after)

    def scenario(self, fleet: str, name: str) -> Scenario:
        """One scenario."""
        return self._scenarios.scenario(fleet, name)

    def scenario_stamp(self, fleet: str) -> tuple[Any, ...]:
        """A fingerprint of ``fleet``'s rows that any write changes (cheap to poll: one
        aggregate row); read :meth:`scenario_versions` when it moved."""
        return self._scenarios.stamp(fleet)

    def scenario_versions(self, fleet: str) -> dict[int, int]:
        """Each scenario of ``fleet``: id → version (poll it to see other clients' edits)."""
        return self._scenarios.versions(fleet)

    def new_scenario(self, fleet: str, name: str, *, model: str, gpu: str,
                     kind: str = "inference", notes: str = "", lora_targets: str = "q,v",
                     **inputs: Any) -> Scenario:
        """Create a scenario; inputs not given take their defaults."""
        return self._scenarios.new_scenario(fleet, name, model=model, gpu=gpu, kind=kind,
                                            notes=notes, lora_targets=lora_targets, **inputs)

    def set_scenario(self, fleet: str, name: str, changes: dict[str, Any],
                     expected_version: int | None = None) -> Scenario:
        """Apply ``field=value`` changes as one logged change set.

        With ``expected_version``, a row changed since that version is refused with a
        :class:`ConflictError` naming the fields that changed and their current values."""
        return self._scenarios.set_scenario(fleet, name, changes, expected_version)

    def save_scenario(self, fleet: str, name: str, changes: dict[str, Any],
                      expected_version: int | None = None) -> SavedScenario:
        """:meth:`set_scenario`, returning the saved scenario with every output of it
        (evaluated once, with cached specs): a view shows the edit without reading the catalog.

        The save commits first; if evaluating it then fails, the :class:`PlannerError` says
        the edit was saved."""
        saved = self.set_scenario(fleet, name, changes, expected_version)
        try:
            outputs = self._evaluation.evaluate_many([saved])[0]
        except Exception as exc:
            raise PlannerError(f"saved {saved.fleet}/{saved.name} (version {saved.version}), "
                               f"but could not evaluate it: {exc}") from exc
        return SavedScenario(saved, outputs)

    def save_edit(self, edit: CheckedEdit, expected_version: int | None = None
                  ) -> SavedScenario:
        """Save an edit checked and evaluated by :func:`~planner.service.edits.check_edit`:
        nothing is parsed or evaluated again, and the saved scenario comes back with the
        outputs computed there."""
        saved = self._scenarios.save_edit(edit, expected_version)
        return SavedScenario(saved, edit.outputs)

    def choose_option(self, fleet: str, name: str, expected_version: int | None = None
                      ) -> Scenario:
        """Choose a scenario in its option group (only chosen scenarios are counted): one
        transaction, one undo step."""
        return self._scenarios.choose(fleet, name, expected_version)

    def make_option(self, fleet: str, name: str, of: str | None) -> Scenario:
        """Make a scenario an option of ``of`` (another scenario of the fleet, no one's option),
        not chosen; ``of`` None detaches it (a scenario of its own again, chosen)."""
        return self._scenarios.set_scenario(fleet, name, {"option_of": of or None})

    def add_options(self, fleet: str, name: str, variants: list[dict[str, Any]], *,
                    choose_first: bool = False) -> list[Scenario]:
        """Write field changes (a solver's best answers) as new options of the scenario's
        group, none chosen unless ``choose_first``; one transaction."""
        return self._scenarios.add_options(fleet, name, variants, choose_first=choose_first)

    def copy_scenario(self, fleet: str, name: str, new_name: str,
                      to_fleet: str | None = None) -> Scenario:
        """A what-if copy of a scenario, in the same fleet or another."""
        return self._scenarios.copy_scenario(fleet, name, new_name, to_fleet)

    def delete_scenario(self, fleet: str, name: str) -> None:
        """Delete a scenario (and its change log)."""
        self._scenarios.delete_scenario(fleet, name)

    def import_scenarios(self, fleet: str, source: Any, *, on_clash: Clash = "refuse",
                         dry_run: bool = False, progress: Callable[[int], None] | None = None,
                         started: Callable[[int], None] | None = None) -> BulkResult:
        """Create many scenarios in ``fleet`` from a table: a .csv, .xlsx or .parquet file
        (header ``name,model,gpu`` then input columns) or a pandas DataFrame. Every cell is
        checked column-wise first and every problem reported as ``FILE:line (column)``; then
        all rows are written in one transaction, or none (see :mod:`planner.service.bulk`).
        ``on_clash`` says what a name the fleet already has does: ``refuse``, ``replace`` or
        ``skip``."""
        return self._bulk.import_table(fleet, source, on_clash=on_clash, dry_run=dry_run,
                                       progress=progress, started=started)

    # ------------------------------------------------------------------ history
    def history(self, fleet: str, name: str) -> list[Change]:
        """The scenario's change log, oldest first."""
        return self._history.history(fleet, name)

    def undo(self, fleet: str) -> list[Change] | None:
        """Revert the latest change set of ``fleet``'s scenarios that is not undone yet; returns
        its changes (None when there is nothing to undo). Refused, changing nothing, if the
        scenario was changed since that change set."""
        return self._history.undo(fleet)

    def redo(self, fleet: str) -> list[Change] | None:
        """Re-apply the change set undone last, if no edit came after it."""
        return self._history.redo(fleet)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, scenario: Scenario) -> dict[str, Any]:
        """Every output column of one scenario."""
        return self._evaluation.evaluate_many([scenario])[0]

    def evaluate_many(self, scenarios: list[Scenario]) -> list[dict[str, Any]]:
        """Outputs of many scenarios (one vectorized call per kind)."""
        return self._evaluation.evaluate_many(scenarios)

    def evaluate_columns(self, scenarios: list[Scenario]) -> FleetValues:
        """Outputs of many scenarios kept as columns (streamed listings read them a column or
        a few rows at a time; ``.records()`` gives what :meth:`evaluate_many` gives)."""
        return self._evaluation.evaluate_columns(scenarios)

    def evaluate_frame(self, frame: Any, outputs: Any = None) -> Any:
        """:func:`planner.sheet.evaluate` with this database's models and GPUs."""
        return self._evaluation.evaluate_frame(frame, outputs)

    def model_specs(self) -> dict[str, ModelSpec]:
        """Every model's spec, by name."""
        return self._evaluation.model_specs()

    def gpu_specs(self) -> dict[str, GpuSpec]:
        """Every GPU's spec, by name."""
        return self._evaluation.gpu_specs()

    # ------------------------------------------------------------------ plans
    def set_horizon(self, fleet: str, start_month: Any = None, months: Any = None,
                    pricing: Any = None) -> Any:
        """Set a fleet's planning horizon (see :mod:`planner.service.plans`)."""
        return self._plans.set_horizon(fleet, start_month, months, pricing)

    def horizon(self, fleet: str) -> Any:
        """A fleet's horizon, or None."""
        return self._plans.horizon(fleet)

    def set_demand(self, fleet: str, name: str, **spec: Any) -> Any:
        """Set a scenario's demand: ``start_rate`` and ``growth``, or ``series``."""
        return self._plans.set_demand(fleet, name, **spec)

    def set_demands(self, fleet: str, specs: dict[str, dict[str, Any]]) -> int:
        """Set many scenarios' demands in one transaction."""
        return self._plans.set_demands(fleet, specs)

    def clear_demand(self, fleet: str, name: str) -> bool:
        """Remove a scenario's demand."""
        return self._plans.clear_demand(fleet, name)

    def demands(self, fleet: str) -> dict[str, Any]:
        """A fleet's demands by scenario name."""
        return self._plans.demands(fleet)

    def set_price(self, gpu: str, **prices: Any) -> Any:
        """Set a GPU's prices from a month on (on-demand, reserved and term, spot)."""
        return self._plans.set_price(gpu, **prices)

    def prices(self, gpu: str | None = None) -> list[Any]:
        """GPU price rows."""
        return self._plans.prices(gpu)

    def plan(self, fleet: str, *, start: Any = None, end: Any = None, pricing: Any = None
             ) -> Any:
        """The plan of a fleet month by month (:class:`planner.compute.plan.PlanResult`)."""
        return self._plans.plan(fleet, start=start, end=end, pricing=pricing)

    def _plans_for_export(self, fleets: list[str], scenarios: list[Scenario]) -> list[Any]:
        """Plans of the exported fleets that have a horizon (for the workbook's Plan sheet)."""
        return [self._plans.plan(f, scenarios=[s for s in scenarios if s.fleet == f])
                for f in fleets if self._plans.horizon(f) is not None]

    # ------------------------------------------------------------------ reports
    # ------------------------------------------------------------------ measurements
    def import_measurements(self, paths: Any, flags: dict[str, Any] | None = None,
                            settings: dict[str, Any] | None = None) -> ImportResult:
        """Import benchmark result files (all runs or none); see
        :mod:`planner.service.measurements`."""
        return self._measurements.import_files(paths, flags, settings)

    def measurements(self, *, model: str | None = None, gpu: str | None = None,
                     engine: str | None = None) -> list[Measurement]:
        """Stored benchmark runs, oldest first."""
        return self._measurements.list(model=model, gpu=gpu, engine=engine)

    def measurement(self, measurement_id: int) -> Measurement:
        """One stored benchmark run."""
        return self._measurements.get(measurement_id)

    def delete_measurements(self, ids: list[int]) -> int:
        """Delete benchmark runs by id (all or none)."""
        return self._measurements.delete(ids)

    # ------------------------------------------------------------------ calibration
    def calibrate(self, *, gpu: str | None = None, engine: str | None = None,
                  model: str | None = None, holdout: float = 0.2, seed: int = 0,
                  name: str | None = None) -> Profile:
        """Fit the serving efficiency figures to the matching runs; store a new profile
        version (see :mod:`planner.service.calibration`)."""
        return self._calibration.calibrate(gpu=gpu, engine=engine, model=model,
                                           holdout=holdout, seed=seed, name=name)

    def measurement_predictions(self) -> list[tuple[Measurement, Any]]:
        """Every stored run with its measured and predicted figures (see
        :meth:`planner.service.calibration.Calibration.predictions`)."""
        return self._calibration.predictions()

    def calibration_profiles(self) -> list[Profile]:
        """Every calibration profile version."""
        return self._calibration.profiles()

    def calibration_figures(self) -> list[Any]:
        """Every profile version as evaluation uses it (sweeps and solves pass these on)."""
        return self._calibration.figures()

    def calibration_profile(self, name: str, version: int | None = None) -> Profile:
        """A calibration profile by name (newest version unless given)."""
        return self._calibration.profile(name, version)

    def export(self, path: Any, fleets: list[str] | None = None, *, force: bool = False,
               sweeps: list[Any] | None = None, progress: Callable[[int], None] | None = None,
               frontiers: list[tuple[str, Any]] | None = None) -> Any:
        """Write an Excel report of ``fleets`` (default: all) that still computes;
        ``frontiers``: (title, :class:`planner.compute.frontier.Frontier`) pairs, each a
        Frontier sheet with its chart."""
        return self._reports.export(path, fleets, force=force, sweeps=sweeps, progress=progress,
                                    frontiers=frontiers)

    def import_workbook(self, path: Any, *, fleet: str | None = None,
                        dry_run: bool = False) -> list[Any]:
        """Apply a report's edited inputs (all rows or, on any error, none); returns the row
        plans (with ``dry_run``, without applying them)."""
        return self._reports.import_workbook(path, fleet=fleet, dry_run=dry_run)


def _safe(url: str) -> str:
    """The URL without its password."""
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<database>"
