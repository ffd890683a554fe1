"""The symbolic backend of the operator set: formulas as expression trees.

Calling a formula with :class:`Expr` references instead of numbers records what it computes
(every arithmetic operator, comparison and :mod:`planner.formulas.ops` function) as a tree.
The tree renders as readable infix text (``planner scenario explain``) or as an Excel formula
over cell references (the workbook export), so one definition serves Python, the user and Excel.

Python control flow on a symbolic value (``if x > 0``, ``x and y``, ``int(x)``) raises at once:
a formula that uses it could not be exported, and the test suite renders every formula.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from planner.formulas import ops
from planner.formulas.ops import NumpyOnFirstUse

if TYPE_CHECKING:
    import numpy as np
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none

BINARY = {"+": 4, "-": 4, "*": 5, "/": 5, "**": 7,
          "<": 2, "<=": 2, ">": 2, ">=": 2, "==": 2, "!=": 2}
"""Binary operators and their precedence (higher binds tighter)."""
FUNCTIONS = ("where", "minimum", "maximum", "floor", "ceil", "lookup")


class OperatorNode:
    """A recorded operation: ``op`` and its operands ``args``. Every arithmetic operator and
    comparison builds a node of the caller's class, its other operand passed through the
    class's :meth:`operand`; the operator-set functions arrive through ``__planner_op__``,
    which each recorder defines. Shared by :class:`Expr` (explain and Excel) and the one-row
    compiler's trace (:mod:`planner.compute.rowfn`), which differ only in how they keep
    constants and lookup tables."""

    __slots__ = ("args", "op")
    __hash__ = None  # type: ignore[assignment]  # __eq__ builds a node

    def __init__(self, op: str, args: tuple[Any, ...]) -> None:
        self.op = op
        self.args = args

    @classmethod
    def operand(cls, value: Any) -> Any:
        """``value`` as a node of this class (constants wrapped)."""
        raise NotImplementedError

    def _bin(self, op: str, other: Any, reverse: bool = False) -> Any:
        other = type(self).operand(other)
        return type(self)(op, (other, self) if reverse else (self, other))

    def __add__(self, o: Any) -> Any: return self._bin("+", o)
    def __radd__(self, o: Any) -> Any: return self._bin("+", o, True)
    def __sub__(self, o: Any) -> Any: return self._bin("-", o)
    def __rsub__(self, o: Any) -> Any: return self._bin("-", o, True)
    def __mul__(self, o: Any) -> Any: return self._bin("*", o)
    def __rmul__(self, o: Any) -> Any: return self._bin("*", o, True)
    def __truediv__(self, o: Any) -> Any: return self._bin("/", o)
    def __rtruediv__(self, o: Any) -> Any: return self._bin("/", o, True)
    def __pow__(self, o: Any) -> Any: return self._bin("**", o)
    def __rpow__(self, o: Any) -> Any: return self._bin("**", o, True)
    def __lt__(self, o: Any) -> Any: return self._bin("<", o)
    def __le__(self, o: Any) -> Any: return self._bin("<=", o)
    def __gt__(self, o: Any) -> Any: return self._bin(">", o)
    def __ge__(self, o: Any) -> Any: return self._bin(">=", o)
    def __eq__(self, o: Any) -> Any: return self._bin("==", o)
    def __ne__(self, o: Any) -> Any: return self._bin("!=", o)
    def __neg__(self) -> Any: return type(self)("neg", (self,))
    def __pos__(self) -> Any: return self


class Expr(OperatorNode):
    """A node: ``op`` is ``ref`` (a column), ``num`` (a constant), ``neg``, a binary operator or
    an operator-set function; ``args`` its operands."""

    __slots__ = ()

    # construction ------------------------------------------------------------------------
    @staticmethod
    def ref(name: str) -> Expr:
        """A reference to column ``name``."""
        return Expr("ref", (name,))

    @classmethod
    def operand(cls, value: Any) -> Expr:
        return wrap(value)

    def __planner_op__(self, name: str, *args: Any) -> Expr:
        if name not in FUNCTIONS:
            raise TypeError(f"operator {name!r} is not in the operator set")
        if name == "lookup":  # (key, ((text, number), ...)): the table stays a constant
            key, items = args
            return Expr(name, (wrap(key), tuple(items)))
        return Expr(name, tuple(wrap(a) for a in args))

    def __bool__(self) -> bool:
        raise TypeError("a formula used Python control flow (if/and/or/not) on a value; "
                        "use ops.where instead")

    def __int__(self) -> int:
        raise TypeError("a formula converted a value with int(); use ops.floor instead")

    __float__ = __int__

    def __repr__(self) -> str:
        return f"Expr({infix(self)})"

    # inspection ---------------------------------------------------------------------------
    def refs(self) -> list[str]:
        """Column names this expression reads, in first-use order."""
        seen: dict[str, None] = {}
        stack: list[Any] = [self]
        while stack:
            node = stack.pop(0)
            if isinstance(node, Expr):
                if node.op == "ref":
                    seen.setdefault(node.args[0], None)
                else:
                    stack.extend(node.args)
        return list(seen)


def wrap(value: Any) -> Expr:
    """An :class:`Expr` for ``value`` (numbers become constants)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return Expr("num", (1 if value else 0,))
    if isinstance(value, (int, float)):
        return Expr("num", (value,))
    if isinstance(value, str):
        return Expr("text", (value,))
    raise TypeError(f"cannot use {value!r} in a formula")


def symbolic(formula: Callable[..., Any]) -> Expr:
    """The expression ``formula`` computes, over references to the columns it reads."""
    names = list(inspect.signature(formula).parameters)
    return wrap(formula(*(Expr.ref(n) for n in names)))


def _number(value: float, *, excel: bool) -> str:
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()
                                  and abs(value) < 1e15):
        return str(int(value))
    if not math.isfinite(value):
        raise ValueError("a formula constant is not finite")
    return repr(float(value)).replace("e+", "E+" if excel else "e+")


def infix(expr: Expr, names: Mapping[str, str] | None = None, _parent: int = 0) -> str:
    """Readable text: ``a - b * c``, ``min(a, b)``, ``if(c, a, b)``, ``floor(x)``,
    ``lookup(weight_dtype, {bf16: 16, int4: 4})``."""
    op, args = expr.op, expr.args
    if op == "ref":
        return (names or {}).get(args[0], args[0])
    if op == "num":
        return _number(args[0], excel=False)
    if op == "text":
        return f'"{args[0]}"'
    if op == "lookup":
        table = ", ".join(f"{k}: {_number(v, excel=False)}" for k, v in args[1])
        return f"lookup({infix(args[0], names)}, {{{table}}})"
    if op == "neg":
        return f"-{infix(args[0], names, 6)}"
    if op in BINARY:
        return _infix_binary(op, args, names, _parent)
    label = {"where": "if", "minimum": "min", "maximum": "max"}.get(op, op)
    return f"{label}({', '.join(infix(a, names) for a in args)})"


def _infix_binary(op: str, args: tuple[Any, ...], names: Mapping[str, str] | None,
                  parent: int) -> str:
    """``a op b``, parenthesized where it binds looser than its ``parent`` (a power inside a
    power too, as ``**`` groups to the right)."""
    prec = BINARY[op]
    right_prec = prec + 1 if op in ("-", "/", "**") or prec == 2 else prec
    text = f"{infix(args[0], names, prec)} {op} {infix(args[1], names, right_prec)}"
    return f"({text})" if prec < parent or (prec == parent and op == "**") else text


EXCEL_BINARY = {"+": "+", "-": "-", "*": "*", "/": "/", "**": "^", "<": "<", "<=": "<=",
                ">": ">", ">=": ">=", "==": "=", "!=": "<>"}


def excel(expr: Expr, ref: Callable[[str], str], _parent: int = 0) -> str:
    """An Excel formula body (no leading ``=``), with ``ref(name)`` giving each column's cell.

    Uses only functions Excel and LibreOffice both evaluate: IF, MIN, MAX and INT
    (``floor(x) = INT(x)``, ``ceil(x) = -INT(-x)``); a table lookup is a chain of IFs."""
    op, args = expr.op, expr.args
    if op == "ref":
        return ref(args[0])
    if op == "num":
        return _number(args[0], excel=True)
    if op == "text":
        return '"' + args[0].replace('"', '""') + '"'
    if op == "lookup":
        return _excel_lookup(excel(args[0], ref), args[1])
    if op == "neg":  # Excel's unary minus binds tighter than ^: parenthesize any operator
        return f"(-{excel(args[0], ref, 8)})"
    if op in BINARY:
        prec = BINARY[op]
        right_prec = prec + 1 if op in ("-", "/", "**") or prec == 2 else prec
        text = (f"{excel(args[0], ref, prec)}{EXCEL_BINARY[op]}"
                f"{excel(args[1], ref, right_prec)}")
        # Excel's unary minus binds tighter than ^ and comparisons chain left: parenthesize
        # whenever a child binds no tighter than its parent.
        return f"({text})" if prec <= _parent else text
    call = EXCEL_CALLS.get(op)
    if call is None:
        raise ValueError(f"cannot render operator {op!r}")
    return call.format(",".join(excel(a, ref) for a in args))


EXCEL_CALLS = {"where": "IF({})", "minimum": "MIN({})", "maximum": "MAX({})",
               "floor": "INT({})", "ceil": "(-INT(-({})))"}
"""The Excel text of each function operator, its arguments separated by commas in the
braces (``ceil(x) = -INT(-x)``)."""


def _excel_lookup(key: str, table: Sequence[tuple[str, Any]]) -> str:
    """``IF(k="a",1,IF(k="b",2,3))``: a chain of IFs, the last entry the fallback."""
    *first, (_, last) = table
    text = _number(last, excel=True)
    for k, v in reversed(first):
        quoted = '"' + k.replace('"', '""') + '"'
        text = f"IF({key}={quoted},{_number(v, excel=True)},{text})"
    return text


def compute_tree(expr: Expr, values: Mapping[str, Any]) -> Any:
    """Evaluate a tree on numbers (used to check that rendering preserves meaning)."""
    op, args = expr.op, expr.args
    if op == "ref":
        return values[args[0]]
    if op in ("num", "text"):
        return args[0]
    if op == "lookup":
        return ops.lookup(compute_tree(args[0], values), dict(args[1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = [compute_tree(a, values) for a in args]
    if op == "neg":
        return -vals[0]
    if op in BINARY:
        a, b = vals
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: _divide(a, b), "**": lambda: a ** b, "<": lambda: a < b,
                "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
                "==": lambda: a == b, "!=": lambda: a != b}[op]()
    return getattr(ops, op)(*vals)


def _divide(a: Any, b: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(a, b)
