"""Read a report's scenario inputs back: validate every cell, then plan the changes.

Cells are validated a column at a time (:mod:`planner.sheet.checks`, the checks of
``planner scenario import``): each distinct text is parsed once, numbers are range-checked as
arrays, and the rules across columns run once per distinct model, GPU and dtype.

Rows are keyed by the ``id`` column: a row with an id updates that scenario (only the fields
that differ, guarded by the row's ``version``), a row without one creates a scenario. Every bad
cell is reported with its sheet, cell address, column and reason, all at once; the plan is
applied by the workspace in one transaction, or not at all.

Nothing in the file is trusted. The scenario sheets are streamed
(:mod:`planner.report.sheetstream`): only their meta and input columns are kept, as compact
arrays, so memory does not grow with the grid a used range spans; a cell beyond the layout
(:data:`MAX_ROWS` rows, the sheet's columns) or an oversized part is refused naming it, so a
single cell at ``XFD1048576`` or a million-row XML bomb costs one pass and no grid. The small
GPUs sheet is streamed the same way (at most :data:`MAX_GPU_ROWS` rows). The file is opened
once, as a regular file of at most :data:`MAX_WORKBOOK_BYTES` (:mod:`planner.files`), and
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

from planner.errors import PlannerError
from planner.estimator.architecture import ModelSpec
from planner.estimator.gpu import GpuSpec
from planner.files import FileRefused, open_regular
from planner.report.fastsheet import xml_safe
from planner.report.layout import (
    GPU_EDITABLE,
    GPU_SHEET,
    GPU_TEXT,
    GPU_THROUGHPUT,
    KNOWN_SHEETS,
    SCENARIO_SHEETS,
    gpu_sheet_record,
    letters,
    scenario_columns,
)
from planner.report.sheetstream import (
    Marked,
    SheetColumns,
    SheetRefused,
    date_styles,
    read_columns,
    shared_strings,
    sheet_parts,
)
from planner.sheet.checks import Problems, check_column, check_rules
from planner.sheet.table import inputs_of


@dataclass(frozen=True, slots=True)
class CellError:
    """One bad cell."""

    sheet: str
    cell: str
    column: str
    reason: str

    def __str__(self) -> str:
        return f"{self.sheet}!{self.cell} ({self.column}): {self.reason}"


class ImportError_(PlannerError):  # avoids shadowing the builtin ImportError
    """A workbook that cannot be imported; lists every problem. Nothing was changed."""

    def __init__(self, path: Path, errors: list[CellError] | None = None,
                 problem: str = "") -> None:
        self.errors = errors or []
        lines = [problem] if problem else []
        lines += [str(e) for e in self.errors[:50]]
        if len(self.errors) > 50:
            lines.append(f"… and {len(self.errors) - 50} more")
        head = f"{path}: nothing imported"
        super().__init__(head + (":\n  " + "\n  ".join(lines) if lines else ""))


@dataclass(slots=True)
class RowPlan:
    """What one sheet row changes: an update of scenario ``id`` or a new scenario."""

    sheet: str
    row: int
    kind: str
    fleet: str
    name: str
    id: int | None
    version: int | None
    fields: dict[str, Any] = field(default_factory=dict)
    """For an update: only the fields that differ. For a new row: every field."""


MAX_ROWS = 1_048_575
"""Most scenario rows a sheet may hold: Excel's 1,048,576 rows less the header. The scenario
sheets are streamed (:mod:`planner.report.sheetstream`), so memory grows by about 13 bytes per
kept cell, never with the grid the used range spans."""
MAX_SHEET_BYTES = 1 << 34
"""Largest uncompressed sheet XML read (16 GiB: 100,000 exported scenarios take about 1.5 GB,
a sheet full to Excel's last row about 16 GB; streamed, so this bounds time, not memory)."""
MAX_STRINGS_BYTES = 256 << 20
"""Largest uncompressed shared-string table read."""
MAX_WORKBOOK_BYTES = 4 << 30
"""Largest .xlsx file opened (compressed; 100,000 exported scenarios take about 150 MB)."""
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
MAX_GPU_ROWS = 10_000
"""Most GPU rows the GPUs sheet may hold (the catalog ships about 40)."""


def _too_big(path: Path, what: str, limit: int) -> ImportError_:
    return ImportError_(path, problem=f"{what} is larger than {limit >> 20:,} MiB uncompressed; "
                        "a planner report is far smaller")


def _read_sheet(z: zipfile.ZipFile, path: Path, sheet: str, keep: list[int], width: int,
                strings: list[str], dates: frozenset[int], max_rows: int = MAX_ROWS,
                rows_are: str = "scenario rows") -> SheetColumns:
    """The columns ``keep`` (1 is A) of sheet ``sheet``, streamed
    (:func:`planner.report.sheetstream.read_columns`); a sheet beyond the layout
    (``max_rows`` rows, ``width`` columns), larger than :data:`MAX_SHEET_BYTES` or not
    readable is refused naming the first cell outside or what is wrong."""
    limit = f"{get_column_letter(width)}{max_rows + 1}"
    try:
        member = sheet_parts(z).get(sheet)
        if member is None or member not in set(z.namelist()):
            raise ImportError_(path, problem=f"sheet {sheet} has no worksheet part")
        return read_columns(z, member, keep=keep, width=width, max_rows=max_rows,
                            max_bytes=MAX_SHEET_BYTES, strings=strings, dates=dates)
    except SheetRefused as exc:
        if exc.cell:
            raise ImportError_(path, problem=(
                f"{sheet}!{exc.cell}: outside the planner's layout (at most {max_rows:,} "
                f"{rows_are} and {width} columns, A1:{limit}); clear that cell (and the "
                "range up to it) and save again")) from None
        raise ImportError_(path, problem=f"sheet {sheet} {exc.what}") from None
    except (zipfile.BadZipFile, KeyError, OSError, EOFError, UnicodeError,
            zipfile.LargeZipFile, NotImplementedError) as exc:
        raise PlannerError(f"{path}: not a readable .xlsx workbook ({exc})") from exc


def _part_size(z: zipfile.ZipFile, member: str | None) -> int:
    """The uncompressed size the zip states for ``member`` (0 if it has none)."""
    try:
        return z.getinfo(member).file_size if member else 0
    except KeyError:
        return 0


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


def open_workbook(path: Path) -> tuple[Any, zipfile.ZipFile]:
    """(file, zip) of the .xlsx at ``path``: a regular file of at most
    :data:`MAX_WORKBOOK_BYTES` (:func:`planner.files.open_regular`: a FIFO or device is
    refused before reading), opened as a zip; a :class:`PlannerError` naming it otherwise."""
    try:
        fh = open_regular(path, MAX_WORKBOOK_BYTES, "planner report (.xlsx)")
    except FileRefused as exc:
        raise PlannerError(str(exc)) from None
    try:
        return fh, zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        fh.close()
        raise PlannerError(f"{path}: not a readable .xlsx workbook ({exc})") from None


def _clean(value: Any, *, verbatim: bool = False) -> Any:
    """A cell's value: text stripped (``verbatim`` keeps free text such as notes exactly as
    written, so a round trip keeps its leading tab or line break); empty text is ``None``."""
    if isinstance(value, str):
        if not verbatim:
            value = value.strip()
        return value if value != "" else None
    return value


def _integer(value: Any) -> int | None:
    """``value`` as an integer if it is one (an integral number, not a flag), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)


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
    unknown = [s for s in sheet_names
               if s not in KNOWN_SHEETS and not s.startswith(("Sweep ", "Plan ")) and s != "Plan"]
    if unknown:
        raise ImportError_(path, problem=f"unknown sheet(s) {', '.join(unknown)}; a planner "
                           f"report has {', '.join(KNOWN_SHEETS)}, 'Sweep N' and 'Plan' sheets")
    present = [kind for kind, sheet in SCENARIO_SHEETS.items() if sheet in sheet_names]
    if not present:
        raise ImportError_(path, problem="no Scenarios or Training sheet")
    errors: list[CellError] = []
    plans: list[RowPlan] = []
    lower_models = {k.lower(): k for k in models}
    lower_gpus = {k.lower(): k for k in gpus}
    seen_ids: dict[int, str] = {}
    try:
        strings = shared_strings(z, MAX_STRINGS_BYTES, lambda: _too_big(
            path, "the shared string table", MAX_STRINGS_BYTES))
        dates = date_styles(z)
    except (zipfile.BadZipFile, KeyError, OSError, EOFError) as exc:
        raise PlannerError(f"{path}: not a readable .xlsx workbook ({exc})") from exc
    for kind in present:
        sheet = SCENARIO_SHEETS[kind]
        all_columns = scenario_columns(kind)
        columns = [c for c in all_columns if c.role in ("meta", "input")]
        keep = [i for i, c in enumerate(all_columns, 1) if c.role in ("meta", "input")]
        at = {c.key: i for i, c in enumerate(all_columns, 1)}
        if _part_size(z, sheet_names.get(sheet)) > PRE_COUNT_BYTES:  # count before keeping
            _refuse_many_new(path, sheet, _read_sheet(
                z, path, sheet, [at["id"], at["name"]], len(all_columns), strings, dates),
                at["id"] - 1, at["name"] - 1)
        sheet_columns = _read_sheet(z, path, sheet, keep, len(all_columns), strings, dates)
        _refuse_many_new(path, sheet, sheet_columns, at["id"] - 1, at["name"] - 1)
        header = sheet_columns.header
        expected = [c.header for c in all_columns]
        got = [str(h) if h not in (None, "") else "" for h in header]
        if got[:len(expected)] != expected or any(got[len(expected):]):
            bad = next((i for i, (g, e) in enumerate(zip(got, expected, strict=False))
                        if g != e), min(len(got), len(expected)))
            raise ImportError_(path, problem=(
                f"{sheet}!{get_column_letter(bad + 1)}1: unexpected header "
                f"{got[bad] if bad < len(got) else '(missing)'!r}; expected "
                f"{expected[bad] if bad < len(expected) else '(nothing)'!r}"))
        index = {c.key: i for i, c in enumerate(all_columns)}
        inputs = {c.name: c for c in inputs_of(kind)}
        # each kept column once: inputs as Series for the column checks, the other fields as
        # Python values per row; formula cells per row (rare: only rows that have one)
        series: dict[str, Any] = {}
        formula: dict[str, Any] = {}
        meta: dict[str, list[Any]] = {}
        for c in columns:
            numeric = c.key in inputs and inputs[c.key].kind in ("int", "float")
            values, formula[c.key] = sheet_columns.values(index[c.key], numeric=numeric,
                                                          strip=c.key != "notes")
            if c.key in inputs:
                series[c.key] = values
            else:
                meta[c.key] = values.tolist()
        n = sheet_columns.n
        rows_of = sheet_columns.rows.tolist()
        formula_rows: dict[int, set[str]] = {}
        for key, mask in formula.items():
            for i in np.flatnonzero(mask).tolist():
                formula_rows.setdefault(i, set()).add(key)
        # a date, an error value or a NaN: refused like a formula cell, with its own reason
        marked: dict[tuple[int, str], str] = {}
        for c in columns:
            for i, mark in sheet_columns.marked(index[c.key]).items():
                marked[(i, c.key)] = mark.reason()
                formula_rows.setdefault(i, set()).add(c.key)
        records: list[tuple[int, dict[str, Any], set[str]]] = []
        meta_keys = list(meta)
        for i, values in enumerate(zip(*(meta[k] for k in meta_keys), strict=True)):
            cell = dict(zip(meta_keys, values, strict=True))
            formula_keys = formula_rows.get(i, set())
            for key in formula_keys:
                cell[key] = None
            records.append((rows_of[i], cell, formula_keys))
        if not meta_keys:
            records = [(rows_of[i], {}, formula_rows.get(i, set())) for i in range(n)]
        checked = _check_columns(records, series, kind, inputs, lower_models, lower_gpus,
                                 models, gpus)
        del series
        for i, (r, cell, formula_keys) in enumerate(records):
            row_errors: list[CellError] = []

            def bad(key: str, reason: str, r: int = r, row_errors: list = row_errors,
                    sheet: str = sheet, index: dict = index) -> None:
                row_errors.append(CellError(sheet, f"{get_column_letter(index[key] + 1)}{r}",
                                            key, reason))

            for key in sorted(formula_keys, key=index.__getitem__):
                bad(key, marked.get((i, key)) or "is a formula; the import reads typed values "
                                                  "only (replace it with its value)")
            parsed: dict[str, Any] = {}
            for key in inputs:
                if key in formula_keys:
                    continue
                problem = checked.errors[key].get(i)
                if problem is not None:
                    bad(key, problem)
                else:
                    parsed[key] = checked.values[key][i]
            model = lower_models.get(str(cell["model"] or "").lower())
            gpu = lower_gpus.get(str(cell["gpu"] or "").lower())
            if model is None and "model" not in formula_keys:
                bad("model", f"unknown model {cell['model']!r}")
            if gpu is None and "gpu" not in formula_keys:
                bad("gpu", f"unknown GPU {cell['gpu']!r}")
            if not cell["name"] and "name" not in formula_keys:
                bad("name", "is empty")
            raw_id = cell["id"]
            sid = _integer(raw_id)
            current = existing.get(sid) if sid is not None else None
            if raw_id is not None and current is None:
                bad("id", f"no scenario has id {raw_id!r} (leave it empty to create one)")
            elif current is not None and current.kind != kind:
                bad("id", f"scenario {sid} ({current.fleet}/{current.name}) is a "
                          f"{current.kind} scenario; its row belongs on the "
                          f"{SCENARIO_SHEETS.get(current.kind, current.kind)} sheet")
            elif current is not None and sid in seen_ids:
                bad("id", f"scenario {sid} is also on {seen_ids[sid]}; each id may appear once")
            if sid is not None:
                seen_ids.setdefault(sid, f"{sheet} row {r}")
            version = _integer(cell["version"])
            if current is not None and version is None and "version" not in formula_keys:
                bad("version", f"must be the version number the row was exported with (an "
                               f"integer), got {cell['version']!r}; it guards against "
                               "overwriting someone else's edit")
            fleet = cell["fleet"] or default_fleet
            if not fleet:
                bad("fleet", "is empty and no --fleet was given")
            elif raw_id is None and fleet not in fleets:
                bad("fleet", f"unknown fleet {fleet!r}")
            elif current is not None and current.fleet != fleet:
                bad("fleet", f"scenario {sid} is in fleet {current.fleet!r}; moving "
                             "between fleets is `planner scenario copy`")
            lora_targets = str(cell.get("lora_targets") or "q,v")
            rule = checked.rules.get(i)
            if not row_errors and model and gpu and rule is not None:
                bad(rule[0] if rule[0] in index else "model", rule[1])
            chosen = cell.get("chosen")
            if chosen is not None and not isinstance(chosen, bool):
                bad("chosen", f"must be TRUE or FALSE, got {chosen!r}")
            fields: dict[str, Any] = {}
            if not row_errors:
                fields = {"model": model, "gpu": gpu, "notes": str(cell["notes"] or ""),
                          "name": str(cell["name"]), **parsed,
                          "option_of": str(cell["option_of"]) if cell.get("option_of")
                          else None}
                if chosen is not None:
                    fields["chosen"] = chosen
                if kind == "training":
                    fields["lora_targets"] = lora_targets
            if row_errors:
                errors += row_errors
                continue
            if current is None:
                plans.append(RowPlan(sheet, r, kind, str(fleet), fields["name"], None, None,
                                     {**fields, "kind": kind}))
                continue
            now = {"model": current.model, "gpu": current.gpu, "notes": current.notes,
                   "name": current.name, "lora_targets": current.lora_targets,
                   "option_of": current.option_of, "chosen": current.chosen,
                   **current.inputs}
            changed = {k: v for k, v in fields.items() if not _same(now.get(k), v)}
            if changed and version != current.version:
                bad("version", f"scenario {current.fleet}/{current.name} was changed by someone "
                               f"else since the export (exported version {version}, now "
                               f"{current.version}); export again and redo the edit")
                errors += row_errors
                continue
            plans.append(RowPlan(sheet, r, kind, current.fleet, current.name, sid, version,
                                 changed))
    if gpu_versions is not None and "GPUs" in sheet_names:
        table, formulas, marks = _gpu_table(z, path, strings, dates)
        gpu_plans, gpu_errors = read_gpu_sheet(path, table, gpus, gpu_versions, formulas,
                                               marks)
        plans += gpu_plans
        errors += gpu_errors
    errors += _name_clashes([p for p in plans if p.kind != "gpu"], existing)
    if errors:
        raise ImportError_(path, errors)
    return plans


@dataclass(slots=True)
class _Checked:
    """A sheet's input columns checked column-wise: per input, the parsed value of each
    record and the problem of each bad one (by record index); per record, the first rule
    across columns it breaks (column, reason)."""

    values: dict[str, list[Any]]
    errors: dict[str, dict[int, str]]
    rules: dict[int, tuple[str, str]]


def _check_columns(records: list[tuple[int, dict[str, Any], set[str]]],
                   columns: dict[str, Any], kind: str, inputs: dict[str, Any],
                   lower_models: dict[str, str], lower_gpus: dict[str, str],
                   models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> _Checked:
    """Every input cell of ``records`` (``columns``: per input, its cells as a Series, one
    per record; a missing column is all empty) validated one column at a time
    (:func:`planner.sheet.checks.check_column`: each distinct text parsed once, numbers
    checked as arrays), then the rules across columns once per distinct model, GPU and dtype
    (:func:`planner.sheet.checks.check_rules`) over the rows whose cells are each valid."""
    import numpy as np
    import pandas as pd

    n = len(records)
    values: dict[str, list[Any]] = {}
    errors: dict[str, dict[int, str]] = {}
    arrays: dict[str, Any] = {}
    ok = np.ones(n, dtype=bool)
    for key, spec in inputs.items():
        series = columns.get(key)
        if series is None:
            series = pd.Series([None] * n, dtype=object)
        skip = np.fromiter((key in f for _r, _c, f in records), dtype=bool, count=n)
        problems = Problems(cap=n + 1)
        arrays[key], wrong = check_column(spec, series, problems, show_value=False, skip=skip)
        values[key] = arrays[key].tolist()
        errors[key] = {p.row: p.message for p in problems.items}
        ok &= ~wrong & ~skip
    model_names = np.array([lower_models.get(str(cell["model"] or "").lower()) or ""
                            for _r, cell, _f in records], dtype=object)
    gpu_names = np.array([lower_gpus.get(str(cell["gpu"] or "").lower()) or ""
                          for _r, cell, _f in records], dtype=object)
    targets = np.array([str(cell.get("lora_targets") or "q,v") for _r, cell, _f in records],
                       dtype=object)
    ok &= (model_names != "") & (gpu_names != "")
    ok &= np.fromiter((not f for _r, _c, f in records), dtype=bool, count=n)
    rules = Problems(cap=n + 1)
    check_rules(ok, np.full(n, kind == "training"), model_names, gpu_names, arrays, targets,
                models, gpus, None, rules, calibration=False)
    first: dict[int, tuple[str, str]] = {}
    for p in rules.items:
        first.setdefault(p.row, (p.column, p.message))
    return _Checked(values, errors, first)


def _gpu_same(exported: Any, value: Any) -> bool:
    if value in (None, "") or exported in (None, ""):
        return value in (None, "") and exported in (None, "")
    if isinstance(exported, bool) or isinstance(value, bool):
        return isinstance(value, bool) and value == bool(exported)
    if isinstance(exported, (int, float)) and isinstance(value, (int, float)):
        return same_number(float(value), float(exported))
    return _text(value) == _text(exported)


def _text(value: Any) -> str:
    """Text as a workbook carries it back: line breaks as LF (XML reads a raw CR as LF),
    characters XML cannot hold as U+FFFD (as export writes them), outer blanks dropped."""
    return xml_safe(str(value).replace("\r\n", "\n").replace("\r", "\n")).strip()


def _gpu_table(z: zipfile.ZipFile, path: Path, strings: list[str], dates: frozenset[int]
               ) -> tuple[list[list[Any]], set[tuple[int, int]], dict[tuple[int, int], Marked]]:
    """The GPUs sheet streamed (at most :data:`MAX_GPU_ROWS` rows, the layout's columns):
    its rows from row 1 as lists of values, the (row, column) of each formula cell and each
    :class:`~planner.report.sheetstream.Marked` cell (a date, an error value, a NaN)."""
    width = len(GPU_SHEET)
    cols = _read_sheet(z, path, "GPUs", list(range(1, width + 1)), width, strings, dates,
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
    errors: list[CellError] = []
    plans: list[RowPlan] = []
    headers = [h for _k, h, _kind, _f in GPU_SHEET]
    rows = iter(table)
    got = [str(h) if h not in (None, "") else "" for h in (next(rows, None) or ())]
    if got[:len(headers)] != headers or any(got[len(headers):]):
        bad = next((i for i, (g, e) in enumerate(zip(got, headers, strict=False)) if g != e),
                   min(len(got), len(headers)))
        found = got[bad] if bad < len(got) else "(missing)"
        wanted = headers[bad] if bad < len(headers) else "(nothing)"
        return [], [CellError("GPUs", f"{get_column_letter(bad + 1)}1", "header",
                              f"unexpected header {found!r}; expected {wanted!r}")]
    index = {key: i for i, (key, *_r) in enumerate(GPU_SHEET)}
    lower = {name.lower(): name for name in gpus}
    seen: dict[str, int] = {}
    for r, values in enumerate(rows, 2):
        cells = list(values or ()) + [None] * (len(GPU_SHEET) - len(values or ()))
        if all(v in (None, "") for v in cells[:len(GPU_SHEET)]):
            continue

        def bad(key: str, reason: str, r: int = r) -> None:
            errors.append(CellError("GPUs", f"{get_column_letter(index[key] + 1)}{r}", key,
                                    reason))

        marked = [(key, m) for j, (key, *_r) in enumerate(GPU_SHEET)
                  if (m := (marks or {}).get((r, j + 1))) is not None]
        for key, m in marked:
            bad(key, m.reason())
        if marked:
            continue
        raw = str(cells[index["name"]] or "").strip()
        name = lower.get(raw.lower())
        if name is None:
            bad("name", f"unknown GPU {raw!r}; the GPUs sheet edits the catalog's GPUs (add a "
                        "GPU with planner gpu add)")
            continue
        if name in seen:
            bad("name", f"{name!r} is also on row {seen[name]}; each GPU may appear once")
            continue
        seen[name] = r
        for j, (key, header, kind, _f) in enumerate(GPU_SHEET):
            if kind != "value" and (r, j + 1) not in formulas:
                source = kind.removeprefix("={").split("}")[0]
                bad(key, f"{header} is computed from {source}; edit "
                         f"{get_column_letter(index[source] + 1)}{r} instead and keep this "
                         "cell's formula")
        exported = gpu_sheet_record(gpus[name], versions.get(name, 0))
        changed: dict[str, Any] = {}
        for key in GPU_EDITABLE:
            value = cells[index[key]]
            if isinstance(value, str) and key not in GPU_TEXT:
                value = value.strip()
            if not _gpu_same(exported.get(key), value):
                if value in (None, "") and key in GPU_TEXT:
                    value = ""
                elif value in (None, "") and key in GPU_THROUGHPUT:
                    value = 0  # an emptied throughput: the GPU lacks that dtype
                changed[key] = value
        if not changed:
            continue
        version = _integer(cells[index["version"]])
        if version != versions.get(name):
            bad("version", f"GPU {name!r} was changed since the export (exported version "
                           f"{cells[index['version']]!r}, now {versions.get(name)}); export "
                           "again and redo the edit")
            continue
        plans.append(RowPlan("GPUs", r, "gpu", "", name, None, version, changed))
    return plans, errors


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


SIGNIFICANT_DIGITS = 15
"""Digits of a number that a spreadsheet keeps (Excel shows and LibreOffice writes 15): two
numbers equal to that many significant digits are the same value, so a tool that rewrites
floats (0.30000000000000004 as 0.3) changes nothing on import."""


def same_number(a: float, b: float) -> bool:
    """Whether ``a`` and ``b`` agree to :data:`SIGNIFICANT_DIGITS` significant digits."""
    return a == b or f"{a:.{SIGNIFICANT_DIGITS - 1}e}" == f"{b:.{SIGNIFICANT_DIGITS - 1}e}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return same_number(float(a), float(b))
    return a == b
