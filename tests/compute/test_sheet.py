"""The column registry, symbolic formulas, DataFrame evaluation and explain."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import service
from planner.compute import evaluate
from planner.compute.explain import render_text
from planner.compute.inputs import INFERENCE_INPUTS, TRAINING_INPUTS, parse_inputs
from planner.compute.outputs import FORMATS, output_columns
from planner.compute.symbolic import Expr, compute_tree, excel, infix, symbolic
from planner.compute.table import RowError, evaluate_table, graph
from planner.spec import catalog
from planner.spec.params import lora_dims
from tests.formulas.test_properties import GPUS, MODELS, scenarios

OUTPUTS = output_columns()


def test_registry_covers_every_formula_with_description_and_unit() -> None:
    names = set(graph("inference").formulas) | set(graph("training").formulas)
    assert set(OUTPUTS) == names
    assert len(OUTPUTS) == (68 + 11 + 86 + 4 + 2 + 85 + 12 + 4 + 3 + 5
                            + 59 + 4 + 15 + 32 + 9 + 4 + 12 + 6 + 3 + 2
                            + 1 + 2)  # roofline and training (4
    # fixed-state columns), the offload to host memory (11), then the serving engine
    # (engine_state_tokens, step_host_link_s), SLO and saturated (issue 24), the topology's link
    # columns and the profile run's kept MoE workspace and hidden states (issue 23), the SLO
    # sizing's bounds (5) and replica search (8 columns x 10 steps, issue 24), issue 23's step
    # kinds (8) and first wave (4), the front end (frontend_code and three effective figures),
    # the prefill-first cohort (prefill_first, cohort_ttft_steps, prefill_only_step_s), the
    # MoE exchange (issue 25 item 5: code, dispatch bytes, seconds per token, latencies) and
    # disaggregated serving's pools, transfer and operating point (59, and 4 of its pools'
    # memory: prefill KV per token, pool, capacity and pools_fit; issue 25), speculative
    # decoding (12) and prefix caching (3, issue 25), the disaggregated sizing (32: workers,
    # GPUs, per-worker capacities and the SLO batch and wait of each pool, issue 25 item 2) and
    # the busiest expert rank under expert parallelism (3 columns for the aggregated engine and
    # each disaggregated pool: ranks, spread, expert GEMM seconds per token) and each pool's TP
    # and EP link bandwidths (4, planner.formulas.pool_links), and the decode steps the open
    # loop's and the sized batch's Newton iterations linearize at (12: 3 iterates x 2 points x
    # 2 families), and the closed loop's and the saturated prefill step's parts (6,
    # planner.formulas.step_mix), and the engine's KV block size (3: the engine's and each
    # pool's), and the eager prefill's launch floor (2: prefill_eager, prefill_host_floor_s,
    # issue 23), and a disaggregated request's path (disagg_path_latency_s: the front end and
    # the P/D hand-over, issue 25), and the decode pool's drafter under speculation (2:
    # decode_spec_draft_kv_s_per_step, decode_spec_draft_fixed_s, issue 25)
    for column in OUTPUTS.values():
        assert column.description and column.label, column.name
        assert column.unit in FORMATS, column.name
        assert column.inputs == tuple(graph("inference" if column.name in
                                            graph("inference").formulas
                                            else "training").deps[column.name])


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_every_formula_renders_as_text_and_excel(name: str) -> None:
    tree = symbolic(OUTPUTS[name].formula)
    assert isinstance(tree, Expr)
    text = infix(tree)
    formula = excel(tree, lambda ref: f"[{ref}]")
    assert text and formula
    assert set(tree.refs()) <= set(OUTPUTS[name].inputs)
    for banned in ("XLOOKUP", "FLOOR.MATH", "IFS("):
        assert banned not in formula


def test_every_formula_fits_excel_at_the_longest_cell_reference() -> None:
    """Excel refuses a formula longer than 8,192 characters (Microsoft, "Excel
    specifications and limits"). Every output column's formula, with each reference written
    as the longest a sheet can have (``XFD1048576``: the last column of the last row), stays
    within it, so a workbook of any size opens in Excel. A column whose formula grows past it
    names its parts as columns of their own (planner.formulas.step_mix, pool_links)."""
    longest = max((len(excel(symbolic(column.formula), lambda ref: "XFD1048576")), name)
                  for name, column in OUTPUTS.items())
    assert 5000 < longest[0] <= 8192, longest


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_symbolic_trees_evaluate_like_the_formulas(case: tuple[str, str, dict]) -> None:
    """For every output column: evaluating its rendered tree on the row's values gives the
    value the formula computed (the property every output column is checked by)."""
    name, gpu_name, inputs = case
    g = graph("inference")
    values = g.compute(service.scenario_columns(MODELS[name], GPUS[gpu_name],
                                                 parse_inputs(INFERENCE_INPUTS,
                                                                      inputs)))
    for column in g.formulas:
        expected = values[column]
        got = compute_tree(symbolic(g.formulas[column]), values)
        if isinstance(expected, bool) or isinstance(got, (bool, np.bool_)):
            assert bool(got) == bool(expected), column
        else:
            assert math.isfinite(expected), column
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-300), column


def test_python_control_flow_on_symbols_is_refused() -> None:
    def bad(x: float) -> float:
        return x if x > 0 else 0

    with pytest.raises(TypeError, match=r"ops\.where"):
        symbolic(bad)


def test_one_row_equals_the_estimator_called_directly() -> None:
    spec, gpu = MODELS["mixtral-8x7b"], GPUS["h100-sxm"]
    inputs = {"gpus": 4, "tp": 2, "batch": 48, "prompt_tokens": 3000, "output_tokens": 300,
              "weight_dtype": "fp8", "kv_dtype": "fp8"}
    direct = service.estimate(spec, gpu, inputs)
    table = evaluate_table({"model": "mixtral-8x7b", "gpu": "h100-sxm", **inputs}, MODELS, GPUS)
    for name in graph("inference").formulas:
        assert float(table[name][0]) == pytest.approx(float(direct[name]), rel=1e-15), name


def test_dataframe_evaluation_mixed_kinds_and_unchanged_input() -> None:
    frame = pd.DataFrame({
        "model": ["llama-3-8b", "llama-2-7b", "qwen2.5-32b-instruct"],
        "gpu": ["rtx-4090", "a100-80gb", "a100-80gb"],
        "kind": ["inference", "training", "inference"],
        "batch": [6, 1, 1], "prompt_tokens": [8192, 1024, 1024], "output_tokens": [1, 1, 1],
        "reserve_gib": [3, 0, 0], "reserve_fraction": [0.0, 0.0, 0.1], "lora_rank": [0, 8, 0],
        "attention_convention": ["causal", "causal", "full"],
        "logits_convention": ["last", "last", "none"],
    }, index=["a", "b", "c"])
    before = frame.copy()
    out = evaluate(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert list(out.index) == ["a", "b", "c"]
    assert out.loc["a", "max_concurrent_sequences"] == 6
    assert out.loc["b", "trainable_params"] == 4_194_304
    assert round(out.loc["c", "prefill_flops"] / 1e12, 2) == 65.28
    assert pd.isna(out.loc["b", "ttft_s"]) and pd.isna(out.loc["a", "train_flops"])
    assert bool(out.loc["a", "fits"]) is True


def test_dataframe_errors_name_column_row_and_range() -> None:
    frame = pd.DataFrame({"model": ["llama-3-8b"] * 3, "gpu": ["h100-sxm"] * 3,
                          "batch": [1, 2, 0]}, index=["x", "y", "z"])
    with pytest.raises(RowError, match=r"batch \(row z\): must be an integer from 1"):
        evaluate(frame)
    with pytest.raises(RowError, match=r"kv_dtype \(row 0\): must be one of"):
        evaluate(pd.DataFrame({"model": ["llama-3-8b"], "gpu": ["l4"], "kv_dtype": ["int3"]}))
    with pytest.raises(RowError, match=r"tp \(row 1\): must divide the 32 attention heads"):
        evaluate(pd.DataFrame({"model": ["llama-3-8b"] * 2, "gpu": ["l4"] * 2,
                               "tp": [2, 3], "gpus": [2, 3]}))
    from planner.core.errors import NotFoundError

    with pytest.raises(NotFoundError, match=r"unknown GPU \(row 0\) 'h900'"):
        evaluate(pd.DataFrame({"model": ["llama-3-8b"], "gpu": ["h900"]}))


def test_vectorized_frame_matches_row_by_row() -> None:
    rng = np.random.default_rng(7)
    n = 200
    frame = pd.DataFrame({
        "model": rng.choice(["llama-3-8b", "mixtral-8x7b", "mistral-7b", "deepseek-v3"], n),
        "gpu": rng.choice(["h100-sxm", "h200", "mi300x", "l40s"], n),
        "batch": rng.integers(1, 300, n), "prompt_tokens": rng.integers(1, 20000, n),
        "output_tokens": rng.integers(1, 2000, n),
        "weight_dtype": rng.choice(["bf16", "fp8", "int4"], n),
        "kv_dtype": rng.choice(["bf16", "fp8"], n)})
    out = evaluate(frame)
    for i in range(0, n, 17):
        row = frame.iloc[i]
        direct = service.estimate(MODELS[row.model], GPUS[row.gpu],
                                  {k: row[k] for k in frame.columns if k not in ("model", "gpu")})
        for col in ("ttft_s", "tpot_s", "kv_headroom_bytes", "max_context_tokens",
                    "cost_usd_per_million_output_tokens"):
            assert out[col].iloc[i] == pytest.approx(direct[col], rel=1e-12), col


def test_explain_walks_down_to_inputs() -> None:
    tree = service.explain(catalog.resolve_model_spec("llama-3-8b"), GPUS["rtx-4090"],
                           {"batch": 6, "prompt_tokens": 8192, "output_tokens": 1,
                            "reserve_gib": 3, "reserve_fraction": 0},
                           "max_concurrent_sequences")
    assert tree.value == 6 and tree.source == "formula"
    assert tree.formula == ("max(0, floor(if(memory_bytes_per_sequence_per_gpu == 0, 0, "
                            "kv_budget_bytes / memory_bytes_per_sequence_per_gpu)))")
    budget = tree.children[0]
    assert budget.name == "kv_budget_bytes" and budget.shown == "6.04 GiB"
    assert budget.formula == ("gpu_memory_bytes - reserve_bytes_per_gpu"
                              " - weights_on_gpu_bytes_per_gpu")
    assert [c.source for c in budget.children] == ["gpu", "formula", "formula"]
    text = render_text(tree)
    assert "reserve_bytes = 3.00 GiB  [input]" in text
    assert "model_kv_heads = 8  [model]" in text
    assert "tp = 1  [input]" in text
    from planner.core.errors import PlannerError

    with pytest.raises(PlannerError, match="unknown column 'ttft'"):
        service.explain(catalog.resolve_model_spec("llama-3-8b"), GPUS["l4"], {}, "ttft")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(MODELS)), st.sampled_from(sorted(GPUS)), st.integers(0, 3),
       st.sampled_from([0, 8, 64]), st.integers(1, 32), st.integers(1, 16384),
       st.booleans(), st.booleans())
def test_training_outputs_symbolic_and_finite(model: str, gpu: str, zero: int, rank: int,
                                              dp: int, seq: int, recompute: bool,
                                              attention: bool) -> None:
    """Every training output column: finite, non-negative, and its rendered tree evaluates to
    the formula's value."""
    g = graph("training")
    inputs = parse_inputs(TRAINING_INPUTS, {
        "gpus": dp, "zero_stage": zero, "lora_rank": rank, "train_seq_len": seq,
        "activation_recompute": recompute, "include_attention_flops": attention,
        "budget_usd": 1000, "budget_gpu_hours": 10})
    columns = service.scenario_columns(MODELS[model], GPUS[gpu], inputs)
    columns["model_lora_dims"] = lora_dims(MODELS[model], "all") if rank else 0
    values = g.compute(columns)
    for column in g.formulas:
        expected = values[column]
        got = compute_tree(symbolic(g.formulas[column]), values)
        if isinstance(expected, bool):
            assert bool(got) == expected, column
            continue
        assert math.isfinite(expected) and expected >= 0, column
        assert got == pytest.approx(expected, rel=1e-12), column
    from planner.spec.params import count_params

    assert values["trainable_params"] == (values["lora_trainable_params"] if rank
                                          else count_params(MODELS[model]).total)


@pytest.mark.parametrize("small", [65_536, 0])
def test_factorize_dict_and_pandas_paths_agree(monkeypatch: pytest.MonkeyPatch,
                                               small: int) -> None:
    """Small tables factorize with a dict (no pandas import at UI start-up), large ones with
    pandas; both give first-appearance order and Python equality."""
    from planner.compute import distinct as sheet_table

    monkeypatch.setattr(sheet_table, "_SMALL", small)
    values = np.asarray(["bf16", "int4", "bf16", "fp8", "int4", 1, 1.0], dtype=object)
    codes, uniques = sheet_table.factorize(values, len(values))
    assert uniques == ["bf16", "int4", "fp8", 1]
    assert codes.tolist() == [0, 1, 0, 2, 1, 3, 3]
    codes, uniques = sheet_table.factorize(["q,v", "q,v"], 2)
    assert (codes.tolist(), uniques) == ([0, 0], ["q,v"])
