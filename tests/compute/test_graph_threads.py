"""A chunked evaluation on several threads gives the figures of one pass, in place.

:meth:`~planner.compute.graph.FormulaGraph.compute` evaluates a table longer than
``CHUNK_ROWS`` a chunk at a time, the first chunk on the calling thread and the rest on
:func:`~planner.compute.graph.chunk_threads` threads. These tests make the chunks small and
the threads many, and require each row's figures bit for bit, the outputs in one 2-D block,
``progress`` called on the calling thread with rows done rising to the total, an error in a
chunk raised to the caller, and a column that repeats another kept once
(:mod:`planner.compute.chunk_sink`).
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


def passthrough(x: Any) -> Any:
    return x * 1.0


def twice(passthrough: Any) -> Any:
    return passthrough + passthrough


@pytest.mark.parametrize("threads", [1, 3])
def test_a_column_repeating_another_is_kept_once_until_it_stops(
        monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    """A chunk output equal bit for bit to an earlier column is not copied: the result holds
    it as a read-only view of that column (``passthrough`` of the input ``x``); one that
    stops repeating in a later chunk gets an array of its own, its earlier rows copied; every
    figure is the one-pass figure."""
    rows = np.arange(10_000)

    def stops(x: Any, row: Any) -> Any:
        return np.where(row < 6_500, x, -x)

    x = np.random.default_rng(5).uniform(1, 2, 10_000)
    columns = {"x": x, "row": rows.astype(float)}
    g = FormulaGraph([passthrough, twice, stops])
    whole = g.compute(columns)
    monkeypatch.setattr(graph_module, "CHUNK_ROWS", 1_000)
    monkeypatch.setattr(graph_module, "chunk_threads", lambda: threads)
    chunked = g.compute(columns)
    for name in ("passthrough", "twice", "stops"):
        assert chunked[name].view(np.int64).tolist() == whole[name].view(np.int64).tolist()
    assert np.shares_memory(chunked["passthrough"], x)  # the input's rows, not a copy
    assert not chunked["passthrough"].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        chunked["passthrough"][0] = 0.0
    assert chunked["stops"].flags.writeable and not np.shares_memory(chunked["stops"], x)
    assert float_block(chunked, ["twice"]) is not None  # the one column with a block row


def flag(x: Any) -> Any:
    return x > 1.5


def test_a_given_column_a_formula_computes_is_not_written_into(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A column passed in under a formula's name is the formula's in the result, as in one
    pass (a float output and a flag); the caller's arrays are left as they were."""
    x = np.random.default_rng(9).uniform(1, 2, 5_000)
    given, given_flag = np.zeros(5_000), np.zeros(5_000, dtype=bool)
    columns = {"x": x, "s": 2.0, "a": given, "flag": given_flag}
    whole = FormulaGraph([a, b, flag]).compute(columns)
    monkeypatch.setattr(graph_module, "CHUNK_ROWS", 1_000)
    chunked = FormulaGraph([a, b, flag]).compute(columns)
    assert chunked["a"].tolist() == whole["a"].tolist() == (np.sqrt(x) * 2.0 + 1.0).tolist()
    assert chunked["b"].tolist() == whole["b"].tolist()
    assert chunked["flag"].tolist() == whole["flag"].tolist() == (x > 1.5).tolist()
    assert chunked["flag"].dtype == whole["flag"].dtype == bool
    assert not given.any() and not given_flag.any()
