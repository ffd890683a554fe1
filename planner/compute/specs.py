"""A table's ``model``, ``gpu`` and ``decode_gpu`` names → the specs they name.

Names match case-insensitively and ignoring surrounding blanks, once per distinct name; an
unknown name is a :class:`~planner.core.errors.NotFoundError` naming the row and the known names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from planner.compute.distinct import factorize
from planner.compute.validation import row_label
from planner.core.errors import NotFoundError
from planner.formulas.ops import NumpyOnFirstUse

if TYPE_CHECKING:
    import numpy as np

    from planner.compute.validation import RowLabels
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none


ONE_ROW = [None]
"""The labels of a one-scenario table: errors name no row."""


def lookup(kind: str, names: Any, known: Mapping[str, Any], n: int,
            labels: RowLabels | None) -> tuple[np.ndarray, list[str]]:
    codes, uniques = factorize(names, n)
    lower = {k.lower(): k for k in known}
    resolved = []
    for value in uniques:
        match = lower.get(str(value).strip().lower())
        if match is None:
            bad = int(np.argmax(codes == uniques.index(value)))
            raise NotFoundError(f"{kind} (row {row_label(labels, bad)})", str(value),
                                list(known))
        resolved.append(match)
    return codes, resolved


def lookup_one(kind: str, names: Any, known: Mapping[str, Any]) -> Any:
    """The spec a one-row table names (as :func:`lookup` resolves it, with its errors)."""
    if len(known) == 1 and type(names) is str and names in known:
        return known[names]
    _codes, resolved = lookup(kind, names, known, 1, ONE_ROW)
    return known[resolved[0]]
