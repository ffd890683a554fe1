"""Typed messages that thread workers post back to the UI thread (Textual's worker guide):
the UI never waits on the database, and a worker's error arrives as a message, not a crash."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from planner.domain import Fleet, Scenario


@dataclass
class FleetLoaded(Message):
    """A fleet's scenarios and their outputs, and the list of fleets."""

    fleet: str
    scenarios: list[Scenario]
    outputs: list[dict[str, Any]]
    fleets: list[Fleet]
    focus_id: int | None = None


@dataclass
class CatalogLoaded(Message):
    """Models and GPUs for the catalog tabs and the editors' choice lists."""

    models: list[Any]
    gpus: list[Any]


@dataclass
class ScenarioSaved(Message):
    """An edit reached the database: the scenario as stored, with its outputs."""

    scenario: Scenario
    outputs: dict[str, Any]
    note: str = ""


@dataclass
class ScenarioConflict(Message):
    """An edit was refused because another client changed the row first."""

    scenario: Scenario
    outputs: dict[str, Any]
    changed: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkFailed(Message):
    """A worker's error, shown as a notification."""

    title: str
    error: str
    reload: bool = True


@dataclass
class ExportDone(Message):
    """A report was written."""

    path: str
    scenarios: int
