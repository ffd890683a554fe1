"""The operator set every formula is written against (docs/design.md, "Formulas are data").

A formula is a plain Python function built from arithmetic (``+ - * / **``), comparisons and the
functions below, never from a Python ``if`` on a value. That keeps each formula runnable on three
kinds of argument without change:

* Python scalars: the result is a Python scalar;
* numpy arrays of any length: one vectorized call for a million scenario rows;
* symbolic values (the compute layer's Excel expressions): any argument that has a
  ``__planner_op__(name, *args)`` method receives the call and builds the formula text
  (``IF``, ``MIN``, ``MAX``, ``ROUNDDOWN``, ``ROUNDUP``).

The estimator knows nothing about Excel; the symbolic backend lives in ``planner.compute``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple


class NumpyOnFirstUse:
    """A stand-in for numpy in a module's globals (``np = NumpyOnFirstUse(globals())``): the
    first use of one of its names imports numpy and puts numpy itself in its place, so later
    uses cost nothing extra. For modules every command imports whose one-value paths need no
    arrays: ``planner --help`` and a one-scenario ``planner estimate`` then load no numpy
    (~60 ms of a 0.2 s process)."""

    def __init__(self, namespace: dict[str, Any], name: str = "np") -> None:
        self._namespace = namespace
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        import numpy

        self._namespace[self._name] = numpy
        return getattr(numpy, attribute)


if TYPE_CHECKING:
    import numpy as np
else:
    np = NumpyOnFirstUse(globals())

Value = Any
"""A scalar, a numpy array, or a symbolic value with ``__planner_op__``."""


def _symbolic(args: tuple[Value, ...]) -> Value | None:
    for arg in args:
        if hasattr(arg, "__planner_op__"):
            return arg
    return None


def _plain(result: np.ndarray | np.generic, args: tuple[Value, ...]) -> Value:
    """Unwrap a 0-d numpy result (a numpy scalar, or a 0-d array) to a Python scalar when every
    argument was a scalar."""
    if all(np.ndim(a) == 0 and not isinstance(a, np.ndarray) for a in args):
        return result.item()
    return result


_SCALARS = frozenset({int, float, bool})
"""Python number types: with only these as arguments an operator computes in plain Python,
giving the value and type numpy would (a one-row evaluation then costs no numpy calls)."""


def _promoted(value: Value, a: Value, b: Value) -> Value:
    """``value`` as numpy's result type of Python scalars ``a`` and ``b`` would make it (NEP 50:
    float if either is a float, else int if either is an int, else bool)."""
    ta, tb = type(a), type(b)
    if ta is float or tb is float:
        return float(value)
    if ta is int or tb is int:
        return int(value)
    return value


def _nan(x: Value) -> bool:
    return x != x


def where(cond: Value, if_true: Value, if_false: Value) -> Value:
    """``if_true`` where ``cond`` holds, else ``if_false`` (Excel ``IF``)."""
    if type(cond) in _SCALARS and type(if_true) in _SCALARS and type(if_false) in _SCALARS:
        return _promoted(if_true if cond else if_false, if_true, if_false)
    args = (cond, if_true, if_false)
    sym = _symbolic(args)
    if sym is not None:
        return sym.__planner_op__("where", *args)
    # With Any arguments mypy takes numpy's first overload, one-argument where (a tuple of
    # index arrays); three arguments always give the array.
    return _plain(np.where(cond, if_true, if_false), args)  # type: ignore[arg-type]


def minimum(a: Value, b: Value) -> Value:
    """Element-wise smaller of two values (Excel ``MIN``)."""
    if type(a) in _SCALARS and type(b) in _SCALARS:
        if _nan(a) or _nan(b):
            return float("nan")  # numpy propagates NaN
        return _promoted(a if a < b else b, a, b)  # equal: b, as numpy gives (-0.0 vs 0.0)
    sym = _symbolic((a, b))
    if sym is not None:
        return sym.__planner_op__("minimum", a, b)
    return _plain(np.minimum(a, b), (a, b))


def maximum(a: Value, b: Value) -> Value:
    """Element-wise larger of two values (Excel ``MAX``)."""
    if type(a) in _SCALARS and type(b) in _SCALARS:
        if _nan(a) or _nan(b):
            return float("nan")
        return _promoted(a if a > b else b, a, b)
    sym = _symbolic((a, b))
    if sym is not None:
        return sym.__planner_op__("maximum", a, b)
    return _plain(np.maximum(a, b), (a, b))


def floor(x: Value) -> Value:
    """Round toward minus infinity (Excel ``ROUNDDOWN(x, 0)`` for the non-negative values used)."""
    if type(x) in _SCALARS:
        return float(math.floor(x)) if math.isfinite(x) else float(x)
    sym = _symbolic((x,))
    if sym is not None:
        return sym.__planner_op__("floor", x)
    return _plain(np.floor(x), (x,))


def ceil(x: Value) -> Value:
    """Round toward plus infinity (Excel ``ROUNDUP(x, 0)`` for the non-negative values used)."""
    if type(x) in _SCALARS:
        return float(math.ceil(x)) if math.isfinite(x) else float(x)
    sym = _symbolic((x,))
    if sym is not None:
        return sym.__planner_op__("ceil", x)
    return _plain(np.ceil(x), (x,))


def clip(x: Value, low: Value, high: Value) -> Value:
    """``x`` limited to ``[low, high]``: ``minimum(maximum(x, low), high)``."""
    return minimum(maximum(x, low), high)


def safe_div(num: Value, den: Value, fallback: Value = 0.0) -> Value:
    """``num / den`` where ``den`` is non-zero, else ``fallback``; never a division warning.

    Written with ``where`` so the symbolic backend renders ``IF(den=0, fallback, num/den)``.
    """
    if type(num) in _SCALARS and type(den) in _SCALARS and type(fallback) in _SCALARS:
        if den == 0:
            return float(fallback)
        try:
            return float(num) / float(den)
        except OverflowError:  # numpy gives an infinity of the quotient's sign
            return math.copysign(math.inf, float(num)) * math.copysign(1.0, float(den))
    sym = _symbolic((num, den, fallback))
    if sym is not None:
        return sym.__planner_op__("where", den == 0, fallback, num / den)
    den_arr = np.asarray(den, dtype=float)
    zero = den_arr == 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = np.asarray(num, dtype=float) / np.where(zero, 1.0, den_arr)
    return _plain(np.where(zero, fallback, quotient), (num, den, fallback))


def power(base: Value, exponent: Value) -> Value:
    """``base ** exponent`` with numpy's semantics whatever the arguments (Excel ``^``).

    numpy's ``**`` differs from Python's by a unit in the last place for about one value in
    twenty (and ``** 0.5`` is a square root there), so a formula that wrote ``**`` gave a
    one-row estimate (Python floats) a figure one bit away from the same row in a fleet
    (arrays). Through this function both take numpy's path. A symbolic argument records
    ``base ** exponent`` as before."""
    if type(base) in _SCALARS and type(exponent) in _SCALARS:
        exact = exact_power(base, exponent)
        if exact is not None:
            return exact
    elif _symbolic((base, exponent)) is not None:
        return base ** exponent
    if isinstance(base, np.ndarray) or isinstance(exponent, np.ndarray):
        return np.asarray(base, dtype=float) ** exponent
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return (np.asarray(base, dtype=float) ** exponent).item()


def exact_power(base: float, exponent: float) -> float | None:
    """``power`` of two Python numbers where it needs no numpy, else None: where numpy's
    ``**`` on a 0-d array takes an exact shortcut (exponent 0, 1, 2 or 0.5: one, the base,
    its square, its correctly rounded square root) or IEEE 754 fixes the result (a base of 1;
    a base of +0 with a positive exponent). ``tests/compute/test_rowfn.py`` checks it against numpy
    on special and random pairs."""
    if exponent == 1:
        return float(base)
    if exponent == 2:
        return float(base) * float(base)
    if exponent == 0 or base == 1:
        return 1.0
    if exponent == 0.5 and base >= 0:  # numpy's shortcut: the correctly rounded square root
        return math.sqrt(base)
    if base == 0 and exponent > 0 and math.copysign(1.0, base) > 0:
        return 0.0
    return None


class Repeats(NamedTuple):
    """A formula's statement that, on every row where each pair of columns in ``when`` holds
    equal values, its value is that of the earlier column ``column`` (it computes the same
    formula of the same numbers there). :class:`FormulaGraph` then evaluates the formula only
    on the other rows and copies ``column`` on these: an evaluation shortcut, never a different
    figure (``tests/compute/test_graph_repeats.py`` compares every column with the shortcut off).
    The replica search's steps state it (:mod:`planner.formulas.slo`): once its bounds stop
    moving, every later step repeats the last. A formula states it as its attribute
    ``__planner_repeats__``; Excel formulas and explain render the formula itself. Evaluated
    by :class:`planner.compute.graph.FormulaGraph`."""

    column: str
    when: tuple[tuple[str, str], ...]


class Coded:
    """A text column stored as integer codes into its distinct values (``levels``).

    Choice inputs (dtypes, conventions) arrive this way from the compute layer: each distinct text
    is validated and looked up once, and a million rows cost one integer array. ``column ==
    "int4"`` compares codes; :func:`lookup` maps levels through a table and takes by code.
    Slicing keeps the levels, so chunked evaluation works unchanged."""

    __slots__ = ("codes", "levels")
    __hash__ = None  # type: ignore[assignment]  # __eq__ is element-wise
    ndim = 1

    def __init__(self, codes: np.ndarray, levels: tuple[str, ...]) -> None:
        self.codes = codes
        self.levels = levels

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, index: Any) -> Coded:
        return Coded(self.codes[index], self.levels)

    def __eq__(self, other: object) -> Any:
        matches = [i for i, level in enumerate(self.levels) if level == other]
        if len(matches) == 1:  # levels are distinct texts: the usual case
            return self.codes == matches[0]
        return np.isin(self.codes, matches)

    def __ne__(self, other: object) -> Any:
        return ~(self == other)

    def texts(self) -> np.ndarray:
        """The column as an object array of texts, one per row."""
        return np.asarray(self.levels, dtype=object)[self.codes]


def lookup(key: Value, table: Mapping[str, float]) -> Value:
    """``table[key]`` for a text key or a :class:`Coded` column (Excel: nested ``IF`` over the
    table's entries). Keys are validated before evaluation, so every key is in ``table``."""
    if type(key) is str:  # one row: a plain lookup, no numpy
        return table[key]
    sym = _symbolic((key,))
    if sym is not None:
        return sym.__planner_op__("lookup", key, tuple(table.items()))
    if isinstance(key, Coded):
        per_level = np.asarray([table.get(level, np.nan) for level in key.levels], dtype=float)
        return per_level[key.codes]
    if isinstance(key, np.ndarray):
        return np.asarray([table.get(k, np.nan) for k in key.tolist()], dtype=float)
    return table[key]
