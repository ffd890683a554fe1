"""The scenario change log: one change set per edit, and the undo/redo steps over it.

Each field an edit changes is one row (old and new value as JSON, the version the edit left,
and who made it: the OS user of the client).
Undo and redo flip the ``undone`` flag of a whole change set; a new edit ends the redo history
because redo only looks past the latest change that is not undone.
"""

from __future__ import annotations

import getpass
import json
import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from planner.spec.domain import Change
from planner.store.schema import ScenarioChangeRow, ScenarioRow


def _encode(value: Any) -> str:
    return json.dumps(value)


def _decode(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _change(r: ScenarioChangeRow) -> Change:
    return Change(r.change_set, r.field, _decode(r.old_value), _decode(r.new_value),
                  r.version_after, r.changed_at, r.undone, r.author, r.scenario_id)


def author() -> str | None:
    """Who is making a change: the OS user of this client (None if it cannot be told)."""
    try:
        return getpass.getuser()[:100]
    except Exception:  # no user name in the environment or the password database
        return None


def new_change_set() -> str:
    """A fresh change-set id: the fields one edit changes, on one or several scenarios (an
    option choice changes two), share it and are undone together."""
    return uuid.uuid4().hex


def log(s: Session, row: ScenarioRow, before: dict[str, Any], after: dict[str, Any],
        change_set: str | None = None) -> None:
    """Record the fields that differ between ``before`` and ``after`` as one change set
    (``change_set``: part of an edit that changes other scenarios too)."""
    change_set, who = change_set or new_change_set(), author()
    for key, old in before.items():
        new = after[key]
        if old != new:
            s.add(ScenarioChangeRow(scenario_id=row.id, fleet_id=row.fleet_id,
                                    change_set=change_set, field=key,
                                    old_value=_encode(old), new_value=_encode(new),
                                    version_after=row.version, author=who))


def changed_since(s: Session, scenario_id: int, version: int) -> dict[str, Any]:
    """Each field logged as changed after ``version``, with its latest value."""
    rows = s.scalars(select(ScenarioChangeRow).where(
        ScenarioChangeRow.scenario_id == scenario_id,
        ScenarioChangeRow.version_after > version).order_by(ScenarioChangeRow.id))
    return {r.field: _decode(r.new_value) for r in rows}


def history(s: Session, scenario_id: int) -> list[Change]:
    """The scenario's change log, oldest first."""
    rows = s.scalars(select(ScenarioChangeRow).where(
        ScenarioChangeRow.scenario_id == scenario_id).order_by(ScenarioChangeRow.id))
    return [_change(r) for r in rows]


def next_step(s: Session, fleet_id: int, *, undo: bool) -> list[ScenarioChangeRow]:
    """The change set an undo (the latest not undone) or a redo (the earliest undone after
    the latest not undone) of the fleet's scenarios would apply; empty when there is none.
    Each lookup is one descent of the index ``(fleet_id, undone, id)``, whatever the size of
    the fleet or the log."""
    of_fleet = ScenarioChangeRow.fleet_id == fleet_id
    if undo:
        target = s.scalar(select(ScenarioChangeRow).where(
            of_fleet, ScenarioChangeRow.undone.is_(False))
            .order_by(ScenarioChangeRow.id.desc()).limit(1))
    else:
        latest_done = s.scalar(select(func.max(ScenarioChangeRow.id)).where(
            of_fleet, ScenarioChangeRow.undone.is_(False))) or 0
        target = s.scalar(select(ScenarioChangeRow).where(
            of_fleet, ScenarioChangeRow.undone.is_(True), ScenarioChangeRow.id > latest_done)
            .order_by(ScenarioChangeRow.id.asc()).limit(1))
    if target is None:
        return []
    return list(s.scalars(select(ScenarioChangeRow).where(
        ScenarioChangeRow.change_set == target.change_set).order_by(ScenarioChangeRow.id)))


def logged_version(s: Session, scenario_id: int) -> int:
    """The version the scenario's latest logged edit, undo or redo left it at; 0 when none is
    logged (versions start at 1, so no scenario is at it)."""
    return s.scalar(select(func.max(ScenarioChangeRow.version_after)).where(
        ScenarioChangeRow.scenario_id == scenario_id)) or 0


def values(rows: list[ScenarioChangeRow], *, undo: bool) -> dict[str, Any]:
    """The field values a step applies: the old ones to undo, the new ones to redo."""
    return {r.field: _decode(r.old_value if undo else r.new_value) for r in rows}


def mark(rows: list[ScenarioChangeRow], *, undo: bool, version: int) -> list[Change]:
    """Flag a change set's rows of one scenario undone (or redone) at its new ``version``."""
    for r in rows:
        r.undone = undo
        r.version_after = version
    return [_change(r) for r in rows]
