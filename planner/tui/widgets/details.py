"""The details pane beside the Scenarios grid: the scenario under the cursor in full (its
inputs, its memory against the GPU's, its verdict, and the explanation of the output under
the cursor), shown wide, narrowed or hidden.

The text is composed by :func:`planner.tui.state.details.details` (no terminal needed); this
widget only shows it and keeps its mode as CSS classes (``narrow``, ``hidden``; the widths
are in ``app.tcss``), so a mode change is a restyle, not a rebuild.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.widgets import Static

from planner.spec.domain import Scenario
from planner.tui.state import details as pane_text


class DetailsPane(Static):
    """The scenario under the cursor in full, wide, narrow or hidden."""

    MODES = ("wide", "narrow", "hidden")
    """Beside the grid at its share of the width, narrowed to 44 columns, or not shown."""

    @property
    def mode(self) -> str:
        """The pane's mode (one of :data:`MODES`)."""
        classes = self.classes
        return "hidden" if "hidden" in classes else "narrow" if "narrow" in classes else "wide"

    @mode.setter
    def mode(self, mode: str) -> None:
        self.set_class(mode == "narrow", "narrow")
        self.set_class(mode == "hidden", "hidden")

    def show_scenario(self, sc: Scenario | None, outputs: Mapping[str, Any],
                      memory_bytes: float, explanation: str = "") -> None:
        """Show ``sc`` with its ``outputs``, its GPU's memory (``memory_bytes``, B) and the
        explanation of the output under the cursor ('' for an input); a hint when no
        scenario is under the cursor."""
        if sc is None:
            self.update("No scenario selected. Press n to create one.")
            return
        self.update(pane_text.details(sc, outputs, memory_bytes, explanation))
