"""The sheet's cell editing: typed in the formula bar while the grid keeps the focus
(:mod:`planner.tui.state.cell_edit`), checked against the whole scenario as it is typed,
recomputed at once in the UI thread and saved by a thread worker in edit order, guarded by the
row's version (:mod:`planner.tui.state.saves`). Another client's edit is never overwritten: the
conflict is shown with the fields that changed, and the user's value is applied on top or kept
in the formula bar.
"""

from __future__ import annotations

from typing import Any

from textual import events, on, work
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey
from textual.worker import get_current_worker

from planner.core.errors import PlannerError
from planner.service.edits import CheckedEdit, check_edit
from planner.spec.domain import ConflictError, Scenario
from planner.tui.messages import (
    ScenarioConflict,
    ScenarioSaved,
    WorkFailed,
)
from planner.tui.sheet.row_actions import RowActions
from planner.tui.state import rows
from planner.tui.state.cell_edit import CellEdit
from planner.tui.state.editline import LineBuffer
from planner.tui.state.failures import work_failures


class CellEditing(RowActions):
    """Edit a cell, check it, show it at once, save it in order; resolve conflicts."""

    @on(DataTable.CellHighlighted, "#grid, #train-grid")
    def _moved(self, _event: DataTable.CellHighlighted) -> None:
        edit = self.editing
        if edit is not None:
            sc, key, _ = self._current()
            if sc is None or (sc.id, key) != (edit.sid, edit.key):
                self._end_edit()  # the cursor left the cell (a mouse click): drop the edit
        self._show_details()

    @on(DataTable.CellSelected, "#grid, #train-grid")
    def _selected(self, _event: DataTable.CellSelected) -> None:
        self.edit()


    def edit(self) -> None:
        """Edit the cell under the cursor (a name is renamed in a dialog)."""
        sc, key, role = self._current()
        if sc is None or key is None:
            return
        if role == "group":
            self.fold()  # Enter on a folded group unfolds it
            return
        if role == "output":
            self.notify(f"{key} is computed from the inputs; press x to see why.",
                        title="Read-only column")
            return
        if key == "name":
            self.rename()
            return
        if key == "lora_targets" and not sc.inputs.get("lora_rank"):
            self.notify("LoRA targets apply to LoRA training only: set lora_rank above 0 "
                        "first.", title="Not editable at rank 0")
            return
        self._begin_edit(sc, key)

    def _begin_edit(self, sc: Scenario, key: str, typed: str = "") -> None:
        """Edit an input cell in the formula bar; the grid keeps the focus."""
        edit = rows.cell_edit(sc, self.outputs[sc.id], key, self.models, self.gpus)
        self.editing = edit
        if typed:
            edit.buffer.insert(typed)
        edit.error = self._edit_error(edit) if typed or edit.choices is not None else ""
        self._draw_edit()


    def _edit_error(self, edit: CellEdit) -> str:
        """Why the edit's value is refused ('' if the scenario accepts it): the column's rules,
        then the whole scenario recomputed with it (e.g. parallelism must divide heads)."""
        sc = self.scenarios.get(edit.sid)
        if sc is None:
            return "this scenario no longer exists; Esc cancels"
        try:
            self._checked(sc, edit)
        except PlannerError as exc:
            return str(exc)
        return ""

    def _checked(self, sc: Scenario, edit: CellEdit) -> CheckedEdit:
        """The edit checked and evaluated (:func:`check_edit`), once per value typed: Enter
        reuses the check made while typing."""
        try:
            raw = edit.raw()
        except PlannerError as exc:
            edit.checked = None
            raise exc from None
        checked = edit.checked
        if checked is None or checked[0] != raw or (
                isinstance(checked[1], CheckedEdit) and checked[1].before is not sc):
            try:
                checked = (raw, self._check(sc, {edit.key: raw}))
            except PlannerError as exc:
                checked = (raw, exc)
            edit.checked = checked
        result = checked[1]
        if isinstance(result, PlannerError):
            raise result
        return result

    def grid_key(self, event: events.Key) -> bool:
        """Handle a key that reached the app from a grid; True if it was the sheet's.

        The editor's keys while a cell is edited (all of them); Enter starts editing here and
        now (through DataTable's select binding it would wait for a message, and keys typed
        right after it would reach the grid instead of the editor); a digit typed on a number
        cell starts editing it, as in a spreadsheet."""
        edit = self.editing
        if len(self.app.screen_stack) > 1:  # a dialog is opening: its keys are not the grid's
            return False
        if edit is None:
            return self._key_on_cell(event)
        outcome = edit.press(event.key, event.character)
        if outcome == "cancel":
            self._end_edit()
        elif outcome == "accept":
            self._accept_edit(edit)
        elif outcome == "changed":
            edit.error = self._edit_error(edit)
            self._draw_edit()
        return True

    def _key_on_cell(self, event: events.Key) -> bool:
        """A key on the grid while no cell is edited: Enter edits the cell, a digit (or a
        point) on a number input starts editing it with that character; True if taken."""
        if event.key == "enter":
            self.edit()
            return True
        if event.character and event.character in "0123456789.":
            here = self._number_input_here()
            if here is not None:
                self._begin_edit(*here, typed=event.character)
                return True
        return False

    def _number_input_here(self) -> tuple[Scenario, str] | None:
        """The scenario and column key under the cursor when it is a number input."""
        sc, key, role = self._current()
        column = rows.input_column(sc.kind, key) if sc and key and role == "input" \
            else None
        if sc is not None and column is not None and column.kind in ("int", "float"):
            return sc, key or ""
        return None

    def paste(self, text: str) -> None:
        """Pasted text goes into the cell being edited (the grid itself ignores pastes)."""
        if self.editing is not None and self.editing.paste(text) == "changed":
            self.editing.error = self._edit_error(self.editing)
            self._draw_edit()

    def _accept_edit(self, edit: CellEdit) -> None:
        sc = self.scenarios.get(edit.sid)
        if sc is None:
            self._end_edit()
            return
        try:
            checked = self._checked(sc, edit)
        except PlannerError as exc:  # stay in the editor and say why
            edit.error = str(exc)
            self._draw_edit()
            return
        self.editing = None
        self._commit(checked)

    def _check(self, sc: Scenario, changes: dict[str, Any]) -> CheckedEdit:
        return check_edit(sc, changes, self._model_specs, self._gpu_specs, self._profiles)

    def apply_changes(self, sc: Scenario, changes: dict[str, Any]) -> bool:
        """Accept several fields as one change: validated together against the whole
        scenario, recomputed now and saved in a worker as one change set (one undo step).
        Nothing is applied if the set as a whole is refused; True if it was accepted."""
        if not changes:
            return False
        try:
            checked = self._check(sc, changes)
        except PlannerError as exc:
            self.notify(str(exc), title="Not changed", severity="error")
            return False
        self._commit(checked)
        return True

    def _commit(self, checked: CheckedEdit) -> None:
        """Show an accepted edit's row at once and save it in a worker. The row is drawn
        first; the details pane (a re-layout of the screen) follows in the next frame."""
        sc = checked.before
        self._store(checked.after, checked.outputs)
        self._refresh_row(sc.id)
        self._show_bar(*self._current())
        self.call_after_refresh(self._show_details)
        self.save_edit(self.saves.enqueue(sc.id, sc.version), checked)

    @work(thread=True, group="save")
    def save_edit(self, ticket: int, checked: CheckedEdit) -> None:
        """Save one checked edit, in its turn (:class:`SaveQueue`), guarded by the row's
        version: nothing is parsed or evaluated again."""
        sc = checked.before
        worker = get_current_worker()
        with self.saves.turn(ticket, sc.id, lambda: worker.is_cancelled) as expected:
            if expected is None:  # the app is closing
                return
            try:
                ws = self.workspace.get()
                result = ws.save_edit(checked, expected_version=expected)
                saved = result.scenario
                self.saves.wrote(sc.id, saved.version)
            except ConflictError as exc:
                try:
                    fresh = ws.scenario(sc.fleet, sc.name)
                    self.post_message(ScenarioConflict(fresh, ws.evaluate(fresh),
                                                       exc.changed, dict(checked.changes)))
                except work_failures() as inner:
                    self.post_message(WorkFailed("Edit refused", f"{exc} ({inner})"))
                return
            except work_failures() as exc:
                self.post_message(WorkFailed("Could not save the edit", str(exc)))
                return
        self.post_message(ScenarioSaved(saved, result.outputs))

    @on(ScenarioSaved)
    def _saved(self, message: ScenarioSaved) -> None:
        sc = message.scenario
        self._status.update(f"saved {sc.fleet}/{sc.name} (version {sc.version})", layout=False)
        if self.saves.pending(sc.id):  # a newer edit of this row is on its way: keep it shown
            return
        self._store(sc, message.outputs)
        self._refresh_row(sc.id)
        self._show_details()

    @on(ScenarioConflict)
    def _conflict(self, message: ScenarioConflict) -> None:
        """Another client changed the row first: show their row, and keep the user's edit.
        An edit of other fields is applied on top of theirs (checked again); an edit of a
        field they changed too stays in the formula bar, to save over theirs or drop."""
        sc = message.scenario
        theirs = ", ".join(f"{k} = {v!r}" for k, v in message.changed.items()) or "unknown"
        mine = message.mine
        yours = ", ".join(f"{k} = {v!r}" for k, v in mine.items())
        self._store(sc, message.outputs)
        self.saves.read({sc.id: sc.version})
        self._refresh_row(sc.id)
        self._show_details()
        both = sorted(mine.keys() & message.changed.keys())
        if mine and not both:
            try:
                checked = self._check(sc, mine)
            except PlannerError as exc:
                self._warn_conflict(f"{sc.name} was changed by someone else: {theirs}. "
                                    f"Your edit ({yours}) no longer applies: {exc}")
                return
            self._warn_conflict(f"{sc.name} was changed by someone else: {theirs}. "
                                f"Your edit ({yours}) was applied on top of theirs.")
            self._commit(checked)
            return
        self._warn_conflict(f"{sc.name} was changed by someone else: {theirs}. The row shows "
                            f"theirs; yours ({yours}) is kept in the formula bar: Enter saves "
                            "it over theirs, Esc keeps theirs.")
        if len(mine) == 1:
            self._reopen_edit(sc, *next(iter(mine.items())), theirs)

    def _warn_conflict(self, text: str) -> None:
        self.notify(text, title="Changed elsewhere", severity="warning", timeout=12)

    def _reopen_edit(self, sc: Scenario, key: str, value: Any, theirs: str) -> None:
        """Put a refused value back in the formula bar on its cell (if the grid shows it)."""
        table = self._grid(sc.kind)
        keys = [c.key.value for c in table.ordered_columns]
        if self.editing is not None or sc.kind != self.kind or key not in keys \
                or RowKey(str(sc.id)) not in table.rows:
            return
        table.move_cursor(row=table.get_row_index(str(sc.id)), column=keys.index(key))
        edit = rows.cell_edit(sc, self.outputs[sc.id], key, self.models, self.gpus)
        shown = rows.edit_text(value)
        if edit.choices is not None:
            edit.index = edit.choices.index(shown) if shown in edit.choices else edit.index
        else:
            edit.buffer = LineBuffer.of(shown)
        self.editing = edit
        edit.error = f"changed elsewhere: {theirs}. Enter saves yours, Esc keeps theirs."
        self._draw_edit()
