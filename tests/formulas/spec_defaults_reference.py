"""Digests of every output over the demo fleet and a random grid, for the bit-identity test of
speculative decoding and prefix caching at their defaults (tests/formulas/test_speculative.py).

Runs on any checkout of the planner, so the digests can be made by the code before the
speculative inputs existed: ``cd <checkout> && python tests/formulas/spec_defaults_reference.py >
digests.json`` (it imports only what main at 0de9d40 has, and draws the random rows over the
input columns main has, so the new inputs stay at their defaults). Each column's digest is
the SHA-256 of its values' exact texts (``float.hex`` for numbers, so one bit apart differs).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

NEW_INPUTS = frozenset({"spec_method", "spec_draft_tokens", "spec_acceptance_length",
                        "spec_draft_model", "prefix_cache_hit_fraction"})
"""The inputs this branch adds; the random rows never set them."""
LATER_INPUTS = frozenset({"prefill_launch", "eager_kernel_host_s", "disagg_handover_s"})
"""Inputs added after the digests were first made (revision 0020's eager prefill, 0021's P/D
hand-over): the random rows never set them either, so the grid draws the same rows as
before."""
GPUS = ("a100-80gb", "h100-sxm", "h200", "b200", "l40s", "mi300x")
SEED, ROWS = 25, 160


def _text(value: Any) -> str:
    if isinstance(value, (bool, str)) or value is None:
        return repr(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return repr(value)
    return "nan" if math.isnan(number) else number.hex()


def _digest(values: list[Any]) -> str:
    return hashlib.sha256("\n".join(_text(v) for v in values).encode()).hexdigest()


def fleet_digests() -> dict[str, str]:
    """The demo fleet as seeded, and each inference row on vLLM, SGLang and TRT-LLM in a
    closed loop of 64 clients and in an open loop at 2 requests/s."""
    from planner.service import Workspace

    with tempfile.TemporaryDirectory() as tmp, \
            Workspace.open(f"sqlite:///{Path(tmp) / 'ref.db'}") as ws:
        demo = ws.scenarios("demo")
        rows = list(demo)
        for sc in demo:
            if sc.kind != "inference":
                continue
            for engine in ("vllm", "sglang", "trtllm"):
                for load in ({"concurrency": 64}, {"target_requests_per_s": 2.0}):
                    rows.append(dataclasses.replace(sc, inputs={**sc.inputs, "engine": engine,
                                                                **load}))
        outputs = ws.evaluate_many(rows)
    names = sorted({k for o in outputs for k in o})
    return {name: _digest([o.get(name) for o in outputs]) for name in names}


def grid_rows() -> list[dict[str, Any]]:
    """``ROWS`` random valid inference rows (seeded) over main's input columns."""
    from planner.compute.table import evaluate_row, inputs_of
    from planner.core.errors import PlannerError, ValidationError
    from planner.spec import catalog

    rng = random.Random(SEED)
    models = {name: catalog.resolve_model_spec(name) for name in catalog.model_names()}
    gpus = {name: catalog.resolve_gpu(name) for name in GPUS}
    columns = [c for c in inputs_of("inference")
               if c.name not in NEW_INPUTS | LATER_INPUTS and c.name != "calibration"]
    rows: list[dict[str, Any]] = []
    while len(rows) < ROWS:
        model = rng.choice(sorted(models))
        spec = models[model]
        row: dict[str, Any] = {"model": model, "gpu": rng.choice(GPUS)}
        for column in columns:
            if rng.random() < 0.3 and column.kind != "text":
                if column.kind == "choice":
                    row[column.name] = rng.choice(column.choices)
                elif column.kind == "bool":
                    row[column.name] = rng.random() < 0.5
                else:
                    low = float(column.minimum or 0.0)
                    high = min(float(column.maximum if column.maximum is not None else 1e6),
                               max(low, 1.0) * 1e3)
                    value = rng.uniform(low, high)
                    if column.kind == "int":
                        value = int(min(max(round(value), math.ceil(low)), math.floor(high)))
                    elif column.above_minimum and value <= low:
                        value = (low + high) / 2
                    row[column.name] = value
        tp = rng.choice([t for t in (1, 2, 4, 8) if spec.attention.num_heads % t == 0])
        row.update(tp=tp, pp=1, gpus=tp * rng.choice((1, 2)))
        try:
            evaluate_row(row, models, gpus, "inference")
        except (ValidationError, PlannerError):
            continue
        rows.append(row)
    return rows


def grid_digests() -> dict[str, str]:
    """Every column of the random grid evaluated as one table."""
    import numpy as np

    from planner.compute.table import evaluate_table, inputs_of
    from planner.spec import catalog

    rows = grid_rows()
    models = {name: catalog.resolve_model_spec(name) for name in catalog.model_names()}
    gpus = {name: catalog.resolve_gpu(name) for name in GPUS}
    defaults = {c.name: c.default for c in inputs_of("inference")}
    names = sorted({k for r in rows for k in r})
    table = {name: np.array([r.get(name, defaults.get(name)) for r in rows]) for name in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = evaluate_table(table, models, gpus, "inference")
    return {name: _digest(list(np.asarray(out[name]).tolist())) for name in sorted(out)
            if name not in NEW_INPUTS}


def digests() -> dict[str, dict[str, str]]:
    """Both sets of digests."""
    return {"fleet": fleet_digests(), "grid": grid_digests()}


if __name__ == "__main__":
    import os

    # the AVX2 level the digests are made at (tests/__init__.py; run as a file, that package
    # is not imported, and numpy is imported only inside digests())
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
    sys.path.insert(0, str(Path.cwd()))
    json.dump(digests(), sys.stdout, indent=1, sort_keys=True)
