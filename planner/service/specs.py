"""Parsed catalog specs, cached: a model's config.json is parsed once per row version.

Evaluating scenarios needs the :class:`ModelSpec` and :class:`GpuSpec` of every model and GPU
they name. Reading every catalog row and re-parsing every config.json for each evaluation
(each save in the UI) costs more than the evaluation itself, so :class:`SpecCache` keeps the
parsed specs keyed by name and the row's ``(id, version, updated_at)`` stamp. A lookup reads
only the stamps (one narrow query per table) and re-parses just the rows whose stamp moved,
so an edit made by another process is still seen. Writes through the owning workspace also
drop the entry at once (:meth:`SpecCache.invalidate`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec
from planner.spec.hf_config import spec_from_config
from planner.store import queries, rowspec
from planner.store.schema import GpuRow, ModelRow


def _stamp(row: Any) -> tuple[Any, ...]:
    return (row.id, row.version, _utc(row.updated_at))


def _utc(when: datetime | None) -> datetime | None:
    """Naive UTC: SQLite hands back naive times, PostgreSQL and a just-flushed row aware ones."""
    if when is None or when.tzinfo is None:
        return when
    return when.astimezone(UTC).replace(tzinfo=None)


def _model_spec(row: ModelRow) -> ModelSpec:
    return spec_from_config(json.loads(row.config_json), row.name)


class _Table:
    """The cached specs of one catalog table."""

    def __init__(self, table: type[Any], parse: Callable[[Any], Any]) -> None:
        self.table = table
        self.parse = parse
        self.entries: dict[str, tuple[tuple[Any, ...], Any]] = {}

    def of_row(self, row: Any) -> Any:
        """The spec of a loaded row (parsed unless cached at the row's stamp)."""
        stamp = _stamp(row)
        entry = self.entries.get(row.name)
        if entry is not None and entry[0] == stamp:
            return entry[1]
        spec = self.parse(row)
        self.entries[row.name] = (stamp, spec)
        return spec

    def all(self, s: Session) -> dict[str, Any]:
        """Every row's spec by name, re-reading only the rows whose stamp moved."""
        stamps = {name: (row_id, version, _utc(updated))
                  for name, (row_id, version, updated) in queries.row_stamps(s, self.table).items()}
        stale = [name for name, stamp in stamps.items()
                 if self.entries.get(name, ((),))[0] != stamp]
        for row in queries.rows_named(s, self.table, stale):
            self.entries[row.name] = (_stamp(row), self.parse(row))
        for name in set(self.entries) - set(stamps):
            del self.entries[name]
        return {name: self.entries[name][1] for name in sorted(stamps)}


class SpecCache:
    """Parsed model and GPU specs by name, checked against row versions on every lookup.

    Thread-safe: the UI evaluates in worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models = _Table(ModelRow, _model_spec)
        self._gpus = _Table(GpuRow, rowspec.gpu_spec)

    def model_specs(self, s: Session) -> dict[str, ModelSpec]:
        """Every model's spec, by name."""
        with self._lock:
            return self._models.all(s)

    def gpu_specs(self, s: Session) -> dict[str, GpuSpec]:
        """Every GPU's spec, by name."""
        with self._lock:
            return self._gpus.all(s)

    def model_spec(self, row: ModelRow) -> ModelSpec:
        """The spec of a loaded model row."""
        with self._lock:
            spec: ModelSpec = self._models.of_row(row)
            return spec

    def gpu_spec(self, row: GpuRow) -> GpuSpec:
        """The spec of a loaded GPU row."""
        with self._lock:
            spec: GpuSpec = self._gpus.of_row(row)
            return spec

    def invalidate(self, name: str | None = None) -> None:
        """Forget the specs called ``name`` (a model or a GPU), or all of them."""
        with self._lock:
            for table in (self._models, self._gpus):
                if name is None:
                    table.entries.clear()
                else:
                    table.entries.pop(name, None)
