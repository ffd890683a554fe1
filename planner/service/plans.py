"""Use cases over plans (issue 15 item 2): a fleet's horizon, its workloads' demand, GPU prices
by month, and the plan they give (:func:`planner.compute.plan.evaluate_plan`).

Every write is one transaction and is validated first (field and allowed range named);
nothing is written on a refusal. The plan counts what the fleet roll-up counts: inference
scenarios that are the chosen option (:func:`planner.service.compare.counted`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import CursorResult, Engine, delete, insert, select
from sqlalchemy.orm import Session

from planner.compute.plan import (
    Demand,
    GpuPrice,
    Horizon,
    PlanResult,
    check_horizon_months,
    check_price,
    check_pricing,
    check_term,
    demand_spec,
    evaluate_plan,
    month_index,
    month_text,
)
from planner.core.errors import ValidationError
from planner.service.compare import counted
from planner.service.evaluation import Evaluation
from planner.service.scenarios import Scenarios
from planner.spec.domain import Scenario
from planner.store import queries
from planner.store.engine import read_session, write_transaction
from planner.store.schema import (
    DemandPointRow,
    FleetHorizonRow,
    FleetRow,
    GpuPriceRow,
    GpuRow,
    ScenarioDemandRow,
    ScenarioRow,
)


class Plans:
    """Horizons, demands, prices and plans of the database behind ``engine``."""

    def __init__(self, engine: Engine, scenarios: Scenarios, evaluation: Evaluation) -> None:
        self.engine = engine
        self.scenarios = scenarios
        self.evaluation = evaluation

    # ------------------------------------------------------------------ horizon
    def set_horizon(self, fleet: str, start_month: Any = None, months: Any = None,
                    pricing: Any = None) -> Horizon:
        """Set (or change) a fleet's horizon; unchanged fields keep their value. A new horizon
        needs the start month and the number of months."""
        with write_transaction(self.engine) as s:
            fleet_row = queries.fleet_row(s, fleet)
            row = s.get(FleetHorizonRow, fleet_row.id)
            if row is None:
                if start_month is None or months is None:
                    raise ValidationError("horizon", "a new horizon needs --start YYYY-MM and "
                                          "--months N")
                row = FleetHorizonRow(fleet_id=fleet_row.id, pricing="on-demand")
                s.add(row)
            if start_month is not None:
                row.start_month = month_text(month_index(start_month, "start"))
            if months is not None:
                row.months = check_horizon_months(months)
            if pricing is not None:
                row.pricing = check_pricing(pricing)
            s.flush()
            return _horizon(fleet_row.name, row)

    def horizon(self, fleet: str) -> Horizon | None:
        """A fleet's horizon, or None when it has none."""
        with read_session(self.engine) as s:
            fleet_row = queries.fleet_row(s, fleet)
            row = s.get(FleetHorizonRow, fleet_row.id)
            return _horizon(fleet_row.name, row) if row else None

    # ------------------------------------------------------------------ demand
    def set_demand(self, fleet: str, name: str, **spec: Any) -> Demand:
        """Set a scenario's demand from what a user typed (see :func:`demand_spec`),
        replacing any it had."""
        fields = demand_spec(**spec)
        with write_transaction(self.engine) as s:
            row = queries.scenario_row(s, fleet, name, lock=True)
            _check_inference(row)
            _write_demand(s, row.id, fields)
            return _demands(s, [row])[row.name]

    def set_demands(self, fleet: str, specs: Mapping[str, dict[str, Any]]) -> int:
        """Set the demand of many scenarios of one fleet in one transaction (all or none);
        ``specs`` maps a scenario name to :func:`demand_spec`'s keyword arguments."""
        checked = {n: demand_spec(**spec) for n, spec in specs.items()}
        with write_transaction(self.engine) as s:
            fleet_row = queries.fleet_row(s, fleet)
            rows = {r.name: r for r in s.scalars(select(ScenarioRow).where(
                ScenarioRow.fleet_id == fleet_row.id, ScenarioRow.name.in_(list(checked))))}
            missing = sorted(set(checked) - set(rows))
            if missing:
                raise ValidationError("scenario", f"no scenario {missing[0]!r} in fleet "
                                      f"{fleet_row.name!r}")
            for n in checked:
                _check_inference(rows[n])
            _write_demands(s, {rows[n].id: fields for n, fields in checked.items()})
            return len(checked)

    def clear_demand(self, fleet: str, name: str) -> bool:
        """Remove a scenario's demand (it plans at its target rate again); False if none."""
        with write_transaction(self.engine) as s:
            row = queries.scenario_row(s, fleet, name, lock=True)
            result = s.execute(delete(ScenarioDemandRow).where(
                ScenarioDemandRow.scenario_id == row.id))
            assert isinstance(result, CursorResult)  # a DELETE's result counts its rows
            return bool(result.rowcount)

    def demands(self, fleet: str) -> dict[str, Demand]:
        """The demands of a fleet's scenarios, by scenario name."""
        with read_session(self.engine) as s:
            fleet_row = queries.fleet_row(s, fleet)
            rows = list(s.execute(select(ScenarioRow.id, ScenarioRow.name, ScenarioRow.fleet_id)
                                  .where(ScenarioRow.fleet_id == fleet_row.id)).all())
            return _demands(s, rows)

    # ------------------------------------------------------------------ prices
    def set_price(self, gpu: str, *, month: Any = None, on_demand: Any = None,
                  reserved: Any = None, term: Any = None, spot: Any = None,
                  clear: bool = False) -> GpuPrice:
        """Set prices of a GPU from ``month`` on (None: from the start); fields not given keep
        their value. A reserved price needs a term (given now or before). ``clear`` removes
        the row of that month instead."""
        key = month_text(month_index(month, "month")) if month is not None else None
        values = _price_values(on_demand, reserved, term, spot)
        with write_transaction(self.engine) as s:
            gpu_row = queries.gpu_row(s, gpu, lock=True)
            row = s.scalar(select(GpuPriceRow).where(
                GpuPriceRow.gpu_id == gpu_row.id,
                GpuPriceRow.month.is_(None) if key is None else GpuPriceRow.month == key))
            if clear:
                if row is not None:
                    s.delete(row)
                return GpuPrice(gpu_row.name, key)
            row = _priced_row(s, row, gpu_row.id, key, values)
            s.flush()
            return _price(gpu_row.name, row)

    def prices(self, gpu: str | None = None) -> list[GpuPrice]:
        """Price rows (of one GPU, or all), by GPU then month."""
        with read_session(self.engine) as s:
            stmt = select(GpuRow.name, GpuPriceRow).join(GpuRow, GpuRow.id == GpuPriceRow.gpu_id)
            if gpu is not None:
                stmt = stmt.where(GpuRow.id == queries.gpu_row(s, gpu).id)
            found = [_price(n, r) for n, r in s.execute(stmt).all()]
        return sorted(found, key=lambda p: (p.gpu, p.month or ""))

    # ------------------------------------------------------------------ plan
    def plan(self, fleet: str, *, start: Any = None, end: Any = None, pricing: Any = None,
             scenarios: list[Scenario] | None = None) -> PlanResult:
        """The plan of a fleet over its horizon (or ``start`` to ``end``, YYYY-MM, inside or
        outside it) at ``pricing`` (default: the horizon's)."""
        horizon = self.horizon(fleet)
        first, last = _plan_months(fleet, horizon, start, end)
        chosen = check_pricing(pricing if pricing is not None
                               else horizon.pricing if horizon else "on-demand")
        everything = scenarios if scenarios is not None else self.scenarios.scenarios(fleet)
        workloads, excluded = _workloads(everything)
        demands = self.demands(fleet)
        for sc in workloads:  # an option group is one workload: a chosen option without a
            if sc.option_of and sc.name not in demands and sc.option_of in demands:  # demand
                demands[sc.name] = demands[sc.option_of]  # of its own plans at its base's
        models, gpus = self.evaluation.catalog_specs()
        return evaluate_plan(
            fleet, workloads, demands,
            [month_text(k) for k in range(first, last + 1)],
            horizon.start_month if horizon else month_text(first), models, gpus,
            self.prices(), chosen, self.evaluation.profiles(), excluded)


def _priced_row(s: Session, row: GpuPriceRow | None, gpu_id: int, key: str | None,
                values: dict[str, Any]) -> GpuPriceRow:
    """The price row of ``key``'s month (added when there is none) with the ``values`` given
    set; refused without any, or left with a reserved price and no term."""
    if all(v is None for v in values.values()):
        raise ValidationError("price", "at least one of --on-demand, --reserved, "
                              "--term, --spot")
    if row is None:
        row = GpuPriceRow(gpu_id=gpu_id, month=key)
        s.add(row)
    for k, v in values.items():
        if v is not None:
            setattr(row, k, v)
    if row.reserved_usd_per_gpu_hour is not None and row.reserved_term_months is None:
        raise ValidationError("term", "needed with a reserved price: --term MONTHS "
                              "(an integer from 1 to 120)")
    return row


def _plan_months(fleet: str, horizon: Any, start: Any, end: Any) -> tuple[int, int]:
    """The first and last month (indexes) a plan covers: ``start``/``end`` where given, else
    the horizon's; refused without either, backwards, or over 120 months."""
    if horizon is None and (start is None or end is None):
        raise ValidationError("horizon", f"fleet {fleet!r} has no horizon; set one with "
                              f"`planner fleet horizon {fleet} --start YYYY-MM --months N` "
                              "or pass --from and --to")
    months = horizon.month_list if horizon else []
    first = month_index(start, "from") if start is not None else month_index(months[0])
    last = month_index(end, "to") if end is not None else month_index(months[-1])
    if last < first:
        raise ValidationError("to", f"a month at or after --from ({month_text(first)})",
                              value=month_text(last))
    if last - first + 1 > 120:
        raise ValidationError("to", "at most 120 months after --from", value=end)
    return first, last


def _workloads(everything: list[Scenario]) -> tuple[list[Scenario], list[tuple[str, str]]]:
    """The scenarios a plan serves (counted inference scenarios), and the others with why
    they are left out (training, or an option not chosen)."""
    keep = set(counted(everything))
    workloads = [sc for i, sc in enumerate(everything) if i in keep and sc.kind == "inference"]
    excluded = [(sc.name, "training" if sc.kind == "training" else "option not chosen")
                for i, sc in enumerate(everything) if sc.kind == "training" or i not in keep]
    return workloads, excluded


def _price_values(on_demand: Any, reserved: Any, term: Any, spot: Any) -> dict[str, Any]:
    """A price row's fields from ``set_price``'s arguments, each checked (``None``: not
    given, keeps its value)."""
    def checked(value: Any, check: Any, name: str) -> Any:
        return None if value is None else check(value, name)

    return {"on_demand_usd_per_gpu_hour": checked(on_demand, check_price, "on_demand"),
            "reserved_usd_per_gpu_hour": checked(reserved, check_price, "reserved"),
            "reserved_term_months": None if term is None else check_term(term),
            "spot_usd_per_gpu_hour": checked(spot, check_price, "spot")}


def _check_inference(row: ScenarioRow) -> None:
    if row.kind != "inference":
        raise ValidationError("scenario", "an inference scenario (a training run has no "
                              "request demand)", value=row.name)


def _write_demand(s: Session, scenario_id: int, fields: dict[str, Any]) -> None:
    """Replace a scenario's demand with ``fields`` (from :func:`demand_spec`)."""
    _write_demands(s, {scenario_id: fields})


def _write_demands(s: Session, by_id: dict[int, dict[str, Any]]) -> None:
    """Replace the demands of many scenarios: two deletes and two bulk inserts in all."""
    ids = list(by_id)
    for chunk in range(0, len(ids), 5000):  # below every database's bound-parameter limit
        part = ids[chunk:chunk + 5000]
        s.execute(delete(DemandPointRow).where(DemandPointRow.scenario_id.in_(part)))
        s.execute(delete(ScenarioDemandRow).where(ScenarioDemandRow.scenario_id.in_(part)))
    s.execute(insert(ScenarioDemandRow), [
        {"scenario_id": i, "kind": f["kind"], "unit": f["unit"],
         "start_month": f.get("start_month"),
         "start_requests_per_s": f.get("start_requests_per_s"),
         "growth_fraction_per_month": f.get("growth_fraction_per_month")}
        for i, f in by_id.items()])
    points = [{"scenario_id": i, "month": m, "requests_per_s": r}
              for i, f in by_id.items() for m, r in f.get("points", {}).items()]
    if points:
        s.execute(insert(DemandPointRow), points)
    s.expire_all()


def _demands(s: Session, rows: list[Any]) -> dict[str, Demand]:
    """The demands of scenarios (rows with ``id``, ``name`` and ``fleet_id``), by name: read
    as plain columns by fleet (a subquery), so a fleet of 10,000 scenarios is three queries."""
    names = {r.id: r.name for r in rows}
    fleet = {r.id: r.fleet_id for r in rows}
    if not rows:
        return {}
    fleet_names = dict(s.execute(select(FleetRow.id, FleetRow.name).where(
        FleetRow.id.in_(set(fleet.values())))).all())
    of_fleets = select(ScenarioRow.id).where(ScenarioRow.fleet_id.in_(set(fleet.values())))
    d = ScenarioDemandRow
    found = [r for r in s.execute(select(
        d.scenario_id, d.kind, d.unit, d.start_month, d.start_requests_per_s,
        d.growth_fraction_per_month).where(d.scenario_id.in_(of_fleets))).all()
        if r.scenario_id in names]
    points: dict[int, dict[str, float]] = {}
    for sid, month, rate in s.execute(select(
            DemandPointRow.scenario_id, DemandPointRow.month, DemandPointRow.requests_per_s)
            .where(DemandPointRow.scenario_id.in_(of_fleets)).order_by(DemandPointRow.month)):
        points.setdefault(sid, {})[month] = rate
    return {names[r.scenario_id]: Demand(
        fleet=fleet_names[fleet[r.scenario_id]], scenario=names[r.scenario_id], unit=r.unit,
        start_month=r.start_month, start_requests_per_s=r.start_requests_per_s,
        growth_fraction_per_month=r.growth_fraction_per_month,
        series_requests_per_s=points.get(r.scenario_id, {}) if r.kind == "series" else {})
        for r in found}


def _horizon(fleet: str, row: FleetHorizonRow) -> Horizon:
    return Horizon(fleet, row.start_month, row.months, row.pricing)


def _price(gpu: str, row: GpuPriceRow) -> GpuPrice:
    return GpuPrice(gpu, row.month, row.on_demand_usd_per_gpu_hour,
                    row.reserved_usd_per_gpu_hour, row.reserved_term_months,
                    row.spot_usd_per_gpu_hour)
