"""Benchmark the terminal UI on 1,000 to 100,000 scenarios through Textual's Pilot.

Figures (issue 14 item 3; the aims are for 100,000 scenarios):

- start-up: process launch to the end of the first frame that shows the grid with scenarios
  (aim <= 2 s), and to the first frame holding every row ("all rows");
- filter keystroke: a character typed in the filter box, to the end of the first frame that
  echoes it (the UI is free again; aim <= 100 ms), and to the first frame showing the filtered
  rows ("filtered"; with typing debounced, this includes the pause the filter waits for);
- sort: ``s`` on a column to the frame showing the sorted rows (aim <= 300 ms);
- new, delete, undo, redo, rename: the key that confirms the action to the frame showing its
  result (aim <= 100 ms), wall time and the process's CPU time over the same span (every
  thread; on a loaded machine the wall time waits for the cores, the CPU time does not);
  "nothing to undo": ``u`` with nothing to undo until the app is idle again (every worker
  done, including any reload it started, and the messages they posted handled: a repeated
  "Nothing to undo" draws no new frame to wait for);
- edit: Enter accepting a number to the frame drawing it (keep ~15 ms);
- RSS: resident memory after all of that, and its peak (aim <= 600 MiB).

``BENCH_TUI_PROFILE=DIR`` profiles each new, rename, delete, undo and redo (cProfile, from the
key to the frame; ``python -m pstats DIR/new-0.prof``): the profiler slows them, so the figures
printed then are not the ones to report.

The fleet is written with one bulk SQL insert into a temporary SQLite file (seconds even at
100,000 rows). Each measurement runs in a fresh process, so every import counts.

    python -m benchmarks.bench_tui [--scenarios 1000 10000 100000] [--json]
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODELS = ("llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b")
GPUS = ("a100-80gb", "h100-sxm", "h200", "l40s", "mi300x")
NEEDLE = "s0001"
"""Typed into the filter box one character at a time."""


def fleet_row(i: int) -> dict[str, Any]:
    """The ``i``-th benchmark scenario's fields (valid inference inputs, varied)."""
    tp = (1, 2, 4, 8)[i % 4]
    return {"name": f"s{i:06d}", "model": MODELS[i % len(MODELS)], "gpu": GPUS[i % len(GPUS)],
            "gpus": tp, "tp": tp, "batch": 1 + i % 256, "prompt_tokens": 128 + (i * 37) % 8000,
            "output_tokens": 16 + (i * 11) % 1000,
            "weight_dtype": ("bf16", "fp8", "int4")[i % 3], "kv_dtype": ("bf16", "fp8")[i % 2]}


def populate(url: str, count: int) -> None:
    """A fleet named 'bench' of ``count`` scenarios, written with one executemany INSERT
    (column defaults from the input registry fill the rest)."""
    from sqlalchemy import insert, select

    from planner.service import Workspace
    from planner.store.engine import write_session
    from planner.store.schema import FleetRow, GpuRow, ModelRow, ScenarioRow

    with Workspace.open(url) as ws, write_session(ws.engine) as s:
        fleet = FleetRow(name="bench", description="benchmark")
        s.add(fleet)
        s.flush()
        model_ids = {name: i for name, i in s.execute(select(ModelRow.name, ModelRow.id)
                                                      .where(ModelRow.name.in_(MODELS)))}
        gpu_ids = {name: i for name, i in s.execute(select(GpuRow.name, GpuRow.id)
                                                    .where(GpuRow.name.in_(GPUS)))}
        rows = []
        for i in range(count):
            row = fleet_row(i)
            row.update(fleet_id=fleet.id, kind="inference", version=1,
                       model_id=model_ids[row.pop("model")], gpu_id=gpu_ids[row.pop("gpu")])
            rows.append(row)
        s.execute(insert(ScenarioRow.__table__), rows)


def expected_filter_count(count: int, text: str) -> int:
    """How many benchmark scenarios contain ``text`` in name, model, GPU or notes."""
    needle = text.lower()
    return sum(needle in f"{r['name']} {r['model']} {r['gpu']} " for r in map(
        fleet_row, range(count)))


def rss_mib() -> tuple[float, float]:
    """(resident, peak resident) memory of this process, MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text()
                  .splitlines() if ":" in line)
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


async def measure(url: str, count: int) -> dict[str, Any]:
    """Run in a fresh process: epoch times of the first frames, and the action timings."""
    from textual import events
    from textual.widgets import Input

    from planner.tui.app import create_app
    from planner.tui.state import cells

    app = create_app(url, fleet="bench")
    out: dict[str, Any] = {}

    async def idle() -> None:
        """Until no load or save worker of the app is running."""
        while any(w.group in ("load", "save") and not w.is_finished for w in app.workers):
            await asyncio.sleep(0.001)

    async with app.run_test(size=(160, 48)) as pilot:
        # the end of every frame after which `done` holds
        painted: list[float] = []
        done: list[Callable[[], bool]] = [lambda: app.loaded and grid.row_count > 0]
        grid = app.query_one("#grid")
        sheet = app.sheet
        screen = app.screen
        draw = screen._compositor_refresh

        def timed_draw() -> None:
            draw()
            end = time.time()
            try:
                shows = done[0]()
            except LookupError:  # the row is not there (yet)
                shows = False
            if shows:
                painted.append(end)

        screen._compositor_refresh = timed_draw  # type: ignore[method-assign]
        while not painted:
            await asyncio.sleep(0.001)
        out["first_frame_epoch"] = painted[0]
        painted.clear()
        done[0] = lambda: grid.row_count == count
        while not painted:
            await asyncio.sleep(0.001)
        out["all_rows_epoch"] = painted[0]
        await idle()
        await pilot.pause(0.1)

        profiles = os.environ.get("BENCH_TUI_PROFILE")
        taken: dict[str, int] = {}

        async def timed(send: Callable[[], object], until: Callable[[], bool],
                        limit_s: float = 900.0, what: str = "") -> float:
            """Seconds from ``send`` to the end of the first frame after which ``until``
            (with ``BENCH_TUI_PROFILE`` set to a folder: that span profiled, written there as
            ``<what>-<n>.prof`` for the actions named)."""
            painted.clear()
            done[0] = until
            profiler = None
            if profiles and what:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            t0, c0 = time.time(), time.process_time()
            send()
            while not painted:
                await asyncio.sleep(0)
                if time.time() - t0 > limit_s:
                    raise TimeoutError("no frame showed the result")
            if what:  # CPU time of the process (every thread): what the load does not inflate
                out.setdefault(f"{what}_cpu", []).append(time.process_time() - c0)
            if profiler is not None:
                profiler.disable()
                taken[what] = taken.get(what, -1) + 1
                profiler.dump_stats(str(Path(profiles) / f"{what}-{taken[what]}.prof"))
            return painted[0] - t0

        def key(name: str, char: str | None = None) -> Callable[[], None]:
            return lambda: app._driver.send_message(events.Key(name, char))

        def current() -> str:
            """The name the grid draws in the cursor's row."""
            if not grid.row_count:
                return ""
            row_key = grid.coordinate_to_cell_key(grid.cursor_coordinate)[0].value or ""
            return grid.drawn_cell(row_key, "name") or ""

        columns = [k for k, _h, _r in cells.grid_columns("inference")]
        # ---- filter: one character at a time
        await pilot.press("slash")
        await pilot.pause(0.05)
        box = app.query_one("#filter", Input)
        echoes, results = [], []
        for n in range(1, len(NEEDLE) + 1):
            typed = NEEDLE[:n]
            expected = expected_filter_count(count, typed)
            echoes.append(await timed(key(typed[-1], typed[-1]),
                                      lambda typed=typed: box.value == typed))
            painted.clear()
            t_total = echoes[-1]
            t0 = time.time() - t_total
            done[0] = lambda typed=typed, expected=expected: (
                sheet.filter_text == typed and grid.row_count == expected)
            while not painted and not done[0]():
                await asyncio.sleep(0)
            while not painted:
                await asyncio.sleep(0)
            results.append(painted[0] - t0)
        out["filter_echo"], out["filter_result"] = echoes, results
        await pilot.press("escape")
        await pilot.pause(0.3)
        while grid.row_count != count:
            await pilot.pause(0.05)
        # ---- sort by an output column, ascending then descending
        grid.move_cursor(row=0, column=columns.index("prompt_tokens"))
        await pilot.pause(0.05)
        sorts = []
        for descending in (False, True):
            sorts.append(await timed(key("s", "s"), lambda d=descending: sheet.sort_key == (
                "prompt_tokens", d)))
            await pilot.pause(0.05)
        out["sort"] = sorts
        sheet.sort_key = None
        sheet.filter_rows("")
        await pilot.pause(0.1)
        # ---- edit a number
        edits = []
        for i, batch in enumerate((3, 5, 9, 17, 33, 65, 7)):
            grid.move_cursor(row=i * 7, column=columns.index("batch"))
            sid = str(grid.coordinate_to_cell_key(grid.cursor_coordinate)[0].value)
            await pilot.press("enter", "ctrl+u", *str(batch))
            await pilot.pause(0.05)
            edits.append(await timed(key("enter", "\r"), lambda sid=sid, batch=batch:
                                     grid.drawn_cell(sid, "batch") == str(batch)))
            await idle()
            await pilot.pause(0.05)
        out["edit"] = edits
        # ---- undo and redo the last edit (batch 65 -> 7 on row 42)
        grid.move_cursor(row=6 * 7, column=columns.index("batch"))
        sid = str(grid.coordinate_to_cell_key(grid.cursor_coordinate)[0].value)
        # three undo/redo pairs: each undo takes batch 65 back, each redo sets 7 again
        out["undo"], out["redo"] = [], []
        for _pair in range(3):
            out["undo"].append(await timed(key("u", "u"),
                                           lambda: grid.drawn_cell(sid, "batch") != "7",
                                           what="undo"))
            await idle()
            await pilot.pause(0.1)
            out["redo"].append(await timed(key("U", "U"),
                                           lambda: grid.drawn_cell(sid, "batch") == "7",
                                           what="redo"))
            await idle()
            await pilot.pause(0.1)
        # ---- new (the dialog's confirming Enter to the frame with the new row)
        news = []
        for n in range(3):
            name = f"bench-new-{n}"
            await pilot.press("n")
            await pilot.pause(0.1)
            await pilot.press(*name)
            await pilot.pause(0.05)
            news.append(await timed(key("enter", "\r"), lambda name=name, n=n: (
                grid.row_count == count + 1 + n and current() == name), what="new"))
            await idle()
            await pilot.pause(0.1)
        out["new"] = news
        # ---- rename the current (new) row, three times (one sample moved by +-50 ms)
        renames = []
        for n in range(3):
            name = f"bench-renamed-{n}"
            await pilot.press("r")
            await pilot.pause(0.1)
            await pilot.press("ctrl+u", *name)
            await pilot.pause(0.05)
            renames.append(await timed(key("enter", "\r"), lambda name=name: current() == name,
                                       what="rename"))
            await idle()
            await pilot.pause(0.1)
        out["rename"] = renames
        # ---- delete the new rows (the confirming y to the frame without the row)
        deletes = []
        for _ in range(3):
            grid.move_cursor(row=0, column=columns.index("batch"))
            await pilot.pause(0.05)
            before = grid.row_count
            await pilot.press("delete")
            await pilot.pause(0.1)
            deletes.append(await timed(key("y", "y"), lambda before=before:
                                       grid.row_count == before - 1, what="delete"))
            await idle()
            await pilot.pause(0.1)
        out["delete"] = deletes
        # ---- nothing to undo: until the app is idle again
        while await asyncio.to_thread(lambda: sheet.workspace.get().undo("bench")) is not None:
            pass
        await pilot.pause(0.1)
        nothing = []
        for _ in range(3):
            t0 = time.time()
            app._driver.send_message(events.Key("u", "u"))
            await pilot.pause(0)
            await idle()  # the undo's worker, and any reload it started
            await pilot.pause()  # the messages they posted, handled
            nothing.append(time.time() - t0)
            await pilot.pause(0.1)
        out["nothing_to_undo"] = nothing
        out["rss_mib"], out["peak_rss_mib"] = rss_mib()
    return out


def run(count: int) -> dict[str, Any]:
    """Write a fleet of ``count`` scenarios and measure the UI on it in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        start = time.perf_counter()
        populate(url, count)
        written = time.perf_counter() - start
        root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
        spawned = time.time()
        child = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_tui", "--child", url,
             "--scenarios", str(count)], capture_output=True, text=True, env=env)
        if child.returncode:
            raise SystemExit(child.stderr[-4000:])
        result: dict[str, Any] = json.loads(child.stdout.splitlines()[-1])
    result["startup"] = result.pop("first_frame_epoch") - spawned
    result["all_rows"] = result.pop("all_rows_epoch") - spawned
    result["written_s"] = written
    return result


ROWS = (("start-up, first frame with rows (s)", "startup", 1.0, 2.0),
        ("start-up, every row loaded (s)", "all_rows", 1.0, None),
        ("filter keystroke, echoed (ms)", "filter_echo", 1e3, 100),
        ("filter keystroke, rows filtered (ms)", "filter_result", 1e3, None),
        ("sort (ms)", "sort", 1e3, 300),
        ("new (ms)", "new", 1e3, 100),
        ("rename (ms)", "rename", 1e3, 100),
        ("delete (ms)", "delete", 1e3, 100),
        ("undo (ms)", "undo", 1e3, 100),
        ("redo (ms)", "redo", 1e3, 100),
        ("nothing to undo (ms)", "nothing_to_undo", 1e3, 100),
        ("new, CPU (ms)", "new_cpu", 1e3, 100),
        ("rename, CPU (ms)", "rename_cpu", 1e3, 100),
        ("delete, CPU (ms)", "delete_cpu", 1e3, 100),
        ("undo, CPU (ms)", "undo_cpu", 1e3, 100),
        ("redo, CPU (ms)", "redo_cpu", 1e3, 100),
        ("edit (ms)", "edit", 1e3, 15),
        ("RSS after all (MiB)", "rss_mib", 1.0, None),
        ("peak RSS (MiB)", "peak_rss_mib", 1.0, 600))


def figure(value: Any) -> float:
    """A figure: the value, or the median of repeated timings."""
    return float(statistics.median(value)) if isinstance(value, list) else float(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--child", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, args.scenarios[0]))))
        return
    results = {}
    for count in args.scenarios:
        results[count] = run(count)
        print(f"{count:,} scenarios measured (fleet written in "
              f"{results[count]['written_s']:.1f} s)", file=sys.stderr)
        if args.json:  # one line per fleet size, as soon as it is measured
            print(json.dumps({count: results[count]}), flush=True)
    if args.json:
        return
    counts = list(results)
    print("| what (median) | " + " | ".join(f"{c:,}" for c in counts) + " | aim at 100k |")
    print("|---|" + "---|" * (len(counts) + 1))
    for label, key, scale, aim in ROWS:
        digits = 2 if key in ("startup", "all_rows") else 0 if "rss" in key else 1
        cells = [f"{figure(results[c][key]) * scale:,.{digits}f}" for c in counts]
        print(f"| {label} | " + " | ".join(cells) + f" | {'' if aim is None else aim} |")


if __name__ == "__main__":
    main()
