"""The compiled one-row function (:mod:`planner.compute.rowfn`) against the vectorized numpy path.

Every column of every row is compared bit for bit (the same float64 bits, NaN equal to NaN, the
same texts and truth values; no tolerance): over the seeded demo fleet, and over a few hundred
random valid scenarios of every catalog model on many catalog GPUs with random values of every
input column, boundaries included, evaluated once through :func:`evaluate_row` each and once as
one table through :func:`evaluate_table`."""

from __future__ import annotations

import math
import random
import re
import warnings
from typing import Any

import numpy as np
import pytest

from planner.compute import rowfn
from planner.compute.inputs import TRAINING_DEFAULT_OVERRIDES, InputColumn
from planner.compute.table import (
    build_columns,
    evaluate_row,
    evaluate_table,
    graph,
    inputs_of,
    interpret_row,
    row_function,
    row_inputs,
)
from planner.core.errors import PlannerError, ValidationError
from planner.formulas import ops
from planner.service import Workspace
from planner.spec import catalog

GPUS = ("a100-80gb", "h100-sxm", "h200", "b200", "l40s", "l4", "t4", "mi300x", "gaudi3",
        "tpu-v5e")


def _same(a: Any, b: Any) -> bool:
    """Bit-identical: equal texts or truth values, or floats with the same bits (NaN is NaN)."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return type(a) in (bool, np.bool_) and type(b) in (bool, np.bool_) and bool(a) == bool(b)
    fa, fb = float(a), float(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return fa.hex() == fb.hex()


def _random_value(column: InputColumn, rng: random.Random) -> Any:
    """A valid value of ``column``: a choice, a truth value, or a number between its bounds
    (often a bound itself), spread over orders of magnitude."""
    if column.kind == "choice":
        return rng.choice(column.choices)
    if column.kind == "bool":
        return rng.random() < 0.5
    if column.kind == "text":
        return "auto"
    low = float(column.minimum if column.minimum is not None else 0.0)
    high = float(column.maximum if column.maximum is not None else 1e6)
    high = min(high, max(low, 1.0) * 1e5)
    pick = rng.random()
    if pick < 0.1 and not column.above_minimum:
        value = low
    elif pick < 0.2:
        value = high
    elif low > 0:
        value = math.exp(rng.uniform(math.log(low), math.log(high)))
    else:
        value = rng.uniform(low, high) * rng.choice((1.0, 1e-3, 1e-6))
    if column.kind == "int":
        value = float(min(max(round(value), math.ceil(low)), math.floor(high)))
        if column.above_minimum and value <= low:
            value = low + 1
    elif column.above_minimum and value <= low:
        value = low + (high - low) / 2
    return int(value) if column.kind == "int" else value


def _random_rows(kind: str, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` random scenarios of ``kind`` that validate (others are drawn again)."""
    rng = random.Random(seed)
    models = {name: catalog.resolve_model_spec(name) for name in catalog.model_names()}
    gpus = {name: catalog.resolve_gpu(name) for name in GPUS}
    rows: list[dict[str, Any]] = []
    tries = 0
    while len(rows) < count:
        tries += 1
        assert tries < count * 50, "too few random rows validate"
        model = rng.choice(sorted(models))
        spec = models[model]
        row: dict[str, Any] = {"model": model, "gpu": rng.choice(GPUS)}
        for column in inputs_of(kind):
            if column.name != "calibration" and rng.random() < 0.35:
                row[column.name] = _random_value(column, rng)
        heads = spec.attention.num_heads
        tp = rng.choice([t for t in (1, 2, 4, 8) if heads % t == 0])
        pp = rng.choice((1, 1, 2))
        row.update(tp=tp, pp=pp, gpus=tp * pp * rng.choice((1, 1, 2, 3)))
        if kind == "training":
            row["lora_targets"] = rng.choice(("q,v", "all", "q,k,v,o"))
        try:
            evaluate_row(row, models, gpus, kind)
        except (ValidationError, PlannerError):
            continue
        rows.append(row)
    return rows


def _table(kind: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The rows as one table: a column per name, a row's absent inputs at their defaults."""
    defaults = {c.name: c.default for c in inputs_of(kind)}
    if kind == "training":
        defaults.update(TRAINING_DEFAULT_OVERRIDES)
    names = sorted({k for r in rows for k in r})
    return {name: np.array([r.get(name, defaults.get(name, "q,v")) for r in rows],
                           dtype=object)
            for name in names}


def _power_dependent(kind: str) -> set[str]:
    """The columns computed from a power (``ops.power``), directly or through others."""
    g = graph(kind)
    uses_power = set()
    for name in g.order:
        stack = [g.formula(name)(*(rowfn._Trace("col", (d,)) for d in g.deps[name]))]
        while stack:
            node = stack.pop()
            if isinstance(node, rowfn._Trace):
                if node.op == "**":
                    uses_power.add(name)
                stack.extend(a for a in node.args if isinstance(a, rowfn._Trace))
    dependent: set[str] = set()
    for name in g.order:  # dependency order: a column's inputs are settled before it
        if name in uses_power or any(d in dependent for d in g.deps[name]):
            dependent.add(name)
    return dependent


@pytest.mark.parametrize(("kind", "count"), [
    pytest.param("inference", 300, marks=pytest.mark.slow), ("training", 120)])
def test_random_rows_are_bit_identical_to_the_vectorized_path(kind: str, count: int) -> None:
    """Each random row: every column bit for bit equal to the vectorized path on that row
    (a one-row table). Against all rows evaluated as one table, every column is bit for bit
    equal too, except those computed from a power: numpy's ``power`` takes its SIMD loop where
    base and exponent are both per-row arrays and the C library's ``pow`` where one is
    constant over the table, which differ by an ulp for some values, so the vectorized path
    itself gives such a row different last bits in different tables. Those are compared within
    1e-12 relative (cancellation in ``1 - p`` amplifies the ulp)."""
    rows = _random_rows(kind, count, seed=14)
    models = {name: catalog.resolve_model_spec(name) for name in catalog.model_names()}
    gpus = {name: catalog.resolve_gpu(name) for name in GPUS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        table = evaluate_table(_table(kind, rows), models, gpus, kind)
        alone = [evaluate_table(_table(kind, [row]), models, gpus, kind) for row in rows]
    columns = [*graph(kind).order, *(c.name for c in inputs_of(kind))]
    assert len(columns) > (150 if kind == "inference" else 50)
    powered = _power_dependent(kind)
    assert (len(powered) > 10) == (kind == "inference")
    seen_models, fits, off_by_ulps = set(), set(), 0
    for i, row in enumerate(rows):
        one = evaluate_row(row, models, gpus, kind)
        cols = row_inputs(row, models, gpus, kind)
        derived, outputs = interpret_row(kind, cols)
        interpreted = {**cols, **derived, **outputs}
        seen_models.add(row["model"])
        for name in columns:
            assert _same(one[name], interpreted[name]), (i, row, name)
            assert _same(one[name], alone[i][name][0]), (i, row, name, one[name],
                                                         alone[i][name][0])
            if name not in powered or _same(one[name], table[name][i]):
                assert _same(one[name], table[name][i]), (i, row, name)
            else:
                off_by_ulps += 1
                assert one[name] == pytest.approx(float(table[name][i]), rel=1e-12, abs=0)
        fits.add(one["fits" if kind == "inference" else "train_fits"])
    assert seen_models == set(catalog.model_names())
    assert off_by_ulps <= len(rows) * len(powered) // 20
    assert fits == {True, False}  # the random rows reach both sides of the memory fit
    if kind == "inference":
        assert {r.get("engine", "roofline") for r in rows} == set(
            next(c for c in inputs_of(kind) if c.name == "engine").choices)


def test_demo_fleet_rows_are_bit_identical_to_the_fleet_evaluation() -> None:
    with Workspace.open() as ws:
        scenarios = ws.scenarios()
        outputs = ws.evaluate_many(scenarios)
        models, gpus = ws._evaluation.catalog_specs()
        assert len(scenarios) >= 5
        for scenario, fleet in zip(scenarios, outputs, strict=True):
            known = {c.name for c in inputs_of(scenario.kind)}
            table = {"model": scenario.model, "gpu": scenario.gpu,
                     **{k: v for k, v in scenario.inputs.items() if k in known}}
            if scenario.kind == "training":
                table["lora_targets"] = scenario.lora_targets
            one = evaluate_row(table, models, gpus, scenario.kind,
                               profiles=ws._evaluation.profiles())
            for name in graph(scenario.kind).outputs:
                assert _same(one[name], fleet[name]), (scenario.name, name)


@pytest.mark.parametrize("kind", ["inference", "training"])
def test_every_formula_is_compiled_inline(kind: str) -> None:
    """No formula falls back to being called, and every where/minimum/maximum has a known
    type (written inline, not as a call to the operator)."""
    texts = frozenset(c.name for c in inputs_of(kind) if c.kind in ("choice", "text"))
    source, namespace = rowfn.row_source(graph(kind), texts)
    assert not [name for name in namespace if name.startswith("_f") and name[2:].isdigit()]
    for call in ("_where(", "_minimum(", "_maximum("):
        assert call not in source
    # a formula with a Repeats shortcut is written in a branch: ``v = earlier`` or computed
    assigned = set(re.findall(r"\n +(v\d+) = ", source))
    assert len(assigned) == len(graph(kind).order) + source.count(" = c[")  # and the inputs


def test_one_row_inputs_are_floats_and_texts_as_the_function_expects() -> None:
    spec, gpu = catalog.resolve_model_spec("llama-3-8b"), catalog.resolve_gpu("h100-sxm")
    cols = row_inputs({"model": spec.name, "gpu": gpu.name, "batch": "8", "engine": "VLLM"},
                      {spec.name: spec}, {gpu.name: gpu})
    texts = {c.name for c in inputs_of("inference") if c.kind in ("choice", "text")}
    for name in graph("inference").required_inputs():
        assert type(cols[name]) is (str if name in texts else float), name
    assert cols["batch"] == 8.0 and cols["engine"] == "vllm"
    assert cols["model_layers"] == 32.0 and cols["gpu_memory_bytes"] == 80 * 2**30


@pytest.mark.parametrize(("given", "kind"), [
    ({"batch": 0}, "inference"),
    ({"tp": 3}, "inference"),
    ({"pp": 64}, "inference"),
    ({"gpus": 3, "tp": 2}, "inference"),
    ({"weight_dtype": "int2"}, "inference"),
    ({"model": "no-such-model"}, "inference"),
    ({"gpu": "no-such-gpu"}, "inference"),
    ({"calibration": "no-such-profile"}, "inference"),
    ({"lora_rank": 8, "lora_targets": "nothing"}, "training"),
    ({"zero_stage": 5}, "training"),
])
def test_one_row_errors_are_those_of_the_table_path(given: dict[str, Any], kind: str) -> None:
    spec, gpu = catalog.resolve_model_spec("llama-3-8b"), catalog.resolve_gpu("h100-sxm")
    table = {"model": spec.name, "gpu": gpu.name, **given}
    models, gpus = {spec.name: spec}, {gpu.name: gpu}
    with pytest.raises(PlannerError) as slow:
        build_columns(table, models, gpus, kind, labels=[None], profiles=[])
    with pytest.raises(PlannerError) as fast:
        row_inputs(table, models, gpus, kind, profiles=[])
    assert type(fast.value) is type(slow.value)
    assert str(fast.value) == str(slow.value)


SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -2.5, 1e-300, 1e300, math.inf, -math.inf,
           math.nan]


def test_power_is_numpys_power_for_every_special_and_random_pair() -> None:
    rng = random.Random(5)
    bases = SPECIAL + [rng.uniform(-5, 5) for _ in range(200)]
    exponents = [0, 1, 2, True, *SPECIAL, 10.99, *(rng.uniform(-40, 40) for _ in range(20))]
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # _power raises no numpy warning...
        for base in bases:
            for exponent in exponents:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # ...ops.power none shown
                    expected = ops.power(base, exponent)
                assert _same(rowfn._power(base, exponent), expected), (base, exponent)
                checked += 1
    assert checked == len(bases) * len(exponents)


def test_division_by_zero_is_numpys() -> None:
    for num in SPECIAL:
        for den in (0.0, -0.0):
            with np.errstate(divide="ignore", invalid="ignore"):
                expected = float(np.float64(num) / np.float64(den))
            assert _same(rowfn._zero_div(num, den), expected), (num, den)


def test_the_row_function_is_built_once_per_kind_on_its_second_row(monkeypatch: Any) -> None:
    from planner.compute import one_row as table

    monkeypatch.setattr(table, "_row_functions", {})
    monkeypatch.setattr(table, "_rows_interpreted", set())
    spec, gpu = catalog.resolve_model_spec("llama-3-8b"), catalog.resolve_gpu("h100-sxm")
    row = {"model": spec.name, "gpu": gpu.name, "batch": 6}
    first = evaluate_row(row, {spec.name: spec}, {gpu.name: gpu})
    assert table._row_functions == {}  # one scenario: interpreted, nothing compiled
    second = evaluate_row(row, {spec.name: spec}, {gpu.name: gpu})
    assert list(table._row_functions) == ["inference"]
    assert all(_same(first[k], second[k]) for k in graph("inference").order)
    assert first["kv_bytes_per_token"] == 131_072
    assert row_function("inference") is row_function("inference")
    assert row_function("training") is not row_function("inference")
