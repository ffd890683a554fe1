"""Constraint grammar, variations, sweeps, solve (checked by brute force), compare, roll-up."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import service
from planner.compute import expr, sweep
from planner.compute.inputs import input_columns
from planner.core.errors import ValidationError
from tests.formulas.test_properties import GPUS, MODELS
from tests.helpers import run

COLUMNS = input_columns()


@pytest.mark.parametrize(("text", "values", "expected"), [
    ("fits and ttft_s <= 0.5", {"fits": np.array([True, True, False]),
                                "ttft_s": np.array([0.4, 0.6, 0.1])}, [True, False, False]),
    ("not fits or batch >= 2 * 8", {"fits": np.array([True, False, True]),
                                    "batch": np.array([16, 1, 15])}, [True, True, False]),
    ("-x + 3 * (y - 1) / 2 == 2.5", {"x": 0.5, "y": 3.0}, True),
    ("gpu == 'h200' and weight_dtype != \"fp8\"",
     {"gpu": np.array(["h200", "h200", "l4"], dtype=object),
      "weight_dtype": np.array(["bf16", "fp8", "bf16"], dtype=object)}, [True, False, False]),
    ("tokens <= 1_000_000 and tokens > 2e3", {"tokens": np.array([5e5, 1e3])}, [True, False]),
])
def test_expressions_evaluate(text: str, values: dict, expected: object) -> None:
    result = expr.compute(expr.parse(text), values)
    assert np.array_equal(np.asarray(result), np.asarray(expected))


@pytest.mark.parametrize(("text", "message", "caret"), [
    ("fits and", "expected a number, column or '(', got end of expression", 8),
    ("ttft_s <= 0.5 <= 1", "chained comparison", 14),
    ("(fits", "expected ')'", 5),
    ("fits; drop", "unexpected character ';'", 4),
    ("__import__('os')", "unexpected '('", 10),
    ("", "empty expression", 0),
])
def test_expression_errors_point_at_the_mistake(text: str, message: str, caret: int) -> None:
    with pytest.raises(expr.ExpressionError) as err:
        expr.parse(text)
    assert message in str(err.value)
    assert err.value.position == caret
    assert str(err.value).splitlines()[-1] == "  " + " " * caret + "^"


@pytest.mark.parametrize(("text", "values"), [
    ("batch=1,2,4,...,256", (1, 2, 4, 8, 16, 32, 64, 128, 256)),
    ("batch=8,16,...,64", (8, 16, 24, 32, 40, 48, 56, 64)),
    ("gpus=1..5", (1, 2, 3, 4, 5)),
    ("mfu=0.3,0.4,...,0.7", (0.3, 0.4, 0.5, 0.6, 0.7)),
    ("weight_dtype=bf16,INT4", ("bf16", "int4")),
    ("gpu=H200,l4", ("h200", "l4")),
])
def test_variations(text: str, values: tuple) -> None:
    v = sweep.parse_variation(text, gpus=list(GPUS), models=list(MODELS), columns=COLUMNS)
    assert v.values == pytest.approx(values) if isinstance(values[0], float) else \
        v.values == values
    assert sweep.parse_variation("gpu=*", gpus=list(GPUS), columns=COLUMNS).values == \
        tuple(GPUS)


@pytest.mark.parametrize(("text", "message"), [
    ("batch=0,1", "batch: must be an integer from 1"),
    ("batch=1,2,...,7,9", "'...' must come just before the last value"),
    ("batch=1,2,4,...,100", "does not reach 100"),
    ("batch", "write a variation as column=v1,v2"),
    ("ttft_s=1,2", "ttft_s: is not an input that can vary"),
    ("gpu=h900", "gpu: must be one of"),
    ("batch=5..1", "a range a..b needs integers with a <= b"),
])
def test_bad_variations(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(".", r"\.")
                       .replace("*", r"\*")):
        sweep.parse_variation(text, gpus=list(GPUS), models=list(MODELS), columns=COLUMNS)


BASE = {"model": "llama-3-8b", "gpu": "rtx-4090", "reserve_gib": 3.0, "reserve_fraction": 0.0,
        "prompt_tokens": 2048, "output_tokens": 256, "batch": 4}


def _estimate(base: dict, **changes: object) -> dict:
    inputs = {k: v for k, v in {**base, **changes}.items() if k not in ("model", "gpu")}
    model, gpu = changes.get("model", base["model"]), changes.get("gpu", base["gpu"])
    return service.estimate(MODELS[model], GPUS[gpu], inputs)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["llama-3-8b", "mistral-7b", "llama-2-7b", "mixtral-8x7b"]),
       st.sampled_from(["rtx-4090", "l40s", "a100-80gb", "h100-sxm"]), st.integers(1, 64),
       st.integers(1, 3000))
def test_max_context_matches_brute_force(model: str, gpu: str, batch: int, output: int) -> None:
    base = {**BASE, "model": model, "gpu": gpu, "batch": batch, "output_tokens": 1}
    limit = 3000
    result = sweep.solve(base, "prompt_tokens", "max", "fits",
                          [sweep.Variation("prompt_tokens", tuple(range(1, limit + 1)))],
                          MODELS, GPUS)
    table = sweep.build_grid(base, [sweep.Variation("prompt_tokens",
                                                      tuple(range(1, limit + 1)))],
                              MODELS, GPUS, outputs=["fits"])
    feasible = [t for t, ok in zip(range(1, limit + 1), table.values["fits"], strict=True) if ok]
    for t in range(1 + output % 97, limit + 1, 97):  # the grid agrees with one-by-one estimates
        assert _fits_at(base, t) == (t in feasible), t
    if feasible:
        assert result.found and result.values["prompt_tokens"] == max(feasible)
        assert _fits_at(base, max(feasible))
        if max(feasible) < limit:
            assert not _fits_at(base, max(feasible) + 1)
    else:
        assert not result.found


def _fits_at(base: dict, prompt: int) -> bool:
    return bool(_estimate(base, prompt_tokens=prompt, output_tokens=1)["fits"])


def test_bisection_agrees_with_the_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Force bisection (as for a range too large to list) and compare with the full grid."""
    for batch in (1, 3, 6, 40):
        base = {**BASE, "batch": batch, "output_tokens": 1}
        grid = sweep.solve(base, "prompt_tokens", "max", "fits", [], MODELS, GPUS)
        monkeypatch.setattr(sweep, "BRUTE_FORCE_LIMIT", 10)
        bisect = sweep.solve(base, "prompt_tokens", "max", "fits", [], MODELS, GPUS)
        monkeypatch.setattr(sweep, "BRUTE_FORCE_LIMIT", 2_000_000)
        assert (grid.method, bisect.method) == ("grid", "bisection")
        assert grid.found == bisect.found
        if grid.found:
            assert bisect.values["prompt_tokens"] == grid.values["prompt_tokens"]
            assert bisect.candidates < 200


def test_fewest_gpus_for_a_rate_matches_brute_force() -> None:
    base = {**BASE, "gpu": "h100-sxm", "batch": 32, "prompt_tokens": 1024,
            "target_requests_per_s": 40.0, "reserve_gib": 0.0, "reserve_fraction": 0.1}
    gpus_values, tps = tuple(range(1, 33)), (1, 2, 4, 8)
    result = sweep.solve(base, "gpus", "min", "meets_target_rate and fits",
                          [sweep.Variation("gpus", gpus_values), sweep.Variation("tp", tps)],
                          MODELS, GPUS)
    best = None
    for g in gpus_values:
        for tp in tps:
            if g % tp:
                continue
            r = _estimate(base, gpus=g, tp=tp)
            if r["meets_target_rate"] and r["fits"]:
                key = (g, r["cost_usd_per_hour"])
                if best is None or key < best[0]:
                    best = (key, tp)
    assert best is not None and result.found
    assert (result.values["gpus"], result.values["tp"]) == (best[0][0], best[1])
    assert result.candidates == 128


def test_cheapest_gpu_meeting_a_latency_target() -> None:
    base = {**BASE, "batch": 8, "prompt_tokens": 1024, "output_tokens": 256}
    result = sweep.solve(base, "cost_usd_per_hour", "min", "fits and ttft_s <= 0.05",
                          [sweep.Variation("gpu", tuple(GPUS))], MODELS, GPUS)
    ok = [(GPUS[g].price_usd_per_hour, g) for g in GPUS
          if (r := _estimate(base, gpu=g))["fits"] and r["ttft_s"] <= 0.05]
    assert result.values["gpu"] == min(ok)[1]
    assert result.feasible == len(ok)


def test_sweep_marks_invalid_rows() -> None:
    grid = sweep.build_grid({**BASE, "model": "mixtral-8x7b", "gpu": "h100-sxm"},
                             [sweep.Variation("tp", (1, 2, 3)),
                              sweep.Variation("gpus", (2, 3))], MODELS, GPUS,
                             outputs=["tpot_s"])
    assert list(grid.reasons) == ["", "", "", "gpus not a multiple of tp*pp",
                                  "tp does not divide the attention heads",
                                  "tp does not divide the attention heads"]
    assert np.isnan(grid.values["tpot_s"][3]) and grid.values["tpot_s"][0] > 0


def test_sweep_cli_table_files_and_json(tmp_path: Path) -> None:
    code, out, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary", "batch=1,2,4,8",
                         "--vary", "gpu=rtx-4090,h100-sxm", "--show", "fits")
    assert code == 0, err
    assert "batch \\ gpu" in out and "rtx-4090" in out
    csv = tmp_path / "sweep.csv"
    code, out, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary", "batch=1..8",
                         "--show", "max_concurrent_sequences,fits", "--out", str(csv), "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["fits"] for r in rows] == [1.0] * 6 + [0.0] * 2
    assert csv.read_text().splitlines()[0] == "batch,max_concurrent_sequences,fits,note"
    code, _, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary", "batch=1,2",
                       "--out", str(csv))
    assert code == 2 and "exists; pass --force" in err
    xlsx = tmp_path / "sweep.xlsx"
    code, _, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary", "batch=1,2",
                       "--out", str(xlsx))
    assert code == 0 and xlsx.exists()
    code, _, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary", "batch=1,2",
                       "--show", "ttft")
    assert code == 2 and "--show: must be output columns" in " ".join(err.split())


def test_solve_cli() -> None:
    code, out, err = run("solve", "demo/llama3-8b-24gib-6x8k", "--maximize", "batch",
                         "--subject-to", "fits", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["found"] and data["values"]["batch"] == 6
    code, out, _ = run("solve", "demo/llama3-8b-24gib-6x8k", "--maximize", "batch",
                       "--subject-to", "fits and batch > 1e9")
    assert code == 1 and "no feasible answer" in out
    code, _, err = run("solve", "demo/llama3-8b-24gib-6x8k", "--maximize", "batch",
                       "--minimize", "gpus")
    assert code == 2 and "give exactly one" in err


def test_compare_and_rollup() -> None:
    from planner.service import Workspace
    from planner.service.compare import compare, rollup

    with Workspace.open() as ws:
        a = ws.scenario("demo", "llama3-8b-24gib-6x8k")
        ws.copy_scenario("demo", a.name, "on-h100")
        ws.set_scenario("demo", "on-h100", {"gpu": "h100-sxm", "batch": 7})
        b = ws.scenario("demo", "on-h100")
        outputs = ws.evaluate_many([a, b])
        rows = {r.column: r for r in compare([a, b], outputs)}
        assert rows["gpu"].values == ["rtx-4090", "h100-sxm"]
        assert rows["batch"].deltas == [0.0, 1.0]
        assert rows["batch"].ratios[1] == pytest.approx(1 / 6)
        assert rows["cost_usd_per_hour"].deltas[1] == pytest.approx(2.5 - 0.4)
        assert "prompt_tokens" not in rows  # same in both
        ws.set_scenario("demo", "on-h100", {"batch": 300})
        scenarios = ws.scenarios("demo")
        totals = rollup(scenarios, ws.evaluate_many(scenarios))
    (demo,) = totals
    # the 70B chat option group counts its chosen base (12 H100) only, not its H200 and MI300X
    # options (8 each): issue 15's alternatives are compared, never summed
    assert demo.gpus_by_type == {"a100-80gb": 1, "h100-sxm": 4 + 12, "h200": 8, "rtx-4090": 1}
    assert demo.cost_usd_per_hour == pytest.approx(1.8 + (4 + 12) * 2.5 + 8 * 3.5 + 0.4)
    assert demo.not_counted == ["llama3-70b-chat-h200-tp2", "llama3-70b-chat-mi300x-tp2"]
    assert demo.cost_usd_per_month == pytest.approx(demo.cost_usd_per_hour * 730)
    assert [name for name, _ in demo.not_fitting] == ["on-h100"]
    assert demo.training_gpu_hours > 0
    code, out, _ = run("fleet", "rollup", "--json")
    assert json.loads(out)[0]["not_fitting"][0][0] == "on-h100"
    code, out, _ = run("compare", "demo/llama3-8b-24gib-6x8k", "demo/on-h100", "--json")
    assert code == 0 and json.loads(out)["scenarios"][1] == "demo/on-h100"


def test_explain_cli() -> None:
    code, out, err = run("scenario", "explain", "demo/llama3-8b-24gib-6x8k",
                         "max_concurrent_sequences", "--depth", "2")
    assert code == 0, err
    assert out.splitlines()[0] == "max_concurrent_sequences = 6 sequences"
    code, out, _ = run("scenario", "explain", "demo/llama2-7b-lora-r8-qv", "trainable_params",
                       "--json")
    data = json.loads(out)
    assert data["value"] == 4_194_304 and data["formula"]


def test_solve_picks_the_cheapest_engine_gpu_and_size_within_the_slo() -> None:
    """The cheapest (GPU, engine, GPU count) that carries 30 requests/s of Llama-3-8B within a
    p99 TTFT of 1 s and a TPOT of 50 ms, found by evaluating every candidate; the answer meets
    the objectives and one replica fewer of it does not."""
    from planner.compute.inputs import INFERENCE_INPUTS
    from planner.compute.sweep import parse_variation, solve
    from planner.service import estimate
    from planner.spec.catalog import load_gpus, resolve_model_spec

    gpus = load_gpus()
    spec = resolve_model_spec("llama-3-8b")
    columns = {c.name: c for c in INFERENCE_INPUTS}
    base = {"model": "llama-3-8b", "gpu": "h100-sxm", "target_requests_per_s": 30,
            "slo_ttft_s": 1, "slo_tpot_s": 0.05, "slo_percentile": "99",
            "prompt_tokens": 1024, "output_tokens": 256, "engine": "vllm"}
    result = solve(base, "cost_usd_per_month", "min", "meets_slo",
                   [parse_variation("gpu=*", gpus=list(gpus)),
                    parse_variation("engine=vllm,sglang,trtllm", columns=columns),
                    parse_variation("gpus=1..16", columns=columns)],
                   {"llama-3-8b": spec}, gpus)
    assert result.found
    best = result.values
    # the answer's GPU count and engine over the base (the base names vllm: since each engine
    # has its own front end, issue 23, the answer's engine must win)
    inputs = {k: v for k, v in base.items() if k not in ("model", "gpu")} | {
        k: best[k] for k in ("gpus", "engine")}
    assert estimate(spec, gpus[best["gpu"]], inputs)["meets_slo"] is True
    if best["gpus"] > 1:
        fewer = estimate(spec, gpus[best["gpu"]], {**inputs, "gpus": best["gpus"] - 1})
        assert fewer["meets_slo"] is False
    others = [estimate(spec, g, {**inputs, "gpus": n})
              for name, g in gpus.items() for n in range(1, 17)
              if name != best["gpu"]]
    cheaper = [o for o in others if o["meets_slo"]
               and o["cost_usd_per_month"] < best["cost_usd_per_month"]]
    assert cheaper == []


# ---------------------------------------------------------------- issue 16, item 20
def test_long_sweep_is_streamed_as_plain_rows_matching_json() -> None:
    """Issue 16 #20: a sweep longer than a screenful is printed as plain aligned rows (no rich
    table, whose measuring pass made printing grow faster than the rows): a title, a header,
    a rule, then exactly one line per row, with the same figures as --json."""
    from planner.cli.render import RICH_MAX_ROWS
    from planner.present import cell

    n = RICH_MAX_ROWS + 500
    args = ("sweep", "demo/llama3-8b-24gib-6x8k", "--vary", f"batch=1..{n}",
            "--show", "max_concurrent_sequences,fits")
    code, out, err = run(*args)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "demo/llama3-8b-24gib-6x8k: batch"
    assert lines[1].split() == ["batch", "max_concurrent_sequences", "fits"]  # no notes
    assert set(lines[2].replace(" ", "")) == {"-"}
    assert len(lines) == 3 + n and "┃" not in out and "│" not in out
    code, js, _ = run(*args, "--json")
    rows = json.loads(js)
    for i in (0, 5, 6, n - 1):  # batch 1, 6 (the last that fits), 7, n
        r = rows[i]
        line = lines[3 + i]
        assert line.lstrip().startswith(cell("batch", r["batch"]))
        assert cell("max_concurrent_sequences", r["max_concurrent_sequences"]) in line
        assert (" yes" in line) == bool(r["fits"])


def test_wide_two_way_sweep_is_streamed_with_one_column_per_value() -> None:
    """Issue 16 #20: a two-way table with more columns than a screen is streamed too: one
    header with every column value, one line per row value."""
    code, out, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary", "batch=1..3",
                         "--vary", "prompt_tokens=100..150", "--show", "fits")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "demo/llama3-8b-24gib-6x8k: batch × prompt_tokens → fits"
    header = lines[1].split()
    assert header[:3] == ["batch", "\\", "prompt_tokens"] and len(header) == 3 + 2 * 51
    assert header[3:5] == ["100", "tokens"] and header[-2:] == ["150", "tokens"]
    assert len(lines) == 3 + 3 and all(line.split()[2:] == ["yes"] * 51 for line in lines[3:])
    assert [line.split()[:2] for line in lines[3:]] == [[str(b), "sequences"] for b in (1, 2, 3)]


def test_sweep_xlsx_names_are_text_and_the_row_limit_is_named(tmp_path: Path) -> None:
    """Issue 16 #20 (--out): the .xlsx is written row by row; a GPU whose name starts like a
    formula stays text; a sweep longer than a sheet is refused with the limit, before writing."""
    import openpyxl
    import pandas as pd

    from planner.cli.whatif import XLSX_MAX_ROWS, _write

    frame = pd.DataFrame({"gpu": ["=1+1", "h100-sxm"], "tpot_s": [0.5, float("nan")],
                          "note": ["", "x"]})
    path = tmp_path / "s.xlsx"
    _write(frame, path)
    sheet = openpyxl.load_workbook(path)["Sweep"]
    assert [c.value for c in sheet[1]] == ["gpu", "tpot_s", "note"]
    assert sheet["A2"].value == "=1+1" and sheet["A2"].data_type == "s"
    assert sheet["A2"].quotePrefix
    assert sheet["B2"].value == 0.5 and sheet["B3"].value is None
    too_long = pd.DataFrame({"batch": range(XLSX_MAX_ROWS + 1)})
    with pytest.raises(ValidationError, match="at most 1,048,575 rows"):
        _write(too_long, tmp_path / "big.xlsx")
    assert not (tmp_path / "big.xlsx").exists()
