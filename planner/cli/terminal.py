"""The streams the CLI writes to, made safe before a command runs.

Two environments broke every command with a traceback (issue 28): standard output closed
(``planner gpu list >&-``: Python then has no ``sys.stdout`` at all), and a terminal or pipe
whose encoding is not UTF-8 (``PYTHONIOENCODING=ascii`` or ``latin-1``), which cannot encode the
box-drawing characters of the tables nor the ``–``, ``✗`` or ``≤`` of the figures.

:func:`prepare` refuses the first with one line on stderr, and for the second switches the
stream's error handler to :func:`ascii_fallback`, which draws tables with ``+``, ``-`` and
``|``, writes the usual symbols as their ASCII spelling (``<=``, ``->``, ``x``) and any other
character as its ``\\u`` escape: the output stays readable and nothing is lost. Rich draws its
own tables in ASCII on such a stream (it reads the stream's encoding).
"""

from __future__ import annotations

import codecs
import os
import sys
import unicodedata
from typing import TextIO

ERRORS = "planner-ascii"
"""The name :func:`ascii_fallback` is registered under (:func:`codecs.register_error`)."""

PROBE = "┏━┃│└─✗–—…≤→·×"
"""Characters the CLI's output uses; a stream that cannot encode them gets the fallback."""

SYMBOLS = {"–": "-", "—": "-", "…": "...", "✗": "x", "✓": "v", "✔": "v", "→": "->",
           "←": "<-", "≤": "<=", "≥": ">=", "≈": "~", "×": "x", "·": ".", "±": "+/-",
           "•": "*", "‘": "'", "’": "'", "“": '"', "”": '"', "−": "-", "µ": "u",
           "\u00a0": " ", "²": "^2", "³": "^3", "⁹": "^9", "€": "EUR", "£": "GBP"}
"""ASCII spellings of the symbols the planner prints."""


def _box(ch: str) -> str | None:
    """``-``, ``|`` or ``+`` for a box-drawing character (U+2500–U+257F), else None."""
    if not "\u2500" <= ch <= "\u257f":
        return None
    name = unicodedata.name(ch, "")
    if "HORIZONTAL" in name and "VERTICAL" not in name and "AND" not in name:
        return "-"
    if "VERTICAL" in name and "HORIZONTAL" not in name and "AND" not in name:
        return "|"
    return "+"


def _ascii(ch: str) -> str:
    """The ASCII text written for ``ch``: its box or symbol spelling, its letters without
    accents (``é`` → ``e``), else its escape (``\\u4e2d``)."""
    box = _box(ch)
    if box is not None:
        return box
    if ch in SYMBOLS:
        return SYMBOLS[ch]
    plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
    if plain:
        return plain
    return ch.encode("ascii", "backslashreplace").decode()


def ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    """A :mod:`codecs` error handler: the characters a stream's encoding cannot hold, in ASCII
    (:func:`_ascii`)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start:error.end]
    return "".join(map(_ascii, text)), error.end


codecs.register_error(ERRORS, ascii_fallback)


def _needs_fallback(stream: TextIO) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        PROBE.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def prepare() -> str | None:
    """Make the standard streams safe to write to; returns the one-line error to show (and
    exit with) when there is nowhere to write the output, else None."""
    if sys.stderr is None:  # stderr closed too: errors are lost, but the command may run
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  (process-wide)
    if sys.stdout is None or getattr(sys.stdout, "closed", False):
        return ("standard output is closed, so there is nowhere to print the result; nothing "
                "was done. Redirect it to a file or to /dev/null (>/dev/null) instead of "
                "closing it (>&-)")
    for stream in (sys.stdout, sys.stderr):
        if _needs_fallback(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=ERRORS)
    return None
