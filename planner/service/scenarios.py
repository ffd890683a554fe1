"""Use cases over scenarios: build and validate one from user fields, create, edit, copy,
delete.

A scenario is validated whole on every write (input ranges, then the cross-field rules
against its model and GPU), so a stored row always evaluates. An edit is one logged change
set (:mod:`planner.store.changelog`); with ``expected_version`` it is refused, writing
nothing, if the row moved on (:class:`ConflictError` names what changed).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from planner.compute.inputs import (
    TRAINING_DEFAULT_OVERRIDES,
    defaults,
)
from planner.compute.profiles import resolve
from planner.compute.table import KINDS, check_scenario
from planner.core.errors import ValidationError, not_one_of
from planner.service.calibration import calibration_figures
from planner.service.catalog_edits import model_row_by_ref
from planner.service.edits import CheckedEdit
from planner.service.fields import FIELDS_LISTING, clean_lora_targets, clean_name, clean_text
from planner.service.options import (
    OPTION_FIELDS,
    Touched,
    check_delete,
    check_join,
    group_rows,
    parse_chosen,
    resolve_base,
    settle,
)
from planner.service.specs import SpecCache
from planner.spec.domain import DuplicateError, Scenario
from planner.store import changelog, convert, queries
from planner.store.engine import read_session, write_transaction
from planner.store.plans import copy_demands
from planner.store.scenarios import check_version, clone, field_values, overwrite
from planner.store.schema import SCENARIO_INPUTS, FleetRow, GpuRow, ModelRow, ScenarioRow

SCENARIO_META_FIELDS = ("name", "kind", "model", "gpu", "notes", "lora_targets", *OPTION_FIELDS)
"""Scenario fields that are not input columns but can be set with ``field=value``."""


class Scenarios:
    """The scenarios of the database behind ``engine``; ``specs`` parses their models."""

    def __init__(self, engine: Engine, specs: SpecCache) -> None:
        self.engine = engine
        self.specs = specs

    # ------------------------------------------------------------------ reading
    def scenarios(self, fleet: str | None = None, limit: int | None = None,
                  after: str | None = None) -> list[Scenario]:
        """Scenarios of one fleet (or of all), by fleet and name (the first ``limit``; with
        ``after``, of one fleet, those named after it)."""
        if after is not None and fleet is None:
            raise ValidationError("after", "reads one fleet's scenarios: give the fleet")
        with read_session(self.engine) as s:
            fleet_id = None if fleet is None else queries.fleet_row(s, fleet).id
            return [convert.scenario_from_mapping(m)
                    for m in queries.scenario_mappings(s, fleet_id, limit, after)]

    def versions(self, fleet: str) -> dict[int, int]:
        """Each scenario of ``fleet``: id → version. Cheap enough to poll: a view compares it
        with what it shows to find the rows another client changed, added or deleted."""
        from sqlalchemy import select

        with read_session(self.engine) as s:
            fleet_id = queries.fleet_row(s, fleet).id
            rows = s.execute(select(ScenarioRow.id, ScenarioRow.version)
                             .where(ScenarioRow.fleet_id == fleet_id)).all()
            return {sid: version for sid, version in rows}

    def stamp(self, fleet: str) -> tuple[Any, ...]:
        """A fingerprint of ``fleet``'s rows: (count, sum of ids, sum of versions, last
        change). Any write changes it (a new or deleted row the count or the ids, an edit a
        version and the time), so a view polling for other clients' changes reads it, one
        aggregate row the database computes, and reads :meth:`versions` (a row per scenario)
        only when it moved."""
        from sqlalchemy import func, select

        with read_session(self.engine) as s:
            fleet_id = queries.fleet_row(s, fleet).id
            row = s.execute(select(func.count(), func.sum(ScenarioRow.id),
                                   func.sum(ScenarioRow.version),
                                   func.max(ScenarioRow.updated_at))
                            .where(ScenarioRow.fleet_id == fleet_id)).one()
            return tuple(row)

    def scenario(self, fleet: str, name: str) -> Scenario:
        """One scenario."""
        with read_session(self.engine) as s:
            return convert.scenario(queries.scenario_row(s, fleet, name))

    # ------------------------------------------------------------------ building
    def build_row(self, s: Session, fleet_row: FleetRow, fields: dict[str, Any], *,
                  checked: frozenset[str] = frozenset()) -> ScenarioRow:
        """A validated, unsaved scenario row of ``fleet_row`` from user ``fields`` (names of
        model and GPU, raw input values; missing inputs take their defaults). Each input value
        is parsed once, except those named in ``checked``: values already validated (a stored
        row's, or a :class:`~planner.service.edits.CheckedEdit`'s). The cross-field rules are
        checked against the database's model and GPU either way."""
        fields = dict(fields)
        name = clean_name(str(fields.pop("name", "")), "name")
        kind = str(fields.pop("kind", "inference")).strip().lower()
        model_row = model_row_by_ref(s, str(fields.pop("model", "")))
        gpu_row = queries.gpu_row(s, str(fields.pop("gpu", "")))
        notes = clean_text(fields.pop("notes", ""), "notes")
        lora_targets = clean_lora_targets(fields.pop("lora_targets", "q,v"))
        base_row = resolve_base(s, fleet_row.id, fleet_row.name, name,
                                fields.pop("option_of", None))
        chosen = parse_chosen(fields.pop("chosen", base_row is None))
        inputs = _parsed_inputs(fields, kind, checked)
        self._check(kind, model_row, gpu_row, inputs, lora_targets)
        if kind == "inference" and inputs.get("decode_gpu", "same") != "same":
            self._check_decode_gpu(s, model_row, inputs)
        if kind == "inference" and inputs.get("calibration") not in ("auto", "none"):
            # a named profile must exist and be fitted for this GPU and engine
            resolve(str(inputs["calibration"]), gpu_row.name, str(inputs["engine"]),
                    calibration_figures(s))
        return ScenarioRow(fleet_id=fleet_row.id, name=name, kind=kind, model_id=model_row.id,
                           gpu_id=gpu_row.id, notes=notes, lora_targets=lora_targets,
                           option_of_id=None if base_row is None else base_row.id,
                           chosen=chosen, **inputs)

    def _check(self, kind: str, model_row: ModelRow, gpu_row: GpuRow,
               inputs: dict[str, Any], lora_targets: str) -> None:
        """The cross-field rules of a scenario whose values are each valid, against its model
        and GPU."""
        if kind not in KINDS:
            raise ValidationError("kind", "one of " + ", ".join(KINDS), value=kind)
        check_scenario(self.specs.model_spec(model_row), self.specs.gpu_spec(gpu_row), inputs,
                       kind, lora_targets)

    def _check_decode_gpu(self, s: Session, model_row: ModelRow, inputs: dict[str, Any]
                          ) -> None:
        """A disaggregated scenario's ``decode_gpu`` (issue 25) names a GPU of the database
        with a tensor path for the scenario's weights."""
        # lazy: only a disaggregated scenario's decode GPU needs the error type here
        from planner.core.errors import NotFoundError

        # lazy: the GPU tensor-path rule, only for a disaggregated scenario's decode GPU
        from planner.spec.gpu import compute_dtype

        try:
            decode_row = queries.gpu_row(s, str(inputs["decode_gpu"]))
        except NotFoundError:
            raise ValidationError("decode_gpu", "same or the name of a GPU of the catalog "
                                  "(planner gpu list)", value=inputs["decode_gpu"]) from None
        compute_dtype(self.specs.gpu_spec(decode_row), inputs["weight_dtype"],
                      inputs.get("quant_mode", "auto"),
                      self.specs.model_spec(model_row).quantization)

    # ------------------------------------------------------------------ writing
    def new_scenario(self, fleet: str, name: str, *, model: str, gpu: str,
                     kind: str = "inference", notes: str = "", lora_targets: str = "q,v",
                     **inputs: Any) -> Scenario:
        """Create a scenario; inputs not given take their defaults."""
        with write_transaction(self.engine) as s:
            return self.new_in(s, fleet, {"name": name, "kind": kind, "model": model,
                                          "gpu": gpu, "notes": notes,
                                          "lora_targets": lora_targets, **inputs})

    def new_in(self, s: Session, fleet: str, fields: dict[str, Any]) -> Scenario:
        """Create a scenario inside the open write transaction ``s``."""
        fleet_row = queries.fleet_row(s, fleet)
        name = str(fields.get("name", ""))
        if queries.scenario_named(s, fleet_row.id, name.strip()):
            raise DuplicateError(f"fleet {fleet!r} already has a scenario named {name!r}")
        row = self.build_row(s, fleet_row, fields)
        s.add(row)
        s.flush()
        if any(k in fields for k in OPTION_FIELDS):
            touched = Touched()
            settle(s, row, {"option_of": None, "chosen": True}, fields, touched,
                   creating=True)
            touched.log(s, changelog.new_change_set())
            s.expire(row, ["option_of"])
        return convert.scenario(row)

    def set_scenario(self, fleet: str, name: str, changes: dict[str, Any],
                     expected_version: int | None = None) -> Scenario:
        """Apply ``field=value`` changes as one logged change set.

        With ``expected_version``, a row changed since that version is refused with a
        :class:`ConflictError` naming the fields that changed and their current values."""
        if not changes:
            raise ValidationError("changes", "give at least one field=value")
        with write_transaction(self.engine) as s:
            return self.set_in(s, fleet, name, changes, expected_version)

    def save_edit(self, edit: CheckedEdit, expected_version: int | None = None) -> Scenario:
        """Write a :func:`~planner.service.edits.check_edit` result as one logged change set,
        guarded like :meth:`set_scenario`; its values are not parsed again."""
        sc = edit.before
        with write_transaction(self.engine) as s:
            return self.set_in(s, sc.fleet, sc.name, edit.changes, expected_version,
                               checked=True)

    def set_in(self, s: Session, fleet: str, name: str, changes: dict[str, Any],
               expected_version: int | None, *, checked: bool = False) -> Scenario:
        """Edit a scenario inside the open write transaction ``s``. The stored values are not
        parsed again, nor ``changes`` when ``checked`` (a :class:`CheckedEdit`'s)."""
        row = queries.scenario_row(s, fleet, name, lock=True)
        check_version(s, row, expected_version, f"scenario {fleet}/{name}")
        before = field_values(row)
        valid = (before.keys() - changes.keys()) | (changes.keys() if checked else set())
        fresh = self.build_row(s, row.fleet, {**before, **changes}, checked=frozenset(valid))
        if fresh.name != row.name and queries.scenario_named(s, row.fleet_id, fresh.name):
            raise DuplicateError(f"fleet {fleet!r} already has a scenario named "
                                 f"{fresh.name!r}")
        check_join(s, row, fresh.option_of_id)
        overwrite(row, fresh)
        s.flush()
        touched = Touched()
        if any(k in changes for k in OPTION_FIELDS):
            settle(s, row, before, changes, touched)
            s.flush()
        s.expire(row, ["model", "gpu", "fleet", "option_of"])
        change_set = changelog.new_change_set()
        changelog.log(s, row, before, field_values(row), change_set=change_set)
        touched.log(s, change_set)
        return convert.scenario(row)

    def choose(self, fleet: str, name: str, expected_version: int | None = None) -> Scenario:
        """Choose a scenario in its option group: it is counted in roll-ups and totals, the
        rest of its group is not. One transaction, one change set (one undo step). Refused for
        a scenario in no group."""
        with write_transaction(self.engine) as s:
            row = queries.scenario_row(s, fleet, name, lock=True)
            if len(group_rows(s, row)) == 1:
                raise ValidationError("scenario", f"{fleet}/{name} is no one's option and has "
                                      "no options: it is always counted (make an option "
                                      "with `planner scenario option`)")
            return self.set_in(s, fleet, name, {"chosen": True}, expected_version)

    def add_options(self, fleet: str, name: str, variants: list[dict[str, Any]], *,
                    choose_first: bool = False) -> list[Scenario]:
        """Write ``variants`` (field changes, e.g. a solver's best answers) as new options of
        scenario ``name``'s group: each a copy of it with those changes, named
        ``NAME+column=value+…``, an option of its base (of ``name`` itself when it is no one's
        option). None is chosen, so the fleet's totals do not move, unless ``choose_first``
        (the first variant is chosen). One transaction: all or none."""
        with write_transaction(self.engine) as s:
            row = queries.scenario_row(s, fleet, name)
            base = row.option_of.name if row.option_of is not None else row.name
            fields = {k: v for k, v in field_values(row).items()
                      if k not in ("name", *OPTION_FIELDS)}
            made = []
            for i, changes in enumerate(variants):
                label = "+".join(f"{k}={v}" for k, v in changes.items())
                made.append(self.new_in(s, fleet, {
                    **fields, **changes, "name": f"{name}+{label}"[:200], "option_of": base,
                    "chosen": choose_first and i == 0}))
            return made

    def copy_scenario(self, fleet: str, name: str, new_name: str,
                      to_fleet: str | None = None) -> Scenario:
        """A what-if copy of a scenario, in the same fleet or another."""
        with write_transaction(self.engine) as s:
            src = queries.scenario_row(s, fleet, name)
            target = queries.fleet_row(s, to_fleet or fleet)
            new_name = clean_name(new_name, "name")
            if queries.scenario_named(s, target.id, new_name):
                raise DuplicateError(f"fleet {target.name!r} already has a scenario named "
                                     f"{new_name!r}")
            row = clone(src, fleet_id=target.id, name=new_name)
            s.add(row)
            s.flush()
            copy_demands(s, [(src.id, row.id)])
            return convert.scenario(row)

    def delete_scenario(self, fleet: str, name: str) -> None:
        """Delete a scenario (and its change log). Refused for the base of options and for the
        chosen option of a group (:func:`planner.service.options.check_delete`)."""
        with write_transaction(self.engine) as s:
            row = queries.scenario_row(s, fleet, name, lock=True)
            check_delete(s, row, fleet)
            s.delete(row)


def _parsed_inputs(fields: dict[str, Any], kind: str, checked: frozenset[str]) -> dict[str, Any]:
    """A scenario's inputs: the kind's defaults, then each input of ``fields`` parsed (those
    in ``checked`` taken as they are); a field that is no scenario input refused, naming the
    fields there are."""
    known = {c.name for c in SCENARIO_INPUTS}
    for key in fields:
        if key not in known:
            raise ValidationError(key, not_one_of(
                key, (*SCENARIO_META_FIELDS, *sorted(known)), "is not a scenario field",
                FIELDS_LISTING))
    base = {**defaults(SCENARIO_INPUTS),
            **(TRAINING_DEFAULT_OVERRIDES if kind == "training" else {})}
    return {**base, **{k: fields[k] if k in checked else c.parse(fields[k])
                       for c in SCENARIO_INPUTS for k in [c.name] if k in fields}}
