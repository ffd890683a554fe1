"""Domain objects the workspace hands to the CLI, the UI and reports: never ORM rows.

They are frozen snapshots of one read: a ``version`` says which revision of the row they show,
and an edit that names it is refused if the row has moved on since (see
:class:`ConflictError`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from planner.core.errors import PlannerError
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model in the database: its config, parsed spec and headline figures."""

    id: int
    name: str
    source: str
    model_type: str
    config: dict[str, Any]
    spec: ModelSpec
    params_total: int
    params_active: int
    kv_bytes_per_token_bf16: int
    notes: str
    version: int
    hub_repo: str = ""
    """The Hugging Face repo id the config was read from (empty for a file)."""
    hub_revision: str = ""
    """The commit it was read at."""


@dataclass(frozen=True, slots=True)
class GpuInfo:
    """A GPU in the database."""

    id: int
    spec: GpuSpec
    version: int

    @property
    def name(self) -> str:
        """The GPU's unique name."""
        return self.spec.name


@dataclass(frozen=True, slots=True)
class Fleet:
    """A named plan holding scenarios."""

    id: int
    name: str
    description: str
    version: int
    scenario_count: int = 0


@dataclass(frozen=True, slots=True)
class Scenario:
    """One scenario: which model on which GPU, and every input column's value."""

    id: int
    fleet: str
    name: str
    kind: str
    model: str
    gpu: str
    inputs: dict[str, Any]
    lora_targets: str
    notes: str
    version: int
    updated_at: datetime | None = None
    option_of: str | None = None
    """The name of the base scenario (same fleet) this one is an option of; None: no one's."""
    chosen: bool = True
    """Counted in roll-ups and totals (exactly one scenario of an option group is chosen)."""


@dataclass(frozen=True, slots=True)
class SavedScenario:
    """A scenario as a save left it, and every output column of it: what a view shows after an
    edit without reading the catalog again."""

    scenario: Scenario
    outputs: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Change:
    """One field of one edit in the change log."""

    change_set: str
    field: str
    old_value: Any
    new_value: Any
    version_after: int
    changed_at: datetime
    undone: bool = False
    author: str | None = None
    """Who made it: the OS user of the client (None for changes logged before it was kept)."""
    scenario_id: int | None = None
    """The scenario changed."""


@dataclass(frozen=True, slots=True)
class SeedReport:
    """What one seeding pass did, by kind: names added, refreshed, kept as the user left them."""

    added: dict[str, list[str]] = field(default_factory=dict)
    refreshed: dict[str, list[str]] = field(default_factory=dict)
    kept: dict[str, list[str]] = field(default_factory=dict)

    @property
    def total_added(self) -> int:
        """Rows inserted."""
        return sum(len(v) for v in self.added.values())


class ConflictError(PlannerError):
    """An edit based on a stale read: someone else changed the row first. Nothing was written.

    ``changed`` maps each field changed since the edit's version to its current value."""

    def __init__(self, what: str, expected_version: int, current_version: int,
                 changed: dict[str, Any]) -> None:
        self.what = what
        self.expected_version = expected_version
        self.current_version = current_version
        self.changed = changed
        detail = ", ".join(f"{k}={v!r}" for k, v in changed.items()) or "fields unknown"
        super().__init__(f"{what} was changed by someone else (version {expected_version} → "
                         f"{current_version}: {detail}); reload and try again — nothing was "
                         "overwritten")


class InUseError(PlannerError):
    """A delete refused because scenarios still use the row; lists them."""

    def __init__(self, what: str, users: list[str]) -> None:
        self.users = users
        shown = ", ".join(users[:20]) + (f" and {len(users) - 20} more" if len(users) > 20 else "")
        super().__init__(f"{what} is used by {len(users)} scenario(s): {shown}; delete or "
                         "re-point them first")


class DuplicateError(PlannerError):
    """A name that must be unique already exists."""
