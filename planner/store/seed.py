"""Seeding the database from ``seeds/``: idempotent, and never over a user's edit.

Each catalog item (model, GPU, fleet, scenario) is recorded in ``seeded_items`` with the hash of
its seed content and the row version seeding left. A later pass inserts items never seeded,
refreshes an item whose seed changed only while its row is still at that version (no edit since),
and leaves alone rows the user edited, renamed or deleted.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from planner.compute.plan import (
    check_horizon_months,
    check_price,
    check_pricing,
    check_term,
    demand_spec,
    month_index,
    month_text,
)
from planner.spec import catalog
from planner.spec.domain import SeedReport
from planner.store import convert
from planner.store.migrate import lock_schema
from planner.store.schema import (
    DemandPointRow,
    FleetHorizonRow,
    FleetRow,
    GpuPriceRow,
    GpuRow,
    ModelRow,
    ScenarioDemandRow,
    ScenarioRow,
    SeededItemRow,
)


def _hash(content: Any) -> str:
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


def _seed_item(session: Session, report: SeedReport, kind: str, name: str, content: Any,
               find: Callable[[], Any], create: Callable[[], Any],
               refresh: Callable[[Any], None]) -> None:
    digest = _hash(content)
    record = session.scalar(select(SeededItemRow).where(SeededItemRow.kind == kind,
                                                        SeededItemRow.name == name))
    row = find()
    if record is None:
        if row is not None:  # the user made one by that name first: theirs
            report.kept.setdefault(kind, []).append(name)
            return
        row = create()
        session.add(row)
        session.flush()
        session.add(SeededItemRow(kind=kind, name=name, content_hash=digest,
                                  row_version=row.version))
        report.added.setdefault(kind, []).append(name)
        return
    if row is None or row.version != record.row_version:  # deleted or edited by the user
        report.kept.setdefault(kind, []).append(name)
        return
    if record.content_hash != digest:
        refresh(row)
        session.flush()
        record.content_hash = digest
        record.row_version = row.version
        report.refreshed.setdefault(kind, []).append(name)


def seed_models(session: Session, report: SeedReport) -> None:
    """Every config in ``seeds/models``."""
    sources = catalog.model_sources()
    for name in catalog.model_names():
        text = (catalog.seeds_dir() / "models" / f"{name}.json").read_text(encoding="utf-8")
        source = sources.get(name, {}).get("hub_id", "catalog")
        fields = convert.model_row_fields(name, text, source)
        config = json.loads(text)

        def refresh(row: ModelRow, fields: dict[str, Any] = fields) -> None:
            for key, value in fields.items():
                setattr(row, key, value)

        def find(name: str = name) -> ModelRow | None:
            return session.scalar(select(ModelRow).where(ModelRow.name == name))

        def create(fields: dict[str, Any] = fields) -> ModelRow:
            return ModelRow(**fields, notes="")

        _seed_item(session, report, "model", name, {"config": config, "source": source},
                   find, create, refresh)


def seed_gpus(session: Session, report: SeedReport) -> None:
    """Every GPU in ``seeds/gpus.toml``."""
    with (catalog.seeds_dir() / "gpus.toml").open("rb") as fh:
        records = tomllib.load(fh)
    for name, record in records.items():
        fields = convert.gpu_row_fields(catalog.gpu_from_record(name, record))

        def refresh(row: GpuRow, fields: dict[str, Any] = fields) -> None:
            for key, value in fields.items():
                setattr(row, key, value)

        def find(name: str = name) -> GpuRow | None:
            return session.scalar(select(GpuRow).where(GpuRow.name == name))

        def create(fields: dict[str, Any] = fields) -> GpuRow:
            return GpuRow(**fields)

        _seed_item(session, report, "gpu", name, record, find, create, refresh)


def seed_fleets(session: Session, report: SeedReport,
                build_scenario: Callable[[Session, FleetRow, dict[str, Any]], ScenarioRow]
                ) -> None:
    """Fleets and their scenarios from ``seeds/fleets.toml``; ``build_scenario`` validates and
    builds one scenario row the way ``scenario new`` does."""
    path = catalog.seeds_dir() / "fleets.toml"
    if not path.exists():
        return
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    for spec in data.get("fleets", []):
        fleet_row = _seed_fleet(session, report, spec)
        if fleet_row is None:  # the user deleted the demo fleet: leave its scenarios out too
            continue
        for item in spec.get("scenarios", []):
            _seed_scenario(session, report, build_scenario, fleet_row, item)


def _seed_fleet(session: Session, report: SeedReport, spec: dict[str, Any]) -> FleetRow | None:
    """One ``[[fleets]]`` entry's fleet (its description refreshed while the user has not
    changed it); the fleet's row, or ``None`` when the user deleted it."""
    fleet_name = spec["name"]

    def refresh_fleet(row: FleetRow) -> None:
        row.description = spec.get("description", "")

    def find_fleet() -> FleetRow | None:
        return session.scalar(select(FleetRow).where(FleetRow.name == fleet_name))

    def create_fleet() -> FleetRow:
        return FleetRow(name=spec["name"], description=spec.get("description", ""))

    _seed_item(session, report, "fleet", fleet_name,
               {"description": spec.get("description", "")},
               find_fleet, create_fleet, refresh_fleet)
    return session.scalar(select(FleetRow).where(FleetRow.name == fleet_name))


def _seed_scenario(session: Session, report: SeedReport,
                   build_scenario: Callable[[Session, FleetRow, dict[str, Any]], ScenarioRow],
                   fleet_row: FleetRow, item: dict[str, Any]) -> None:
    """One seeded scenario of ``fleet_row``, built as ``scenario new`` builds it (and
    refreshed in place, its id and version kept, while the user has not changed it)."""
    def find() -> Any:
        return session.scalar(select(ScenarioRow).where(
            ScenarioRow.fleet_id == fleet_row.id, ScenarioRow.name == item["name"]))

    def refresh(row: ScenarioRow) -> None:
        fresh = build_scenario(session, fleet_row, item)  # not added to the session
        for column in ScenarioRow.__table__.columns:
            if column.name not in ("id", "fleet_id", "version", "created_at"):
                setattr(row, column.key, getattr(fresh, column.key))

    def create() -> ScenarioRow:
        return build_scenario(session, fleet_row, item)

    _seed_item(session, report, "scenario", f"{fleet_row.name}/{item['name']}", item, find,
               create, refresh)


def _seed_once(session: Session, report: SeedReport, kind: str, name: str, content: Any,
               exists: Callable[[], bool], create: Callable[[], list[Any]]) -> None:
    """Insert a plan item seeded never before, unless the user made one first (``exists``);
    an item seeded once is the user's from then on (never refreshed)."""
    record = session.scalar(select(SeededItemRow).where(SeededItemRow.kind == kind,
                                                        SeededItemRow.name == name))
    if record is not None:
        return
    if exists():
        report.kept.setdefault(kind, []).append(name)
        return
    rows = create()
    if not rows:  # what it refers to is gone (a deleted demo fleet or scenario)
        return
    for row in rows:  # in order: a demand before its points (no ORM relationship orders them)
        session.add(row)
        session.flush()
    session.add(SeededItemRow(kind=kind, name=name, content_hash=_hash(content), row_version=1))
    report.added.setdefault(kind, []).append(name)


def seed_plans(session: Session, report: SeedReport) -> None:
    """Horizons, demands and GPU plan prices from ``seeds/plans.toml`` (each validated as the
    commands validate it)."""
    path = catalog.seeds_dir() / "plans.toml"
    if not path.exists():
        return
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    for h in data.get("horizons", []):
        _seed_horizon(session, report, h)
    for d in data.get("demands", []):
        _seed_demand(session, report, d)
    for p in data.get("prices", []):
        _seed_price(session, report, p)


def _fleet_id(session: Session, name: str) -> int | None:
    """The id of the fleet named ``name``, or ``None`` when there is none."""
    return session.scalar(select(FleetRow.id).where(FleetRow.name == name))


def _seed_horizon(session: Session, report: SeedReport, h: dict[str, Any]) -> None:
    """One ``[[horizons]]`` entry: the fleet's planning horizon, once (none when the fleet
    is not there)."""
    fid = _fleet_id(session, h["fleet"])

    def horizon() -> list[Any]:
        return [] if fid is None else [FleetHorizonRow(
            fleet_id=fid, start_month=month_text(month_index(h["start_month"])),
            months=check_horizon_months(h["months"]),
            pricing=check_pricing(h.get("pricing", "on-demand")))]

    def has_horizon() -> bool:
        return fid is not None and session.get(FleetHorizonRow, fid) is not None

    _seed_once(session, report, "horizon", h["fleet"], h, has_horizon, horizon)


def _seed_demand(session: Session, report: SeedReport, d: dict[str, Any]) -> None:
    """One ``[[demands]]`` entry: a scenario's demand and its points, once (none when the
    scenario is not there)."""
    fid = _fleet_id(session, d["fleet"])
    sid = None if fid is None else session.scalar(select(ScenarioRow.id).where(
        ScenarioRow.fleet_id == fid, ScenarioRow.name == d["scenario"]))

    def demand() -> list[Any]:
        if sid is None:
            return []
        fields = demand_spec(**{k: v for k, v in d.items() if k not in ("fleet", "scenario")})
        return [ScenarioDemandRow(
            scenario_id=sid, kind=fields["kind"], unit=fields["unit"],
            start_month=fields.get("start_month"),
            start_requests_per_s=fields.get("start_requests_per_s"),
            growth_fraction_per_month=fields.get("growth_fraction_per_month")),
            *(DemandPointRow(scenario_id=sid, month=m, requests_per_s=r)
              for m, r in fields.get("points", {}).items())]

    def has_demand() -> bool:
        return sid is not None and session.get(ScenarioDemandRow, sid) is not None

    _seed_once(session, report, "demand", f"{d['fleet']}/{d['scenario']}", d, has_demand,
               demand)


def _seed_price(session: Session, report: SeedReport, p: dict[str, Any]) -> None:
    """One ``[[prices]]`` entry: a GPU's plan prices from a month (or from the start), once
    (none when the GPU is not there)."""
    gid = session.scalar(select(GpuRow.id).where(GpuRow.name == p["gpu"]))
    month = month_text(month_index(p["month"])) if p.get("month") else None

    def exists() -> bool:
        return gid is not None and session.scalar(select(GpuPriceRow.id).where(
            GpuPriceRow.gpu_id == gid, GpuPriceRow.month.is_(None) if month is None
            else GpuPriceRow.month == month)) is not None

    def price() -> list[Any]:
        opt = {k: p.get(k) for k in ("on_demand", "reserved", "spot")}
        return [] if gid is None else [GpuPriceRow(
            gpu_id=gid, month=month,
            **{f"{k}_usd_per_gpu_hour": None if v is None else check_price(v, k)
               for k, v in opt.items()},
            reserved_term_months=check_term(p["term"]) if "term" in p else None)]

    _seed_once(session, report, "price", f"{p['gpu']}@{month or 'start'}", p, exists, price)


def unseeded_and_empty(session: Session) -> bool:
    """True for a database at head that has neither been seeded nor used: no
    ``seeded_items``, no model, GPU or fleet. That is a new database whose first run was
    killed between creating the schema and seeding it, one made by ``db upgrade`` alone, or
    one after ``downgrade base`` + ``upgrade head``; opening it seeds it. A database holding a
    user's rows is left for ``planner db seed``; records outlive the rows they describe, so a
    user who deleted every seeded row is not re-seeded either."""
    return all(session.scalar(select(row.id).limit(1)) is None
               for row in (SeededItemRow, ModelRow, GpuRow, FleetRow))


def seed_all(session: Session,
             build_scenario: Callable[[Session, FleetRow, dict[str, Any]], ScenarioRow]
             ) -> SeedReport:
    """Seed models, GPUs, then the demo fleets (which refer to them). On PostgreSQL the
    schema lock is held first (:func:`planner.store.migrate.lock_schema`), so clients seeding
    one new database at once add the catalog once: the others wait, then find every row
    there and add nothing."""
    lock_schema(session.connection())
    report = SeedReport()
    seed_models(session, report)
    seed_gpus(session, report)
    session.flush()
    seed_fleets(session, report, build_scenario)
    session.flush()
    seed_plans(session, report)
    return report
