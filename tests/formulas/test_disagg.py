"""Disaggregated prefill/decode serving (planner.formulas.disagg, issue 25 items 1 and 7):
aggregated figures bit-identical to the planner before it, hand-computed KV transfer times,
GPU counts and costs, the contract outputs' switch, and bad inputs refused by name; the
workbook Summary, compare --options, estimate and explain on both pools."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from planner.compute.table import evaluate_row
from planner.core.errors import PlannerError, ValidationError
from planner.formulas import disagg, topology
from planner.spec.catalog import load_gpus, resolve_model_spec
from tests.formulas.disagg_golden import GOLDEN, demo_rows, figures, grid_rows

GPUS = load_gpus()
SPECS = {m: resolve_model_spec(m) for m in ("llama-3-8b", "mixtral-8x7b")}


def row(**inputs: Any) -> dict[str, Any]:
    base = {"model": "llama-3-8b", "gpu": "h100-sxm", "engine": "vllm", "prompt_tokens": 1024,
            "output_tokens": 256}
    return evaluate_row({**base, **inputs}, SPECS, GPUS)


@pytest.mark.parametrize("part", ["demo", "grid"])
def test_aggregated_outputs_are_bit_identical_to_the_planner_before(part: str) -> None:
    """Every numeric output of the demo fleet and of a 240-row random grid hashes to the
    figures of the planner before disaggregated serving (tests/formulas/disagg_golden.py run on the
    integration tree before the disaggregated merge: main at 0de9d40 with the wide-EP,
    prefill-first and kernel-layout changes, 264 output columns), byte for byte."""
    golden = json.loads(GOLDEN.read_text())[part]
    rows = demo_rows() if part == "demo" else grid_rows()
    assert len(golden) == 264 and len(rows) == (8 if part == "demo" else 240)
    now = figures(rows, sorted(golden))
    assert [k for k in golden if now.get(k) != golden[k]] == []


def test_pool_inputs_do_not_touch_an_aggregated_deployment() -> None:
    """The grid with every disaggregated input set to something else, serving_mode left
    aggregated: the same bytes."""
    golden = json.loads(GOLDEN.read_text())["grid"]
    rng = np.random.default_rng(7)
    rows = [{**r, "prefill_workers": int(rng.integers(0, 5)), "decode_workers": int(
        rng.integers(0, 5)), "prefill_tp": int(rng.choice((0, 1, 2, 4))), "decode_tp": int(
        rng.choice((0, 1, 2, 8))), "prefill_ep": int(rng.choice((0, 2))), "decode_ep": int(
        rng.choice((0, 4))), "prefill_attention_dp": str(rng.choice(("follow", "on", "off"))),
        "decode_attention_dp": str(rng.choice(("follow", "on", "off"))),
        "decode_gpu": str(rng.choice(("same", "h200", "b200")))} for r in grid_rows()]
    now = figures(rows, sorted(golden))
    assert [k for k in golden if now.get(k) != golden[k]] == []


def test_kv_transfer_inside_one_nvlink_domain_by_hand() -> None:
    """1P1D of Llama-3-8B at TP 1 on an HGX H100 board (8-GPU NVLink domain, 900 GB/s both
    ways): 1,024 prompt tokens x 131,072 B (2 x 32 layers x 8 KV heads x 128 x 2 B) =
    134,217,728 B over 450 GB/s one way plus 2 us: 300.2616 us; 2 GPUs, 2 x the H100 price."""
    out = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=1, gpus=1)
    assert out["kv_transfer_bytes"] == 1024 * 131_072 == 134_217_728
    assert out["kv_transfer_link_kind"] == topology.LINK_DOMAIN
    assert out["kv_transfer_s"] == pytest.approx(2e-6 + 134_217_728 / 450e9, rel=1e-12)
    assert out["kv_transfer_s"] == pytest.approx(300.2616e-6, rel=1e-6)
    assert out["deployment_gpus"] == 2
    assert out["cost_usd_per_hour"] == pytest.approx(2 * GPUS["h100-sxm"].price_usd_per_hour)


def test_kv_transfer_across_the_network_and_gpu_count_by_hand() -> None:
    """4 prefill workers at TP 2 and 2 decode workers at TP 4: 4 x 2 + 2 x 4 = 16 GPUs, more
    than one 8-GPU domain, so the KV crosses the 400 Gb/s NICs (50 GB/s one way each), two
    GPU pairs at once (min(2, 4) ranks): 8 us + 134,217,728 B / 100 GB/s = 1,350.17728 us."""
    out = row(serving_mode="disaggregated", prefill_workers=4, prefill_tp=2, decode_workers=2,
              decode_tp=4, gpus=1)
    assert (out["prefill_gpus"], out["decode_gpus"], out["deployment_gpus"]) == (8, 8, 16)
    assert out["kv_transfer_link_kind"] == topology.LINK_NIC
    assert out["kv_transfer_link_bytes_per_s"] == pytest.approx(100e9, rel=1e-12)
    assert out["kv_transfer_s"] == pytest.approx(8e-6 + 134_217_728 / 100e9, rel=1e-12)
    price = GPUS["h100-sxm"].price_usd_per_hour
    assert out["cost_usd_per_hour"] == pytest.approx(16 * price)


def test_a_decode_pool_of_another_gpu_type() -> None:
    """Decode on H200 beside H100 prefill: no NVLink domain joins two GPU types (the NIC), the
    cost adds each pool at its GPU's price, the decode pool holds more KV (141 vs 80 GB) and
    reads it faster (4.8 vs 3.35 TB/s), so its TPOT at the same batch is lower."""
    same = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=1,
               concurrency=64)
    mixed = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=1,
                concurrency=64, decode_gpu="h200")
    assert (same["decode_gpu_same"], mixed["decode_gpu_same"]) == (1.0, 0.0)
    assert mixed["kv_transfer_link_kind"] == topology.LINK_NIC
    assert mixed["cost_usd_per_hour"] == pytest.approx(
        GPUS["h100-sxm"].price_usd_per_hour + GPUS["h200"].price_usd_per_hour)
    assert mixed["decode_token_capacity"] > 1.5 * same["decode_token_capacity"]
    assert mixed["tpot_mean_s"] < same["tpot_mean_s"]
    assert mixed["prefill_step_s"] == same["prefill_step_s"]


def test_contract_outputs_take_the_disaggregated_figures() -> None:
    """In disaggregated mode TTFT is queue + prefill + transfer + first decode step + the
    front end's path + the hand-over, TPOT the decode pool's step, throughput clients / cycle
    (closed loop) capped by the slower pool, and e2e follows them."""
    out = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=2, concurrency=32)
    assert out["ttft_mean_s"] == out["disagg_ttft_mean_s"] == pytest.approx(
        out["prefill_queue_wait_mean_s"] + out["decode_slot_wait_s"] + out["prefill_service_s"]
        + out["kv_transfer_s"] + out["disagg_tpot_mean_s"] + out["disagg_path_latency_s"])
    # the path: the front end's latency and the P/D hand-over's orchestration (vLLM PR 51919)
    assert out["disagg_path_latency_s"] == out["request_latency_effective_s"] + 0.11
    assert out["tpot_mean_s"] == out["disagg_tpot_mean_s"]
    assert out["decode_batch_3"] == 16  # 32 clients over 2 decode workers
    assert out["serving_requests_per_s"] == pytest.approx(min(
        32 / out["disagg_cycle_s"], out["prefill_capacity_requests_per_s"],
        out["decode_capacity_requests_per_s"]))
    assert out["output_tokens_per_s"] == pytest.approx(256 * out["serving_requests_per_s"])
    assert out["saturation_requests_per_s"] == min(out["prefill_capacity_requests_per_s"],
                                                   out["decode_capacity_requests_per_s"])
    assert out["e2e_mean_s"] == pytest.approx(out["ttft_mean_s"] + 255 * out["tpot_mean_s"])
    assert out["ttft_p50_s"] <= out["ttft_p90_s"] <= out["ttft_p99_s"]


def test_the_slower_pool_caps_an_open_loop() -> None:
    """Open loop beyond one pool's capacity is overloaded; below it the rate is served and the
    decode batch satisfies Little's law, ``b = rate / Wd * (G - 1) * TPOT``, within 1 %."""
    probe = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=1,
                target_requests_per_s=1.0)
    cap = probe["disagg_saturation_requests_per_s"]
    under = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=1,
                target_requests_per_s=0.5 * cap)
    assert not under["disagg_overloaded"]
    assert under["serving_requests_per_s"] == pytest.approx(0.5 * cap)
    assert under["decode_batch_3"] == pytest.approx(
        0.5 * cap * 255 * under["tpot_mean_s"], rel=0.01)
    over = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=1,
               target_requests_per_s=1.5 * cap)
    assert over["disagg_overloaded"]
    assert over["serving_requests_per_s"] == pytest.approx(cap)


def test_more_prefill_workers_cut_the_prefill_queue() -> None:
    """At 64 clients with 8k prompts one prefill worker queues; four do not as much."""
    one = row(serving_mode="disaggregated", prefill_workers=1, decode_workers=2,
              concurrency=64, prompt_tokens=8192)
    four = row(serving_mode="disaggregated", prefill_workers=4, decode_workers=2,
               concurrency=64, prompt_tokens=8192)
    assert four["prefill_utilization"] < one["prefill_utilization"]
    assert four["ttft_mean_s"] < one["ttft_mean_s"]
    assert four["prefill_capacity_requests_per_s"] == pytest.approx(
        4 * one["prefill_capacity_requests_per_s"])


@pytest.mark.parametrize(("field", "value", "message"), [
    ("serving_mode", "both", "serving_mode: must be one of aggregated, disaggregated"),
    ("decode_tp", -1, "decode_tp: must be an integer from 0 to 1,024 (got -1)"),
    ("prefill_workers", 2.5, "prefill_workers: must be an integer from 0 to 100,000 (got 2.5)"),
    ("decode_attention_dp", "maybe", "decode_attention_dp: must be one of follow, on, off"),
])
def test_a_bad_pool_input_is_refused_naming_it(field: str, value: Any, message: str) -> None:
    with pytest.raises(PlannerError) as err:
        row(**{field: value})
    assert str(err.value).startswith(message), str(err.value)


def test_an_unknown_decode_gpu_is_refused_naming_it() -> None:
    with pytest.raises(PlannerError, match="decode_gpu") as err:
        row(serving_mode="disaggregated", decode_gpu="h900")
    assert "h900" in str(err.value)


def test_modes_are_coded() -> None:
    assert disagg.SERVING_MODES == {"aggregated": 0, "disaggregated": 1}


def _disagg_fleet(ws: Any) -> list:
    """A fleet of disaggregated scenarios: closed loop, open loop with an H200 decode pool,
    the offline maximum of an MoE model under expert parallelism and attention DP."""
    ws.new_fleet("pd")
    cases = {
        "closed": dict(model="llama-3-8b", gpu="h100-sxm", engine="vllm",
                       serving_mode="disaggregated", prefill_workers=2, decode_workers=3,
                       decode_tp=2, concurrency=96, prompt_tokens=4000),
        "open-h200": dict(model="llama-3-8b", gpu="h100-sxm", engine="sglang",
                          serving_mode="disaggregated", prefill_workers=1, decode_workers=1,
                          decode_gpu="h200", target_requests_per_s=4, slo_ttft_s=1),
        "offline-moe": dict(model="mixtral-8x7b", gpu="h100-sxm", engine="trtllm", gpus=2,
                            tp=2, ep=2, weight_dtype="fp8", serving_mode="disaggregated",
                            prefill_workers=1, prefill_tp=4, prefill_ep=4, decode_workers=2,
                            decode_attention_dp="on"),
    }
    for name, fields in cases.items():
        ws.new_scenario("pd", name, **fields)
    return ws.scenarios("pd")


@pytest.mark.libreoffice
def test_disaggregated_scenarios_recompute_in_excel_engines(ws: Any, tmp_path: Any) -> None:
    """Every output of three disaggregated scenarios, the decode pool's GPU figures fetched by
    the workbook's own lookups, equals Python's in the formulas engine and in LibreOffice."""
    from tests.io.test_report import N_INFERENCE, compare_outputs, formulas_values, workbook_values
    from tests.libreoffice import recalculate

    scenarios = _disagg_fleet(ws)
    path = tmp_path / "pd.xlsx"
    ws.export(path, ["pd"])
    expected = ws.evaluate_many(scenarios)
    by_name = {sc.name: out for sc, out in zip(scenarios, expected, strict=True)}
    assert by_name["open-h200"]["kv_transfer_link_kind"] == topology.LINK_NIC  # beside H100
    assert by_name["closed"]["deployment_gpus"] == 2 + 6
    assert compare_outputs(formulas_values(path), scenarios, expected) == 3 * N_INFERENCE
    recalculated = recalculate(path, tmp_path / "lo")
    assert compare_outputs(workbook_values(recalculated), scenarios, expected) == \
        3 * N_INFERENCE


def test_disaggregated_scenarios_round_trip_the_workbook(ws: Any, tmp_path: Any,
                                                         isolated_data_dir: Any) -> None:
    """Export and import back: the pool inputs and decode_gpu come back as stored, nothing
    changes."""
    from tests.store_fixtures import dump

    scenarios = {sc.name: sc for sc in _disagg_fleet(ws)}
    assert scenarios["open-h200"].inputs["decode_gpu"] == "h200"
    assert scenarios["offline-moe"].inputs["decode_attention_dp"] == "on"
    path = tmp_path / "pd.xlsx"
    ws.export(path, ["pd"])
    url = f"sqlite:///{isolated_data_dir / 'planner.db'}"
    before = dump(url)
    plans = ws.import_workbook(path)
    assert len(plans) == 3 and all(not p.fields for p in plans)
    assert dump(url) == before


def test_csv_import_carries_the_pool_inputs_and_refuses_an_unknown_decode_gpu(
        ws: Any, tmp_path: Any) -> None:
    """A CSV of disaggregated rows stores what ``scenario new`` stores, and evaluates to the
    disaggregated figures; a row naming a decode GPU the catalog lacks is refused naming the
    column, and nothing is stored."""
    header = ("name,model,gpu,serving_mode,prefill_workers,prefill_tp,decode_workers,decode_tp,"
              "decode_ep,decode_attention_dp,decode_gpu,concurrency")
    rows = ["pd,llama-3-8b,h100-sxm,disaggregated,2,1,3,2,0,off,h200,96",
            "agg,llama-3-8b,h100-sxm,aggregated,0,0,0,0,0,follow,same,96"]
    path = tmp_path / "pd.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    ws.new_fleet("bulk")
    result = ws.import_scenarios("bulk", path)
    assert (result.rows, result.created) == (2, 2)
    ws.new_fleet("one")
    ws.new_scenario("one", "pd", model="llama-3-8b", gpu="h100-sxm",
                    serving_mode="disaggregated", prefill_workers=2, prefill_tp=1,
                    decode_workers=3, decode_tp=2, decode_attention_dp="off", decode_gpu="h200",
                    concurrency=96)
    stored = {s.name: s for s in ws.scenarios("bulk")}
    assert stored["pd"].inputs == ws.scenario("one", "pd").inputs
    out = ws.evaluate(stored["pd"])
    assert out["deployment_gpus"] == 2 * 1 + 3 * 2
    assert out["cost_usd_per_hour"] == pytest.approx(
        2 * GPUS["h100-sxm"].price_usd_per_hour + 6 * GPUS["h200"].price_usd_per_hour)
    assert ws.evaluate(stored["agg"])["deployment_gpus"] == 1
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "\nx,llama-3-8b,h100-sxm,disaggregated,1,1,1,1,0,off,h900,8\n",
                   encoding="utf-8")
    ws.new_fleet("bad")
    with pytest.raises(PlannerError, match="decode_gpu"):
        ws.import_scenarios("bad", bad)
    assert ws.scenarios("bad") == []


def test_scenario_new_refuses_an_unknown_decode_gpu(ws: Any) -> None:
    ws.new_fleet("pd")
    with pytest.raises(PlannerError, match="decode_gpu"):
        ws.new_scenario("pd", "x", model="llama-3-8b", gpu="h100-sxm",
                        serving_mode="disaggregated", decode_gpu="h900")
    assert ws.scenarios("pd") == []


def test_details_pane_shows_both_pools(ws: Any) -> None:
    """The TUI details pane of a disaggregated scenario: each pool's shape and figures, the
    KV transfer and TTFT in its parts, the GPU count of both pools."""
    from rich.console import Console

    from planner.tui.state.details import details

    sc = {s.name: s for s in _disagg_fleet(ws)}["open-h200"]
    out = ws.evaluate(sc)
    console = Console(record=True, width=200)
    console.print(details(sc, out, GPUS["h100-sxm"].memory_bytes))
    text = console.export_text()
    assert re.search(r"prefill pool +1 × 1 h100-sxm: full step", text)
    assert re.search(r"decode pool +1 × 1 h200: batch", text)
    assert re.search(r"KV transfer +.* per prompt over the network", text)
    assert re.search(r"GPUs +1 prefill \+ 1 decode = 2", text)


def test_compare_an_aggregated_and_a_disaggregated_option(ws: Any) -> None:
    """``compare`` of an aggregated deployment and its disaggregated option (2 GPUs each on
    H100): both pools' GPUs, TTFT/TPOT under load and the pools' utilization are compared;
    the roll-up counts each pool on its own GPU type and only the chosen option."""
    from planner.service.compare import compare, rollup

    ws.new_fleet("pd")
    ws.new_scenario("pd", "agg", model="llama-3-8b", gpu="h100-sxm", engine="vllm", gpus=2,
                    concurrency=32, prompt_tokens=4000)
    ws.new_scenario("pd", "split", model="llama-3-8b", gpu="h100-sxm", engine="vllm", gpus=2,
                    concurrency=32, prompt_tokens=4000, serving_mode="disaggregated",
                    prefill_workers=1, decode_workers=1, decode_gpu="h200", option_of="agg")
    scenarios = ws.scenarios("pd")
    outputs = ws.evaluate_many(scenarios)
    rows = {r.column: r for r in compare(scenarios, outputs)}
    assert rows["serving_mode"].values == ["aggregated", "disaggregated"]
    assert rows["deployment_gpus"].values == [2, 2]
    assert rows["decode_gpus"].values == [2, 1]  # the aggregated row's: its replicas
    assert rows["ttft_mean_s"].values == [o["ttft_mean_s"] for o in outputs]
    assert rows["ttft_mean_s"].values[1] == outputs[1]["disagg_ttft_mean_s"]
    assert rows["cost_usd_per_hour"].values[1] == pytest.approx(
        GPUS["h100-sxm"].price_usd_per_hour + GPUS["h200"].price_usd_per_hour)
    assert "prefill_utilization" in rows and "kv_transfer_s" in rows
    (totals,) = rollup(scenarios, outputs)
    assert totals.gpus_by_type == {"h100-sxm": 2}  # the base is chosen, the option is not
    ws.set_scenario("pd", "split", {"chosen": "true"})
    scenarios = ws.scenarios("pd")
    (totals,) = rollup(scenarios, ws.evaluate_many(scenarios))
    assert totals.gpus_by_type == {"h100-sxm": 1, "h200": 1}


@pytest.mark.libreoffice
def test_the_summary_counts_and_prices_both_pools_on_their_gpu_types(ws: Any,
                                                                      tmp_path: Any) -> None:
    """The workbook Summary of an aggregated deployment (4 H100s), a disaggregated one with
    its decode pool on H200 (2 prefill workers × TP2 on H100 + 1 decode worker × TP2 on
    H200) and one on H100 alone (3 × TP1 + 1 × TP4): the GPU table counts 4 + 4 + 7 = 15
    H100s at $2.50 and 2 H200s at $3.50 (730 h), the roll-up 17 GPUs, the scenario table
    names both types and each deployment's GPUs; cached values equal LibreOffice's
    recalculation of every Summary formula."""
    from tests.io.test_report import workbook_values
    from tests.io.test_workbook_finance import formula_cells, same
    from tests.libreoffice import recalculate

    ws.new_fleet("pdx")
    common = dict(model="llama-3-70b", gpu="h100-sxm", engine="vllm",
                  target_requests_per_s=6.0, prompt_tokens=1000, output_tokens=250,
                  slo_ttft_s=1.0, slo_percentile="50", slo_tpot_s=0.05, weight_dtype="fp8")
    ws.new_scenario("pdx", "agg", gpus=4, tp=4, **common)
    ws.new_scenario("pdx", "mixed", serving_mode="disaggregated", prefill_tp=2,
                    prefill_workers=2, decode_tp=2, decode_workers=1, decode_gpu="h200",
                    **common)
    ws.new_scenario("pdx", "same", serving_mode="disaggregated", prefill_tp=1,
                    prefill_workers=3, decode_tp=4, decode_workers=1, **common)
    path = tmp_path / "pdx.xlsx"
    ws.export(path, ["pdx"])
    cached = workbook_values(path)
    summary = {cell: v for (sheet, cell), v in cached.items() if sheet == "Summary"}
    by_text: dict[str, str] = {}  # a text's first cell (column A: the tables' row labels)
    for cell, v in summary.items():
        if isinstance(v, str) and cell.startswith("A"):
            by_text.setdefault(v, cell)

    def right_of(label: str, column: str) -> Any:
        return summary[column + by_text[label][1:]]

    h100, h200 = 2.50, 3.50  # seeds/gpus.toml example prices, USD per GPU-hour
    assert (right_of("h100-sxm", "G"), right_of("h100-sxm", "H")) == (15, 15 * h100 * 730)
    assert (right_of("h200", "G"), right_of("h200", "H")) == (2, 2 * h200 * 730)
    assert right_of("pdx", "D") == 17  # the roll-up: every pool's GPUs
    assert right_of("pdx", "F") == pytest.approx((15 * h100 + 2 * h200) * 730)
    assert (right_of("pdx/mixed", "C"), right_of("pdx/mixed", "D")) == ("h100-sxm + h200", 6)
    assert (right_of("pdx/same", "C"), right_of("pdx/same", "D")) == ("h100-sxm", 7)
    assert (right_of("pdx/agg", "C"), right_of("pdx/agg", "D")) == ("h100-sxm", 4)
    formulas = {k: f for k, f in formula_cells(path).items() if k[0] == "Summary"}
    recalculated = workbook_values(recalculate(path, tmp_path / "lo"))
    differ = [(k, cached[k], recalculated.get(k)) for k in formulas
              if not same(cached[k], recalculated.get(k))]
    assert differ == [] and len(formulas) > 40, differ[:10]


def test_compare_options_shows_both_pools_and_their_gpus(ws: Any) -> None:
    """``compare --options`` of an aggregated base (4 × H100 at TP4) and a disaggregated
    option (2 prefill workers × TP2 on H100 + 1 decode worker × TP2 on H200): the option's
    GPU names both pools, its GPUs are both pools' (2 * 2 + 1 * 2 = 6, not its ``gpus``
    input), its GPUs needed the closed form's, and the verdict line counts the deployment's
    GPUs and sizes in workers."""
    from planner.compute.verdict import headline
    from tests.helpers import invoke

    ws.new_fleet("pdo")
    common = dict(model="llama-3-70b", gpu="h100-sxm", engine="vllm",
                  target_requests_per_s=6.0, prompt_tokens=1000, output_tokens=250,
                  slo_ttft_s=1.0, slo_percentile="50", slo_tpot_s=0.05, weight_dtype="fp8")
    ws.new_scenario("pdo", "agg", gpus=4, tp=4, **common)
    ws.new_scenario("pdo", "mixed", serving_mode="disaggregated", prefill_tp=2,
                    prefill_workers=2, decode_tp=2, decode_workers=1, decode_gpu="h200",
                    option_of="agg", **common)
    result = invoke("compare", "--options", "pdo/agg", "--json")
    assert result.exit_code == 0, result.output
    options = {o["name"]: o for o in json.loads(result.output)["options"]}
    mixed = ws.scenario("pdo", "mixed")
    out = ws.evaluate(mixed)
    assert options["mixed"]["gpu"] == "2 × h100-sxm TP2 + 1 × h200 TP2"
    assert options["mixed"]["gpus"] == out["deployment_gpus"] == 6
    # at 6 requests/s one prefill worker (TP2, about 9.8 requests/s within the 1 s TTFT p50)
    # and one decode worker (TP2) suffice: 1 * 2 + 1 * 2 = 4 GPUs
    assert options["mixed"]["gpus_needed"] == out["gpus_needed"] == 4
    assert (out["disagg_prefill_workers_needed"], out["disagg_decode_workers_needed"]) == (1, 1)
    assert options["mixed"]["cost_usd_per_month"] == pytest.approx(
        (4 * GPUS["h100-sxm"].price_usd_per_hour + 2 * GPUS["h200"].price_usd_per_hour) * 730)
    assert (options["agg"]["gpu"], options["agg"]["gpus"]) == ("h100-sxm", 4)
    line = headline(out, mixed.inputs)
    assert line.startswith("meets SLO on 6 GPUs: needs 4 GPUs (1 prefill + 1 decode workers)")
    text = invoke("compare", "--options", "pdo/agg")
    assert "2 × h100-sxm TP2 + 1 × h200 TP2" in text.output


def test_estimate_and_explain_take_a_decode_pool_on_another_gpu(ws: Any) -> None:
    """``planner estimate --decode-gpu h200`` (one prefill worker on H100, one decode worker
    on H200) prices each pool at its GPU ($2.50 + $3.50 an hour) instead of refusing the
    decode GPU, and ``scenario explain`` of such a scenario walks the decode pool's sizing."""
    from tests.helpers import invoke

    result = invoke("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--engine",
                    "vllm", "--serving-mode", "disaggregated", "--decode-gpu", "h200",
                    "--target-requests-per-s", "2", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["deployment_gpus"] == 2
    assert out["cost_usd_per_hour"] == pytest.approx(
        GPUS["h100-sxm"].price_usd_per_hour + GPUS["h200"].price_usd_per_hour)
    ws.new_fleet("pde")
    ws.new_scenario("pde", "mixed", model="llama-3-8b", gpu="h100-sxm", engine="vllm",
                    serving_mode="disaggregated", decode_gpu="h200",
                    target_requests_per_s=2.0, slo_tpot_s=0.05)
    explained = invoke("scenario", "explain", "pde/mixed", "disagg_decode_workers_needed",
                       "--depth", "2")
    assert explained.exit_code == 0, explained.output
    assert explained.output.startswith("disagg_decode_workers_needed = 1")


def test_the_handover_adds_its_orchestration_to_the_path_where_nothing_queues() -> None:
    """``disagg_handover_s`` (0.11 s by default, vLLM PR 51919: ~197 ms p50 handover - 29 ms
    KV transfer - 58 ms token-1 recompute) is part of a disaggregated request's path: in an open
    loop (the prefill pool's load set by the rate) TTFT and the request cycle grow by exactly
    it; one closed-loop client's cycle too, its TTFT by a little less (the longer cycle loads
    the prefill pool less, so its small M/D/1 wait shrinks); 0 gives the front end's path
    alone; an aggregated scenario does not read it."""
    columns = ("disagg_ttft_mean_s", "disagg_ttft_p50_s", "disagg_ttft_p99_s",
               "disagg_wave_ttft_mean_s", "disagg_cycle_s")
    for load in ({"target_requests_per_s": 0.5}, {"concurrency": 1}):
        base = row(serving_mode="disaggregated", disagg_handover_s=0.0, **load)
        now = row(serving_mode="disaggregated", **load)
        assert base["disagg_path_latency_s"] == base["request_latency_effective_s"] == 0.04
        assert now["disagg_path_latency_s"] == pytest.approx(0.15, rel=1e-12)
        assert now["disagg_cycle_s"] - base["disagg_cycle_s"] == pytest.approx(0.11, rel=1e-9)
        grown = {c: now[c] - base[c] for c in columns}
        if "target_requests_per_s" in load:
            assert grown == pytest.approx(dict.fromkeys(columns, 0.11), rel=1e-9)
        else:
            assert 0.1 < grown["disagg_ttft_mean_s"] < 0.11
            assert now["prefill_queue_wait_mean_s"] < base["prefill_queue_wait_mean_s"] < 0.01
        assert now["ttft_mean_s"] == now["disagg_ttft_mean_s"]
        assert now["tpot_mean_s"] == base["tpot_mean_s"]  # the decode pool's step is as it was
    # an aggregated row: only the what-if pools' columns read it, no figure of the row's own
    slow, plain = row(concurrency=8, disagg_handover_s=2.0), row(concurrency=8)
    moved = {k for k in plain if k != "disagg_handover_s" and slow[k] != plain[k]}
    assert moved == {"disagg_path_latency_s", "disagg_cycle_s", "disagg_requests_per_s",
                     "prefill_utilization", "decode_utilization", "prefill_queue_wait_mean_s",
                     "disagg_ttft_mean_s", "disagg_ttft_p50_s", "disagg_ttft_p90_s",
                     "disagg_ttft_p99_s", "disagg_wave_ttft_mean_s",
                     "disagg_prefill_wait_room_nic_s", "disagg_prefill_wait_room_domain_s"}
    assert not moved & {"ttft_mean_s", "ttft_p50_s", "ttft_p99_s", "tpot_mean_s",
                        "output_tokens_per_s", "e2e_mean_s", "gpus_needed", "meets_slo"}


@pytest.mark.parametrize("bad", [-0.1, 10.5])
def test_a_handover_outside_0_to_10_s_is_refused_naming_the_field(bad: float) -> None:
    with pytest.raises(ValidationError, match="disagg_handover_s") as err:
        row(serving_mode="disaggregated", disagg_handover_s=bad)
    assert "0" in str(err.value) and "10" in str(err.value)


def test_speculation_runs_in_the_decode_pool() -> None:
    """MTP on a disaggregated deployment: the decode workers draft and verify. Each decode
    step verifies ``k + 1 = 2`` tokens per sequence and advances it ``a = 1.875`` (the
    method's defaults), so TPOT is the step over ``a``, a request runs ``(G - 1)/a`` steps
    (the pool's capacity and the open loop's arrivals), the first decode step in TTFT is one
    step (``TPOT * a``); the drafter's passes join the fixed step, its MTP KV layer and
    lookahead slot shrink the batch the pool holds, and its weights the pool."""
    plain = row(serving_mode="disaggregated", concurrency=32)
    spec = row(serving_mode="disaggregated", concurrency=32, spec_method="mtp")
    a, v = spec["spec_acceptance_length_effective"], spec["spec_verify_tokens"]
    assert (a, v) == (1.875, 2) and plain["spec_acceptance_length_effective"] == 1
    step = disagg._decode_step_at(*(spec[c] for c in ("decode_batch_3",
                                                       *disagg._DECODE_STEP_COLUMNS)))
    assert spec["disagg_tpot_mean_s"] == pytest.approx(step / a, rel=1e-12)
    assert spec["tpot_mean_s"] == spec["disagg_tpot_mean_s"] < plain["tpot_mean_s"]
    g = spec["output_tokens"]
    assert spec["decode_capacity_requests_per_s"] == pytest.approx(
        spec["decode_workers_effective"] * spec["decode_max_running_batch"]
        / ((g - 1) / a * spec["decode_saturation_step_s"]), rel=1e-12)
    assert spec["disagg_ttft_service_s"] == pytest.approx(
        spec["prefill_service_s"] + spec["kv_transfer_s"] + step, rel=1e-12)
    assert spec["decode_spec_draft_fixed_s"] > 0 == plain["decode_spec_draft_fixed_s"]
    assert spec["decode_step_fixed_s"] == pytest.approx(
        plain["decode_step_fixed_s"] + spec["decode_spec_draft_fixed_s"], rel=1e-12)
    assert spec["decode_spec_draft_kv_s_per_step"] > 0 == plain["decode_spec_draft_kv_s_per_step"]
    assert spec["decode_kv_pool_bytes_per_gpu"] < plain["decode_kv_pool_bytes_per_gpu"]
    open_loop = row(serving_mode="disaggregated", target_requests_per_s=2.0, spec_method="mtp")
    assert open_loop["decode_arrivals_steps_per_s"] == pytest.approx(
        2.0 / open_loop["decode_workers_effective"] * (g - 1) / a, rel=1e-12)
