"""Typed messages that thread workers post back to the UI thread (Textual's worker guide):
the UI never waits on the database, and a worker's error arrives as a message, not a crash.

They are also how the widgets talk to the app: a message posted by a widget's worker is
handled by that widget and then bubbles up to :class:`~planner.tui.app.PlannerApp`, which
passes what others need on to them (a new catalog to the scenario sheet, say)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from planner.spec.domain import Fleet, GpuInfo, ModelInfo, Scenario


@dataclass
class FleetLoaded(Message):
    """A fleet's scenarios and their outputs, and the list of fleets."""

    fleet: str
    scenarios: list[Scenario]
    outputs: Any
    """Their outputs by scenario id (an :class:`~planner.tui.state.output_store.OutputStore`:
    columns)."""
    fleets: list[Fleet]
    focus_id: int | None = None
    index: dict[str, Any] | None = None
    """Per kind, the fleet's :class:`~planner.tui.state.rows.KindIndex` (built off the UI
    thread)."""
    widths: dict[str, dict[str, int]] | None = None
    """Per kind, the grid's column widths over every row (measured off the UI thread), for
    the layout in ``layouts``."""
    layouts: dict[str, Any] | None = None
    partial: bool = False
    """Only the fleet's first rows (the first screen); the rest follows in another message."""
    shown: Any = None
    """A ``threading.Event`` the sheet sets once a partial fleet is drawn (the loader waits
    for it before reading the rest)."""


@dataclass
class CatalogLoaded(Message):
    """Models and GPUs for the catalog tabs and the editors' choice lists; ``changed`` when a
    catalog edit made them, so every scenario must be evaluated again."""

    models: list[ModelInfo]
    gpus: list[GpuInfo]
    changed: bool = False


@dataclass
class ScenarioSaved(Message):
    """An edit reached the database: the scenario as stored, with its outputs."""

    scenario: Scenario
    outputs: dict[str, Any]
    note: str = ""


@dataclass
class ScenarioConflict(Message):
    """An edit was refused because another client changed the row first: the row as they
    left it, what they changed, and the refused edit's own changes (kept, not discarded)."""

    scenario: Scenario
    outputs: dict[str, Any]
    changed: dict[str, Any] = field(default_factory=dict)
    mine: dict[str, Any] = field(default_factory=dict)


@dataclass
class RowsChanged(Message):
    """Rows another client changed since they were read (found by polling versions)."""

    fleet: str
    scenarios: list[Scenario]
    outputs: list[dict[str, Any]]


@dataclass
class RowsUpdated(Message):
    """A row action done (new, copy, rename, delete, undo, redo): the rows it wrote, read
    back and evaluated, and the ids it deleted, to update the grid in place."""

    fleet: str
    scenarios: list[Scenario]
    outputs: list[dict[str, Any]]
    removed: list[int] = field(default_factory=list)
    focus_id: int | None = None


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


@dataclass
class MeasurementsLoaded(Message):
    """The stored benchmark runs, each with its prediction (None when it cannot be scored)."""

    rows: list[tuple[Any, Any]]


@dataclass
class FitDone(Message):
    """A calibration fit finished and was stored: the profile, and the runs predicted anew."""

    profile: Any
    rows: list[tuple[Any, Any]]


@dataclass
class PlanLoaded(Message):
    """A fleet's plan was computed (``plan`` None, with ``error`` saying why, when it has
    none)."""

    fleet: str
    plan: Any
    error: str
