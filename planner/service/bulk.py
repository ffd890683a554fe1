"""Bulk import: a whole table of new scenarios (a CSV, .xlsx or Parquet file, or a pandas
DataFrame) validated in one column-wise pass and written in one transaction, or not at all.

1. The file is read whole (:func:`planner.io.tables.read_table`).
2. :func:`planner.compute.checks.check_table` checks every cell column by column (types,
   ranges, allowed values, unknown models and GPUs, names repeated in the file or already in
   the fleet) and the rules across columns once per distinct combination. Every problem is
   reported as ``FILE:line (column): message``; the first 20 are listed
   with the total count, and nothing is written.
3. The rows go in with batched INSERTs (PostgreSQL: ``COPY``) inside one write transaction
   (:mod:`planner.store.bulk`); the database checks its constraints on every row. A dry run
   does all of that and rolls the transaction back, so it refuses exactly what the import
   refuses.

A name the fleet already has is refused by default (``on_clash="refuse"``); ``"replace"``
overwrites that scenario (a version-guarded update logged as one change set, so undo
reverts it), ``"skip"`` keeps it and leaves the row out. Creating scenarios writes no change
log, as creating one scenario does not.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from planner.core.errors import NotFoundError, PlannerError
from planner.service.catalog_edits import model_row_by_ref
from planner.service.evaluation import Evaluation
from planner.service.hub import parse_hub_id
from planner.service.specs import SpecCache
from planner.store import bulk, queries
from planner.store.engine import read_session, write_transaction
from planner.store.schema import GpuRow, ModelRow

if TYPE_CHECKING:
    from planner.compute.checks import CellProblem, CheckedTable
    from planner.compute.problems import Problems

Clash = Literal["refuse", "replace", "skip"]
CLASH_CHOICES: tuple[str, ...] = ("refuse", "replace", "skip")


@dataclass(frozen=True, slots=True)
class BulkResult:
    """What an import did (or, for a dry run, would do)."""

    fleet: str
    source: str
    rows: int
    """Data rows read."""
    created: int
    replaced: int
    """Existing scenarios overwritten (rows equal to the stored scenario change nothing)."""
    skipped: int
    """Rows left out because the fleet has their name (``on_clash="skip"``) or, with
    ``"replace"``, because they equal the stored scenario."""
    dry_run: bool


class BulkImportError(PlannerError):
    """A table that cannot be imported: lists its first problems and counts them all.
    Nothing was changed."""

    def __init__(self, source: str, problems: list[CellProblem], total: int,
                 where: Callable[[int], str]) -> None:
        self.source = source
        self.problems = problems
        self.total = total
        self.lines = [f"{where(p.row)} ({p.column}): {p.message}" for p in problems]
        more = total - len(problems)
        tail = [f"… and {more:,} more ({total:,} problems in all)"] if more > 0 else []
        super().__init__(f"{source}: nothing imported, {total:,} problem"
                         f"{'s' if total != 1 else ''}:\n  " + "\n  ".join([*self.lines,
                                                                           *tail]))


class BulkImport:
    """Bulk import of scenarios into the database behind ``engine``."""

    def __init__(self, engine: Engine, specs: SpecCache, evaluation: Evaluation) -> None:
        self.engine = engine
        self.specs = specs
        self.evaluation = evaluation

    def import_table(self, fleet: str, source: Any, *, on_clash: Clash = "refuse",
                     dry_run: bool = False, progress: Callable[[int], None] | None = None,
                     started: Callable[[int], None] | None = None) -> BulkResult:
        """Import ``source`` (a path to a .csv, .xlsx or .parquet file, or a pandas
        DataFrame) into ``fleet``: all rows or, on any problem, none (:class:`BulkImportError`
        lists them). ``started(rows)`` is called once the table is valid, ``progress(rows)``
        as rows are written."""
        if on_clash not in CLASH_CHOICES:
            raise PlannerError(f"on_clash must be one of {', '.join(CLASH_CHOICES)}, "
                               f"not {on_clash!r}")
        # lazy: the column checks import pandas, which Workspace users need not load
        from planner.compute.checks import check_table

        frame, label, where, taken = self._frame(fleet, source)
        models, gpus = self.evaluation.catalog_specs()
        problems = _header_problems(frame, label, where)
        message = (f"is already a scenario of fleet {fleet!r}; choose another name, or "
                   "replace it (--replace) or keep it (--skip-existing)"
                   if on_clash == "refuse" else "")
        table = check_table({str(k): frame[k] for k in frame.columns}, models=models,
                            gpus=gpus, profiles=self.evaluation.profiles(), taken=set(taken),
                            taken_message=message, problems=problems)
        if problems:
            raise BulkImportError(label, problems.first(), problems.total, where)
        if started:
            started(table.n)
        try:
            result = self._write(fleet, label, table, on_clash, dry_run, progress)
        except _RollBack as done:
            result = done.result
        return result

    def _frame(self, fleet: str, source: Any
               ) -> tuple[Any, str, Callable[[int], str], dict[str, tuple[int, int]]]:
        """(the table of ``source``, its label, the place of a row in it, the names ``fleet``
        already has), a model named by its Hub id read as the catalog's name for it."""
        frame, label, where = _source_frame(source)
        with read_session(self.engine) as s:
            fleet_row = queries.fleet_row(s, fleet)
            taken = bulk.existing(s, fleet_row.id)
            if "model" in frame.columns:
                frame = frame.assign(model=_named_by_hub_id(s, frame["model"]))
        return frame, label, where, taken

    def _write(self, fleet: str, label: str, table: Any, on_clash: Clash, dry_run: bool,
               progress: Callable[[int], None] | None) -> BulkResult:
        with write_transaction(self.engine) as s:
            fleet_row = queries.fleet_row(s, fleet)
            taken = bulk.existing(s, fleet_row.id, lock=True)
            model_ids, gpu_ids, columns = _row_columns(s, table)
            clash = np.fromiter((n in taken for n in table.names.tolist()), dtype=bool,
                                count=table.n)
            new_rows = np.flatnonzero(~clash)
            old_rows = np.flatnonzero(clash)
            created = bulk.insert_scenarios(s, fleet_row.id, new_rows, columns, model_ids,
                                            gpu_ids, progress=progress)
            replaced = 0
            if on_clash == "replace":
                replaced = bulk.replace_scenarios(
                    s, fleet_row.id, old_rows, [taken[table.names[r]] for r in old_rows],
                    columns, model_ids, gpu_ids, table.models, table.gpus, progress=progress)
            elif len(old_rows) and on_clash == "refuse":  # taken since the validation read
                first = table.names[old_rows[0]]
                raise PlannerError(f"{label}: fleet {fleet!r} got a scenario named {first!r} "
                                   "while the file was being checked; nothing imported")
            elif progress and len(old_rows):
                progress(len(old_rows))
            result = BulkResult(fleet, label, table.n, created, replaced,
                                table.n - created - replaced, dry_run)
            if dry_run:
                raise _RollBack(result)
        return result


def _header_problems(frame: Any, label: str, where: Callable[[int], str]) -> Problems:
    """The problems found so far (none: :class:`BulkImportError` is raised for a bad header),
    after refusing a table without columns, with a bad header or without rows."""
    # lazy: the column checks import pandas, which Workspace users need not load
    from planner.compute.checks import Problems, check_header

    if len(frame.columns) == 0:
        raise PlannerError(f"{label}: empty; the first line must be a header "
                           "name,model,gpu[,input columns…]; nothing imported")
    problems = Problems()
    check_header(list(frame.columns), problems)
    if problems:
        raise BulkImportError(label, problems.first(), problems.total, where)
    if len(frame) == 0:
        raise PlannerError(f"{label}: no scenario rows under the header; nothing imported")
    return problems


class _RollBack(Exception):
    """Raised inside a dry run's transaction so that it is rolled back."""

    def __init__(self, result: BulkResult) -> None:
        super().__init__("dry run")
        self.result = result


def _row_columns(s: Session, table: CheckedTable) -> tuple[np.ndarray, np.ndarray,
                                                           dict[str, np.ndarray]]:
    """(model ids, GPU ids, every other column) of a checked table, as the store writes
    them."""
    model_id = {name: i for name, i in s.execute(select(ModelRow.name, ModelRow.id))}
    gpu_id = {name: i for name, i in s.execute(select(GpuRow.name, GpuRow.id))}
    columns = {"name": table.names, "kind": table.kinds, "notes": table.notes,
               "lora_targets": table.lora_targets, **table.inputs}
    return _ids(table.models, model_id), _ids(table.gpus, gpu_id), columns


def _named_by_hub_id(s: Session, column: Any) -> Any:
    """A model column with each Hub id of an imported model replaced by the model's name
    (:func:`~planner.service.catalog_edits.model_row_by_ref`, once per distinct value), as every
    ``--model`` flag reads one; anything else stays as it is, for the column check to accept
    or name."""
    names: dict[Any, str] = {}
    for value in column.dropna().unique():
        if isinstance(value, str) and parse_hub_id(value.strip()) is not None:
            # not imported: left as is, an unknown model the column check names
            with contextlib.suppress(NotFoundError):
                names[value] = model_row_by_ref(s, value.strip()).name
    return column.map(lambda v: names.get(v, v)) if names else column


def insert_checked(s: Session, fleet_id: int, table: CheckedTable) -> int:
    """Insert every row of a checked table (no problems) into fleet ``fleet_id`` inside the
    open write transaction ``s``: one batched INSERT (PostgreSQL: ``COPY``)."""
    model_ids, gpu_ids, columns = _row_columns(s, table)
    return bulk.insert_scenarios(s, fleet_id, np.arange(table.n), columns, model_ids, gpu_ids)


def _ids(names: np.ndarray, ids: dict[str, int]) -> np.ndarray:
    """The id of each row's model or GPU (names as the catalog spells them)."""
    import pandas as pd

    codes, uniques = pd.factorize(names, use_na_sentinel=False)
    missing = [u for u in uniques if u not in ids]
    if missing:  # deleted while the file was being checked
        raise PlannerError(f"{missing[0]!r} was deleted from the catalog while the file was "
                           "being checked; nothing imported")
    return np.asarray([ids[u] for u in uniques], dtype=np.int64)[codes]


__all__ = ["BulkImport", "BulkImportError", "BulkResult", "Clash",
           "insert_checked"]


def _source_frame(source: Any) -> tuple[Any, str, Callable[[int], str]]:
    """``source`` as a DataFrame (a path read by :func:`planner.io.tables.read_table`), the
    label its problems are reported under, and the function naming a row (``-1``: the
    header): ``DataFrame:row <index>`` for a frame, ``FILE:<line>`` for a file."""
    # lazy: pandas (~0.2 s), only when a table is imported
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        label = "DataFrame"
        index = list(source.index)

        def where(row: int) -> str:
            return f"{label}:header" if row < 0 else f"{label}:row {index[row]!r}"

        return source, label, where
    # lazy: the file readers (pandas, pyarrow, streamed xlsx), only for a file
    from planner.io.tables import read_table

    path_label = str(source)
    frame = read_table(Path(source))

    def where_in_file(row: int) -> str:
        return f"{path_label}:{row + 2}"

    return frame, path_label, where_in_file
