"""Benchmark: ``planner export`` CPU time of this checkout against another source tree, on one
database, runs alternating, so a change's cost is measured on a busy machine too.

Wall time is unusable on a shared box (load average 7-10 on 2 cores); the CPU seconds
(user + sys) and peak RSS of the export process, from ``wait4``, barely move with the load.
The other tree is any checkout of the planner's sources, e.g. the commit before a change:

    git archive a5f3c6a | tar -x -C /tmp/base
    python -m benchmarks.bench_export_compare --base /tmp/base --scenarios 10000 --runs 3

The base runs with ``PYTHONPATH=BASE`` (its ``planner`` package shadows this one) from a
neutral working folder; both export the same fleet, written once by
:func:`benchmarks.bench_export.populate_fast`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_export import populate_fast
from planner.service import Workspace


def export_once(url: str, out: Path, base: Path | None) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak RSS in MiB) of one export process."""
    env = {**os.environ, "PLANNER_DATABASE_URL": url}
    if base is not None:
        env["PYTHONPATH"] = str(base)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "from planner.cli import main; main()",
                             "export", "--fleet", "bench", "--out", str(out), "--force"],
                            env=env, cwd=out.parent, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"export failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True,
                        help="a source tree of the planner to compare with")
    parser.add_argument("--scenarios", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with Workspace.open(url) as ws:
            populate_fast(ws, args.scenarios)
        results: dict[str, list[tuple[float, float, float]]] = {"base": [], "this": []}
        for _ in range(args.runs):
            for label, base in (("base", args.base), ("this", None)):
                results[label].append(export_once(url, Path(tmp) / f"{label}.xlsx", base))
        for label, rows in results.items():
            cpu = sorted(r[0] for r in rows)
            wall = sorted(r[1] for r in rows)
            print(f"{label}: {args.scenarios:,} scenarios, CPU s "
                  f"{', '.join(f'{c:.2f}' for c in cpu)} (median {cpu[len(cpu) // 2]:.2f}), "
                  f"wall median {wall[len(wall) // 2]:.2f} s, peak RSS "
                  f"{max(r[2] for r in rows):,.0f} MiB")


if __name__ == "__main__":
    main()
