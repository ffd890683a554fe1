"""The scenario sheet (:class:`ScenarioSheet`): the widget over one fleet that the app wires
its keys to, split by concern into the modules of this package."""

from planner.tui.sheet.scenario_sheet import ScenarioSheet, documents_dir

__all__ = ["ScenarioSheet", "documents_dir"]
