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
themselves differ (another screen's bindings, another focus), and even then it keeps the keys
it had: each set of keys it has shown stays mounted, hidden (``display: none``, which the
footer's grid layout leaves out), and shows again when the screen's bindings come back to it.
A dialog opening mounts the dialog's two or three keys; closing it shows the sheet's 16 again
instead of mounting them anew. :attr:`SteadyFooter.KEPT` sets of keys are kept, the least
recently shown removed first.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from textual.compose import compose as compose_children
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.screen import Screen
    from textual.widget import Widget

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
    """:class:`~textual.widgets.Footer` that updates enabled states in place, skips
    rebuilds showing the same keys and keeps the sets of keys it has shown (module
    docstring)."""

    KEPT = 3
    """Sets of keys kept mounted (the shown one included)."""
    _composed: Signature | None = None
    """The signature of what the footer shows (None before its first keys)."""
    _check_pending: bool = False
    """Whether a check is already scheduled for after the next refresh."""

    def __init__(self, *children: Widget, **kwargs: Any) -> None:
        super().__init__(*children, **kwargs)
        self._kept: dict[Signature, tuple[list[Widget], int]] = {}
        """Mounted sets of keys by their signature without enabled states: the footer's
        top-level children of each and its grid's column count, least recently shown
        first."""

    async def recompose(self) -> None:
        """Footer's rebuild, which removes every kept set of keys too."""
        self._kept.clear()
        await super().recompose()

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
        await self._show_keys(signature)

    async def _show_keys(self, signature: Signature) -> None:
        """Hide the keys shown and show those of ``signature``: a kept set if there is one
        (its enabled states set as ``signature`` says), else a new one composed as Footer
        composes; then drop the least recently shown sets beyond :attr:`KEPT`."""
        keys = _without_enabled(signature)
        if self._composed is not None:
            shown = _without_enabled(self._composed)
            if shown not in self._kept:  # the first keys, composed by Footer's compose
                self._kept[shown] = (list(self.children), self.styles.grid_size_columns)
            for widget in self._kept[shown][0]:
                widget.display = False
        kept = self._kept.pop(keys, None)
        if kept is not None and all(widget.is_attached for widget in kept[0]):
            widgets, columns = kept
            self.styles.grid_size_columns = columns
            for widget in widgets:
                widget.display = True
            self._kept[keys] = kept
            self._set_enabled(signature)
        else:
            async with self.batch():
                widgets = compose_children(self)  # sets _composed and the grid's columns
                await self.mount_all(widgets)
            self._kept[keys] = (widgets, self.styles.grid_size_columns)
        for old in list(self._kept)[:-self.KEPT]:
            await self.remove_children(self._kept.pop(old)[0])

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
