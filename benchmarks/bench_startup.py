"""Benchmark CLI start-up: whole ``planner`` processes, timed like hyperfine (repeated runs,
min / median / max), for commands that need no database work.

Each command runs ``--runs`` times after one warm-up run (which also writes the bytecode
cache, as an installed wheel has it) against a fresh seeded SQLite database in a temporary
folder. Aim (issue 14, item 5): ``planner estimate`` <= 0.3 s as a whole process.

    python -m benchmarks.bench_startup [--runs 10]

Figures (2-core box shared, load average 3-4; medians of 10 runs, main and this branch
interleaved): ``--help`` 0.36 s before numpy was imported on first use, 0.16 s after;
``train --json`` 0.29 s, 0.14 s (no numpy); ``estimate --json`` 0.28 s both (its SLO
formula's general power needs numpy's ``pow`` for the vectorized path's exact figure).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLANNER = str(Path(sys.executable).with_name("planner"))
COMMANDS = (
    ("planner --help", ["--help"]),
    ("planner estimate (named model and GPU)",
     ["estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--batch", "8"]),
    ("planner estimate --json", ["estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm",
                                 "--json"]),
    ("planner train --json", ["train", "--model", "llama-2-7b", "--gpu", "a100-80gb",
                              "--gpus", "8", "--json"]),
    ("python -c pass (the interpreter alone)", None),
)


def time_runs(argv: list[str], runs: int, env: dict[str, str]) -> list[float]:
    """Wall seconds of each of ``runs`` runs of ``argv`` (after one warm-up run)."""
    subprocess.run(argv, env=env, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PLANNER_DATA_DIR": tmp}
        env.pop("PLANNER_DATABASE_URL", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed planner has its .pyc files
        subprocess.run([PLANNER, "fleet", "list"], env=env, check=True, capture_output=True)
        for label, words in COMMANDS:
            argv = [sys.executable, "-c", "pass"] if words is None else [PLANNER, *words]
            times = time_runs(argv, args.runs, env)
            print(f"{label}: min {min(times):.3f} s, median {statistics.median(times):.3f} s, "
                  f"max {max(times):.3f} s over {args.runs} runs")
    print("aim: planner estimate <= 0.3 s as a whole process")


if __name__ == "__main__":
    main()
