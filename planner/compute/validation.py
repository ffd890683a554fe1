"""The one path a scenario's inputs are parsed and checked by, whatever they come from.

A value for an input column (:class:`planner.compute.inputs.InputColumn`, read here through
:class:`ColumnRule`) becomes its parsed value or a refusal naming the field and the allowed
range, by the rules here and nowhere else:

- :func:`parse_value`: one value (a CLI flag, a UI cell edit, an API field, a sweep's value);
  :class:`~planner.core.errors.ValidationError` naming the column and :func:`allowed`.
- :func:`parse_cell`: the same, as a formula cell holds it (a float; 1.0/0.0 for a flag).
- :func:`check_array`: a column of a table (a DataFrame, a sweep, a plan's workloads), numpy
  only, each distinct text parsed once; the first bad value raises :class:`RowError` naming
  the row.
- :func:`check_series`: a column of a file a person wrote (a CSV or workbook import), every
  bad cell reported with the same words.

Every refusal says :func:`refusal`: ``must be <allowed> (got <value>)``; an entry point only
adds where the value was (``tp:``, ``tp (row 3):``, ``line 2 (tp):``). The numeric range rule is
:func:`outside`, used on one number and on arrays alike; a rate written ``N/unit`` is read by
:func:`rate_unit` for an input and for a plan's demand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from planner.compute.distinct import factorize
from planner.compute.names import forbidden_in_name as forbidden_in_name  # re-exported
from planner.compute.names import has_control
from planner.compute.names import name_forbidden_pattern as name_forbidden_pattern
from planner.core.errors import ValidationError, echo, phrase
from planner.core.units import parse_number
from planner.formulas.ops import Coded, NumpyOnFirstUse

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np
    import pandas as pd

    from planner.compute.problems import Problems

    RowLabels: TypeAlias = Sequence[Any] | pd.Index
    """What errors name a table's rows by: a DataFrame's index, or a list of labels."""
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-value paths need none

class ColumnRule(Protocol):
    """What the rules here read of an input column (:class:`planner.compute.inputs.InputColumn`
    has these fields; naming the protocol keeps this module free of the column catalog, which
    imports it)."""

    @property
    def name(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def default(self) -> Any: ...
    @property
    def help(self) -> str: ...
    @property
    def minimum(self) -> float | None: ...
    @property
    def maximum(self) -> float | None: ...
    @property
    def above_minimum(self) -> bool: ...
    @property
    def choices(self) -> tuple[str, ...]: ...


TRUE_TEXTS = frozenset({"1", "true", "yes", "on", "y"})
FALSE_TEXTS = frozenset({"0", "false", "no", "off", "n"})
"""How a flag may be written (case-insensitive)."""

TEXT_MAX_CHARS = 200
"""Longest free text (a profile name) and name."""


# ---- free text -----------------------------------------------------------------------------

def _clean_text(column: ColumnRule, text: str) -> str | None:
    """A free-text value stripped (a choice it names in lower case), or None when it is empty,
    longer than :data:`TEXT_MAX_CHARS` or holds a forbidden character."""
    text = text.strip()
    if not text or len(text) > TEXT_MAX_CHARS or has_control(text):
        return None
    return text.lower() if text.lower() in column.choices else text


# ---- rates ---------------------------------------------------------------------------------

RATE_SECONDS = {"s": 1, "min": 60, "h": 3600, "day": 86400}
"""Seconds per time unit a rate may be written per (``2000/min``)."""
_RATE_ALIASES = {"s": "s", "sec": "s", "second": "s", "min": "min", "minute": "min",
                 "h": "h", "hour": "h", "day": "day", "d": "day"}


def rate_unit(text: str) -> str | None:
    """``s``, ``min``, ``h`` or ``day`` from how a rate's unit is written (``/s``, ``minute``,
    ``requests/day``, ``days``...); None when it names none of them."""
    raw = text.strip().lower()
    for prefix in ("requests", "request", "reqs", "req"):
        if raw.startswith(prefix):
            raw = raw[len(prefix):]
            break
    raw = raw.strip().lstrip("/").strip()
    if raw != "s" and raw.endswith("s"):  # minutes, days, secs
        raw = raw[:-1]
    return _RATE_ALIASES.get(raw)


def _per_second(field: str, text: str) -> float | str:
    """``"2000/min"`` → 33.33… (per second); the text unchanged when its number is not one, so
    the number check reports it."""
    number, _, unit_text = text.strip().rpartition("/")
    unit = rate_unit(unit_text)
    if unit is None:
        raise ValidationError(field, "a rate per second, or per "
                              + ", ".join(f"/{u}" for u in RATE_SECONDS), value=text)
    value = _number(number, integer=False)
    return value / RATE_SECONDS[unit] if value is not None else text


# ---- one value -----------------------------------------------------------------------------

def _fmt(x: float | None) -> str | None:
    if x is None:
        return None
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def allowed(column: ColumnRule) -> str:
    """The allowed values of ``column`` in words, for refusals and help text."""
    if column.kind == "choice":
        return f"one of {', '.join(column.choices)}"
    if column.kind == "bool":
        return "true or false"
    if column.kind == "text":
        return column.help.split(":", 1)[0] if ":" in column.help \
            else f"1 to {TEXT_MAX_CHARS} characters"
    return _allowed_number(column)


def _allowed_number(column: ColumnRule) -> str:
    """An int or float column's range in words: ``an integer from 1 to 1,024``."""
    noun = "an integer" if column.kind == "int" else "a number"
    low = _fmt(column.minimum)
    high = _fmt(column.maximum)
    if column.above_minimum:
        return f"{noun} above {low}" + (f" and at most {high}" if high else "")
    if low is not None and high is not None:
        return f"{noun} from {low} to {high}"
    if low is not None:
        return f"{noun} of at least {low}"
    return noun


def refusal(column: ColumnRule, value: Any = None, *, show: bool = True) -> str:
    """What every entry point says of a bad value of ``column``, without where it was:
    ``must be an integer from 1 to 1024 (got '0')`` (``show`` False: without the value, for
    a workbook cell, whose reference the message gives)."""
    return refusal_text(allowed(column), value, show=show)


def refusal_text(allowed_text: str, value: Any = None, *, show: bool = True) -> str:
    """:func:`refusal` of an ``allowed`` text (a :class:`ValidationError`'s): the words
    :class:`ValidationError` puts after its field."""
    return phrase(allowed_text) + (f" (got {echo(_shown(value))})" if show else "")


def _shown(value: Any) -> Any:
    """A value as the user wrote it (a numpy scalar as its Python value)."""
    return value.item() if hasattr(value, "item") and hasattr(value, "dtype") else value


def _number(raw: Any, *, integer: bool) -> int | float | None:
    """``raw`` read by :func:`planner.core.units.parse_number`; ``None`` if it is not a number (or
    not a whole one, for an integer column)."""
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
        raw = str(raw)  # numpy scalars and the like: read their text
    value = parse_number(raw)
    if value is None:
        return None
    if integer:
        if not value.is_integer():
            return None
        return int(raw) if isinstance(raw, int) else int(value)
    return value


def outside(column: ColumnRule, x: Any) -> Any:
    """Whether ``x`` (a number, or an array of them: the mask) is outside ``column``'s bounds:
    below ``minimum`` (at it too, when ``above_minimum``) or above ``maximum``."""
    bad: Any = False
    if column.minimum is not None:
        bad = (x <= column.minimum) if column.above_minimum else (x < column.minimum)
    if column.maximum is not None:
        bad = bad | (x > column.maximum)
    return bad


def parse_value(column: ColumnRule, raw: Any) -> Any:
    """The validated value of ``raw`` (a string or a number) for ``column``: a choice in lower
    case, a stripped text, a bool, an int or a float; :class:`ValidationError` naming the
    column and :func:`allowed` otherwise (the rule of each kind: :data:`_PARSERS`)."""
    return _PARSERS.get(column.kind, _parse_number)(column, raw)


def _parse_choice(column: ColumnRule, raw: Any) -> str:
    """A choice: one of the column's choices, case-insensitively, in lower case."""
    value = str(raw).strip().lower()
    if value not in column.choices:
        raise ValidationError(column.name, allowed(column), value=raw)
    return value


def _parse_flag(column: ColumnRule, raw: Any) -> bool:
    """A flag: a bool, or one of :data:`TRUE_TEXTS` / :data:`FALSE_TEXTS`."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in TRUE_TEXTS:
        return True
    if text in FALSE_TEXTS:
        return False
    raise ValidationError(column.name, allowed(column), value=raw)


def _parse_text(column: ColumnRule, raw: Any) -> str:
    """A free text, cleaned (:func:`_clean_text`); blank only where the default is blank."""
    if not isinstance(raw, bool) and not str(raw).strip() and column.default == "":
        return ""  # a text column whose default is blank may stay blank
    cleaned = None if isinstance(raw, bool) else _clean_text(column, str(raw))
    if cleaned is None:
        raise ValidationError(column.name, allowed(column), value=raw)
    return cleaned


def _parse_number(column: ColumnRule, raw: Any) -> Any:
    """An int or float column's number within its bounds (:func:`outside`); a rate may be
    written ``N/unit`` (:func:`rate_unit`)."""
    number: Any = raw
    if column.unit == "requests/s" and isinstance(raw, str) and "/" in raw:
        number = _per_second(column.name, raw)
    number = _number(number, integer=column.kind == "int")
    if number is None or outside(column, number):
        raise ValidationError(column.name, allowed(column), value=raw)  # as it was written
    return number


_PARSERS: dict[str, Callable[[ColumnRule, Any], Any]] = {
    "choice": _parse_choice, "bool": _parse_flag, "text": _parse_text}
"""The rule of each non-numeric kind; ``int`` and ``float`` are :func:`_parse_number`."""


def parse_cell(column: ColumnRule, raw: Any) -> Any:
    """:func:`parse_value` as a formula cell holds it: the parsed text, or a float (1.0 or 0.0
    for a truth value); no numpy. What :func:`check_array` gives for one value."""
    value = parse_value(column, raw)
    if column.kind == "bool":
        return 1.0 if value else 0.0
    if column.kind in ("int", "float"):
        return float(value)
    return value


def _read_number(column: ColumnRule, raw: Any) -> float | None:
    """A table cell's number as :func:`parse_value` reads it (a rate ``N/unit`` included),
    before the bounds; None when it is not one."""
    if column.unit == "requests/s" and isinstance(raw, str) and "/" in raw:
        try:
            raw = _per_second(column.name, raw)
        except ValidationError:
            return None
    return parse_number(raw if isinstance(raw, (str, int, float)) else str(raw))


# ---- a column of a table: the first bad value --------------------------------------------

class RowError(ValidationError):
    """A bad value in one row of a table: names the column, the row and the allowed range."""

    def __init__(self, column: str, allowed: str, row: Any, value: Any) -> None:
        self.row = row
        super().__init__(column, allowed, value=value)
        if row is not None:  # a one-scenario table has no row to name
            self.args = (f"{column} (row {row}): {self.args[0].split(': ', 1)[1]}",)


def row_label(labels: RowLabels | None, index: int) -> Any:
    """How a refusal names row ``index``: its label, else its position."""
    return labels[index] if labels is not None else index


def _each_distinct(column: ColumnRule, values: Any, n: int, labels: RowLabels | None,
                   parse: Callable[[Any], Any]) -> tuple[np.ndarray, list[Any]]:
    """(codes per row, ``parse`` of each distinct value); the first value refused raises
    :class:`RowError` at its first row."""
    codes, uniques = factorize(values, n)
    parsed = []
    for position, value in enumerate(uniques):
        try:
            parsed.append(parse(value))
        except ValidationError:
            bad = int(np.argmax(codes == position))
            raise RowError(column.name, allowed(column), row_label(labels, bad),
                           value) from None
    return codes, parsed


def _text_cell(column: ColumnRule, value: Any) -> str:
    """A table's free-text cell: a cell that is not text (a missing NaN) counts as empty; a
    text column whose default is blank may stay blank."""
    if isinstance(value, str) and not value.strip() and column.default == "":
        return ""
    cleaned = _clean_text(column, value) if isinstance(value, str) else None
    if cleaned is None:
        raise ValidationError(column.name, allowed(column), value=value)
    return cleaned


def check_array(column: ColumnRule, values: Any, n: int, labels: RowLabels | None) -> Any:
    """One input column of an ``n``-row table, validated: one value for every row
    (:func:`parse_cell`), or per row: a :class:`~planner.formulas.ops.Coded` column of a
    choice, an object array of texts, a float64 array of numbers (1.0/0.0 for flags).
    Raises :class:`RowError` for the first bad value."""
    if np.ndim(values) == 0 or isinstance(values, str):
        return parse_cell(column, values)  # one value for every row
    if column.kind == "choice":
        codes, cleaned = _each_distinct(column, values, n, labels,
                                        lambda v: parse_value(column, v))
        return Coded(codes, tuple(cleaned))
    if column.kind == "text":
        codes, cleaned = _each_distinct(column, values, n, labels,
                                        lambda v: _text_cell(column, v))
        return np.asarray(cleaned, dtype=object)[codes]
    if column.kind == "bool":
        if isinstance(values, np.ndarray) and values.dtype == bool:  # already booleans
            return values.astype(np.float64)
        codes, flags = _each_distinct(column, values, n, labels,
                                      lambda v: parse_cell(column, v))
        return np.asarray(flags)[codes]
    return _check_numbers(column, values, n, labels)


def _check_numbers(column: ColumnRule, values: Any, n: int, labels: RowLabels | None
                   ) -> np.ndarray:
    raw = np.asarray(values)
    if raw.dtype.kind in "biuf":
        arr = raw.astype(np.float64)
        bad = ~np.isfinite(arr) | (raw.dtype.kind == "b")
    else:
        codes, uniques = factorize(raw, n)  # each distinct text read once, by the one rule
        parsed = [_read_number(column, v) for v in uniques]
        arr = np.asarray([np.nan if v is None else v for v in parsed], dtype=np.float64)[codes]
        bad = ~np.isfinite(arr)
    if column.kind == "int":
        bad |= np.isfinite(arr) & (arr != np.floor(arr))
    bad |= outside(column, arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise RowError(column.name, allowed(column), row_label(labels, i), _shown(raw[i]))
    return arr


# ---- a column of a file a person wrote: every bad cell -------------------------------------

def empty_cells(s: pd.Series) -> np.ndarray:
    """Where a cell is empty: missing, NaN, or text that is only spaces."""
    import pandas as pd

    if s.dtype == object or pd.api.types.is_string_dtype(s):  # each distinct value once
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        blank = np.array([isinstance(u, str) and not u.strip() for u in uniques] + [True],
                         dtype=bool)
        return blank[codes]  # code -1 (missing) takes the last entry
    return s.isna().to_numpy()


def _by_distinct(column: ColumnRule, s: pd.Series
                 ) -> tuple[np.ndarray, np.ndarray, list[bool]]:
    """:func:`parse_value` once per distinct value of ``s``: (codes per row, parsed values,
    whether each distinct value was refused)."""
    import pandas as pd

    codes, uniques = pd.factorize(s, use_na_sentinel=False)
    parsed: list[Any] = []
    refused: list[bool] = []
    for value in uniques:
        try:
            parsed.append(parse_value(column, value))
            refused.append(False)
        except ValidationError:
            parsed.append(None)
            refused.append(True)
    return codes, np.asarray([*parsed, None], dtype=object)[:-1], refused


def check_series(column: ColumnRule, s: pd.Series, problems: Problems, show_value: bool = True,
                 *, empty: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(parsed values, bad mask) of one input column of a file; every bad cell reported to
    ``problems`` as :func:`refusal` says it (``show_value``: with the value found).

    ``empty`` given (where a cell is empty: :func:`empty_cells`): an empty cell means "not
    given" and holds the column's default, not a problem (the caller puts a kind's own
    default there). Without it, an empty cell is refused (a workbook row's inputs are all
    written by the export, so an emptied one is a mistake)."""
    import pandas as pd

    def report(mask: np.ndarray) -> None:
        problems.add_rows(mask, column.name,
                          lambda r: refusal(column, s.iloc[r], show=show_value))

    n = len(s)
    if empty is None and column.kind == "text" and column.default == "":
        empty = empty_cells(s)  # a text column whose default is blank: blank is its value
    if empty is None:
        empty = empty_cells(s)
        problems.add_rows(empty, column.name,
                          lambda _r: f"is empty; {phrase(allowed(column))}")
        bad = empty.copy()
    else:
        bad = np.zeros(n, dtype=bool)
    if column.kind in ("int", "float"):
        return _check_numbers_series(column, s, empty, bad, report)
    if column.kind == "bool" and pd.api.types.is_bool_dtype(s) and not s.isna().any():
        return s.to_numpy(dtype=bool), bad
    codes, parsed, refused = _by_distinct(column, s)
    wrong = ~empty & np.array(refused, dtype=bool)[codes]
    report(wrong)
    bad |= wrong
    fill = column.default
    values = np.asarray([fill if p is None else p for p in parsed] + [fill],
                        dtype=object)[:-1][codes]
    values[empty] = fill
    if column.kind == "bool":
        values = values.astype(bool)
    return values, bad


def _check_numbers_series(column: ColumnRule, s: pd.Series, empty: np.ndarray, bad: np.ndarray,
                          report: Callable[[np.ndarray], None]
                          ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`check_series` of an int or float column: a finite number (whole for an int)
    within the bounds; a bad or empty cell holds the default, so rules across columns never
    divide by zero."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(s):
        report(~empty)
        return np.where(empty, float(column.default), np.nan), bad | ~empty
    values = _series_numbers(column, s, empty)
    wrong = ~empty & ~np.isfinite(values)
    if column.kind == "int":
        wrong |= np.isfinite(values) & (values != np.floor(values))
    wrong |= outside(column, values)
    wrong &= ~empty
    report(wrong)
    bad |= wrong
    if column.kind == "int":
        return np.where(bad | empty, column.default, values).astype(np.int64), bad
    return np.where(bad | empty, float(column.default), values), bad


def _series_numbers(column: ColumnRule, s: pd.Series, empty: np.ndarray) -> np.ndarray:
    """A numeric column's cells as float64 (NaN where not a number): plain numbers at C
    speed, anything else by :func:`parse_value` once per distinct text."""
    import pandas as pd

    if pd.api.types.is_numeric_dtype(s):
        return np.array(s.to_numpy(dtype=np.float64, na_value=np.nan))
    values = np.array(pd.to_numeric(s, errors="coerce"), dtype=np.float64)
    if pd.api.types.infer_dtype(s, skipna=True) not in (
            "string", "integer", "floating", "mixed-integer-float", "empty"):
        flags = s.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
        values[flags] = np.nan  # a flag is not a number
    rest = ~empty & ~np.isfinite(values)
    if rest.any():
        codes, parsed, refused = _by_distinct(column, s[rest])
        got = np.array([np.nan if r else float(p) for p, r in zip(parsed, refused, strict=True)],
                       dtype=np.float64)
        values[np.flatnonzero(rest)] = got[codes]
    return values
