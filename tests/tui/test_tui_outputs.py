"""The UI's fleet kept compact (issue 14 item 3, memory): outputs as columns read back as
exactly the values of the dicts they replace, a fleet read page by page equal to one read at
once, repeated input values shared without changing any, and the sort on gathered columns in
exactly the order of the row-by-row rule. No timing or memory figure is asserted
(benchmarks/bench_tui.py measures them)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from planner.core.errors import ValidationError
from planner.service import Workspace
from planner.spec.domain import Scenario
from planner.tui.sheet import ScenarioSheet
from planner.tui.state import rows
from planner.tui.state.output_store import OutputRow, OutputStore


def same(a: Any, b: Any) -> bool:
    """Equal values of the same type (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def paged(ws: Workspace, page_rows: int) -> tuple[list[Scenario], OutputStore]:
    """The demo fleet read as the sheet reads it, ``page_rows`` scenarios a page."""
    sheet = ScenarioSheet.__new__(ScenarioSheet)  # only the reading, no widget
    sheet.PAGE_ROWS = page_rows
    return sheet._read_pages(ws, "demo")


@pytest.mark.parametrize("page_rows", [3, 16_384])
@pytest.mark.slow
def test_output_columns_read_back_as_the_evaluated_dicts(page_rows: int) -> None:
    """Every scenario of the demo fleet (inference and training), read in pages of 3 (several
    blocks per kind) or in one: its outputs have the keys, in the order, and the values with
    the types (int, float, bool, text, None) that ``evaluate_many`` gives as dicts, constant
    columns included."""
    with Workspace.open() as ws:
        whole = ws.scenarios("demo")
        expected = ws.evaluate_many(whole)
        scenarios, store = paged(ws, page_rows)
    assert [s.name for s in scenarios] == [s.name for s in whole]
    assert scenarios == whole  # shared values change no input
    assert {s.kind for s in scenarios} == {"inference", "training"}
    pages = [whole[i:i + page_rows] for i in range(0, len(whole), page_rows)]
    assert len(store.blocks) == sum(len({s.kind for s in p}) for p in pages)  # page × kind
    assert len(store.blocks) > (2 if page_rows == 3 else 1)
    assert len(store) == len(whole) and set(store) == {s.id for s in whole}
    # constant columns are kept as one broadcast value (no memory a row), the rest as arrays
    strides = [c.strides for b in store.blocks if len(b) > 1 for c in b.columns.values()]
    assert (0,) in strides and any(s != (0,) for s in strides)
    for sc, outputs in zip(whole, expected, strict=True):
        row = store[sc.id]
        assert isinstance(row, OutputRow)
        assert list(row) == list(outputs) and len(row) == len(outputs)
        bad = {k: (row[k], v) for k, v in outputs.items() if not same(row[k], v)}
        assert bad == {}, sc.name
    with pytest.raises(KeyError):
        store[10**9]
    with pytest.raises(KeyError):
        store[whole[0].id]["no_such_output"]


def test_rows_stored_later_and_deleted_and_gathered_columns() -> None:
    """A row stored later (an edit's dict) shadows its column row, a deleted id is gone, and
    ``gather`` reads a column over any ids in any order as each row's value."""
    with Workspace.open() as ws:
        scenarios, store = paged(ws, 4)
    ids = [s.id for s in scenarios]
    edited, deleted = ids[1], ids[2]
    store[edited] = {**store[edited], "ttft_s": 12.5}
    del store[deleted]
    assert store[edited]["ttft_s"] == 12.5 and deleted not in store
    assert len(store) == len(ids) - 1 and sorted(store) == sorted(set(ids) - {deleted})
    asked = np.array([deleted, *ids[::-1], 10**6], dtype=np.int64)
    for key in ("ttft_s", "fits", "max_concurrent_sequences", "train_time_s",
                "calibration_profile", "ttft_bound", "compute_dtype", "gpu_memory_bytes"):
        got = store.gather(key, asked)
        want = [store[i].get(key) if i in store else None for i in asked.tolist()]
        assert len(got) == len(want) and all(same(g, w) for g, w in zip(got, want,
                                                                        strict=True)), key
    assert store.gather("ttft_s", asked)[asked.tolist().index(edited)] == 12.5
    with pytest.raises(KeyError):
        del store[deleted]


def test_the_sort_on_gathered_columns_is_the_row_rule() -> None:
    """Sorting by an output through the store's columns gives the order of the row-by-row
    rule over plain dicts, ties (repeated flags and counts) in name order, ascending and
    descending."""
    with Workspace.open() as ws:
        base, store = paged(ws, 5)
    inference = [s for s in base if s.kind == "inference"]
    # ties: copies of every row under other names (same outputs), more than the demo's own
    scenarios = {s.id: s for s in base}
    next_id = max(scenarios) + 1
    for copy in range(3):
        for sc in inference:
            twin = replace(sc, id=next_id, name=f"{sc.name}-copy{copy}")
            scenarios[twin.id] = twin
            store[twin.id] = dict(store[sc.id])
            next_id += 1
    dicts = {i: dict(store[i]) for i in scenarios}
    index = rows.KindIndex([s for s in scenarios.values() if s.kind == "inference"])
    for key in ("fits", "gpus_needed", "ttft_s", "cost_usd_per_month", "ttft_bound",
                "calibration_profile", "batch", "name", "no_such_output"):
        for descending in (False, True):
            got = index.visible("", (key, descending), scenarios, store).tolist()
            assert got == rows.visible(scenarios, dicts, "inference", "",
                                       (key, descending)), (key, descending)
            index._sort = None  # the next through the dicts, not the cache
            assert index.visible("", (key, descending), scenarios, dicts).tolist() == got


def test_shared_values_are_one_object_of_the_same_type_and_text() -> None:
    """Equal input values become one object, across calls with the same ``seen``; 1, 1.0 and
    True stay apart (equal in Python, shown differently), and so do 0.0 and -0.0."""
    def scenario(i: int, **inputs: Any) -> Scenario:
        return Scenario(id=i, fleet="f", name=f"s{i}", kind="inference", model="m", gpu="g",
                        inputs=inputs, lora_targets="q,v", notes="", version=1)

    a = scenario(1, x=float("1.5"), d="".join(["bf", "16"]), n=0.0, k=1)
    b = scenario(2, x=float("1.5"), d="".join(["bf", "16"]), n=-0.0, k=1.0)
    c = scenario(3, x=float("1.5"), d="bf16", n=0.0, k=True)
    assert a.inputs["x"] is not b.inputs["x"] and a.inputs["d"] is not b.inputs["d"]
    seen: dict[str, dict[Any, Any]] = {}
    rows.share_values([a, b], seen)
    rows.share_values([c], seen)
    assert a.inputs["x"] is b.inputs["x"] is c.inputs["x"]
    assert a.inputs["d"] is b.inputs["d"] is c.inputs["d"]
    assert [repr(s.inputs["n"]) for s in (a, b, c)] == ["0.0", "-0.0", "0.0"]
    assert [type(s.inputs["k"]) for s in (a, b, c)] == [int, float, bool]


def test_a_fleet_read_a_page_at_a_time() -> None:
    """``after`` reads the scenarios named after a name: the pages, joined, are the fleet in
    name order; ``after`` without a fleet is refused with the field named."""
    with Workspace.open() as ws:
        whole = ws.scenarios("demo")
        pages, after = [], None
        while True:
            page = ws.scenarios("demo", limit=3, after=after)
            pages.append(page)
            if len(page) < 3:
                break
            after = page[-1].name
        assert [len(p) for p in pages] == [3, 3, 3, 1]
        assert [s.name for p in pages for s in p] == [s.name for s in whole]
        assert ws.scenarios("demo", after=whole[-1].name) == []
        with pytest.raises(ValidationError, match="after"):
            ws.scenarios(None, after="a")


def test_the_polled_stamp_moves_with_every_write_and_only_then() -> None:
    """The fingerprint a view polls stays while nothing is written, and moves with an edit,
    a new row, a deleted one, an undo and a redo (the poll then reads the versions)."""
    with Workspace.open() as ws:
        stamps = [ws.scenario_stamp("demo")]

        def moved() -> bool:
            stamps.append(ws.scenario_stamp("demo"))
            return stamps[-1] != stamps[-2]

        assert not moved()
        ws.set_scenario("demo", "llama3-8b-24gib-6x8k", {"batch": 5})
        assert moved()
        ws.new_scenario("demo", "zz-polled", model="llama-3-8b", gpu="h100-sxm")
        assert moved()
        ws.delete_scenario("demo", "zz-polled")
        assert moved()
        assert ws.undo("demo") is not None and moved()
        assert ws.redo("demo") is not None and moved()
        assert not moved()
        assert stamps[0][0] == len(ws.scenarios("demo")) == stamps[-1][0]
