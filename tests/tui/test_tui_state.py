"""The TUI's Textual-free state (planner/tui/state/), tested as plain Python: no terminal, no
app. Its modules import no Textual, and the decisions behind the sheet's row updates and poll
(:mod:`planner.tui.state.placement`) give the place a row keeps, the rows a poll reads again
and the row an undo touched."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

import planner.tui.state
from planner.core.errors import NotFoundError
from planner.spec.domain import Change, Scenario
from planner.tui.state import placement
from planner.tui.state.failures import work_failures

STATE_MODULES = sorted(f"planner.tui.state.{m.name}"
                       for m in pkgutil.iter_modules(planner.tui.state.__path__))


def test_the_state_modules_import_no_textual() -> None:
    """Every module of planner/tui/state/ imported in a fresh interpreter leaves Textual
    unloaded: the state is usable (and tested) without a terminal."""
    assert {"planner.tui.state.rows", "planner.tui.state.cells", "planner.tui.state.placement",
            "planner.tui.state.saves", "planner.tui.state.failures"} <= set(STATE_MODULES)
    code = ("import sys\n"
            f"for m in {STATE_MODULES!r}: __import__(m)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "[]"


def scenario(sid: int, name: str, **inputs: object) -> Scenario:
    return Scenario(id=sid, fleet="f", name=name, kind="inference", model="llama-3-8b",
                    gpu="h100-sxm", inputs={"batch": 8, **inputs}, lora_targets="", notes="",
                    version=1)


def test_a_row_keeps_its_place_unless_the_filter_or_the_sorted_value_says_otherwise() -> None:
    old = scenario(1, "alpha")
    same_batch = replace(old, notes="edited", version=2)
    assert placement.stays(old, same_batch, {}, {}, "", None)
    assert not placement.stays(None, same_batch, {}, {}, "", None)  # not shown before
    assert not placement.stays(old, replace(same_batch, kind="training"), {}, {}, "", None)
    # a filter on "alp" keeps both; one on "edited" now matches the new notes: it moves
    assert placement.stays(old, same_batch, {}, {}, "alp", None)
    assert not placement.stays(old, same_batch, {}, {}, "edited", None)
    # sorted by batch: another batch moves the row, another output does not
    bigger = replace(old, inputs={"batch": 16}, version=2)
    assert not placement.stays(old, bigger, {}, {}, "", ("batch", False))
    assert placement.stays(old, bigger, {"ttft_ms": 3.0}, {"ttft_ms": 3.0}, "",
                           ("ttft_ms", True))
    assert not placement.stays(old, old, {"ttft_ms": 3.0}, {"ttft_ms": 4.0}, "",
                               ("ttft_ms", True))


def test_place_is_the_position_in_name_order() -> None:
    ids = np.array([7, 3, 9], dtype=np.int64)
    assert [placement.place(ids, i) for i in (7, 3, 9, 4)] == [0, 1, 2, None]


def test_a_poll_reads_again_the_rows_past_the_version_shown_and_not_being_saved() -> None:
    versions, shown = {1: 3, 2: 5, 3: 2}, {1: 3, 2: 4, 3: 1}
    assert placement.stale(versions, shown, lambda sid: 0) == {2, 3}
    assert placement.stale(versions, shown, lambda sid: sid == 3) == {2}  # 3's save is queued


def change(sid: int | None, field: str, old: object, new: object) -> Change:
    return Change(change_set="c1", field=field, old_value=old, new_value=new, version_after=2,
                  changed_at=datetime(2026, 1, 1, tzinfo=UTC), scenario_id=sid)


def test_an_undo_names_the_row_by_the_name_the_step_left() -> None:
    names = {5: "shown-name"}
    batch = [change(5, "batch", 8, 16)]
    assert placement.stepped_name(batch, names, undo=True) == (5, "shown-name")
    renamed = [change(5, "name", "before", "after"), change(5, "batch", 8, 16)]
    assert placement.stepped_name(renamed, names, undo=True) == (5, "before")
    assert placement.stepped_name(renamed, names, undo=False) == (5, "after")
    assert placement.stepped_name(batch, {}, undo=True) is None  # not shown: reload
    two_rows = [change(5, "chosen", True, False), change(6, "chosen", False, True)]
    assert placement.stepped_name(two_rows, names, undo=True) is None
    assert placement.stepped_name([change(None, "batch", 8, 16)], names, undo=True) is None


def test_workers_catch_planner_database_and_os_errors_and_nothing_else() -> None:
    from sqlalchemy.exc import OperationalError

    caught = work_failures()
    for error in (NotFoundError("scenario", "x"), OperationalError("SELECT 1", {}, None),
                  PermissionError("/read-only/plan.xlsx")):
        assert isinstance(error, caught)
    with pytest.raises(KeyError):  # a bug is not a failure of the work: it propagates
        try:
            raise KeyError("a bug")
        except work_failures():
            pytest.fail("a KeyError was caught as a work failure")


def test_the_grid_finds_every_datatable_internal_it_relies_on() -> None:
    """The installed Textual (pinned in pyproject) has every DataTable internal the grid's
    documented subclass contract names; one that an upgrade removes is named here (and the
    grid falls back to DataTable's public API)."""
    from planner.tui.widgets.grid import INTERNALS, missing_internals

    assert len(INTERNALS) == 25 and len(set(INTERNALS)) == 25  # _render_line: grid_frame
    assert missing_internals() == []

    class Older:  # a DataTable without the row store's internals
        _data = None

    older = missing_internals(Older())  # type: ignore[arg-type]
    assert older == [n for n in INTERNALS if n != "_data"]
