"""Many scenario rows written at once: batched INSERTs (PostgreSQL: ``COPY``), batched
version-guarded UPDATEs with their change log.

The ORM adds one object at a time (about 2.8 ms a scenario with its checks); here the rows
are columns of values already validated (:mod:`planner.compute.checks`), written inside the
caller's transaction in chunks of :data:`CHUNK_ROWS`: on SQLite one ``executemany`` per
chunk, on PostgreSQL one ``COPY … FROM STDIN`` stream. The database still checks every row
(its CHECK, UNIQUE and foreign-key constraints), so a row that slipped past the validation
fails the whole transaction.

Creating a scenario writes no change-log row (as :meth:`Scenarios.new_in` does not); an
UPDATE of an existing one logs the fields it changed as one change set per scenario, the
unit undo and redo work in (:mod:`planner.store.changelog`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from planner.core.errors import PlannerError
from planner.spec.domain import ConflictError
from planner.store.changelog import author
from planner.store.engine import is_sqlite, locks_rows
from planner.store.schema import (
    SCENARIO_INPUTS,
    Base,
    GpuRow,
    ModelRow,
    ScenarioChangeRow,
    ScenarioRow,
)

CHUNK_ROWS = 5_000
"""Rows per INSERT batch (and per progress step)."""

META = ("name", "kind", "notes", "lora_targets")
"""Scenario fields written from the table besides the input columns and model/GPU ids."""


def existing(s: Session, fleet_id: int, *, lock: bool = False) -> dict[str, tuple[int, int]]:
    """The fleet's scenarios: name → (id, version); locked for update with ``lock`` where
    the database locks rows (SQLite's write transaction holds the whole file already)."""
    table = _table(ScenarioRow)
    stmt = select(table.c.name, table.c.id, table.c.version).where(
        table.c.fleet_id == fleet_id)
    if lock and locks_rows(s):
        stmt = stmt.with_for_update()
    return {name: (sid, version) for name, sid, version in s.execute(stmt)}


def _python(values: np.ndarray) -> list[Any]:
    """A column as Python values (ints, floats, bools, texts) for the driver."""
    return values.tolist()


def _columns(fleet_id: int, rows: np.ndarray, names: Sequence[str],
             columns: Mapping[str, np.ndarray], model_ids: np.ndarray,
             gpu_ids: np.ndarray) -> tuple[list[str], list[list[Any]]]:
    """(column names, values per column) of the ``rows`` selected, in table order."""
    n = len(rows)
    data: dict[str, list[Any]] = {
        "fleet_id": [fleet_id] * n,
        "model_id": _python(model_ids[rows]),
        "gpu_id": _python(gpu_ids[rows]),
    }
    for key in names:
        data[key] = _python(columns[key][rows])
    return list(data), list(data.values())


def insert_scenarios(s: Session, fleet_id: int, rows: np.ndarray,
                     columns: Mapping[str, np.ndarray], model_ids: np.ndarray,
                     gpu_ids: np.ndarray, *,
                     progress: Callable[[int], None] | None = None) -> int:
    """Insert the ``rows`` (indices) of ``columns`` (every field of :data:`META` and every
    scenario input, one array each) as new scenarios of fleet ``fleet_id``, version 1.
    Returns how many were inserted."""
    names = [*META, *(c.name for c in SCENARIO_INPUTS)]
    keys, values = _columns(fleet_id, rows, names, columns, model_ids, gpu_ids)
    now = datetime.now(UTC)
    keys += ["version", "created_at", "updated_at"]
    n = len(rows)
    if not n:
        return 0
    s.flush()
    table = _table(ScenarioRow)
    if is_sqlite(s):
        # the driver's own executemany over tuples: SQLAlchemy's per-row parameter
        # processing costs more than SQLite's insert (10 s of 15 s at 100,000 rows)
        dialect = s.get_bind().dialect
        process = table.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)
        stamp = process(now) if process else now
        values += [[1] * n, [stamp] * n, [stamp] * n]
        quoted = ", ".join(f'"{k}"' for k in keys)
        sql = (f"INSERT INTO scenarios ({quoted}) VALUES ({', '.join('?' * len(keys))})")
        cursor = _driver_connection(s).cursor()
        try:
            for start in range(0, n, CHUNK_ROWS):
                stop = min(start + CHUNK_ROWS, n)
                with _refusals(s):
                    cursor.executemany(sql, zip(*(v[start:stop] for v in values),
                                                strict=True))
                if progress:
                    progress(stop - start)
        finally:
            cursor.close()
        return n
    values += [[1] * n, [now] * n, [now] * n]
    with _refusals(s):
        _copy(s, keys, values, n, progress)
    return n


def _table(row: type[Base]) -> Table:
    """The table a row class maps (a declarative class's ``__table__`` is typed as any
    ``FromClause``; the planner's map :class:`~sqlalchemy.Table` objects)."""
    table = row.__table__
    assert isinstance(table, Table)
    return table


def _driver_connection(s: Session) -> Any:
    """The DBAPI driver's own connection under ``s`` (sqlite3 or psycopg: untyped, the
    boundary where the bulk paths leave SQLAlchemy)."""
    raw = s.connection().connection.driver_connection
    if raw is None:
        raise PlannerError("the database connection was closed during a bulk write")
    return raw


@contextmanager
def _refusals(s: Session) -> Iterator[None]:
    """A constraint the driver reports (the raw cursor bypasses SQLAlchemy's wrapping) as the
    :class:`PlannerError` :func:`~planner.store.engine.write_transaction` gives for one."""
    refused = s.get_bind().dialect.loaded_dbapi.IntegrityError
    try:
        yield
    except refused as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise PlannerError(f"the database refused the change: {first}") from exc


def _copy(s: Session, keys: list[str], values: list[list[Any]], n: int,
          progress: Callable[[int], None] | None) -> None:
    """PostgreSQL: the rows through one ``COPY scenarios (…) FROM STDIN`` (psycopg 3)."""
    raw = _driver_connection(s)
    quoted = ", ".join(f'"{k}"' for k in keys)
    with raw.cursor() as cursor, cursor.copy(f"COPY scenarios ({quoted}) FROM STDIN") as copy:
        for start in range(0, n, CHUNK_ROWS):
            stop = min(start + CHUNK_ROWS, n)
            for row in zip(*(v[start:stop] for v in values), strict=True):
                copy.write_row(row)
            if progress:
                progress(stop - start)


def field_rows(s: Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Every user-settable field of the scenarios ``ids`` (model and GPU by name), as the
    change log records them (:func:`planner.store.scenarios.field_values`)."""
    table = _table(ScenarioRow)
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(ids), CHUNK_ROWS):
        chunk = list(ids[start:start + CHUNK_ROWS])
        stmt = (select(table, ModelRow.name.label("_model"), GpuRow.name.label("_gpu"))
                .join(ModelRow, ModelRow.id == table.c.model_id)
                .join(GpuRow, GpuRow.id == table.c.gpu_id)
                .where(table.c.id.in_(chunk)))
        for m in s.execute(stmt).mappings():
            values = {"name": m["name"], "kind": m["kind"], "model": m["_model"],
                      "gpu": m["_gpu"], "notes": m["notes"], "lora_targets": m["lora_targets"]}
            values.update({c.name: m[c.name] for c in SCENARIO_INPUTS})
            out[m["id"]] = values
    return out


def replace_scenarios(s: Session, fleet_id: int, rows: np.ndarray,
                      targets: Sequence[tuple[int, int]], columns: Mapping[str, np.ndarray],
                      model_ids: np.ndarray, gpu_ids: np.ndarray, model_names: np.ndarray,
                      gpu_names: np.ndarray, *,
                      progress: Callable[[int], None] | None = None) -> int:
    """Overwrite existing scenarios with the ``rows`` of ``columns``: ``targets`` are their
    (id, version) in the same order. Each UPDATE is guarded by the version read (a row
    changed since is :class:`ConflictError`, nothing written) and logs the fields it changed
    as one change set. Returns how many scenarios changed."""
    n = len(rows)
    if not n:
        return 0
    s.flush()
    names = [*META, *(c.name for c in SCENARIO_INPUTS)]
    keys, values = _columns(fleet_id, rows, names, columns, model_ids, gpu_ids)
    before = field_rows(s, [sid for sid, _v in targets])
    updates, changes = _differences(fleet_id, before, rows, targets, names, keys, values,
                                    model_names, gpu_names)
    if not updates:
        if progress:
            progress(n)
        return 0
    done = _guarded_updates(s, updates, progress)
    s.connection().execute(_table(ScenarioChangeRow).insert(), changes)
    if progress and n > len(updates):
        progress(n - len(updates))
    return done


def _differences(fleet_id: int, before: dict[int, dict[str, Any]], rows: np.ndarray,
                 targets: Sequence[tuple[int, int]], names: list[str], keys: list[str],
                 values: list[Any], model_names: np.ndarray,
                 gpu_names: np.ndarray) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The UPDATE of each target (of fleet ``fleet_id``) whose fields differ from ``before``
    (the version bumped, guarded by the one read), and its change log rows: one change set per
    scenario, a row per field changed. Targets that change nothing are left out."""
    now = datetime.now(UTC)
    who = author()
    updates: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    for j, (sid, version) in enumerate(targets):
        row = dict(zip(keys, (v[j] for v in values), strict=True))
        after = {**{k: row[k] for k in names}, "model": model_names[rows[j]],
                 "gpu": gpu_names[rows[j]]}
        old = before[sid]
        differ = [k for k in old if not _same(old[k], after[k])]
        if not differ:
            continue
        updates.append({**{k: row[k] for k in keys if k != "fleet_id"}, "_id": sid,
                        "_version": version, "version": version + 1, "updated_at": now})
        change_set = uuid.uuid4().hex
        changes.extend({"scenario_id": sid, "fleet_id": fleet_id, "change_set": change_set,
                        "field": k,
                        "old_value": json.dumps(old[k]), "new_value": json.dumps(after[k]),
                        "version_after": version + 1, "changed_at": now, "undone": False,
                        "author": who} for k in differ)
    return updates, changes


def _guarded_updates(s: Session, updates: list[dict[str, Any]],
                     progress: Callable[[int], None] | None) -> int:
    """The scenario UPDATEs, :data:`CHUNK_ROWS` at a time, each guarded by the version read
    (``_id``, ``_version``): a batch that updates fewer rows than it holds is a
    :class:`ConflictError`. Returns the rows updated."""
    table = _table(ScenarioRow)
    settable = [k for k in updates[0] if not k.startswith("_")]
    stmt = (update(table)
            .where(table.c.id == bindparam("_id"), table.c.version == bindparam("_version"))
            .values({k: bindparam(k) for k in settable}))
    conn = s.connection()
    done = 0
    for start in range(0, len(updates), CHUNK_ROWS):
        batch = updates[start:start + CHUNK_ROWS]
        result = conn.execute(stmt, batch)
        if result.rowcount not in (-1, len(batch)):
            raise ConflictError("the scenarios being replaced", -1, -1, {})
        done += len(batch)
        if progress:
            progress(len(batch))
    return done


def _same(a: Any, b: Any) -> bool:
    """Whether a stored field and its replacement are the same value (booleans by truth,
    numbers by value, anything else by ``==``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return bool(a == b)
