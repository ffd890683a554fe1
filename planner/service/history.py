"""Use cases over the change log: a scenario's history, and undo/redo per fleet.

The history is shared by everyone editing a fleet: an undo reverts the fleet's latest change
set, whoever made it. A scenario changed outside the log since (its version is not the one the
log last left) is not reverted blindly: :class:`ConflictError`, nothing changes.
"""

from __future__ import annotations

from sqlalchemy import Engine

from planner.service.scenarios import Scenarios
from planner.spec.domain import Change, ConflictError
from planner.store import changelog, queries
from planner.store.engine import read_session, write_transaction
from planner.store.scenarios import field_values, overwrite
from planner.store.schema import ScenarioChangeRow


class History:
    """Change log, undo and redo; ``scenarios`` rebuilds (and re-validates) a reverted row."""

    def __init__(self, engine: Engine, scenarios: Scenarios) -> None:
        self.engine = engine
        self.scenarios = scenarios

    def history(self, fleet: str, name: str) -> list[Change]:
        """The scenario's change log, oldest first."""
        with read_session(self.engine) as s:
            return changelog.history(s, queries.scenario_row(s, fleet, name).id)

    def undo(self, fleet: str) -> list[Change] | None:
        """Revert the latest change set of ``fleet``'s scenarios that is not undone yet; returns
        its changes (None when there is nothing to undo). Refused, changing nothing, if the
        scenario was changed since that change set."""
        return self._step(fleet, undo=True)

    def redo(self, fleet: str) -> list[Change] | None:
        """Re-apply the change set undone last, if no edit came after it."""
        return self._step(fleet, undo=False)

    def _step(self, fleet: str, *, undo: bool) -> list[Change] | None:
        with write_transaction(self.engine) as s:
            fleet_row = queries.fleet_row(s, fleet)
            rows = changelog.next_step(s, fleet_row.id, undo=undo)
            if not rows:
                return None
            by_scenario: dict[int, list[ScenarioChangeRow]] = {}
            for r in rows:  # an option choice changes several scenarios in one step
                by_scenario.setdefault(r.scenario_id, []).append(r)
            scenarios = {sid: queries.scenario_by_id(s, sid, lock=True) for sid in by_scenario}
            for sid, scenario in scenarios.items():
                # Every edit, undo and redo records the version it left; a scenario at another
                # version was changed outside the log, and is not reverted blindly.
                expected = changelog.logged_version(s, sid)
                if scenario.version != expected:
                    raise ConflictError(f"scenario {fleet}/{scenario.name}", expected,
                                        scenario.version,
                                        changelog.changed_since(s, sid, expected))
            built = {sid: self.scenarios.build_row(
                s, scenario.fleet, {**field_values(scenario),
                                    **changelog.values(by_scenario[sid], undo=undo)})
                     for sid, scenario in scenarios.items()}
            changes: list[Change] = []
            for sid, scenario in scenarios.items():
                overwrite(scenario, built[sid])
            s.flush()
            for sid, scenario in scenarios.items():
                changes += changelog.mark(by_scenario[sid], undo=undo, version=scenario.version)
            return changes
