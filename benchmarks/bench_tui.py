"""Benchmark the terminal UI with 5,000 scenarios: start-up to first paint, and edit to updated
row, driven through Textual's Pilot. Targets (issue 6): <= 1.5 s and <= 50 ms.

Start-up is what a user waits for after typing ``planner``: from launching a fresh Python
process (so every import counts) to the end of the first frame that shows the grid with every
scenario (opening the database, reading the fleet and evaluating it happen in a worker).

Edit-to-updated-row is timed from the Enter key that accepts a new value, sent the way Pilot
sends keys, to the end of the first frame after which the grid draws the new value (read back
from the drawn line, not from the data behind it). It is timed for a number (``batch``) and for
a choice (the GPU, typed as a filter). The save to the database continues in a worker and is
not part of it. The same number edit through ``pilot.press`` is printed beside it: that call
also waits for the whole app, the save included, to go idle, and its idle detection sleeps at
least 2 x 20 ms, so it cannot measure a 50 ms target.

    python -m benchmarks.bench_tui [--scenarios 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


async def measure(url: str, count: int) -> dict[str, Any]:
    """Run in a fresh process: the epoch time of the first full grid frame, and edit timings."""
    from textual import events

    from planner.tui import cells
    from planner.tui.app import create_app

    app = create_app(url, fleet="bench")
    async with app.run_test(size=(160, 48)) as pilot:
        # the end of every frame after which `done` holds (checked on what the grid draws)
        painted: list[float] = []
        done = [lambda: app.loaded and grid.row_count == count]
        grid = app.query_one("#grid")
        screen = app.screen
        draw = screen._compositor_refresh

        def timed_draw() -> None:
            draw()
            end = time.time()
            if done[0]():
                painted.append(end)

        screen._compositor_refresh = timed_draw  # type: ignore[method-assign]
        while not painted:
            await asyncio.sleep(0.001)
        first_frame = painted[0]

        columns = [k for k, _h, _r in cells.grid_columns("inference")]
        edits, pressed = [], []
        for i, batch in enumerate((3, 5, 9, 17, 33, 65, 129, 257, 513, 7, 11, 13, 15)):
            grid.move_cursor(row=i * 97, column=columns.index("batch"))
            sid = str(grid.coordinate_to_cell_key(grid.cursor_coordinate)[0].value)
            await pilot.press("enter", "ctrl+u", *str(batch))
            await app.workers.wait_for_complete()
            await pilot.pause(0.05)
            painted.clear()
            done[0] = lambda sid=sid, batch=batch: grid.drawn_cell(sid, "batch") == str(batch)
            if i % 2 == 0:  # the accepting Enter, sent as Pilot sends keys; time to the frame
                t0 = time.time()
                app._driver.send_message(events.Key("enter", "\r"))
                while not painted:
                    await asyncio.sleep(0)
                edits.append(painted[0] - t0)
            else:  # the same through pilot.press, which also waits for the app to go idle
                t0 = time.time()
                await pilot.press("enter")
                assert str(grid.get_cell(sid, "batch")) == str(batch)
                pressed.append(time.time() - t0)
        choice_edits = []  # a choice cell: the GPU, chosen by typing a filter
        for i, gpu in enumerate(("h200", "a100-80gb", "h100-sxm", "l40s", "b200", "h200")):
            grid.move_cursor(row=i * 89 + 7, column=columns.index("gpu"))
            sid = str(grid.coordinate_to_cell_key(grid.cursor_coordinate)[0].value)
            await pilot.press("enter", *gpu)
            await app.workers.wait_for_complete()
            await pilot.pause(0.05)
            painted.clear()
            done[0] = lambda sid=sid, gpu=gpu: grid.drawn_cell(sid, "gpu") == gpu
            t0 = time.time()
            app._driver.send_message(events.Key("enter", "\r"))
            while not painted:
                await asyncio.sleep(0)
            choice_edits.append(painted[0] - t0)
        await app.workers.wait_for_complete()
    return {"first_frame_epoch": first_frame, "edits": edits, "pressed": pressed,
            "choice_edits": choice_edits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=5000)
    parser.add_argument("--child", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, args.scenarios))))
        return

    from benchmarks.bench_store import populate
    from planner.service import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with Workspace.open(url) as ws:
            populate(ws, args.scenarios)
        root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
        spawned = time.time()
        child = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_tui", "--child", url,
             "--scenarios", str(args.scenarios)],
            capture_output=True, text=True, env=env, check=True)
        result = json.loads(child.stdout.splitlines()[-1])
    first_paint = result["first_frame_epoch"] - spawned
    edits, pressed = result["edits"], result["pressed"]
    print(f"start-up to first paint with {args.scenarios:,} scenarios (process launch to the "
          f"first frame showing every row): {first_paint:.2f} s "
          f"(target <= 1.5 s: {'met' if first_paint <= 1.5 else 'NOT met'})")
    median = statistics.median(edits)
    print(f"edit to updated row (Enter to the end of the frame showing the row): median "
          f"{median * 1e3:.1f} ms, max {max(edits) * 1e3:.1f} ms over {len(edits)} edits "
          f"(target <= 50 ms: {'met' if median <= 0.05 else 'NOT met'})")
    choice = result["choice_edits"]
    print(f"choice edit (GPU typed as a filter, Enter to the frame): median "
          f"{statistics.median(choice) * 1e3:.1f} ms, max {max(choice) * 1e3:.1f} ms over "
          f"{len(choice)} edits")
    print(f"the same edit through pilot.press (waits for the save too, and sleeps >= 40 ms to "
          f"detect idleness): median {statistics.median(pressed) * 1e3:.1f} ms over "
          f"{len(pressed)} edits")


if __name__ == "__main__":
    main()
