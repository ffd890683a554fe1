"""The service layer's own promises: a save returns the evaluated row, evaluation parses each
catalog row once per version, and flags follow the input columns' rule. On SQLite and
PostgreSQL."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from planner import service
from planner.core.errors import PlannerError, ValidationError
from planner.service import Workspace
from planner.spec.domain import SavedScenario

SIX = "llama3-8b-24gib-6x8k"


@pytest.fixture
def ws_url(db_url: str) -> str:
    """These workspace tests run on each backend."""
    return db_url


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the model configs parsed into specs by the spec cache."""
    import planner.service.specs as specs

    seen: list[str] = []
    real = specs.spec_from_config

    def counting(config: dict[str, Any], name: str) -> Any:
        seen.append(name)
        return real(config, name)

    monkeypatch.setattr(specs, "spec_from_config", counting)
    return seen


def test_workspace_is_the_service_facade() -> None:
    assert service.Workspace is Workspace
    assert service.SavedScenario is SavedScenario
    with pytest.raises(AttributeError):
        _ = service.no_such_name


def test_save_returns_the_evaluated_row_with_one_evaluation(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import planner.compute.fleet

    calls: list[int] = []
    real = planner.compute.fleet.evaluate_scenarios

    def counting(scenarios: list[Any], *args: Any) -> Any:
        calls.append(len(scenarios))
        return real(scenarios, *args)

    monkeypatch.setattr(planner.compute.fleet, "evaluate_scenarios", counting)
    before = ws.scenario("demo", SIX)
    saved = ws.save_scenario("demo", SIX, {"batch": 2}, expected_version=before.version)
    assert calls == [1]
    fresh = ws.scenario("demo", SIX)
    assert dataclasses.replace(saved.scenario, updated_at=None) == dataclasses.replace(
        fresh, updated_at=None)  # SQLite reads the time back without its zone
    assert saved.scenario.inputs["batch"] == 2 and saved.scenario.version == before.version + 1
    assert saved.outputs == ws.evaluate(saved.scenario)
    assert [c.field for c in ws.history("demo", SIX)] == ["batch"]


def test_save_of_a_stale_row_is_refused_before_evaluating(ws: Workspace) -> None:
    from planner.spec.domain import ConflictError

    sc = ws.scenario("demo", SIX)
    ws.set_scenario("demo", SIX, {"batch": 3})
    with pytest.raises(ConflictError):
        ws.save_scenario("demo", SIX, {"batch": 4}, expected_version=sc.version)
    assert ws.scenario("demo", SIX).inputs["batch"] == 3


def test_saves_and_evaluations_do_not_reparse_the_catalog(ws: Workspace,
                                                          parses: list[str]) -> None:
    scenarios = ws.scenarios("demo")
    first = ws.evaluate_many(scenarios)
    assert len(parses) == len(set(parses))  # each at most once (seeding parsed some already)
    parses.clear()
    for batch in (2, 3, 4):
        saved = ws.save_scenario("demo", SIX, {"batch": batch})
        assert saved.outputs == ws.evaluate(saved.scenario)
    assert ws.evaluate_many(scenarios) == first
    assert parses == []
    ws.set_model_notes("llama-3-8b", "edited")  # a catalog write: that model only, once
    ws.evaluate_many(scenarios)
    ws.evaluate_many(scenarios)
    assert parses == ["llama-3-8b"]


def test_catalog_edits_reach_the_next_evaluation(ws: Workspace, db_url: str) -> None:
    sc = ws.scenario("demo", SIX)
    cost = ws.evaluate(sc)["cost_usd_per_hour"]
    price = ws.gpu(sc.gpu).spec.price_usd_per_hour
    ws.set_gpu(sc.gpu, {"price_usd_per_hour": price * 2})
    assert ws.evaluate(sc)["cost_usd_per_hour"] == pytest.approx(2 * cost)
    with Workspace.open(db_url) as other:  # another process: seen by its row version
        other.set_gpu(sc.gpu, {"price_usd_per_hour": price * 3})
    assert ws.evaluate(sc)["cost_usd_per_hour"] == pytest.approx(3 * cost)
    assert ws.gpu_specs()[sc.gpu].price_usd_per_hour == pytest.approx(price * 3)


def test_a_replaced_model_is_parsed_again(ws: Workspace, db_url: str) -> None:
    config = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 8, "intermediate_size": 96, "vocab_size": 100}
    ws.import_model(config, "tiny")
    assert ws.model_specs()["tiny"].num_layers == 2
    with Workspace.open(db_url) as other:
        other.delete_model("tiny")
        other.import_model({**config, "num_hidden_layers": 3}, "tiny")
    assert ws.model_specs()["tiny"].num_layers == 3
    with Workspace.open(db_url) as other:
        other.delete_model("tiny")
    assert "tiny" not in ws.model_specs()


@pytest.mark.parametrize(("word", "flag"), [("y", True), ("Yes", True), ("on", True),
                                            ("1", True), ("n", False), ("off", False),
                                            ("false", False)])
def test_gpu_flags_take_the_input_column_words(ws: Workspace, word: str, flag: bool) -> None:
    gpu = ws.add_gpu("flagged", {"memory_gib": 24, "bf16_tflops": 100,
                                 "memory_bandwidth_gb_per_s": 900, "price_is_example": word})
    assert gpu.spec.price_is_example is flag


def test_a_flag_that_is_no_word_is_refused(ws: Workspace) -> None:
    with pytest.raises(ValidationError, match="price_is_example"):
        ws.add_gpu("flagged", {"memory_gib": 24, "bf16_tflops": 100,
                               "memory_bandwidth_gb_per_s": 900, "price_is_example": "maybe"})
    with pytest.raises(PlannerError):
        ws.gpu("flagged")
