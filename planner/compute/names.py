"""Which characters a name may hold: none that shows as something else or as nothing.

Why a module of its own: scenario, fleet, profile and workspace names are checked by one rule
(:func:`forbidden_in_name`), one value at a time (:func:`has_control`, the service's fields and
the input parser) and as a vectorized pattern over a column of names
(:func:`name_forbidden_pattern`, a bulk import).
"""

from __future__ import annotations

import unicodedata
from functools import cache

NAME_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories no name may hold: control (C0, DEL, C1), format (the invisible ones:
zero-width space and joiners, bidi overrides, soft hyphen, BOM), surrogate, private use,
unassigned, line and paragraph separators. None shows as itself in a terminal or a sheet, so
two names that look alike could differ by one."""


def forbidden_in_name(ch: str) -> bool:
    """Whether a name may not hold ``ch``: a character of :data:`NAME_FORBIDDEN_CATEGORIES`,
    a non-character (U+FFFE, U+FFFF) or a space other than U+0020 (no-break, ideographic,
    thin: they look like a space and are not)."""
    category = unicodedata.category(ch)
    return (category in NAME_FORBIDDEN_CATEGORIES or ch in ("\ufffe", "\uffff")
            or (category == "Zs" and ch != " "))


@cache
def name_forbidden_pattern() -> str:
    """A regular expression matching one character :func:`forbidden_in_name` refuses, for a
    vectorized check of a column of names (a bulk import): a class of the Basic Multilingual
    Plane's such characters as ranges, then the supplementary planes' tag and private-use
    blocks. Written with the characters themselves (no ``\\u`` escapes), so that Python's
    ``re`` and RE2 (pandas' Arrow strings) read it alike. Built once, on first use."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x10000):
        if 0xD800 <= code <= 0xDFFF or not forbidden_in_name(chr(code)):
            continue
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    ranges += [(0xE0000, 0xE007F), (0xF0000, 0x10FFFF)]

    def char(code: int) -> str:
        return "\\" + chr(code) if chr(code) in "\\]^-[" else chr(code)

    return "[" + "".join(char(a) if a == b else f"{char(a)}-{char(b)}" for a, b in ranges) + "]"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character no name may hold (:func:`forbidden_in_name`: what
    planner.service.fields refuses in names)."""
    if text.isascii():  # the usual name: one C-level check, then the controls only
        return any(ch < " " or ch == "\x7f" for ch in text)
    return any(map(forbidden_in_name, text))
