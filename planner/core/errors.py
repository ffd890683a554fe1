"""Errors a user can cause, each carrying the field it concerns and what would have been allowed.

Entry points (CLI, UI) catch :class:`PlannerError` and show its message; anything else is a bug and
may show a traceback. Keeping these in one small module lets every layer raise them without
importing anything heavier.
"""

from __future__ import annotations

from collections.abc import Iterable

_NOUN_PHRASES = ("a ", "an ", "one of ", "true or false")

ECHO_CHARS = 60
"""Most characters of a user's value an error message repeats: a 100,000-character name is
echoed as its first 60 characters and its length, so every message stays a readable line."""


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """``repr(value)``, cut to ``limit`` characters of its text with the full length said
    (``'xxxx…' (100,000 characters)``): how every error shows what the user gave."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    text = repr(value)
    if len(text) > limit + 2:
        return f"{text[:limit]}… ({len(text):,} characters)"
    return text


def close_matches(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known names a user most likely meant by ``name``: the ones it starts (``h100`` →
    h100-sxm, h100-pcie), else the ones it appears in, else difflib's close matches (``bacth``
    → batch). Case-insensitive; at most ``n``."""
    import difflib

    names = list(dict.fromkeys(known))
    typed = name.strip().lower()
    if not typed or len(typed) > 200:
        return []
    lowered = {k.lower(): k for k in names}
    picked = [k for low, k in lowered.items() if low.startswith(typed)]
    if not picked:
        picked = [k for low, k in lowered.items() if typed in low]
    if picked:  # the shortest first: the likeliest completion
        return sorted(picked, key=lambda k: (len(k), k))[:n]
    if len(lowered) > DIFFLIB_MAX_NAMES:
        return []
    return [lowered[low] for low in difflib.get_close_matches(typed, list(lowered), n=n,
                                                              cutoff=0.6)]  # closest first


def or_list(names: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    items = list(names)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


DIFFLIB_MAX_NAMES = 20_000
"""Above this many names only prefix and substring matches are suggested (difflib compares
every name: about 2 s for 100,000)."""


def phrase(allowed: str) -> str:
    """How a refusal says what is allowed: ``must be <allowed>`` when ``allowed`` is a noun
    phrase (``an integer from 1 to 1024``, ``one of ...``), else ``allowed`` as it is
    (``each month at most once``)."""
    return f"must be {allowed}" if allowed.startswith(_NOUN_PHRASES) else allowed


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
        shown = "" if value is None else f" (got {echo(value)})"
        named = field if len(field) <= ECHO_CHARS else echo(field)  # a field name a user typed
        super().__init__(f"{named}: {phrase(allowed)}{shown}")


class ConfigError(PlannerError, ValueError):
    """A model config.json that cannot be turned into an architecture: names the key at fault."""

    def __init__(self, model: str, key: str, problem: str) -> None:
        self.model = model
        self.key = key
        self.problem = problem
        super().__init__(f"{model}: config key {key!r} {problem}")


def not_one_of(name: str, known: Iterable[str], what: str, listing: str = "") -> str:
    """The ``allowed`` text of a :class:`ValidationError` for a name that is not one of
    ``known`` (``"is not a scenario field; did you mean batch?"``): the close matches, else
    every name when there are few, else how many there are and ``listing``, where they are
    listed."""
    names = list(known)
    close = close_matches(name, names)
    if close:
        return f"{what}; did you mean {or_list(close)}?"
    if len(names) <= SHORT_LIST and len(", ".join(names)) <= SHORT_LIST_CHARS:
        return f"{what}; known: {', '.join(names)}"
    return f"{what} ({len(names)} are known{f': {listing}' if listing else ''})"


SHORT_LIST = 10
SHORT_LIST_CHARS = 120
"""A not-found error lists every known name when there are at most ``SHORT_LIST`` of at most
``SHORT_LIST_CHARS`` characters together; beyond, it suggests the close matches and says
where the list is."""

LISTINGS = {"model": "planner model list", "GPU": "planner gpu list",
            "fleet": "planner fleet list", "scenario": "planner scenario list"}
"""The command that lists each kind of name, for a not-found error's hint."""


class NotFoundError(PlannerError, LookupError):
    """A name (model, GPU, fleet, scenario) that does not exist: suggests the close matches
    (:func:`close_matches`), lists a short catalog whole, and says which command lists a long
    one, instead of printing every name."""

    def __init__(self, kind: str, name: str, known: list[str] | tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = close_matches(name, known) if known else []
        if self.suggestions:
            hint = f"; did you mean {or_list(self.suggestions)}?"
        elif len(known) <= SHORT_LIST and len(", ".join(known)) <= SHORT_LIST_CHARS:
            hint = f"; known: {', '.join(sorted(known))}" if known else ""
        else:
            listing = LISTINGS.get(kind.split(" ", 1)[0])
            hint = f"; {len(known):,} are known" + (f" (`{listing}`)" if listing else "")
        super().__init__(f"unknown {kind} {echo(name)}{hint}")
