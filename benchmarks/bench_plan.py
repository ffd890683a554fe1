"""Benchmark: a 24-month plan of 10,000 scenarios, and the export that carries it.

Creates a temporary SQLite database with 10,000 inference scenarios (see bench_store.py) and
exports them as today (no horizon: no Plan sheet). Then gives the fleet a 24-month horizon and
every scenario a demand growing 5% a month (one transaction), times ``fleet plan`` (every
workload × month through the serving model) and the export again, now with the Plan sheet
(10,000 workloads × 24 months), and prints both exports side by side (issue 15: "10,000
scenarios × 24 months still export in a time the benchmark prints beside today's export of
10,000 scenarios").

    python -m benchmarks.bench_plan [--scenarios 10000] [--months 24]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.bench_store import populate
from planner.service import Workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=10_000)
    parser.add_argument("--months", type=int, default=24)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, \
            Workspace.open(f"sqlite:///{Path(tmp) / 'bench.db'}") as ws:
        populate(ws, args.scenarios)
        path = Path(tmp) / "report.xlsx"
        start = time.perf_counter()
        ws.export(path, ["bench"])
        today_s = time.perf_counter() - start
        today_mb = path.stat().st_size / 1e6
        start = time.perf_counter()
        ws.set_horizon("bench", "2027-01", args.months)
        ws.set_demands("bench", {s.name: {"start_rate": f"{0.5 + (i % 40) / 4:g}/s",
                                          "growth": "5%"}
                                 for i, s in enumerate(ws.scenarios("bench"))})
        setup_s = time.perf_counter() - start
        start = time.perf_counter()
        plan = ws.plan("bench")
        plan_s = time.perf_counter() - start
        start = time.perf_counter()
        ws.export(path, ["bench"], force=True)
        with_plan_s = time.perf_counter() - start
        cells = len(plan.workloads) * len(plan.months)
        print(f"set horizon and {len(plan.workloads):,} demands: {setup_s:.2f} s")
        print(f"plan {len(plan.workloads):,} workloads x {len(plan.months)} months "
              f"({cells:,} workload-months through the serving model): {plan_s:.2f} s; "
              f"{int(plan.total_gpus[-1]):,} GPUs in {plan.months[-1]}")
        print(f"export {args.scenarios:,} scenarios today (no plan):    {today_s:.2f} s, "
              f"file {today_mb:.1f} MB")
        print(f"export {args.scenarios:,} scenarios x {len(plan.months)} months (Plan sheet): "
              f"{with_plan_s:.2f} s, file {path.stat().st_size / 1e6:.1f} MB "
              f"({with_plan_s / today_s:.2f}x)")


if __name__ == "__main__":
    main()
