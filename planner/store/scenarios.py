"""Scenario rows: their editable fields, copies, and the version check of an edit.

Validation and building a row from user fields is a use case (:mod:`planner.service.scenarios`);
this module only knows the table.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from planner.spec.domain import ConflictError
from planner.store.changelog import changed_since
from planner.store.schema import SCENARIO_INPUTS, ScenarioRow

_MANAGED = ("id", "fleet_id", "version", "created_at", "updated_at")
"""Columns the database and the ORM keep: never copied from one row to another by an edit."""


def field_values(row: ScenarioRow) -> dict[str, Any]:
    """Every user-settable field of ``row`` (model, GPU and the base it is an option of by
    name), as the change log records them."""
    values = {"name": row.name, "kind": row.kind, "model": row.model.name,
              "gpu": row.gpu.name, "notes": row.notes, "lora_targets": row.lora_targets,
              "option_of": row.option_of.name if row.option_of is not None else None,
              "chosen": bool(row.chosen)}
    values.update({c.name: getattr(row, c.name) for c in SCENARIO_INPUTS})
    return values


def overwrite(row: ScenarioRow, fresh: ScenarioRow) -> None:
    """Give ``row`` every field of ``fresh`` (a built, unsaved row), keeping its identity."""
    for column in ScenarioRow.__table__.columns:
        if column.name not in _MANAGED:
            setattr(row, column.key, getattr(fresh, column.key))


def clone(src: ScenarioRow, **overrides: Any) -> ScenarioRow:
    """A new, unsaved copy of ``src`` with ``overrides`` (``fleet_id``, ``name``). A copy is
    no one's option and chosen unless ``overrides`` say otherwise (a fleet copy re-points its
    options at the copied bases)."""
    values = {c.key: getattr(src, c.key) for c in ScenarioRow.__table__.columns
              if c.key not in ("id", "version", "created_at", "updated_at")}
    values.update(option_of_id=None, chosen=True)
    values.update(overrides)
    return ScenarioRow(**values)


def check_version(s: Session, row: ScenarioRow, expected: int | None, what: str) -> None:
    """:class:`ConflictError` naming what changed if ``row`` is no longer at ``expected``
    (``None``: no check)."""
    if expected is not None and row.version != expected:
        raise ConflictError(what, expected, row.version, changed_since(s, row.id, expected))
