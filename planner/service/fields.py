"""Rules for the plain fields every use case takes: names and flags.

A flag accepts exactly the words an input column of kind ``bool`` accepts
(:meth:`planner.sheet.inputs.InputColumn.parse`), so ``yes``/``y``/``on``/``1`` mean true
everywhere.
"""

from __future__ import annotations

from typing import Any

from planner.errors import ValidationError
from planner.sheet.inputs import InputColumn


def clean_name(value: str, field: str) -> str:
    """``value`` stripped; :class:`ValidationError` unless 1 to 200 characters."""
    text = value.strip()
    if not text or len(text) > 200:
        raise ValidationError(field, "must be 1 to 200 characters", value=value)
    return text


def parse_bool(field: str, value: Any) -> bool:
    """``value`` as a flag, by the rule of boolean input columns."""
    column = InputColumn(name=field, label=field, unit="bool", kind="bool", default=False,
                         help="")
    flag: bool = column.parse(value)
    return flag
