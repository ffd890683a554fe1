"""Benchmark the planner at fleet scale: every figure of issue 14's table at 1k/10k/100k scenarios.

For each size, a temporary SQLite database is created and seeded, and a fleet ``bench`` of that
many scenarios (mixed models, GPUs, dtypes, shapes; every tenth a training scenario) is written
with one bulk INSERT (not part of any figure). Then each figure is one fresh ``planner`` process,
so imports and start-up count, timed from launch to exit, with the process's peak RSS (from
``wait4``):

- ``scenario list`` (the terminal table, written to a file) and ``scenario list --json``;
- ``export --out`` (the fleet's workbook) and ``import --dry-run`` of that workbook (no changes);
- creating the fleet: ``import`` of a workbook of new rows (the Scenarios/Training sheets with
  empty ids, inputs only) into an empty fleet; and ``planner scenario import FLEET FILE.csv``
  when this planner has that command (it is detected, not assumed);
- UI start-up: from launching a process to the end of the first frame showing every row, driven
  through Textual's Pilot, with the process's peak RSS.

    python -m benchmarks.bench_scale [--sizes 1000,10000,100000] [--skip create,ui]

Figures vary with the load of the machine; the script prints what it measured, nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b")
GPUS = ("a100-80gb", "h100-sxm", "h200", "l40s", "mi300x")
PLANNER = str(Path(sys.executable).with_name("planner"))
"""The console script installed beside this interpreter (what a user runs)."""


def scenario_values(i: int) -> dict[str, Any]:
    """The inputs of bench scenario ``i`` (valid for every model above: tp divides 32 heads)."""
    tp = (1, 2, 4, 8)[i % 4]
    training = i % 10 == 9
    values: dict[str, Any] = {
        "name": f"s{i:06d}", "kind": "training" if training else "inference",
        "gpus": tp * (1 + i % 3), "tp": tp, "pp": 1, "batch": 1 + i % 256,
        "prompt_tokens": 128 + (i * 37) % 8000, "output_tokens": 16 + (i * 11) % 1000,
        "weight_dtype": ("bf16", "fp8", "int4")[i % 3] if not training else "bf16",
        "kv_dtype": ("bf16", "fp8")[i % 2],
    }
    if training:
        values.update(train_tokens=1e9 * (1 + i % 7), train_seq_len=4096, micro_batch_size=1,
                      zero_stage=1 + i % 3)
    return values


def populate(url: str, count: int, fleet: str = "bench") -> None:
    """A fleet ``fleet`` of ``count`` scenarios, written with one bulk INSERT."""
    from sqlalchemy import insert, select

    from planner.service import Workspace
    from planner.store.engine import write_session
    from planner.store.schema import GpuRow, ModelRow, ScenarioRow

    with Workspace.open(url) as ws:
        fleet_id = ws.new_fleet(fleet, "scale benchmark").id
        with write_session(ws.engine) as s:
            models = {r.name: r.id for r in s.execute(
                select(ModelRow.name, ModelRow.id).where(ModelRow.name.in_(MODELS)))}
            gpus = {r.name: r.id for r in s.execute(
                select(GpuRow.name, GpuRow.id).where(GpuRow.name.in_(GPUS)))}
            rows = []
            for i in range(count):
                values = scenario_values(i)
                rows.append({**values, "fleet_id": fleet_id, "version": 1,
                             "model_id": models[MODELS[i % len(MODELS)]],
                             "gpu_id": gpus[GPUS[i % len(GPUS)]]})
            s.execute(insert(ScenarioRow), rows)


def run_planner(args: Sequence[str], *, stdout_path: Path | None = None,
                env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MiB, exit status) of one ``planner`` process."""
    out = open(stdout_path, "w") if stdout_path else subprocess.DEVNULL  # noqa: SIM115
    try:
        start = time.perf_counter()
        proc = subprocess.Popen([PLANNER, *args], stdout=out,
                                stderr=subprocess.PIPE, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        if stdout_path:
            out.close()  # type: ignore[union-attr]
    if proc.returncode:
        print(f"  ! planner {' '.join(args)} exited {proc.returncode}: {err.strip()[-400:]}")
    return seconds, usage.ru_maxrss / 1024, proc.returncode


def has_command(words: Sequence[str]) -> bool:
    """True if ``planner WORDS --help`` exists in this planner."""
    done = subprocess.run([PLANNER, *words, "--help"],
                          capture_output=True, check=False)
    return done.returncode == 0


def new_rows_workbook(path: Path, count: int, fleet: str) -> None:
    """A workbook of ``count`` new scenarios (empty ids) of ``fleet``, inputs only: what a user
    fills in to create a fleet from Excel."""
    from openpyxl import Workbook

    from planner.compute.inputs import TRAINING_DEFAULT_OVERRIDES
    from planner.compute.table import inputs_of
    from planner.io.xlsx.layout import SCENARIO_SHEETS, scenario_columns

    wb = Workbook(write_only=True)
    sheets = {}
    for kind, title in SCENARIO_SHEETS.items():
        sheet = wb.create_sheet(title)
        sheet.append([c.header for c in scenario_columns(kind)])
        sheets[kind] = sheet
    keys = {kind: [c.key for c in scenario_columns(kind) if c.role in ("meta", "input")]
            for kind in SCENARIO_SHEETS}
    defaults = {kind: {c.name: c.default for c in inputs_of(kind)} for kind in SCENARIO_SHEETS}
    defaults["training"].update(TRAINING_DEFAULT_OVERRIDES)
    for kind in SCENARIO_SHEETS:
        defaults[kind]["lora_targets"] = "q,v"
    for i in range(count):
        values = {**scenario_values(i), "fleet": fleet, "model": MODELS[i % len(MODELS)],
                  "gpu": GPUS[i % len(GPUS)]}
        kind = values["kind"]
        sheets[kind].append([values.get(k, defaults[kind].get(k)) for k in keys[kind]])
    wb.save(path)


def new_rows_csv(path: Path, count: int) -> None:
    """The same new scenarios as a CSV file for ``planner scenario import`` (header
    ``name,model,gpu,`` then input columns)."""
    names = ["name", "model", "gpu", "kind", "gpus", "tp", "pp", "batch", "prompt_tokens",
             "output_tokens", "weight_dtype", "kv_dtype", "train_tokens", "train_seq_len",
             "micro_batch_size", "zero_stage"]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        for i in range(count):
            values = {**scenario_values(i), "model": MODELS[i % len(MODELS)],
                      "gpu": GPUS[i % len(GPUS)]}
            writer.writerow([values.get(n, "") for n in names])


async def ui_child(url: str, fleet: str, count: int) -> float:
    """In a fresh process: the epoch time at the end of the first frame whose grid shows every
    inference row (the first tab)."""
    from planner.tui.app import create_app

    inference_rows = sum(scenario_values(i)["kind"] == "inference" for i in range(count))
    app = create_app(url, fleet=fleet)
    async with app.run_test(size=(160, 48)) as _pilot:
        painted: list[float] = []
        grid = app.query_one("#grid")
        screen = app.screen
        draw = screen._compositor_refresh

        def timed_draw() -> None:
            draw()
            end = time.time()
            if app.loaded and grid.row_count == inference_rows:
                painted.append(end)

        screen._compositor_refresh = timed_draw  # type: ignore[method-assign]
        while not painted:
            await asyncio.sleep(0.001)
        return painted[0]


def ui_startup(url: str, count: int) -> tuple[float, float]:
    """(seconds from process launch to the first full frame, peak RSS in MiB)."""
    env = {**os.environ, "TEXTUAL_ANIMATIONS": "none", "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    spawned = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_scale", "--ui-child", url,
                             "--sizes", str(count)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        _pid, status, usage = _wait(proc, UI_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"UI child showed no full grid in {UI_TIMEOUT_S} s") from None
    out = proc.stdout.read().decode() if proc.stdout else ""
    if os.waitstatus_to_exitcode(status):
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise RuntimeError(f"UI child failed: {err[-600:]}")
    return json.loads(out.splitlines()[-1]) - spawned, usage.ru_maxrss / 1024


UI_TIMEOUT_S = 300
"""A UI child that shows no full grid in this long is stopped and reported."""


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> tuple[int, int, Any]:
    """``os.wait4`` of ``proc`` with a timeout (TimeoutError)."""
    deadline = time.monotonic() + timeout_s
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return pid, status, usage
        if time.monotonic() > deadline:
            raise TimeoutError
        time.sleep(0.01)


def measure(count: int, skip: set[str]) -> dict[str, str]:
    """Every figure at ``count`` scenarios, as printable text."""
    figures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        url = f"sqlite:///{tmp / 'scale.db'}"
        start = time.perf_counter()
        populate(url, count)
        print(f"[{count:,}] fleet written with one bulk INSERT in "
              f"{time.perf_counter() - start:.1f} s", flush=True)
        base = ["--db", url]

        def fig(key: str, args: Sequence[str], *, memory: bool = False,
                stdout_path: Path | None = None) -> None:
            seconds, rss, status = run_planner([*base, *args], stdout_path=stdout_path)
            text = f"{seconds:.2f} s" + (f", {rss:,.0f} MiB" if memory else "")
            figures[key] = text + (" (FAILED)" if status else "")
            print(f"[{count:,}] {key}: {figures[key]}", flush=True)

        if "list" not in skip:
            fig("scenario list (table)", ["scenario", "list", "--fleet", "bench"],
                memory=True, stdout_path=tmp / "list.txt")
        if "json" not in skip:
            fig("scenario list --json", ["scenario", "list", "--fleet", "bench", "--json"],
                memory=True, stdout_path=tmp / "list.json")
        book = tmp / "fleet.xlsx"
        if "export" not in skip:
            fig("export --out", ["export", "--fleet", "bench", "--out", str(book)],
                memory=True)
            if "import" not in skip:
                fig("import --dry-run", ["import", "--dry-run", str(book)], memory=True)
        if "create" not in skip:
            new_book = tmp / "new.xlsx"
            new_rows_workbook(new_book, count, "created")
            run_planner([*base, "fleet", "new", "created"])
            fig("creating the fleet (xlsx import of new rows)", ["import", str(new_book)],
                memory=True)
        if "csv" not in skip:
            if has_command(["scenario", "import"]):
                new_csv = tmp / "new.csv"
                new_rows_csv(new_csv, count)
                run_planner([*base, "fleet", "new", "created-csv"])
                fig("creating the fleet (scenario import FILE.csv)",
                    ["scenario", "import", "created-csv", str(new_csv)], memory=True)
            else:
                figures["creating the fleet (scenario import FILE.csv)"] = "no such command"
        if "ui" not in skip:
            try:
                seconds, rss = ui_startup(url, count)
                figures["UI start-up"] = f"{seconds:.2f} s, {rss:,.0f} MiB"
            except RuntimeError as exc:
                figures["UI start-up"] = f"FAILED ({exc})"
            print(f"[{count:,}] UI start-up: {figures['UI start-up']}", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated fleet sizes (default: 1000,10000,100000)")
    parser.add_argument("--skip", default="",
                        help="comma-separated figures to leave out: list, json, export, "
                             "import, create, csv, ui")
    parser.add_argument("--ui-child", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if args.ui_child:
        print(json.dumps(asyncio.run(ui_child(args.ui_child, "bench", sizes[0]))))
        return
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    results = {n: measure(n, skip) for n in sizes}
    keys = list(dict.fromkeys(k for r in results.values() for k in r))
    print()
    print("| what | " + " | ".join(f"{n:,}" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for key in keys:
        print(f"| {key} | " + " | ".join(results[n].get(key, "") for n in sizes) + " |")


if __name__ == "__main__":
    main()
