"""Sizing a disaggregated deployment (issue 25 item 2): ``planner solve --serving-mode
disaggregated`` finds the cheapest xPyD, checked against a brute-force search of every pair of
worker counts and pool TPs, judged by the serving model's own columns; the closed-form worker
counts (planner/formulas/disagg_slo.py: gpus_needed of a disaggregated scenario) against the
same brute force, by hand, and in a sweep beside gpus_needed."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from planner.compute import disagg_sizing as ds
from planner.compute.table import evaluate_table, inputs_of
from planner.formulas import topology
from planner.spec.catalog import load_gpus, spec_from_file
from tests.helpers import invoke

LLAMA_70B = (Path(__file__).parents[1] / "fixtures" / "serving_configs"
             / "llama-3.3-70b-instruct.json")
"""Llama-3.3-70B-Instruct's published config: the Llama-3.1-70B architecture (same layers,
widths and vocabulary; tests/fixtures/serving_configs/sources.toml)."""

WORKLOAD = ["--engine", "vllm", "--gpu", "h100-sxm", "--target-requests-per-s", "10",
            "--prompt", "1000", "--output", "250", "--slo-ttft-s", "1",
            "--slo-percentile", "50", "--slo-tpot-s", "0.05"]
MAX_WORKERS = 6


def _base() -> tuple[dict[str, Any], dict[str, Any]]:
    spec = spec_from_file(LLAMA_70B)
    base = {c.name: c.default for c in inputs_of("inference")}
    base.update(model=spec.name, gpu="h100-sxm", engine="vllm", target_requests_per_s=10.0,
                prompt_tokens=1000, output_tokens=250, slo_ttft_s=1.0, slo_percentile=50,
                slo_tpot_s=0.05, serving_mode="disaggregated")
    return base, {spec.name: spec}


def _brute_force(base: dict[str, Any], models: dict[str, Any]) -> list[tuple[float, int, tuple]]:
    """Every (prefill TP, prefill workers, decode TP, decode workers, weight dtype) with
    workers 1..6: (monthly cost, GPUs, shape) of each that meets the SLO with both pools below
    saturation."""
    shapes = list(itertools.product(ds.POOL_TPS, range(1, MAX_WORKERS + 1), ds.POOL_TPS,
                                    range(1, MAX_WORKERS + 1), ds.WEIGHT_DTYPES))
    table = {**base, "decode_gpu": np.asarray(["same"] * len(shapes), dtype=object)}
    for i, column in enumerate(("prefill_tp", "prefill_workers", "decode_tp",
                                "decode_workers")):
        table[column] = np.asarray([s[i] for s in shapes])
    table["weight_dtype"] = np.asarray([s[4] for s in shapes], dtype=object)
    out = evaluate_table(table, models, load_gpus(), "inference",
                         ["meets_slo", "prefill_utilization", "decode_utilization",
                          "cost_usd_per_month", "deployment_gpus"])
    ok = (np.asarray(out["meets_slo"], dtype=bool)
          & (np.asarray(out["prefill_utilization"]) < 1)
          & (np.asarray(out["decode_utilization"]) < 1))
    cost, count = np.asarray(out["cost_usd_per_month"]), np.asarray(out["deployment_gpus"])
    return sorted((float(cost[i]), int(count[i]), shapes[i]) for i in np.flatnonzero(ok))


def test_solve_finds_the_brute_force_cheapest_xpyd_for_llama_70b() -> None:
    base, models = _base()
    feasible = _brute_force(base, models)
    assert feasible, "the workload has disaggregated answers within 6 workers a pool"
    result = invoke("solve", "--model", str(LLAMA_70B), *WORKLOAD, "--serving-mode",
                     "disaggregated", "--vary", f"workers={MAX_WORKERS}", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    answers = [data["answer"], *data["runners_up"]]
    cheapest = feasible[0][0]
    assert data["answer"]["cost_usd_per_month"] == cheapest
    # each answer is the brute force's cheapest deployment of its pool TPs, and the list is the
    # five cheapest pool-TP shapes
    per_shape: dict[tuple[Any, ...], tuple[float, int, tuple]] = {}
    for cost, gpus, shape in feasible:
        per_shape.setdefault((shape[0], shape[2], shape[4]), (cost, gpus, shape))
    expected = sorted(per_shape.values())[:5]
    got = [(a["cost_usd_per_month"], a["deployment_gpus"],
            (a["prefill"]["tp"], a["prefill"]["workers"], a["decode"]["tp"],
             a["decode"]["workers"], a["weight_dtype"])) for a in answers]
    assert [(c, g) for c, g, _ in got] == [(c, g) for c, g, _ in expected]
    for cost, gpus, shape in got:
        best_of_shape = per_shape[(shape[0], shape[2], shape[4])]
        assert (cost, gpus) == best_of_shape[:2]
        assert (cost, gpus, shape) in feasible
    # the figures: 5 H100s (3 prefill workers at TP1, 1 decode worker at TP2, fp8 weights),
    # $9,125/month (730 h at $2.50 per GPU-hour), the SLO met (2 prefill workers did before
    # the 0.11 s P/D hand-over was counted: the p50 wait's room shrank by as much)
    assert data["answer"]["deployment_gpus"] == 5
    assert cheapest == 5 * 2.5 * 730
    assert data["answer"]["meets_slo"] is True


def test_the_answer_is_the_deployment_estimate_gives_the_same_figures() -> None:
    base, models = _base()
    answer = ds.size_disaggregated(base, models, load_gpus(), max_workers=MAX_WORKERS)[0]
    c = answer.changes
    result = invoke("estimate", "--model", str(LLAMA_70B), *WORKLOAD, "--serving-mode",
                     "disaggregated", "--prefill-tp", str(c["prefill_tp"]),
                     "--prefill-workers", str(c["prefill_workers"]),
                     "--decode-tp", str(c["decode_tp"]),
                     "--decode-workers", str(c["decode_workers"]),
                     "--weight-dtype", str(c["weight_dtype"]), "--json")
    assert result.exit_code == 0, result.output
    est = json.loads(result.output)
    outputs = est.get("outputs", est)
    assert outputs["tpot_mean_s"] == pytest.approx(answer.outputs["tpot_mean_s"], rel=1e-12)
    assert outputs["ttft_p50_s"] == pytest.approx(answer.outputs["ttft_p50_s"], rel=1e-12)


def test_a_decode_pool_on_another_gpu_type_is_searched_when_named() -> None:
    base, models = _base()
    answers = ds.size_disaggregated(base, models, load_gpus(), decode_gpus=("h200",),
                                    max_workers=MAX_WORKERS)
    assert answers and {a.changes["decode_gpu"] for a in answers} == {"h200"}
    assert all(a.outputs["meets_slo"] for a in answers)


@pytest.mark.parametrize(("args", "message"), [
    (["--vary", "gpus=1..8"], "--vary"),
    (["--vary", "prefill_tp=0"], "whole numbers from 1 to 4096"),
    (["--vary", "workers=2,3"], "one number N"),
    (["--subject-to", "fits"], "--subject-to"),
])
def test_bad_disaggregated_search_options_are_refused_by_name(args: list[str],
                                                              message: str) -> None:
    result = invoke("solve", "--model", str(LLAMA_70B), *WORKLOAD, "--serving-mode",
                     "disaggregated", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_disaggregated_solve_needs_a_target_rate() -> None:
    base, models = _base()
    base["target_requests_per_s"] = 0.0
    with pytest.raises(Exception, match="target_requests_per_s"):
        ds.size_disaggregated(base, models, load_gpus())


def test_solve_mixes_gpu_types_when_asked_and_prices_each_pool_at_its_own_gpu() -> None:
    result = invoke("solve", "--model", str(LLAMA_70B), *WORKLOAD, "--serving-mode",
                    "disaggregated", "--vary", "decode_gpu=same,h200", "--vary", "workers=4",
                    "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)["answer"]
    # prefill on the --gpu H100s, decode on an H200: cheaper than either type alone here
    assert (answer["prefill"], answer["decode"]) == (
        {"gpu": "h100-sxm", "tp": 1, "workers": 3}, {"gpu": "h200", "tp": 1, "workers": 1})
    # seeds/gpus.toml example prices: H100 $2.50, H200 $3.50 per GPU-hour; 730 h a month
    assert answer["cost_usd_per_month"] == pytest.approx((3 * 2.50 + 1 * 3.50) * 730)
    assert answer["deployment_gpus"] == 4
    # two GPU types share no NVLink domain: the KV moves over the NIC
    assert answer["kv_transfer_s"] > 1e-3


@pytest.mark.slow
async def test_the_ui_solve_of_a_disaggregated_scenario_lists_the_cli_answers() -> None:
    """On a disaggregated scenario the UI's capacity solve is the disaggregated search (the
    answers ``planner solve FLEET/NAME --json`` gives, each pool shown), and "Add as options"
    writes them as options whose inputs differ from the scenario only where the answer does."""
    from textual.widgets import Static

    from planner.service import Workspace
    from planner.tui.app import create_app
    from planner.tui.screens.solve_view import SolveScreen
    from tests.tui.test_tui import ready, settle
    from tests.tui.test_verdict_tui import SIZE, select, text

    with Workspace.open() as ws:
        ws.new_scenario("demo", "pd70b", model="llama-3-70b", gpu="h100-sxm", engine="vllm",
                        target_requests_per_s=10.0, prompt_tokens=1000, output_tokens=250,
                        slo_ttft_s=1.0, slo_percentile="50", slo_tpot_s=0.05,
                        serving_mode="disaggregated")
    cli = invoke("solve", "demo/pd70b", "--gpu-filter", "h100", "--json")
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.output)["answer"]
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        select(app, "pd70b")
        await pilot.press("o")
        assert isinstance(app.screen, SolveScreen)
        await pilot.press("tab", *"h100", "enter")  # GPU filter, solve
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SolveScreen) and screen.answers, text(
            screen.query_one("#answer", Static))
        first = screen.answers[0].changes
        assert (first["prefill_tp"], first["prefill_workers"], first["decode_tp"],
                first["decode_workers"]) == (expected["prefill"]["tp"],
                                              expected["prefill"]["workers"],
                                              expected["decode"]["tp"],
                                              expected["decode"]["workers"])
        shown = text(screen.query_one("#answer", Static))
        assert f"{first['prefill_workers']} × h100-sxm TP{first['prefill_tp']}" in shown
        assert "planner solve demo/pd70b --gpu-filter h100" in shown
        count = len(screen.answers)
        screen.query_one("#add-options").press()
        await settle(pilot)
        await settle(pilot)
    with Workspace.open() as ws:
        options = [s for s in ws.scenarios("demo") if s.option_of == "pd70b"]
        assert len(options) == count and not any(s.chosen for s in options)
        assert {(s.inputs["prefill_workers"], s.inputs["decode_workers"]) for s in options} == {
            (a.changes["prefill_workers"], a.changes["decode_workers"]) for a in screen.answers}


# ------------------------------------------------------------------- closed form (disagg_slo)

CLOSED_FORM_MAX = 16
"""Workers per pool of the brute force the closed form is checked against."""


def _closed_form_case(gpu: str, rate: float, ttft: float, tpot: float, percentile: int,
                      decode_gpu: str) -> tuple[dict[str, Any], dict[str, Any]]:
    base, models = _base()
    base.update(gpu=gpu, target_requests_per_s=rate, slo_ttft_s=ttft, slo_tpot_s=tpot,
                slo_percentile=percentile, decode_gpu=decode_gpu)
    return base, models


@pytest.mark.parametrize(("gpu", "rate", "ttft", "tpot", "percentile", "decode_gpu", "spec"), [
    ("h100-sxm", 10.0, 1.0, 0.05, 50, "same", "none"),
    ("h100-sxm", 30.0, 0.5, 0.03, 90, "same", "none"),
    ("h200", 20.0, 2.0, 0.04, 99, "same", "none"),
    ("h100-sxm", 15.0, 1.0, 0.05, 50, "h200", "none"),
    ("b200", 40.0, 0.8, 0.0, 90, "same", "none"),
    ("h100-sxm", 20.0, 0.0, 0.04, 50, "same", "none"),
    ("h100-sxm", 20.0, 1.0, 0.02, 50, "same", "mtp"),  # the decode workers speculate
])
def test_closed_form_worker_counts_are_the_brute_force_cheapest(
        gpu: str, rate: float, ttft: float, tpot: float, percentile: int,
        decode_gpu: str, spec: str) -> None:
    """For every pool shape (prefill TP × decode TP × weight dtype), the closed form's
    ``disagg_prefill_workers_needed`` × ``disagg_decode_workers_needed`` is a cheapest pair of
    the brute force over 1..16 workers a pool judged by ``meets_slo`` (both pools below
    saturation), and ``gpus_needed`` / ``cost_usd_per_month_needed`` are that pair's."""
    base, models = _closed_form_case(gpu, rate, ttft, tpot, percentile, decode_gpu)
    base["spec_method"] = spec
    gpus = load_gpus()
    shapes = list(itertools.product(ds.POOL_TPS, ds.POOL_TPS, ds.WEIGHT_DTYPES))
    counts = range(1, CLOSED_FORM_MAX + 1)
    rows = [(a, w, b, v, d) for a, b, d in shapes for w in counts for v in counts]
    table: dict[str, Any] = dict(base)
    for i, column in enumerate(("prefill_tp", "prefill_workers", "decode_tp",
                                "decode_workers")):
        table[column] = np.asarray([r[i] for r in rows])
    table["weight_dtype"] = np.asarray([r[4] for r in rows], dtype=object)
    brute = evaluate_table(table, models, gpus, "inference",
                           ["meets_slo", "prefill_utilization", "decode_utilization",
                            "cost_usd_per_month", "deployment_gpus"])
    ok = (np.asarray(brute["meets_slo"], dtype=bool)
          & (np.asarray(brute["prefill_utilization"]) < 1)
          & (np.asarray(brute["decode_utilization"]) < 1))
    shaped: dict[str, Any] = dict(base)
    shaped["prefill_tp"] = np.asarray([s[0] for s in shapes])
    shaped["decode_tp"] = np.asarray([s[1] for s in shapes])
    shaped["weight_dtype"] = np.asarray([s[2] for s in shapes], dtype=object)
    closed = evaluate_table(shaped, models, gpus, "inference",
                            ["disagg_prefill_workers_needed", "disagg_decode_workers_needed",
                             "gpus_needed", "cost_usd_per_month_needed", "replicas_needed"])
    answered = 0
    for k, shape in enumerate(shapes):
        mine = [i for i, r in enumerate(rows) if (r[0], r[2], r[4]) == shape and ok[i]]
        wp = int(closed["disagg_prefill_workers_needed"][k])
        wd = int(closed["disagg_decode_workers_needed"][k])
        if not mine:  # no answer within 16 a pool: the closed form's is beyond it, or none
            assert wp == 0 or wd == 0 or max(wp, wd) > CLOSED_FORM_MAX, shape
            continue
        answered += 1
        cheapest = min(float(brute["cost_usd_per_month"][i]) for i in mine)
        pairs = {(rows[i][1], rows[i][3]) for i in mine
                 if float(brute["cost_usd_per_month"][i]) == cheapest}
        assert (wp, wd) in pairs, (shape, (wp, wd), pairs)
        assert float(closed["cost_usd_per_month_needed"][k]) == pytest.approx(cheapest,
                                                                             rel=1e-12)
        assert int(closed["gpus_needed"][k]) == (wp * shape[0] + wd * shape[1])
        assert int(closed["replicas_needed"][k]) == wp + wd
    assert answered >= 10


def test_closed_form_by_hand_on_the_llama_70b_answer() -> None:
    """The cheapest H100 answer (3 prefill workers at TP1, 1 decode worker at TP2, fp8) from
    its own figures: the decode pool's TPOT holds at its full batch, so one worker's rate is
    its capacity ``B_max / ((G - 1) step(B_max))`` and ``Wd = floor(10 / capacity) + 1``;
    the prefill bound ``rho* = u*^2`` is where the p50 wait of the prefill queue,
    ``step / (2 (1 - rho)) * (ln2 - (1 - rho) / sqrt(rho))``, equals what the 1 s objective
    leaves (after the prefill, transfer, first decode step, front end and P/D hand-over);
    ``Wp = max(ceil(10 / (rho* c)), floor(10 / c) + 1)``."""
    base, models = _base()
    base.update(prefill_tp=1, decode_tp=2, weight_dtype="fp8")
    names = ["disagg_decode_slo_batch", "decode_max_running_batch",
             "disagg_decode_capacity_requests_per_s_worker", "decode_saturation_step_s",
             "disagg_decode_workers_needed", "disagg_prefill_capacity_requests_per_s_worker",
             "prefill_step_s", "disagg_prefill_wait_room_nic_s",
             "disagg_prefill_wait_room_domain_s", "disagg_prefill_u_domain_6",
             "disagg_prefill_workers_needed", "gpus_needed", "cost_usd_per_month_needed",
             "kv_transfer_link_kind", "kv_transfer_s", "prefill_service_s",
             "disagg_sized_tpot_s",
             "request_latency_effective_s", "disagg_path_latency_s"]
    out = {k: float(np.asarray(v).reshape(-1)[0])
           for k, v in evaluate_table(base, models, load_gpus(), "inference", names).items()
           if k in names}
    assert out["disagg_decode_slo_batch"] == out["decode_max_running_batch"]
    capacity = out["decode_max_running_batch"] / (249 * out["decode_saturation_step_s"])
    assert out["disagg_decode_capacity_requests_per_s_worker"] == pytest.approx(capacity)
    assert capacity > 10 and out["disagg_decode_workers_needed"] == 1
    c = out["disagg_prefill_capacity_requests_per_s_worker"]
    assert 5 < c < 10  # one prefill worker cannot carry 10 requests/s
    # 3 prefill + 2 decode GPUs fit in one 8-GPU NVLink domain: the domain's count is taken;
    # the scenario's own 1 + 1 workers (3 GPUs) move the KV over it too
    assert out["kv_transfer_link_kind"] == topology.LINK_DOMAIN
    room = out["disagg_prefill_wait_room_domain_s"]
    assert room == pytest.approx(1.0 - out["prefill_service_s"] - out["kv_transfer_s"]
                                 - out["disagg_sized_tpot_s"]
                                 - out["disagg_path_latency_s"], rel=1e-12)
    # the path: vLLM's front end (40 ms) and the hand-over's orchestration (0.11 s)
    assert out["disagg_path_latency_s"] == pytest.approx(
        out["request_latency_effective_s"] + 0.11, rel=1e-12)
    assert out["request_latency_effective_s"] == 0.04
    assert out["disagg_prefill_wait_room_nic_s"] < room
    rho = out["disagg_prefill_u_domain_6"] ** 2
    wait = out["prefill_step_s"] / (2 * (1 - rho)) * (math.log(2) - (1 - rho) / rho ** 0.5)
    assert wait == pytest.approx(room, rel=1e-9)
    wp = max(math.ceil(10 / (rho * c)), math.floor(10 / c) + 1)
    assert out["disagg_prefill_workers_needed"] == wp == 3
    assert out["gpus_needed"] == 3 * 1 + 1 * 2
    assert out["cost_usd_per_month_needed"] == 5 * 2.50 * 730  # seeds/gpus.toml H100 price


def test_closed_form_says_none_where_the_objective_is_shorter_than_the_service() -> None:
    """A TTFT objective below the prefill of one prompt leaves no room: no count, the sizing
    columns 0 (the verdict's "SLO unreachable" state)."""
    base, models = _base()
    base.update(slo_ttft_s=0.01)
    out = evaluate_table(base, models, load_gpus(), "inference",
                         ["disagg_prefill_workers_needed", "gpus_needed", "replicas_needed"])
    assert [float(np.asarray(out[k]).reshape(-1)[0]) for k in
            ("disagg_prefill_workers_needed", "gpus_needed", "replicas_needed")] == [0, 0, 0]


def test_a_sweep_beside_gpus_needed_shows_the_needed_pools(ws: Any) -> None:
    """A sweep of a disaggregated scenario that shows ``gpus_needed`` beside latencies gives
    each row as the deployment sized for its rate: the prefill and decode pools at their
    needed workers (``deployment_gpus`` = ``gpus_needed``), its latencies those ``estimate``
    gives at those workers."""
    ws.new_fleet("pds")
    ws.new_scenario("pds", "mixed", model="llama-3-70b", gpu="h100-sxm", engine="vllm",
                    target_requests_per_s=6.0, prompt_tokens=1000, output_tokens=250,
                    slo_ttft_s=1.0, slo_percentile="50", slo_tpot_s=0.05, weight_dtype="fp8",
                    serving_mode="disaggregated", prefill_tp=2, prefill_workers=2,
                    decode_tp=2, decode_workers=1, decode_gpu="h200")
    result = invoke("sweep", "pds/mixed", "--vary", "target_requests_per_s=6,20", "--show",
                    "gpus_needed,ttft_p99_s,tpot_mean_s,deployment_gpus", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    sc = ws.scenario("pds", "mixed")
    for row in rows:
        at = {**sc.inputs, "target_requests_per_s": row["target_requests_per_s"]}
        sized = ws.evaluate(dataclasses.replace(sc, inputs=at))
        workers = (sized["disagg_prefill_workers_needed"], sized["disagg_decode_workers_needed"])
        one = ws.evaluate(dataclasses.replace(sc, inputs={
            **at, "prefill_workers": workers[0], "decode_workers": workers[1]}))
        assert row["gpus_needed"] == row["deployment_gpus"] == one["deployment_gpus"]
        assert row["ttft_p99_s"] == pytest.approx(one["ttft_p99_s"], rel=1e-12)
        assert row["tpot_mean_s"] == pytest.approx(one["tpot_mean_s"], rel=1e-12)
    # 6 requests/s: 1 prefill + 1 decode worker at TP2 (4 GPUs); 20: 3 + 1 (8 GPUs)
    assert [r["gpus_needed"] for r in rows] == [4, 8]


def test_the_search_and_the_closed_form_agree_on_every_answer() -> None:
    """Each of ``solve``'s five answers (the search over pairs of worker counts) costs what
    the closed form's worker counts of its pool shape cost, and is that pair or one of equal
    cost."""
    base, models = _base()
    answers = ds.size_disaggregated(base, models, load_gpus(), max_workers=MAX_WORKERS)
    assert len(answers) == 5
    shapes: dict[str, Any] = dict(base)
    for column in ("prefill_tp", "decode_tp", "weight_dtype"):
        values = [a.changes[column] for a in answers]
        shapes[column] = np.asarray(values, dtype=object if column == "weight_dtype" else None)
    closed = evaluate_table(shapes, models, load_gpus(), "inference",
                            ["disagg_prefill_workers_needed", "disagg_decode_workers_needed",
                             "cost_usd_per_month_needed", "gpus_needed"])
    for k, answer in enumerate(answers):
        assert float(closed["cost_usd_per_month_needed"][k]) == pytest.approx(
            answer.outputs["cost_usd_per_month"], rel=1e-12)
        assert int(closed["gpus_needed"][k]) == answer.outputs["deployment_gpus"]
