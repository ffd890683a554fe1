"""Use cases over fleets: named plans holding scenarios, and their what-if copies."""

from __future__ import annotations

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from planner.core.errors import ValidationError
from planner.service.fields import clean_name, clean_text
from planner.spec.domain import DuplicateError, Fleet
from planner.store import convert, queries
from planner.store.engine import read_session, write_transaction
from planner.store.plans import copy_demands, copy_horizon
from planner.store.scenarios import clone
from planner.store.schema import FleetRow, ScenarioRow


class Fleets:
    """The fleets of the database behind ``engine``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def fleets(self) -> list[Fleet]:
        """Every fleet with its scenario count."""
        with read_session(self.engine) as s:
            counts = queries.scenario_counts(s)
            return [convert.fleet(r, counts.get(r.id, 0))
                    for r in s.scalars(select(FleetRow).order_by(FleetRow.name))]

    def fleet(self, name: str) -> Fleet:
        """One fleet by name."""
        with read_session(self.engine) as s:
            row = queries.fleet_row(s, name)
            return convert.fleet(row, queries.scenario_count(s, row.id))

    def new_fleet(self, name: str, description: str = "") -> Fleet:
        """Create an empty fleet."""
        with write_transaction(self.engine) as s:
            row = FleetRow(name=_free_name(s, name),
                           description=clean_text(description, "description"))
            s.add(row)
            s.flush()
            return convert.fleet(row)

    def copy_fleet(self, source: str, name: str, description: str | None = None) -> Fleet:
        """A what-if copy of a fleet and all its scenarios."""
        with write_transaction(self.engine) as s:
            src = queries.fleet_row(s, source)
            row = FleetRow(name=_free_name(s, name),
                           description=src.description if description is None
                           else clean_text(description, "description"))
            s.add(row)
            s.flush()
            copies: dict[int, ScenarioRow] = {}
            sources = list(s.scalars(select(ScenarioRow).where(ScenarioRow.fleet_id == src.id)))
            for sc in sources:
                copies[sc.id] = clone(sc, fleet_id=row.id, chosen=sc.chosen)
                s.add(copies[sc.id])
            s.flush()
            for sc in sources:  # the copy keeps the option groups, re-pointed at the copies
                if sc.option_of_id is not None:
                    copies[sc.id].option_of_id = copies[sc.option_of_id].id
            s.flush()
            copy_horizon(s, src.id, row.id)
            copy_demands(s, [(a.id, copies[a.id].id) for a in sources])
            return convert.fleet(row, queries.scenario_count(s, row.id))

    def delete_fleet(self, name: str) -> int:
        """Delete a fleet and its scenarios; returns how many scenarios went with it."""
        with write_transaction(self.engine) as s:
            row = queries.fleet_row(s, name)
            count = queries.scenario_count(s, row.id)
            s.delete(row)
            return count


def _free_name(s: Session, name: str) -> str:
    """``name`` cleaned, or :class:`DuplicateError` if a fleet has it already."""
    name = clean_name(name, "fleet")
    if "/" in name:
        raise ValidationError("fleet", "must not contain '/' (scenarios are written "
                              "FLEET/NAME)", value=name)
    if queries.fleet_named(s, name):
        raise DuplicateError(f"a fleet named {name!r} already exists")
    return name
