"""Benchmark: export and import 10,000 scenarios; print times and peak memory.

Creates a temporary SQLite database with 10,000 inference scenarios (see bench_store.py), exports
them to an .xlsx report (live formulas in every output cell), then imports the unedited report
back (every cell validated; no changes expected). Targets (issue 5): <= 5 s each.

    python benchmarks/bench_report.py [--scenarios 10000]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks.bench_store import populate
from planner.service import Workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with Workspace.open(f"sqlite:///{Path(tmp) / 'bench.db'}") as ws:
            populate(ws, args.scenarios)
            path = Path(tmp) / "report.xlsx"
            start = time.perf_counter()
            report = ws.export(path, ["bench"])
            export_s = time.perf_counter() - start
            start = time.perf_counter()
            plans = ws.import_workbook(path)
            import_s = time.perf_counter() - start
            changed = sum(1 for p in plans if p.fields)
            # peak memory in a second, traced pass (tracing slows Python, so it is not timed)
            tracemalloc.start()
            ws.export(path, ["bench"], force=True)
            export_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
            ws.import_workbook(path)
            import_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        size_mb = path.stat().st_size / 1e6 if path.exists() else 0.0
        print(f"export {report.scenarios:,} scenarios: {export_s:.2f} s, "
              f"peak Python memory {export_peak / 2**20:,.0f} MiB, file {size_mb:.1f} MB")
        print(f"import {len(plans):,} rows ({changed} changed): {import_s:.2f} s, "
              f"peak Python memory {import_peak / 2**20:,.0f} MiB")
        print(f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f}"
              " MiB")
        for label, value in (("export", export_s), ("import", import_s)):
            print(f"target <= 5 s for {label}: {'met' if value <= 5 else 'NOT met'}")


if __name__ == "__main__":
    main()
