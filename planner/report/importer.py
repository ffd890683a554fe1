"""Read a report's scenario inputs back: validate every cell, then plan the changes.

Rows are keyed by the ``id`` column: a row with an id updates that scenario (only the fields
that differ, guarded by the row's ``version``), a row without one creates a scenario. Every bad
cell is reported with its sheet, cell address, column and reason, all at once; the plan is
applied by the workspace in one transaction, or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.errors import PlannerError, ValidationError
from planner.estimator.architecture import ModelSpec
from planner.estimator.gpu import GpuSpec
from planner.report.layout import KNOWN_SHEETS, SCENARIO_SHEETS, scenario_columns
from planner.sheet.table import check_scenario, inputs_of


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


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value if value != "" else None
    return value


def read_plan(path: Path, *, existing: dict[int, Any], models: dict[str, ModelSpec],
              gpus: dict[str, GpuSpec], default_fleet: str | None,
              fleets: set[str]) -> list[RowPlan]:
    """Validate the workbook at ``path`` against the database's scenarios (``existing``, by
    id), models and GPUs; return the row plans or raise :class:`ImportError_` listing every
    problem."""
    import python_calamine


    if not Path(path).exists():
        raise PlannerError(f"{path}: no such file")
    try:
        wb = python_calamine.CalamineWorkbook.from_path(str(path))
    except Exception as exc:
        raise PlannerError(f"{path}: not a readable .xlsx workbook ({exc})") from exc
    unknown = [s for s in wb.sheet_names
               if s not in KNOWN_SHEETS and not s.startswith("Sweep ")]
    if unknown:
        raise ImportError_(path, problem=f"unknown sheet(s) {', '.join(unknown)}; a planner "
                           f"report has {', '.join(KNOWN_SHEETS)} and 'Sweep N' sheets")
    present = [kind for kind, sheet in SCENARIO_SHEETS.items() if sheet in wb.sheet_names]
    if not present:
        raise ImportError_(path, problem="no Scenarios or Training sheet")
    errors: list[CellError] = []
    plans: list[RowPlan] = []
    lower_models = {k.lower(): k for k in models}
    lower_gpus = {k.lower(): k for k in gpus}
    for kind in present:
        sheet = SCENARIO_SHEETS[kind]
        table = wb.get_sheet_by_name(sheet).to_python(skip_empty_area=False)
        columns = [c for c in scenario_columns(kind) if c.role in ("meta", "input")]
        rows = iter(table)
        header = next(rows, None) or ()
        expected = [c.header for c in scenario_columns(kind)]
        got = [str(h) if h not in (None, "") else "" for h in header]
        if got[:len(expected)] != expected or any(got[len(expected):]):
            bad = next((i for i, (g, e) in enumerate(zip(got, expected, strict=False))
                        if g != e), min(len(got), len(expected)))
            from openpyxl.utils import get_column_letter

            raise ImportError_(path, problem=(
                f"{sheet}!{get_column_letter(bad + 1)}1: unexpected header "
                f"{got[bad] if bad < len(got) else '(missing)'!r}; expected "
                f"{expected[bad] if bad < len(expected) else '(nothing)'!r}"))
        index = {c.key: i for i, c in enumerate(scenario_columns(kind))}
        from openpyxl.utils import get_column_letter

        inputs = {c.name: c for c in inputs_of(kind)}
        for r, values in enumerate(rows, 2):
            if values is None or all(_clean(v) is None for v in values[:len(columns)]):
                continue
            cell = {c.key: _clean(values[index[c.key]]) if index[c.key] < len(values) else None
                    for c in columns}
            row_errors: list[CellError] = []

            def bad(key: str, reason: str, r: int = r, row_errors: list = row_errors,
                    sheet: str = sheet, index: dict = index) -> None:
                row_errors.append(CellError(sheet, f"{get_column_letter(index[key] + 1)}{r}",
                                            key, reason))

            parsed: dict[str, Any] = {}
            for key, spec in inputs.items():
                raw = cell[key]
                if raw is None:
                    bad(key, f"is empty; must be {spec.allowed()}")
                    continue
                try:
                    parsed[key] = spec.parse(raw)
                except ValidationError as exc:
                    bad(key, f"must be {exc.allowed}" if not exc.allowed.startswith("must")
                        else exc.allowed)
            model = lower_models.get(str(cell["model"] or "").lower())
            gpu = lower_gpus.get(str(cell["gpu"] or "").lower())
            if model is None:
                bad("model", f"unknown model {cell['model']!r}")
            if gpu is None:
                bad("gpu", f"unknown GPU {cell['gpu']!r}")
            if not cell["name"]:
                bad("name", "is empty")
            sid = cell["id"]
            if sid is not None and (not isinstance(sid, (int, float)) or int(sid) not in
                                    existing):
                bad("id", f"no scenario has id {sid!r} (leave it empty to create one)")
            fleet = cell["fleet"] or default_fleet
            if not fleet:
                bad("fleet", "is empty and no --fleet was given")
            elif sid is None and fleet not in fleets:
                bad("fleet", f"unknown fleet {fleet!r}")
            lora_targets = str(cell.get("lora_targets") or "q,v")
            if not row_errors and model and gpu:
                try:
                    check_scenario(models[model], gpus[gpu], parsed, kind, lora_targets)
                except ValidationError as exc:
                    key = exc.field if exc.field in index else "model"
                    bad(key, str(exc).split(": ", 1)[1])
            if row_errors:
                errors += row_errors
                continue
            fields: dict[str, Any] = {"model": model, "gpu": gpu, "notes": cell["notes"] or "",
                                      "name": str(cell["name"]), **parsed}
            if kind == "training":
                fields["lora_targets"] = lora_targets
            if sid is None:
                plans.append(RowPlan(sheet, r, kind, str(fleet), str(cell["name"]), None, None,
                                     {**fields, "kind": kind}))
                continue
            current = existing[int(sid)]
            if current.fleet != fleet:
                bad("fleet", f"scenario {int(sid)} is in fleet {current.fleet!r}; moving "
                             "between fleets is `planner scenario copy`")
                errors += row_errors
                continue
            now = {"model": current.model, "gpu": current.gpu, "notes": current.notes,
                   "name": current.name, "lora_targets": current.lora_targets,
                   **current.inputs}
            changed = {k: v for k, v in fields.items() if not _same(now.get(k), v)}
            version = cell["version"]
            plans.append(RowPlan(sheet, r, kind, current.fleet, current.name, int(sid),
                                 int(version) if isinstance(version, (int, float)) else None,
                                 changed))
    if errors:
        raise ImportError_(path, errors)
    return plans


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b
