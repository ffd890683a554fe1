"""A small, safe expression language for constraints: ``fits and ttft_s <= 0.5``.

Grammar (no ``eval``, no attribute access, no calls)::

    expr       := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | comparison
    comparison := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/") unary)*
    unary      := "-" unary | atom
    atom       := NUMBER | NAME | STRING | "(" expr ")"

NAME is a column (input, output, model or GPU figure, or ``model``/``gpu`` for names); STRING is
single- or double-quoted and compares with choice columns (``gpu == "h200"``). Numbers accept
``_`` separators and exponents (``2e9``). Evaluation is vectorized over numpy columns.

Every expression has one of three types (:func:`check_types`): a condition (a comparison, a
yes/no column such as ``fits``, and/or/not of conditions), a number, or a text. A constraint
must be a condition: ``5``, ``"x"`` or ``not 5`` would hold for every candidate, and
``gpu < 5`` compares a text with a number, so they are refused with the position of the part at
fault.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.core.errors import PlannerError, close_matches, echo, or_list

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)
  | (?P<str>"[^"]*"|'[^']*')
  | (?P<op><=|>=|==|!=|<|>|\+|-|\*|/|\(|\))
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
""", re.VERBOSE)
KEYWORDS = {"and", "or", "not"}
COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}


EXCERPT_CHARS = 60
"""Characters of a long constraint an error shows, around the position at fault."""


def _excerpt(text: str, position: int) -> tuple[str, int]:
    """The part of ``text`` around ``position`` an error shows (at most
    :data:`EXCERPT_CHARS`, ``…`` where cut; whitespace shown as spaces) and the position in
    it."""
    shown = "".join(" " if ch.isspace() or not ch.isprintable() else ch for ch in text)
    if len(shown) <= EXCERPT_CHARS:
        return shown, position
    start = max(0, min(position - EXCERPT_CHARS // 2, len(shown) - EXCERPT_CHARS))
    piece = shown[start:start + EXCERPT_CHARS]
    prefix = "…" if start else ""
    return prefix + piece + ("…" if start + EXCERPT_CHARS < len(shown) else ""), \
        position - start + len(prefix)


class ExpressionError(PlannerError):
    """A constraint that does not parse, names an unknown column or is not a condition; shows
    where (a long constraint cut to the part around the mistake)."""

    def __init__(self, text: str, position: int, problem: str) -> None:
        self.text = text
        self.position = position
        shown, at = _excerpt(text, position)
        super().__init__(f"{problem}\n  {shown}\n  {' ' * at}^")


@dataclass(frozen=True, slots=True)
class Node:
    """An expression node: ``op`` is num, str, name, neg, not, and, or, or an operator."""

    op: str
    args: tuple[Any, ...]
    position: int = 0


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ExpressionError(text, pos, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind != "ws":
            value = m.group()
            if kind == "name" and value in KEYWORDS:
                kind = "kw"
            out.append((kind, value, pos))
        pos = m.end()
    out.append(("end", "", len(text)))
    return out


MAX_DEPTH = 40
"""Deepest nesting of parentheses, ``not`` and unary minus a constraint may use, and the
deepest expression tree (long chains count): far beyond any real constraint, and far below
Python's recursion limit, so a pathological one gets a message instead of a RecursionError."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    def nest(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(self.text, pos, f"nested more than {MAX_DEPTH} levels deep")

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def accept(self, kind: str, *values: str) -> tuple[str, str, int] | None:
        tok = self.peek()
        if tok[0] == kind and (not values or tok[1] in values):
            return self.take()
        return None

    def parse(self) -> Node:
        node = self.or_()
        kind, value, pos = self.peek()
        if kind != "end":
            raise ExpressionError(self.text, pos, f"unexpected {value!r}")
        return node

    def or_(self) -> Node:
        node = self.and_()
        while tok := self.accept("kw", "or"):
            node = Node("or", (node, self.and_()), tok[2])
        return node

    def and_(self) -> Node:
        node = self.not_()
        while tok := self.accept("kw", "and"):
            node = Node("and", (node, self.not_()), tok[2])
        return node

    def not_(self) -> Node:
        if tok := self.accept("kw", "not"):
            self.nest(tok[2])
            node = Node("not", (self.not_(),), tok[2])
            self.depth -= 1
            return node
        return self.comparison()

    def comparison(self) -> Node:
        node = self.sum()
        if tok := self.accept("op", *COMPARISONS):
            node = Node(tok[1], (node, self.sum()), tok[2])
            if self.peek()[0] == "op" and self.peek()[1] in COMPARISONS:
                raise ExpressionError(self.text, self.peek()[2],
                                      "chained comparison: join them with 'and'")
        return node

    def sum(self) -> Node:
        node = self.product()
        while tok := self.accept("op", "+", "-"):
            node = Node(tok[1], (node, self.product()), tok[2])
        return node

    def product(self) -> Node:
        node = self.unary()
        while tok := self.accept("op", "*", "/"):
            node = Node(tok[1], (node, self.unary()), tok[2])
        return node

    def unary(self) -> Node:
        if tok := self.accept("op", "-"):
            self.nest(tok[2])
            node = Node("neg", (self.unary(),), tok[2])
            self.depth -= 1
            return node
        return self.atom()

    def atom(self) -> Node:
        kind, value, pos = self.take()
        if kind == "num":
            return Node("num", (float(value.replace("_", "")),), pos)
        if kind == "str":
            return Node("str", (value[1:-1],), pos)
        if kind == "name":
            return Node("name", (value,), pos)
        if kind == "op" and value == "(":
            self.nest(pos)
            node = self.or_()
            self.depth -= 1
            if not self.accept("op", ")"):
                raise ExpressionError(self.text, self.peek()[2], "expected ')'")
            return node
        what = "end of expression" if kind == "end" else repr(value)
        raise ExpressionError(self.text, pos, f"expected a number, column or '(', got {what}")


def parse(text: str) -> Node:
    """Parse ``text``; :class:`ExpressionError` shows the position of a mistake."""
    if not text.strip():
        raise ExpressionError(text, 0, "empty expression")
    node = _Parser(text).parse()
    if _depth(node) > MAX_DEPTH * 4:
        raise ExpressionError(text, 0, f"too long: more than {MAX_DEPTH * 4} operations deep")
    return node


def _depth(node: Node) -> int:
    """Height of the tree, without recursion (a long ``a + a + …`` chain is deep)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        current, level = stack.pop()
        deepest = max(deepest, level)
        stack += [(a, level + 1) for a in current.args if isinstance(a, Node)]
    return deepest


def holds(node: Node, values: Mapping[str, Any]) -> Any:
    """Where the constraint is true *and defined*: a row that divides by zero anywhere in it
    (``x / 0``) is never feasible, whatever the comparison around it says."""
    with np.errstate(divide="ignore", invalid="ignore"):
        result = compute(node, values)
    undefined = _divides_by_zero(node, values)
    return np.logical_and(np.asarray(result, dtype=bool) if np.asarray(result).dtype != object
                          else result, np.logical_not(undefined))


def _divides_by_zero(node: Node, values: Mapping[str, Any]) -> Any:
    found: Any = False
    if node.op == "/":
        with np.errstate(divide="ignore", invalid="ignore"):
            found = np.asarray(compute(node.args[1], values), dtype=float) == 0
    for a in node.args:
        if isinstance(a, Node):
            found = np.logical_or(found, _divides_by_zero(a, values))
    return found


def names(node: Node) -> set[str]:
    """Columns an expression reads."""
    if node.op == "name":
        return {node.args[0]}
    return set().union(*(names(a) for a in node.args if isinstance(a, Node)))


def check_names(text: str, node: Node, known: set[str]) -> None:
    """Raise :class:`ExpressionError` at the first unknown column (with the close matches)."""
    def walk(n: Node) -> None:
        if n.op == "name" and n.args[0] not in known:
            close = close_matches(n.args[0], sorted(known))
            hint = f"; did you mean {or_list(close)}?" if close else ""
            raise ExpressionError(text, n.position, f"unknown column {echo(n.args[0])}{hint}")
        for a in n.args:
            if isinstance(a, Node):
                walk(a)
    walk(node)


CONDITION, NUMBER, TEXT = "condition", "number", "text"
"""The types of an expression (:func:`check_types`)."""

_EXAMPLES = 'such as fits, ttft_s <= 0.5 or gpu == "h200"'


def check_types(text: str, node: Node, texts: set[str], conditions: set[str]) -> None:
    """Raise :class:`ExpressionError` unless ``node`` is a condition made of well-typed parts:
    ``texts`` are the columns holding text (``gpu``, dtypes), ``conditions`` the yes/no
    columns (``fits``, ``meets_slo``); every other column is a number. Arithmetic and ``<``
    take numbers, ``==``/``!=`` two of one type, and/or/not conditions."""
    kind = _Types(text, texts, conditions).of(node)
    if kind != CONDITION:
        raise ExpressionError(
            text, node.position, f"a constraint must be a condition, true or false for each "
            f"candidate ({_EXAMPLES}); this is {_what(kind)}, which would hold for every one")


def _what(kind: str) -> str:
    """A type in words: ``a condition``, ``a number``, ``a text``."""
    return {CONDITION: "a condition", NUMBER: "a number", TEXT: "a text"}[kind]


class _Types:
    """The type of each part of a constraint (:func:`check_types`), refusing the first part
    an operator cannot take with its position in ``text``."""

    def __init__(self, text: str, texts: set[str], conditions: set[str]) -> None:
        self.text, self.texts, self.conditions = text, texts, conditions

    def fail(self, n: Node, problem: str) -> ExpressionError:
        """The refusal of part ``n``."""
        return ExpressionError(self.text, n.position, problem)

    def of(self, n: Node) -> str:
        """The type of ``n``: a literal's, a column's, or what its operator gives."""
        op, args = n.op, n.args
        if op == "num":
            return NUMBER
        if op == "str":
            return TEXT
        if op == "name":
            return (TEXT if args[0] in self.texts
                    else CONDITION if args[0] in self.conditions else NUMBER)
        kinds = [self.of(a) for a in args]
        if op in ("not", "and", "or"):
            return self.logical(op, args, kinds)
        if op in ("==", "!="):
            if kinds[0] != kinds[1]:
                raise self.fail(n, f"'{op}' compares {_what(kinds[0])} with "
                                   f"{_what(kinds[1])}; compare numbers with numbers and "
                                   "texts with texts")
            return CONDITION
        return self.numeric(n, kinds)

    def logical(self, op: str, args: tuple[Any, ...], kinds: list[str]) -> str:
        """``not``, ``and``, ``or``: conditions in, a condition out."""
        for a, kind in zip(args, kinds, strict=True):
            if kind != CONDITION:
                raise self.fail(a, f"'{op}' needs conditions on both sides, not {_what(kind)} "
                                   f"({_EXAMPLES})" if op != "not" else
                                f"'not' needs a condition, not {_what(kind)} ({_EXAMPLES})")
        return CONDITION

    def numeric(self, n: Node, kinds: list[str]) -> str:
        """Negation, arithmetic and ordering: numbers in; a number out, or a condition for
        an ordering."""
        op = n.op
        for a, kind in zip(n.args, kinds, strict=True):
            if kind != NUMBER:
                shown = "'-'" if op == "neg" else f"'{op}'"
                hint = ("; only == and != compare texts" if kind == TEXT and op in COMPARISONS
                        else "; combine conditions with and, or, not" if kind == CONDITION
                        else "")
                raise self.fail(a if a.position else n,
                                f"{shown} needs numbers, not {_what(kind)}{hint}")
        return CONDITION if op in COMPARISONS else NUMBER


def compute(node: Node, values: Mapping[str, Any]) -> Any:
    """Evaluate on scalars or numpy columns."""
    op, args = node.op, node.args
    if op == "num" or op == "str":
        return args[0]
    if op == "name":
        return values[args[0]]
    if op == "neg":
        return -np.asarray(compute(args[0], values), dtype=float)
    if op == "not":
        return np.logical_not(compute(args[0], values))
    a, b = (compute(x, values) for x in args)
    if op == "and":
        return np.logical_and(a, b)
    if op == "or":
        return np.logical_or(a, b)
    if op in ("==", "!="):
        equal = np.asarray(a == b) if not (isinstance(a, str) or isinstance(b, str)) \
            else np.char.equal(np.asarray(a, dtype=str), np.asarray(b, dtype=str))
        return equal if op == "==" else np.logical_not(equal)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "+": np.add, "-": np.subtract, "*": np.multiply}.get(op, np.divide)(a, b)
