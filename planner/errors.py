"""Errors a user can cause, each carrying the field it concerns and what would have been allowed.

Entry points (CLI, UI) catch :class:`PlannerError` and show its message; anything else is a bug and
may show a traceback. Keeping these in one small module lets every layer raise them without
importing anything heavier.
"""

from __future__ import annotations

_NOUN_PHRASES = ("a ", "an ", "one of ", "true or false")


class PlannerError(Exception):
    """Base class for mistakes in the user's input or data; the message is meant for the user."""


class ValidationError(PlannerError, ValueError):
    """A value outside what a field allows.

    ``field`` names the input (``"tp"``, ``"num_attention_heads"``), ``allowed`` says what would be
    accepted (``"an integer from 1 to 1024"``), ``value`` is what was given, when known.
    """

    def __init__(self, field: str, allowed: str, *, value: object = None) -> None:
        self.field = field
        self.allowed = allowed
        self.value = value
        shown = "" if value is None else f" (got {value!r})"
        phrase = f"must be {allowed}" if allowed.startswith(_NOUN_PHRASES) else allowed
        super().__init__(f"{field}: {phrase}{shown}")


class ConfigError(PlannerError, ValueError):
    """A model config.json that cannot be turned into an architecture: names the key at fault."""

    def __init__(self, model: str, key: str, problem: str) -> None:
        self.model = model
        self.key = key
        self.problem = problem
        super().__init__(f"{model}: config key {key!r} {problem}")


class NotFoundError(PlannerError, LookupError):
    """A catalog name (model, GPU) that does not exist; lists what does."""

    def __init__(self, kind: str, name: str, known: list[str] | tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.name = name
        hint = f"; known: {', '.join(sorted(known))}" if known else ""
        super().__init__(f"unknown {kind} {name!r}{hint}")
