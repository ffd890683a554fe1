"""An edit of one scenario, checked and evaluated once before it is saved.

The terminal UI shows an edited row at once and saves it in a worker. :func:`check_edit` turns
the typed values into the validated changes and the row's outputs in one pass: each changed
value is parsed once by its registry column, and the edited scenario is evaluated once through
the same vectorized path as a fleet (which also applies the cross-field rules: parallelism,
a tensor path for the weight dtype, LoRA targets). :meth:`Workspace.save_edit
<planner.service.workspace.Workspace.save_edit>` then writes the checked changes without
parsing them again and returns the outputs computed here, so neither step repeats work.
No database is read: the caller passes the catalog it shows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planner.compute.fleet import evaluate_scenarios
from planner.compute.profiles import CalibrationFigures
from planner.compute.table import RowError, inputs_of
from planner.core.errors import ValidationError, not_one_of
from planner.service.fields import FIELDS_LISTING, clean_lora_targets, clean_name, clean_text
from planner.spec.architecture import ModelSpec
from planner.spec.domain import Scenario
from planner.spec.gpu import GpuSpec

META_FIELDS = ("model", "gpu", "lora_targets", "notes", "name")
"""Fields of a scenario that are not input columns."""


@dataclass(frozen=True, slots=True)
class CheckedEdit:
    """Validated changes to one scenario, the scenario with them, and its outputs."""

    before: Scenario
    after: Scenario
    changes: dict[str, Any]
    """Field → validated value (input columns parsed by the registry)."""
    outputs: dict[str, Any]


def check_edit(sc: Scenario, changes: Mapping[str, Any], models: Mapping[str, ModelSpec],
               gpus: Mapping[str, GpuSpec],
               profiles: Sequence[CalibrationFigures] | None = None) -> CheckedEdit:
    """Parse each of ``changes`` once and evaluate the edited scenario once (with the
    calibration ``profiles`` its ``calibration`` input may pick); raises
    :class:`ValidationError` naming the field (and the allowed range) otherwise."""
    columns = {c.name: c for c in inputs_of(sc.kind)}
    parsed = {key: _parsed_field(key, raw, columns) for key, raw in changes.items()}
    meta = {k: v for k, v in parsed.items() if k in META_FIELDS}
    inputs = {**sc.inputs, **{k: v for k, v in parsed.items() if k in columns}}
    after = dataclasses.replace(sc, inputs=inputs, **meta)
    try:
        outputs = evaluate_scenarios([after], models, gpus, profiles)[0]
    except RowError as exc:  # one row: name the field, not the row
        raise ValidationError(exc.field, exc.allowed, value=exc.value) from None
    return CheckedEdit(sc, after, parsed, outputs)


def _parsed_field(key: str, raw: Any, columns: Mapping[str, Any]) -> Any:
    """One edited field parsed: an input by its column, the name cleaned, the model and GPU
    names stripped, LoRA targets and notes cleaned; any other field refused."""
    if key in columns:
        return columns[key].parse(raw)
    if key == "name":
        return clean_name(str(raw), "name")
    if key in META_FIELDS:
        return (str(raw).strip() if key in ("model", "gpu")
                else clean_lora_targets(raw) if key == "lora_targets"
                else clean_text(raw, key))
    raise ValidationError(key, not_one_of(key, (*META_FIELDS, *columns),
                                          "is not a scenario field", FIELDS_LISTING))
