"""Use cases over the catalog: the models and GPUs scenarios refer to.

Every method is one transaction. A write drops the written name from the workspace's
:class:`~planner.service.specs.SpecCache`, so the next evaluation parses it afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from planner.core.errors import NotFoundError
from planner.service.fields import clean_name, clean_text
from planner.service.gpu_records import changed_spec, spec_from_user
from planner.service.hub import parse_hub_id
from planner.service.specs import SpecCache
from planner.spec.domain import ConflictError, DuplicateError, GpuInfo, InUseError, ModelInfo
from planner.store import convert, queries, rowspec
from planner.store.engine import read_session, write_transaction
from planner.store.schema import GpuRow, ModelRow, ScenarioRow


def model_row_by_ref(s: Session, ref: str) -> ModelRow:
    """The model a command's ``--model`` names: by name (case-insensitive), else by the Hub
    id it was imported from (``org/name``, ``org/name@<commit>``; the oldest import when
    several match). A Hub id nothing was imported from is refused with the command that
    imports it."""
    try:
        return queries.model_row(s, ref)
    except NotFoundError:
        parsed = parse_hub_id(ref)
        if parsed is None:
            raise
    repo_id, revision = parsed
    rows = [r for r in queries.model_rows_from_hub(s, repo_id)
            if revision is None or r.hub_revision.startswith(revision)]
    if not rows:
        at = f"@{revision}" if revision else ""
        error = NotFoundError("model", ref)
        error.args = (f"{error}: no model was imported from it; import it first: "
                      f"planner model import {repo_id}{at}",)
        raise error
    return rows[0]


class Catalog:
    """Models and GPUs of the database behind ``engine``."""

    def __init__(self, engine: Engine, specs: SpecCache) -> None:
        self.engine = engine
        self.specs = specs

    def _model_info(self, row: ModelRow) -> ModelInfo:
        return convert.model_info(row, spec=self.specs.model_spec(row))

    # ------------------------------------------------------------------ models
    def models(self) -> list[ModelInfo]:
        """Every model, by name."""
        with read_session(self.engine) as s:
            return [self._model_info(r)
                    for r in s.scalars(select(ModelRow).order_by(ModelRow.name))]

    def model(self, name: str) -> ModelInfo:
        """One model by name (case-insensitive), or by the Hub id it was imported from
        (:func:`model_row_by_ref`)."""
        with read_session(self.engine) as s:
            return self._model_info(model_row_by_ref(s, name))

    def import_models(self, items: Iterable[tuple[Any, ...]], *,
                      notes: str = "", progress: Callable[[int], None] | None = None
                      ) -> list[ModelInfo]:
        """Add many models in one transaction: all of them, or (on any error) none. Each item
        is ``(name, config, source)``, or ``(name, config, source, hub_repo, hub_revision)``
        for a config read from the Hugging Face Hub."""
        out = []
        notes = clean_text(notes, "notes")
        with write_transaction(self.engine) as s:
            existing = queries.model_names_lower(s)
            for i, (name, config, source, *hub) in enumerate(items, 1):
                name = clean_name(name, "name")
                source = clean_text(source, "source")
                if name.lower() in existing:
                    raise DuplicateError(f"a model named {name!r} already exists")
                hub_repo, hub_revision = (*hub, "", "")[:2]
                row = ModelRow(**convert.model_row_fields(name, config, source), notes=notes,
                               hub_repo=hub_repo, hub_revision=hub_revision)
                s.add(row)
                s.flush()
                existing.add(name.lower())
                self.specs.invalidate(name)
                out.append(convert.model_info(row))
                if progress:
                    progress(i)
        return out

    def delete_model(self, name: str) -> None:
        """Delete a model no scenario uses; else :class:`InUseError` listing the scenarios."""
        with write_transaction(self.engine) as s:
            row = queries.model_row(s, name)
            _delete_unused(s, row, f"model {row.name!r}", ScenarioRow.model_id == row.id)
            self.specs.invalidate(row.name)

    def set_model_notes(self, name: str, notes: str) -> ModelInfo:
        """Replace a model's notes."""
        with write_transaction(self.engine) as s:
            row = queries.model_row(s, name)
            row.notes = clean_text(notes, "notes")
            s.flush()
            self.specs.invalidate(row.name)
            return self._model_info(row)

    # ------------------------------------------------------------------ GPUs
    def gpus(self) -> list[GpuInfo]:
        """Every GPU, by name."""
        with read_session(self.engine) as s:
            return [convert.gpu_info(r) for r in s.scalars(select(GpuRow).order_by(GpuRow.name))]

    def gpu(self, name: str) -> GpuInfo:
        """One GPU by name (case-insensitive)."""
        with read_session(self.engine) as s:
            return convert.gpu_info(queries.gpu_row(s, name))

    def add_gpu(self, name: str, record: dict[str, Any]) -> GpuInfo:
        """Add a GPU from unit-suffixed figures (``memory_gib``, ``bf16_tflops``, …)."""
        spec = spec_from_user(name, record)
        with write_transaction(self.engine) as s:
            if queries.gpu_named(s, spec.name):
                raise DuplicateError(f"a GPU named {spec.name!r} already exists")
            row = GpuRow(**convert.gpu_row_fields(spec))
            s.add(row)
            s.flush()
            self.specs.invalidate(row.name)
            return convert.gpu_info(row)

    def set_gpu(self, name: str, changes: dict[str, Any],
                expected_version: int | None = None) -> GpuInfo:
        """Change some figures of a GPU (a price, say); every scenario on it follows."""
        with write_transaction(self.engine) as s:
            return self.set_gpu_in(s, name, changes, expected_version)

    def set_gpu_in(self, s: Session, name: str, changes: dict[str, Any],
                   expected_version: int | None = None) -> GpuInfo:
        """:meth:`set_gpu` inside the caller's transaction ``s`` (a workbook import applies
        its GPUs sheet edits with its scenario rows, all or none)."""
        row = queries.gpu_row(s, name, lock=True)
        if expected_version is not None and row.version != expected_version:
            raise ConflictError(f"GPU {row.name!r}", expected_version, row.version, {})
        spec = changed_spec(rowspec.gpu_spec(row), changes)
        for key, value in convert.gpu_row_fields(spec).items():
            setattr(row, key, value)
        s.flush()
        self.specs.invalidate(row.name)
        return convert.gpu_info(row)

    def delete_gpu(self, name: str) -> None:
        """Delete a GPU no scenario uses; else :class:`InUseError` listing the scenarios."""
        with write_transaction(self.engine) as s:
            row = queries.gpu_row(s, name)
            _delete_unused(s, row, f"GPU {row.name!r}", ScenarioRow.gpu_id == row.id)
            self.specs.invalidate(row.name)


def _delete_unused(s: Session, row: Any, what: str, used_by: Any) -> None:
    """Delete ``row`` unless scenarios match ``used_by``; then list them in the error."""
    users = queries.users(s, used_by)
    if users:
        raise InUseError(what, users)
    s.delete(row)
