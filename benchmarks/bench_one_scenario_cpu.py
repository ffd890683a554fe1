"""One scenario's evaluation time, three ways: ``bench_estimator.time_one_row`` (wall clock,
best of 3 rounds of 2,000 ``service.estimate`` calls: the compiled row function), the same
calls in CPU time (``time.process_time``: on a shared, loaded machine the wall clock of a
250 us call varies by 2x), and ``interpret_row`` in CPU time (the graph formula by formula on
Python numbers: what the first scenario a process evaluates costs, ``planner estimate``).

    PYTHONPATH=. python benchmarks/bench_one_scenario_cpu.py
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.bench_estimator import time_one_row
from planner import service
from planner.compute.table import interpret_row, row_inputs
from planner.spec import catalog


def main(calls: int = 2000) -> None:
    print(f"time_one_row({calls}) best of 3 (wall): {time_one_row(calls) * 1e6:.1f} us")
    spec = catalog.resolve_model_spec("llama-2-7b")
    gpu = catalog.resolve_gpu("a100-80gb")
    rng = np.random.default_rng(1)
    inputs = [{"batch": int(rng.integers(1, 9)), "prompt_tokens": int(rng.integers(128, 2048)),
               "output_tokens": int(rng.integers(16, 256))} for _ in range(calls)]
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for given in inputs:
            service.estimate(spec, gpu, given)
        best = min(best, (time.process_time() - start) / calls)
    print(f"same {calls} calls, best of 3 (cpu): {best * 1e6:.1f} us")
    cols = row_inputs({"model": "llama-2-7b", "gpu": "a100-80gb", "batch": 4},
                      {"llama-2-7b": spec}, {"a100-80gb": gpu})
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(100):
            interpret_row("inference", cols)
        best = min(best, (time.process_time() - start) / 100)
    print(f"interpret_row (first scenario of a process), best of 3 x 100 (cpu): "
          f"{best * 1e6:.0f} us")


if __name__ == "__main__":
    main()
