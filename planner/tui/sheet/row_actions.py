"""The sheet's row actions: new, duplicate, rename, delete, undo and redo.

Each asks what it needs in a dialog, runs the database action in a thread worker
(:meth:`RowActions.run`), reads back and evaluates the one row it touched, and posts
:class:`RowsUpdated`; the grids then change only at that row (no reload of the fleet): a row
that keeps its place is redrawn alone, one that moves (a rename in name order, a sort or
filter it no longer fits) re-shows the id arrays. Whether a row keeps its place is decided by
:mod:`planner.tui.state.placement`, which needs no terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from textual import on, work
from textual.worker import Worker

from planner.compute.table import KINDS
from planner.core.errors import PlannerError, ValidationError
from planner.spec.domain import Change, Scenario
from planner.tui.messages import (
    RowsUpdated,
    WorkFailed,
)
from planner.tui.screens.dialogs import (
    AnswerDialog,
    ConfirmDialog,
    EditDialog,
    NewScenarioDialog,
)
from planner.tui.sheet.base import Job
from planner.tui.sheet.loading import FleetLoading
from planner.tui.state import gc_policy, placement, rows
from planner.tui.state.failures import work_failures

if TYPE_CHECKING:
    from planner.tui.state.types import Workspace

A = TypeVar("A")
"""A dialog's answer."""


class RowActions(FleetLoading):
    """New, duplicate, rename, delete, undo, redo: a dialog, a worker, the row put in place."""

    def _prompt(self, title: str, value: str, then: Callable[[str], object],
                help_text: str = "") -> None:
        """Ask for a name in a dialog; ``then`` gets it unless the dialog was cancelled."""
        def parse(text: str) -> str:
            if not text.strip() or len(text.strip()) > 200:
                raise ValidationError("name", "must be 1 to 200 characters", value=text)
            return text.strip()

        def done(name: str | None) -> object:
            return then(name) if name else None

        self._open_held(EditDialog(title, value, parse=parse, help_text=help_text), done)

    def new(self) -> None:
        """A new scenario: name, model and GPU asked in a dialog (the model and GPU chosen by
        typing a filter), starting at the current row's model and GPU."""
        sc, _, _ = self._current()
        models, gpus = [m.name for m in self.models], [g.name for g in self.gpus]
        model = sc.model if sc else (models[0] if models else "")
        gpu = sc.gpu if sc else (gpus[0] if gpus else "")
        kind = self.kind

        def done(answer: tuple[str, str, str] | None) -> object:
            if answer:
                name, model, gpu = answer
                return self.run("create", lambda ws: ws.new_scenario(
                    self.fleet, name, model=model, gpu=gpu, kind=kind))
            return None

        self._open_held(NewScenarioDialog(f"New {kind} scenario", models, gpus, model, gpu,
                                          help_text="Default inputs; edit cells afterwards."),
                        done)

    def duplicate(self) -> None:
        """A copy of the current scenario, named in a dialog."""
        sc, _, _ = self._current()
        if sc is None:
            return
        self._prompt("Duplicate as", f"{sc.name} copy", lambda name: self.run(
            "duplicate", lambda ws: ws.copy_scenario(sc.fleet, sc.name, name)))

    def rename(self) -> None:
        """Rename the current scenario in a dialog."""
        sc, _, _ = self._current()
        if sc is None:
            return
        self._prompt("Rename", sc.name, lambda name: name != sc.name and self.run(
            "rename", lambda ws: ws.set_scenario(sc.fleet, sc.name, {"name": name},
                                                 expected_version=sc.version)))

    def delete(self) -> None:
        """Delete the current scenario, once confirmed."""
        sc, _, _ = self._current()
        if sc is None:
            return

        def done(yes: bool | None) -> object:
            if yes:
                return self.run("delete", lambda ws: ws.delete_scenario(sc.fleet, sc.name),
                                removed=sc.id)
            return None

        self._open_held(ConfirmDialog(f"Delete scenario [b]{sc.name}[/]?"), done)

    def undo(self) -> None:
        """Undo the fleet's last change (the database's change log)."""
        self.run("undo", lambda ws: ws.undo(self.fleet), empty="Nothing to undo")

    def redo(self) -> None:
        """Redo the fleet's last undone change."""
        self.run("redo", lambda ws: ws.redo(self.fleet), empty="Nothing to redo")

    _held: tuple[AnswerDialog[Any], Worker[None]] | None = None
    """The dialog held open until its action's worker is done, and that worker."""

    def _open_held(self, dialog: AnswerDialog[A], then: Callable[[A], object]) -> None:
        """Open ``dialog``; its answer goes to ``then`` while the dialog stays on screen.
        When ``then`` started a worker, the dialog closes with the frame that shows the
        result (:meth:`_close_held`); otherwise at once."""

        def answered(value: A) -> None:
            started = then(value)
            if isinstance(started, Worker):
                self._held = (dialog, started)
            else:
                dialog.dismiss(value)

        dialog.on_answer = answered
        self._open(dialog)

    def _close_held(self, worker: Worker[Any] | None = None) -> None:
        """Close the dialog held for a row action (for ``worker``'s, if given)."""
        held = self._held
        if held is None or (worker is not None and held[1] is not worker):
            return
        self._held = None
        held[0].close()

    @on(Worker.StateChanged)
    def _action_ended(self, event: Worker.StateChanged) -> None:
        """A held dialog closes when its worker ends, whatever the outcome (an error, a
        reload, nothing done): the result's own frame closed it already otherwise."""
        if event.worker.is_finished:
            self._close_held(event.worker)

    def run(self, what: str, job: Job, empty: str = "", fleet: str | None = None,
            removed: int | None = None) -> Worker[None]:
        """Run a database action in a worker (:meth:`_run_job`), then update the grid in
        place; automatic garbage collection waits for the frame that shows the result
        (:func:`gc_policy.hold`), at most :data:`gc_policy.HOLD_S`."""
        gc_policy.hold()
        self.set_timer(gc_policy.HOLD_S, gc_policy.resume, name="gc-resume")
        return self._run_job(what, job, empty, fleet, removed)

    @work(thread=True, group="save")
    def _run_job(self, what: str, job: Job, empty: str, fleet: str | None,
                 removed: int | None) -> None:
        """The worker of :meth:`run`: the scenario the action returns (or, for an undo or
        redo, the one its changes touched) is read back and evaluated here, and ``removed``
        (an id it deleted) leaves the grid. With ``fleet``, switch to that fleet instead.
        Nothing done (``empty``, say "Nothing to undo") only says so: nothing is read
        again."""
        current = self.fleet
        try:
            ws = self.workspace.get()
            result = job(ws)
            if fleet is not None:
                self.load_fleet(fleet)
                return
            if result is None and empty:
                self.app.call_from_thread(self.notify, empty)
                return
            if isinstance(result, list) and result:  # an undo or redo: say what it changed
                result = self._said_step(ws, what, current, result)
        except work_failures() as exc:
            self.post_message(WorkFailed(f"Could not {what}", str(exc)))
            return
        self._put_result(ws, current, result, removed)

    def _said_step(self, ws: Workspace, what: str, current: str, changes: list[Change]
                   ) -> Scenario | None:
        """An undo or redo's ``changes`` told (the rows it touched, not the fleet), then
        the scenario it changed read back (:meth:`_stepped`)."""
        shown = self.scenarios
        names = {c.scenario_id: shown[c.scenario_id].name for c in changes
                 if c.scenario_id in shown}  # the rows it touched, not the fleet
        self.app.call_from_thread(self.notify,
                                  rows.describe_step(what, changes, names),
                                  title=what.capitalize(), timeout=12)
        return self._stepped(ws, current, changes, undo=what == "undo")

    def _put_result(self, ws: Workspace, current: str, result: Any,
                    removed: int | None) -> None:
        """A done action's outcome on the grid: its scenario evaluated and put in place,
        ``removed`` taken out, or else the fleet read again."""
        if isinstance(result, Scenario):
            try:
                outputs = ws.evaluate(result)
            except work_failures():  # shown after a reload, with its error (it was saved)
                self.load_fleet(current, result.id)
                return
            self.post_message(RowsUpdated(current, [result], [outputs], focus_id=result.id))
        elif removed is not None:
            self.post_message(RowsUpdated(current, [], [], removed=[removed]))
        else:
            self.load_fleet(current)

    def _stepped(self, ws: Workspace, fleet: str, changes: list[Change], *, undo: bool
                 ) -> Scenario | None:
        """The scenario an undo or redo changed, read back (None if it cannot be found:
        the caller reads the fleet again). Its name is the one the step left
        (:func:`placement.stepped_name`)."""
        named = placement.stepped_name(
            changes, {c.scenario_id: self.scenarios[c.scenario_id].name for c in changes
                      if c.scenario_id in self.scenarios}, undo=undo)
        if named is None:
            return None
        sid, name = named
        try:
            sc = ws.scenario(fleet, name)
        except PlannerError:
            return None
        return sc if sc.id == sid else None

    @on(RowsUpdated)
    def _rows_updated(self, message: RowsUpdated) -> None:
        """Put a row action's rows in place (no reload): the arrays and the grids change
        only at those rows."""
        if message.fleet != self.fleet:
            return
        kinds = self._drop_rows(message.removed)
        moved = bool(message.removed)
        relayout = False
        for sc, outputs in zip(message.scenarios, message.outputs, strict=True):
            old, place = self.scenarios.get(sc.id), self._place(sc)
            moved = moved or not self._stays(old, sc, outputs)
            self._store(sc, outputs)
            # a rename that keeps its place in name order keeps it in the grid too
            moved = moved or place != self._place(sc)
            self.saves.read({sc.id: sc.version})
            kinds.add(sc.kind)
            relayout = relayout or not self._fits(sc.id)
        self._redraw_rows(message, kinds, moved, relayout)
        self._close_held()  # the dialog goes in the frame that shows the rows
        self.call_after_refresh(gc_policy.resume)  # the frame with the rows comes first

    def _drop_rows(self, removed: Any) -> set[str]:
        """Scenarios ``removed`` taken out of the arrays, the marks and their kind's index;
        the kinds they were of."""
        kinds: set[str] = set()
        for sid in removed:
            sc = self.scenarios.pop(sid, None)
            self.outputs.pop(sid, None)
            self.marked.discard(sid)
            if sc is not None:
                self.index[sc.kind].remove(sid)
                kinds.add(sc.kind)
        return kinds

    def _redraw_rows(self, message: RowsUpdated, kinds: set[str], moved: bool,
                     relayout: bool) -> None:
        """The grids after a row action: rebuilt when a row outgrew its column, the rows
        of ``kinds`` shown again when one moved, else only the changed rows redrawn."""
        if relayout:  # a name or value wider than its column (rare)
            for sc in message.scenarios:
                self._widen(sc.id, relayout=False)
            self._rebuild_grids(message.focus_id, remeasure=False)
        elif moved:
            self._show_rows(message.focus_id, tuple(k for k in KINDS if k in kinds))
        else:  # every row stays where it is shown: redraw those rows only, as an edit does
            self._end_edit()
            for sc in message.scenarios:
                self._refresh_row(sc.id)
            self._focus(message.focus_id)
            self._show_details()

    def _place(self, sc: Scenario) -> int | None:
        """The position of scenario ``sc.id`` in its kind's name order (None: not there)."""
        return placement.place(self.index[sc.kind].ids, sc.id)

    def _stays(self, old: Scenario | None, sc: Scenario, outputs: Mapping[str, Any]) -> bool:
        """Whether a scenario read back (``old``: as shown) keeps its place in the grids
        (:func:`placement.stays`)."""
        return placement.stays(old, sc, self.outputs[sc.id] if old is not None else {},
                               outputs, self.filter_text, self.sort_key)

    def _focus(self, sid: int | None) -> None:
        """Put the cursor on scenario ``sid``'s row (its column kept), if the grid shows it."""
        if sid is None or sid not in self.scenarios:
            return
        table = self._grid(self.scenarios[sid].kind)
        if str(sid) in table.rows:
            table.move_cursor(row=table.get_row_index(str(sid)),
                              column=table.cursor_coordinate.column)
