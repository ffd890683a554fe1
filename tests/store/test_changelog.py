"""The change log's undo/redo lookups: each one descent of the fleet's step index, whatever
the fleet's size (revision 0019; issue 27 item 8)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, text

from planner.service import Workspace
from planner.store.engine import make_engine

INDEX = "ix_scenario_changes_fleet_step"


def _lookups(ws: Workspace, step: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """The SELECTs on ``scenario_changes`` that ``step()`` runs, with their parameters."""
    seen: list[tuple[str, tuple[Any, ...]]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
               executemany: bool) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "scenario_changes" in statement:
            seen.append((statement, tuple(parameters)))

    event.listen(ws.engine, "before_cursor_execute", record)
    try:
        step()
    finally:
        event.remove(ws.engine, "before_cursor_execute", record)
    return seen


def test_undo_and_redo_find_the_fleets_step_through_its_index(ws: Workspace) -> None:
    """On SQLite every lookup of the fleet's next step searches the index
    ``(fleet_id, undone, id)``; none visits the fleet's scenarios (the plan before 0019 searched
    the log once per scenario of the fleet). The steps still undo and redo the right edit."""
    ws.new_fleet("big", "")
    for i in range(30):
        ws.new_scenario("big", f"s{i:02d}", model="llama-3-8b", gpu="h100-sxm")
    ws.set_scenario("big", "s07", {"batch": 12})
    ws.set_scenario("demo", ws.scenarios("demo")[0].name, {"batch": 3})  # another fleet's
    undo = _lookups(ws, lambda: ws.undo("big"))
    redo = _lookups(ws, lambda: ws.redo("big"))
    assert ws.scenario("big", "s07").inputs["batch"] == 12
    step_lookups = [q for q in undo + redo
                    if "scenario_changes.fleet_id = ?" in q[0].split("WHERE", 1)[-1]]
    # undo: the latest done; redo: the latest done, then the earliest undone after it
    assert len(step_lookups) == 3
    engine = make_engine(str(ws.engine.url))
    with engine.connect() as conn:
        for statement, parameters in step_lookups:
            plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(
                f"EXPLAIN QUERY PLAN {statement}", parameters))
            assert INDEX in plan, plan
            assert "scenarios" not in plan.replace("scenario_changes", ""), plan
        assert conn.execute(text("SELECT count(*) FROM scenario_changes c JOIN scenarios s "
                                 "ON s.id = c.scenario_id WHERE c.fleet_id <> s.fleet_id")
                            ).scalar() == 0
    engine.dispose()
