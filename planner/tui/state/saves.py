"""Edits saved in the order they were made, each guarded by the version the previous one wrote.

The grid shows an edit at once and saves it in a thread worker. Two quick edits of one row
start two workers; run freely, the second could be written first (the older value would win),
and it would carry the version the row had before the first save, so the database would refuse
it as "changed elsewhere" although the only other writer was this app. :class:`SaveQueue`
hands out tickets in edit order, lets one save run at a time in that order, and remembers the
version each save wrote. A conflict is then always another client's doing. Threads only, no UI.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager


class SaveQueue:
    """FIFO turns for saves, the database version of each scenario, and pending saves."""

    def __init__(self) -> None:
        self._turns = threading.Condition()
        self._issued = 0
        self._serving = 0
        self._versions: dict[int, int] = {}
        self._pending: Counter[int] = Counter()

    def read(self, versions: Mapping[int, int]) -> None:
        """Versions just read from the database (versions only grow, so a read that started
        before a save finished cannot take the version back)."""
        with self._turns:
            for sid, version in versions.items():
                self._versions[sid] = max(version, self._versions.get(sid, version))

    def enqueue(self, sid: int, version: int) -> int:
        """A ticket for saving an edit of scenario ``sid`` (last read at ``version``)."""
        with self._turns:
            self._versions.setdefault(sid, version)
            self._pending[sid] += 1
            ticket = self._issued
            self._issued += 1
            return ticket

    @contextmanager
    def turn(self, ticket: int, sid: int, cancelled: Callable[[], bool] = lambda: False
             ) -> Iterator[int | None]:
        """Wait for ``ticket``'s turn; yields the version to expect (None if ``cancelled``
        while waiting). The next ticket's turn starts when the block ends."""
        with self._turns:
            while self._serving != ticket and not cancelled():
                self._turns.wait(0.1)
            expected = None if self._serving != ticket else self._versions.get(sid)
        try:
            yield expected
        finally:
            with self._turns:
                self._pending[sid] -= 1
                if self._pending[sid] <= 0:
                    del self._pending[sid]
                if self._serving == ticket:
                    self._serving += 1
                self._turns.notify_all()

    def wrote(self, sid: int, version: int) -> None:
        """A save of ``sid`` left the row at ``version``."""
        with self._turns:
            self._versions[sid] = max(version, self._versions.get(sid, version))

    def pending(self, sid: int) -> int:
        """Saves of ``sid`` queued or running."""
        with self._turns:
            return self._pending.get(sid, 0)
