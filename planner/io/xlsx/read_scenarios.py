"""Read a report's scenario inputs back: validate every cell, then plan the changes.

Cells are validated a column at a time (:mod:`planner.compute.checks`, the checks of
``planner scenario import``): each distinct text is parsed once, numbers are range-checked as
arrays, and the rules across columns run once per distinct model, GPU and dtype.

Rows are keyed by the ``id`` column: a row with an id updates that scenario (only the fields
that differ, guarded by the row's ``version``), a row without one creates a scenario. Every bad
cell is reported with its sheet, cell address, column and reason, all at once; the plan is
applied by the workspace in one transaction, or not at all.

Nothing in the file is trusted. The scenario sheets are streamed
(:mod:`planner.io.xlsx.stream`): only their meta and input columns are kept, as compact
arrays, so memory does not grow with the grid a used range spans; a cell beyond the layout
(:data:`~planner.io.xlsx.read_common.MAX_ROWS` rows, the sheet's columns) or an oversized
part is refused naming it, so a single cell at ``XFD1048576`` or a million-row XML bomb costs
one pass and no grid. The small GPUs sheet is streamed the same way (at most
:data:`~planner.io.xlsx.read_gpus.MAX_GPU_ROWS` rows). The file is opened once, as a regular
file of at most :data:`~planner.io.xlsx.read_common.MAX_WORKBOOK_BYTES`
(:mod:`planner.core.files`), and
every part is read bounded. Formula cells are refused in input columns (their cached value is
not what the reader typed), except a constant flag (``=TRUE()``, as LibreOffice writes a
boolean); a date, an error value or a NaN in any column is refused by cell name, never read as
a number or an empty cell. Numbers are compared with what is stored at 15 significant digits
(what Excel and LibreOffice keep), so a tool that rewrites floats changes nothing.
A row with an id must carry the version it was exported with,
must be on the sheet of its kind, may appear once, and may not take another scenario's name.
"""


from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from openpyxl.utils import get_column_letter

from planner.compute.table import inputs_of
from planner.core.errors import PlannerError
from planner.io.xlsx.layout import (
    KNOWN_SHEETS,
    SCENARIO_SHEETS,
    Column,
    letters,
    scenario_columns,
)
from planner.io.xlsx.parts import SheetRefused, date_styles, shared_strings, sheet_parts
from planner.io.xlsx.read_checks import check_columns
from planner.io.xlsx.read_common import (
    MAX_STRINGS_BYTES,
    CellError,
    ImportError_,
    RowPlan,
    integer,
    open_workbook,
    part_size,
    read_sheet,
    same_value,
    too_big,
)
from planner.io.xlsx.read_gpus import gpu_table, read_gpu_sheet
from planner.io.xlsx.stream import SheetColumns
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec

__all__ = ["CellError", "ImportError_", "RowPlan", "read_plan"]


MAX_NEW_ROWS = 250_000
"""Most new rows (a name, no id) one workbook import creates: each holds about
:data:`NEW_ROW_BYTES` while the workbook is checked and written (a row plan with its every
input; ``python benchmarks/bench_bulk.py --memory``), so this many need about 2 GB. The sheet
may hold up to :data:`MAX_ROWS` rows of existing scenarios; ``planner scenario import`` creates
more new ones at about 3.4 kB a row."""
NEW_ROW_BYTES = 7_400
"""Peak memory per new row of a workbook import, measured (10,000 rows, dry run)."""
PRE_COUNT_BYTES = 64 << 20
"""A scenario sheet whose XML is larger than this (about 18,000 rows) has its new rows
counted in a first pass over its id and name columns only, so a sheet of too many new rows is
refused before its input columns are kept."""


def _refuse_many_new(path: Path, sheet: str, cols: SheetColumns, id_at: int,
                     name_at: int) -> None:
    """:class:`ImportError_` when ``sheet`` holds more than :data:`MAX_NEW_ROWS` new rows
    (a name and no id): ``id_at`` and ``name_at`` are the (0-based) sheet columns of the id
    and name, both kept in ``cols``."""
    ids, id_codes, _f = cols.column(id_at)
    _n, names, _g = cols.column(name_at)
    new = int(np.count_nonzero(np.isnan(ids) & (id_codes < 0) & (names >= 0)))
    if new > MAX_NEW_ROWS:
        raise ImportError_(path, problem=(
            f"{sheet}: {new:,} new rows (no id); one workbook import creates at most "
            f"{MAX_NEW_ROWS:,} (about {NEW_ROW_BYTES // 1000} kB of memory each while checked); "
            "create them with `planner scenario import FLEET FILE` (a CSV of the same columns) "
            "or import the sheet in parts"))


def read_plan(path: Path, *, existing: dict[int, Any], models: dict[str, ModelSpec],
              gpus: dict[str, GpuSpec], default_fleet: str | None,
              fleets: set[str], gpu_versions: dict[str, int] | None = None) -> list[RowPlan]:
    """Validate the workbook at ``path`` against the database's scenarios (``existing``, by
    id), models and GPUs; return the row plans or raise :class:`ImportError_` listing every
    problem. Every check the import makes here is made before anything is applied, so a dry
    run refuses what the import refuses.

    With ``gpu_versions`` (each GPU's version), edits in the GPUs sheet's figures are read too
    (:func:`read_gpu_sheet`): a plan of kind ``gpu`` per edited GPU, whose figures the
    workspace validates and applies in the same transaction as the scenario rows."""
    path = Path(path)
    fh, z = open_workbook(path)
    with fh, z:
        try:
            sheets = sheet_parts(z)
        except SheetRefused as exc:
            raise ImportError_(path, problem=f"the workbook {exc.what}") from None
        return _read_plan(z, sheets, path, existing=existing, models=models, gpus=gpus,
                          default_fleet=default_fleet, fleets=fleets, gpu_versions=gpu_versions)


def _read_plan(z: zipfile.ZipFile, sheet_names: dict[str, str], path: Path, *,
               existing: dict[int, Any], models: dict[str, ModelSpec],
               gpus: dict[str, GpuSpec], default_fleet: str | None,
               fleets: set[str], gpu_versions: dict[str, int] | None) -> list[RowPlan]:
    """:func:`read_plan` on the open workbook ``z`` (``sheet_names``: its sheets' parts)."""
    present = _scenario_kinds(path, sheet_names)
    try:
        strings = shared_strings(z, MAX_STRINGS_BYTES, lambda: too_big(
            path, "the shared string table", MAX_STRINGS_BYTES))
        dates = date_styles(z)
    except (zipfile.BadZipFile, KeyError, OSError, EOFError) as exc:
        raise PlannerError(f"{path}: not a readable .xlsx workbook ({exc})") from exc
    rows = _Rows(existing, models, gpus, default_fleet, fleets)
    for kind in present:
        sheet = SCENARIO_SHEETS[kind]
        records, series, marked = _sheet_records(z, path, sheet, kind, sheet_names, strings,
                                                 dates)
        rows.sheet(sheet, kind, records, series, marked)
    if gpu_versions is not None and "GPUs" in sheet_names:
        table, formulas, marks = gpu_table(z, path, strings, dates)
        gpu_plans, gpu_errors = read_gpu_sheet(path, table, gpus, gpu_versions, formulas,
                                               marks)
        rows.plans += gpu_plans
        rows.errors += gpu_errors
    rows.errors += _name_clashes([p for p in rows.plans if p.kind != "gpu"], existing)
    if rows.errors:
        raise ImportError_(path, rows.errors)
    return rows.plans


def _scenario_kinds(path: Path, sheet_names: dict[str, str]) -> list[str]:
    """The scenario kinds whose sheet the workbook has; a sheet no planner report has, or
    neither scenario sheet, is refused."""
    unknown = [s for s in sheet_names
               if s not in KNOWN_SHEETS and not s.startswith(("Sweep ", "Plan ", "Frontier "))
               and s not in ("Plan", "Frontier")]
    if unknown:
        raise ImportError_(path, problem=f"unknown sheet(s) {', '.join(unknown)}; a planner "
                           f"report has {', '.join(KNOWN_SHEETS)}, 'Sweep N', 'Frontier' and "
                           "'Plan' sheets")
    present = [kind for kind, sheet in SCENARIO_SHEETS.items() if sheet in sheet_names]
    if not present:
        raise ImportError_(path, problem="no Scenarios or Training sheet")
    return present


Record = tuple[int, dict[str, Any], set[str]]
"""(sheet row, meta cells by key, keys of the row's cells refused as formulas or marks)."""


def _sheet_records(z: zipfile.ZipFile, path: Path, sheet: str, kind: str,
                   sheet_names: dict[str, str], strings: list[str], dates: frozenset[int]
                   ) -> tuple[list[Record], dict[str, Any], dict[tuple[int, str], str]]:
    """A scenario sheet's meta and input columns streamed, its header checked: per row a
    :data:`Record`; per input its cells as a Series (for the column checks); and the reason
    of each date, error value or NaN cell by (record index, key)."""
    all_columns = scenario_columns(kind)
    columns = [c for c in all_columns if c.role in ("meta", "input")]
    sheet_columns = _stream_sheet(z, path, sheet, all_columns, sheet_names, strings, dates)
    index = {c.key: i for i, c in enumerate(all_columns)}
    series, meta, formula_rows = _split_columns(sheet_columns, columns, index, kind)
    marked = _marked_cells(sheet_columns, columns, index, formula_rows)
    return _records_of(sheet_columns, meta, formula_rows), series, marked


def _stream_sheet(z: zipfile.ZipFile, path: Path, sheet: str, all_columns: tuple[Column, ...],
                  sheet_names: dict[str, str], strings: list[str], dates: frozenset[int]
                  ) -> SheetColumns:
    """A scenario sheet's meta and input columns streamed, too many new rows refused (counted
    first when the part is large) and its header checked."""
    keep = [i for i, c in enumerate(all_columns, 1) if c.role in ("meta", "input")]
    at = {c.key: i for i, c in enumerate(all_columns, 1)}
    if part_size(z, sheet_names.get(sheet)) > PRE_COUNT_BYTES:  # count before keeping
        _refuse_many_new(path, sheet, read_sheet(
            z, path, sheet, [at["id"], at["name"]], len(all_columns), strings, dates),
            at["id"] - 1, at["name"] - 1)
    sheet_columns = read_sheet(z, path, sheet, keep, len(all_columns), strings, dates)
    _refuse_many_new(path, sheet, sheet_columns, at["id"] - 1, at["name"] - 1)
    _check_header(path, sheet, [c.header for c in all_columns], sheet_columns.header)
    return sheet_columns


def _marked_cells(sheet_columns: SheetColumns, columns: list[Any], index: dict[str, int],
                  formula_rows: dict[int, set[str]]) -> dict[tuple[int, str], str]:
    """The reason of each date, error value or NaN cell by (record index, key); each such
    cell is added to its row's refused keys, like a formula cell."""
    marked: dict[tuple[int, str], str] = {}
    for c in columns:
        for i, mark in sheet_columns.marked(index[c.key]).items():
            marked[(i, c.key)] = mark.reason()
            formula_rows.setdefault(i, set()).add(c.key)
    return marked


def _records_of(sheet_columns: SheetColumns, meta: dict[str, list[Any]],
                formula_rows: dict[int, set[str]]) -> list[Record]:
    """Per row a :data:`Record`: its sheet row, its meta cells (a refused one as ``None``)
    and the keys of its refused cells."""
    rows_of = sheet_columns.rows.tolist()
    records: list[Record] = []
    for i in range(sheet_columns.n):
        cell = {k: v[i] for k, v in meta.items()}
        for key in formula_rows.get(i, set()):
            cell[key] = None
        records.append((rows_of[i], cell, formula_rows.get(i, set())))
    return records


def _split_columns(sheet_columns: Any, columns: list[Any], index: dict[str, int], kind: str
                   ) -> tuple[dict[str, Any], dict[str, list[Any]], dict[int, set[str]]]:
    """Each kept column read once: the inputs as Series (numbers parsed for the numeric
    ones, for the column checks), the other fields as Python values per row, and per row the
    keys of its formula cells (rare: only rows that have one)."""
    inputs = {c.name for c in inputs_of(kind) if c.kind in ("int", "float")}
    names = {c.name for c in inputs_of(kind)}
    series: dict[str, Any] = {}
    meta: dict[str, list[Any]] = {}
    formula_rows: dict[int, set[str]] = {}
    for c in columns:
        values, formula = sheet_columns.values(index[c.key], numeric=c.key in inputs,
                                               strip=c.key != "notes")
        if c.key in names:
            series[c.key] = values
        else:
            meta[c.key] = values.tolist()
        for i in np.flatnonzero(formula).tolist():
            formula_rows.setdefault(i, set()).add(c.key)
    return series, meta, formula_rows


def _check_header(path: Path, sheet: str, expected: list[str], header: list[Any]) -> None:
    """Refuse a header row other than the layout's, naming the first cell that differs."""
    got = [str(h) if h not in (None, "") else "" for h in header]
    if got[:len(expected)] != expected or any(got[len(expected):]):
        bad = next((i for i, (g, e) in enumerate(zip(got, expected, strict=False))
                    if g != e), min(len(got), len(expected)))
        raise ImportError_(path, problem=(
            f"{sheet}!{get_column_letter(bad + 1)}1: unexpected header "
            f"{got[bad] if bad < len(got) else '(missing)'!r}; expected "
            f"{expected[bad] if bad < len(expected) else '(nothing)'!r}"))


@dataclass(slots=True)
class _Rows:
    """The rows of the scenario sheets turned into plans and errors, against the database's
    scenarios (``existing``), models, GPUs and fleets; an id seen on an earlier row is kept
    in ``seen_ids`` (each may appear once over all sheets)."""

    existing: dict[int, Any]
    models: dict[str, ModelSpec]
    gpus: dict[str, GpuSpec]
    default_fleet: str | None
    fleets: set[str]
    plans: list[RowPlan] = field(default_factory=list)
    errors: list[CellError] = field(default_factory=list)
    seen_ids: dict[int, str] = field(default_factory=dict)
    lower_models: dict[str, str] = field(default_factory=dict)
    lower_gpus: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.lower_models = {k.lower(): k for k in self.models}
        self.lower_gpus = {k.lower(): k for k in self.gpus}

    def sheet(self, sheet: str, kind: str, records: list[Record], series: dict[str, Any],
              marked: dict[tuple[int, str], str]) -> None:
        """Check a sheet's records column-wise, then plan each row (or list its errors)."""
        inputs = {c.name: c for c in inputs_of(kind)}
        checked = check_columns(records, series, kind, inputs, self.lower_models,
                                 self.lower_gpus, self.models, self.gpus)
        index = {c.key: i for i, c in enumerate(scenario_columns(kind))}
        for i, (r, cell, formula_keys) in enumerate(records):
            row = _Row(sheet, kind, r, index, [])
            for key in sorted(formula_keys, key=index.__getitem__):
                row.bad(key, marked.get((i, key)) or "is a formula; the import reads typed "
                                                     "values only (replace it with its value)")
            parsed: dict[str, Any] = {}
            for key in inputs:
                if key in formula_keys:
                    continue
                problem = checked.errors[key].get(i)
                if problem is not None:
                    row.bad(key, problem)
                else:
                    parsed[key] = checked.values[key][i]
            self._row(row, cell, formula_keys, parsed, checked.rules.get(i))

    def _row(self, row: _Row, cell: dict[str, Any], formula_keys: set[str],
             parsed: dict[str, Any], rule: tuple[str, str] | None) -> None:
        """One row's meta cells checked; its plan, or its errors."""
        model, gpu = self._names(row, cell, formula_keys)
        sid, current = self._id(row, cell["id"])
        version = _version(row, cell, current is not None, formula_keys)
        fleet = self._fleet(row, cell["fleet"] or self.default_fleet, cell["id"], current, sid)
        if not row.errors and model and gpu and rule is not None:
            row.bad(rule[0] if rule[0] in row.index else "model", rule[1])
        chosen = cell.get("chosen")
        if chosen is not None and not isinstance(chosen, bool):
            row.bad("chosen", f"must be TRUE or FALSE, got {chosen!r}")
        if row.errors:
            self.errors += row.errors
            return
        self._plan(row, _fields(row.kind, cell, model, gpu, parsed), str(fleet), sid, version,
                   current)

    def _names(self, row: _Row, cell: dict[str, Any], formula_keys: set[str]
               ) -> tuple[str | None, str | None]:
        """The row's model and GPU by their catalog names (any case); an unknown one, or an
        empty scenario name, is refused."""
        model = self.lower_models.get(str(cell["model"] or "").lower())
        gpu = self.lower_gpus.get(str(cell["gpu"] or "").lower())
        if model is None and "model" not in formula_keys:
            row.bad("model", f"unknown model {cell['model']!r}")
        if gpu is None and "gpu" not in formula_keys:
            row.bad("gpu", f"unknown GPU {cell['gpu']!r}")
        if not cell["name"] and "name" not in formula_keys:
            row.bad("name", "is empty")
        return model, gpu

    def _id(self, row: _Row, raw_id: Any) -> tuple[int | None, Any]:
        """The row's scenario id and the scenario it names: an id no scenario has, one of the
        other kind's sheet, or one already seen is refused."""
        sid = integer(raw_id)
        current = self.existing.get(sid) if sid is not None else None
        if raw_id is not None and current is None:
            row.bad("id", f"no scenario has id {raw_id!r} (leave it empty to create one)")
        elif current is not None and current.kind != row.kind:
            row.bad("id", f"scenario {sid} ({current.fleet}/{current.name}) is a "
                          f"{current.kind} scenario; its row belongs on the "
                          f"{SCENARIO_SHEETS.get(current.kind, current.kind)} sheet")
        elif current is not None and sid in self.seen_ids:
            row.bad("id", f"scenario {sid} is also on {self.seen_ids[sid]}; each id may "
                          "appear once")
        if sid is not None:
            self.seen_ids.setdefault(sid, f"{row.sheet} row {row.r}")
        return sid, current

    def _fleet(self, row: _Row, fleet: Any, raw_id: Any, current: Any, sid: int | None
               ) -> Any:
        """The row's fleet: given (or ``--fleet``), known for a new row, the scenario's own
        for an update (moving between fleets is a copy)."""
        if not fleet:
            row.bad("fleet", "is empty and no --fleet was given")
        elif raw_id is None and fleet not in self.fleets:
            row.bad("fleet", f"unknown fleet {fleet!r}")
        elif current is not None and current.fleet != fleet:
            row.bad("fleet", f"scenario {sid} is in fleet {current.fleet!r}; moving "
                             "between fleets is `planner scenario copy`")
        return fleet

    def _plan(self, row: _Row, fields: dict[str, Any], fleet: str, sid: int | None,
              version: int | None, current: Any) -> None:
        """A new scenario with every field, or an update of only the fields that differ,
        guarded by the exported version."""
        if current is None:
            self.plans.append(RowPlan(row.sheet, row.r, row.kind, fleet, fields["name"], None,
                                      None, {**fields, "kind": row.kind}))
            return
        now = {"model": current.model, "gpu": current.gpu, "notes": current.notes,
               "name": current.name, "lora_targets": current.lora_targets,
               "option_of": current.option_of, "chosen": current.chosen, **current.inputs}
        changed = {k: v for k, v in fields.items() if not same_value(now.get(k), v)}
        if changed and version != current.version:
            row.bad("version", f"scenario {current.fleet}/{current.name} was changed by "
                               f"someone else since the export (exported version {version}, "
                               f"now {current.version}); export again and redo the edit")
            self.errors += row.errors
            return
        self.plans.append(RowPlan(row.sheet, row.r, row.kind, current.fleet, current.name, sid,
                                  version, changed))


def _fields(kind: str, cell: dict[str, Any], model: str | None, gpu: str | None,
            parsed: dict[str, Any]) -> dict[str, Any]:
    """Every field a checked row sets: its meta cells (model and GPU by their catalog names)
    and its parsed inputs."""
    fields: dict[str, Any] = {
        "model": model, "gpu": gpu, "notes": str(cell["notes"] or ""),
        "name": str(cell["name"]), **parsed,
        "option_of": str(cell["option_of"]) if cell.get("option_of") else None}
    if cell.get("chosen") is not None:
        fields["chosen"] = cell["chosen"]
    if kind == "training":
        fields["lora_targets"] = str(cell.get("lora_targets") or "q,v")
    return fields


@dataclass(slots=True)
class _Row:
    """One sheet row being checked: where it is and its errors so far."""

    sheet: str
    kind: str
    r: int
    index: dict[str, int]
    errors: list[CellError]

    def bad(self, key: str, reason: str) -> None:
        """Record a bad cell of column ``key`` in this row."""
        self.errors.append(CellError(self.sheet, f"{get_column_letter(self.index[key] + 1)}"
                                     f"{self.r}", key, reason))


def _version(row: _Row, cell: dict[str, Any], existing: bool,
             formula_keys: set[str]) -> int | None:
    """The row's version cell as an integer; an existing scenario's row without one (and not
    a formula, refused already) is refused: the version guards against overwriting someone
    else's edit."""
    version = integer(cell["version"])
    if existing and version is None and "version" not in formula_keys:
        row.bad("version", f"must be the version number the row was exported with (an "
                           f"integer), got {cell['version']!r}; it guards against "
                           "overwriting someone else's edit")
    return version


def _name_clashes(plans: list[RowPlan], existing: dict[int, Any]) -> list[CellError]:
    """A new or renamed row may not take a name another scenario of its fleet has now (even
    one renamed by the same workbook: rows are applied one by one) or that another row takes."""
    held = {(sc.fleet, sc.name): sc.id for sc in existing.values()}
    taken: dict[tuple[str, str], RowPlan] = {}
    out = []
    for plan in plans:
        name = plan.fields.get("name") if plan.id is None or "name" in plan.fields else None
        if name is None:
            continue
        key = (plan.fleet, name)
        where = f"{letters(plan.kind)['name']}{plan.row}"
        owner = held.get(key)
        if owner is not None and owner != plan.id:
            out.append(CellError(plan.sheet, where, "name", f"fleet {plan.fleet!r} already has "
                                 f"a scenario named {name!r} (id {owner}); free the name in "
                                 "one import, then use it in the next"))
        elif key in taken:
            first = taken[key]
            out.append(CellError(plan.sheet, where, "name", f"{name!r} is also the name on "
                                 f"{first.sheet} row {first.row}; names in a fleet are unique"))
        taken.setdefault(key, plan)
    return out
