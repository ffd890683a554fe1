"""A key-binding footer that rebuilds only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` recomposes, unmounting and mounting one
``FooterKey`` per binding, every time the screen's bindings are updated: on each focus change,
when a dialog above it opens or closes, and when an action becomes enabled or disabled. A row
action at 100,000 scenarios (``benchmarks/bench_tui.py``: new, rename, delete) went through
three such rebuilds between the key that confirms the dialog and the frame showing the row
(the dialog closing, the sheet's actions disabled while the worker runs, enabled again when it
is done), each mounting the same 16 keys and applying the stylesheet to them.

:class:`SteadyFooter` draws exactly what Footer draws and changes how it gets there: the
updates that arrive before the next refresh are coalesced into one check; the check compares
what the footer would show (:func:`footer_signature`) with what it shows; when only keys'
enabled states differ it sets them on the keys it has (the ``-disabled`` class Footer gives a
disabled key, and the flag its mouse handler reads); it recomposes only when the keys
themselves differ (another screen's bindings, another focus).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.screen import Screen

Signature = tuple[tuple[tuple[Hashable, ...], ...], bool, bool]
"""What a footer shows: per shown binding (key, key display, action, description, tooltip,
group, enabled), then the compact style and whether the command-palette key is shown."""


def footer_signature(screen: Screen[Any], compact: bool,
                     show_command_palette: bool) -> Signature:
    """What :meth:`textual.widgets.Footer.compose` would draw on ``screen``, as a value that
    compares equal exactly when the drawn keys are the same: for every binding the screen
    shows (and the command palette's, which Footer draws on the right), in the screen's order,
    its key, key display, action, description, tooltip, group (description and compact flag)
    and, last, whether it is enabled; then the two display settings."""
    shown = []
    palette = screen.app.COMMAND_PALETTE_BINDING
    for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items():
        if not binding.show and key != palette:
            continue
        group = binding.group
        shown.append((binding.key, binding.key_display, binding.action, binding.description,
                      tooltip, None if group is None else (group.description, group.compact),
                      bool(enabled)))
    return (tuple(shown), compact, show_command_palette)


def _without_enabled(signature: Signature) -> Signature:
    """``signature`` with every binding's enabled state left out."""
    keys, compact, palette = signature
    return (tuple(entry[:-1] for entry in keys), compact, palette)


class SteadyFooter(Footer):
    """:class:`~textual.widgets.Footer` that updates enabled states in place and skips
    rebuilds showing the same keys (module docstring)."""

    _composed: Signature | None = None
    """The signature of what the footer shows (None before its first keys)."""
    _check_pending: bool = False
    """Whether a check is already scheduled for after the next refresh."""

    def _signature(self) -> Signature:
        return footer_signature(self.screen, self.compact, self.show_command_palette)

    def compose(self) -> ComposeResult:
        """Footer's keys, remembering what they show."""
        if self._bindings_ready:
            self._composed = self._signature()
        yield from super().compose()

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Footer's handler of the screen's bindings signal, coalesced: one check after the
        next refresh, however many updates arrive before it."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._check_pending:
            self._check_pending = True
            self.call_after_refresh(self._update)

    async def _update(self) -> None:
        """Bring the footer to what the screen's bindings say, at the least cost."""
        self._check_pending = False
        if not self.is_attached:
            return
        signature = self._signature()
        if signature == self._composed:
            return
        if self._composed is not None and (
                _without_enabled(signature) == _without_enabled(self._composed)):
            self._set_enabled(signature)
            return
        await self.recompose()

    def _set_enabled(self, signature: Signature) -> None:
        """Enable and disable the keys shown as ``signature`` says, as Footer would draw them
        (a disabled key has the ``-disabled`` class and rings the bell when clicked)."""
        enabled = {(entry[0], entry[2]): entry[-1] for entry in signature[0]}
        for key in self.query(FooterKey):
            state = enabled.get((key.key, key.action))
            if state is None:
                continue
            key._disabled = not state
            key.set_class(not state, "-disabled")
        self._composed = signature
