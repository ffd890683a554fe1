"""The aggregated figures before issue 25's disaggregated serving, as a golden file.

``tests/fixtures/disagg_aggregated_golden.json`` holds, for the demo fleet and a seeded random
grid of inference scenarios (every engine, dense and MoE, open loop, closed loop and offline),
the SHA-256 of every numeric output column's float64 bytes as the planner computed them at
the integration tree before the disaggregated merge (d3362b7: main at 0de9d40 with the
wide-EP, prefill-first and vLLM cache-layout branches), so tests/formulas/test_disagg.py can
check that with ``serving_mode = aggregated`` every existing output is bit-identical. This
module imports nothing the disaggregated model added, so it runs on that older tree:

    PYTHONPATH=<checkout at 0de9d40> python -m tests.formulas.disagg_golden   # writes the file

A branch that changes an aggregated figure on purpose regenerates the file from its own
parent, and says which columns moved.

Revision 0020's eager prefill (``prefill_launch``, issue 23) moved 20 grid columns of the SGLang
and TensorRT-LLM rows (the prefill-only and first-wave steps, the TTFT columns, E2E and the SLO
search's TTFT; the demo fleet has none) and the file was regenerated from that tree. Its
``grid_prefill_graphs`` part is the same grid with ``prefill_launch = graphs``: the hashes of
the planner before that change, bit for bit (the regenerated part equalled the earlier
``grid`` on every one of its 264 columns), which tests/formulas/test_eager_prefill.py checks.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from planner.compute.table import evaluate_table, graph
from planner.spec.catalog import load_gpus, resolve_model_spec

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/fixtures/disagg_aggregated_golden.json"
GRID_ROWS = 240
MODELS = ("llama-3-8b", "mixtral-8x7b", "llama-3-70b", "mistral-7b", "deepseek-v3")
GPUS = ("h100-sxm", "h200", "b200", "gb200", "mi300x", "a100-80gb", "l40s", "a100-80gb-pcie")
ENGINES = ("roofline", "vllm", "sglang", "trtllm")


def demo_rows() -> list[dict[str, Any]]:
    """The demo fleet's inference scenarios (``seeds/fleets.toml``), inputs as written."""
    data = tomllib.loads((ROOT / "seeds/fleets.toml").read_text())
    rows = []
    for fleet in data["fleets"]:
        for sc in fleet["scenarios"]:
            row = {k: v for k, v in sc.items() if k not in ("name", "notes", "kind", "option_of",
                                                         "chosen")}
            if sc.get("kind", "inference") == "inference":
                rows.append(row)
    return rows


def grid_rows(seed: int = 25, n: int = GRID_ROWS) -> list[dict[str, Any]]:
    """A seeded random grid of valid inference scenarios."""
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        model = str(rng.choice(MODELS))
        gpu = str(rng.choice(GPUS))
        tp = int(rng.choice((1, 2, 4, 8)))
        if model == "deepseek-v3" and gpu not in ("h200", "b200", "gb200", "mi300x"):
            continue
        if model in ("deepseek-v3", "llama-3-70b"):
            tp = 8
        mode = int(rng.integers(3))
        row: dict[str, Any] = {
            "model": model, "gpu": gpu, "tp": tp, "gpus": tp * int(rng.choice((1, 2, 3))),
            "engine": str(rng.choice(ENGINES)),
            "prompt_tokens": int(rng.choice((128, 1024, 4000, 8192, 20000))),
            "output_tokens": int(rng.choice((1, 16, 256, 1024))),
            "weight_dtype": "fp8" if model == "deepseek-v3" else str(rng.choice(("auto", "fp8"))),
            "kv_dtype": str(rng.choice(("bf16", "fp8"))),
            "batch": int(rng.choice((1, 8, 64))),
        }
        if model in ("mixtral-8x7b", "deepseek-v3") and rng.random() < 0.5:
            row["ep"] = tp
            row["attention_dp"] = bool(rng.random() < 0.5)
        if mode == 1:
            row["concurrency"] = int(rng.choice((1, 4, 32, 256, 2048)))
        elif mode == 2:
            row["target_requests_per_s"] = float(rng.choice((0.5, 2.0, 10.0, 80.0)))
        if rng.random() < 0.3:
            row["output_tokens_cv"] = 1.0
        rows.append(row)
    return rows


def table_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows as a table of per-row columns (absent inputs at their defaults)."""
    names = sorted({k for r in rows for k in r})
    defaults = {c.name: c.default for c in __import__(
        "planner.compute.inputs", fromlist=["INFERENCE_INPUTS"]).INFERENCE_INPUTS}
    return {k: np.asarray([r.get(k, defaults.get(k)) for r in rows], dtype=object)
            for k in names}


def figures(rows: list[dict[str, Any]], columns: list[str] | None = None) -> dict[str, str]:
    """SHA-256 of each numeric output column's float64 bytes over ``rows``."""
    models = {m: resolve_model_spec(m) for m in {r["model"] for r in rows}}
    g = graph("inference")
    names = list(columns) if columns is not None else list(g.outputs)
    values = evaluate_table(table_of(rows), models, load_gpus(), "inference", names)
    out = {}
    for name in names:
        column = np.asarray(values[name])
        if column.dtype == object:
            try:
                column = column.astype(np.float64)
            except (TypeError, ValueError):
                continue
        out[name] = hashlib.sha256(np.ascontiguousarray(column, dtype=np.float64).tobytes()
                                   ).hexdigest()
    return out


def main() -> None:
    """Write the golden file from the tree on ``PYTHONPATH``: the columns the file holds (the
    264 outputs of the planner before disaggregated serving; every output where there is no
    file yet), its ``source`` kept."""
    kept = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    columns = sorted(kept["grid"]) if kept else None
    golden = {"source": kept.get("source", "planner at 0de9d40 (main before serving_mode), "
                                           "tests/disagg_golden.py"),
              "demo": figures(demo_rows(), columns), "grid": figures(grid_rows(), columns),
              "grid_prefill_graphs": figures(
                  [{**r, "prefill_launch": "graphs"} for r in grid_rows()], columns)}
    GOLDEN.write_text(json.dumps(golden, indent=0, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}: {len(golden['demo'])} demo and {len(golden['grid'])} grid columns")


if __name__ == "__main__":
    main()
