"""Benchmark the scenario sheet: a million-row DataFrame and a 100,000-cell sweep.

Prints the time to evaluate 1,000,000 scenario rows (mixed models, GPUs, dtypes, shapes; every
output, and the roofline's columns alone beside it, and every output with mixed serving engines
and request rates) through
``planner.sheet.evaluate`` (DataFrame in, DataFrame with every output column out) and through
the array API underneath (``evaluate_table``), and the time of a 100,000-cell two-way sweep
(batch 1..1000 x 100 prompt lengths). Targets (issue 4): <= 1 s each on a 2-core machine.

    python benchmarks/bench_sheet.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from planner.compute import evaluate
from planner.compute.graph import FormulaGraph
from planner.compute.sweep import Variation, build_grid
from planner.compute.table import build_columns, evaluate_table, graph
from planner.formulas import scenario
from planner.spec import catalog


def frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    tp = rng.choice([1, 2, 4, 8], rows)
    return pd.DataFrame({
        "model": rng.choice(["llama-3-8b", "llama-2-7b", "mistral-7b", "mixtral-8x7b"], rows),
        "gpu": rng.choice(["a100-80gb", "h100-sxm", "h200", "l40s", "mi300x"], rows),
        "tp": tp, "gpus": tp * rng.integers(1, 4, rows), "batch": rng.integers(1, 257, rows),
        "prompt_tokens": rng.integers(128, 32_768, rows),
        "output_tokens": rng.integers(16, 4_096, rows),
        "weight_dtype": rng.choice(["bf16", "fp8", "int4"], rows),
        "kv_dtype": rng.choice(["bf16", "fp8"], rows)})


def best_of(n: int, fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    models = {n: catalog.resolve_model_spec(n) for n in catalog.model_names()}
    gpus = dict(catalog.load_gpus())
    df = frame(args.rows)
    table = {c: df[c].to_numpy() for c in df.columns}
    evaluate(df.head(10), models, gpus)  # warm caches
    t_table = best_of(3, lambda: evaluate_table(table, models, gpus))
    today = FormulaGraph(scenario.ROOFLINE_INFERENCE, scenario.DERIVED_INFERENCE)
    t_roofline = best_of(3, lambda: today.compute(build_columns(table, models, gpus)))
    engines = {**table, "engine": np.random.default_rng(1).choice(
        ["roofline", "vllm", "sglang", "trtllm"], args.rows),
        "target_requests_per_s": np.random.default_rng(2).uniform(0, 50, args.rows)}
    t_engines = best_of(3, lambda: evaluate_table(engines, models, gpus))
    t_frame = best_of(3, lambda: evaluate(df, models, gpus))
    n_all = len(graph("inference").outputs)
    print(f"evaluate_table: {args.rows:,} mixed rows, every output ({n_all}): {t_table:.3f} s")
    print(f"  today's column set, the roofline's ({len(today.outputs)}): {t_roofline:.3f} s "
          f"(every output costs {t_table / t_roofline:.2f}x; aim <= 2x)")
    print(f"  every output, mixed engines and request rates: {t_engines:.3f} s")
    print(f"sheet.evaluate (DataFrame in and out): {args.rows:,} rows: {t_frame:.3f} s")
    base = {"model": "llama-3-8b", "gpu": "h100-sxm", "output_tokens": 256}
    variations = [Variation("batch", tuple(range(1, 1001))),
                  Variation("prompt_tokens", tuple(range(128, 128 + 100 * 80, 80)))]
    t_sweep = best_of(3, lambda: build_grid(base, variations, models, gpus))
    t_sweep_few = best_of(3, lambda: build_grid(base, variations, models, gpus,
                                                outputs=["ttft_s", "max_concurrent_sequences"]))
    print(f"sweep: 100,000 cells, every output: {t_sweep:.3f} s; "
          f"two shown outputs: {t_sweep_few:.3f} s")
    for label, value in (("1M rows (array API)", t_table), ("100k-cell sweep", t_sweep)):
        print(f"target <= 1 s for {label}: {'met' if value <= 1 else 'NOT met'}")


if __name__ == "__main__":
    main()
