"""The UI's save queue: edits are written in the order they were made, each against the
version the previous save wrote, so quick successive edits never conflict with each other."""

from __future__ import annotations

import threading
import time

from planner.tui.state.saves import SaveQueue


def test_saves_run_in_edit_order_and_carry_the_version_the_last_one_wrote() -> None:
    queue = SaveQueue()
    queue.read({7: 1})
    tickets = [queue.enqueue(7, 1) for _ in range(4)]
    assert queue.pending(7) == 4
    written: list[tuple[int, int | None]] = []
    db_version = [1]

    def save(ticket: int) -> None:
        with queue.turn(ticket, 7) as expected:
            assert expected == db_version[0]  # never a stale version
            time.sleep(0.01)
            db_version[0] += 1
            written.append((ticket, expected))
            queue.wrote(7, db_version[0])

    threads = [threading.Thread(target=save, args=(t,)) for t in reversed(tickets)]
    for thread in threads:  # started last-first: the turns still go first-first
        thread.start()
    for thread in threads:
        thread.join(5)
    assert written == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert queue.pending(7) == 0


def test_a_read_never_takes_a_version_back_and_cancelling_gives_no_version() -> None:
    queue = SaveQueue()
    first = queue.enqueue(3, 5)
    queue.wrote(3, 6)
    queue.read({3: 5})  # a fleet read that started before the save finished
    with queue.turn(first, 3) as expected:
        assert expected == 6
    waiting = queue.enqueue(3, 6)
    blocked = queue.enqueue(3, 6)
    with queue.turn(blocked, 3, cancelled=lambda: True) as expected:  # the app is closing
        assert expected is None
    with queue.turn(waiting, 3) as expected:
        assert expected == 6
    assert queue.pending(3) == 0
