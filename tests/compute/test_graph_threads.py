"""A chunked evaluation on several threads gives the figures of one pass, in place.

:meth:`~planner.compute.graph.FormulaGraph.compute` evaluates a table longer than
``CHUNK_ROWS`` a chunk at a time, the first chunk on the calling thread and the rest on
:func:`~planner.compute.graph.chunk_threads` threads. These tests make the chunks small and
the threads many, and require each row's figures bit for bit, the outputs in one 2-D block,
``progress`` called on the calling thread with rows done rising to the total, and an error in
a chunk raised to the caller.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from planner.compute import graph as graph_module
from planner.compute.graph import FormulaGraph, chunk_threads, float_block


def a(x: Any, s: Any) -> Any:
    return np.sqrt(x) * s + 1.0


def b(a: Any, x: Any) -> Any:
    return np.where(x > 0.5, a / x, a * x)


def c(b: Any, name: Any) -> Any:
    return b * 2.0


def test_chunk_threads_is_the_cpus_this_process_may_use_at_most_8() -> None:
    assert 1 <= chunk_threads() <= 8


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_threaded_chunks_give_one_passes_figures(monkeypatch: pytest.MonkeyPatch,
                                                  threads: int) -> None:
    x = np.random.default_rng(3).uniform(0, 1, 10_001)
    columns = {"x": x, "s": 3.0, "name": "n"}
    whole = FormulaGraph([a, b, c]).compute(columns)  # one pass: 10,001 <= CHUNK_ROWS
    monkeypatch.setattr(graph_module, "CHUNK_ROWS", 1_000)
    monkeypatch.setattr(graph_module, "chunk_threads", lambda: threads)
    seen: list[tuple[int, int, str]] = []
    chunked = FormulaGraph([a, b, c]).compute(
        columns, progress=lambda done, total: seen.append(
            (done, total, threading.current_thread().name)))
    for name in ("a", "b", "c"):
        assert chunked[name].view(np.int64).tolist() == whole[name].view(np.int64).tolist()
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)
    assert len(seen) == 11 and seen[-1][:2] == (10_001, 10_001) and seen[0][0] == 1_000
    assert {t for _, _, t in seen} == {threading.current_thread().name}
    block = float_block(chunked, ["c", "b", "a"])
    assert block is not None and block[0].shape == (3, 10_001)


def test_an_error_in_a_chunk_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    def bad(x: Any) -> Any:
        if x[0] > 5_000:
            raise ValueError("chunk from row 5,000")
        return x + 1.0

    monkeypatch.setattr(graph_module, "CHUNK_ROWS", 1_000)
    monkeypatch.setattr(graph_module, "chunk_threads", lambda: 3)
    with pytest.raises(ValueError, match="chunk from row 5,000"):
        FormulaGraph([bad]).compute({"x": np.arange(10_000, dtype=float)})
