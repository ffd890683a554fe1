"""Use cases over the fleet database: models, GPUs, fleets, scenarios, their history.

:class:`Workspace` is the library API the CLI and the UI share. Every public method is one
transaction: it commits whole or, on any error, leaves the database exactly as it was. Methods
take names and plain values and return :mod:`planner.domain` objects, never ORM rows.

Concurrency: rows carry a version. An edit may name the version it was based on
(``expected_version``); if the row has moved on, :class:`ConflictError` lists what changed and
nothing is written. Write transactions take the write lock up front (SQLite ``BEGIN IMMEDIATE``,
PostgreSQL ``SELECT … FOR UPDATE``) so two writers never interleave a read and a write.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from planner.domain import (
    Change,
    ConflictError,
    DuplicateError,
    Fleet,
    GpuInfo,
    InUseError,
    ModelInfo,
    Scenario,
    SeedReport,
)
from planner.errors import NotFoundError, PlannerError, ValidationError
from planner.settings import database_url
from planner.sheet.inputs import (
    INFERENCE_INPUTS,
    TRAINING_DEFAULT_OVERRIDES,
    TRAINING_INPUTS,
    defaults,
    parse_inputs,
)
from planner.sheet.table import check_scenario
from planner.store import convert, migrate
from planner.store.engine import make_engine, read_session, write_session
from planner.store.schema import (
    SCENARIO_INPUTS,
    FleetRow,
    GpuRow,
    ModelRow,
    ScenarioChangeRow,
    ScenarioRow,
)

KINDS = ("inference", "training")
SCENARIO_META_FIELDS = ("name", "kind", "model", "gpu", "notes", "lora_targets")
"""Scenario fields that are not input columns but can be set with ``field=value``."""

GPU_FIELDS = ("vendor", "label", "memory_gib", "bf16_tflops", "fp16_tflops", "fp8_tflops",
              "int8_tops", "int4_tops", "memory_bandwidth_gb_per_s", "interconnect_gb_per_s",
              "power_w", "price_usd_per_hour", "price_is_example", "source")
"""GPU fields a user sets, in the unit-suffixed form of ``seeds/gpus.toml``."""
_GPU_POSITIVE = ("memory_gib", "memory_bandwidth_gb_per_s")
_GPU_THROUGHPUT = ("bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "int4_tops")
_GPU_NON_NEGATIVE = ("interconnect_gb_per_s", "power_w", "price_usd_per_hour")


def _encode(value: Any) -> str:
    return json.dumps(value)


def _decode(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass(frozen=True, slots=True)
class OpenReport:
    """What opening the database did: schema revisions and the first-run seeding."""

    url: str
    revision_before: str | None
    revision: str
    seeded: SeedReport | None


class Workspace:
    """The fleet database at ``url`` (default: settings), migrated to head on open."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self.open_report: OpenReport | None = None

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, url: str | None = None, *, upgrade: bool = True, seed: bool = True) -> Workspace:
        """Open (creating, migrating and seeding on first run) the database at ``url``."""
        resolved = database_url(url)
        ws = cls(make_engine(resolved), resolved)
        if upgrade:
            try:
                before, after = migrate.ensure_schema(ws.engine)
            except PlannerError:
                raise
            except Exception as exc:
                raise PlannerError(f"cannot open database {_safe(resolved)}: {exc}") from exc
            seeded = ws.seed() if (before is None and seed) else None
            ws.open_report = OpenReport(resolved, before, after, seeded)
        return ws

    def close(self) -> None:
        """Release connections."""
        self.engine.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[Session]:
        try:
            with write_session(self.engine) as session:
                yield session
        except StaleDataError as exc:
            raise ConflictError("the row", -1, -1, {}) from exc
        except IntegrityError as exc:
            raise PlannerError(f"the database refused the change: {_integrity(exc)}") from exc

    def _locked(self, stmt: Any) -> Any:
        return stmt.with_for_update() if self.engine.dialect.name == "postgresql" else stmt

    def seed(self) -> SeedReport:
        """Add what is new in ``seeds/`` (idempotent; never overwrites a user's edit)."""
        from planner.store.seed import seed_all

        with self._write() as session:
            return seed_all(session, self._build_row)

    # ------------------------------------------------------------------ models
    def models(self) -> list[ModelInfo]:
        """Every model, by name."""
        with read_session(self.engine) as s:
            return [convert.model_info(r) for r in s.scalars(select(ModelRow)
                                                             .order_by(ModelRow.name))]

    def model(self, name: str) -> ModelInfo:
        """One model by name (case-insensitive)."""
        with read_session(self.engine) as s:
            return convert.model_info(self._model_row(s, name))

    def _model_row(self, s: Session, name: str) -> ModelRow:
        return _by_name(s, ModelRow, "model", name)

    def import_model(self, config: dict[str, Any] | str, name: str, *, source: str = "custom",
                     notes: str = "") -> ModelInfo:
        """Add a model from config.json text (kept verbatim) or a parsed dict; refuses a
        duplicate name."""
        return self.import_models([(name, config, source)], notes=notes)[0]

    def import_models(self, items: Iterable[tuple[str, dict[str, Any] | str, str]], *,
                      notes: str = "", progress: Callable[[int], None] | None = None
                      ) -> list[ModelInfo]:
        """Add many models in one transaction: all of them, or (on any error) none."""
        out = []
        with self._write() as s:
            existing = {n.lower() for n in s.scalars(select(ModelRow.name))}
            for i, (name, config, source) in enumerate(items, 1):
                name = _name(name, "name")
                if name.lower() in existing:
                    raise DuplicateError(f"a model named {name!r} already exists")
                row = ModelRow(**convert.model_row_fields(name, config, source), notes=notes)
                s.add(row)
                s.flush()
                existing.add(name.lower())
                out.append(convert.model_info(row))
                if progress:
                    progress(i)
        return out

    def delete_model(self, name: str) -> None:
        """Delete a model no scenario uses; else :class:`InUseError` listing the scenarios."""
        with self._write() as s:
            row = self._model_row(s, name)
            self._delete_unused(s, row, f"model {row.name!r}", ScenarioRow.model_id == row.id)

    def set_model_notes(self, name: str, notes: str) -> ModelInfo:
        """Replace a model's notes."""
        with self._write() as s:
            row = self._model_row(s, name)
            row.notes = notes
            s.flush()
            return convert.model_info(row)

    def _delete_unused(self, s: Session, row: Any, what: str, used_by: Any) -> None:
        """Delete ``row`` unless scenarios match ``used_by``; then list them in the error."""
        users = self._users(s, used_by)
        if users:
            raise InUseError(what, users)
        s.delete(row)

    @staticmethod
    def _users(s: Session, where: Any) -> list[str]:
        rows = s.execute(select(FleetRow.name, ScenarioRow.name).join(ScenarioRow.fleet)
                         .where(where).order_by(FleetRow.name, ScenarioRow.name))
        return [f"{f}/{n}" for f, n in rows]

    # ------------------------------------------------------------------ GPUs
    def gpus(self) -> list[GpuInfo]:
        """Every GPU, by name."""
        with read_session(self.engine) as s:
            return [convert.gpu_info(r) for r in s.scalars(select(GpuRow).order_by(GpuRow.name))]

    def gpu(self, name: str) -> GpuInfo:
        """One GPU by name (case-insensitive)."""
        with read_session(self.engine) as s:
            return convert.gpu_info(self._gpu_row(s, name))

    def _gpu_row(self, s: Session, name: str) -> GpuRow:
        return _by_name(s, GpuRow, "GPU", name)

    @staticmethod
    def _gpu_spec(name: str, record: dict[str, Any]) -> Any:
        unknown = sorted(set(record) - set(GPU_FIELDS))
        if unknown:
            raise ValidationError(unknown[0], "is not a GPU field; fields are "
                                  + ", ".join(GPU_FIELDS))
        clean: dict[str, Any] = {}
        for key, value in record.items():
            if key in ("vendor", "label", "source"):
                clean[key] = str(value)
            elif key == "price_is_example":
                clean[key] = _bool(key, value)
            else:
                clean[key] = _gpu_number(key, value)
        for key in _GPU_POSITIVE:
            if key not in clean:
                raise ValidationError(key, "is required (a number above 0)")
        if not any(clean.get(k) for k in _GPU_THROUGHPUT):
            raise ValidationError("bf16_tflops", "at least one of " + ", ".join(_GPU_THROUGHPUT)
                                  + " must be a number above 0")
        clean = {k: v for k, v in clean.items() if not (k in _GPU_THROUGHPUT and v == 0)}
        return convert.gpu_from_user_record(_name(name, "name"), clean)

    def add_gpu(self, name: str, record: dict[str, Any]) -> GpuInfo:
        """Add a GPU from unit-suffixed figures (``memory_gib``, ``bf16_tflops``, …)."""
        spec = self._gpu_spec(name, record)
        with self._write() as s:
            if s.scalar(select(GpuRow).where(func.lower(GpuRow.name) == spec.name.lower())):
                raise DuplicateError(f"a GPU named {spec.name!r} already exists")
            row = GpuRow(**convert.gpu_row_fields(spec))
            s.add(row)
            s.flush()
            return convert.gpu_info(row)

    def set_gpu(self, name: str, changes: dict[str, Any],
                expected_version: int | None = None) -> GpuInfo:
        """Change some figures of a GPU (a price, say); every scenario on it follows."""
        with self._write() as s:
            row = _by_name(s, GpuRow, "GPU", name, lock=True)
            if expected_version is not None and row.version != expected_version:
                raise ConflictError(f"GPU {row.name!r}", expected_version, row.version, {})
            record = convert.gpu_record(convert.gpu_spec(row))
            if any(k in changes for k in ("price_usd_per_hour",)) and \
                    "price_is_example" not in changes:
                changes = {**changes, "price_is_example": False}
            for key in _GPU_THROUGHPUT:
                if key in changes and _gpu_number(key, changes[key]) == 0:
                    record.pop(key, None)
            record.update({k: v for k, v in changes.items()
                           if not (k in _GPU_THROUGHPUT and _gpu_number(k, v) == 0)})
            spec = self._gpu_spec(row.name, record)
            for key, value in convert.gpu_row_fields(spec).items():
                setattr(row, key, value)
            s.flush()
            return convert.gpu_info(row)

    def delete_gpu(self, name: str) -> None:
        """Delete a GPU no scenario uses; else :class:`InUseError` listing the scenarios."""
        with self._write() as s:
            row = self._gpu_row(s, name)
            self._delete_unused(s, row, f"GPU {row.name!r}", ScenarioRow.gpu_id == row.id)

    # ------------------------------------------------------------------ fleets
    def fleets(self) -> list[Fleet]:
        """Every fleet with its scenario count."""
        with read_session(self.engine) as s:
            counts = dict(s.execute(select(ScenarioRow.fleet_id, func.count())
                                    .group_by(ScenarioRow.fleet_id)).all())
            return [convert.fleet(r, counts.get(r.id, 0))
                    for r in s.scalars(select(FleetRow).order_by(FleetRow.name))]

    def _fleet_row(self, s: Session, name: str) -> FleetRow:
        row = s.scalar(select(FleetRow).where(FleetRow.name == name))
        if row is None:
            raise NotFoundError("fleet", name, list(s.scalars(select(FleetRow.name))))
        return row

    def fleet(self, name: str) -> Fleet:
        """One fleet by name."""
        with read_session(self.engine) as s:
            row = self._fleet_row(s, name)
            count = s.scalar(select(func.count()).where(ScenarioRow.fleet_id == row.id)) or 0
            return convert.fleet(row, count)

    def new_fleet(self, name: str, description: str = "") -> Fleet:
        """Create an empty fleet."""
        with self._write() as s:
            name = _name(name, "fleet")
            if s.scalar(select(FleetRow).where(FleetRow.name == name)):
                raise DuplicateError(f"a fleet named {name!r} already exists")
            row = FleetRow(name=name, description=description)
            s.add(row)
            s.flush()
            return convert.fleet(row)

    def copy_fleet(self, source: str, name: str, description: str | None = None) -> Fleet:
        """A what-if copy of a fleet and all its scenarios."""
        with self._write() as s:
            src = self._fleet_row(s, source)
            name = _name(name, "fleet")
            if s.scalar(select(FleetRow).where(FleetRow.name == name)):
                raise DuplicateError(f"a fleet named {name!r} already exists")
            row = FleetRow(name=name, description=src.description if description is None
                           else description)
            s.add(row)
            s.flush()
            for sc in s.scalars(select(ScenarioRow).where(ScenarioRow.fleet_id == src.id)):
                s.add(_clone(sc, fleet_id=row.id))
            s.flush()
            count = s.scalar(select(func.count()).where(ScenarioRow.fleet_id == row.id)) or 0
            return convert.fleet(row, count)

    def delete_fleet(self, name: str) -> int:
        """Delete a fleet and its scenarios; returns how many scenarios went with it."""
        with self._write() as s:
            row = self._fleet_row(s, name)
            count = s.scalar(select(func.count()).where(ScenarioRow.fleet_id == row.id)) or 0
            s.delete(row)
            return count

    # ------------------------------------------------------------------ scenarios
    def scenarios(self, fleet: str | None = None) -> list[Scenario]:
        """Scenarios of one fleet (or of all), by fleet and name."""
        with read_session(self.engine) as s:
            # A Core select (no ORM identity map): 5,000 scenarios load in a third of the time.
            table = ScenarioRow.__table__
            stmt = (select(table, FleetRow.name.label("_fleet"), ModelRow.name.label("_model"),
                           GpuRow.name.label("_gpu"))
                    .join(FleetRow, FleetRow.id == table.c.fleet_id)
                    .join(ModelRow, ModelRow.id == table.c.model_id)
                    .join(GpuRow, GpuRow.id == table.c.gpu_id)
                    .order_by(FleetRow.name, table.c.name))
            if fleet is not None:
                stmt = stmt.where(table.c.fleet_id == self._fleet_row(s, fleet).id)
            return [convert.scenario_from_mapping(m) for m in s.execute(stmt).mappings()]

    def _scenario_row(self, s: Session, fleet: str, name: str, *, lock: bool = False
                      ) -> ScenarioRow:
        fleet_row = self._fleet_row(s, fleet)
        stmt = select(ScenarioRow).where(ScenarioRow.fleet_id == fleet_row.id,
                                         ScenarioRow.name == name)
        row = s.scalar(self._locked(stmt) if lock else stmt)
        if row is None:
            known = s.scalars(select(ScenarioRow.name).where(ScenarioRow.fleet_id == fleet_row.id))
            raise NotFoundError(f"scenario in fleet {fleet!r}", name, list(known))
        return row

    def scenario(self, fleet: str, name: str) -> Scenario:
        """One scenario."""
        with read_session(self.engine) as s:
            return convert.scenario(self._scenario_row(s, fleet, name))

    def _validated(self, s: Session, kind: str, model_row: ModelRow, gpu_row: GpuRow,
                   inputs: dict[str, Any], lora_targets: str) -> dict[str, Any]:
        """Validate a whole scenario (ranges, then cross-field rules against its model)."""
        if kind not in KINDS:
            raise ValidationError("kind", "one of " + ", ".join(KINDS), value=kind)
        spec = convert.model_info(model_row).spec
        columns = INFERENCE_INPUTS if kind == "inference" else TRAINING_INPUTS
        values = parse_inputs(columns, {k: v for k, v in inputs.items()
                                        if k in {c.name for c in columns}}, base=inputs)
        check_scenario(spec, convert.gpu_spec(gpu_row), values, kind, lora_targets)
        return values

    def _build_row(self, s: Session, fleet_row: FleetRow, fields: dict[str, Any]
                   ) -> ScenarioRow:
        fields = dict(fields)
        name = _name(str(fields.pop("name", "")), "name")
        kind = str(fields.pop("kind", "inference")).strip().lower()
        model_row = self._model_row(s, str(fields.pop("model", "")))
        gpu_row = self._gpu_row(s, str(fields.pop("gpu", "")))
        notes = str(fields.pop("notes", ""))
        lora_targets = str(fields.pop("lora_targets", "q,v"))
        known = {c.name for c in SCENARIO_INPUTS}
        for key in fields:
            if key not in known:
                raise ValidationError(key, "is not a scenario field; fields are "
                                      + ", ".join((*SCENARIO_META_FIELDS, *sorted(known))))
        base = {**defaults(SCENARIO_INPUTS),
                **(TRAINING_DEFAULT_OVERRIDES if kind == "training" else {})}
        inputs = {**base, **{k: c.parse(fields[k]) for c in SCENARIO_INPUTS
                             for k in [c.name] if k in fields}}
        values = self._validated(s, kind, model_row, gpu_row, inputs, lora_targets)
        return ScenarioRow(fleet_id=fleet_row.id, name=name, kind=kind, model_id=model_row.id,
                           gpu_id=gpu_row.id, notes=notes, lora_targets=lora_targets,
                           **{**inputs, **values})

    def new_scenario(self, fleet: str, name: str, *, model: str, gpu: str,
                     kind: str = "inference", notes: str = "", lora_targets: str = "q,v",
                     **inputs: Any) -> Scenario:
        """Create a scenario; inputs not given take their defaults."""
        with self._write() as s:
            return self._new_in(s, fleet, {"name": name, "kind": kind, "model": model,
                                           "gpu": gpu, "notes": notes,
                                           "lora_targets": lora_targets, **inputs})

    def _new_in(self, s: Session, fleet: str, fields: dict[str, Any]) -> Scenario:
        fleet_row = self._fleet_row(s, fleet)
        name = str(fields.get("name", ""))
        if s.scalar(select(ScenarioRow).where(ScenarioRow.fleet_id == fleet_row.id,
                                              ScenarioRow.name == name.strip())):
            raise DuplicateError(f"fleet {fleet!r} already has a scenario named {name!r}")
        row = self._build_row(s, fleet_row, fields)
        s.add(row)
        s.flush()
        return convert.scenario(row)

    def set_scenario(self, fleet: str, name: str, changes: dict[str, Any],
                     expected_version: int | None = None) -> Scenario:
        """Apply ``field=value`` changes as one logged change set.

        With ``expected_version``, a row changed since that version is refused with a
        :class:`ConflictError` naming the fields that changed and their current values."""
        if not changes:
            raise ValidationError("changes", "give at least one field=value")
        with self._write() as s:
            return self._set_in(s, fleet, name, changes, expected_version)

    def _set_in(self, s: Session, fleet: str, name: str, changes: dict[str, Any],
                expected_version: int | None) -> Scenario:
        row = self._scenario_row(s, fleet, name, lock=True)
        if expected_version is not None and row.version != expected_version:
            raise ConflictError(f"scenario {fleet}/{name}", expected_version, row.version,
                                self._changed_since(s, row.id, expected_version))
        before = self._field_values(row)
        fields = {**before, **changes}
        fresh = self._build_row(s, row.fleet, fields)
        if fresh.name != row.name and s.scalar(select(ScenarioRow).where(
                ScenarioRow.fleet_id == row.fleet_id, ScenarioRow.name == fresh.name)):
            raise DuplicateError(f"fleet {fleet!r} already has a scenario named "
                                 f"{fresh.name!r}")
        for column in ScenarioRow.__table__.columns:
            if column.name not in ("id", "fleet_id", "version", "created_at", "updated_at"):
                setattr(row, column.key, getattr(fresh, column.key))
        s.flush()
        s.expire(row, ["model", "gpu", "fleet"])
        after = self._field_values(row)
        self._log(s, row, before, after)
        return convert.scenario(row)

    @staticmethod
    def _field_values(row: ScenarioRow) -> dict[str, Any]:
        values = {"name": row.name, "kind": row.kind, "model": row.model.name,
                  "gpu": row.gpu.name, "notes": row.notes, "lora_targets": row.lora_targets}
        values.update({c.name: getattr(row, c.name) for c in SCENARIO_INPUTS})
        return values

    @staticmethod
    def _log(s: Session, row: ScenarioRow, before: dict[str, Any], after: dict[str, Any]
             ) -> None:
        change_set = uuid.uuid4().hex
        for key, old in before.items():
            new = after[key]
            if old != new:
                s.add(ScenarioChangeRow(scenario_id=row.id, change_set=change_set, field=key,
                                        old_value=_encode(old), new_value=_encode(new),
                                        version_after=row.version))

    @staticmethod
    def _changed_since(s: Session, scenario_id: int, version: int) -> dict[str, Any]:
        rows = s.scalars(select(ScenarioChangeRow).where(
            ScenarioChangeRow.scenario_id == scenario_id,
            ScenarioChangeRow.version_after > version).order_by(ScenarioChangeRow.id))
        return {r.field: _decode(r.new_value) for r in rows}

    def history(self, fleet: str, name: str) -> list[Change]:
        """The scenario's change log, oldest first."""
        with read_session(self.engine) as s:
            row = self._scenario_row(s, fleet, name)
            rows = s.scalars(select(ScenarioChangeRow).where(
                ScenarioChangeRow.scenario_id == row.id).order_by(ScenarioChangeRow.id))
            return [Change(r.change_set, r.field, _decode(r.old_value), _decode(r.new_value),
                           r.version_after, r.changed_at, r.undone) for r in rows]

    def undo(self, fleet: str) -> list[Change] | None:
        """Revert the latest change set of ``fleet``'s scenarios that is not undone yet; returns
        its changes (None when there is nothing to undo). Refused, changing nothing, if the
        scenario was changed since that change set."""
        return self._step(fleet, undo=True)

    def redo(self, fleet: str) -> list[Change] | None:
        """Re-apply the change set undone last, if no edit came after it."""
        return self._step(fleet, undo=False)

    def _step(self, fleet: str, *, undo: bool) -> list[Change] | None:
        with self._write() as s:
            fleet_row = self._fleet_row(s, fleet)
            ids = select(ScenarioRow.id).where(ScenarioRow.fleet_id == fleet_row.id)
            log = select(ScenarioChangeRow).where(ScenarioChangeRow.scenario_id.in_(ids))
            if undo:
                target = s.scalar(log.where(ScenarioChangeRow.undone.is_(False))
                                  .order_by(ScenarioChangeRow.id.desc()).limit(1))
            else:
                latest_done = s.scalar(select(func.max(ScenarioChangeRow.id)).where(
                    ScenarioChangeRow.scenario_id.in_(ids),
                    ScenarioChangeRow.undone.is_(False))) or 0
                target = s.scalar(log.where(ScenarioChangeRow.undone.is_(True),
                                            ScenarioChangeRow.id > latest_done)
                                  .order_by(ScenarioChangeRow.id.asc()).limit(1))
            if target is None:
                return None
            rows = list(s.scalars(select(ScenarioChangeRow).where(
                ScenarioChangeRow.change_set == target.change_set)
                .order_by(ScenarioChangeRow.id)))
            scenario = s.get(ScenarioRow, target.scenario_id,
                             with_for_update=self.engine.dialect.name == "postgresql")
            assert scenario is not None
            # Every edit, undo and redo records the version it left; a scenario at another
            # version was changed outside the log, and is not reverted blindly.
            expected = s.scalar(select(func.max(ScenarioChangeRow.version_after)).where(
                ScenarioChangeRow.scenario_id == scenario.id))
            if scenario.version != expected:
                raise ConflictError(f"scenario {fleet}/{scenario.name}", expected,
                                    scenario.version,
                                    self._changed_since(s, scenario.id, expected))
            values = {r.field: _decode(r.old_value if undo else r.new_value) for r in rows}
            fresh = self._build_row(s, scenario.fleet, {**self._field_values(scenario),
                                                        **values})
            for column in ScenarioRow.__table__.columns:
                if column.name not in ("id", "fleet_id", "version", "created_at", "updated_at"):
                    setattr(scenario, column.key, getattr(fresh, column.key))
            s.flush()
            for r in rows:
                r.undone = undo
                r.version_after = scenario.version
            return [Change(r.change_set, r.field, _decode(r.old_value), _decode(r.new_value),
                           r.version_after, r.changed_at, r.undone) for r in rows]

    def copy_scenario(self, fleet: str, name: str, new_name: str,
                      to_fleet: str | None = None) -> Scenario:
        """A what-if copy of a scenario, in the same fleet or another."""
        with self._write() as s:
            src = self._scenario_row(s, fleet, name)
            target = self._fleet_row(s, to_fleet or fleet)
            new_name = _name(new_name, "name")
            if s.scalar(select(ScenarioRow).where(ScenarioRow.fleet_id == target.id,
                                                  ScenarioRow.name == new_name)):
                raise DuplicateError(f"fleet {target.name!r} already has a scenario named "
                                     f"{new_name!r}")
            row = _clone(src, fleet_id=target.id, name=new_name)
            s.add(row)
            s.flush()
            return convert.scenario(row)

    def delete_scenario(self, fleet: str, name: str) -> None:
        """Delete a scenario (and its change log)."""
        with self._write() as s:
            s.delete(self._scenario_row(s, fleet, name))

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, scenario: Scenario) -> dict[str, Any]:
        """Every output column of one scenario."""
        return self.evaluate_many([scenario])[0]

    def evaluate_many(self, scenarios: list[Scenario]) -> list[dict[str, Any]]:
        """Outputs of many scenarios (one vectorized call per kind)."""
        from planner.sheet.fleet import evaluate_scenarios

        return evaluate_scenarios(scenarios, self.model_specs(), self.gpu_specs())

    def model_specs(self) -> dict[str, Any]:
        """Every model's spec, by name."""
        return {m.name: m.spec for m in self.models()}

    def gpu_specs(self) -> dict[str, Any]:
        """Every GPU's spec, by name."""
        return {g.name: g.spec for g in self.gpus()}

    def export(self, path: Any, fleets: list[str] | None = None, *, force: bool = False,
               sweeps: list[Any] | None = None, progress: Callable[[int], None] | None = None
               ) -> Any:
        """Write an Excel report of ``fleets`` (default: all) that still computes."""
        from pathlib import Path

        from planner.report.export import ExportReport, build_workbook, save_workbook

        names = fleets or [f.name for f in self.fleets()]
        scenarios = [s for name in names for s in self.scenarios(name)]
        models, gpus = self.models(), self.gpus()
        built = build_workbook(scenarios, models, gpus, sweeps=sweeps or (), progress=progress)
        save_workbook(built, Path(path), force=force)
        return ExportReport(Path(path), sum(s.kind == "inference" for s in scenarios),
                            sum(s.kind == "training" for s in scenarios), len(models), len(gpus),
                            len(sweeps or ()), built.workbook.sheetnames)

    def import_workbook(self, path: Any, *, fleet: str | None = None,
                        dry_run: bool = False) -> list[Any]:
        """Apply a report's edited inputs (all rows or, on any error, none); returns the row
        plans (with ``dry_run``, without applying them)."""
        from pathlib import Path

        from planner.report.importer import read_plan

        existing = {sc.id: sc for sc in self.scenarios()}
        plans = read_plan(Path(path), existing=existing, models=self.model_specs(),
                          gpus=self.gpu_specs(), default_fleet=fleet,
                          fleets={f.name for f in self.fleets()})
        if dry_run:
            return plans
        with self._write() as s:
            for plan in plans:
                if plan.id is None:
                    self._new_in(s, plan.fleet, plan.fields)
                elif plan.fields:
                    self._set_in(s, plan.fleet, plan.name, plan.fields, plan.version)
        return plans

    def evaluate_frame(self, frame: Any, outputs: Any = None) -> Any:
        """:func:`planner.sheet.evaluate` with this database's models and GPUs."""
        from planner.sheet.frame import evaluate

        return evaluate(frame, self.model_specs(), self.gpu_specs(), outputs)


def _by_name(s: Session, table: type[Any], kind: str, name: str, *, lock: bool = False) -> Any:
    """The row of ``table`` named ``name`` (case-insensitive), or :class:`NotFoundError` listing
    the names there are."""
    stmt = select(table).where(func.lower(table.name) == name.strip().lower())
    if lock and s.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update()
    row = s.scalar(stmt)
    if row is None:
        raise NotFoundError(kind, name, list(s.scalars(select(table.name))))
    return row


def _clone(src: ScenarioRow, **overrides: Any) -> ScenarioRow:
    values = {c.key: getattr(src, c.key) for c in ScenarioRow.__table__.columns
              if c.key not in ("id", "version", "created_at", "updated_at")}
    values.update(overrides)
    return ScenarioRow(**values)


def _name(value: str, field: str) -> str:
    text = value.strip()
    if not text or len(text) > 200:
        raise ValidationError(field, "must be 1 to 200 characters", value=value)
    return text


def _bool(field: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValidationError(field, "true or false", value=value)


def _gpu_number(field: str, value: Any) -> float:
    try:
        number = float(str(value).replace("_", "").replace(",", ""))
    except ValueError:
        number = float("nan")
    if not number == number or number in (float("inf"), float("-inf")) or number < 0:
        raise ValidationError(field, "must be a number of at least 0", value=value)
    if field in _GPU_POSITIVE and number == 0:
        raise ValidationError(field, "must be a number above 0", value=value)
    return number


def _integrity(exc: IntegrityError) -> str:
    return str(exc.orig).splitlines()[0] if exc.orig else str(exc)


def _safe(url: str) -> str:
    """The URL without its password."""
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<database>"
