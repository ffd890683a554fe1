"""Alternatives (issue 15): option groups of scenarios and which one of each is chosen.

A scenario can be an *option* of another scenario of the same fleet, its *base*: the base and
every scenario whose ``option_of`` names it form an *option group* (the same workload on another
GPU, TP, dtype or engine). Exactly one scenario of a group is ``chosen``; only chosen scenarios
are counted in roll-ups, the workbook's Summary and cost totals
(:func:`planner.service.compare.counted`).
A scenario in no group is always chosen.

The rules, each kept inside the write transaction of the edit that touches a group, and logged
in that edit's one change set (so one undo step reverts all of it):

- **Join.** ``option_of=BASE`` makes a scenario an option of BASE. BASE must be another scenario
  of the same fleet that is itself no one's option (groups nest one level), and the scenario
  must have no options of its own. It joins *not chosen* (the group keeps its choice) unless
  ``chosen=true`` is given with it.
- **Leave.** ``option_of=`` (empty) makes it a scenario of its own again, chosen; if it was the
  group's choice, the base becomes chosen.
- **Choose.** ``chosen=true`` (or ``planner scenario choose``) chooses it and un-chooses the
  rest of its group. ``chosen=false`` is refused: choose another member instead.
- **Rename.** Options point at their base by id, so renaming the base keeps the group.
- **Delete.** A delete never changes another scenario (so it never leaves an undo step that
  names a scenario that is gone): deleting a base that has options is refused (delete or detach
  them first), and so is deleting the chosen option of a group (choose another one first).
  Deleting an option that is not chosen, or a scenario in no group, is free.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from planner.core.errors import ValidationError
from planner.service.fields import parse_bool
from planner.store import changelog, queries
from planner.store.scenarios import field_values
from planner.store.schema import ScenarioRow

OPTION_FIELDS = ("option_of", "chosen")
"""Scenario fields of the option model, settable with ``field=value``."""


def base_name(value: Any) -> str | None:
    """The base named by an ``option_of`` value (None, ``""`` or ``-``: no base)."""
    if value is None:
        return None
    text = str(value).strip()
    return None if text in ("", "-") else text


def resolve_base(s: Session, fleet_id: int, fleet: str, name: str, option_of: Any
                 ) -> ScenarioRow | None:
    """The base row ``option_of`` names in the fleet (None for no base), checked: another
    scenario of the same fleet that is no one's option. :class:`ValidationError` otherwise."""
    wanted = base_name(option_of)
    if wanted is None:
        return None
    if "/" in wanted:
        other, _, wanted_name = wanted.partition("/")
        if other != fleet:
            raise ValidationError("option_of", f"must name a scenario of the same fleet "
                                  f"({fleet!r}); {wanted!r} is in fleet {other!r}")
        wanted = wanted_name
    if wanted == name:
        raise ValidationError("option_of", f"a scenario cannot be an option of itself "
                              f"({fleet}/{name})")
    base = queries.scenario_named(s, fleet_id, wanted)
    if base is None:
        known = s.scalars(select(ScenarioRow.name).where(ScenarioRow.fleet_id == fleet_id,
                                                         ScenarioRow.option_of_id.is_(None)))
        raise ValidationError("option_of", f"names no scenario of fleet {fleet!r}: {wanted!r}"
                              f" (bases there: {', '.join(sorted(known)) or 'none'})")
    if base.option_of_id is not None:
        top = queries.scenario_by_id(s, base.option_of_id)
        raise ValidationError("option_of", f"{fleet}/{wanted} is itself an option of "
                              f"{fleet}/{top.name}; options nest one level: make it an option "
                              f"of {top.name}")
    return base


def options_of(s: Session, base_id: int) -> list[ScenarioRow]:
    """The options of the base with id ``base_id``, by name."""
    return list(s.scalars(select(ScenarioRow).where(ScenarioRow.option_of_id == base_id)
                          .order_by(ScenarioRow.name)))


def group_rows(s: Session, row: ScenarioRow) -> list[ScenarioRow]:
    """The option group ``row`` belongs to, base first then options by name (``[row]`` alone
    when it is in no group)."""
    base = row if row.option_of_id is None else queries.scenario_by_id(s, row.option_of_id)
    return [base, *options_of(s, base.id)]


def parse_chosen(value: Any) -> bool:
    """A ``chosen`` value as a flag (a stored bool is taken as it is, not parsed again)."""
    return value if isinstance(value, bool) else parse_bool("chosen", value)


class Touched:
    """The rows an edit changed besides its own, with their fields before, logged together."""

    def __init__(self) -> None:
        self.before: dict[int, tuple[ScenarioRow, dict[str, Any]]] = {}

    def touch(self, row: ScenarioRow) -> None:
        """Remember ``row``'s fields before it is changed (once)."""
        if row.id not in self.before:
            self.before[row.id] = (row, field_values(row))

    def set_chosen(self, row: ScenarioRow, chosen: bool) -> None:
        """Set ``row.chosen``, remembering it."""
        if bool(row.chosen) != chosen:
            self.touch(row)
            row.chosen = chosen

    def log(self, s: Session, change_set: str) -> None:
        """Flush, then log every touched row's changes in ``change_set``."""
        s.flush()
        for row, before in self.before.values():
            s.expire(row, ["option_of"])
            changelog.log(s, row, before, field_values(row), change_set=change_set)


def check_join(s: Session, row: ScenarioRow, base_id: int | None) -> None:
    """Refuse making ``row`` an option while it has options of its own."""
    if base_id is None or row.id is None:
        return
    own = options_of(s, row.id)
    if own:
        raise ValidationError("option_of", f"{row.name} has options of its own ("
                              + ", ".join(o.name for o in own) + "); options nest one level: "
                              "make them options of the new base first, or detach them")


def settle(s: Session, row: ScenarioRow, before: dict[str, Any], changes: dict[str, Any],
           touched: Touched, *, creating: bool = False) -> None:
    """Keep ``row``'s old and new option groups at exactly one chosen after an edit that set
    its ``option_of`` or ``chosen`` (``before``: its fields before the edit; ``changes``: what
    the edit asked for; the row is written and flushed). Other rows it changes go in
    ``touched``.

    ``chosen=false`` on a group's chosen member hands the choice to the base (to the first
    option by name when it is the base), so a workbook that moves the choice imports in any
    row order. A new scenario in no group (``creating``) is chosen whatever it asked: a
    workbook creates a base before the option that takes the choice from it."""
    asked = parse_chosen(changes["chosen"]) if "chosen" in changes else None
    _move_groups(s, row, before, changes, touched)
    group = group_rows(s, row)
    if len(group) == 1:
        if asked is False and not creating:
            raise ValidationError("chosen", f"{row.name} is no one's option and has no "
                                  "options: it is always counted")
        row.chosen = True
        return
    _choose_in_group(row, group, asked, touched)


def _move_groups(s: Session, row: ScenarioRow, before: dict[str, Any], changes: dict[str, Any],
                 touched: Touched) -> None:
    """When the edit moved ``row`` out of its old group (its ``option_of`` changed): the old
    base takes the choice ``row`` held, and ``row`` joins not chosen or leaves chosen."""
    old_base = base_name(before["option_of"])
    old = queries.scenario_named(s, row.fleet_id, old_base) if old_base is not None else None
    moved = "option_of" in changes and (old.id if old is not None else None) != row.option_of_id
    if moved:
        if old is not None and before["chosen"]:
            touched.set_chosen(old, True)  # it was the old group's choice: the base takes over
        row.chosen = row.option_of_id is None  # joins not chosen; leaves chosen


def _choose_in_group(row: ScenarioRow, group: list[ScenarioRow], asked: bool | None,
                     touched: Touched) -> None:
    """Exactly one chosen in ``row``'s group of two or more after ``row`` asked for
    ``chosen`` (``None``: did not ask): choosing it unchooses the others; unchoosing the
    chosen one hands the choice to the group's first other member; a group left with none
    chosen gets its first."""
    if asked is True:
        row.chosen = True
    elif asked is False and row.chosen:
        heir = group[0] if group[0].id != row.id else group[1]
        touched.set_chosen(heir, True)
        row.chosen = False
    if row.chosen:
        for other in group:
            if other.id != row.id:
                touched.set_chosen(other, False)
    elif not any(g.chosen for g in group):
        touched.set_chosen(group[0], True)


def check_delete(s: Session, row: ScenarioRow, fleet: str) -> None:
    """Refuse deleting a scenario that would leave its option group inconsistent: a base that
    has options, or the chosen option of a group (see the module's rules)."""
    options = options_of(s, row.id)
    if options:
        raise ValidationError("scenario", f"{fleet}/{row.name} is the base of "
                              f"{len(options)} option(s) ("
                              + ", ".join(o.name for o in options) + "): delete them or "
                              "detach them (planner scenario option NAME --detach) first")
    if row.option_of_id is not None and row.chosen:
        base = queries.scenario_by_id(s, row.option_of_id)
        raise ValidationError("scenario", f"{fleet}/{row.name} is the chosen option of "
                              f"{fleet}/{base.name}: choose another one of the group first "
                              "(planner scenario choose)")
