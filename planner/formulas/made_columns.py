"""Formula columns made by a factory: families that are one formula at every step.

Why this module exists: a column is a function whose parameters name the columns it reads
(:mod:`planner.compute.graph` reads the signature). The iterations of the serving model's fixed
point, the replica search's bisection steps and the disaggregated pools' Newton iterations are
the same formula at every step, each step its own column (so Excel and ``explain`` show it);
they are made here, from a name, a docstring, the columns read and a body, rather than written
out.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from planner.formulas.ops import Repeats, Value


def formula_column(name: str, doc: str, params: tuple[str, ...], body: Callable[..., Value],
                   repeats: Repeats | None = None) -> Callable[..., Value]:
    """A formula column ``name`` reading ``params`` in order and computing ``body`` of them,
    with its evaluation shortcut ``repeats`` (:class:`~planner.formulas.ops.Repeats`) if
    any."""

    def column(*args: Value) -> Value:
        return body(*args)

    column.__name__ = column.__qualname__ = name
    column.__doc__ = doc
    column.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Value")
         for p in params], return_annotation="Value")
    if repeats is not None:
        column.__planner_repeats__ = repeats  # type: ignore[attr-defined]
    return column


def settled(previous: str, before: str) -> Repeats:
    """The shortcut of an iteration ``x_k = F(x_{k-1})`` whose other arguments are the same
    at every step: where ``x_{k-1}`` (``previous``) equals ``x_{k-2}`` (``before``) in every bit,
    ``x_k = F(x_{k-1}) = F(x_{k-2}) = x_{k-1}``: the iteration has settled there and every
    later step repeats it (:class:`~planner.formulas.ops.Repeats`)."""
    return Repeats(previous, ((previous, before),))


def at_same_point(previous: str, point: str, point_before: str) -> Repeats:
    """The shortcut of a column that evaluates one formula at an iterate (``point``) where the
    column ``previous`` evaluates it at the iterate before (``point_before``): equal iterates,
    equal values (:class:`~planner.formulas.ops.Repeats`)."""
    return Repeats(previous, ((point, point_before),))
