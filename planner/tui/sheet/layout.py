"""How the sheet is arranged: pinned and folded columns, go to column, the details pane's
mode, and the tabs (the formula bar follows the active one).
"""

from __future__ import annotations

from textual import events, on
from textual.widgets import DataTable, TabbedContent

from planner.tui.screens.column_jump import ColumnJump
from planner.tui.sheet.base import SheetBase
from planner.tui.state import cells
from planner.tui.widgets.catalog_tabs import CatalogTab
from planner.tui.widgets.details import DetailsPane
from planner.tui.widgets.measurements_tab import MeasurementsPane
from planner.tui.widgets.plan_tab import PlanPane


class SheetLayout(SheetBase):
    """Pin, fold and go to column; the details pane wide, narrow or hidden; tab switches."""

    def pin(self) -> None:
        """Pin the output column under the cursor right after the scenario name, or unpin
        a pinned one (back to its group)."""
        _, key, role = self._current()
        if key is None or role != "output":
            self.notify("Pin works on computed columns (italic cyan).", title="Pin")
            return
        pinned = self.pinned[self.kind]
        self.pinned[self.kind] = (tuple(k for k in pinned if k != key) if key in pinned
                                  else (*pinned, key))
        self._relayout(key)

    DETAILS_MODES = DetailsPane.MODES
    """How the details pane shows: beside the grid, narrowed to 44 columns, or not at all."""
    DETAILS_MIN_WIDTH = 120
    """Below this many terminal columns the details pane starts hidden, so the grid shows
    its pinned verdicts at 80 × 24; ``v`` brings it back."""

    def details_mode(self) -> str:
        """The details pane's mode (one of :data:`DETAILS_MODES`)."""
        return self._details.mode

    def set_details(self, mode: str) -> None:
        """Show the details pane wide, narrow or hidden."""
        self._details.mode = mode

    def cycle_details(self) -> None:
        """``v``: wide → narrow → hidden → wide; the choice sticks through resizes."""
        modes = self.DETAILS_MODES
        mode = modes[(modes.index(self.details_mode()) + 1) % len(modes)]
        self._details_chosen = True
        self.set_details(mode)
        self._status.update(f"details pane {mode} (v cycles)")

    def on_resize(self, event: events.Resize) -> None:
        """Until ``v`` chose a mode: the details pane hidden below
        :data:`DETAILS_MIN_WIDTH` columns, wide above."""
        if not self._details_chosen:
            self.set_details("hidden" if event.size.width < self.DETAILS_MIN_WIDTH else "wide")

    def column_choices(self) -> list[tuple[str, str]]:
        """(key, label with unit) of every column of the active grid, folded groups
        included, in grid order: what go-to-column lists."""
        every = cells.grid_columns(self.kind, self.pinned[self.kind])
        return [(key, " ".join(header.split())) for key, header, role in every
                if role != "group"]

    def goto_column(self) -> None:
        """Open go-to-column; the cursor moves to the column picked (its group unfolded)."""
        if not self.loaded:
            return

        def picked(key: str | None) -> None:
            if key is None:
                return
            group = cells.group_of(key, cells.roles(self.kind).get(key, ""))
            if group in self.folded[self.kind]:
                self.folded[self.kind] = self.folded[self.kind] - {group}
            self._relayout(key)
            self.focus_grid()

        self._open(ColumnJump(self.column_choices()), picked)

    def fold(self) -> None:
        """Fold the column group under the cursor (inputs, memory, latency, cost) into one
        column, or unfold a folded one."""
        _, key, role = self._current()
        if key is None:
            return
        group = key.removeprefix("group:") if role == "group" else cells.group_of(key,
                                                                                    role or "")
        if not group:
            return
        folded = self.folded[self.kind]
        self.folded[self.kind] = folded - {group} if group in folded else folded | {group}
        self._relayout(f"group:{group}" if group in self.folded[self.kind] else key)
        self._status.update(f"{group} {'folded' if group in self.folded[self.kind] else 'unfolded'}"
                            " (g toggles)")

    def _relayout(self, key: str) -> None:
        """Rebuild the grids after a layout change, the cursor on column ``key``."""
        sc, _, _ = self._current()
        self._rebuild_grids(sc.id if sc is not None else None, remeasure=False)
        keys = [k for k, _h, _r in self._layout(self.kind)]
        table = self._grid()
        if key in keys and table.row_count:
            table.move_cursor(row=table.cursor_coordinate.row, column=keys.index(key))

    @on(TabbedContent.TabActivated)
    def _tab(self, event: TabbedContent.TabActivated) -> None:
        self._end_edit()
        pane = event.pane.id or ""
        table = self.query_one({"training": "#train-grid", "models": "#models-table",
                                "gpus": "#gpus-table", "measurements": "#measurements-table",
                                "plan": "#plan-table"}.get(pane, "#grid"), DataTable)
        if pane == "measurements":
            self.query_one(MeasurementsPane).load()
        if pane == "plan":
            self.query_one(PlanPane).load(self.fleet)

        def refocus() -> None:  # the focused table was on the tab just hidden
            focused = self.app.focused
            if focused is None or not focused.display or (
                    isinstance(focused, DataTable) and focused is not table):
                table.focus()

        self.call_after_refresh(refocus)
        if pane in ("scenarios", "training"):
            self.kind = "inference" if pane == "scenarios" else "training"
            self._show_details()
        elif isinstance(table, CatalogTab):
            self._bar.show_cell(*table.BAR_NOTE)
