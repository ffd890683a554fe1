"""Use cases over imported benchmark runs (issue 12): import, list, show, delete.

An import reads every file through :mod:`planner.io.bench.dispatch`, fills the settings the
files do not hold from the caller's flags (``model``, ``gpu``, ``engine``, ``tp``, ``pp``,
``gpus``, ``weight_dtype``, ``kv_dtype`` and engine settings by scenario input name), resolves
the model and GPU to their rows and stores every run in one transaction: all of them, or on any
error none, the error naming ``FILE:line``. What is still unknown stays NULL, never guessed.

Flags and files: a flag fills a setting the file leaves unknown; where the file states a
different value the import stops with an error naming both (``--model`` and ``--gpu`` are the
exception: a file names a Hub id or a device string, the flag names the planner's row, so the
flag wins). A run whose content (model, GPU, settings and figures, not the file name) is
already stored is skipped and counted as a duplicate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from planner.compute.inputs import INFERENCE_INPUTS
from planner.core.errors import ConfigError, NotFoundError, PlannerError, ValidationError
from planner.io.bench.dispatch import parse_file
from planner.io.bench.records import CSV_HEADER, ENGINES, BenchFileError, RunRecord
from planner.service.catalog_edits import model_row_by_ref
from planner.service.specs import SpecCache
from planner.spec.catalog import read_config_text
from planner.store import convert, queries
from planner.store.engine import read_session, write_transaction
from planner.store.schema import (
    MEASUREMENT_COUNTS,
    MEASUREMENT_FIGURES,
    GpuRow,
    MeasurementRow,
    ModelRow,
)

SETTING_FLAGS: tuple[str, ...] = ("model", "gpu", "engine", "tp", "pp", "gpus",
                                  "weight_dtype", "kv_dtype")
"""Run settings a caller may give for every run of an import."""
TEXT_COLUMNS: tuple[str, ...] = ("engine", "weight_dtype", "kv_dtype", "mode")
ENGINE_SETTINGS: frozenset[str] = frozenset(
    c.name for c in INFERENCE_INPUTS if c.name not in {
        "tp", "pp", "gpus", "engine", "weight_dtype", "kv_dtype", "batch", "prompt_tokens",
        "output_tokens", "concurrency", "target_requests_per_s", "calibration"})
"""Scenario inputs a run's ``settings`` may hold (``--set NAME=VALUE``)."""


@dataclass(frozen=True, slots=True)
class Measurement:
    """One stored benchmark run: its settings (``None`` = unknown) and measured figures."""

    id: int
    model: str
    gpu: str
    source: str
    source_format: str
    values: dict[str, Any]
    settings: dict[str, float]
    imported_at: datetime | None

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (``planner bench show --json``)."""
        return {"id": self.id, "model": self.model, "gpu": self.gpu, "source": self.source,
                "source_format": self.source_format, **self.values,
                "settings": self.settings,
                "imported_at": self.imported_at.isoformat() if self.imported_at else None}


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import stored: the new runs, and how many were already there."""

    added: list[Measurement]
    duplicates: int
    files: int


def _engine_settings(settings: Mapping[str, Any], where: str) -> dict[str, float]:
    """Engine settings checked against their input columns (name and range)."""
    out: dict[str, float] = {}
    columns = {c.name: c for c in INFERENCE_INPUTS}
    for name, raw in settings.items():
        if name not in ENGINE_SETTINGS:
            raise ValidationError(f"{where}: setting {name}",
                                  "a serving input such as " + ", ".join(sorted(
                                      ["max_num_seqs", "mem_fraction_static", "ep",
                                       "free_gpu_memory_fraction", "max_model_len"])), value=raw)
        try:
            value = columns[name].parse(raw)
        except ValidationError as exc:
            raise ValidationError(f"{where}: {name}", exc.allowed, value=raw) from None
        out[name] = float(value)
    return out


def _merge(record: RunRecord, flags: Mapping[str, Any]) -> dict[str, Any]:
    """The record's values with the flags filled in (see the module docstring)."""
    values: dict[str, Any] = {k: record.values.get(k) for k in
                              (*CSV_HEADER, "num_requests")}
    for name, flag in flags.items():
        if flag is None:
            continue
        have = values.get(name)
        if name in ("model", "gpu") or have is None:
            values[name] = flag
        elif str(have).lower() != str(flag).lower() and have != flag:
            raise BenchFileError(f"{record.source}: {name} is {have!r} in the file but "
                                 f"--{name.replace('_', '-')} gives {flag!r}")
    _normalise(record.source, values)
    for name in ("model", "gpu"):
        if values[name] is None:
            raise BenchFileError(f"{record.source}: the file does not name the {name}; give "
                                 f"--{name}")
    return values


def _normalise(source: str, values: dict[str, Any]) -> None:
    """The engine lower-cased and one of :data:`ENGINES`, the weight and KV dtypes parsed as
    the scenario inputs parse them, in place; a bad one refused naming ``source``."""
    if values["engine"] is not None:
        values["engine"] = str(values["engine"]).lower()
        if values["engine"] not in ENGINES:
            raise BenchFileError(f"{source}: engine {values['engine']!r} is not one of "
                                 f"{', '.join(ENGINES)}")
    columns = {c.name: c for c in INFERENCE_INPUTS}
    for name in ("weight_dtype", "kv_dtype"):
        if values[name] is not None:
            try:
                values[name] = columns[name].parse(values[name])
            except ValidationError as exc:
                raise BenchFileError(f"{source}: {name} {values[name]!r} must be "
                                     f"{exc.allowed}") from None


def _parsed_runs(paths: Sequence[Path], flags: Mapping[str, Any] | None,
                 settings: Mapping[str, Any] | None
                 ) -> list[tuple[RunRecord, dict[str, Any], dict[str, float]]]:
    """Every run of ``paths`` parsed before anything is stored: its record, its values with
    the flags filled in (:func:`_merge`) and its engine settings (the file's, then
    ``--set``'s); flags that are no setting, no file or no run refused."""
    given = _given_flags(flags)
    extra = _engine_settings(settings or {}, "--set")
    return [(r, _merge(r, given), {**_engine_settings(r.settings, r.source), **extra})
            for r in _records_of(paths)]


def _given_flags(flags: Mapping[str, Any] | None) -> dict[str, Any]:
    """The flags given a value; one that is no setting flag refused."""
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    unknown = set(given) - set(SETTING_FLAGS)
    if unknown:
        raise ValidationError("flags", "one of " + ", ".join(SETTING_FLAGS),
                              value=sorted(unknown))
    return given


def _records_of(paths: Sequence[Path]) -> list[RunRecord]:
    """Every run of every file of ``paths``, in order; no file, or no run in them, refused."""
    if not paths:
        raise ValidationError("FILE", "at least one benchmark result file")
    records = [record for path in paths for record in parse_file(Path(path))]
    if not records:
        raise BenchFileError(f"{paths[0]}:1: no benchmark runs in the file(s)")
    return records


def content_hash(model_id: int, gpu_id: int, values: Mapping[str, Any],
                 settings: Mapping[str, float]) -> str:
    """SHA-256 of the run's content: model and GPU rows, every setting and figure (not the
    file name or format), so the same run imported twice is stored once."""
    body = {"model_id": model_id, "gpu_id": gpu_id,
            **{k: values.get(k) for k in (*MEASUREMENT_COUNTS, *MEASUREMENT_FIGURES,
                                          *TEXT_COLUMNS)},
            "settings": dict(sorted(settings.items()))}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


class Measurements:
    """Benchmark runs of the database behind ``engine``."""

    def __init__(self, engine: Engine, specs: SpecCache) -> None:
        self.engine = engine
        self.specs = specs

    # ------------------------------------------------------------------ import
    def import_files(self, paths: Sequence[Path], flags: Mapping[str, Any] | None = None,
                     settings: Mapping[str, Any] | None = None) -> ImportResult:
        """Parse every file, then store every run in one transaction (all or none)."""
        merged = _parsed_runs(paths, flags, settings)
        added: list[Measurement] = []
        duplicates = 0
        with write_transaction(self.engine) as s:
            models: dict[str, ModelRow] = {}
            gpus: dict[str, GpuRow] = {}
            seen = set(s.scalars(select(MeasurementRow.content_hash)))
            for record, values, run_settings in merged:
                model = self._model(s, models, str(values["model"]), record.source)
                gpu = self._gpu(s, gpus, str(values["gpu"]), record.source)
                digest = content_hash(model.id, gpu.id, values, run_settings)
                if digest in seen:
                    duplicates += 1
                    continue
                seen.add(digest)
                row = MeasurementRow(
                    content_hash=digest, model_id=model.id, gpu_id=gpu.id,
                    source=record.source[-500:], source_format=record.source_format,
                    settings_json=json.dumps(run_settings, sort_keys=True),
                    **{k: values.get(k) for k in (*MEASUREMENT_COUNTS, *MEASUREMENT_FIGURES,
                                                  *TEXT_COLUMNS)})
                s.add(row)
                s.flush()
                added.append(_measurement(row, model.name, gpu.name))
        return ImportResult(added, duplicates, len(paths))

    @staticmethod
    def _model(s: Session, cache: dict[str, ModelRow], ref: str, where: str) -> ModelRow:
        """A model row by name, by the Hub id it was imported from, or by config.json path
        (added under its file name when no model has that name)."""
        if ref in cache:
            return cache[ref]
        path = Path(ref).expanduser()
        try:
            if path.suffix == ".json" or path.is_dir():
                row = _config_model(s, path, where)
            else:
                row = model_row_by_ref(s, ref)
        except NotFoundError as exc:
            raise BenchFileError(f"{where}: {exc}") from None
        except PlannerError as exc:
            if isinstance(exc, BenchFileError):
                raise
            raise BenchFileError(f"{where}: model {ref}: {exc}") from None
        cache[ref] = row
        return row

    @staticmethod
    def _gpu(s: Session, cache: dict[str, GpuRow], ref: str, where: str) -> GpuRow:
        if ref not in cache:
            try:
                cache[ref] = queries.gpu_row(s, ref)
            except NotFoundError as exc:
                raise BenchFileError(f"{where}: {exc}") from None
        return cache[ref]

    # ------------------------------------------------------------------ read, delete
    def list(self, *, model: str | None = None, gpu: str | None = None,
             engine: str | None = None) -> list[Measurement]:
        """Stored runs, oldest first, optionally only one model's, GPU's or engine's."""
        with read_session(self.engine) as s:
            stmt = (select(MeasurementRow, ModelRow.name, GpuRow.name)
                    .join(ModelRow, ModelRow.id == MeasurementRow.model_id)
                    .join(GpuRow, GpuRow.id == MeasurementRow.gpu_id)
                    .order_by(MeasurementRow.id))
            if model:
                stmt = stmt.where(MeasurementRow.model_id == model_row_by_ref(s, model).id)
            if gpu:
                stmt = stmt.where(MeasurementRow.gpu_id == queries.gpu_row(s, gpu).id)
            if engine:
                stmt = stmt.where(MeasurementRow.engine == engine.lower())
            return [_measurement(row, m, g) for row, m, g in s.execute(stmt)]

    def get(self, measurement_id: int) -> Measurement:
        """One stored run by id."""
        with read_session(self.engine) as s:
            found = s.execute(
                select(MeasurementRow, ModelRow.name, GpuRow.name)
                .join(ModelRow, ModelRow.id == MeasurementRow.model_id)
                .join(GpuRow, GpuRow.id == MeasurementRow.gpu_id)
                .where(MeasurementRow.id == measurement_id)).first()
            if found is None:
                raise NotFoundError("measurement", str(measurement_id))
            return _measurement(*found)

    def delete(self, ids: Sequence[int]) -> int:
        """Delete runs by id (all or none: an unknown id deletes nothing)."""
        with write_transaction(self.engine) as s:
            rows = list(s.scalars(select(MeasurementRow).where(MeasurementRow.id.in_(ids))))
            missing = sorted(set(ids) - {r.id for r in rows})
            if missing:
                raise NotFoundError("measurement", ", ".join(map(str, missing)))
            for row in rows:
                s.delete(row)
            return len(rows)


def _config_model(s: Session, path: Path, where: str) -> ModelRow:
    """The model of a config.json (``path``, or the folder holding it) by its file name: the
    catalog's model of that name, else the config added under it."""
    file = path / "config.json" if path.is_dir() else path
    name = file.parent.name if file.stem == "config" else file.stem
    row = s.scalar(select(ModelRow).where(func.lower(ModelRow.name) == name.lower()))
    if row is None:
        try:  # a regular file of bounded size only, as every config.json
            text = read_config_text(file)
        except ConfigError as exc:
            raise BenchFileError(f"{where}: model config {file} {exc.problem}") from None
        row = ModelRow(**convert.model_row_fields(name, text, str(file)))
        s.add(row)
        s.flush()
    return row


def _measurement(row: MeasurementRow, model: str, gpu: str) -> Measurement:
    values = {k: getattr(row, k) for k in (*MEASUREMENT_COUNTS, *TEXT_COLUMNS,
                                           *MEASUREMENT_FIGURES)}
    return Measurement(row.id, model, gpu, row.source, row.source_format, values,
                       json.loads(row.settings_json or "{}"), row.imported_at)
