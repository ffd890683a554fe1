"""A grid cell being edited in the formula bar: what is typed, which choice is highlighted,
and what each key does. State only, no widgets: the scenario sheet (:mod:`planner.tui.sheet`)
checks values and draws the bar.

Every input cell is edited the same way, with the grid keeping the focus (see
:mod:`planner.tui.state.editline` for why): a number or text is typed into a
:class:`~planner.tui.state.editline.LineBuffer`; for a cell with choices (model, GPU, a dtype or
convention, yes/no) what is typed filters the choices, ←/→ (or ↑/↓, Tab) move between them,
and Enter takes the highlighted one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from planner.core.errors import PlannerError, ValidationError
from planner.tui.state.editline import LineBuffer

if TYPE_CHECKING:
    from planner.service.edits import CheckedEdit

Outcome = Literal["accept", "cancel", "changed", "ignored"]

_PREVIOUS = ("left", "up", "shift+tab")
_NEXT = ("right", "down", "tab")


@dataclass
class CellEdit:
    """One cell's edit: scenario id, column key, and how the typed text becomes a value."""

    sid: int
    key: str
    reference: str
    """What the bar calls the cell, e.g. ``chat-bot · batch [sequences]``."""
    hint: str
    parse: Callable[[str], Any]
    buffer: LineBuffer = field(default_factory=LineBuffer)
    choices: list[str] | None = None
    """For a choice cell, every allowed value; the buffer then filters them."""
    index: int = 0
    """The highlighted choice, an index into :attr:`shown`."""
    error: str = ""
    checked: tuple[str, CheckedEdit | PlannerError] | None = None
    """The last check of the edit: (raw value, its CheckedEdit or the error it raised), so
    Enter reuses the check made as the value was typed instead of repeating it."""

    @classmethod
    def of_choices(cls, sid: int, key: str, reference: str, hint: str,
                   parse: Callable[[str], Any], choices: list[str], current: str) -> CellEdit:
        """A choice cell's edit, with the current value highlighted."""
        index = choices.index(current) if current in choices else 0
        return cls(sid, key, reference, hint, parse, LineBuffer(), list(choices), index)

    @property
    def shown(self) -> list[str]:
        """The choices that contain the typed text (all of them before anything is typed)."""
        if self.choices is None:
            return []
        needle = self.buffer.text.strip().lower()
        return [c for c in self.choices if needle in c.lower()]

    def raw(self) -> str:
        """What the edit would set, as typed: the text, or the highlighted choice (raises
        ValidationError when the filter matches no choice)."""
        if self.choices is None:
            return self.buffer.text
        shown = self.shown
        if not shown:
            raise ValidationError(self.key, "one of " + ", ".join(self.choices),
                                  value=self.buffer.text)
        return shown[min(self.index, len(shown) - 1)]

    def value(self) -> Any:
        """The parsed value the edit would set (raises ValidationError naming the column)."""
        return self.parse(self.raw())

    def paste(self, text: str) -> Outcome:
        """Insert pasted text (its first line) as if typed."""
        line = text.splitlines()[0] if text.strip() else ""
        if not line:
            return "ignored"
        self.buffer.insert(line)
        if self.choices is not None:
            self.index = 0
        return "changed"

    def press(self, key: str, character: str | None = None) -> Outcome:
        """Apply one key; the outcome says what the sheet should do next."""
        if key == "escape":
            return "cancel"
        if key == "enter":
            return "accept"
        if self.choices is not None and (key in _PREVIOUS or key in _NEXT):
            count = len(self.shown)
            if count:
                step = -1 if key in _PREVIOUS else 1
                self.index = (min(self.index, count - 1) + step) % count
            return "changed"
        if not self.buffer.press(key, character):
            return "ignored"
        if self.choices is not None:
            self.index = 0  # the best match of the new filter
        return "changed"
