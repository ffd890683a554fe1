"""Benchmark: load and evaluate 10,000 scenarios from the database.

Creates a fresh SQLite database (or uses ``--db URL``), inserts 10,000 scenarios spread over the
catalog's models and GPUs (one transaction, not timed as part of the load), then times
``Workspace.scenarios()`` (load) and ``Workspace.evaluate_many()`` (every output of every
scenario, vectorized) and prints both.

    python benchmarks/bench_store.py [--scenarios 10000] [--db URL]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from planner.service import Workspace
from planner.store.engine import write_session
from planner.store.schema import FleetRow, GpuRow, ModelRow, ScenarioRow


def populate(ws: Workspace, count: int) -> None:
    """``count`` valid inference scenarios in a fleet named 'bench'."""
    from sqlalchemy import select

    with write_session(ws.engine) as s:
        fleet = FleetRow(name="bench", description="benchmark")
        s.add(fleet)
        s.flush()
        models = s.scalars(select(ModelRow).where(ModelRow.name.in_(
            ["llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b"]))).all()
        gpus = s.scalars(select(GpuRow).where(GpuRow.name.in_(
            ["a100-80gb", "h100-sxm", "h200", "l40s", "mi300x"]))).all()
        rows = []
        for i in range(count):
            tp = (1, 2, 4, 8)[i % 4]
            rows.append(ScenarioRow(
                fleet_id=fleet.id, name=f"s{i:06d}", kind="inference",
                model_id=models[i % len(models)].id, gpu_id=gpus[i % len(gpus)].id,
                gpus=tp, tp=tp, pp=1, batch=1 + i % 256, prompt_tokens=128 + (i * 37) % 8000,
                output_tokens=16 + (i * 11) % 1000, weight_dtype=("bf16", "fp8", "int4")[i % 3],
                kv_dtype=("bf16", "fp8")[i % 2], quant_group_size=-1, quant_scale_bits=16,
                keep_embeddings_16bit=True, reserve_gib=0.0, reserve_fraction=0.1, mfu=0.5,
                mbu=0.8, target_requests_per_s=0.0, hours_per_month=730.0,
                attention_convention="causal", logits_convention="last", train_tokens=1e9,
                train_seq_len=4096, micro_batch_size=1, zero_stage=1,
                activation_recompute=True, include_attention_flops=False, lora_rank=0,
                budget_usd=0.0, budget_gpu_hours=0.0, lora_targets="q,v", notes=""))
        s.add_all(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=10_000)
    parser.add_argument("--db", help="database URL (default: a new temporary SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'bench.db'}"
        with Workspace.open(url) as ws:
            start = time.perf_counter()
            populate(ws, args.scenarios)
            print(f"inserted {args.scenarios:,} scenarios in {time.perf_counter() - start:.2f} s")
            start = time.perf_counter()
            scenarios = ws.scenarios("bench")
            loaded = time.perf_counter() - start
            start = time.perf_counter()
            outputs = ws.evaluate_many(scenarios)
            evaluated = time.perf_counter() - start
            fits = sum(o["fits"] for o in outputs)
            print(f"load {len(scenarios):,} scenarios: {loaded:.3f} s")
            print(f"evaluate {len(outputs):,} scenarios (every output): {evaluated:.3f} s "
                  f"({fits:,} fit)")
            print(f"load + evaluate: {loaded + evaluated:.3f} s")


if __name__ == "__main__":
    main()
