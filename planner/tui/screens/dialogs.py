"""Modal dialogs of the terminal UI: prompts (names, paths, catalog values), confirmation,
help and other text, fleets. Grid cells are edited in the formula bar instead
(:mod:`planner.tui.state.cell_edit`).

Every dialog returns its result through ``dismiss`` (None when cancelled with Escape), so the
caller decides what to do; none of them touches the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import ValidationResult, Validator
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from planner.core.errors import PlannerError


class ColumnValidator(Validator):
    """Validates as you type with an input column's own ``parse`` (the CLI's rules)."""

    def __init__(self, parse: Callable[[str], Any]) -> None:
        super().__init__()
        self.parse = parse

    def validate(self, value: str) -> ValidationResult:
        try:
            self.parse(value)
        except PlannerError as exc:
            return self.failure(str(exc))
        return self.success()


Answer = TypeVar("Answer")


class AnswerDialog(ModalScreen[Answer], Generic[Answer]):
    """A dialog whose answer can be held open until what it asked for is done.

    With :attr:`on_answer` set by the opener, an answer (not a cancel) goes to it and the
    dialog stays on screen, deaf to further keys, until the opener dismisses it: a row action
    then closes its dialog in the same frame that shows its result, instead of the screen
    being drawn once without the dialog and again with the row (issue 27 item 8)."""

    on_answer: Callable[[Answer], None] | None = None
    answered = False
    """Whether an answer went to :attr:`on_answer` (the dialog waits to be dismissed)."""

    close_on_resume = False
    """Whether the dialog closes itself once it is on top again (:meth:`close`)."""

    def close(self) -> None:
        """Dismiss the dialog with no answer: now if it is the top screen, else as soon as the
        screens over it are gone (a key bound on the app can push one, help say, while the
        action runs). ``dismiss`` pops the top screen, whichever it is, so it waits; and
        ``is_current`` holds for a screen still drawn under a modal one, so it asks
        ``is_active``."""
        if self.is_active:
            self.dismiss(None)
        else:
            self.close_on_resume = True

    def on_screen_resume(self) -> None:
        """Close, when :meth:`close` was called while another screen was over this one."""
        if self.close_on_resume:
            self.close_on_resume = False
            self.dismiss(None)

    def answer(self, value: Answer | None) -> None:
        """Give ``value`` to :attr:`on_answer` and wait, or dismiss with it; None and False
        (cancelled, or "no") always dismiss."""
        if self.answered:
            return
        if self.on_answer is not None and value is not None and value is not False:
            self.answered = True
            self.on_answer(value)
            return
        self.dismiss(value)


class EditDialog(AnswerDialog[Any]):
    """Edit one value in a text field validated as you type with ``parse``; on Enter an
    invalid value keeps the dialog open and shows the reason."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: Any, *, help_text: str = "",
                 parse: Callable[[str], Any] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.help_text = help_text
        self.parse = parse or (lambda text: text)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"[b]{self.title_text}[/]")
            yield Static(self.help_text, id="help")
            yield Input(value="" if self.value is None else str(self.value), id="value",
                        validators=[ColumnValidator(self.parse)], select_on_focus=True)
            yield Static("", id="error")
            yield Label("[dim]Enter to accept · Esc to cancel[/]")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def _accept(self, raw: Any) -> None:
        try:
            value = self.parse(raw)
        except PlannerError as exc:
            self.query_one("#error", Static).update(str(exc))
            return
        self.answer(value)

    @on(Input.Changed, "#value")
    def _typed(self, event: Input.Changed) -> None:
        result = event.validation_result
        self.query_one("#error", Static).update(
            "" if result is None or result.is_valid else "; ".join(
                result.failure_descriptions))

    @on(Input.Submitted, "#value")
    def _submitted(self, event: Input.Submitted) -> None:
        self._accept(event.value)

    def action_cancel(self) -> None:
        self.answer(None)


class ConfirmDialog(AnswerDialog[bool]):
    """Yes or no."""

    BINDINGS = [Binding("escape", "no", "No"), Binding("y", "yes", "Yes"),
                Binding("n", "no", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.question)
            with Horizontal():
                yield Button("Yes (y)", id="yes", variant="error")
                yield Button("No (n)", id="no", variant="primary")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.answer(event.button.id == "yes")

    def action_yes(self) -> None:
        self.answer(True)

    def action_no(self) -> None:
        self.answer(False)


class FleetDialog(ModalScreen[str | None]):
    """Pick a fleet, or type a new name to create one."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, fleets: Sequence[tuple[str, int]], current: str) -> None:
        super().__init__()
        self.fleets = list(fleets)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("[b]Switch fleet[/] (Enter) — or Tab and type a new fleet's name")
            yield OptionList(*[Option(f"{name}  [dim]({n} scenarios)[/]", id=name)
                               for name, n in self.fleets], id="fleets")
            yield Input(placeholder="new fleet name, then Enter", id="new")

    def on_mount(self) -> None:
        names = [n for n, _ in self.fleets]
        option_list = self.query_one(OptionList)
        if self.current in names:
            option_list.highlighted = names.index(self.current)
        option_list.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(str(event.option.id))

    @on(Input.Submitted, "#new")
    def _new(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss("+" + event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    """A scrollable page of text (help, comparison, sweep results)."""

    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, title: str, body: Any) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Label(f"[b]{self.title_text}[/]  [dim](Esc to close)[/]")
            yield Static(self.body, id="body")

    def action_close(self) -> None:
        self.dismiss(None)


class NewScenarioDialog(AnswerDialog[tuple[str, str, str]]):
    """A new scenario: its name, and its model and GPU each chosen by typing a filter
    (↑ ↓ move in the matches). Both start at the given defaults (the current row's).
    Returns (name, model, GPU), or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"),
                Binding("up", "move(-1)", "Previous", show=False),
                Binding("down", "move(1)", "Next", show=False)]

    def __init__(self, title: str, models: Sequence[str], gpus: Sequence[str],
                 model: str, gpu: str, help_text: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.help_text = help_text
        self.names = {"model": list(models), "gpu": list(gpus)}
        self.defaults = {"model": model, "gpu": gpu}
        self.shown: dict[str, list[str]] = {k: list(v) for k, v in self.names.items()}

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"[b]{self.title_text}[/]")
            if self.help_text:
                yield Static(self.help_text, id="help")
            yield Input(placeholder="name", id="name")
            for field, label in (("model", "Model"), ("gpu", "GPU")):
                yield Label(f"{label} [dim](type to filter, ↑ ↓ choose)[/]")
                yield Input(placeholder=f"filter {label.lower()}s", id=f"{field}-filter")
                choices = OptionList(*[Option(n, id=n) for n in self.names[field]],
                                     id=f"{field}-choices")
                choices.can_focus = False  # Tab goes from field to field
                yield choices
            yield Static("", id="error")
            yield Label("[dim]Enter to create · Tab next field · Esc to cancel[/]")

    def on_mount(self) -> None:
        for field in ("model", "gpu"):
            self._filter(field, "")
        self.query_one("#name", Input).focus()

    def chosen(self, field: str) -> str | None:
        """The model or GPU highlighted now (None when the filter matches nothing)."""
        choices = self.query_one(f"#{field}-choices", OptionList)
        index = choices.highlighted
        shown = self.shown[field]
        return shown[index] if index is not None and 0 <= index < len(shown) else None

    def _filter(self, field: str, text: str) -> None:
        needle = text.strip().lower()
        current = self.chosen(field) if self.is_mounted and text else self.defaults[field]
        shown = [n for n in self.names[field] if needle in n.lower()]
        self.shown[field] = shown
        choices = self.query_one(f"#{field}-choices", OptionList)
        choices.clear_options()
        choices.add_options([Option(n, id=n) for n in shown])
        if shown:
            choices.highlighted = shown.index(_kept(shown, needle, current))
            choices.scroll_to_highlight()

    @on(Input.Changed, "#model-filter, #gpu-filter")
    def _typed(self, event: Input.Changed) -> None:
        field = (event.input.id or "").removesuffix("-filter")
        self._filter(field, event.value)
        self.query_one("#error", Static).update(
            "" if self.shown[field] else f"no {field} matches {event.value!r}")

    def action_move(self, step: int) -> None:
        """Move the highlight in the list of the focused filter."""
        focused = self.focused
        field = (focused.id or "").removesuffix("-filter") if focused is not None else ""
        if field not in self.names or not self.shown[field]:
            return
        choices = self.query_one(f"#{field}-choices", OptionList)
        index = ((choices.highlighted or 0) + step) % len(self.shown[field])
        choices.highlighted = index
        choices.scroll_to_highlight()

    @on(Input.Submitted)
    def _submitted(self, _event: Input.Submitted) -> None:
        name = self.query_one("#name", Input).value.strip()
        model, gpu = self.chosen("model"), self.chosen("gpu")
        error = ("the name must be 1 to 200 characters" if not name or len(name) > 200
                 else "no model chosen" if model is None
                 else "no GPU chosen" if gpu is None else "")
        if error:
            self.query_one("#error", Static).update(error)
            return
        assert model is not None and gpu is not None
        self.answer((name, model, gpu))

    def action_cancel(self) -> None:
        self.answer(None)


def _kept(shown: list[str], needle: str, current: str | None) -> str:
    """The choice highlighted once the filter ``needle`` leaves ``shown``: the one it names
    exactly, else the one highlighted before (``current``) if still shown, else the first."""
    exact = [n for n in shown if n.lower() == needle]
    return exact[0] if exact else (current if current in shown else shown[0])
