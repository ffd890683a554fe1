"""The DataFrame API returns the evaluation's outputs without copying them (issue 14, item 4):
a chunked evaluation lays the requested float outputs out as consecutive rows of one block, in
order, and the result frame wraps that block."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from planner.compute import frame as frame_module
from planner.compute.graph import CHUNK_ROWS
from planner.compute.table import evaluate_table, graph
from planner.spec import catalog


@pytest.mark.slow
def test_float_outputs_are_the_evaluation_block_not_a_copy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = CHUNK_ROWS + 1_000  # chunked: the outputs live in one 2-D block
    rng = np.random.default_rng(3)
    tp = rng.choice([1, 2, 4, 8], rows)
    df = pd.DataFrame({"model": rng.choice(["llama-3-8b", "llama-2-7b", "mixtral-8x7b"], rows),
                       "gpu": rng.choice(["h100-sxm", "a100-80gb", "l40s"], rows),
                       "tp": tp, "gpus": tp * 2, "batch": rng.integers(1, 64, rows),
                       "weight_dtype": rng.choice(["bf16", "fp8"], rows)})
    blocks: list[Any] = []
    real = frame_module.float_rows

    def spy(values: Any, names: Any) -> Any:
        found = real(values, names)
        blocks.append(found)
        return found

    monkeypatch.setattr(frame_module, "float_rows", spy)
    out = frame_module.evaluate(df)
    assert blocks and blocks[0] is not None
    block, names = blocks[0]
    outputs = list(graph("inference").outputs)
    assert list(out.columns) == [*df.columns, *outputs]
    assert names == [n for n in outputs if n in set(names)] and len(names) > 100
    for name in ("ttft_s", "cost_usd_per_hour", names[0], names[-1]):
        assert np.shares_memory(out[name].to_numpy(), block), name
    # and the values are the array API's, exactly
    table = {c: df[c].to_numpy() for c in df.columns}
    models = {n: catalog.resolve_model_spec(n) for n in ("llama-3-8b", "llama-2-7b",
                                                         "mixtral-8x7b")}
    gpus = {n: catalog.resolve_gpu(n) for n in ("h100-sxm", "a100-80gb", "l40s")}
    values = evaluate_table(table, models, gpus)
    for name in outputs:
        np.testing.assert_array_equal(out[name].to_numpy(), values[name], err_msg=name)
    assert out["fits"].dtype == bool
