"""Lookups the use cases share: rows by name, locked selects, counts, who uses a row.

Names of models and GPUs match case-insensitively; fleets and scenarios exactly. A lookup that
finds nothing raises :class:`NotFoundError` listing the names there are, so every caller's
error message can suggest the right one.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import RowMapping, Select, func, select
from sqlalchemy.orm import Session

from planner.core.errors import NotFoundError, PlannerError
from planner.store.engine import locks_rows
from planner.store.schema import FleetRow, GpuRow, ModelRow, ScenarioRow

S = TypeVar("S", bound=Select[Any])


def locked(s: Session, stmt: S) -> S:
    """``stmt`` as ``SELECT … FOR UPDATE`` where the database locks rows (not SQLite, whose
    write transactions hold the whole file)."""
    return stmt.with_for_update() if locks_rows(s) else stmt


def by_name(s: Session, table: type[Any], kind: str, name: str, *, lock: bool = False) -> Any:
    """The row of ``table`` named ``name`` (case-insensitive), or :class:`NotFoundError` listing
    the names there are."""
    stmt = select(table).where(func.lower(table.name) == name.strip().lower())
    row = s.scalar(locked(s, stmt) if lock else stmt)
    if row is None:
        raise NotFoundError(kind, name, list(s.scalars(select(table.name))))
    return row


def model_row(s: Session, name: str, *, lock: bool = False) -> ModelRow:
    """A model by name (case-insensitive)."""
    row: ModelRow = by_name(s, ModelRow, "model", name, lock=lock)
    return row


def model_rows_from_hub(s: Session, repo_id: str) -> list[ModelRow]:
    """Models imported from the Hub repo ``repo_id`` (case-insensitive), oldest first."""
    return list(s.scalars(select(ModelRow)
                          .where(func.lower(ModelRow.hub_repo) == repo_id.strip().lower())
                          .order_by(ModelRow.id)))


def gpu_row(s: Session, name: str, *, lock: bool = False) -> GpuRow:
    """A GPU by name (case-insensitive)."""
    row: GpuRow = by_name(s, GpuRow, "GPU", name, lock=lock)
    return row


def gpu_named(s: Session, name: str) -> GpuRow | None:
    """The GPU called ``name`` (case-insensitive), if there is one."""
    return s.scalar(select(GpuRow).where(func.lower(GpuRow.name) == name.strip().lower()))


def model_names_lower(s: Session) -> set[str]:
    """Every model name, lower-cased (for duplicate checks)."""
    return {n.lower() for n in s.scalars(select(ModelRow.name))}


def fleet_named(s: Session, name: str) -> FleetRow | None:
    """The fleet called exactly ``name``, if there is one."""
    return s.scalar(select(FleetRow).where(FleetRow.name == name))


def fleet_row(s: Session, name: str) -> FleetRow:
    """A fleet by name, or :class:`NotFoundError`."""
    row = fleet_named(s, name)
    if row is None:
        raise NotFoundError("fleet", name, list(s.scalars(select(FleetRow.name))))
    return row


def scenario_count(s: Session, fleet_id: int) -> int:
    """How many scenarios the fleet holds."""
    return s.scalar(select(func.count()).where(ScenarioRow.fleet_id == fleet_id)) or 0


def scenario_counts(s: Session) -> dict[int, int]:
    """Scenario count by fleet id (fleets without scenarios are left out)."""
    rows = s.execute(select(ScenarioRow.fleet_id, func.count()).group_by(ScenarioRow.fleet_id))
    return {fleet_id: count for fleet_id, count in rows}


def scenario_named(s: Session, fleet_id: int, name: str) -> ScenarioRow | None:
    """The fleet's scenario called exactly ``name``, if there is one."""
    return s.scalar(select(ScenarioRow).where(ScenarioRow.fleet_id == fleet_id,
                                              ScenarioRow.name == name))


def scenario_row(s: Session, fleet: str, name: str, *, lock: bool = False) -> ScenarioRow:
    """A scenario by fleet and name (locked for update with ``lock``), or
    :class:`NotFoundError` listing the fleet's scenarios."""
    fleet_id = fleet_row(s, fleet).id
    stmt = select(ScenarioRow).where(ScenarioRow.fleet_id == fleet_id, ScenarioRow.name == name)
    row = s.scalar(locked(s, stmt) if lock else stmt)
    if row is None:
        known = s.scalars(select(ScenarioRow.name).where(ScenarioRow.fleet_id == fleet_id))
        raise NotFoundError(f"scenario in fleet {fleet!r}", name, list(known))
    return row


def scenario_by_id(s: Session, scenario_id: int, *, lock: bool = False) -> ScenarioRow:
    """The scenario with this id (locked for update with ``lock``); it must exist."""
    row = s.get(ScenarioRow, scenario_id, with_for_update=lock and locks_rows(s))
    assert row is not None, f"scenario {scenario_id} vanished inside its transaction"
    return row


def scenario_mappings(s: Session, fleet_id: int | None = None, limit: int | None = None,
                      after: str | None = None) -> list[RowMapping]:
    """Scenario rows (of one fleet, or all) by fleet and name, with ``_fleet``, ``_model`` and
    ``_gpu`` names joined in, and ``_option_of``, the name of the base scenario of an option
    (None for others); with ``limit``, only the first that many; with ``after`` (one fleet's),
    only those named after it (the next page of a fleet read page by page). A Core select (no
    ORM identity map): 5,000 scenarios load in a third of the time."""
    table = ScenarioRow.__table__
    base = table.alias("option_base")
    stmt = (select(table, FleetRow.name.label("_fleet"), ModelRow.name.label("_model"),
                   GpuRow.name.label("_gpu"), base.c.name.label("_option_of"))
            .outerjoin(FleetRow, FleetRow.id == table.c.fleet_id)
            .outerjoin(ModelRow, ModelRow.id == table.c.model_id)
            .outerjoin(GpuRow, GpuRow.id == table.c.gpu_id)
            .outerjoin(base, base.c.id == table.c.option_of_id)
            .order_by(FleetRow.name, table.c.name))
    if fleet_id is not None:
        stmt = stmt.where(table.c.fleet_id == fleet_id)
    if after is not None:
        stmt = stmt.where(table.c.name > after)
    if limit is not None:
        stmt = stmt.limit(limit)
    rows = list(s.execute(stmt).mappings())
    _refuse_dangling(rows)
    return rows


def _refuse_dangling(rows: list[RowMapping]) -> None:
    """Outer joins, then this check: a scenario whose fleet, model or GPU was deleted behind
    the planner's back (foreign keys off) is a damaged database, named, never a row that a
    list or an export silently leaves out."""
    for row in rows:
        for what, key, ref in (("fleet", "_fleet", "fleet_id"), ("model", "_model", "model_id"),
                               ("GPU", "_gpu", "gpu_id")):
            if row[key] is None:
                raise PlannerError(
                    f"the database is damaged: scenario {row['name']!r} (id {row['id']}) "
                    f"names {what} id {row[ref]}, which does not exist (deleted outside the "
                    f"planner?); restore the database from a backup, or add the {what} back "
                    "and check with `planner db check`")


def users(s: Session, where: Any) -> list[str]:
    """``fleet/scenario`` of every scenario matching ``where``, sorted."""
    rows = s.execute(select(FleetRow.name, ScenarioRow.name).join(ScenarioRow.fleet)
                     .where(where).order_by(FleetRow.name, ScenarioRow.name))
    return [f"{f}/{n}" for f, n in rows]


def row_stamps(s: Session, table: type[Any]) -> dict[str, tuple[Any, ...]]:
    """``name → (id, version, updated_at)`` of every row of a catalog table: what a cache of
    parsed rows compares against, without reading the rows themselves."""
    rows = s.execute(select(table.name, table.id, table.version, table.updated_at))
    return {name: (row_id, version, updated) for name, row_id, version, updated in rows}


def rows_named(s: Session, table: type[Any], names: list[str]) -> list[Any]:
    """The rows of ``table`` with these exact names."""
    out: list[Any] = []
    for i in range(0, len(names), 500):  # well under every database's parameter limit
        out.extend(s.scalars(select(table).where(table.name.in_(names[i:i + 500]))))
    return out
