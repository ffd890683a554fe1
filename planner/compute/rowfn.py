"""One scenario in microseconds: the formula graph compiled to one straight-line Python function.

Formulas are data (docs/design.md): called with tracing values instead of numbers, each one
records what it computes through the operator set of :mod:`planner.formulas.ops`. From those
records :func:`compile_row` writes, once per graph, the source of a single Python function over
floats: one local variable per column, formulas in dependency order, ``where`` as a conditional
expression (only the chosen branch is computed), ``minimum``/``maximum``/``floor``/``ceil`` as
inline expressions and table lookups as dict indexing; a computation several formulas repeat
(the serving model's helpers) is computed once where it is needed unconditionally. A one-row
evaluation then costs no per-formula call, no dict of columns and no numpy, where
:meth:`FormulaGraph.compute` spends most of its time on exactly those.

Every figure is the one the vectorized numpy path computes for the same row
(``tests/compute/test_rowfn.py`` checks every column bit for bit over the demo fleet and a few
hundred random rows). That holds because the generated code performs the same IEEE-754 double
operations as the operators' Python scalar path, whose results and types match numpy's
(``tests/compute/test_thin_row.py``), and:

* ``x / y`` with ``y == 0`` gives numpy's infinity or NaN instead of raising;
* ``x ** 0.5`` (a constant exponent) is ``math.sqrt``, the correctly rounded square root numpy
  takes for that exponent; any other power goes through numpy (its SIMD ``pow`` differs from
  the C library's by an ulp for about one value in twenty), only where it is needed. numpy
  itself takes the SIMD loop only where base and exponent are both per-row arrays, so a row
  in a table where they are gives power-derived columns a few ulps (relative 1e-12 at most
  in the tests) from the same row evaluated alone; the one-row path gives the latter;
* value types follow numpy's promotion for Python scalars (NEP 50) as
  :func:`planner.formulas.ops.where` does: a column's type is inferred when the function is
  written; where it cannot be, the operator itself is called.

A formula that cannot be traced is called as it is, with the columns it reads.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from planner.compute.graph import FormulaGraph
from planner.compute.symbolic import OperatorNode
from planner.formulas import ops
from planner.formulas.ops import Repeats

FLOAT, INT, BOOL, TEXT = "f", "i", "b", "s"
"""Inferred value types: Python float, int, bool and str."""

_TYPES = {float: FLOAT, int: INT, bool: BOOL, str: TEXT}
_NUMERIC = (FLOAT, INT, BOOL)
_ARITHMETIC = ("+", "-", "*", "/")
_COMPARISON = ("<", "<=", ">", ">=", "==", "!=")
_FUNCTIONS = ("where", "minimum", "maximum", "floor", "ceil", "lookup")


class TraceError(TypeError):
    """A formula did something the one-row compiler cannot record (it is then called)."""


class _Trace(OperatorNode):
    """A value in a traced formula: ``op`` is ``col`` (a column), ``const``, ``neg``, a binary
    operator or an operator-set function; ``args`` its operands."""

    __slots__ = ()

    @classmethod
    def operand(cls, value: Any) -> _Trace:
        return _wrap(value)

    def __planner_op__(self, name: str, *args: Any) -> _Trace:
        if name not in _FUNCTIONS:
            raise TraceError(f"operator {name!r} is not in the operator set")
        if name == "lookup":
            key, items = args
            return _Trace(name, (_wrap(key), dict(items)))
        return _Trace(name, tuple(_wrap(a) for a in args))

    def __bool__(self) -> bool:
        raise TraceError("Python control flow on a traced value")

    def __int__(self) -> int:
        raise TraceError("int() of a traced value")

    __float__ = __int__
    __index__ = __int__


def _wrap(value: Any) -> _Trace:
    if isinstance(value, _Trace):
        return value
    if type(value) in _TYPES:
        return _Trace("const", (value,))
    raise TraceError(f"cannot record {value!r}")


def _promote(a: str | None, b: str | None) -> str | None:
    """The type ``ops.where``/``minimum``/``maximum`` give two Python scalars of types ``a``
    and ``b`` (float if either is, else int if either is, else bool); None if unknown."""
    if a not in _NUMERIC or b not in _NUMERIC:
        return TEXT if a == b == TEXT else None
    if FLOAT in (a, b):
        return FLOAT
    return INT if INT in (a, b) else BOOL


class _Writer:
    """Writes the source of the row function, formula by formula."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, tuple[str, str | None]] = {}
        """Column → (local variable, inferred type)."""
        self.constants: dict[str, Any] = {}
        self.temps = 0
        self.counts: dict[Any, int] = {}
        """Structural key → how many times the formulas compute it (:meth:`count_all`)."""
        self.common: dict[Any, tuple[str, str | None]] = {}
        """Structural key → the variable that holds it, computed by an earlier statement."""
        self.lazy = 0
        """How many ``where`` branches deep the expression being written is."""
        self.keys: dict[int, Any] = {}
        self.guards: dict[tuple[tuple[str, str], ...], str] = {}
        """:attr:`Repeats.when` → the local that says whether its pairs hold the same bits."""

    def key(self, node: _Trace) -> Any:
        """The structural key of ``node``: equal for equal computations (constants by type
        and exact value)."""
        found = self.keys.get(id(node))
        if found is not None:
            return found
        if node.op == "col":
            key: Any = ("col", node.args[0])
        elif node.op == "const":
            key = ("const", type(node.args[0]).__name__, repr(node.args[0]))
        elif node.op == "lookup":
            key = ("lookup", self.key(node.args[0]), tuple(node.args[1].items()))
        else:
            key = (node.op, *(self.key(a) for a in node.args))
        self.keys[id(node)] = key
        return key

    def count_all(self, results: list[Any]) -> None:
        """Count the computations of every formula's result tree (each node once)."""
        for result in results:
            self.keys = {}
            seen: set[int] = set()
            stack = [_wrap(result)]
            while stack:
                node = stack.pop()
                if id(node) in seen or node.op in ("col", "const"):
                    continue
                seen.add(id(node))
                k = self.key(node)
                self.counts[k] = self.counts.get(k, 0) + 1
                stack.extend(a for a in node.args if isinstance(a, _Trace))

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def constant(self, value: Any) -> str:
        name = f"_k{len(self.constants)}"
        self.constants[name] = value
        return name

    def column(self, name: str, kind: str | None) -> str:
        local = f"v{len(self.names)}"
        self.names[name] = (local, kind)
        return local

    # expressions ------------------------------------------------------------------------
    def formula(self, local: str, result: Any) -> str | None:
        """Write ``local = <result>``; return its inferred type."""
        node = _wrap(result)
        self.temps = 0  # a formula's temporaries are dead after it: their names are reused
        self.keys = {}
        uses: dict[int, int] = {}
        self._count(node, uses)
        self.shared = {k for k, n in uses.items() if n > 1}
        self.hoisted: dict[int, tuple[str, str | None]] = {}
        text, kind = self.expr(node)
        self.lines.append(f"    {local} = {text}")
        return kind

    def repeating(self, local: str, result: Any, rule: Repeats) -> str | None:
        """Write ``local = <result>`` for a formula with a :class:`Repeats` shortcut: where
        each pair of its columns holds the same bits, ``local`` is the earlier column (as in
        the vectorized path), else the formula is computed. Its statements are then written
        inside a branch, so none of them is reused by a later formula. The shortcut is left
        out where the earlier column's type is not the formula's, or a pair's two types differ
        (the values would be equal, not the same Python values)."""
        start = len(self.lines)
        self.lazy += 1
        try:
            kind = self.formula(local, result)
        finally:
            self.lazy -= 1
        earlier, earlier_kind = self.names[rule.column]
        pairs = [(self.names[a], self.names[b]) for a, b in rule.when]
        if kind is None or kind != earlier_kind or any(
                ka not in _NUMERIC or ka != kb for (_, ka), (_, kb) in pairs):
            return kind
        flag = self.guards.get(rule.when)
        head = []
        if flag is None:  # once per set of pairs, where the first formula that reads it is
            flag = self.guards[rule.when] = f"_r{len(self.guards)}"
            same = " and ".join(
                f"({a} == {b} and ({a} != 0 or _copysign(1.0, {a}) == _copysign(1.0, {b})))"
                for (a, _), (b, _) in pairs)
            head.append(f"    {flag} = {same}")
        body = ["    " + line for line in self.lines[start:]]
        self.lines[start:] = [*head, f"    if {flag}:", f"        {local} = {earlier}",
                              "    else:", *body]
        return kind

    def _count(self, node: _Trace, uses: dict[int, int]) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if n.op in ("col", "const"):
                continue
            uses[id(n)] = uses.get(id(n), 0) + 1
            if uses[id(n)] == 1:
                stack.extend(a for a in n.args if isinstance(a, _Trace))

    def expr(self, node: _Trace) -> tuple[str, str | None]:
        """Source text and type of ``node``; a node used more than once in the formula is
        computed once, before it (the operators compute every argument anyway)."""
        if node.op == "col":
            return self.names[node.args[0]]
        if node.op == "const":
            value = node.args[0]
            kind: str | None = _TYPES[type(value)]
            if kind == FLOAT and not math.isfinite(value):
                return self.constant(value), kind
            return f"({value!r})", kind
        key = id(node)
        if key in self.hoisted:
            return self.hoisted[key]
        structural = self.key(node)
        if structural in self.common:  # computed before, whatever the branch: reuse it
            return self.common[structural]
        text, kind = self._expr(node)
        if self.lazy == 0 and self.counts.get(structural, 0) > 1:
            # computed again elsewhere: once, here, where it is computed in any case
            local = f"_c{len(self.common)}"
            self.lines.append(f"    {local} = {text}")
            self.common[structural] = self.hoisted[key] = (local, kind)
            return local, kind
        if key in self.shared:
            local = self.temp()
            self.lines.append(f"    {local} = {text}")
            self.hoisted[key] = (local, kind)
            return local, kind
        return text, kind

    def _expr(self, node: _Trace) -> tuple[str, str | None]:
        """Source text and type of an operator node, by the writer of its operator."""
        op = node.op
        writer = _WRITERS.get(op)
        if writer is not None:
            return writer(self, node)
        if op in _COMPARISON:
            (a, _), (b, _) = self.expr(node.args[0]), self.expr(node.args[1])
            return f"({a} {op} {b})", BOOL
        if op in _ARITHMETIC:
            (a, ka), (b, kb) = self.expr(node.args[0]), self.expr(node.args[1])
            kind = _promote(ka, kb)
            return f"({a} {op} {b})", (INT if kind == BOOL else kind)
        raise TraceError(f"cannot write operator {op!r}")

    def _neg(self, node: _Trace) -> tuple[str, str | None]:
        """``-x``: a negated flag is an integer, as in numpy."""
        text, kind = self.expr(node.args[0])
        return f"(-{text})", (INT if kind == BOOL else kind)

    def _lookup(self, node: _Trace) -> tuple[str, str | None]:
        """``table[key]`` from a constant dict; its type when every value has the same one."""
        key, _ = self.expr(node.args[0])
        table = node.args[1]
        kinds = {_TYPES.get(type(v)) for v in table.values()}
        return f"{self.constant(table)}[{key}]", (kinds.pop() if len(kinds) == 1 else None)

    def _divide(self, node: _Trace) -> tuple[str, str | None]:
        """``a / b`` with numpy's result for a zero denominator (:func:`_zero_div`), each
        operand computed once, numerator first."""
        (a, _), (b, _) = self.expr(node.args[0]), self.expr(node.args[1])
        den = node.args[1]
        if den.op == "const" and den.args[0] != 0:
            return f"({a} / {b})", FLOAT
        if _atom(a) and _atom(b):
            return f"({a} / {b} if {b} else _zero_div({a}, {b}))", FLOAT
        t = b if _atom(b) else self.temp()
        bind = b if t == b else f"({t} := {b})"
        if _atom(a):
            return f"({a} / {t} if {bind} else _zero_div({a}, {t}))", FLOAT
        n = self.temp()
        # numerator, then denominator (Python's order); each written once
        return (f"({n} / {t} if ({n} := {a}) is {n} and {bind} "
                f"else _zero_div({n}, {t}))"), FLOAT

    def _power(self, node: _Trace) -> tuple[str, str | None]:
        """``a ** b`` as numpy computes it; a square root by ``math.sqrt`` where defined."""
        (a, _), (b, _) = self.expr(node.args[0]), self.expr(node.args[1])
        exponent = node.args[1]
        if exponent.op == "const" and exponent.args[0] == 0.5:
            t = self.temp()
            return f"(_sqrt({t}) if ({t} := {a}) >= 0 else _power({t}, 0.5))", FLOAT
        return f"_power({a}, {b})", FLOAT

    def _round(self, node: _Trace) -> tuple[str, str | None]:
        """``floor`` / ``ceil`` as a float, an infinity or NaN passed through (numpy's)."""
        op = node.op
        (x, _), t = self.expr(node.args[0]), self.temp()
        return (f"(float(_{op}({t})) if ({t} := {x}) - {t} == 0 else float({t}))", FLOAT)

    def _where(self, node: _Trace) -> tuple[str, str | None]:
        """``where(c, a, b)`` as a conditional expression when both branches have one type
        (each branch computed only when taken), else :func:`_where`."""
        c, _ = self.expr(node.args[0])
        self.lazy += 1
        (a, ka), (b, kb) = self.expr(node.args[1]), self.expr(node.args[2])
        self.lazy -= 1
        kind = _promote(ka, kb)
        if kind is None:
            return f"_where({c}, {a}, {b})", None
        return f"({_cast(a, ka, kind)} if {c} else {_cast(b, kb, kind)})", kind

    def _extremum(self, node: _Trace) -> tuple[str, str | None]:
        """``minimum`` / ``maximum`` with numpy's NaN propagation, each operand computed
        once."""
        op = node.op
        (a, ka), (b, kb) = self.expr(node.args[0]), self.expr(node.args[1])
        kind = _promote(ka, kb)
        if kind is None or kind == TEXT:
            return f"_{op}({a}, {b})", None
        ta = a if _atom(a) else self.temp()
        tb = b if _atom(b) else self.temp()
        bind_a = a if ta == a else f"({ta} := {a})"
        bind_b = b if tb == b else f"({tb} := {b})"
        less = "<" if op == "minimum" else ">"
        nan = f" or {ta} != {ta}" if kind == FLOAT and not _constant(a) else ""
        return (f"({_cast(ta, ka, kind)} if {bind_a} {less} {bind_b}{nan} "
                f"else {_cast(tb, kb, kind)})"), kind


_WRITERS: dict[str, Callable[[_Writer, _Trace], tuple[str, str | None]]] = {
    "neg": _Writer._neg, "lookup": _Writer._lookup, "/": _Writer._divide,
    "**": _Writer._power, "floor": _Writer._round, "ceil": _Writer._round,
    "where": _Writer._where, "minimum": _Writer._extremum, "maximum": _Writer._extremum,
}
"""The writer of each operator that is not a plain comparison or arithmetic."""


_ATOM = re.compile(r"[A-Za-z_]\w*|\((?:-?[\w.+-]+|'[^']*')\)")
_CONSTANT = re.compile(r"\((?:-?[\d.][\w.+-]*|'[^']*')\)")


def _atom(text: str) -> bool:
    """A local variable or a constant: reading it twice costs nothing and computes nothing."""
    return _ATOM.fullmatch(text) is not None


def _constant(text: str) -> bool:
    """A written finite number or text (never NaN: non-finite floats are named constants)."""
    return _CONSTANT.fullmatch(text) is not None


def _cast(text: str, kind: str | None, target: str) -> str:
    """``text`` (of type ``kind``: an int or a bool) as ``target``: ``x + 0.0`` is ``float(x)``
    exactly (the int is rounded to the nearest double either way), without a call."""
    if kind == target:
        return text
    if text.startswith("(") and text.endswith(")") and text[1:-1].lstrip("-").isdigit():
        value = int(text[1:-1])  # a constant: converted once, here
        return f"({float(value)!r})" if target == FLOAT else text
    return f"({text} + 0.0)" if target == FLOAT else f"int({text})"


def _zero_div(num: Any, den: Any) -> float:
    """``num / den`` for a zero ``den`` as numpy gives it: a signed infinity, or NaN for 0/0 and
    NaN/0."""
    if num != num or num == 0:
        return math.nan
    return math.copysign(math.inf, num) * math.copysign(1.0, den)


def _power(base: Any, exponent: Any) -> float:
    """``ops.power`` (numpy's ``pow``), exactly: :func:`~planner.formulas.ops.exact_power`
    where it needs no numpy; otherwise numpy, without its floating-point-error context where
    Python's own ``pow`` shows the result is a finite non-zero float (numpy then raises no
    warning)."""
    exact = ops.exact_power(base, exponent)
    if exact is not None:
        return exact
    try:
        plain = base ** exponent
    except (OverflowError, ZeroDivisionError):
        return ops.power(base, exponent)
    if type(plain) is not float or plain - plain != 0 or plain == 0:
        return ops.power(base, exponent)
    return (_asarray(base, dtype=float) ** exponent).item()


def _asarray(value: Any, dtype: Any) -> Any:
    import numpy as np  # ops has imported it already: a dictionary lookup

    return np.asarray(value, dtype=dtype)


RowFunction = Callable[[Mapping[str, Any]], tuple[dict[str, Any], dict[str, Any]]]


def compile_row(graph: FormulaGraph, text_inputs: frozenset[str]) -> RowFunction:
    """A function from one scenario's input columns (texts for ``text_inputs``, Python floats
    for every other input the graph reads) to two new dicts: the derived columns and the
    output columns (in the graph's order), with the values :meth:`FormulaGraph.compute` gives
    them for one row."""
    source, namespace = row_source(graph, text_inputs)
    code = compile(source, f"<planner row function: {len(graph.order)} formulas>", "exec")
    exec(code, namespace)  # our own generated source, from the formula list
    return namespace["row"]


def row_source(graph: FormulaGraph, text_inputs: frozenset[str]
               ) -> tuple[str, dict[str, Any]]:
    """The source of the row function of :func:`compile_row` and the names it uses."""
    w = _Writer()
    reads = sorted(graph.required_inputs())
    head = ["def row(c):"]
    for name in reads:
        local = w.column(name, TEXT if name in text_inputs else FLOAT)
        head.append(f"    {local} = c[{name!r}]")
    formulas: dict[str, Any] = {}
    traced: dict[str, Any] = {}
    for name in graph.order:
        with contextlib.suppress(TraceError, TypeError, ValueError, KeyError):  # called as is
            traced[name] = graph.formula(name)(*(_Trace("col", (d,)) for d in graph.deps[name]))
    w.count_all(list(traced.values()))
    for name in graph.order:
        f = graph.formula(name)
        deps = graph.deps[name]
        try:
            if name not in traced:
                raise TraceError(name)
            rule = graph.repeats.get(name)
            if rule is None:
                kind = w.formula(w.column(name, None), traced[name])
            else:
                kind = w.repeating(w.column(name, None), traced[name], rule)
        except (TraceError, TypeError, ValueError, KeyError):
            local = w.column(name, None)
            call = f"_f{len(formulas)}"
            formulas[call] = f
            w.lines.append(f"    {local} = {call}({', '.join(w.names[d][0] for d in deps)})")
            kind = None
        w.names[name] = (w.names[name][0], kind)
    derived = ", ".join(f"{name!r}: {w.names[name][0]}" for name in graph.derived)
    outputs = ", ".join(f"{name!r}: {w.names[name][0]}" for name in graph.outputs)
    source = "\n".join([*head, *w.lines, f"    return {{{derived}}}, {{{outputs}}}", ""])
    namespace: dict[str, Any] = {
        **w.constants, **formulas, "_zero_div": _zero_div, "_power": _power,
        "_sqrt": math.sqrt, "_copysign": math.copysign, "_floor": math.floor,
        "_ceil": math.ceil, "_where": ops.where, "_minimum": ops.minimum,
        "_maximum": ops.maximum}
    return source, namespace
