"""The :class:`~planner.formulas.ops.Repeats` shortcut changes no figure.

The replica search's steps (:mod:`planner.formulas.slo`) state that a step repeats the last
where its bounds stopped moving, and :class:`~planner.compute.graph.FormulaGraph` then evaluates
them only on the rows still searching. These tests evaluate a random grid of scenarios
(engines, MoE and dense models, target rates, TTFT and TPOT objectives at every percentile,
TP and PP) with the shortcut and with it off (every formula on every row, the evaluation before
the shortcut existed), and require every column bit for bit, in one pass and in chunks; and
they check on a toy graph that the shortcut evaluates exactly the rows it should.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from planner.compute import graph as graph_module
from planner.compute.graph import FormulaGraph
from planner.compute.rowfn import row_source
from planner.compute.table import (
    build_columns,
    graph,
    inputs_of,
    interpret_row,
    row_function,
    row_inputs,
)
from planner.formulas import scenario
from planner.formulas.ops import Repeats
from planner.spec.catalog import load_gpus, resolve_model_spec

MODELS = ("llama-3-8b", "llama-3-70b", "mistral-7b", "mixtral-8x7b")
GPUS = ("h100-sxm", "h200", "l40s", "mi300x", "a100-80gb")


def _grid(rows: int, seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    tp = rng.choice([1, 2, 4, 8], rows)
    pp = rng.choice([1, 1, 1, 2], rows)
    rate = rng.choice([0.0, 1.0, 1.0, 1.0], rows) * rng.uniform(0, 400, rows)
    table = {
        "model": rng.choice(MODELS, rows), "gpu": rng.choice(GPUS, rows),
        "engine": rng.choice(["roofline", "vllm", "sglang", "trtllm"], rows),
        "tp": tp, "pp": pp, "gpus": tp * pp * rng.integers(1, 4, rows),
        "batch": rng.integers(1, 257, rows),
        "prompt_tokens": rng.integers(64, 16_384, rows),
        "output_tokens": rng.integers(16, 2_048, rows),
        "target_requests_per_s": rate,
        "slo_ttft_s": rng.choice([0.0, 0.2, 0.5, 1.0, 3.0], rows),
        "slo_tpot_s": rng.choice([0.0, 0.01, 0.03, 0.05], rows),
        "slo_percentile": rng.choice(["50", "90", "99"], rows),
        # closed loops (their iterations settle at once), and disaggregated rows with the
        # pools' own Newton iterations
        "concurrency": rng.choice([0, 0, 0, 1, 16, 256], rows),
        "serving_mode": rng.choice(["aggregated", "aggregated", "disaggregated"], rows),
        "prefill_workers": rng.integers(1, 4, rows), "decode_workers": rng.integers(1, 4, rows)}
    models = {m: resolve_model_spec(m) for m in MODELS}
    return build_columns(table, models, load_gpus()), table


def _same(a: Any, b: Any) -> bool:
    """Bit for bit: the same shape, type and bytes (NaN equal to NaN, -0.0 not 0.0)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return bool((a.view(np.int64) == b.view(np.int64)).all())
    return bool((a == b).all())


def _compare(columns: dict[str, Any]) -> dict[str, Any]:
    fast = graph("inference").compute(columns)
    plain = FormulaGraph(scenario.INFERENCE, scenario.DERIVED_INFERENCE,
                         repeats=False).compute(columns)
    assert set(fast) == set(plain)
    differ = [name for name in plain if not _same(fast[name], plain[name])]
    assert differ == []
    return plain


def test_the_search_shortcut_is_declared_on_every_step_after_the_first() -> None:
    g = graph("inference")
    names = [n for n in g.order if n.startswith("slo_search_")]
    assert len(names) == 80  # 8 quantities x steps 2..10 repeat:
    assert len([n for n in g.repeats if n.startswith("slo_search_")]) == 72
    assert g.repeats["slo_search_2_ttft_s"] == Repeats(
        "slo_search_1_ttft_s", (("slo_search_1_low", "slo_replicas_low"),
                                ("slo_search_1_high", "slo_replicas_high")))
    assert g.repeats["slo_search_10_high"].when == (
        ("slo_search_9_low", "slo_search_8_low"), ("slo_search_9_high", "slo_search_8_high"))
    assert FormulaGraph(scenario.INFERENCE, scenario.DERIVED_INFERENCE,
                        repeats=False).repeats == {}


def test_the_fixed_point_iterations_repeat_where_they_settled() -> None:
    """The iterations ``x_k = F(x_{k-1})`` (the open loop's step, the decode pools' batch, the
    prefill pool's utilisation bound) repeat ``x_{k-1}`` where ``x_{k-1} = x_{k-2}``, from the
    second iteration on (the first starts from a column computed otherwise); the decode steps
    at each batch iterate repeat the step at the iterate before where the iterates are
    equal."""
    g = graph("inference")
    expected = {
        **{f"serving_step_{k}_s": Repeats(f"serving_step_{k - 1}_s", (
            (f"serving_step_{k - 1}_s", f"serving_step_{k - 2}_s"),)) for k in range(2, 7)},
        **{f"disagg_prefill_u_{kind}_{k}": Repeats(f"disagg_prefill_u_{kind}_{k - 1}", (
            (f"disagg_prefill_u_{kind}_{k - 1}", f"disagg_prefill_u_{kind}_{k - 2}"),))
           for kind in ("nic", "domain") for k in range(3, 7)}}
    for batch in ("decode_batch", "disagg_sized_decode_batch"):
        for k in (2, 3):
            expected[f"{batch}_{k}"] = Repeats(f"{batch}_{k - 1}", (
                (f"{batch}_{k - 1}", f"{batch}_{k - 2}"),))
        for k in (1, 2):
            for suffix in ("step_s", "next_step_s"):
                expected[f"{batch}_{k}_{suffix}"] = Repeats(
                    f"{batch}_{k - 1}_{suffix}", ((f"{batch}_{k}", f"{batch}_{k - 1}"),))
    assert {n: r for n, r in g.repeats.items() if not n.startswith("slo_search_")} == expected
    assert len(expected) == 25


def test_every_column_is_bit_identical_with_the_shortcut_off() -> None:
    columns, _ = _grid(4_000, seed=7)
    plain = _compare(columns)
    # the grid exercises the shortcut: most rows end the search at once, some search for
    # several steps (every row of a step is evaluated) and some stop midway
    moving = [int(((plain[f"slo_search_{k}_low"] != plain[f"slo_search_{k - 1}_low"])
                   | (plain[f"slo_search_{k}_high"] != plain[f"slo_search_{k - 1}_high"])
                   ).sum()) for k in range(2, 11)]
    assert moving[0] > 200 and moving[-1] < moving[0]
    assert (np.asarray(plain["slo_replicas_low"]) == plain["slo_replicas_high"]).sum() > 1000
    assert (np.asarray(plain["replicas_needed"]) > 0).sum() > 1000
    # and the iterations: some settle at once (dense models, closed loops), some move on
    for first, second in (("serving_step_2_s", "serving_step_1_s"),
                          ("serving_step_6_s", "serving_step_5_s"),
                          ("decode_batch_2", "decode_batch_1"),
                          ("disagg_sized_decode_batch_2", "disagg_sized_decode_batch_1"),
                          ("disagg_prefill_u_nic_6", "disagg_prefill_u_nic_5")):
        settled = int((np.asarray(plain[first]) == plain[second]).sum())
        assert 0 < settled < 4_000, (first, settled)


def test_bit_identical_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunked evaluation (a million-row table takes 65,536 rows at a time): the shortcut
    judges each chunk's rows alone; here 997-row chunks of a 3,000-row grid."""
    monkeypatch.setattr(graph_module, "CHUNK_ROWS", 997)
    columns, _ = _grid(3_000, seed=11)
    _compare(columns)


@pytest.mark.slow
def test_the_row_function_gives_every_figure_and_type_of_the_graph() -> None:
    """One scenario (the compiled row function of :mod:`planner.compute.rowfn`, and the graph
    formula by formula on Python numbers, where a step whose bounds did not move is the step
    before in both): every column the same bits and Python type as the graph with the shortcut
    off on the same row's numbers, on rows that search for several steps and rows that stop
    at once."""
    _, table = _grid(240, seed=5)
    models = {m: resolve_model_spec(m) for m in MODELS}
    gpus = load_gpus()
    function = row_function("inference")
    plain = FormulaGraph(scenario.INFERENCE, scenario.DERIVED_INFERENCE, repeats=False)
    steps = []
    for i in range(240):
        row = {k: v[i].item() if isinstance(v[i], np.generic) else v[i]
               for k, v in table.items()}
        cols = row_inputs(row, models, gpus)
        derived, outputs = function(cols)
        interpreted = interpret_row("inference", cols)
        reference = plain.compute(cols)
        for name, value in (*derived.items(), *outputs.items()):
            ref = reference[name]
            for got in (value, {**interpreted[0], **interpreted[1]}[name]):
                assert type(got) is type(ref) and _same(got, ref), (i, name, got, ref)
        steps.append(sum(outputs[f"slo_search_{k}_low"] != outputs[f"slo_search_{k - 1}_low"]
                         or outputs[f"slo_search_{k}_high"]
                         != outputs[f"slo_search_{k - 1}_high"] for k in range(2, 11)))
    assert steps.count(0) > 100 and max(steps) >= 5


def test_the_row_function_tests_each_steps_bounds_once() -> None:
    texts = frozenset(c.name for c in inputs_of("inference") if c.kind in ("choice", "text"))
    source, _ = row_source(graph("inference"), texts)
    g = graph("inference")
    # one test per set of pairs: the search's steps 2..10, and each iteration's
    assert len({line.split(" = ")[0] for line in source.splitlines()
                if line.startswith("    _r")}) == len({r.when for r in g.repeats.values()})
    assert source.count("\n    if _r") == len(g.repeats) == 97


def test_only_the_rows_whose_pairs_differ_are_evaluated() -> None:
    """A toy graph: ``b`` states that it repeats ``a`` where ``x == y``; it is called with the
    two rows where they differ (and a scalar as it is), and its value elsewhere is ``a``'s
    (here deliberately not what ``b`` computes, to show the copy)."""
    calls: list[int] = []

    def a(x: Any, s: Any) -> Any:
        return x + s

    def b(x: Any, y: Any, a: Any) -> Any:
        calls.append(np.size(x))
        return x * 10.0 + y

    b.__planner_repeats__ = Repeats("a", (("x", "y"),))  # type: ignore[attr-defined]
    g = FormulaGraph([a, b])
    x = np.array([1.0, 2.0, 3.0, 4.0])
    out = g.compute({"x": x, "y": np.array([1.0, 5.0, 3.0, 0.0]), "s": 0.5})
    assert calls == [2]
    assert out["b"].tolist() == [1.5, 25.0, 3.5, 40.0]
    calls.clear()  # every pair equal: a copy of ``a``, not ``a`` itself
    out = g.compute({"x": x, "y": x.copy(), "s": 0.5})
    assert calls == [] and out["b"].tolist() == [1.5, 2.5, 3.5, 4.5]
    assert out["b"] is not out["a"]
    calls.clear()  # one row of Python numbers: ``a`` where the pair has the same type and bits
    assert g.compute({"x": 1.0, "y": 1.0, "s": 0.5})["b"] == 1.5 and calls == []
    assert g.compute({"x": 1.0, "y": 2.0, "s": 0.5})["b"] == 12.0 and calls == [1]
    assert g.compute({"x": 1.0, "y": 1, "s": 0.5})["b"] == 11.0 and calls == [1, 1]
    assert g.compute({"x": 0.0, "y": -0.0, "s": 0.5})["b"] == -0.0 and calls == [1, 1, 1]
    assert FormulaGraph([a, b], repeats=False).compute(
        {"x": x, "y": x.copy(), "s": 0.5})["b"].tolist() == [11.0, 22.0, 33.0, 44.0]


def test_a_shortcut_from_a_later_column_is_refused() -> None:
    def a(x: Any) -> Any:
        return x

    def b(a: Any) -> Any:
        return a

    a.__planner_repeats__ = Repeats("b", (("x", "x"),))  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="formula 'a' repeats from columns computed after it: b"):
        FormulaGraph([a, b])
