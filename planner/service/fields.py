"""Rules for the plain fields every use case takes: names and flags.

A flag accepts exactly the words an input column of kind ``bool`` accepts
(:meth:`planner.sheet.inputs.InputColumn.parse`), so ``yes``/``y``/``on``/``1`` mean true
everywhere.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from planner.errors import ValidationError
from planner.sheet.inputs import InputColumn

TEXT_WHITESPACE = frozenset("\t\n\r")
"""Control characters free text (notes) may hold: tab and line breaks."""


def _bad_character(text: str, allowed: frozenset[str] = frozenset()) -> str | None:
    """The first character of ``text`` no name may hold: a control character (C0, DEL, C1),
    a line or paragraph separator, a lone surrogate or a non-character (U+FFFE, U+FFFF), none
    of which a workbook or a terminal shows as text."""
    for ch in text:
        if ch in allowed:
            continue
        category = unicodedata.category(ch)
        if category in ("Cc", "Cs", "Zl", "Zp") or ch in ("\ufffe", "\uffff"):
            return ch
    return None


def _refuse_controls(value: str, field: str, allowed: frozenset[str], what: str) -> None:
    bad = _bad_character(value, allowed)
    if bad is not None:
        raise ValidationError(field, f"must be {what} without control characters (found "
                              f"U+{ord(bad):04X} at position {value.index(bad) + 1})")


def clean_name(value: str, field: str) -> str:
    """``value`` stripped; :class:`ValidationError` unless 1 to 200 characters, none of them a
    control character."""
    text = value.strip()
    if not text or len(text) > 200:
        raise ValidationError(field, "must be 1 to 200 characters", value=value)
    _refuse_controls(text, field, frozenset(), "1 to 200 characters")
    return text


def clean_text(value: Any, field: str) -> str:
    """Free text (notes, a GPU's vendor, label or source) as a string; tabs and line breaks
    are kept, any other control character is refused with :class:`ValidationError`."""
    text = str(value)
    _refuse_controls(text, field, TEXT_WHITESPACE, "text")
    return text


def parse_bool(field: str, value: Any) -> bool:
    """``value`` as a flag, by the rule of boolean input columns."""
    column = InputColumn(name=field, label=field, unit="bool", kind="bool", default=False,
                         help="")
    flag: bool = column.parse(value)
    return flag
