"""Read the GPUs sheet's edits back: each GPU row whose datasheet figures differ from what the
export wrote becomes a plan of kind ``gpu`` (validated and applied by the workspace in the
same transaction as the scenario rows). The sheet is streamed like the scenario sheets
(:mod:`planner.io.xlsx.stream`), at most :data:`MAX_GPU_ROWS` rows.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl.utils import get_column_letter

from planner.io.xlsx.layout import (
    GPU_EDITABLE,
    GPU_SHEET,
    GPU_TEXT,
    GPU_THROUGHPUT,
    gpu_sheet_record,
)
from planner.io.xlsx.parts import Marked
from planner.io.xlsx.read_common import (
    CellError,
    RowPlan,
    carried_text,
    integer,
    read_sheet,
    same_number,
)
from planner.spec.gpu import GpuSpec

MAX_GPU_ROWS = 10_000
"""Most GPU rows the GPUs sheet may hold (the catalog ships about 40)."""


def _gpu_same(exported: Any, value: Any) -> bool:
    if value in (None, "") or exported in (None, ""):
        return value in (None, "") and exported in (None, "")
    if isinstance(exported, bool) or isinstance(value, bool):
        return isinstance(value, bool) and value == bool(exported)
    if isinstance(exported, (int, float)) and isinstance(value, (int, float)):
        return same_number(float(value), float(exported))
    return carried_text(value) == carried_text(exported)


def gpu_table(z: zipfile.ZipFile, path: Path, strings: list[str], dates: frozenset[int]
               ) -> tuple[list[list[Any]], set[tuple[int, int]], dict[tuple[int, int], Marked]]:
    """The GPUs sheet streamed (at most :data:`MAX_GPU_ROWS` rows, the layout's columns):
    its rows from row 1 as lists of values, the (row, column) of each formula cell and each
    :class:`~planner.io.xlsx.parts.Marked` cell (a date, an error value, a NaN)."""
    width = len(GPU_SHEET)
    cols = read_sheet(z, path, "GPUs", list(range(1, width + 1)), width, strings, dates,
                       max_rows=MAX_GPU_ROWS, rows_are="GPU rows")
    rows = cols.rows.tolist()
    table = [[*cols.header, *[None] * (width - len(cols.header))]]
    table += [[None] * width for _ in range((rows[-1] if rows else 1) - 1)]
    formulas: set[tuple[int, int]] = set()
    marks: dict[tuple[int, int], Marked] = {}
    for j in range(width):
        series, formula = cols.values(j, numeric=False, strip=False)
        for r, v, f in zip(rows, series.tolist(), formula.tolist(), strict=True):
            # numbers as floats, as the sheet stores them (a typed 80 is 80.0)
            table[r - 1][j] = float(v) if type(v) is int else v
            if f:
                formulas.add((r, j + 1))
        marks.update({(rows[i], j + 1): m for i, m in cols.marked(j).items()})
    return table, formulas, marks


def read_gpu_sheet(path: Path, table: list[list[Any]], gpus: dict[str, GpuSpec],
                   versions: dict[str, int], formulas: set[tuple[int, int]],
                   marks: dict[tuple[int, int], Marked] | None = None
                   ) -> tuple[list[RowPlan], list[CellError]]:
    """The edits of the GPUs sheet: for each GPU row whose figures differ from what the
    export wrote (:func:`gpu_sheet_record` of the GPU now), a plan of kind ``gpu`` with the
    changed fields as typed (the workspace validates them). Refused, naming the cell: a
    header other than the layout's, a name not in the catalog or listed twice, a computed
    column no longer a formula, a date, error value or NaN in any cell (``marks``), and an
    edited row whose version is not the GPU's now. ``table``: the sheet's rows from row 1;
    ``formulas``: the (row, column) of its formula cells."""
    rows = iter(table)
    header = _header_error([str(h) if h not in (None, "") else ""
                            for h in (next(rows, None) or ())])
    if header is not None:
        return [], [header]
    sheet = _GpuRows(gpus, versions, formulas, marks or {})
    for r, values in enumerate(rows, 2):
        cells = _padded(values)
        if cells is not None:
            sheet.row(r, cells)
    return sheet.plans, sheet.errors


def _padded(values: list[Any] | None) -> list[Any] | None:
    """A sheet row's cells padded to the layout's width; ``None`` when the row is empty."""
    cells = list(values or ()) + [None] * (len(GPU_SHEET) - len(values or ()))
    if all(v in (None, "") for v in cells[:len(GPU_SHEET)]):
        return None
    return cells


@dataclass(slots=True)
class _GpuRows:
    """The GPUs sheet's rows turned into plans and errors, against the catalog's GPUs and
    their versions now; a name seen on an earlier row is kept in ``seen`` (by its row)."""

    gpus: dict[str, GpuSpec]
    versions: dict[str, int]
    formulas: set[tuple[int, int]]
    marks: dict[tuple[int, int], Marked]
    plans: list[RowPlan] = field(default_factory=list)
    errors: list[CellError] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    lower: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.lower = {name.lower(): name for name in self.gpus}

    def row(self, r: int, cells: list[Any]) -> None:
        """Plan GPU row ``r`` (when its figures changed) or record its errors."""
        bad = _Bad(r, self.errors)
        name = _gpu_name(bad, r, cells, self.lower, self.seen, self.marks)
        if name is None:
            return
        _kept_formulas(bad, r, self.formulas)
        plan = _row_plan(bad, r, cells, self.gpus[name], name, self.versions.get(name))
        if plan is not None:
            self.plans.append(plan)


def _header_error(got: list[str]) -> CellError | None:
    """The GPUs sheet's header row refused at its first cell other than the layout's (or a
    header past the layout's last), else ``None``."""
    headers = [h for _k, h, _kind, _f in GPU_SHEET]
    if got[:len(headers)] == headers and not any(got[len(headers):]):
        return None
    at = next((i for i, (g, e) in enumerate(zip(got, headers, strict=False)) if g != e),
              min(len(got), len(headers)))
    found = got[at] if at < len(got) else "(missing)"
    wanted = headers[at] if at < len(headers) else "(nothing)"
    return CellError("GPUs", f"{get_column_letter(at + 1)}1", "header",
                     f"unexpected header {found!r}; expected {wanted!r}")


def _row_plan(bad: _Bad, r: int, cells: list[Any], spec: GpuSpec, name: str,
              version_now: int | None) -> RowPlan | None:
    """The plan of GPU row ``r`` when its figures differ from the export's (its version must
    be the GPU's now, else a refusal is recorded); ``None`` when unchanged or refused."""
    changed = _changed(cells, gpu_sheet_record(spec, version_now or 0))
    if not changed:
        return None
    version = integer(cells[INDEX["version"]])
    if version != version_now:
        bad("version", f"GPU {name!r} was changed since the export (exported version "
                       f"{cells[INDEX['version']]!r}, now {version_now}); export "
                       "again and redo the edit")
        return None
    return RowPlan("GPUs", r, "gpu", "", name, None, version, changed)


INDEX = {key: i for i, (key, *_r) in enumerate(GPU_SHEET)}
"""Column key → its 0-based column on the GPUs sheet."""


class _Bad:
    """Records a bad cell of row ``r`` by column key."""

    def __init__(self, r: int, errors: list[CellError]) -> None:
        self.r, self.errors = r, errors

    def __call__(self, key: str, reason: str) -> None:
        self.errors.append(CellError("GPUs", f"{get_column_letter(INDEX[key] + 1)}{self.r}",
                                     key, reason))


def _gpu_name(bad: _Bad, r: int, cells: list[Any], lower: dict[str, str],
              seen: dict[str, int], marks: dict[tuple[int, int], Marked]) -> str | None:
    """The catalog name of row ``r``'s GPU, or None with the row's errors recorded: a marked
    cell (date, error value, NaN), a name not in the catalog, or one listed twice."""
    marked = [(key, m) for j, (key, *_r) in enumerate(GPU_SHEET)
              if (m := marks.get((r, j + 1))) is not None]
    for key, m in marked:
        bad(key, m.reason())
    if marked:
        return None
    raw = str(cells[INDEX["name"]] or "").strip()
    name = lower.get(raw.lower())
    if name is None:
        bad("name", f"unknown GPU {raw!r}; the GPUs sheet edits the catalog's GPUs (add a "
                    "GPU with planner gpu add)")
        return None
    if name in seen:
        bad("name", f"{name!r} is also on row {seen[name]}; each GPU may appear once")
        return None
    seen[name] = r
    return name


def _kept_formulas(bad: _Bad, r: int, formulas: set[tuple[int, int]]) -> None:
    """A computed column of row ``r`` that is no longer a formula is refused, naming the
    figure to edit instead."""
    for j, (key, header, kind, _f) in enumerate(GPU_SHEET):
        if kind != "value" and (r, j + 1) not in formulas:
            source = kind.removeprefix("={").split("}")[0]
            bad(key, f"{header} is computed from {source}; edit "
                     f"{get_column_letter(INDEX[source] + 1)}{r} instead and keep this "
                     "cell's formula")


def _changed(cells: list[Any], exported: dict[str, Any]) -> dict[str, Any]:
    """The editable fields whose cell differs from what the export wrote, as typed (an
    emptied text as ``""``, an emptied throughput as 0: the GPU lacks that dtype)."""
    changed: dict[str, Any] = {}
    for key in GPU_EDITABLE:
        value = cells[INDEX[key]]
        if isinstance(value, str) and key not in GPU_TEXT:
            value = value.strip()
        if not _gpu_same(exported.get(key), value):
            if value in (None, "") and key in GPU_TEXT:
                value = ""
            elif value in (None, "") and key in GPU_THROUGHPUT:
                value = 0
            changed[key] = value
    return changed
