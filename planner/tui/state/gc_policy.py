"""How the terminal UI keeps Python's cyclic garbage collector out of the way.

A fleet of 5,000 scenarios is a few hundred thousand long-lived objects (scenarios, their
outputs, the grid's rows), on top of what importing Textual, SQLAlchemy and numpy leaves
behind. Left alone, the collector walked all of them over and over: about 0.19 s of a 1.2 s
start-up went to 400 collections, and a full collection paused an edit by ~0.1 s every few
seconds. So:

- :func:`starting` (app created): freeze what the imports made, and collect young objects
  less often while the fleet loads;
- :func:`loaded` (first fleet on screen): normal thresholds again, and freeze the fleet;
- :func:`reloaded` (another fleet, after an undo or a rename): collect once, then freeze
  again, so cyclic garbage frozen with the last fleet (a closed dialog) is not kept for good;
- :func:`stopped` (app closed): hand everything back to the collector;
- :func:`hold` and :func:`resume` (a row action, from the key that confirms it to the frame
  showing its row): automatic collection waits for that frame. A new, rename or delete at
  100,000 scenarios allocates enough (the closed dialog, the rows' freshly rendered lines)
  that nearly every one ran a full collection, 45-75 ms of the 120-250 ms it took
  (``benchmarks/bench_tui.py``); held, the collection runs right after the frame, while the
  user reads it. :data:`HOLD_S` bounds a hold whose frame never comes (an error, a reload).

Frozen objects are still freed by reference counting when they are dropped; the fleet's
objects hold no reference cycles. This is CPython's ``gc.freeze``, meant for exactly this.
"""

from __future__ import annotations

import gc

LOADING_THRESHOLDS = (10_000, 50, 50)
"""Collector thresholds while the first fleet loads (CPython's defaults are 700, 10, 10)."""

HOLD_S = 1.0
"""The longest automatic collection waits for a row action's frame, seconds."""

_normal: tuple[int, int, int] | None = None
_held = False
"""Whether :func:`hold` turned automatic collection off (and :func:`resume` turns it on)."""


def starting() -> None:
    """The app was created: imports are done and the fleet is about to load."""
    global _normal
    if _normal is None:
        _normal = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*LOADING_THRESHOLDS)


def loaded() -> None:
    """The first fleet is on screen."""
    _restore()
    gc.freeze()


def reloaded() -> None:
    """Another fleet replaced the last one."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def stopped() -> None:
    """The app closed."""
    resume()
    _restore()
    gc.unfreeze()


def hold() -> None:
    """A row action was confirmed: automatic collection waits until :func:`resume` (the
    caller arranges one within :data:`HOLD_S`). Nothing changes when collection is off
    already (a test, an embedding program)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def resume() -> None:
    """The row action's frame is drawn (or :data:`HOLD_S` passed): automatic collection
    again, if :func:`hold` turned it off; any collection it owes runs at the next
    allocation."""
    global _held
    if _held:
        _held = False
        gc.enable()


def _restore() -> None:
    if _normal is not None:
        gc.set_threshold(*_normal)
