"""Where a row goes after a row action or another client's change: the decisions behind the
sheet's row updates and its poll, as plain functions of the rows' state.

The sheet (:mod:`planner.tui.sheet.row_actions`, :mod:`planner.tui.sheet.loading`) applies
them to its grids; here they need no terminal, so they are tested as plain Python
(``tests/tui/test_tui_state.py``): whether a row read back keeps its place in the grid (then only
that row is redrawn, the cheap path at 100,000 rows), which rows a poll must read again, and
which row an undo or redo touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from planner.spec.domain import Change, Scenario
from planner.tui.state import rows


def place(ids: np.ndarray, sid: int) -> int | None:
    """The position of scenario ``sid`` in a kind's ids in name order (None: not there)."""
    where = np.flatnonzero(ids == sid)
    return int(where[0]) if len(where) else None


def stays(old: Scenario | None, sc: Scenario, old_outputs: Mapping[str, Any],
          outputs: Mapping[str, Any], filter_text: str,
          sort_key: tuple[str, bool] | None) -> bool:
    """Whether a scenario read back (``old``: as shown, with ``old_outputs``) can keep its
    place in the grids, its place in name order aside: it was shown, the filter keeps or
    drops it as before, and the value sorted on did not change."""
    if old is None or old.kind != sc.kind:
        return False
    needle = filter_text.lower()
    if needle and (needle in rows.haystack(old)) != (needle in rows.haystack(sc)):
        return False
    if sort_key is None:
        return True
    key = sort_key[0]
    return rows.sort_value(old, old_outputs, key) == rows.sort_value(sc, outputs, key)


def stale(versions: Mapping[int, int], shown: Mapping[int, int],
          pending: Callable[[int], object]) -> set[int]:
    """The rows a poll reads again: those whose stored version (``versions``, by id) is past
    the one shown, unless an edit of this client is still being saved for them (``pending``
    is true for that id, :meth:`planner.tui.state.saves.SaveQueue.pending`: its save brings
    the row back itself). Every id of ``versions`` is in ``shown``."""
    return {i for i, v in versions.items() if v > shown[i] and not pending(i)}


def stepped_name(changes: list[Change], names: Mapping[int, str], *, undo: bool
                 ) -> tuple[int, str] | None:
    """(id, name) of the one scenario an undo or redo changed, its name the one the step
    left (``names``: the names shown, by id); None for a step over several rows (an option
    group's choice) or a row not known by name: the caller reads the fleet again."""
    sid = changes[0].scenario_id
    if sid is None or any(c.scenario_id != sid for c in changes):
        return None
    named = [c for c in changes if c.field == "name"]
    name = (named[0].old_value if undo else named[0].new_value) if named else names.get(sid)
    return (sid, name) if isinstance(name, str) else None
