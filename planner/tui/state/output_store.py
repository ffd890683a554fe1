"""A fleet's evaluated outputs kept as numpy columns, not one dict per scenario.

Why: a scenario has ~150 output columns. As a dict of Python floats each one costs ~6.5 KB
(the dict, plus a 24-byte float object per value): 650 MB for a 100,000-scenario fleet, on
top of the evaluation's own arrays that the dicts were converted from (the conversion alone
took seconds). Kept as the evaluation's column arrays (float64, int64, bool: 8 bytes a value
or less), the same fleet takes ~120 MB and needs no conversion at all.

:class:`OutputStore` is a mapping of scenario id to that scenario's outputs, so the sheet reads
``outputs[sid]["ttft_s"]`` as before: a row of a loaded block is an :class:`OutputRow`, a
read-only view that converts one value when it is read, to exactly the Python value
:func:`planner.compute.fleet.evaluate_scenarios` gives (an ``int`` for an integer column, a
``float``, a ``bool``, text); a row recomputed after an edit or a row action is stored as the
plain dict the evaluation of one scenario returns. :meth:`OutputStore.gather` reads one column
over many rows at once, for the sort and the column widths.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from planner.compute.fleet import compute_dtypes
from planner.compute.outputs import output_columns
from planner.compute.profiles import APPLIED_COLUMN, CalibrationFigures
from planner.compute.table import graph
from planner.spec.architecture import ModelSpec
from planner.spec.domain import Scenario
from planner.spec.gpu import GpuSpec

EXTRA_KEYS = {
    "inference": ("compute_dtype", "gpu_memory_bytes", APPLIED_COLUMN,
                  "calibration_holdout_error", "ttft_bound", "tpot_bound"),
    "training": ("compute_dtype", "gpu_memory_bytes"),
}
"""Per kind, the columns evaluation adds to the formula graph's outputs, in the order
:func:`planner.compute.fleet.output_records` adds them."""


class OutputBlock:
    """The outputs of many scenarios of one kind, as columns (row ``j`` is ``ids[j]``).

    Only the formula graph's output columns are kept (the evaluation's intermediate arrays
    are dropped), and the per-row extras: the compute dtype and the GPU's memory (shared
    objects, one pointer a row), the calibration profile applied and its held-out error;
    the bound of TTFT and TPOT is derived when read."""

    __slots__ = ("applied", "columns", "dtype", "errors", "gpu_memory", "ids", "integer",
                 "keys", "kind")

    def __init__(self, kind: str, scenarios: Sequence[Scenario], values: Mapping[str, Any],
                 models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                 profiles: Sequence[CalibrationFigures] | None = None) -> None:
        count = len(scenarios)
        self.kind = kind
        self.ids = np.fromiter((sc.id for sc in scenarios), dtype=np.int64, count=count)
        outputs = graph(kind).outputs
        self.columns: dict[str, np.ndarray] = {name: _compact(np.asarray(values[name]))
                                               for name in outputs}
        described = output_columns()
        self.integer = frozenset(name for name in outputs if described[name].integer)
        dtype = np.empty(count, dtype=object)
        dtype[:] = compute_dtypes(scenarios, models, gpus)
        memory = np.empty(count, dtype=object)
        memory[:] = [gpus[sc.gpu].memory_bytes for sc in scenarios]
        self.dtype, self.gpu_memory = dtype, memory
        self.applied: np.ndarray | None = None
        self.errors: dict[str, float | None] = {}
        if kind == "inference":
            applied = np.asarray(values.get(APPLIED_COLUMN, ""), dtype=object)
            texts: dict[Any, str] = {}  # one str object per distinct profile
            self.applied = np.array([texts.setdefault(v, str(v)) for v in
                                     np.broadcast_to(applied, (count,)).tolist()],
                                    dtype=object).reshape(count)
            self.errors = {p.label: p.holdout_throughput_error for p in profiles or ()}
        self.keys: tuple[str, ...] = tuple(dict.fromkeys((*outputs, *EXTRA_KEYS[kind])))

    def __len__(self) -> int:
        return len(self.ids)

    def value(self, key: str, j: int) -> Any:
        """Column ``key`` of row ``j`` as a Python value (KeyError: no such column)."""
        if key not in EXTRA_KEYS[self.kind]:
            return self._stored(key, j)
        if key == "compute_dtype":
            return self.dtype[j]
        if key == "gpu_memory_bytes":
            return self.gpu_memory[j]
        if self.applied is not None:
            return self._applied_value(key, j, self.applied)
        return self._stored(key, j)

    def _stored(self, key: str, j: int) -> Any:
        """Stored column ``key`` of row ``j`` (an integer column's value as an int)."""
        value = self.columns[key].item(j)
        return int(value) if key in self.integer else value

    def _applied_value(self, key: str, j: int, applied: np.ndarray) -> Any:
        """An inference block's column ``key`` of row ``j``: the calibration profile it
        applied (``applied``) and that profile's holdout error, whether each stage is compute
        or memory bound, else the stored column."""
        if key == APPLIED_COLUMN:
            return applied[j]
        if key == "calibration_holdout_error":
            return self.errors.get(applied[j])
        if key in ("ttft_bound", "tpot_bound"):
            stage = key.removesuffix("_bound")
            compute = self.value(f"{stage}_compute_s", j)
            return "compute" if compute >= self.value(f"{stage}_memory_s", j) else "memory"
        return self._stored(key, j)

    def gather(self, key: str, rows: np.ndarray) -> list[Any]:
        """Column ``key`` at rows ``rows`` as Python values (one C pass for a stored
        column)."""
        column = self.columns.get(key)
        if column is None or key in EXTRA_KEYS[self.kind]:
            return [self.value(key, j) for j in rows.tolist()]
        values: list[Any] = column[rows].tolist()
        return [int(v) for v in values] if key in self.integer else values


def _compact(column: np.ndarray) -> np.ndarray:
    """``column``, or, when every value is the same (bit for bit: 0.0 and -0.0 differ), that
    value broadcast to its length: no memory a row (a third of the outputs of a typical fleet
    are constant, such as the serving model's when no row uses it)."""
    if column.ndim != 1 or len(column) < 2 or column.dtype.kind not in "biuf" or \
            column.dtype.itemsize not in (1, 2, 4, 8):
        return column
    bits = column.view(f"u{column.dtype.itemsize}")
    if not (bits == bits[0]).all():
        return column
    return np.broadcast_to(column[:1].copy(), column.shape)


class OutputRow(Mapping[str, Any]):
    """One scenario's outputs, read from its :class:`OutputBlock` (a read-only view)."""

    __slots__ = ("block", "row")

    def __init__(self, block: OutputBlock, row: int) -> None:
        self.block, self.row = block, row

    def __getitem__(self, key: str) -> Any:
        try:
            return self.block.value(key, self.row)
        except (KeyError, TypeError):
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        return key in self.block.keys

    def __iter__(self) -> Iterator[str]:
        return iter(self.block.keys)

    def __len__(self) -> int:
        return len(self.block.keys)

    def __repr__(self) -> str:
        return f"OutputRow({dict(self)!r})"


class OutputStore(MutableMapping[int, Mapping[str, Any]]):
    """Scenario id → outputs: rows of loaded :class:`OutputBlock` s, or dicts stored since.

    Where each id's row is lives in two int arrays indexed by id (block, row), so a
    100,000-row fleet needs no dict of 100,000 entries; a row stored later (``store[sid] =
    outputs``) is a dict entry that shadows its block row, and deleting an id forgets both."""

    def __init__(self, blocks: Sequence[OutputBlock] = ()) -> None:
        self.blocks = list(blocks)
        size = max((int(b.ids.max()) + 1 for b in self.blocks if len(b)), default=0)
        self._block = np.full(size, -1, dtype=np.int32)
        self._row = np.zeros(size, dtype=np.int64)
        for number, block in enumerate(self.blocks):
            self._block[block.ids] = number
            self._row[block.ids] = np.arange(len(block), dtype=np.int64)
        self._count = int(np.count_nonzero(self._block >= 0))
        self._dicts: dict[int, Mapping[str, Any]] = {}

    def _in_block(self, sid: int) -> bool:
        return 0 <= sid < len(self._block) and self._block[sid] >= 0

    def __getitem__(self, sid: int) -> Mapping[str, Any]:
        found = self._dicts.get(sid)
        if found is not None:
            return found
        try:
            number = self._block.item(sid) if sid >= 0 else -1
        except (IndexError, TypeError):
            raise KeyError(sid) from None
        if number < 0:
            raise KeyError(sid)
        return OutputRow(self.blocks[number], self._row.item(sid))

    def __setitem__(self, sid: int, outputs: Mapping[str, Any]) -> None:
        if self._in_block(sid):
            self._block[sid] = -1
            self._count -= 1
        self._dicts[sid] = outputs

    def __delitem__(self, sid: int) -> None:
        if self._dicts.pop(sid, None) is not None:
            return
        if not self._in_block(sid):
            raise KeyError(sid)
        self._block[sid] = -1
        self._count -= 1

    def __contains__(self, sid: object) -> bool:
        if sid in self._dicts:
            return True
        return isinstance(sid, (int, np.integer)) and self._in_block(int(sid))

    def __iter__(self) -> Iterator[int]:
        yield from np.flatnonzero(self._block >= 0).tolist()
        yield from self._dicts

    def __len__(self) -> int:
        return self._count + len(self._dicts)

    def gather(self, key: str, ids: np.ndarray) -> list[Any]:
        """Output ``key`` of the scenarios ``ids`` (in that order) as Python values, None where
        a row has no such output: one array read per block, a dict lookup per row stored
        since."""
        ids = np.asarray(ids, dtype=np.int64)
        values: list[Any] = [None] * len(ids)
        inside = ids < len(self._block)
        block = np.full(len(ids), -1, dtype=np.int32)
        block[inside] = self._block[ids[inside]]
        for number, owner in enumerate(self.blocks):
            if key in owner.keys and len(ids) and (block == number).all():  # one block: as is
                got: list[Any] = owner.gather(key, self._row[ids])
                return got
            at = np.flatnonzero(block == number)
            if not len(at):
                continue
            if key in owner.keys:
                got = owner.gather(key, self._row[ids[at]])
                for position, value in zip(at.tolist(), got, strict=True):
                    values[position] = value
        for position in np.flatnonzero(block < 0).tolist():
            row = self._dicts.get(int(ids[position]))
            if row is not None:
                values[position] = row.get(key)
        return values


def evaluate_store(scenarios: Sequence[Scenario],
                   by_kind: Mapping[str, tuple[list[int], Mapping[str, Any]]],
                   models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec],
                   profiles: Sequence[CalibrationFigures] | None = None) -> OutputStore:
    """An :class:`OutputStore` of ``scenarios`` from
    :func:`planner.compute.fleet.evaluate_columns`' result (one block per kind)."""
    return OutputStore([OutputBlock(kind, [scenarios[i] for i in index], values, models,
                                    gpus, profiles)
                        for kind, (index, values) in by_kind.items()])
