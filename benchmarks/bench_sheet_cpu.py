"""CPU time (``time.process_time``) of ``bench_sheet.py``'s two 1M-row cases: every output, and
every output with mixed serving engines and request rates. On a shared, loaded machine the
wall times of ``bench_sheet.py`` vary by 3x between runs; CPU time does not. Of the CPU time,
the system part is mostly the kernel's first touch of fresh memory, and where numpy asks for
transparent huge pages (every array of 4 MiB or more) the compaction that finds them, which
varied from 0.3 to 7 s between identical runs on this project's loaded VMs; the user part is
the evaluation's own and is printed beside it.

    PYTHONPATH=. python benchmarks/bench_sheet_cpu.py
"""

from __future__ import annotations

import resource
import time

import numpy as np

from benchmarks.bench_sheet import frame
from planner.compute.table import evaluate_table, graph
from planner.spec import catalog


def main(rows: int = 1_000_000) -> None:
    models = {n: catalog.resolve_model_spec(n) for n in catalog.model_names()}
    gpus = dict(catalog.load_gpus())
    df = frame(rows)
    table = {c: df[c].to_numpy() for c in df.columns}
    engines = {**table, "engine": np.random.default_rng(1).choice(
        ["roofline", "vllm", "sglang", "trtllm"], rows),
        "target_requests_per_s": np.random.default_rng(2).uniform(0, 50, rows)}
    evaluate_table({k: v[:10] for k, v in table.items()}, models, gpus)  # warm caches
    for label, t in (("every output", table), ("mixed engines and rates", engines)):
        cpu, wall = time.process_time(), time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_SELF)
        evaluate_table(t, models, gpus)
        after = resource.getrusage(resource.RUSAGE_SELF)
        print(f"{label}: {rows:,} rows, {len(graph('inference').outputs)} outputs: "
              f"cpu {time.process_time() - cpu:.2f} s "
              f"(user {after.ru_utime - before.ru_utime:.2f} s, "
              f"sys {after.ru_stime - before.ru_stime:.2f} s), "
              f"wall {time.perf_counter() - wall:.2f} s")


if __name__ == "__main__":
    main()
