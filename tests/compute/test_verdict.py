"""Issue 24, the screens: one capacity verdict, computed once (:mod:`planner.compute.verdict`),
shown by every text screen; saturated and impossible are states, not numbers; the capacity
solve is one query for the CLI and the UI (:mod:`planner.compute.capacity`).

The task of the issue throughout: Llama-3-70B at 2,000 requests/min, 1,000-token prompts,
250-token outputs, p50 TTFT under 1 s, TPOT under 50 ms, on vLLM, typed as 4 × H100 TP 4.
Figures are read from the model's own outputs (``--json``, :func:`planner.service.estimate`)
and compared with what the text shows, never pinned as literals the serving model may move.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from planner.compute import capacity, symbolic, verdict
from planner.compute.outputs import output_columns
from planner.compute.table import graph
from planner.formulas.serving import QUEUE_WAIT_CAP_S
from planner.service import Workspace
from tests.helpers import invoke

TASK = ["--model", "llama-3-70b", "--gpu", "h100-sxm", "--gpus", "4", "--tp", "4",
        "--engine", "vllm", "--target-requests-per-s", "2000/min", "--prompt", "1000",
        "--output", "250", "--slo-ttft-s", "1", "--slo-percentile", "50", "--slo-tpot-s",
        "0.05"]
TASK_INPUTS = {"gpus": 4, "tp": 4, "engine": "vllm", "target_requests_per_s": "2000/min",
               "prompt_tokens": 1000, "output_tokens": 250, "slo_ttft_s": 1,
               "slo_percentile": "50", "slo_tpot_s": 0.05}


def run(*args: str) -> Any:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result


def plain(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture
def task() -> dict[str, Any]:
    """The task as ``estimate --json`` gives it."""
    return json.loads(run("estimate", *TASK, "--json").stdout)


# ---------------------------------------------------------------------- saturated column
def test_saturated_is_a_formula_column_with_excel_and_numpy_parity() -> None:
    """``saturated`` is an output column like the others: registered with a label and a bool
    unit, its formula renders to Excel (IF over the overload flag and the queue cap) and the
    symbolic backend computes what numpy computes, row by row, over loads below and above
    saturation."""
    column = output_columns()["saturated"]
    assert column.unit == "bool" and "overloaded" in column.inputs
    expr = symbolic.symbolic(column.formula)
    text = symbolic.excel(expr, lambda ref: ref.upper())
    assert text.startswith("IF(") and "1000000" in text, text
    n = 5
    values = {"overloaded": np.array([False, False, True, False, True]),
              "queue_wait_mean_s": np.array([0.0, QUEUE_WAIT_CAP_S, 1.0, 2.0, 0.0]),
              "queue_wait_p99_s": np.array([0.0, 0.0, 1.0, QUEUE_WAIT_CAP_S, 0.0])}
    got = np.broadcast_to(np.asarray(symbolic.compute_tree(expr, values), dtype=bool), (n,))
    want = np.asarray(column.formula(**values), dtype=bool)
    assert want.tolist() == [False, True, True, True, True]
    assert got.tolist() == want.tolist()


def test_saturated_is_the_open_loop_queue_at_or_past_saturation(task: dict[str, Any]) -> None:
    """On the task's 4 GPUs the offered load is past the saturation rate: ``overloaded`` and
    ``saturated``; at the GPUs the closed form sizes it is neither."""
    assert task["utilization"] >= 1 and task["saturated"] is True
    sized = json.loads(run("estimate", *TASK[:5], str(task["gpus_needed"]), *TASK[6:],
                           "--json").stdout)
    assert sized["utilization"] < 1 and sized["saturated"] is False


# ---------------------------------------------------------------------- estimate / show
def test_estimate_json_gives_null_latencies_and_saturated_true(task: dict[str, Any]) -> None:
    """Issue 24, "Why" 3: no 10^6 s cap (shown as 277.78 h) reaches a script: queue waits and
    TTFTs are null where the queue is saturated, ``saturated: true`` says why."""
    assert task["saturated"] is True and task["meets_slo"] is False
    for name in verdict.SATURATED_NULL:
        assert task[name] is None, name
    assert task["tpot_mean_s"] > 0  # the step at saturation is a real figure
    assert task["gpus_needed"] > 4 and task["replicas_needed"] * 4 == task["gpus_needed"]


def test_estimate_text_leads_with_the_verdict_and_one_memory_accounting(
        task: dict[str, Any]) -> None:
    """Issue 24, "Why" 1: the text says what the JSON says (SLO missed, the GPUs and monthly
    cost needed), first, and the idle-server bounds come after, labelled; with an engine the
    memory table is the engine's KV pool and token capacity, not the roofline's reserve and
    KV budget beside it."""
    out = run("estimate", *TASK).stdout
    verdict_at = out.index("Verdict")
    assert verdict_at < out.index("Memory per GPU") < out.index("Idle-server bounds")
    flat = plain(out)
    needed = f"needs {task['gpus_needed']:,} GPUs ({task['replicas_needed']:,} replicas)"
    assert f"saturated on 4 GPUs: {needed}" in flat
    cost = f"${task['cost_usd_per_month_needed']:,.2f}/month"
    assert cost in flat
    assert "277.78 h" not in out and "TTFT p50 at the load saturated" in flat
    assert f"KV token capacity (per replica) {task['engine_token_capacity']:,} tokens" in flat
    assert "KV budget" not in out and "reserve" not in out


def test_scenario_show_prints_the_same_verdict_as_estimate(task: dict[str, Any]) -> None:
    """The verdict is one function: ``scenario show`` of the saved task prints the lines
    ``estimate`` prints, and its JSON the same states."""
    run("fleet", "new", "cap")
    run("scenario", "new", "cap/task", "--model", "llama-3-70b", "--gpu", "h100-sxm",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items()))
    shown = run("scenario", "show", "cap/task").stdout
    estimated = run("estimate", *TASK).stdout
    block = estimated[estimated.index("Verdict"):estimated.index("Memory per GPU")]
    assert block in shown
    record = json.loads(run("scenario", "show", "cap/task", "--json").stdout)["outputs"]
    assert record["saturated"] is True and record["ttft_p99_s"] is None
    assert record["gpus_needed"] == task["gpus_needed"]


def test_scenario_list_shows_the_verdict_state_and_the_gpus_needed(
        task: dict[str, Any]) -> None:
    """Issue 24, "Why" 8 (the list part): ``scenario list`` has the SLO verdict and the GPUs
    needed beside fits; a scenario with no engine, target or SLO shows dashes; the idle
    TTFT/TPOT are headed as such."""
    run("fleet", "new", "cap")
    run("scenario", "new", "cap/task", "--model", "llama-3-70b", "--gpu", "h100-sxm",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items()))
    run("scenario", "new", "cap/plain", "--model", "llama-3-8b", "--gpu", "h100-sxm")
    out = run("scenario", "list", "--fleet", "cap").stdout
    row = next(line for line in out.splitlines() if "cap/task" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert "saturated" in cells and f"{task['gpus_needed']:,}" in cells
    assert f"${task['cost_usd_per_month_needed']:,.2f}" in cells
    other = next(line for line in out.splitlines() if "cap/plain" in line)
    assert [c.strip() for c in other.strip("│ ").split("│")].count("–") == 3
    assert "idle TTFT" in out and "SLO verdict" in out


def test_scenario_list_json_gives_the_states_as_null_like_scenario_show() -> None:
    """``scenario list --json`` masks as ``scenario show --json`` does (one rule,
    :func:`planner.compute.verdict.json_null_rows`): the saturated task's queue latencies are
    null, not the 10^6 s cap; a plain scenario keeps its numbers; a scenario that does not
    fit has null sizing."""
    run("fleet", "new", "cap")
    run("scenario", "new", "cap/task", "--model", "llama-3-70b", "--gpu", "h100-sxm",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items()))
    run("scenario", "new", "cap/plain", "--model", "llama-3-8b", "--gpu", "h100-sxm")
    run("scenario", "new", "cap/big", "--model", "llama-3-70b", "--gpu", "l4",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items() if k not in ("gpus", "tp")))
    listed = {r["name"]: r["outputs"] for r in json.loads(
        run("scenario", "list", "--fleet", "cap", "--json").stdout)}
    for name in ("task", "plain", "big"):
        shown = json.loads(run("scenario", "show", f"cap/{name}", "--json").stdout)["outputs"]
        for column in (*verdict.SATURATED_NULL, *verdict.SIZING):
            assert listed[name][column] == shown[column], (name, column)
    task = listed["task"]
    assert task["saturated"] is True
    assert all(task[c] is None for c in verdict.SATURATED_NULL)
    assert QUEUE_WAIT_CAP_S not in task.values()
    assert listed["plain"]["ttft_p50_s"] is not None  # no queue: a number
    assert listed["big"]["engine_fits"] is False and listed["big"]["gpus_needed"] is None


# ---------------------------------------------------------------------- states
def test_masked_column_is_masked_row_by_row() -> None:
    """The vectorized states (sweeps) are the row rule (every other screen), for every mix of
    fits, saturated, no target and unreachable."""
    rng = np.random.default_rng(7)
    n = 64
    fits = rng.random(n) < 0.6
    saturated = rng.random(n) < 0.4
    replicas = rng.integers(0, 3, n).astype(float)
    target = np.where(rng.random(n) < 0.3, 0.0, 10.0)
    for name in sorted(verdict.MASKED_COLUMNS):
        column = verdict.masked_column(name, fits, saturated, replicas, target)
        for i in range(n):
            outputs = {"engine_fits": bool(fits[i]), "saturated": bool(saturated[i]),
                       "replicas_needed": replicas[i]}
            assert column[i] == verdict.masked(name, outputs,
                                               {"target_requests_per_s": target[i]}), name


def test_sweep_states_nulls_and_one_deployment_per_row() -> None:
    """Issue 24, "Why" 3: a sweep row is one deployment: shown beside the GPUs needed, the
    latencies are those of that deployment (as ``estimate`` at that count gives them), the row
    says its GPU count; rows that do not fit say so instead of "0 GPUs / $0.00"; in JSON the
    saturated latencies are null."""
    run("fleet", "new", "cap")
    run("scenario", "new", "cap/task", "--model", "llama-3-70b", "--gpu", "h100-sxm",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items()))
    rows = json.loads(run("sweep", "cap/task", "--vary", "gpu=h100-sxm,l4", "--show",
                          "gpus_needed,cost_usd_per_month_needed,ttft_p50_s,meets_slo",
                          "--json").stdout)
    h100, l4 = rows
    assert l4["gpus_needed"] is None and l4["ttft_p50_s"] is None  # does not fit
    at = json.loads(run("estimate", *TASK[:5], str(int(h100["gpus_needed"])), *TASK[6:],
                        "--json").stdout)
    assert h100["gpus"] == h100["gpus_needed"] == at["inputs"]["gpus"]
    assert h100["ttft_p50_s"] == pytest.approx(at["ttft_p50_s"], rel=1e-12)
    assert h100["meets_slo"] == at["meets_slo"]
    text = run("sweep", "cap/task", "--vary", "gpu=h100-sxm,l4", "--show",
               "gpus_needed,cost_usd_per_month_needed,ttft_p50_s").stdout
    l4_line = next(line for line in text.splitlines() if "l4 " in line)
    assert l4_line.count("does not fit") == 3 and "$0.00" not in l4_line
    typed = json.loads(run("sweep", "cap/task", "--vary", "gpus=4,8", "--show",
                           "ttft_p50_s,queue_wait_p99_s,saturated", "--json").stdout)
    assert typed[0]["saturated"] is True and typed[0]["ttft_p50_s"] is None
    assert typed[0]["queue_wait_p99_s"] is None
    shown = run("sweep", "cap/task", "--vary", "gpus=4,8", "--show", "ttft_p50_s").stdout
    assert "saturated" in shown and "277.78 h" not in shown


# ---------------------------------------------------------------------- capacity solve
def test_capacity_query_is_the_cli_solve() -> None:
    """Issue 24, "Why" 2: the UI's capacity preset and ``planner solve --minimize
    cost_usd_per_month --subject-to meets_slo`` with the preset's ``--vary`` texts give the
    same cheapest answer; the answer meets the SLO at the target rate at the count it
    names."""
    run("fleet", "new", "cap")
    run("scenario", "new", "cap/task", "--model", "llama-3-70b", "--gpu", "h100-sxm",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items()))
    with Workspace.open() as ws:
        sc = ws.scenario("cap", "task")
        models, gpus = ws.model_specs(), ws.gpu_specs()
    base = {"model": sc.model, "gpu": sc.gpu, **sc.inputs}
    query = capacity.capacity_query(base, gpus, gpu_filter="nvidia")
    assert query.constraint == "meets_slo" and query.objective == "cost_usd_per_month"
    assert all(gpus[g].vendor.lower() == "nvidia" for g in query.gpus)
    answers = capacity.solve_capacity(base, query, models, gpus, 3)
    args = ["solve", "cap/task", "--minimize", query.objective, "--subject-to",
            query.constraint, *(x for v in query.vary for x in ("--vary", v)), "--json"]
    best = json.loads(run(*args).stdout)["values"]
    assert {k: best[k] for k in answers[0].changes} == answers[0].changes
    assert answers[0].outputs["cost_usd_per_month"] == pytest.approx(best["cost_usd_per_month"])
    costs = [a.outputs["cost_usd_per_month"] for a in answers]
    assert costs == sorted(costs) and all(a.outputs["meets_slo"] for a in answers)
    assert f"--vary {query.vary[0]}" in query.command("cap/task")
    capped = capacity.capacity_query(base, gpus, gpu_filter="nvidia", utilization_cap=0.5)
    for a in capacity.solve_capacity(base, capped, models, gpus, 3):
        assert a.outputs["utilization"] <= 0.5


def test_capacity_query_refuses_what_has_no_capacity_question() -> None:
    """A clear one-line refusal naming the field: no target rate, no SLO, a cap out of
    range, a filter that matches nothing."""
    from planner.core.errors import ValidationError

    with Workspace.open() as ws:
        gpus = ws.gpu_specs()
    base = {"model": "llama-3-70b", "gpu": "h100-sxm", "target_requests_per_s": 0}
    with pytest.raises(ValidationError, match="target_requests_per_s"):
        capacity.capacity_query(base, gpus)
    base["target_requests_per_s"] = 10
    with pytest.raises(ValidationError, match="slo_ttft_s"):
        capacity.capacity_query(base, gpus)
    base["slo_ttft_s"] = 1
    with pytest.raises(ValidationError, match="utilization cap"):
        capacity.capacity_query(base, gpus, utilization_cap=1.5)
    with pytest.raises(ValidationError, match="GPU filter"):
        capacity.capacity_query(base, gpus, gpu_filter="no-such-vendor")


def test_every_verdict_column_is_an_output_column() -> None:
    """The verdict's field list names real output columns of the inference graph."""
    formulas = graph("inference").formulas
    for name in (*verdict.VERDICT, *verdict.SATURATED_NULL, "saturated"):
        assert name in formulas, name


# ---------------------------------------------------------------------- how sure
def test_gpu_list_flags_gpus_whose_serving_efficiencies_are_defaults() -> None:
    """Issue 24, "Why" 7: ``gpu list`` says which GPUs run on the planner's default serving
    efficiencies (JSON flag and a ``defaults *`` column), exactly those without measured
    matmul and bandwidth shares in the catalog."""
    listed = json.loads(run("gpu", "list", "--json").stdout)
    with Workspace.open() as ws:
        specs = ws.gpu_specs()
    flags = {g["name"]: g["serving_efficiencies_measured"] for g in listed}
    want = {n: s.matmul_efficiency > 0 and s.bandwidth_efficiency > 0 for n, s in specs.items()}
    assert flags == want and not all(want.values()) and any(want.values())
    text = run("gpu", "list").stdout
    for name, measured in want.items():
        line = next(ln for ln in text.splitlines() if f"│ {name} " in ln)
        assert ("defaults *" in line) == (not measured), line


def test_gpu_star_rankings_and_solve_answers_mark_unmeasured_gpus() -> None:
    """Issue 24, "Why" 7: a ``gpu=*`` sweep marks each unmeasured GPU with ``*`` (JSON: a
    per-row flag); a solve answer on such a GPU says so, in text and JSON."""
    run("fleet", "new", "cap")
    run("scenario", "new", "cap/task", "--model", "llama-3-70b", "--gpu", "h100-sxm",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items()))
    with Workspace.open() as ws:
        specs = ws.gpu_specs()
    rows = json.loads(run("sweep", "cap/task", "--vary", "gpu=*", "--show", "meets_slo",
                          "--json").stdout)
    assert {r["gpu"]: r["gpu_efficiencies_measured"] for r in rows} == {
        n: verdict.gpu_measured(s) for n, s in specs.items()}
    text = run("sweep", "cap/task", "--vary", "gpu=*", "--show", "meets_slo").stdout
    for name, spec in specs.items():
        assert (f"│ {name} *" in text) == (not verdict.gpu_measured(spec)), name
    unmeasured = next(n for n, s in specs.items() if not verdict.gpu_measured(s)
                      and s.memory_bytes > 100e9)
    args = ["solve", "cap/task", "--minimize", "cost_usd_per_month", "--subject-to",
            "fits", "--vary", f"gpu={unmeasured}"]
    assert json.loads(run(*args, "--json").stdout)["gpu_efficiencies_measured"] is False
    assert f"* {unmeasured}: serving efficiencies not measured" in plain(run(*args).stdout)


def test_calibration_parameters_at_their_bound_are_reported() -> None:
    """Issue 24, "Why" 7: a fitted parameter on its physical range's bound is reported (the
    CLI warns), one inside its range or not fitted is not."""
    from planner.compute.calibration import PARAMETERS, at_bound

    matmul = next(p for p in PARAMETERS if p.name == "matmul_efficiency")
    overhead = next(p for p in PARAMETERS if p.name == "engine_step_overhead_s")
    parameters = {"matmul_efficiency": matmul.high, "engine_step_overhead_s": overhead.low,
                  "bandwidth_efficiency": 0.7, "collective_efficiency": 1.0}
    fitted = ["matmul_efficiency", "engine_step_overhead_s", "bandwidth_efficiency"]
    assert at_bound(parameters, fitted) == [
        ("matmul_efficiency", matmul.high, "upper", matmul.high),
        ("engine_step_overhead_s", overhead.low, "lower", overhead.low)]


# ---------------------------------------------------------------------- the demo fleet
def test_demo_flagship_runs_the_engine_model_and_its_notes_match_its_figures() -> None:
    """Issue 24, "Why" 5: the option group of the demo fleet runs on vLLM with its target and
    SLO set, every member meets the SLO at the GPU count it is typed with (the count the
    closed form sizes), and each note names that engine and count."""
    with Workspace.open() as ws:
        group = [s for s in ws.scenarios("demo") if s.name.startswith("llama3-70b-chat-")]
        outputs = ws.evaluate_many(group)
    assert len(group) == 3
    for sc, out in zip(group, outputs, strict=True):
        i = sc.inputs
        assert i["engine"] == "vllm" and i["target_requests_per_s"] > 0 and i["slo_ttft_s"] > 0
        assert out["meets_slo"] and not out["saturated"], sc.name
        assert out["gpus_needed"] == i["gpus"], sc.name
        assert "vLLM" in sc.notes and f"({i['gpus']} GPUs)" in sc.notes, sc.notes
        replicas = i["gpus"] // i["tp"]
        assert f"{replicas} replicas of TP {i['tp']}" in sc.notes, sc.notes
        assert verdict.state(out) == verdict.MEETS


def test_compare_leads_with_the_verdict_and_shows_states() -> None:
    """Issue 24, "Why" 8 (compare): the comparison (CLI and the UI's ``c``, one function,
    :func:`planner.service.compare.compare`) starts with the verdict row and the verdict's figures,
    "saturated" in place of a capped TTFT, a dash for a scenario without a verdict."""
    run("fleet", "new", "cap")
    run("scenario", "new", "cap/task", "--model", "llama-3-70b", "--gpu", "h100-sxm",
        *(f"{k}={v}" for k, v in TASK_INPUTS.items()))
    run("scenario", "new", "cap/plain", "--model", "llama-3-8b", "--gpu", "h100-sxm")
    data = json.loads(run("compare", "cap/task", "cap/plain", "--json").stdout)
    rows = {r["column"]: r["values"] for r in data["rows"]}
    assert [r["column"] for r in data["rows"]][:1 + len(verdict.VERDICT)] == [
        "verdict", *verdict.VERDICT]
    task_out = json.loads(run("scenario", "show", "cap/task", "--json").stdout)
    with Workspace.open() as ws:
        sc = ws.scenario("cap", "task")
        out = ws.evaluate(sc)
    assert rows["verdict"] == [verdict.headline(out, sc.inputs), "–"]
    assert rows["ttft_p50_s"] == [None, "–"]  # JSON: a state is null, as estimate --json
    assert rows["gpus_needed"] == [task_out["outputs"]["gpus_needed"], "–"]
    text = plain(run("compare", "cap/task", "cap/plain").stdout)
    assert "saturated" in text and "277.78 h" not in text


# ---------------------------------------------------------------------- one-command solve
CAPACITY_TASK = ["--model", "llama-3-70b", "--engine", "vllm", "--target-requests-per-s",
                 "2000/min", "--prompt", "1000", "--output", "250", "--slo-ttft-s", "1",
                 "--slo-percentile", "50", "--slo-tpot-s", "0.05"]
"""The capacity task as one command: ``planner solve`` with estimate's options, no SCENARIO."""


def test_solve_help_shows_the_capacity_task_as_one_command() -> None:
    out = plain(run("solve", "--help").stdout)
    assert "[SCENARIO]" in out and "capacity question" in out
    assert ("planner solve --model llama-3-70b --engine vllm --target-requests-per-s 2000/min "
            "\\ --prompt 1000 --output 250 --slo-ttft-s 1 --slo-percentile 50 --slo-tpot-s "
            "0.05") in out
    for flag in ("--model", "--gpu", "--target-requests-per-s", "--slo-ttft-s", "--tp",
                 "--gpu-filter", "--utilization-cap"):
        assert flag in out, flag


def test_solve_without_a_scenario_answers_the_capacity_task_first() -> None:
    """Issue 24, the capacity task in one command: the answer (GPU, TP, count, replicas,
    dtype, $/month, meets SLO, TTFT p50/p99, TPOT, utilisation, ``*``) leads, the runners-up
    follow. The answer is the cheapest row of the whole grid that meets the SLO (the sweep's
    own solve over the same candidates), its figures the estimate of that deployment; nothing
    is written to the database."""
    from planner.compute.inputs import INFERENCE_INPUTS
    from planner.compute.sweep import parse_variation, solve
    from planner.service import estimate
    from planner.spec.catalog import load_gpus, resolve_model_spec

    before = run("fleet", "list", "--json").stdout
    out = run("solve", *CAPACITY_TASK).stdout
    assert run("fleet", "list", "--json").stdout == before  # nothing saved
    flat = plain(out)
    gpus = load_gpus()
    inputs = {"engine": "vllm", "target_requests_per_s": 2000 / 60, "prompt_tokens": 1000,
              "output_tokens": 250, "slo_ttft_s": 1.0, "slo_percentile": "50",
              "slo_tpot_s": 0.05}
    spec = resolve_model_spec("llama-3-70b")
    columns = {c.name: c for c in INFERENCE_INPUTS}
    grid = [parse_variation(v, gpus=list(gpus), columns=columns) for v in
            ("gpu=*", "tp=1,2,4,8", "gpus=1..64", "weight_dtype=bf16,fp8")]
    best = solve({"model": "llama-3-70b", "gpu": "h100-sxm", **inputs}, "cost_usd_per_month",
                 "min", "meets_slo", grid, {"llama-3-70b": spec}, gpus)
    assert best.found
    v = best.values
    # the answer today: 3 x MI355X at TP 1 in fp8, 3 x $4.00/h (seeds/gpus.toml, an example
    # price) x 730 h = $8,760.00/month; its efficiencies are the planner's defaults
    assert (v["gpu"], v["tp"], v["gpus"], v["weight_dtype"]) == ("mi355x", 1, 3, "fp8")
    assert v["cost_usd_per_month"] == pytest.approx(3 * 4.00 * 730)
    at = estimate(spec, gpus["mi355x"], {**inputs, "tp": 1, "gpus": 3, "weight_dtype": "fp8"})
    assert at["meets_slo"] is True
    lead = flat[:flat.index("Runners-up")]
    for text in ("GPU mi355x *", "tensor parallel (TP) 1", "GPUs 3 (3 replicas × TP 1)",
                 "weight dtype fp8", "cost $8,760.00/month", "meets SLO yes",
                 f"TTFT p50 at the load {verdict.figure('ttft_p50_s', at, inputs)}",
                 f"TTFT p99 at the load {verdict.figure('ttft_p99_s', at, inputs)}",
                 f"TPOT at the load {verdict.figure('tpot_mean_s', at, inputs)}",
                 f"utilisation {at['utilization']:.0%}"):
        assert text in lead, text
    assert lead.index("GPU mi355x") < lead.index("meets SLO")
    runners = out[out.index("Runners-up"):].splitlines()
    assert sum(1 for line in runners if re.match(r"│ [2-5] │", line)) == 4
    assert "serving efficiencies not measured" in out
    data = json.loads(run("solve", *CAPACITY_TASK, "--json").stdout)
    assert data["answer"]["gpu"] == "mi355x" and data["answer"]["gpus"] == 3
    assert data["answer"]["replicas"] == 3 and data["answer"]["meets_slo"] is True
    assert data["answer"]["gpu_efficiencies_measured"] is False
    assert len(data["runners_up"]) == 4


def test_solve_refuses_a_scenario_and_inline_inputs_together() -> None:
    result = invoke("solve", "cap/task", "--model", "llama-3-8b")
    assert result.exit_code == 2 and "not both" in result.output
    assert "Traceback" not in result.output
    result = invoke("solve")
    assert result.exit_code == 2 and "--model" in result.output
