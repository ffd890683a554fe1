"""Capacity plans over time (issue 15 item 2): demand by month evaluated by the serving model,
priced by month; horizon, demand and price commands; refusals; the Plan sheet."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from openpyxl import load_workbook

from planner.compute.plan import (
    JSON_KEYS,
    Demand,
    demand_rates,
    month_index,
    parse_growth,
    parse_rate,
    parse_series,
    reserve,
)
from planner.core.errors import PlannerError, ValidationError
from planner.service import Workspace
from tests.helpers import invoke
from tests.store_fixtures import dump

HOURS = 730.0


def run(*args: str) -> tuple[int, str]:
    """The CLI in-process: (exit code, stdout and stderr as the terminal shows them)."""
    result = invoke(*args)
    return result.exit_code, result.output


def _chat_fleet(ws: Workspace) -> None:
    """A fleet with one chat workload under a TTFT and TPOT objective, growing 8% a month."""
    ws.new_fleet("chat", "")
    ws.new_scenario("chat", "llama-70b-h100", model="llama-3-70b", gpu="h100-sxm", gpus=4, tp=4,
                    prompt_tokens=2000, output_tokens=300, batch=64, slo_ttft_s=2.0,
                    slo_tpot_s=0.05)
    ws.set_horizon("chat", "2027-01", 12)
    ws.set_demand("chat", "llama-70b-h100", start_rate="3/s", growth="8%")


def test_twelve_month_growth_plan_gives_the_serving_models_gpu_counts(ws: Workspace) -> None:
    """Each month's GPUs and replicas equal a single-scenario estimate with
    ``target_requests_per_s`` set to that month's rate (3/s × 1.08^k), computed apart."""
    _chat_fleet(ws)
    plan = ws.plan("chat")
    assert plan.months == [f"2027-{m:02d}" for m in range(1, 13)]
    sc = ws.scenario("chat", "llama-70b-h100")
    expected_gpus, expected_replicas = [], []
    for k in range(12):
        rate = 3.0 * 1.08 ** k
        single = ws.evaluate(dataclasses.replace(
            sc, inputs={**sc.inputs, "target_requests_per_s": rate}))
        expected_gpus.append(single["gpus_needed"])
        expected_replicas.append(single["replicas_needed"])
        assert plan.rate_requests_per_s[0, k] == pytest.approx(rate, rel=1e-12)
    assert plan.gpus[0].tolist() == expected_gpus
    assert plan.replicas[0].tolist() == expected_replicas
    # the serving model sizes this workload up as demand grows: not one flat count
    assert expected_gpus[0] < expected_gpus[-1]
    assert all(g % 4 == 0 for g in expected_gpus)  # whole TP-4 replicas
    assert plan.gpus_by_type.tolist() == [expected_gpus]
    # on-demand: the catalog's 2.50 USD per GPU-hour, 2.25 from 2027-07 (the seeded demo
    # price row), 730 h per month
    assert plan.cost_usd_by_type[0].tolist() == pytest.approx(
        [g * (2.50 if k < 6 else 2.25) * HOURS for k, g in enumerate(expected_gpus)])
    # headroom: what the replicas carry within the SLO minus the month's demand
    assert (plan.headroom_requests_per_s[0] >= 0).all()


def test_demo_fleet_has_a_plan_at_once(ws: Workspace) -> None:
    plan = ws.plan("demo")
    assert plan.months[0] == "2027-01" and len(plan.months) == 12
    assert plan.gpu_types == ["a100-80gb", "h100-sxm", "h200", "rtx-4090"]
    mixtral = plan.workloads.index("mixtral-8x7b-2xh100-tp2")
    demo = {s.name: s for s in ws.scenarios("demo")}
    for k in range(12):
        rate = 20.0 * 1.1 ** k
        single = ws.evaluate(dataclasses.replace(
            demo["mixtral-8x7b-2xh100-tp2"],
            inputs={**demo["mixtral-8x7b-2xh100-tp2"].inputs, "target_requests_per_s": rate}))
        assert plan.gpus[mixtral, k] == single["gpus_needed"]
    # issue 23's step model (prefill and decode steps each bound by its own limit) saturates
    # a replica earlier: on main [4, 4, 4, 4, 6, 6, 6, 6, 8, 8, 8, 10]
    assert plan.gpus[mixtral].tolist() == [4, 4, 4, 6, 6, 6, 6, 8, 8, 8, 10, 10]
    # scenarios without demand or target keep their configured GPUs; training is not planned
    assert plan.basis[plan.workloads.index("llama3-8b-24gib-6x8k")] == "configured"
    # options that are not chosen are not planned (planner.service.compare.counted): the chat
    # group's chosen H100 base plans at its target rate, 12 GPUs every month
    assert dict(plan.excluded) == {
        "llama2-7b-lora-r8-qv": "training", "llama2-7b-full-finetune-8xa100": "training",
        "llama3-70b-chat-h200-tp2": "option not chosen",
        "llama3-70b-chat-mi300x-tp2": "option not chosen"}
    chat = plan.workloads.index("llama3-70b-chat-h100-tp4")
    assert plan.basis[chat] == "target" and plan.gpus[chat].tolist() == [12] * 12
    # on main [28, 28, 28, 29, 31, 31, 33, 41, 43, 44, 44, 46] (issue 23's step model,
    # kernels per layer and the engines' own front ends)
    assert plan.total_gpus.tolist() == [28, 28, 28, 39, 39, 39, 41, 43, 43, 44, 46, 46]
    # the h100 on-demand price falls to 2.25 from 2027-07 (seeds/plans.toml)
    h100 = plan.gpu_types.index("h100-sxm")
    assert plan.price_usd_per_gpu_hour_by_type[h100].tolist() == [2.5] * 6 + [2.25] * 6


def test_series_and_growth_demand_rates() -> None:
    months = np.array([month_index(f"2027-{m:02d}") for m in range(1, 13)])
    start = month_index("2027-01")
    series = Demand("f", "s", "s", series_requests_per_s={"2027-03": 5.0, "2027-06": 9.0})
    # nothing before the first point (a launch in March); each point holds until the next
    assert demand_rates(series, 0.0, months, start).tolist() == [0, 0, 5, 5, 5, 9, 9, 9, 9, 9,
                                                                 9, 9]
    growth = Demand("f", "s", "s", start_month="2027-04", start_requests_per_s=10.0,
                    growth_fraction_per_month=0.5)
    assert demand_rates(growth, 0.0, months, start).tolist() == [
        0, 0, 0, 10, 15, 22.5, 33.75, 50.625, 75.9375, 113.90625, 170.859375, 256.2890625]
    decline = Demand("f", "s", "s", start_requests_per_s=8.0, growth_fraction_per_month=-0.5)
    assert demand_rates(decline, 0.0, months[:4], start).tolist() == [8, 4, 2, 1]
    assert demand_rates(None, 2.5, months[:3], start).tolist() == [2.5, 2.5, 2.5]


def test_rate_units_are_converted_to_requests_per_s() -> None:
    assert parse_rate("5") == (5.0, "s")
    assert parse_rate("5/s") == (5.0, "s")
    assert parse_rate("300/min") == (5.0, "min")
    assert parse_rate("432000/day") == (5.0, "day")
    assert parse_rate("300 requests/min") == (5.0, "min")
    assert parse_rate("120", unit="min") == (2.0, "min")
    assert parse_rate("5 req/s") == parse_rate("5/sec") == parse_rate("5 requests/second") == (
        5.0, "s")
    assert parse_rate("1,440 / minutes") == (24.0, "min")
    assert parse_rate("86400/days") == (1.0, "day")
    assert parse_series("2027-02=120,2027-01=60/min", unit="min") == {"2027-01": 1.0,
                                                                       "2027-02": 2.0}
    assert parse_growth("8%") == 0.08 and parse_growth("0.08") == 0.08
    assert parse_growth("-5%") == -0.05


def test_demand_stored_in_requests_per_s_shown_in_the_users_unit(ws: Workspace) -> None:
    d = ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", series="2027-01=864000,2027-06=1.728e6",
                      unit="/day")
    assert d.series_requests_per_s == {"2027-01": 10.0, "2027-06": 20.0}
    assert d.unit == "day"
    assert d.describe() == "2027-01=864000/day, 2027-06=1.728e+06/day"
    assert ws.demands("demo")["mixtral-8x7b-2xh100-tp2"] == d
    g = ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", start_rate="600/min", growth="10%")
    assert (g.kind, g.start_requests_per_s, g.unit, g.growth_fraction_per_month) == (
        "growth", 10.0, "min", 0.1)
    assert g.describe() == "600/min, +10.0%/month"
    assert ws.demands("demo")["mixtral-8x7b-2xh100-tp2"].series_requests_per_s == {}


@pytest.mark.parametrize(("call", "message"), [
    (lambda ws: ws.set_horizon("demo", "2027-13", 12), "start: must be a month written YYYY-MM"),
    (lambda ws: ws.set_horizon("demo", "2027-01", 0), "months: must be an integer from 1 to 120"),
    (lambda ws: ws.set_horizon("demo", "2027-01", 121), "months: must be an integer from 1 to"),
    (lambda ws: ws.set_horizon("demo", pricing="lease"), "pricing: must be one of on-demand"),
    (lambda ws: ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", start_rate="5/s",
                              growth="8"), "8 is ambiguous: write 8% or 0.08"),
    (lambda ws: ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", start_rate="-1/s"),
     "start_rate: must be a request rate from 0 to 1e9"),
    (lambda ws: ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", start_rate="5/hour"),
     "start_rate: must be one of /s, /min, /day"),
    (lambda ws: ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", start_rate="5/s",
                              growth="2000%"), "growth: must be a monthly growth from -99%"),
    (lambda ws: ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", series="2027-01=5,2027-01=6"),
     "series: each month at most once"),
    (lambda ws: ws.set_demand("demo", "mixtral-8x7b-2xh100-tp2", series="2027-01:5"),
     "series: month=rate pairs such as 2027-01=5"),
    (lambda ws: ws.set_demand("demo", "llama2-7b-lora-r8-qv", start_rate="5/s"),
     "scenario: must be an inference scenario"),
    (lambda ws: ws.set_price("h100-sxm", month="2027-02", reserved=2.0),
     "term: needed with a reserved price: --term MONTHS"),
    (lambda ws: ws.set_price("h100-sxm", spot=-1), "spot: must be a number from 0 to 10,000"),
    (lambda ws: ws.set_price("h100-sxm", reserved=2, term=0), "term: must be an integer from 1"),
    (lambda ws: ws.plan("demo", start="2027-05", end="2027-02"), "to: must be a month at or"),
])
def test_refusals_name_the_field_and_change_nothing(ws: Workspace, call, message) -> None:
    before = dump(f"sqlite:///{Path(ws.url.removeprefix('sqlite:///'))}")
    with pytest.raises(ValidationError) as exc:
        call(ws)
    assert message in str(exc.value)
    assert dump(f"sqlite:///{Path(ws.url.removeprefix('sqlite:///'))}") == before


def test_plan_refuses_a_fleet_without_horizon_and_a_price_that_is_not_set(ws: Workspace
                                                                          ) -> None:
    ws.new_fleet("bare", "")
    with pytest.raises(ValidationError, match="fleet 'bare' has no horizon; set one with"):
        ws.plan("bare")
    ws.new_scenario("bare", "l4", model="llama-3-8b", gpu="l4", target_requests_per_s=2)
    assert ws.plan("bare", start="2027-01", end="2027-03").basis == ["target"]
    with pytest.raises(ValidationError, match="no reserved price and term for GPU l4 in "
                                              "2027-01; set one with `planner gpu price l4"):
        ws.plan("bare", start="2027-01", end="2027-03", pricing="reserved")
    with pytest.raises(ValidationError, match="no spot price for GPU l4"):
        ws.plan("bare", start="2027-01", end="2027-03", pricing="spot")


def test_pricing_choices_spot_and_reserved_with_its_term(ws: Workspace) -> None:
    ws.new_fleet("p", "")
    ws.new_scenario("p", "w", model="llama-3-8b", gpu="l4", gpus=1)
    ws.set_horizon("p", "2027-01", 6)
    ws.set_price("l4", on_demand=1.0, reserved=0.6, term=3, spot=0.3)
    # rates chosen to need 2, 2, 1, 1, 3, 1 GPUs: read the serving model's count per rate
    sc = ws.scenario("p", "w")
    per_replica = ws.evaluate(dataclasses.replace(
        sc, inputs={**sc.inputs, "target_requests_per_s": 0.001}))["slo_requests_per_s_replica"]
    rates = [1.5, 1.5, 0.5, 0.5, 2.5, 0.5]
    ws.set_demand("p", "w", series=",".join(f"2027-{k + 1:02d}={r * per_replica:.6f}"
                                            for k, r in enumerate(rates)))
    on_demand = ws.plan("p")
    needed = on_demand.gpus[0].tolist()
    for k, r in enumerate(rates):
        single = ws.evaluate(dataclasses.replace(
            sc, inputs={**sc.inputs, "target_requests_per_s": float(f"{r * per_replica:.6f}")}))
        assert needed[k] == single["gpus_needed"]
    assert on_demand.cost_usd_by_type[0].tolist() == pytest.approx([g * 1.0 * HOURS
                                                                    for g in needed])
    spot = ws.plan("p", pricing="spot")
    assert spot.cost_usd_by_type[0].tolist() == pytest.approx([g * 0.3 * HOURS for g in needed])
    reserved = ws.plan("p", pricing="reserved")
    billed, cost, beyond = reserve(np.array(needed), np.full(6, 0.6), np.full(6, 3))
    assert reserved.gpus_billed_by_type[0].tolist() == billed.tolist()
    assert reserved.cost_usd_by_type[0].tolist() == pytest.approx(cost.tolist())
    assert reserved.committed_gpu_months_beyond == {"l4": beyond}
    # the reserve rule itself on a known need: 2,2,1,1,3,1 with a 3-month term
    b, c, out = reserve(np.array([2, 2, 1, 1, 3, 1]), np.full(6, 0.6), np.full(6, 3))
    # 2 reserved in Jan (to Mar), 1 in Apr (to Jun), 2 more in May (to Jul)
    assert b.tolist() == [2, 2, 2, 1, 3, 3]
    assert out == 2  # May's 2 GPUs run one month past June
    assert c.tolist() == pytest.approx([v * 0.6 * HOURS for v in b.tolist()])


def test_horizon_can_be_changed_field_by_field(ws: Workspace) -> None:
    h = ws.set_horizon("demo", months=24, pricing="reserved")
    assert (h.start_month, h.months, h.pricing) == ("2027-01", 24, "reserved")
    plan = ws.plan("demo", pricing="on-demand", start="2027-11", end="2028-02")
    assert plan.months == ["2027-11", "2027-12", "2028-01", "2028-02"]


def test_cli_plan_json_keys_and_text(ws: Workspace) -> None:
    code, out = run("fleet", "plan", "demo", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == set(JSON_KEYS)
    assert data["hours_per_month"] == 730
    assert set(data["months"][0]) == {"month", "gpus", "cost_usd", "by_gpu"}
    assert set(data["months"][0]["by_gpu"]["h100-sxm"]) == {
        "gpus_needed", "gpus_billed", "price_usd_per_gpu_hour", "cost_usd"}
    assert set(data["workloads"][0]["months"][0]) == {
        "month", "requests_per_s", "replicas", "gpus", "capacity_requests_per_s",
        "headroom_requests_per_s", "cost_usd"}
    assert [m["gpus"] for m in data["months"]] == [28, 28, 28, 39, 39, 39, 41, 43, 43, 44, 46,
                                                   46]
    code, help_text = run("fleet", "plan", "--help")
    flat = " ".join(help_text.split())
    assert all(k in flat for k in JSON_KEYS)
    code, out = run("fleet", "plan", "demo", "--from", "2027-11", "--to", "2027-12",
                    "--no-detail")
    assert code == 0
    # on main 26 H100 (42,705 USD), 44 GPUs, 85,191 USD (issue 23's step model)
    assert out.splitlines()[4].split() == [
        "2027-11", "1", "1,314", "28", "45,990", "16", "40,880", "1", "292", "46", "88,476"]
    assert out.splitlines()[2].split()[:5] == ["month", "a100-80gb", "GPUs", "a100-80gb", "USD"]
    code, out = run("fleet", "plan", "demo", "--pricing", "spot", "--json")
    assert json.loads(out)["pricing"] == "spot"


def test_cli_horizon_demand_and_price(ws: Workspace) -> None:
    assert run("fleet", "horizon", "demo")[1].strip() == \
        "fleet demo: 12 months from 2027-01, on-demand pricing"
    code, out = run("fleet", "horizon", "demo", "--start", "2028-03", "--months", "6")
    assert (code, out.strip()) == (0, "fleet demo: 6 months from 2028-03, on-demand pricing")
    code, out = run("scenario", "demand", "demo/mixtral-8x7b-2xh100-tp2", "--start-rate",
                    "1200/min", "--growth", "5%")
    assert (code, out.strip()) == (0, "demo/mixtral-8x7b-2xh100-tp2: growth demand 1200/min, "
                                      "+5.0%/month")
    code, out = run("scenario", "demand", "demo/mixtral-8x7b-2xh100-tp2", "--json")
    assert json.loads(out)["start_requests_per_s"] == 20.0
    code, out = run("scenario", "demand", "demo/mixtral-8x7b-2xh100-tp2", "--start-rate", "5/s",
                    "--growth", "8")
    assert code != 0 and "8 is ambiguous" in out
    code, out = run("gpu", "price", "l4", "--reserved", "0.4", "--term", "12", "--spot", "0.2")
    assert (code, out.strip()) == (0, "l4 from the start: on-demand: catalog, reserved 0.4 for "
                                      "12 months, spot 0.2 (USD per GPU-hour)")
    code, out = run("gpu", "price", "l4", "--month", "2027-06", "--on-demand", "0.5")
    assert "l4 from 2027-06: on-demand 0.5, reserved: none, spot: none" in out
    code, out = run("scenario", "demand", "demo/mixtral-8x7b-2xh100-tp2", "--clear")
    assert out.strip() == "demo/mixtral-8x7b-2xh100-tp2: demand removed"


def test_demand_and_prices_go_with_their_rows(ws: Workspace) -> None:
    ws.delete_scenario("demo", "mixtral-8x7b-2xh100-tp2")
    assert "mixtral-8x7b-2xh100-tp2" not in ws.demands("demo")
    assert ws.delete_fleet("demo") == 9
    assert ws.prices("h100-sxm")[0].reserved_usd_per_gpu_hour == 1.75


def test_seeding_the_plan_is_idempotent_and_keeps_user_edits(ws: Workspace) -> None:
    ws.set_demand("demo", "deepseek-v3-fp8-8xh200", start_rate="1/s")
    report = ws.seed()
    assert report.total_added == 0
    assert ws.demands("demo")["deepseek-v3-fp8-8xh200"].start_requests_per_s == 1.0


@pytest.mark.slow
def test_workbook_plan_sheet_holds_the_plan_with_cached_values(ws: Workspace,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "plan.xlsx"
    ws.export(path, ["demo"])
    plan = ws.plan("demo")
    wb = load_workbook(path, data_only=True)
    sheet = wb["Plan"]
    assert sheet["A5"].value == "2027-01" and sheet["A16"].value == "2027-12"
    assert sheet["B2"].value == 730
    n = len(plan.gpu_types)
    total_gpus = [sheet.cell(5 + m, 2 + 3 * n).value for m in range(12)]
    total_cost = [sheet.cell(5 + m, 3 + 3 * n).value for m in range(12)]
    assert total_gpus == plan.total_gpus.tolist()
    assert total_cost == pytest.approx(plan.total_cost_usd.tolist())
    formulas = load_workbook(path)["Plan"]
    h100 = plan.gpu_types.index("h100-sxm")
    assert formulas.cell(5, 2 + 3 * h100).value.startswith("=SUMPRODUCT(EXACT($C$")
    assert formulas.cell(5, 4 + 3 * h100).value == "=E5*F5*$B$2"
    # the workload rows (below the month rows, their total and a section title): each
    # month's GPUs as the plan gives them
    first = 16 + 5
    names = [sheet.cell(first + w, 1).value for w in range(len(plan.workloads))]
    assert names == plan.workloads
    assert [[sheet.cell(first + w, 6 + m).value for m in range(12)]
            for w in range(len(plan.workloads))] == plan.gpus.tolist()


@pytest.mark.slow
def test_workbook_formulas_recompute_to_the_plan(ws: Workspace, tmp_path: Path) -> None:
    """The month table's formulas, recomputed by an independent engine (the ``formulas``
    package), equal the plan's figures; the exported report still imports unchanged."""
    from tests.io.test_report import formulas_values

    path = tmp_path / "plan.xlsx"
    ws.export(path, ["demo"])
    plan = ws.plan("demo")
    values = formulas_values(path)
    n = len(plan.gpu_types)
    gpus_col, cost_col = chr(ord("A") + 1 + 3 * n), chr(ord("A") + 2 + 3 * n)
    assert [values[("Plan", f"{gpus_col}{5 + m}")] for m in range(12)] == \
        plan.total_gpus.tolist()
    assert [values[("Plan", f"{cost_col}{5 + m}")] for m in range(12)] == pytest.approx(
        plan.total_cost_usd.tolist())
    assert not any(p.fields for p in ws.import_workbook(path))


@pytest.mark.slow
def test_export_without_horizon_has_no_plan_sheet(ws: Workspace, tmp_path: Path) -> None:
    ws.new_fleet("bare", "")
    ws.new_scenario("bare", "w", model="llama-3-8b", gpu="l4")
    ws.export(tmp_path / "r.xlsx", ["bare"])
    assert "Plan" not in load_workbook(tmp_path / "r.xlsx").sheetnames


def test_plan_errors_are_planner_errors(ws: Workspace) -> None:
    with pytest.raises(PlannerError):
        ws.plan("nope")


def test_copies_plan_like_their_original(ws: Workspace) -> None:
    """A what-if copy of the demo fleet keeps its horizon and demands, so it plans the same;
    a copied scenario keeps its demand."""
    ws.copy_fleet("demo", "what-if")
    assert ws.horizon("what-if") == dataclasses.replace(ws.horizon("demo"), fleet="what-if")
    original, copy = ws.plan("demo"), ws.plan("what-if")
    assert copy.gpus.tolist() == original.gpus.tolist()
    assert copy.total_cost_usd.tolist() == original.total_cost_usd.tolist()
    series = ws.demands("demo")["llama3-8b-request-1024+128"]
    ws.copy_scenario("demo", "llama3-8b-request-1024+128", "llama3-8b-h200", to_fleet="demo")
    assert ws.demands("demo")["llama3-8b-h200"] == dataclasses.replace(
        series, scenario="llama3-8b-h200")


def test_a_chosen_option_plans_at_its_groups_demand(ws: Workspace) -> None:
    """An option group is one workload: the demo chat group's base gets a growth demand
    (10/s, +20 % a month); with the MI300X option chosen, the plan sizes the MI300X
    deployment at the base's monthly rate (single estimates of the option at each rate),
    and the unchosen base and H200 option are left out."""
    base, option = "llama3-70b-chat-h100-tp4", "llama3-70b-chat-mi300x-tp2"
    ws.set_demand("demo", base, start_rate="10/s", growth="20%", start_month="2027-01")
    ws.choose_option("demo", option)
    plan = ws.plan("demo")
    assert option in plan.workloads and base not in plan.workloads
    assert {n for n, why in plan.excluded if why == "option not chosen"} == {
        base, "llama3-70b-chat-h200-tp2"}
    sc = ws.scenario("demo", option)
    row = plan.workloads.index(option)
    expected = []
    for k in range(12):
        rate = 10.0 * 1.2 ** k
        assert plan.rate_requests_per_s[row, k] == pytest.approx(rate, rel=1e-12)
        expected.append(ws.evaluate(dataclasses.replace(
            sc, inputs={**sc.inputs, "target_requests_per_s": rate}))["gpus_needed"])
    assert plan.gpus[row].tolist() == expected and expected[0] < expected[-1]


def _disaggregated_fleet(ws: Workspace) -> None:
    """One disaggregated Llama-3-70B workload: prefill on H100, decode on H200, its demand
    growing 30% a month from 6 requests/s."""
    ws.new_fleet("pd", "")
    ws.new_scenario("pd", "pd70b", model="llama-3-70b", gpu="h100-sxm", engine="vllm",
                    target_requests_per_s=6.0, prompt_tokens=1000, output_tokens=250,
                    slo_ttft_s=1.0, slo_percentile="50", slo_tpot_s=0.05,
                    serving_mode="disaggregated", prefill_tp=2, decode_tp=2,
                    decode_gpu="h200", weight_dtype="fp8")
    ws.set_horizon("pd", "2027-01", 6)
    ws.set_demand("pd", "pd70b", start_rate="6/s", growth="30%")


def test_a_disaggregated_workload_plans_both_pools_each_on_its_gpu_and_price(
        ws: Workspace, tmp_path: Path) -> None:
    """Each month the prefill pool's GPUs (on H100) and the decode pool's (on H200) are the
    single estimate's ``disagg_prefill_gpus_needed`` and ``disagg_decode_gpus_needed`` at that
    month's rate (6/s × 1.3^k), each GPU type's cost its own GPUs × its price × 730 h, and the
    workload's GPUs in all are the estimate's ``gpus_needed``."""
    _disaggregated_fleet(ws)
    plan = ws.plan("pd")
    assert plan.workloads == ["pd70b (prefill pool)", "pd70b (decode pool)"]
    assert plan.workload_gpus == ["h100-sxm", "h200"] and plan.gpu_types == ["h100-sxm", "h200"]
    sc = ws.scenario("pd", "pd70b")
    prefill, decode, workers = [], [], []
    for k in range(6):
        single = ws.evaluate(dataclasses.replace(
            sc, inputs={**sc.inputs, "target_requests_per_s": 6.0 * 1.3 ** k}))
        prefill.append(single["disagg_prefill_gpus_needed"])
        decode.append(single["disagg_decode_gpus_needed"])
        workers.append((single["disagg_prefill_workers_needed"],
                        single["disagg_decode_workers_needed"]))
        assert single["gpus_needed"] == prefill[-1] + decode[-1]
    assert plan.gpus.tolist() == [prefill, decode]
    assert plan.replicas.T.tolist() == [list(w) for w in workers]
    # the prefill pool grows with the demand (one TP-2 worker carries about 9.8 requests/s
    # within the 1 s TTFT p50); one H200 decode worker at TP 2 carries all six months
    assert (prefill, decode) == ([2, 2, 4, 4, 4, 6], [2] * 6)
    assert plan.gpus_by_type.tolist() == [prefill, decode]
    h100, h200 = (plan.price_usd_per_gpu_hour_by_type[plan.gpu_types.index(t)]
                  for t in ("h100-sxm", "h200"))
    assert h200.tolist() == [3.50] * 6  # seeds/gpus.toml example price, no scheduled price
    assert plan.cost_usd_by_type[0].tolist() == pytest.approx(
        [g * h100[k] * HOURS for k, g in enumerate(prefill)])
    assert plan.cost_usd_by_type[1].tolist() == pytest.approx([g * 3.50 * HOURS for g in decode])
    assert plan.total_cost_usd.tolist() == pytest.approx(plan.cost_usd.sum(axis=0).tolist())
    assert (plan.headroom_requests_per_s >= 0).all()
    record = json.loads(run("fleet", "plan", "pd", "--json")[1])
    assert [(w["scenario"], w["pool"], w["gpu"]) for w in record["workloads"]] == [
        ("pd70b", "prefill", "h100-sxm"), ("pd70b", "decode", "h200")]
    # the Plan sheet sums each GPU type's rows: the cached totals are the plan's
    path = tmp_path / "pd.xlsx"
    ws.export(path, ["pd"])
    sheet = load_workbook(path, data_only=True)["Plan"]
    assert [sheet.cell(5 + m, 2).value for m in range(6)] == prefill
    assert [sheet.cell(5 + m, 5).value for m in range(6)] == decode
