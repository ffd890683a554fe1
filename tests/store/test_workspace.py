"""The fleet database through the Workspace API, on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planner.core.errors import ConfigError, NotFoundError, PlannerError, ValidationError
from planner.core.units import GiB
from planner.service import Workspace
from planner.spec.domain import ConflictError, DuplicateError, InUseError
from planner.store.schema import Base
from tests.store_fixtures import dump

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws_url(db_url: str) -> str:
    """These workspace tests run on each backend."""
    return db_url


@pytest.mark.empty_database
@pytest.mark.slow
def test_first_open_creates_and_seeds(ws: Workspace) -> None:
    report = ws.open_report
    assert report is not None and report.revision_before is None and report.seeded is not None
    assert {k: len(v) for k, v in report.seeded.added.items()} == {
        "model": 7, "gpu": 27, "fleet": 1, "scenario": 10,
        "horizon": 1, "demand": 3, "price": 5}  # the demo plan: seeds/plans.toml
    assert [m.name for m in ws.models()][:3] == ["deepseek-v3", "llama-2-7b", "llama-3-70b"]
    assert ws.model("LLAMA-3-8B").params_total == 8_030_261_248


def test_demo_fleet_reproduces_the_worked_examples(ws: Workspace) -> None:
    results = {sc.name: out for sc, out in zip(ws.scenarios("demo"),
                                               ws.evaluate_many(ws.scenarios("demo")),
                                               strict=True)}
    six = results["llama3-8b-24gib-6x8k"]
    assert six["max_concurrent_sequences"] == 6 and six["fits"] is True
    assert round(six["kv_budget_bytes"] / GiB, 4) == 6.0425
    qwen = results["qwen2.5-32b-prefill-article-000"]
    assert round(qwen["prefill_flops"] / 1e12, 2) == 65.28 and round(qwen["ttft_s"] * 1e3) == 209
    request = results["llama3-8b-request-1024+128"]
    assert round(request["request_flops"] / 1e12, 2) == 16.55
    assert results["llama2-7b-lora-r8-qv"]["trainable_params"] == 4_194_304


def test_seeding_is_idempotent(ws: Workspace, db_url: str) -> None:
    before = dump(db_url)
    report = ws.seed()
    assert report.total_added == 0 and not report.refreshed
    assert dump(db_url) == before


def test_reseed_adds_new_refreshes_untouched_and_keeps_edits(
        ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seeds = tmp_path / "seeds"
    shutil.copytree(ROOT / "seeds", seeds)
    gpus = (seeds / "gpus.toml").read_text()
    h100 = "price_is_example = true\nsource = \"NVIDIA H100 Tensor Core GPU datasheet " \
           "(h100-datasheet-2430615), SXM"
    gpus = gpus.replace("price_usd_per_hour = 2.50\n" + h100, "price_usd_per_hour = 2.75\n" + h100)
    gpus = gpus.replace("price_usd_per_hour = 0.50", "price_usd_per_hour = 0.55")
    gpus += ('\n[new-accelerator]\nvendor = "X"\nlabel = "X1"\nmemory_gib = 96\n'
             'bf16_tflops = 500\nmemory_bandwidth_gb_per_s = 4000\nprice_usd_per_hour = 3.0\n')
    (seeds / "gpus.toml").write_text(gpus)
    assert tomllib.loads(gpus)["h100-sxm"]["price_usd_per_hour"] == 2.75
    ws.set_gpu("l4", {"price_usd_per_hour": 0.42})  # the user's own price
    ws.delete_model("mistral-7b")                    # and a deleted catalog model
    monkeypatch.setenv("PLANNER_SEEDS_DIR", str(seeds))
    from planner.spec import catalog
    catalog.model_sources.cache_clear()
    report = ws.seed()
    assert report.added == {"gpu": ["new-accelerator"]}
    assert report.refreshed == {"gpu": ["h100-sxm"]}
    assert set(report.kept["gpu"]) == {"l4"} and report.kept["model"] == ["mistral-7b"]
    assert ws.gpu("h100-sxm").spec.price_usd_per_hour == 2.75
    assert ws.gpu("l4").spec.price_usd_per_hour == 0.42
    with pytest.raises(NotFoundError):
        ws.model("mistral-7b")
    assert ws.seed().total_added == 0


def _no_orm(value: Any) -> None:
    assert not isinstance(value, Base), type(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _no_orm(getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _no_orm(v)
    elif isinstance(value, dict):
        for v in value.values():
            _no_orm(v)


def test_api_returns_domain_objects_never_rows(ws: Workspace) -> None:
    sc = ws.scenarios("demo")[0]
    for value in (ws.models(), ws.gpus(), ws.fleets(), ws.scenarios(), sc,
                  ws.model("llama-3-8b"), ws.gpu("h100-sxm"), ws.fleet("demo"),
                  ws.history(sc.fleet, sc.name), ws.evaluate(sc)):
        _no_orm(value)


def test_scenario_lifecycle_and_change_log(ws: Workspace) -> None:
    ws.new_fleet("prod-2027", "next year")
    sc = ws.new_scenario("prod-2027", "chat", model="llama-3-8b", gpu="h100-sxm", batch=16,
                         prompt_tokens=2048)
    assert (sc.version, sc.inputs["batch"], sc.inputs["output_tokens"]) == (1, 16, 128)
    sc = ws.set_scenario("prod-2027", "chat", {"batch": "32", "gpu": "h200"})
    assert (sc.version, sc.inputs["batch"], sc.gpu) == (2, 32, "h200")
    history = ws.history("prod-2027", "chat")
    assert sorted((c.field, c.old_value, c.new_value) for c in history) == [
        ("batch", 16, 32), ("gpu", "h100-sxm", "h200")]
    assert len({c.change_set for c in history}) == 1
    copy = ws.copy_scenario("prod-2027", "chat", "chat-fp8")
    ws.set_scenario("prod-2027", "chat-fp8", {"weight_dtype": "fp8"})
    assert ws.scenario("prod-2027", "chat").inputs["weight_dtype"] == "auto"
    assert copy.inputs["batch"] == 32
    what_if = ws.copy_fleet("prod-2027", "what-if: H200 migration")
    assert what_if.scenario_count == 2
    ws.delete_scenario("prod-2027", "chat-fp8")
    assert [s.name for s in ws.scenarios("prod-2027")] == ["chat"]
    assert ws.delete_fleet("what-if: H200 migration") == 2


def test_gpu_price_edit_flows_into_scenarios(ws: Workspace) -> None:
    sc = ws.scenario("demo", "llama3-8b-request-1024+128")
    before = ws.evaluate(sc)["cost_usd_per_hour"]
    gpu = ws.set_gpu("h100-sxm", {"price_usd_per_hour": "4"})
    assert gpu.spec.price_is_example is False
    assert (before, ws.evaluate(sc)["cost_usd_per_hour"]) == (2.5, 4.0)


def test_delete_in_use_is_refused_with_the_users(ws: Workspace) -> None:
    with pytest.raises(InUseError) as err:
        ws.delete_model("llama-3-8b")
    assert err.value.users == ["demo/llama3-8b-24gib-6x8k", "demo/llama3-8b-request-1024+128"]
    with pytest.raises(InUseError, match="demo/mixtral-8x7b-2xh100-tp2"):
        ws.delete_gpu("h100-sxm")
    ws.delete_gpu("t4")  # unused: fine
    with pytest.raises(NotFoundError):
        ws.gpu("t4")


def test_stale_edit_is_refused_and_nothing_overwritten(ws: Workspace) -> None:
    sc = ws.scenario("demo", "llama3-8b-24gib-6x8k")
    ws.set_scenario("demo", sc.name, {"batch": 5, "notes": "first"}, expected_version=sc.version)
    with pytest.raises(ConflictError) as err:
        ws.set_scenario("demo", sc.name, {"batch": 4}, expected_version=sc.version)
    assert err.value.changed == {"batch": 5, "notes": "first"}
    assert (err.value.expected_version, err.value.current_version) == (1, 2)
    assert "changed by someone else" in str(err.value)
    assert ws.scenario("demo", sc.name).inputs["batch"] == 5
    assert len(ws.history("demo", sc.name)) == 2


FAILURES: list[tuple[str, Callable[[Workspace], Any], type[Exception], str]] = [
    ("bad value", lambda w: w.set_scenario("demo", "llama3-8b-24gib-6x8k",
                                           {"batch": 7, "mfu": "2"}),
     ValidationError, "mfu: must be a number above 0 and at most 1"),
    ("unknown field", lambda w: w.set_scenario("demo", "llama3-8b-24gib-6x8k", {"bacth": 7}),
     ValidationError, "bacth: is not a scenario field"),
    ("cross-field", lambda w: w.set_scenario("demo", "llama3-8b-24gib-6x8k", {"tp": 2}),
     ValidationError, "gpus: must be a multiple of tp*pp = 2"),
    ("unknown model", lambda w: w.new_scenario("demo", "x", model="gpt-5", gpu="h100-sxm"),
     NotFoundError, "unknown model 'gpt-5'"),
    ("unknown GPU", lambda w: w.set_scenario("demo", "llama3-8b-24gib-6x8k", {"gpu": "h900"}),
     NotFoundError, "unknown GPU 'h900'"),
    ("duplicate scenario", lambda w: w.new_scenario("demo", "llama3-8b-24gib-6x8k",
                                                   model="llama-3-8b", gpu="l4"),
     DuplicateError, "already has a scenario named"),
    ("duplicate rename", lambda w: w.set_scenario("demo", "llama3-8b-24gib-6x8k",
                                                 {"name": "llama3-8b-request-1024+128"}),
     DuplicateError, "already has a scenario named"),
    ("duplicate fleet", lambda w: w.new_fleet("demo"), DuplicateError, "already exists"),
    ("duplicate model", lambda w: w.import_model({"model_type": "llama"}, "llama-3-8b"),
     DuplicateError, "already exists"),
    ("bad config", lambda w: w.import_models([
        ("ok-model", json.loads((ROOT / "seeds/models/llama-2-7b.json").read_text()), "x"),
        ("broken", {"model_type": "llama", "hidden_size": 64}, "x")]),
     ConfigError, "broken: config key 'num_hidden_layers' is required"),
    ("bad gpu figure", lambda w: w.set_gpu("h100-sxm", {"memory_gib": "-80"}),
     ValidationError, "memory_gib: must be a number above 0 and at most 1e+06"),
    ("gpu without throughput", lambda w: w.add_gpu("x", {"memory_gib": 8,
                                                         "memory_bandwidth_gb_per_s": 100}),
     ValidationError, "must be a number above 0"),
    ("empty name", lambda w: w.new_fleet("  "), ValidationError, "fleet: must be 1 to 200"),
]


@pytest.mark.parametrize(("label", "action", "error", "message"), FAILURES,
                         ids=[f[0] for f in FAILURES])
@pytest.mark.slow
def test_failed_command_changes_nothing(ws: Workspace, db_url: str, label: str,
                                        action: Callable[[Workspace], Any],
                                        error: type[Exception], message: str) -> None:
    before = dump(db_url)
    with pytest.raises(error) as err:
        action(ws)
    assert isinstance(err.value, PlannerError)
    assert message in str(err.value), str(err.value)
    assert dump(db_url) == before


def test_database_enforces_checks_itself(ws: Workspace, db_url: str) -> None:
    """Constraints live in the database, not only in Python."""
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError), ws.engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET batch = 0"))
    with pytest.raises(IntegrityError), ws.engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET tp = 3 WHERE gpus = 2"))
    with pytest.raises(IntegrityError), ws.engine.begin() as conn:
        conn.execute(text("DELETE FROM gpus WHERE name = 'h100-sxm'"))


def test_config_json_is_kept_verbatim(ws: Workspace) -> None:
    from sqlalchemy import select

    from planner.store.engine import read_session
    from planner.store.schema import ModelRow

    text = (ROOT / "seeds/models/qwen2.5-32b-instruct.json").read_text()
    with read_session(ws.engine) as s:
        stored = s.scalar(select(ModelRow.config_json).where(ModelRow.name ==
                                                             "qwen2.5-32b-instruct"))
    assert stored == text
    odd = '{"model_type": "llama", "hidden_size": 64,   "num_hidden_layers": 2,\n' \
          ' "num_attention_heads": 8, "intermediate_size": 96, "vocab_size": 100}'
    ws.import_model(odd, "odd-spacing")
    with read_session(ws.engine) as s:
        assert s.scalar(select(ModelRow.config_json).where(ModelRow.name == "odd-spacing")) == odd


def test_undo_redo_survive_reopen(ws: Workspace, db_url: str) -> None:
    name = "llama3-8b-24gib-6x8k"
    ws.set_scenario("demo", name, {"batch": 7})
    ws.set_scenario("demo", name, {"gpu": "l4", "notes": "moved"})
    assert ws.undo("demo")[0].field in ("gpu", "notes")
    sc = ws.scenario("demo", name)
    assert (sc.gpu, sc.notes, sc.inputs["batch"]) == ("rtx-4090", ws.scenario(
        "demo", name).notes, 7)
    with Workspace.open(db_url) as again:        # the history lives in the database
        assert [c.field for c in again.undo("demo")] == ["batch"]
        assert again.scenario("demo", name).inputs["batch"] == 6
        assert again.undo("demo") is None
        assert [c.field for c in again.redo("demo")] == ["batch"]
        assert again.scenario("demo", name).inputs["batch"] == 7
    redone = ws.redo("demo")
    assert {c.field for c in redone} == {"gpu", "notes"}
    assert ws.scenario("demo", name).gpu == "l4"
    assert ws.redo("demo") is None
    ws.undo("demo")
    ws.set_scenario("demo", name, {"batch": 2})   # a new edit ends the redo history
    assert ws.redo("demo") is None
    # the history is shared: an undo reverts the fleet's latest edit, whoever made it
    other = "llama3-8b-request-1024+128"
    ws.set_scenario("demo", other, {"batch": 9})
    assert [(c.field, c.new_value) for c in ws.undo("demo")] == [("batch", 9)]
    assert ws.scenario("demo", other).inputs["batch"] == 1
    # a scenario changed outside the log is not reverted blindly; nothing changes
    from sqlalchemy import text

    from tests.store_fixtures import dump as snapshot

    ws.set_scenario("demo", other, {"batch": 4})
    with ws.engine.begin() as conn:
        conn.execute(text("UPDATE scenarios SET batch = 5, version = version + 1 "
                          f"WHERE name = '{other}'"))
    state = snapshot(db_url)
    with pytest.raises(ConflictError):
        ws.undo("demo")
    assert snapshot(db_url) == state
