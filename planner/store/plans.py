"""Plan rows that follow their scenario or fleet when it is copied (a what-if copy plans like
its original): demands with their monthly points, and a fleet's horizon."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from planner.store.schema import DemandPointRow, FleetHorizonRow, ScenarioDemandRow

_DEMAND = ("kind", "unit", "start_month", "start_requests_per_s", "growth_fraction_per_month")


def copy_demands(s: Session, pairs: Iterable[tuple[int, int]]) -> None:
    """Give each new scenario (``(source id, copy id)``) its source's demand, if it has one."""
    new_of = dict(pairs)
    if not new_of:
        return
    demands = [{"scenario_id": new_of[row.scenario_id],
                **{k: getattr(row, k) for k in _DEMAND}}
               for row in s.scalars(select(ScenarioDemandRow).where(
                   ScenarioDemandRow.scenario_id.in_(list(new_of))))]
    if not demands:
        return
    s.execute(insert(ScenarioDemandRow), demands)
    points = [{"scenario_id": new_of[p.scenario_id], "month": p.month,
               "requests_per_s": p.requests_per_s}
              for p in s.scalars(select(DemandPointRow).where(
                  DemandPointRow.scenario_id.in_(list(new_of))))]
    if points:
        s.execute(insert(DemandPointRow), points)


def copy_horizon(s: Session, source_fleet_id: int, copy_fleet_id: int) -> None:
    """Give a copied fleet its source's horizon, if it has one."""
    row = s.get(FleetHorizonRow, source_fleet_id)
    if row is not None:
        s.add(FleetHorizonRow(fleet_id=copy_fleet_id, start_month=row.start_month,
                              months=row.months, pricing=row.pricing))
        s.flush()
