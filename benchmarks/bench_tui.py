"""Benchmark the terminal UI with 5,000 scenarios: start-up to first paint, and edit to updated
row, driven through Textual's Pilot. Targets (issue 6): <= 1.5 s and <= 50 ms.

Start-up is timed from creating the app to the grid showing every row (the database read and
the evaluation of all scenarios happen in a worker). Edit-to-updated-row is timed from
submitting a new batch value in the editor to the row's cells showing the recomputed outputs
(the save to the database continues in a worker and is not part of it).

    python -m benchmarks.bench_tui [--scenarios 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.bench_store import populate
from planner.workspace import Workspace


async def measure(url: str, count: int) -> tuple[float, list[float]]:
    from textual.widgets import DataTable

    from planner.tui import render
    from planner.tui.app import create_app

    start = time.perf_counter()
    app = create_app(url, fleet="bench")
    async with app.run_test(size=(160, 48)) as pilot:
        grid = app.query_one("#grid", DataTable)
        while not (app.loaded and grid.row_count == count):
            await pilot.pause(0.005)
        await pilot.pause(0)
        first_paint = time.perf_counter() - start
        columns = [k for k, _h, _r in render.grid_columns("inference")]
        edits = []
        for i, batch in enumerate((3, 5, 9, 17, 33)):
            grid.move_cursor(row=i * 97, column=columns.index("batch"))
            sid = int(grid.coordinate_to_cell_key(grid.cursor_coordinate)[0].value)
            await pilot.press("enter")
            await pilot.press("ctrl+u", *str(batch))
            t0 = time.perf_counter()
            await pilot.press("enter")
            while str(grid.get_cell(str(sid), "batch")) != str(batch):
                await pilot.pause(0)
            edits.append(time.perf_counter() - t0)
        await app.workers.wait_for_complete()
    return first_paint, edits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=5000)
    args = parser.parse_args()
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with Workspace.open(url) as ws:
            populate(ws, args.scenarios)
        first_paint, edits = asyncio.run(measure(url, args.scenarios))
    print(f"start-up to first paint with {args.scenarios:,} scenarios: {first_paint:.2f} s "
          f"(target <= 1.5 s: {'met' if first_paint <= 1.5 else 'NOT met'})")
    median = statistics.median(edits)
    print(f"edit to updated row: median {median * 1e3:.1f} ms, max {max(edits) * 1e3:.1f} ms "
          f"over {len(edits)} edits (target <= 50 ms: {'met' if median <= 0.05 else 'NOT met'})")


if __name__ == "__main__":
    main()
