"""Rules for the plain fields every use case takes: names and flags.

A flag accepts exactly the words an input column of kind ``bool`` accepts
(:meth:`planner.compute.inputs.InputColumn.parse`), so ``yes``/``y``/``on``/``1`` mean true
everywhere.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from planner.compute.inputs import (
    LORA_TARGETS,
    LORA_TARGETS_ALLOWED,
    LORA_TARGETS_MAX_CHARS,
    InputColumn,
)
from planner.compute.validation import forbidden_in_name
from planner.core.errors import ValidationError

TEXT_WHITESPACE = frozenset("\t\n\r")
"""Control characters free text (notes) may hold: tab and line breaks."""

NAME_MAX_CHARS = 200
"""Longest name (scenario, fleet, model, GPU, profile) in characters."""

TEXT_MAX_CHARS = {"notes": 10_000, "description": 10_000, "source": 2_000,
                  "serving_source": 2_000, "topology_source": 2_000}
"""Longest free text per field, in characters (others, such as a GPU's vendor or label: 200).
Far above what the catalog holds (its longest source is 538 characters) and below what one
spreadsheet cell holds (32,767)."""

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")
"""Characters that reorder how the text around them is shown (the "Trojan Source" trick):
refused in free text too, which otherwise may hold any printable character."""

FIELDS_LISTING = "`planner estimate --help` and `planner train --help` list them"
"""Where a user finds the scenario fields, for an unknown field's message."""


def _bad_character(text: str, allowed: frozenset[str] = frozenset()) -> str | None:
    """The first character of ``text`` no name may hold
    (:func:`planner.compute.validation.forbidden_in_name`: a control or invisible format character,
    a line or paragraph separator, a lone surrogate, a private-use, unassigned or non-character,
    a space other than U+0020), skipping those in ``allowed``."""
    for ch in text:
        if ch not in allowed and forbidden_in_name(ch):
            return ch
    return None


def _bad_text_character(text: str) -> str | None:
    """The first character free text may not hold: a control character other than tab and
    line breaks, a lone surrogate, a non-character, or a bidi control."""
    for ch in text:
        if ch in TEXT_WHITESPACE:
            continue
        if (ch in BIDI_CONTROLS or ch in ("\ufffe", "\uffff")
                or unicodedata.category(ch) in ("Cc", "Cs")):
            return ch
    return None


def _refuse(value: str, field: str, bad: str | None, what: str) -> None:
    if bad is not None:
        name = unicodedata.name(bad, "").lower()
        called = f" {name}" if name else ""
        raise ValidationError(field, f"must be {what} without a control character or an "
                              f"invisible one (found U+{ord(bad):04X}{called} at position "
                              f"{value.index(bad) + 1})")


def clean_name(value: str, field: str) -> str:
    """``value`` stripped; :class:`ValidationError` unless 1 to 200 characters, none of them a
    control or invisible character (:func:`_bad_character`)."""
    text = value.strip()
    if not text or len(text) > NAME_MAX_CHARS:
        raise ValidationError(field, f"must be 1 to {NAME_MAX_CHARS} characters", value=value)
    _refuse(text, field, _bad_character(text), f"1 to {NAME_MAX_CHARS} characters")
    return text


def clean_text(value: Any, field: str) -> str:
    """Free text (notes, a GPU's vendor, label or source) as a string of at most
    :data:`TEXT_MAX_CHARS` characters (200 for a field not listed there); tabs and line
    breaks are kept, other control characters and bidi controls are refused with
    :class:`ValidationError`."""
    text = str(value)
    limit = TEXT_MAX_CHARS.get(field, NAME_MAX_CHARS)
    if len(text) > limit:
        raise ValidationError(field, f"must be at most {limit:,} characters", value=text)
    _refuse(text, field, _bad_text_character(text), "text")
    return text


def clean_lora_targets(value: Any, field: str = "lora_targets") -> str:
    """``value`` stripped, when it is a list of module names
    (:data:`planner.compute.inputs.LORA_TARGETS`) of at most 200 characters; else
    :class:`ValidationError` saying the grammar."""
    text = str(value).strip()
    if len(text) > LORA_TARGETS_MAX_CHARS or not LORA_TARGETS.fullmatch(text):
        raise ValidationError(field, f"must be {LORA_TARGETS_ALLOWED}", value=value)
    return text


def parse_bool(field: str, value: Any) -> bool:
    """``value`` as a flag, by the rule of boolean input columns."""
    column = InputColumn(name=field, label=field, unit="bool", kind="bool", default=False,
                         help="")
    flag: bool = column.parse(value)
    return flag
