"""Go to a column by name: a filterable list of the grid's columns (``:`` or ctrl+g).

The grid has about seventy columns; the SLO inputs are forty arrow presses from the name.
Typing part of a label or a column name narrows the list, Enter moves the cursor there
(unfolding the column's group if it is folded). The list is built by the sheet from its
layout (:func:`column_choices`), so this screen knows no columns itself. Layout in
``column_jump.tcss``.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option


def matches(choices: list[tuple[str, str]], text: str) -> list[tuple[str, str]]:
    """The (key, label) choices whose key or label contains every word of ``text``
    (case-insensitive; ``slo ttft`` finds ``slo_ttft_s``), in grid order."""
    words = text.lower().replace("_", " ").split()
    return [(k, label) for k, label in choices
            if all(w in f"{k.replace('_', ' ')} {label}".lower() for w in words)]


class ColumnJump(ModalScreen[str | None]):
    """Pick a grid column by typing part of its name; dismisses with its key."""

    BINDINGS = [Binding("escape", "close", "Close"),
                Binding("down", "down", show=False), Binding("up", "up", show=False)]
    CSS_PATH = "column_jump.tcss"

    def __init__(self, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.choices = choices
        self.shown: list[tuple[str, str]] = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("[b]Go to column[/]: type part of its name, Enter goes there")
            yield Input(id="column-filter", placeholder="e.g. slo, ttft p99, engine")
            yield OptionList(*self._options(), id="columns")

    def _options(self) -> list[Option]:
        return [Option(Text.assemble(label, "  ", (key, "dim")), id=key)
                for key, label in self.shown]

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Changed)
    def _filter(self, event: Input.Changed) -> None:
        self.shown = matches(self.choices, event.value)
        listing = self.query_one(OptionList)
        listing.clear_options()
        listing.add_options(self._options())
        if self.shown:
            listing.highlighted = 0

    @on(Input.Submitted)
    def _submit(self) -> None:
        listing = self.query_one(OptionList)
        at = listing.highlighted if listing.highlighted is not None else 0
        self.dismiss(self.shown[at][0] if self.shown else None)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(str(event.option.id))

    def action_down(self) -> None:
        self.query_one(OptionList).action_cursor_down()

    def action_up(self) -> None:
        self.query_one(OptionList).action_cursor_up()

    def action_close(self) -> None:
        self.dismiss(None)
