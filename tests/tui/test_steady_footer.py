"""The footer (planner.tui.widgets.steady_footer) shows what Textual's Footer would show and
composes keys only for a set it has not shown: a dialog opening composes the dialog's keys,
closing it shows the sheet's kept keys again, opening it again shows the dialog's kept keys;
an action turning off and on updates the keys it has, and updates that arrive together are
checked once."""

from __future__ import annotations

import inspect
import os
from typing import Any

import pytest
from textual.widgets._footer import FooterKey

from planner.tui.app import PlannerApp, create_app
from planner.tui.widgets.steady_footer import SteadyFooter, footer_signature
from tests.helpers import until
from tests.tui.test_tui import SIZE, ready, settle

os.environ["TEXTUAL_ANIMATIONS"] = "none"


def keys(app: PlannerApp) -> list[tuple[str, str, bool]]:
    """The footer's keys as drawn: (key, description, disabled) in order, the displayed ones
    (the footer is the main screen's; it shows the keys of the screen on top, a dialog's
    while one is open; the kept sets are hidden)."""
    footer = app.screen_stack[0].query_one(SteadyFooter)
    return [(k.key, k.description, k.has_class("-disabled")) for k in footer.query(FooterKey)
            if k.display and (k.parent is footer or k.parent.display)]


def count_calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count calls of ``SteadyFooter.<name>`` from now on (one entry each; a coroutine method
    stays one)."""
    calls: list[int] = []
    original = getattr(SteadyFooter, name)

    if inspect.iscoroutinefunction(original):
        async def counted(self: SteadyFooter) -> Any:
            calls.append(1)
            return await original(self)
    else:
        def counted(self: SteadyFooter) -> Any:
            calls.append(1)
            return original(self)

    monkeypatch.setattr(SteadyFooter, name, counted)
    return calls


async def test_footer_shows_the_sheets_keys_after_a_dialog(
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        before = keys(app)
        assert ("n", "New", False) in before and before[-1][0] == "ctrl+p"
        assert len(before) == 16  # every shown binding of the sheet, the palette's last
        composes = count_calls(monkeypatch, "compose")
        await pilot.press("r")  # the rename dialog: its own keys
        await settle(pilot)
        dialog = keys(app)
        assert [k[0] for k in dialog] != [k[0] for k in before] and dialog[-1][0] == "ctrl+p"
        assert len(composes) == 1  # the dialog's keys, new
        await pilot.press("escape")
        await settle(pilot)
        assert keys(app) == before and len(composes) == 1  # the sheet's, kept
        await pilot.press("r")
        await settle(pilot)
        assert keys(app) == dialog and len(composes) == 1  # the dialog's, kept
        await pilot.press("escape")
        await settle(pilot)
        assert keys(app) == before and len(composes) == 1
        footer = app.screen_stack[0].query_one(SteadyFooter)
        assert len(footer.query(FooterKey)) == len(before) + len(dialog)  # both kept


async def test_enabled_states_update_in_place_and_updates_coalesce(
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        footer = app.screen.query_one(SteadyFooter)
        # a check scheduled before the counting starts would run the method it was scheduled
        # with, uncounted, and absorb the updates below (one is pending while one is)
        await until(pilot, lambda: not footer._check_pending, "the start-up's footer check")
        rebuilds = count_calls(monkeypatch, "recompose")
        checks = count_calls(monkeypatch, "_update")
        widgets_before = list(footer.query(FooterKey))
        original_check = PlannerApp.check_action

        def no_new(self: PlannerApp, action: str, parameters: tuple[Any, ...]) -> bool | None:
            # None: shown but disabled (False would hide the key)
            return None if action == "new" else original_check(self, action, parameters)

        monkeypatch.setattr(PlannerApp, "check_action", no_new)
        for _ in range(3):  # three updates before one refresh
            app.refresh_bindings()
        await until(pilot, lambda: checks and not footer._check_pending,
                    "the footer's check of the updated bindings")
        await settle(pilot)
        assert len(checks) == 1
        assert ("n", "New", True) in keys(app)  # drawn disabled
        assert not rebuilds and list(footer.query(FooterKey)) == widgets_before
        monkeypatch.setattr(PlannerApp, "check_action", original_check)
        app.refresh_bindings()
        await settle(pilot)
        assert ("n", "New", False) in keys(app)
        assert not rebuilds and list(footer.query(FooterKey)) == widgets_before
        assert footer._composed == footer_signature(app.screen, footer.compact,
                                                    footer.show_command_palette)
