"""Where a chunked evaluation's results go: one 2-D block, and no copy of a column that repeats
another.

Why this module exists: a million-row evaluation of every output writes about 450 float
columns of 8 MB each, and on a virtual machine the first touch of those 3.6 GB of pages costs
as much as the formulas (``benchmarks/results/sheet_speed.txt``). Many columns repeat another
bit for bit on every row: an engine's figure that another engine's rows take as they are, a
pool of a disaggregated deployment that is the scenario's own when the pools are not split,
an input passed through. :class:`ChunkSink` finds those on the first chunk, keeps a block row
only for the others, and on every later chunk checks that each repeat still holds (one
comparison instead of one copy); a column that stops repeating gets its own array there, its
earlier rows copied from the column it repeated. The result holds a repeating column as a
read-only view of the column it repeats, so nothing can write through one into the other.
Chunks may arrive on several threads (:mod:`planner.compute.graph`): each writes its own rows,
and the switch from repeat to own array is taken under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def _same_bits(a: Any, b: Any) -> bool:
    """The same float64 values bit for bit (a NaN is the NaN, -0.0 is not 0.0)."""
    return bool(np.array_equal(a.view(np.int64), b.view(np.int64)))


def _is_float_column(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype == np.float64


class ChunkSink:
    """The output arrays of a chunked evaluation of ``order`` over ``rows`` rows, laid out from
    the first chunk's results ``first`` (the chunk's inputs included): the float outputs that
    repeat no earlier column are rows of one 2-D block, the requested ones (``wanted``) first
    in the order requested; other 1-D outputs get arrays of their type; a number stays a
    number."""

    def __init__(self, order: Sequence[str], first: Mapping[str, Any], inputs: Mapping[str, Any],
                 rows: int, wanted: Sequence[str], block: Any) -> None:
        """``inputs``: the evaluation's input columns (whole length); ``block(shape)``: an
        empty float64 array of that shape."""
        self._rows = rows
        self._lock = threading.Lock()
        self.repeats: dict[str, str] = self._find_repeats(order, first, inputs)
        """A float output -> the earlier column (or input) it repeats on every row so far."""
        self._covered: dict[str, list[tuple[int, int]]] = {n: [] for n in self.repeats}
        self.out: dict[str, Any] = dict(inputs)
        own = [n for n in order if n not in self.repeats]
        rank = {name: i for i, name in enumerate(wanted)}
        floats = sorted((n for n in own if _is_float_column(first[n])),
                        key=lambda n: rank.get(n, len(rank)))
        storage = block((len(floats), rows))
        for i, name in enumerate(floats):
            self.out[name] = storage[i]
        in_block = set(floats)
        for name in own:  # every output an array of its own: never a given column's
            if name not in in_block:
                value = first[name]
                self.out[name] = (np.empty(rows, dtype=value.dtype)
                                  if getattr(value, "ndim", 0) == 1 else value)
        self._written = [n for n in order if getattr(first[n], "ndim", 0) == 1]

    @staticmethod
    def _find_repeats(order: Sequence[str], first: Mapping[str, Any],
                      inputs: Mapping[str, Any]) -> dict[str, str]:
        """Each float output of ``first`` equal bit for bit to an earlier float column (an
        input, or an output that repeats nothing): that column. Grouped by the sum of the
        bits, then compared whole."""
        seen: dict[tuple[int, int], list[str]] = {}
        out: dict[str, str] = {}

        def key(value: Any) -> tuple[int, int]:
            bits = value.view(np.int64)
            return int(bits[0]) if len(bits) else 0, int(np.bitwise_xor.reduce(bits))

        computed = set(order)
        for name in inputs:  # a given column a formula computes anew is that formula's
            if name not in computed and _is_float_column(first.get(name)):
                seen.setdefault(key(first[name]), []).append(name)
        for name in order:
            value = first[name]
            if not _is_float_column(value):
                continue
            k = key(value)
            match = next((n for n in seen.get(k, ()) if _same_bits(first[n], value)), None)
            if match is None:
                seen.setdefault(k, []).append(name)
            else:
                out[name] = match
        return out

    def write(self, part: Mapping[str, Any], start: int, stop: int) -> None:
        """Rows ``start:stop`` of every 1-D output from a chunk's results ``part``."""
        out = self.out
        for name in self._written:
            value = part[name]
            root = self.repeats.get(name)
            if root is not None:
                if _same_bits(value, part[root]):
                    with self._lock:
                        if name in self.repeats:  # still repeating: nothing to copy
                            self._covered[name].append((start, stop))
                            continue
                else:
                    self._own(name)
            out[name][start:stop] = value

    def _own(self, name: str) -> None:
        """Give ``name``, which no longer repeats its column, an array of its own holding the
        rows written so far (its column's, which it repeated there)."""
        with self._lock:
            root = self.repeats.pop(name, None)
            if root is None:  # another chunk did it first
                return
            own = np.empty(self._rows)
            source = self.out[root]
            for a, b in self._covered.pop(name):
                own[a:b] = source[a:b]
            self.out[name] = own

    def result(self) -> dict[str, Any]:
        """Every column: each output still repeating another as a read-only view of it."""
        for name, root in self.repeats.items():
            view = self.out[root].view()
            view.flags.writeable = False
            self.out[name] = view
        return self.out
