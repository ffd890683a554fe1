"""The operator set runs the same formula on scalars, numpy arrays and symbolic values."""

from __future__ import annotations

from typing import Any

import numpy as np

from planner.formulas import ops
from planner.formulas.memory import max_concurrent_sequences


class Sym:
    """A minimal symbolic value: records the expression it stands for."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _bin(self, op: str, other: Any, reverse: bool = False) -> Sym:
        a, b = (str(other), self.text) if reverse else (self.text, str(other))
        return Sym(f"({a}{op}{b})")

    def __add__(self, o: Any) -> Sym: return self._bin("+", o)
    def __radd__(self, o: Any) -> Sym: return self._bin("+", o, True)
    def __sub__(self, o: Any) -> Sym: return self._bin("-", o)
    def __rsub__(self, o: Any) -> Sym: return self._bin("-", o, True)
    def __mul__(self, o: Any) -> Sym: return self._bin("*", o)
    def __rmul__(self, o: Any) -> Sym: return self._bin("*", o, True)
    def __truediv__(self, o: Any) -> Sym: return self._bin("/", o)
    def __rtruediv__(self, o: Any) -> Sym: return self._bin("/", o, True)
    def __eq__(self, o: Any) -> Sym: return self._bin("=", o)  # type: ignore[override]
    def __str__(self) -> str: return self.text

    def __planner_op__(self, name: str, *args: Any) -> Sym:
        return Sym(f"{name}({', '.join(str(a) for a in args)})")


def test_scalars_stay_python_scalars() -> None:
    assert ops.where(True, 1, 2) == 1 and isinstance(ops.where(True, 1, 2), int)
    assert ops.minimum(3, 2.5) == 2.5
    assert ops.maximum(-1, 0) == 0
    assert ops.floor(2.7) == 2.0 and ops.ceil(2.1) == 3.0
    assert ops.clip(5, 0, 3) == 3
    assert ops.safe_div(1, 0, 7.0) == 7.0 and ops.safe_div(6, 3) == 2.0


def test_arrays_vectorize() -> None:
    x = np.array([0.5, 1.5, -2.0])
    np.testing.assert_array_equal(ops.floor(x), [0.0, 1.0, -2.0])
    np.testing.assert_array_equal(ops.where(x > 0, x, 0), [0.5, 1.5, 0.0])
    np.testing.assert_array_equal(ops.safe_div(np.array([1.0, 2.0]), np.array([0.0, 4.0]), -1),
                                  [-1.0, 0.5])


def test_a_formula_renders_symbolically() -> None:
    out = max_concurrent_sequences(Sym("B"), Sym("S"))
    assert str(out) == "maximum(0, floor(where((S=0), 0.0, (B/S))))"


def test_same_formula_on_scalar_and_array() -> None:
    budget = np.array([6.0425 * 2**30, 0.5 * 2**30, -1.0])
    per_seq = np.array([2**30, 2**30, 2**30])
    np.testing.assert_array_equal(max_concurrent_sequences(budget, per_seq), [6, 0, 0])
    assert max_concurrent_sequences(6.0425 * 2**30, 2**30) == 6
