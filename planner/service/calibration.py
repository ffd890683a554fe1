"""Use case: fit the serving model's efficiency figures to stored benchmark runs, and keep the
fits as named, versioned calibration profiles (issue 12 item 2).

:meth:`Calibration.calibrate` selects the runs (by GPU, engine and optionally model; the runs
must be of one GPU and one engine, since a profile holds that pair's figures, shared across
models), holds out a seeded share of them, fits with :func:`planner.compute.calibration.fit` and
stores the profile: parameters, the measurement ids fitted and held out, every residual, and
the before/after/holdout errors. A refit under an existing name adds version ``n + 1``; nothing
is overwritten.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from planner.compute.calibration import (
    PARAMETERS,
    FitResult,
    Predictor,
    Run,
    RunPrediction,
    fit,
    holdout_split,
    predict_runs,
    run_table,
)
from planner.compute.profiles import CalibrationFigures
from planner.core.errors import NotFoundError, PlannerError, ValidationError
from planner.io.bench.records import BenchFileError, RunRecord, check_record
from planner.service.fields import clean_name
from planner.service.measurements import Measurements
from planner.service.specs import SpecCache
from planner.store import queries
from planner.store.engine import read_session, write_transaction
from planner.store.schema import CalibrationProfileRow, GpuRow

MEDIANS = ("throughput_median_abs_error", "ttft_median_abs_error", "tpot_median_abs_error")
"""The three figures ``planner calibrate --json`` reports per set of runs."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A stored calibration profile (one version)."""

    id: int
    name: str
    version: int
    gpu: str
    engine: str
    model_filter: str | None
    parameters: dict[str, float]
    start: dict[str, float]
    fitted: list[str]
    fit_ids: list[int]
    holdout_ids: list[int]
    errors: dict[str, Any]
    residuals: list[dict[str, Any]]
    created_at: datetime | None

    def summary(self) -> dict[str, Any]:
        """The ``planner calibrate --json`` object: name, run counts and the median
        ``|predicted/measured - 1|`` per figure before, after and on the held-out runs."""
        return {"profile": self.name, "n_fit": len(self.fit_ids),
                "n_holdout": len(self.holdout_ids),
                **{k: {m: self.errors[k].get(m) for m in MEDIANS}
                   for k in ("before", "after", "holdout")}}

    def as_dict(self) -> dict[str, Any]:
        """Everything but the residuals, JSON-able."""
        return {"name": self.name, "version": self.version, "gpu": self.gpu,
                "engine": self.engine, "model_filter": self.model_filter,
                "parameters": self.parameters, "start": self.start, "fitted": self.fitted,
                "n_fit": len(self.fit_ids), "n_holdout": len(self.holdout_ids),
                "errors": self.errors,
                "created_at": self.created_at.isoformat() if self.created_at else None}


def _profile(row: CalibrationProfileRow, gpu: str) -> Profile:
    params = json.loads(row.parameters_json)
    ids = json.loads(row.measurement_ids_json)
    return Profile(row.id, row.name, row.version, gpu, row.engine, row.model_filter,
                   params["values"], params["start"], params["fitted"], ids["fit"],
                   ids["holdout"], json.loads(row.errors_json), json.loads(row.residuals_json),
                   row.created_at)


def calibration_figures(s: Session) -> list[CalibrationFigures]:
    """Every stored profile version as evaluation uses it (:mod:`planner.compute.profiles`)."""
    rows = s.execute(select(CalibrationProfileRow, GpuRow.name)
                     .join(GpuRow, GpuRow.id == CalibrationProfileRow.gpu_id)
                     .order_by(CalibrationProfileRow.id))
    out = []
    for row, gpu in rows:
        errors = json.loads(row.errors_json)
        out.append(CalibrationFigures(
            row.name, row.version, gpu, row.engine,
            json.loads(row.parameters_json)["values"], row.id,
            errors.get("holdout", {}).get("throughput_median_abs_error")))
    return out


class Calibration:
    """Calibration profiles of the database behind ``engine``."""

    def __init__(self, engine: Engine, specs: SpecCache, measurements: Measurements) -> None:
        self.engine = engine
        self.specs = specs
        self.measurements = measurements

    def calibrate(self, *, gpu: str | None = None, engine: str | None = None,
                  model: str | None = None, holdout: float = 0.2, seed: int = 0,
                  name: str | None = None) -> Profile:
        """Fit the runs that match and store the result as a new profile version."""
        if not 0 <= holdout < 1:
            raise ValidationError("holdout", "a fraction from 0 to below 1", value=holdout)
        stored = self.measurements.list(model=model, gpu=gpu, engine=engine)
        _check_runs(stored, gpu, engine, model)
        if model:  # the stored model's name (``--model`` may be the Hub id it came from)
            model = stored[0].model
        gpu_name, engine_name = _one_pair(stored)
        runs = [Run(m.id, m.model, m.gpu, m.values, m.settings) for m in stored]
        with read_session(self.engine) as s:
            models, gpus = self.specs.model_specs(s), self.specs.gpu_specs(s)
        table = run_table(runs)
        predictor = Predictor(table, models, gpus)
        held = holdout_split(predictor.runs.runs, holdout, seed)
        result = fit(predictor, held)
        profile_name = clean_name(name or f"{gpu_name}-{engine_name}"
                                  + (f"-{model}" if model else ""), "--name")
        return self._store(profile_name, gpu_name, engine_name, model, result, holdout, seed)

    def _store(self, name: str, gpu: str, engine: str, model: str | None, result: FitResult,
               holdout: float, seed: int) -> Profile:
        errors = {"before": result.before, "after": result.after,
                  "holdout_before": result.holdout_before, "holdout": result.holdout,
                  "skipped": [{"id": i, "reason": why} for i, why in result.skipped],
                  "holdout_fraction": holdout, "seed": seed, "evaluations": result.iterations}
        with write_transaction(self.engine) as s:
            gpu_row = queries.gpu_row(s, gpu)
            latest = s.scalar(select(func.max(CalibrationProfileRow.version))
                              .where(CalibrationProfileRow.name == name))
            row = CalibrationProfileRow(
                name=name, version=(latest or 0) + 1, gpu_id=gpu_row.id, engine=engine,
                model_filter=model,
                parameters_json=json.dumps({"values": result.parameters, "start": result.start,
                                            "fitted": result.fitted}),
                measurement_ids_json=json.dumps({"fit": result.fit_ids,
                                                 "holdout": result.holdout_ids}),
                residuals_json=json.dumps(result.residuals),
                errors_json=json.dumps(errors))
            s.add(row)
            s.flush()
            return _profile(row, gpu_row.name)

    def profiles(self) -> list[Profile]:
        """Every stored profile version, by name then version."""
        with read_session(self.engine) as s:
            stmt = (select(CalibrationProfileRow, GpuRow.name)
                    .join(GpuRow, GpuRow.id == CalibrationProfileRow.gpu_id)
                    .order_by(CalibrationProfileRow.name, CalibrationProfileRow.version))
            return [_profile(row, g) for row, g in s.execute(stmt)]

    def profile(self, name: str, version: int | None = None) -> Profile:
        """A profile by name: the given version, else the newest."""
        found = [p for p in self.profiles() if p.name == name
                 and (version is None or p.version == version)]
        if not found:
            raise NotFoundError("calibration profile",
                                name + (f" version {version}" if version else ""),
                                sorted({p.name for p in self.profiles()}))
        return found[-1]

    def figures(self) -> list[CalibrationFigures]:
        """Every profile version as evaluation uses it."""
        with read_session(self.engine) as s:
            return calibration_figures(s)

    def predictions(self) -> list[tuple[Any, RunPrediction | None]]:
        """Every stored run with its measured and predicted figures (tokens/s, ms): predicted
        by the planner's formula graph with the profile ``auto`` picks for the run's GPU and
        engine (:func:`planner.compute.calibration.predict_runs`); ``None`` for a run that
        cannot be scored."""
        stored = self.measurements.list()
        if not stored:
            return []
        with read_session(self.engine) as s:
            models, gpus = self.specs.model_specs(s), self.specs.gpu_specs(s)
            profiles = calibration_figures(s)
        runs = [Run(m.id, m.model, m.gpu, m.values, m.settings) for m in stored]
        by_id = {p.run.id: p for p in predict_runs(runs, models, gpus, profiles)}
        return [(m, by_id.get(m.id)) for m in stored]

    def newest_for(self, gpu: str, engine: str) -> Profile | None:
        """The newest profile (by creation) fitted for ``gpu`` and ``engine``, if any."""
        matching = [p for p in self.profiles()
                    if p.gpu.lower() == gpu.lower() and p.engine == engine]
        return max(matching, key=lambda p: p.id) if matching else None


PARAMETER_HELP: dict[str, str] = {p.name: p.help for p in PARAMETERS}
"""What each fitted parameter is (for the CLI's table)."""


def _check_runs(stored: list[Any], gpu: str | None, engine: str | None,
                model: str | None) -> None:
    """Refuse a calibration with no matching runs (naming the filters), or with a run stored
    before its figures were bounded (it is never fitted: delete it)."""
    if not stored:
        raise PlannerError("no stored benchmark runs match"
                           + "".join(f" {k} {v}" for k, v in
                                     (("--gpu", gpu), ("--engine", engine),
                                      ("--model", model)) if v)
                           + " (planner bench import FILE...)")
    for m in stored:  # a run stored before its figures were bounded is never fitted
        try:
            check_record(RunRecord(f"run {m.id} ({m.source[-60:]})", m.source_format,
                                   m.values))
        except BenchFileError as exc:
            raise PlannerError(f"{exc}; delete it (planner bench delete {m.id}) and "
                               "calibrate again") from None


def _one_pair(stored: list[Any]) -> tuple[str, str]:
    """The one GPU and engine of the runs (a profile is per GPU and engine); refused when
    they span several, or do not say their engine."""
    pairs = Counter((m.gpu, m.values.get("engine")) for m in stored)
    if len(pairs) > 1:
        listed = ", ".join(f"{g}/{e or 'unknown engine'} ({n} runs)"
                           for (g, e), n in sorted(pairs.items(), key=str))
        raise ValidationError("--gpu/--engine", "one GPU and one engine (a profile is "
                              f"per GPU and engine); the runs are of {listed}")
    (gpu_name, engine_name), = pairs
    if engine_name is None:
        raise PlannerError(f"the {len(stored)} matching runs do not say their engine; "
                           "re-import them with --engine")
    return gpu_name, engine_name
