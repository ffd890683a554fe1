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

from planner import catalog
from planner.domain import SeedReport
from planner.store import convert
from planner.store.schema import (
    FleetRow,
    GpuRow,
    ModelRow,
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

        _seed_item(session, report, "model", name, {"config": config, "source": source},
                   lambda name=name: session.scalar(select(ModelRow).where(ModelRow.name == name)),
                   lambda fields=fields: ModelRow(**fields, notes=""), refresh)


def seed_gpus(session: Session, report: SeedReport) -> None:
    """Every GPU in ``seeds/gpus.toml``."""
    with (catalog.seeds_dir() / "gpus.toml").open("rb") as fh:
        records = tomllib.load(fh)
    for name, record in records.items():
        fields = convert.gpu_row_fields(catalog.gpu_from_record(name, record))

        def refresh(row: GpuRow, fields: dict[str, Any] = fields) -> None:
            for key, value in fields.items():
                setattr(row, key, value)

        _seed_item(session, report, "gpu", name, record,
                   lambda name=name: session.scalar(select(GpuRow).where(GpuRow.name == name)),
                   lambda fields=fields: GpuRow(**fields), refresh)


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
        fleet_name = spec["name"]

        def refresh_fleet(row: FleetRow, spec: dict[str, Any] = spec) -> None:
            row.description = spec.get("description", "")

        _seed_item(session, report, "fleet", fleet_name,
                   {"description": spec.get("description", "")},
                   lambda n=fleet_name: session.scalar(select(FleetRow).where(FleetRow.name == n)),
                   lambda spec=spec: FleetRow(name=spec["name"],
                                              description=spec.get("description", "")),
                   refresh_fleet)
        fleet_row = session.scalar(select(FleetRow).where(FleetRow.name == fleet_name))
        if fleet_row is None:  # the user deleted the demo fleet: leave its scenarios out too
            continue
        for item in spec.get("scenarios", []):
            key = f"{fleet_name}/{item['name']}"

            def find(item: dict[str, Any] = item, fleet_row: FleetRow = fleet_row) -> Any:
                return session.scalar(select(ScenarioRow).where(
                    ScenarioRow.fleet_id == fleet_row.id, ScenarioRow.name == item["name"]))

            def refresh(row: ScenarioRow, item: dict[str, Any] = item,
                        fleet_row: FleetRow = fleet_row) -> None:
                fresh = build_scenario(session, fleet_row, item)  # not added to the session
                for column in ScenarioRow.__table__.columns:
                    if column.name not in ("id", "fleet_id", "version", "created_at"):
                        setattr(row, column.key, getattr(fresh, column.key))

            _seed_item(session, report, "scenario", key, item, find,
                       lambda item=item, fleet_row=fleet_row: build_scenario(session, fleet_row,
                                                                             item),
                       refresh)


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
    """Seed models, GPUs, then the demo fleets (which refer to them)."""
    report = SeedReport()
    seed_models(session, report)
    seed_gpus(session, report)
    session.flush()
    seed_fleets(session, report, build_scenario)
    return report
