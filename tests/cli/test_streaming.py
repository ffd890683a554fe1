"""Streamed output (issue 14, item 2): ``scenario list`` and its ``--json`` are written as they
are produced, and print exactly the text the rich table and the one-piece JSON printed."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table

from planner.cli import cli, render, stream
from planner.cli.common import json_text
from planner.compute import fleet as fleet_module
from planner.compute import verdict
from planner.service import Workspace


@pytest.fixture
def ws(ws: Workspace) -> Workspace:
    """The default database (demo fleet) plus a fleet 'mixed' of 30 inference and 6 training
    scenarios over four models and five GPUs, some not fitting, with hostile names."""
    workspace = ws
    workspace.new_fleet("mixed")
    models = ("llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b")
    gpus = ("a100-80gb", "h100-sxm", "h200", "l40s", "mi300x")
    names = ["日本語-ü", "[/x] markup", "a b  c", *(f"s{i:03d}" for i in range(27))]
    for i, name in enumerate(names):
        tp = (1, 2, 4, 8)[i % 4]
        workspace.new_scenario("mixed", name, model=models[i % 4], gpu=gpus[i % 5],
                               gpus=tp * (1 + i % 2), tp=tp, batch=1 + 37 * i,
                               prompt_tokens=128 + 997 * i, output_tokens=16 + 31 * i,
                               weight_dtype=("bf16", "fp8", "int4")[i % 3])
    for i in range(6):
        workspace.new_scenario("mixed", f"t{i}", model=models[i % 4], gpu=gpus[i % 5],
                               kind="training", gpus=8, tp=1, train_tokens=1e9 * (i + 1),
                               zero_stage=1 + i % 3)
    return workspace


def rich_list(ws: Workspace, fleet: str | None) -> str:
    """What ``scenario list`` printed before streaming: rich's table of every row."""
    console, render.console = render.console, Console(highlight=False, width=200,
                                                      file=io.StringIO())
    try:
        scenarios = ws.scenarios(fleet)
        render.scenario_list(scenarios, ws.evaluate_many(scenarios))
        return render.console.file.getvalue()  # type: ignore[attr-defined]
    finally:
        render.console = console


@pytest.mark.parametrize("fleet", ["mixed", "demo", None])
def test_streamed_table_is_the_text_rich_printed(ws: Workspace, fleet: str | None) -> None:
    expected = rich_list(ws, fleet)
    args = ["scenario", "list"] + (["--fleet", fleet] if fleet else [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected
    assert "日本語-ü" in expected or fleet == "demo"
    assert expected.count("│ ") > 0


def test_streamed_json_is_the_json_printed_in_one_piece(ws: Workspace) -> None:
    scenarios = ws.scenarios("mixed")
    outputs = ws.evaluate_many(scenarios)
    from dataclasses import asdict

    # figures that are states are null, as estimate --json gives them (issue 24)
    expected = json_text([{**asdict(sc), "outputs": verdict.json_outputs(out, sc.inputs)}
                          for sc, out in zip(scenarios, outputs, strict=True)]) + "\n"
    result = CliRunner().invoke(cli, ["scenario", "list", "--fleet", "mixed", "--json"])
    assert result.exit_code == 0, result.output
    assert result.stdout == expected
    parsed = json.loads(result.stdout)
    assert len(parsed) == 36
    assert [p["name"] for p in parsed[:3]] == ["[/x] markup", "a b  c", "s000"]


def test_empty_fleet_lists_as_before(ws: Workspace) -> None:
    ws.new_fleet("empty")
    result = CliRunner().invoke(cli, ["scenario", "list", "--fleet", "empty"])
    assert result.stdout == "no scenarios\n"
    result = CliRunner().invoke(cli, ["scenario", "list", "--fleet", "empty", "--json"])
    assert result.stdout == "[]\n" and json.loads(result.stdout) == []


def test_records_in_small_chunks_equal_records_in_one(ws: Workspace,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    scenarios = ws.scenarios()
    whole = ws.evaluate_many(scenarios)
    monkeypatch.setattr(fleet_module, "RECORD_CHUNK_ROWS", 4)
    chunked = list(ws.evaluate_columns(scenarios).records())
    assert len(chunked) == len(scenarios) == 46
    assert json_text(chunked) == json_text(whole)
    one = ws.evaluate(scenarios[5])
    assert json_text(one) == json_text(whole[5])


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 7, 9])
def test_json_list_in_chunks(count: int) -> None:
    items: list[Any] = [{"i": i, "x": [1.5, float("nan"), None], "s": "a\nb",
                         "f": [0.1, float("inf"), 3.0, -float("inf")][i % 4],
                         "d": {"a": i, "b": {"c": float(i)}} if i % 3 else {"other": True},
                         **({"extra": "only here"} if i == 2 else {}),
                         **({1: "int key"} if i == 5 else {})} for i in range(count)]
    out = io.StringIO()
    stream.write_json_list(iter(items), count, out=out, chunk_items=3, progress=False)
    assert out.getvalue() == json_text(items) + "\n"
    mixed = [*items, "text", 3, [1.0, {"k": None}], {}]
    out = io.StringIO()
    stream.write_json_list(iter(mixed), len(mixed), out=out, chunk_items=2, progress=False)
    assert out.getvalue() == json_text(mixed) + "\n"


def test_box_table_matches_rich() -> None:
    headers = ["name", "n", "text"]
    columns = [["a", "日本語", "[/x]", ""], ["1", "22", "333", "−4"], ["x", "yy", "", "z"]]
    left = [True, False, True]
    table = Table(title="A title")
    for h, is_left in zip(headers, left, strict=True):
        table.add_column(h, justify="left" if is_left else "right")
    for row in zip(*columns, strict=True):
        table.add_row(*(render.esc(c) for c in row))
    console = Console(highlight=False, width=200, file=io.StringIO())
    console.print(table)
    out = io.StringIO()
    stream.write_box_table("A title", headers, columns, left, out=out, progress=False,
                           wide=[True, False, True])
    assert out.getvalue() == console.file.getvalue()  # type: ignore[attr-defined]


class _Text(str):
    pass


@pytest.mark.parametrize("data", [
    {"a": 1, "b": 2.5, "c": None, "d": True, "e": False, "f": "x\ny\u00e9\u2212\"", "g": [],
     "h": {}, "i": [1, [2, {"j": float("nan")}], (3, 4)], "k": float("inf"),
     "l": -float("inf"), "m": 1e300, "n": -0.0, "o": 2**70},
    [{"when": __import__("datetime").datetime(2026, 12, 1, 5, 0)}, {1: "int key"}],
    {"np": __import__("numpy").float64(1.25), "np_nan": __import__("numpy").float64("nan"),
     "sub": _Text("t"), _Text("k"): 3, "obj": object.__new__(type("X", (), {
         "__str__": lambda self: "an object"}))},
    "plain", 3, None, [],
])
def test_fast_json_text_is_json_text(data: Any) -> None:
    from planner.cli.common import json_text_fast

    assert json_text_fast(data) == json_text(data)


def test_sweep_json_is_streamed_as_the_one_piece_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep's --json, written a few records at a time, is the text of
    ``json_text(frame.to_dict(orient="records"))`` that it printed in one piece."""
    import pandas as pd

    from planner.cli import whatif

    frames: list[pd.DataFrame] = []
    real = whatif._grid_frame

    def spy(*args: Any) -> pd.DataFrame:
        frames.append(real(*args))
        return frames[-1]

    monkeypatch.setattr(whatif, "_grid_frame", spy)
    monkeypatch.setattr(stream, "JSON_CHUNK_ROWS", 7)
    result = CliRunner().invoke(cli, ["sweep", "demo/llama3-8b-24gib-6x8k", "--vary",
                                      "batch=1..40", "--vary", "prompt_tokens=512,8191",
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert len(frames[0]) == 80
    assert result.stdout == json_text(frames[0].to_dict(orient="records")) + "\n"
    assert [r["batch"] for r in json.loads(result.stdout)][:3] == [1, 1, 2]


def _generated_fleet(ws: Workspace, name: str, count: int) -> None:
    """A fleet of ``count`` scenarios written with one INSERT (as the scale benchmark does):
    four models, five GPUs, three weight dtypes, every tenth a training scenario, every 97th
    far too big to fit, a few with odd notes and not chosen."""
    from sqlalchemy import insert, select

    from planner.store.engine import write_session
    from planner.store.schema import GpuRow, ModelRow, ScenarioRow

    models = ("llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b")
    gpus = ("a100-80gb", "h100-sxm", "h200", "l40s", "mi300x")
    fleet_id = ws.new_fleet(name).id
    with write_session(ws.engine) as s:
        model_ids = dict(s.execute(select(ModelRow.name, ModelRow.id)
                                   .where(ModelRow.name.in_(models))).all())
        gpu_ids = dict(s.execute(select(GpuRow.name, GpuRow.id)
                                 .where(GpuRow.name.in_(gpus))).all())
        rows = []
        for i in range(count):
            tp = (1, 2, 4, 8)[i % 4]
            training = i % 10 == 9
            row: dict[str, Any] = {
                "name": f"g{i:05d}", "kind": "training" if training else "inference",
                "fleet_id": fleet_id, "version": 1, "model_id": model_ids[models[i % 4]],
                "gpu_id": gpu_ids[gpus[i % 5]], "gpus": tp * (1 + i % 3), "tp": tp, "pp": 1,
                "batch": 1 + i % 256 if i % 97 else 100_000,
                "prompt_tokens": 128 + (i * 37) % 8000, "output_tokens": 16 + (i * 11) % 1000,
                "weight_dtype": ("bf16", "fp8", "int4")[i % 3] if not training else "bf16",
                "kv_dtype": ("bf16", "fp8")[i % 2],
                "notes": "日本語 \"q\"\n\\" if i % 101 == 0 else "", "chosen": i % 53 != 0}
            if training:
                row.update(train_tokens=1e9 * (1 + i % 7), train_seq_len=4096,
                           micro_batch_size=1, zero_stage=1 + i % 3)
            rows.append(row)
        s.execute(insert(ScenarioRow), rows)


@pytest.mark.slow
def test_columnwise_json_of_a_generated_fleet_is_json_text(ws: Workspace) -> None:
    """``scenario list --json`` of 2,000 scenarios (both kinds interleaved, non-fitting rows,
    unicode notes) is byte for byte the one-piece ``json_text`` of the records, whatever the
    chunk size (chunks of 1 row encode every column as a constant)."""
    from dataclasses import asdict

    from planner.cli import listing

    _generated_fleet(ws, "gen", 2_000)
    scenarios = ws.scenarios("gen")
    outputs = ws.evaluate_many(scenarios)
    # figures that are states are null, as estimate --json gives them (issue 24)
    expected = json_text([{**asdict(sc), "outputs": verdict.json_outputs(out, sc.inputs)}
                          for sc, out in zip(scenarios, outputs, strict=True)]) + "\n"
    assert sum(not out["fits"] for out in outputs if "fits" in out) >= 15
    result = CliRunner().invoke(cli, ["scenario", "list", "--fleet", "gen", "--json"])
    assert result.exit_code == 0, result.output
    assert result.stdout == expected
    values = ws.evaluate_columns(scenarios)
    for chunk_rows in (1, 7, 333):
        out = io.StringIO()
        listing.scenario_json(values, out=out, progress=False, chunk_rows=chunk_rows)
        assert out.getvalue() == expected, chunk_rows
    parsed = json.loads(result.stdout)
    assert len(parsed) == 2_000 and parsed[9]["kind"] == "training"
    assert parsed[0]["notes"] == "日本語 \"q\"\n\\" and parsed[53]["chosen"] is False


def test_columnwise_json_of_the_demo_fleet_is_json_text(ws: Workspace) -> None:
    from dataclasses import asdict

    scenarios = ws.scenarios("demo")
    outputs = ws.evaluate_many(scenarios)
    # figures that are states are null, as estimate --json gives them (issue 24)
    expected = json_text([{**asdict(sc), "outputs": verdict.json_outputs(out, sc.inputs)}
                          for sc, out in zip(scenarios, outputs, strict=True)]) + "\n"
    result = CliRunner().invoke(cli, ["scenario", "list", "--fleet", "demo", "--json"])
    assert result.exit_code == 0, result.output
    assert result.stdout == expected
    assert any(sc.option_of for sc in scenarios)


@pytest.mark.parametrize("values", [
    [0.1 * (i % 3) for i in range(300)],  # repeats: formatted once per distinct value
    [0.0, -0.0] * 100 + [float("nan"), float("inf"), -float("inf")] * 20,
    [i / 7 for i in range(500)],  # all distinct
    [1e-05, 1e16, 123456789.0],  # short
    [],
])
def test_float_reprs_is_float_repr_of_each(values: list[float]) -> None:
    import numpy as np

    from planner.core.units import float_reprs

    assert float_reprs(np.array(values, dtype=float)) == [float.__repr__(v) for v in values]
    assert float_reprs(np.array(values, dtype=np.float32)) == [
        float.__repr__(v) for v in np.array(values, dtype=np.float32).tolist()]
