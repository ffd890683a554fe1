"""The problems found in a table a person wrote: every bad cell counted, the first kept with
their messages.

Why a module of its own: the column checks (:func:`planner.compute.validation.check_series`) and
the table checks (:mod:`planner.compute.checks`) both report into one :class:`Problems`, and the
workbook and CSV imports read it; it depends on neither.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

MAX_REPORTED = 20
"""Problems kept with their message (the first by row); the rest are only counted."""


@dataclass(frozen=True, slots=True)
class CellProblem:
    """One bad cell: its 0-based row (-1: the header), column and what is wrong."""

    row: int
    column: str
    message: str


@dataclass(slots=True)
class Problems:
    """The problems of a table: the first ``cap`` by row with messages, and the total count."""

    cap: int = MAX_REPORTED
    items: list[CellProblem] = field(default_factory=list)
    total: int = 0

    def add(self, row: int, column: str, message: str) -> None:
        """One problem."""
        self.total += 1
        self.items.append(CellProblem(row, column, message))
        self._trim()

    def add_rows(self, mask: np.ndarray, column: str, message: Callable[[int], str]) -> None:
        """A problem in ``column`` at every row where ``mask`` holds; ``message(row)`` is
        called only for the rows that may be reported (at most ``cap``)."""
        rows = np.flatnonzero(mask)
        if not len(rows):
            return
        self.total += len(rows)
        self.items.extend(CellProblem(int(r), column, message(int(r))) for r in rows[:self.cap])
        self._trim()

    def _trim(self) -> None:
        if len(self.items) > 4 * self.cap:
            self.items = self.first()

    def first(self) -> list[CellProblem]:
        """The problems kept, by row then column order of discovery (at most ``cap``)."""
        return sorted(self.items, key=lambda p: p.row)[:self.cap]

    def __bool__(self) -> bool:
        return self.total > 0
