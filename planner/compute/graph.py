"""Dependency order and vectorized evaluation of formula columns.

A formula is a function whose name is its output column and whose parameter names are the columns
it reads. :class:`FormulaGraph` derives the dependency graph from the signatures, orders it with
:mod:`graphlib`, and evaluates only what the requested outputs need: one call per formula over
whole numpy columns, so a million scenario rows cost the same number of Python calls as one.

Array inputs are converted to float64 before evaluation: int64 would overflow silently on FLOP
counts (6*N*D for a 175B model on 300B tokens is 3.15e23), and float64 holds every byte and
parameter count below 2**53 exactly.
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from graphlib import CycleError, TopologicalSorter
from typing import Any

from planner.core.errors import PlannerError
from planner.formulas.ops import Coded, Repeats

CHUNK_ROWS = 65_536
"""Rows evaluated per pass over the formulas (512 KiB per float64 column: fits in cache)."""


def chunk_threads() -> int:
    """Threads a chunked evaluation uses: the CPUs this process may run on
    (``os.sched_getaffinity``, else ``os.cpu_count``), at most 8, at least 1."""
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return max(1, min(cpus, 8))


class MissingInputError(PlannerError, KeyError):
    """Evaluation needs input columns that were not given."""

    def __init__(self, missing: Iterable[str]) -> None:
        self.missing = sorted(missing)
        super().__init__(f"missing input columns: {', '.join(self.missing)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


def _parameters(f: Callable[..., Any]) -> tuple[str, ...]:
    """The parameter names of formula ``f``: from its code object for a plain function with
    positional parameters only (microseconds; ``inspect.signature`` takes ~150 us, 30 ms for
    the inference graph at every start-up), else from its signature."""
    code = getattr(f, "__code__", None)
    if (inspect.isfunction(f) and code is not None and not code.co_kwonlyargcount
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)):
        return tuple(code.co_varnames[:code.co_argcount])
    return tuple(inspect.signature(f).parameters)


def _rule_columns(rule: Repeats) -> tuple[str, ...]:
    """The columns a :class:`Repeats` shortcut reads: the column it repeats and both columns
    of each pair that must be equal."""
    return (rule.column, *(c for pair in rule.when for c in pair))


class FormulaGraph:
    """The columns computed by ``formulas`` and the input columns they need."""

    def __init__(self, formulas: Sequence[Callable[..., Any]],
                 derived: Sequence[Callable[..., Any]] = (), *, repeats: bool = True) -> None:
        """``repeats`` False: ignore the formulas' :class:`Repeats` shortcuts (every formula
        is evaluated on every row; the tests' reference)."""
        self.formulas: dict[str, Callable[..., Any]] = {f.__name__: f for f in formulas}
        """The output columns."""
        self.derived: dict[str, Callable[..., Any]] = {f.__name__: f for f in derived}
        """Derived inputs: numeric columns computed from what the user typed (bits from a dtype,
        bytes from GiB). Evaluated and rendered like the outputs, shown as inputs."""
        self._all: dict[str, Callable[..., Any]] = {}
        self.deps: dict[str, tuple[str, ...]] = {}
        for f in (*derived, *formulas):
            if f.__name__ in self._all:
                raise ValueError(f"formula {f.__name__!r} defined twice")
            self._all[f.__name__] = f
            self.deps[f.__name__] = _parameters(f)
        try:
            self.order: tuple[str, ...] = tuple(
                n for n in TopologicalSorter(self.deps).static_order() if n in self._all)
        except CycleError as exc:  # a programming error in the formula list
            raise ValueError(f"formula cycle: {exc.args[1]}") from exc
        self._plans: dict[tuple[str, ...], tuple[list[str], frozenset[str],
                                                 dict[str, Repeats]]] = {}
        """Per requested outputs: the formulas to run in order, the inputs they read and the
        shortcuts that hold there."""
        self.inputs: frozenset[str] = frozenset(
            d for ds in self.deps.values() for d in ds if d not in self._all)
        self.repeats: dict[str, Repeats] = self._repeats() if repeats else {}
        """Formula → its :class:`Repeats` shortcut (only with ``repeats`` True)."""

    def _repeats(self) -> dict[str, Repeats]:
        """Each formula's :class:`Repeats` shortcut, checked: the columns it reads must come
        before it (a column an evaluation did not need is absent when it runs: the formula is
        then evaluated on every row)."""
        position = {n: i for i, n in enumerate(self.order)}
        out: dict[str, Repeats] = {}
        for name, f in self._all.items():
            rule = getattr(f, "__planner_repeats__", None)
            if rule is None:
                continue
            late = [c for c in _rule_columns(rule) if position.get(c, -1) > position[name]]
            if late:
                raise ValueError(f"formula {name!r} repeats from columns computed after it: "
                                 f"{', '.join(late)}")
            out[name] = rule
        return out

    @property
    def outputs(self) -> tuple[str, ...]:
        """Every output column, in the order the formulas were listed."""
        return tuple(self.formulas)

    def formula(self, name: str) -> Callable[..., Any]:
        """The formula of output or derived column ``name``."""
        return self._all[name]

    def computes(self, name: str) -> bool:
        """True for an output or a derived column."""
        return name in self._all

    def closure(self, outputs: Iterable[str]) -> set[str]:
        """The formulas needed for ``outputs`` (themselves included)."""
        needed: set[str] = set()
        stack = list(outputs)
        while stack:
            name = stack.pop()
            if name in needed or name not in self._all:
                continue
            needed.add(name)
            stack.extend(self.deps[name])
        return needed

    def required_inputs(self, outputs: Iterable[str] | None = None) -> set[str]:
        """Input columns that ``outputs`` (default: all) depend on."""
        needed = self.closure(self.order if outputs is None else outputs)
        return {d for n in needed for d in self.deps[n] if d not in self._all}

    def compute(self, columns: Mapping[str, Any], outputs: Iterable[str] | None = None, *,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Compute ``outputs`` (default: all, derived columns included) from ``columns``
        (scalars, texts, :class:`~planner.formulas.ops.Coded` text columns or equal-length
        arrays).

        Returns inputs and computed columns together. Raises :class:`MissingInputError` naming
        every input column that is needed but absent. ``progress(done_rows, total_rows)`` is
        called after each chunk of a long evaluation.
        """
        wanted = tuple(self.order if outputs is None else outputs)
        unknown = [w for w in wanted if w not in self._all and w not in columns]
        if unknown:
            raise MissingInputError(unknown)
        plan = self._plans.get(wanted)
        if plan is None:  # the formulas and inputs ``wanted`` needs, worked out once
            plan = self._plans[wanted] = self._plan(wanted)
        order, inputs, rules = plan
        missing = {d for d in inputs if d not in columns}
        if missing:
            raise MissingInputError(missing)
        values = _as_float_arrays(columns)
        rows = max((len(v) for v in values.values() if getattr(v, "ndim", 0) == 1), default=0)
        if rows <= CHUNK_ROWS:
            self._run(order, values, rules)
            return values
        return self._run_chunked(order, values, rows, progress, first=wanted, rules=rules)

    def _plan(self, wanted: Sequence[str]
              ) -> tuple[list[str], frozenset[str], dict[str, Repeats]]:
        """The formulas ``wanted`` needs in order, the inputs they read, and the shortcuts
        whose columns are all evaluated or read there (the others' formulas run as is)."""
        needed = self.closure(wanted)
        inputs = frozenset(d for n in needed for d in self.deps[n] if d not in self._all)
        rules = {n: rule for n, rule in self.repeats.items() if n in needed and all(
            c in needed or c in inputs for c in _rule_columns(rule))}
        return [n for n in self.order if n in needed], inputs, rules

    def _run(self, order: list[str], values: dict[str, Any],
             rules: Mapping[str, Repeats] | None = None, *, share: bool = False) -> None:
        """Evaluate ``order`` into ``values``, with the :class:`Repeats` shortcuts ``rules``;
        ``share``: a column that repeats another on every row may be that array itself (a
        chunked run copies every column out)."""
        formulas, deps = self._all, self.deps
        if not rules:
            for name in order:
                values[name] = formulas[name](*[values[d] for d in deps[name]])
            return
        todo: dict[tuple[tuple[str, str], ...], Any] = {}
        """Per :attr:`Repeats.when`: where some pair differs (:func:`_differing_rows`)."""
        for name in order:
            rule = rules.get(name)
            if rule is None:
                values[name] = formulas[name](*[values[d] for d in deps[name]])
                continue
            rows = todo.get(rule.when, todo)
            if rows is todo:
                rows = todo[rule.when] = _differing_rows(values, rule.when)
            if rows is True:  # one row, the same numbers as the step before: its value
                values[name] = values[rule.column]
                continue
            values[name] = _repeat(formulas[name], [values[d] for d in deps[name]],
                                   values[rule.column], rows, share)

    def _run_chunked(self, order: list[str], values: dict[str, Any], rows: int,
                     progress: Callable[[int, int], None] | None = None,
                     first: Sequence[str] = (),
                     rules: Mapping[str, Repeats] | None = None) -> dict[str, Any]:
        """Evaluate ``CHUNK_ROWS`` rows at a time: the temporaries of a formula chain then stay
        in cache, which is several times faster than whole-column passes over 8 MB arrays.

        The first chunk runs here (its results lay out the output arrays:
        :class:`~planner.compute.chunk_sink.ChunkSink`, which keeps one copy of a column that
        repeats another); the others run on :func:`chunk_threads` threads
        (:func:`_each_chunk`), each writing its own rows of the output arrays. numpy releases
        the GIL inside its loops over a chunk's 65,536 values, so the threads compute at once;
        the formulas are pure functions of their arguments, so a chunk's figures do not depend
        on which thread ran it or when.
        ``progress`` is called on this thread, in rows done."""
        # lazy: the sink imports numpy, which a one-row evaluation never needs
        from planner.compute.chunk_sink import ChunkSink

        sink: list[ChunkSink] = []

        def run(start: int) -> int:
            stop = min(start + CHUNK_ROWS, rows)
            part = {k: (v[start:stop] if getattr(v, "ndim", 0) == 1 else v)
                    for k, v in values.items()}
            self._run(order, part, rules, share=True)
            if start == 0:  # the output arrays, laid out from the first chunk's results
                sink.append(ChunkSink(order, part, values, rows, first, _block))
            sink[0].write(part, start, stop)
            return stop - start

        done = 0
        for rows_done in _each_chunk(run, range(0, rows, CHUNK_ROWS)):
            done += rows_done
            if progress is not None:
                progress(done, rows)
        return sink[0].result()


def _each_chunk(run: Callable[[int], int], starts: range) -> Iterator[int]:
    """``run(start)`` for each of ``starts``, yielding what each returns as it finishes, on
    this thread: the first chunk here, the others on :func:`chunk_threads` threads (one
    thread: all here, in order). An error or Ctrl-C drops the chunks not started."""
    yield run(starts[0])
    rest = starts[1:]
    threads = min(chunk_threads(), len(rest))
    if threads <= 1:
        yield from map(run, rest)
        return
    from concurrent.futures import ThreadPoolExecutor, as_completed

    pool = ThreadPoolExecutor(threads, thread_name_prefix="planner-chunk")
    try:
        for future in as_completed([pool.submit(run, start) for start in rest]):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _block(shape: tuple[int, int]) -> Any:
    """``np.empty(shape)`` (float64) without numpy's transparent-huge-page hint. numpy asks the
    kernel for 2 MiB pages for every allocation of 4 MiB or more (``madvise(MADV_HUGEPAGE)``;
    ``NUMPY_MADVISE_HUGEPAGE``); with the usual ``defrag = madvise`` setting of
    ``/sys/kernel/mm/transparent_hugepage`` the kernel then compacts memory to find each page at
    its first touch, in the evaluating thread. A chunked evaluation writes its output block
    once: ``benchmarks/bench_sheet_cpu.py`` at 300,000 rows spent 2.5-3.4 s of system CPU with
    the hint and 0.7-0.9 s without, the user time the same (see
    ``benchmarks/results/sheet_speed.txt``)."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core  # numpy 2 / numpy 1.26
    hint = getattr(core.multiarray, "_set_madvise_hugepage", None)
    if hint is None:
        return np.empty(shape)
    before = hint(False)
    try:
        return np.empty(shape)
    finally:
        hint(before)


_PLAIN_NUMBERS = (float, int, bool)


def _same_number(a: Any, b: Any) -> bool:
    """Two Python numbers of one type with the same bits (-0.0 is not 0.0, NaN never equal)."""
    return type(a) is type(b) and a == b and (
        a != 0 or math.copysign(1.0, a) == math.copysign(1.0, b))


def _differing_rows(values: Mapping[str, Any], when: tuple[tuple[str, str], ...]) -> Any:
    """Where some pair of columns in ``when`` differs (in any bit or in type): for 1-D numpy
    arrays the table's length and those rows' indices; for one row of Python numbers True
    when no pair differs; None (no shortcut) when the pairs are neither."""
    first = values[when[0][0]]
    if type(first) in _PLAIN_NUMBERS:  # one row (:func:`planner.compute.table.interpret_row`)
        return all(_same_number(values[a], values[b]) for a, b in when) or None
    if type(first).__module__ != "numpy" or getattr(first, "ndim", 0) != 1:
        return None  # a symbolic evaluation: no shortcut
    import numpy as np  # imported already: the column is an array

    same = np.ones(first.shape, dtype=bool)
    for a, b in when:
        va, vb = values[a], values[b]
        if not (isinstance(va, np.ndarray) and isinstance(vb, np.ndarray)
                and va.shape == vb.shape == first.shape and va.dtype == vb.dtype):
            return None
        # the same bits: the same numbers to every formula (-0.0 is not 0.0; a NaN is the NaN)
        equal = (va.view(np.int64) == vb.view(np.int64) if va.dtype == np.float64
                 else va == vb)
        np.logical_and(same, equal, out=same)
    return len(first), np.flatnonzero(~same)


def _repeat(f: Callable[..., Any], args: list[Any], earlier: Any, rows: Any,
            share: bool = False) -> Any:
    """``f(*args)``, computed only on ``rows`` (the table's length and indices, from
    :func:`_differing_rows`) and ``earlier``'s value elsewhere: see :class:`Repeats`. Every
    argument is then a 1-D array of the table's length (taken at ``rows``) or a number;
    anything else, and a result not of ``earlier``'s shape and type, takes the whole
    evaluation. No row to compute: a copy of ``earlier`` (``share``: ``earlier`` itself); one
    row of Python numbers whose pairs are the same (``rows`` True): ``earlier``."""
    if rows is None:
        return f(*args)
    if rows is True:
        return earlier
    import numpy as np  # imported already: ``rows`` is an array

    length, rows = rows
    if not (isinstance(earlier, np.ndarray) and earlier.shape == (length,)) or (
            rows.size == length):
        return f(*args)
    if rows.size == 0:
        return earlier if share else earlier.copy()
    taken = _taken(args, length, rows)
    if taken is None:
        return f(*args)
    part = f(*taken)
    if not (isinstance(part, np.ndarray) and part.shape == rows.shape
            and part.dtype == earlier.dtype):
        return f(*args)
    out = earlier.copy()
    out[rows] = part
    return out


def _taken(args: list[Any], length: int, rows: Any) -> list[Any] | None:
    """The arguments at ``rows``: a 1-D array of the table's ``length`` taken there, a number
    as it is; None when an argument is neither (the formula then runs on every row)."""
    import numpy as np  # imported already: ``rows`` is an array

    taken = []
    for arg in args:
        if isinstance(arg, np.ndarray) and arg.shape == (length,):
            taken.append(arg[rows])
        elif isinstance(arg, (int, float, np.generic)) or (
                isinstance(arg, np.ndarray) and arg.ndim == 0):
            taken.append(arg)
        else:
            return None
    return taken


def _float_columns(values: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """The names among ``names`` whose values are 1-D float64 arrays."""
    import numpy as np

    return [n for n in names if isinstance(values.get(n), np.ndarray)
            and values[n].ndim == 1 and values[n].dtype == np.float64]


def _as_float_arrays(columns: Mapping[str, Any]) -> dict[str, Any]:
    """Scalars and texts stay as they are (exact ints); arrays of numbers become float64, arrays
    of texts stay texts (for lookups). A float64 array is taken as it is, not copied (formulas
    never write into their inputs; a million-row table's float inputs would otherwise be
    copied once more, 8 MB each)."""
    out: dict[str, Any] = {}
    for name, value in columns.items():
        if (isinstance(value, (int, float, bool, str, Coded))
                or hasattr(value, "__planner_op__")):
            out[name] = value
        else:
            import numpy as np  # only for arrays: a one-row evaluation loads no numpy

            array = np.asarray(value)
            out[name] = (array if array.dtype.kind in "OUS"
                         else array.astype(np.float64, copy=False))
    return out


def float_block(values: Mapping[str, Any], names: Iterable[str]) -> tuple[Any, list[str]] | None:
    """If the float64 columns among ``names`` are exactly the rows of one 2-D array (as a
    chunked evaluation leaves them), that array and the names in row order; else None."""
    names = _float_columns(values, names)
    if not names:
        return None
    base = values[names[0]].base
    if base is None or base.ndim != 2 or base.shape[0] != len(names):
        return None
    start = base.__array_interface__["data"][0]
    stride = base.strides[0]
    rows: dict[int, str] = {}
    for n in names:
        if values[n].base is not base:
            return None
        offset = values[n].__array_interface__["data"][0] - start
        rows[offset // stride] = n
    if sorted(rows) != list(range(len(names))):
        return None
    return base, [rows[i] for i in range(len(names))]


def float_rows(values: Mapping[str, Any], names: Iterable[str]
               ) -> tuple[Any, list[str]] | None:
    """The float64 columns among ``names`` that are rows of one 2-D array, when they are
    consecutive rows of it in the order of ``names`` (as a chunked evaluation leaves the
    outputs it was asked for): that 2-D view of exactly those rows (no copy) and their names;
    else None. Columns that are not rows of it (an output constant over every row, broadcast)
    are left out."""
    arrays = _float_columns(values, names)
    base = next((values[n].base for n in arrays if values[n].base is not None
                 and values[n].base.ndim == 2
                 and values[n].base.shape[1] == len(values[n])), None)
    if base is None:
        return None
    start = base.__array_interface__["data"][0]
    stride = base.strides[0]
    # a read-only view is a column repeating another (planner.compute.chunk_sink): not a row
    members = [n for n in arrays if values[n].base is base and values[n].flags.writeable]
    rows = [(values[n].__array_interface__["data"][0] - start) // stride for n in members]
    if rows != list(range(rows[0], rows[0] + len(rows))):
        return None
    return base[rows[0]:rows[0] + len(rows)], members
