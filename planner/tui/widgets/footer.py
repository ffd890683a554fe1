"""The key footer, rebuilt only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` recomposes itself (a widget per key, each styled
by the stylesheet) whenever its screen says its bindings were updated: after every focus
change and whenever a dialog closes and the sheet's screen is current again, even when the
keys are the ones it already shows. With the sheet's 31 keys that rebuild was 0.3-0.9 s of
the profiled time of a new, rename or delete at 100,000 scenarios (``BENCH_TUI_PROFILE`` of
:mod:`benchmarks.bench_tui`: ``Footer._watch_compact`` and the stylesheet updates under it),
spent in the frame after the dialog closes, while the row action's worker was running.
:class:`SteadyFooter` compares what it would show (each shown binding's key, description,
action, group, whether it is enabled and its tooltip) with what it last built and rebuilds
only when they differ, once the bindings have settled (a dialog closing updates them several
times: its screen's stack, then the focus back). Public API only: ``bindings_changed``,
``Screen.active_bindings``, ``call_after_refresh``.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class SteadyFooter(Footer):
    """A :class:`~textual.widgets.Footer` that recomposes only when its keys change."""

    _built: tuple[Any, ...] | None = None
    """What the keys built last show (:meth:`shown_keys`); None before the first build."""

    def shown_keys(self) -> tuple[Any, ...]:
        """What the footer shows of its screen's active bindings, in order."""
        return (self.compact, self.show_command_palette, *(
            (binding.key, binding.description, binding.action, binding.group, binding.show,
             enabled, tooltip)
            for _node, binding, enabled, tooltip in self.screen.active_bindings.values()))

    _pending = False
    """A comparison is scheduled (after the next refresh)."""

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if not (screen.app.app_focus and self.is_attached and screen is self.screen):
            super().bindings_changed(screen)  # nothing is rebuilt
            return
        if not self._pending:  # compared once things settle: a dialog closing updates the
            self._pending = True  # bindings several times (its stack, then the focus back)
            self.call_after_refresh(self._rebuild_if_changed, screen)

    def _rebuild_if_changed(self, screen: Screen[Any]) -> None:
        self._pending = False
        if self.app.screen is not self.screen:
            return  # under a dialog, not seen: its screen's bindings refresh when it closes
        keys = self.shown_keys()
        if keys == self._built:
            return  # the same keys: the footer already shows them
        self._built = keys
        super().bindings_changed(screen)
