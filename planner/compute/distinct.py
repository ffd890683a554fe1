"""Each distinct value once: a table column as codes per row and its distinct values.

Why a module of its own: validation (:mod:`planner.compute.validation`) parses each distinct text
once, and the table path looks each distinct model and GPU up once; both factorize the same
way, and neither should import the other for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from planner.core.errors import ValidationError
from planner.formulas.ops import NumpyOnFirstUse

if TYPE_CHECKING:
    import numpy as np
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none


def table_length(table: Mapping[str, Any]) -> int:
    lengths = {len(v) for v in table.values() if np.ndim(v) == 1 and not isinstance(v, str)}
    if len(lengths) > 1:
        raise ValidationError("table", f"columns have different lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 1


_SMALL = 65_536
"""Up to this many rows a dict factorizes faster than importing pandas (about 0.2 s, paid by
every UI start-up); above it, pandas' hash table is several times faster than the dict."""


def factorize(values: Any, n: int) -> tuple[np.ndarray, list[Any]]:
    """(codes per row, distinct values in order of first appearance) of a scalar or an array.
    Distinct means unequal under Python's ``==`` and ``hash``, as in ``pandas.factorize``."""
    if np.ndim(values) == 0 or isinstance(values, str):
        return np.zeros(n, dtype=np.intp), [values]
    if n <= _SMALL:
        index: dict[Any, int] = {}
        items = values.tolist() if isinstance(values, np.ndarray) else values
        codes = np.fromiter((index.setdefault(v, len(index)) for v in items), dtype=np.intp,
                            count=n)
        return codes, list(index)
    import pandas as pd

    array = np.asarray(values, dtype=object)
    # one hashing pass; missing values (rare: they are refused as bad values) get -1 there, and
    # only then the slower pass that keeps them as values is taken (~1.5x the time)
    codes, uniques = pd.factorize(array)
    if codes.size and codes.min() < 0:
        codes, uniques = pd.factorize(array, use_na_sentinel=False)
    return codes.astype(np.intp, copy=False), list(uniques)


def take(per_value: Sequence[float], codes: np.ndarray) -> Any:
    """``per_value[codes]``, or the single value itself when there is only one: constant
    columns stay scalars and broadcast, which keeps sweeps over one model and GPU cheap."""
    if len(per_value) == 1:
        return float(per_value[0])
    return np.asarray(per_value, dtype=np.float64)[codes]
