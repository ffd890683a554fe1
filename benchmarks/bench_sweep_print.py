"""Printing a sweep: wall time and peak memory of `planner sweep` for 10k, 50k, 200k and 1M rows
(issue 16, item 20: it used to take 9 s, 75 s and more than 5 min for 10k, 50k and 1M rows).

    python benchmarks/bench_sweep_print.py [--sizes 10000,50000,1000000] [--out]

Runs the CLI in a subprocess against a throw-away data folder, stdout to /dev/null (a file,
as a pipe into `less` or a redirect would be); `--out` also writes a .csv beside it. Prints one
line per size: rows, seconds, peak RSS in MiB.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLANNER = (sys.executable, "-c", "from planner.cli import main; main()")
"""The planner CLI of this interpreter's environment."""


def run(rows: int, folder: Path, out: bool) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one `planner sweep` printing ``rows`` rows."""
    cmd = [*PLANNER, "sweep", "demo/llama3-8b-24gib-6x8k",
           "--vary", f"batch=1..{rows}", "--show", "ttft_s,tpot_s,max_concurrent_sequences,fits"]
    if out:
        target = folder / f"sweep-{rows}.csv"
        target.unlink(missing_ok=True)
        cmd += ["--out", str(target)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   env={"PLANNER_DATA_DIR": str(folder), "PATH": "/usr/bin:/bin"})
    seconds = time.perf_counter() - start
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return seconds, peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000,200000,1000000")
    parser.add_argument("--out", action="store_true", help="also write a .csv")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        subprocess.run([*PLANNER, "fleet", "list"], check=True,
                       capture_output=True, env={"PLANNER_DATA_DIR": tmp, "PATH": "/usr/bin:/bin"})
        print(f"{'rows':>10}  {'seconds':>8}  {'peak MiB':>9}")
        for rows in (int(s) for s in args.sizes.split(",")):
            seconds, mib = run(rows, folder, args.out)
            print(f"{rows:>10,}  {seconds:>8.2f}  {mib:>9.0f}", flush=True)


if __name__ == "__main__":
    main()
