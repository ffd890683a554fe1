"""Speculative decoding and prefix caching (issue 25; planner/formulas/speculative.py,
planner/formulas/prefix_cache.py): at ``spec_method = none`` and no cache hit every output is
bit-identical to the serving model before them; MTP's TPOT, throughput and batch and a prefix
hit's TTFT by hand; bad inputs refused naming the field; the store, CSV and workbook keep the
inputs."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from planner.core.errors import PlannerError
from planner.formulas.speculative import typical_acceptance_length
from planner.service import Workspace
from planner.service.estimates import estimate
from planner.spec.catalog import resolve_gpu, resolve_model_spec
from planner.spec.figures import model_figures
from tests.formulas import spec_defaults_reference as reference

DIGESTS = Path(__file__).parents[1] / "fixtures" / "spec_defaults_digests.json"
"""Made by main at 0de9d40, before these inputs existed:
``cd /work/main && python <this branch>/tests/formulas/spec_defaults_reference.py``."""


@pytest.mark.slow
def test_defaults_are_bit_identical_to_the_model_before() -> None:
    """Every column main computed, over the demo fleet (each inference row also on vLLM,
    SGLang and TRT-LLM, closed and open loop) and 160 random rows, has the same bits."""
    expected = json.loads(DIGESTS.read_text())
    got = reference.digests()
    assert len(expected["fleet"]) > 250 and len(expected["grid"]) > 350
    for part in ("fleet", "grid"):
        missing = sorted(set(expected[part]) - set(got[part]))
        moved = sorted(k for k in expected[part] if k in got[part]
                       and got[part][k] != expected[part][k])
        assert (missing, moved) == ([], []), part


R1 = resolve_model_spec("deepseek-v3")  # DeepSeek-V3/R1 shapes, num_nextn_predict_layers 1
H200 = resolve_gpu("h200")
BASE = {"engine": "sglang", "gpus": 8, "tp": 8, "ep": 8, "prompt_tokens": 1024,
        "output_tokens": 1024, "concurrency": 64, "weight_dtype": "fp8", "kv_dtype": "fp8"}


BUDGET = 8192
"""SGLang's default token budget (``chunked_prefill_size`` 8192)."""


def _r1(**extra: Any) -> dict[str, Any]:
    return estimate(R1, H200, {**BASE, **extra})


def test_mtp_defaults_follow_the_deepseek_v3_report() -> None:
    """One MTP module (k = 1) accepted 87.5 % of the time: 1 + 0.875 = 1.875 tokens a step;
    a draft model's five drafts at alpha 0.7: (1 - 0.7^6)/0.3 = 2.9412."""
    r = _r1(spec_method="mtp")
    assert R1.mtp_layers == model_figures(R1).model_mtp_layers == 1
    assert r["spec_draft_tokens_effective"] == 1 and r["spec_verify_tokens"] == 2
    assert r["spec_acceptance_length_effective"] == 1.875
    assert typical_acceptance_length(0.7, 5) == pytest.approx((1 - 0.7 ** 6) / 0.3)
    assert typical_acceptance_length(0.7, 5) == pytest.approx(2.94117, abs=1e-5)


def test_mtp_tpot_and_throughput_by_hand() -> None:
    """Closed loop of 64 on 8 x H200 (SGLang, fp8), 1024 + 1024 tokens, MTP k = 1, a =
    1.875. A request runs 1023 / 1.875 = 545.6 decode steps (546.6 with its prefill step) and
    puts 1024 + 545.6 * 2 = 2115.2 tokens through the engine. A decode step of the 64
    sequences runs the GEMMs on 128 tokens; TPOT is the step over 1.875 (every step of the
    batch is decode-only but for the prefill share); throughput = 64 / residence / step."""
    # vLLM's decode-first scheduler (SGLang's prefill-first cohorts have their own TPOT,
    # serving.tpot_mean_s; tests/formulas/test_scheduler_sim.py)
    off, on = _r1(engine="vllm"), _r1(engine="vllm", spec_method="mtp")
    assert on["decode_steps_per_request"] == pytest.approx(1023 / 1.875)
    assert on["residence_steps"] == pytest.approx(1 + 1023 / 1.875) == 546.6
    assert on["request_tokens"] == pytest.approx(1024 + 2 * 1023 / 1.875) == 2115.2
    assert off["residence_steps"] == 1024 and off["request_tokens"] == 2047
    # the decode-only step by hand from its operators (serving._step_kind_s with verify 2),
    # on the busiest of the 8 expert ranks (32 experts each, z = 1.4253:
    # planner.formulas.expert_parallel)
    b, v = on["closed_loop_batch"], 2
    assert b == 64
    z = on["expert_rank_max_sd"]
    assert z == pytest.approx(1.4253, abs=1e-4)
    q = 1 - (1 - 8 / 256) ** (b * v)
    weights = on["serving_dense_weights_s"] + on["serving_expert_weights_s"] * (
        q + min(1 - q, z * math.sqrt(q * (1 - q) / 32)))
    extra_tokens = z * math.sqrt(b * v * 7 * 248 / (8 * 255))
    gemms = max(b * v * (on["gemm_s_per_token"] + on["lm_head_s_per_token"])
                + on["expert_gemm_s_per_token"] * extra_tokens, weights)
    attention = b * max(on["decode_compute_s_per_token"]
                        - v * on["gemm_s_per_token"] - v * on["lm_head_s_per_token"], 0,
                        on["decode_kv_s_per_token"])
    decode = gemms + attention + b * v * on["serving_token_s"] + on["serving_step_fixed_s"]
    assert on["closed_loop_decode_step_s"] == pytest.approx(decode, rel=1e-12)
    # the drafter's fixed part is in the fixed step: one MTP pass a step
    assert on["serving_step_fixed_s"] == pytest.approx(
        off["serving_step_fixed_s"] + on["spec_draft_fixed_s"], rel=1e-12)
    assert on["spec_draft_fixed_s"] > 0
    # TPOT = mean step of a request's decode steps / a
    cohort = min(b * 1024, BUDGET)  # the prefill step: a cohort's prompts beside the others
    n = min(cohort, BUDGET - (b - cohort / 1024))
    share = min(max(b * 1024 / n - 1, 0) / (1023 / 1.875), 1)
    step = on["closed_loop_decode_step_s"] + share * (
        on["closed_loop_prefill_step_s"] - on["closed_loop_decode_step_s"])
    assert on["tpot_mean_s"] == pytest.approx(step / 1.875, rel=1e-12)
    # throughput: 64 requests every residence, at the mean step
    per_step = min(b / 546.6, BUDGET / 2115.2)
    assert on["output_tokens_per_s"] == pytest.approx(
        per_step / on["closed_loop_step_s"] * 1024, rel=1e-12)
    # what MTP buys here: the step grows (2 tokens a sequence, the MTP pass) by less than
    # the 1.875 tokens it yields
    assert 1.3 < off["tpot_mean_s"] / on["tpot_mean_s"] < 1.875
    assert 1.3 < on["output_tokens_per_s"] / off["output_tokens_per_s"] < 1.875


def test_mtp_kv_and_weights_shrink_the_batch() -> None:
    """The MTP layer keeps its own KV (1 + 1/61 pool tokens per context token), every
    sequence holds one lookahead slot, and the module's weights (a 61st of the model's per
    GPU) come off the pool."""
    off, on = _r1(max_num_seqs=100000), _r1(spec_method="mtp", max_num_seqs=100000)
    assert on["spec_kv_token_factor"] == pytest.approx(1 + 1 / 61)
    assert on["spec_draft_weights_bytes_per_gpu"] == pytest.approx(
        off["weights_bytes_per_gpu"] / 61)
    assert on["engine_weights_bytes_per_gpu"] == pytest.approx(
        off["engine_weights_bytes_per_gpu"] + on["spec_draft_weights_bytes_per_gpu"])
    context = on["mean_decode_context_tokens"]
    assert on["max_running_batch"] == math.floor(
        on["engine_token_capacity"] / ((context + 1) * (1 + 1 / 61) + on["engine_state_tokens"]))
    assert on["max_running_batch"] < off["max_running_batch"]


def test_prefix_hit_ttft_by_hand() -> None:
    """Llama-3-8B on one H100 under vLLM, open loop at 0.5 requests/s, 4096-token prompts
    with 75 % served from the cache: 1024 tokens computed, in one chunk of the 8192-token
    budget; their FLOPs are 2 * 1024 * P_linear, the attention of queries 3073..4096 over
    their contexts (per_pair * (4096*4097/2 - 3072*3073/2)) and one position's logits. TTFT's
    service time is that chunk's compute on top of the operating step."""
    spec, gpu = resolve_model_spec("llama-3-8b"), resolve_gpu("h100-sxm")
    inputs = {"engine": "vllm", "prompt_tokens": 4096, "output_tokens": 128,
              "target_requests_per_s": 0.5}
    off = estimate(spec, gpu, inputs)
    on = estimate(spec, gpu, {**inputs, "prefix_cache_hit_fraction": 0.75})
    assert on["prefill_tokens_computed"] == 1024 and on["prefix_cache_shared_tokens"] == 3072
    pairs = 4096 * 4097 / 2 - 3072 * 3073 / 2
    f = model_figures(spec)
    flops = (2 * 1024 * on["matmul_params_per_token"] + f.model_attn_flops_per_pair_full * pairs
             + 2 * f.model_lm_head_matmul_params)
    assert on["prefill_flops_computed"] == pytest.approx(flops, rel=1e-12)
    assert on["prefill_flops_computed"] < 0.3 * off["prefill_flops"]
    chunk_compute = 1024 * on["prefill_compute_s_per_token"]  # = flops / (peak * efficiency)
    service = (max(on["step_compute_s"] + chunk_compute, on["step_memory_s"])
               + on["step_elementwise_s"] + on["step_communication_s"]
               + 1024 * on["serving_token_s"] + on["step_overhead_s"] + on["step_host_link_s"])
    assert on["prefill_steps_per_request"] == 1
    assert on["ttft_service_s"] == pytest.approx(service, rel=1e-12)
    assert on["ttft_mean_s"] == pytest.approx(
        on["queue_wait_mean_s"] + on["step_s"] / 2 + service
        + on["request_latency_effective_s"], rel=1e-12)
    assert on["ttft_service_s"] < 0.5 * off["ttft_service_s"]
    # the decode phase still reads the whole context: the same KV read per decode token
    assert on["mean_decode_context_tokens"] == off["mean_decode_context_tokens"]


def test_prefix_hit_shares_the_cached_blocks_in_the_pool() -> None:
    """The cached prefix is held once: floor((capacity - 3072) / (context - 3072))."""
    spec, gpu = resolve_model_spec("llama-3-8b"), resolve_gpu("h100-sxm")
    inputs = {"engine": "vllm", "prompt_tokens": 4096, "output_tokens": 128,
              "max_num_seqs": 100000, "prefix_cache_hit_fraction": 0.75}
    r = estimate(spec, gpu, inputs)
    off = estimate(spec, gpu, {**inputs, "prefix_cache_hit_fraction": 0.0})
    context = 4096 + 64
    assert off["max_running_batch"] == math.floor(off["engine_token_capacity"] / context)
    assert r["max_running_batch"] == math.floor(
        (r["engine_token_capacity"] - 3072) / (context - 3072))


def test_draft_model_reads_its_catalog_figures() -> None:
    """Llama-3-70B drafted by Llama-3-8B (the same tokenizer): its parameters per draft
    token, 5 drafts at alpha 0.7 by default; its weights sit beside the target's."""
    target, draft = resolve_model_spec("llama-3-70b"), resolve_model_spec("llama-3-8b")
    inputs = {"engine": "vllm", "gpus": 4, "tp": 4, "concurrency": 8}
    off = estimate(target, H200, inputs)
    on = estimate(target, H200, {**inputs, "spec_method": "draft",
                                 "spec_draft_model": "llama-3-8b"})
    f = model_figures(draft)
    assert on["spec_draft_tokens_effective"] == 5
    assert on["spec_acceptance_length_effective"] == pytest.approx(typical_acceptance_length(
        0.7, 5))
    assert on["spec_draft_flops_per_step"] == pytest.approx(
        5 * 2 * (f.model_matmul_dense_params + f.model_matmul_experts_active_params
                 + f.model_lm_head_matmul_params))
    assert on["spec_draft_weights_bytes_per_gpu"] == pytest.approx(
        f.model_params_total * 2 / 4)
    assert on["tpot_mean_s"] < off["tpot_mean_s"]


@pytest.mark.parametrize(("extra", "field"), [
    ({"spec_method": "mtp", "spec_acceptance_length": 2.5}, "spec_acceptance_length"),
    ({"spec_method": "mtp", "spec_acceptance_length": 0.5}, "spec_acceptance_length"),
    ({"spec_method": "draft"}, "spec_draft_model"),
    ({"spec_method": "mtp", "spec_draft_model": "llama-3-8b"}, "spec_draft_model"),
    ({"spec_method": "eagle"}, "spec_method"),
    ({"spec_draft_tokens": 65}, "spec_draft_tokens"),
    ({"prefix_cache_hit_fraction": 1.5}, "prefix_cache_hit_fraction"),
])
def test_bad_inputs_name_the_field(extra: dict[str, Any], field: str) -> None:
    with pytest.raises(PlannerError, match=field) as caught:
        _r1(**extra)
    assert "\n" not in str(caught.value)


def test_bad_input_message_says_the_range() -> None:
    with pytest.raises(PlannerError) as caught:
        _r1(spec_method="mtp", spec_acceptance_length=2.5)
    assert str(caught.value) == ("spec_acceptance_length: must be a number from 1 to 2 (k + 1 "
                                 "with k = 1 draft tokens), or 0 for the method's typical "
                                 "value (got 2.5)")


@pytest.mark.slow
def test_store_csv_and_workbook_keep_the_inputs(tmp_path: Path) -> None:
    """Scenarios with MTP (a draft count, an acceptance length, a prefix hit) and with a draft
    model: stored, read back, written as a CSV and imported into another fleet with the same
    inputs, exported to a workbook whose live formulas recompute (the `formulas` package)
    every output of those rows as the planner does, and imported back changing nothing; a
    bad value is refused and leaves the fleet as it was."""
    import pandas as pd

    from tests.io.test_report import _close, formulas_values

    mtp = {"spec_method": "mtp", "spec_draft_tokens": 3, "spec_acceptance_length": 2.6,
           "prefix_cache_hit_fraction": 0.4}
    draft = {"spec_method": "draft", "spec_draft_model": "llama-3-8b"}
    with Workspace.open(f"sqlite:///{tmp_path / 'spec.db'}") as ws:
        base = next(s for s in ws.scenarios("demo") if s.kind == "inference")
        ws.new_scenario("demo", "mtp-row", model=base.model, gpu=base.gpu, engine="sglang",
                        concurrency=16, **mtp)
        ws.new_scenario("demo", "draft-row", model="llama-3-70b", gpu="h200", engine="vllm",
                        gpus=4, tp=4, target_requests_per_s=1.0, **draft)
        stored = {n: ws.scenario("demo", n) for n in ("mtp-row", "draft-row")}
        assert {k: stored["mtp-row"].inputs[k] for k in mtp} == mtp
        assert stored["mtp-row"].inputs["spec_draft_model"] == ""
        assert stored["draft-row"].inputs["spec_draft_model"] == "llama-3-8b"
        before = len(ws.scenarios("demo"))
        with pytest.raises(PlannerError, match="prefix_cache_hit_fraction"):
            ws.new_scenario("demo", "bad-row", model=base.model, gpu=base.gpu,
                            prefix_cache_hit_fraction=2.0)
        assert len(ws.scenarios("demo")) == before
        # CSV: the stored inputs, imported into another fleet, come back the same
        frame = pd.DataFrame([{"name": sc.name, "model": sc.model, "gpu": sc.gpu,
                               **sc.inputs} for sc in stored.values()])
        csv = tmp_path / "spec.csv"
        frame.to_csv(csv, index=False)
        ws.new_fleet("copy")
        assert ws.import_scenarios("copy", csv).created == 2
        again = {n: ws.scenario("copy", n) for n in stored}
        for name, sc in stored.items():
            assert again[name].inputs == sc.inputs
        out = dict(zip(stored, ws.evaluate_many(list(stored.values())), strict=True))
        assert out["mtp-row"]["spec_acceptance_length_effective"] == 2.6
        assert out["mtp-row"]["prefill_tokens_computed"] == pytest.approx(
            stored["mtp-row"].inputs["prompt_tokens"] * 0.6)
        assert out["draft-row"]["spec_draft_tokens_effective"] == 5
        # the workbook: inputs as values, outputs as live formulas that recompute the same
        book = tmp_path / "spec.xlsx"
        ws.export(book, ["copy"])
        import openpyxl

        from planner.compute.table import graph
        from planner.io.xlsx.layout import letters

        sheet = openpyxl.load_workbook(book)["Scenarios"]
        col = letters("inference")
        rows = {sheet[f"{col['name']}{r}"].value: r for r in range(2, sheet.max_row + 1)}
        assert sheet[f"{col['spec_method']}{rows['mtp-row']}"].value == "mtp"
        assert sheet[f"{col['spec_acceptance_length']}{rows['mtp-row']}"].value == 2.6
        assert str(sheet[f"{col['tpot_mean_s']}{rows['mtp-row']}"].value).startswith("=")
        values = formulas_values(book)
        checked = 0
        for name, r in ((n, rows[n]) for n in stored):
            for output in graph("inference").outputs:
                got = values[("Scenarios", f"{col[output]}{r}")]
                assert _close(got, out[name][output]), (name, output, got, out[name][output])
                checked += 1
        assert checked == 2 * len(graph("inference").outputs)
        plans = ws.import_workbook(book)
        assert all(not p.fields for p in plans)
        for name in stored:
            assert dataclasses.asdict(ws.scenario("copy", name)) == dataclasses.asdict(
                again[name])


@pytest.mark.slow
@pytest.mark.empty_database
def test_migration_0015_up_gives_defaults_and_down_drops(tmp_path: Path) -> None:
    """Upgrading a 0013 database gives every stored scenario none / 0 / 0 / blank / 0 (the
    serving model before these inputs); a downgrade to 0013 drops the five columns and an
    upgrade brings them back at those values."""
    from sqlalchemy import inspect, text

    from planner.store import migrate
    from planner.store.engine import make_engine

    url = f"sqlite:///{tmp_path / 'm.db'}"
    with Workspace.open(url) as ws:
        count = len(ws.scenarios("demo"))
        base = next(s for s in ws.scenarios("demo") if s.kind == "inference")
        ws.new_scenario("demo", "mtp-row", model=base.model, gpu=base.gpu,
                        spec_method="mtp", prefix_cache_hit_fraction=0.5)
    names = reference.NEW_INPUTS
    engine = make_engine(url)
    migrate.downgrade(engine, "0014")  # 0015's parent since the merge
    with engine.connect() as conn:
        assert not names & {c["name"] for c in inspect(conn).get_columns("scenarios")}
        assert conn.execute(text("SELECT count(*) FROM scenarios")).scalar() == count + 1
    migrate.upgrade(engine)
    assert migrate.current(engine) == migrate.SCHEMA_HEAD  # 0016 after 0015 since the merge
    with engine.connect() as conn:
        rows = set(conn.execute(text(
            "SELECT spec_method, spec_draft_tokens, spec_acceptance_length, spec_draft_model, "
            "prefix_cache_hit_fraction FROM scenarios")))
    engine.dispose()
    assert rows == {("none", 0, 0.0, "", 0.0)}


def test_table_and_row_paths_agree_bit_for_bit() -> None:
    """Rows without speculation, with MTP, with a draft model and with a prefix hit, as one
    numpy table and one by one through the compiled row function: every column the same bits
    (the draft figures looked up per row in the table)."""
    import numpy as np

    from planner.compute.table import evaluate_row, evaluate_table, graph
    from planner.spec import catalog
    from tests.compute.test_rowfn import _same, _table

    models = {name: catalog.resolve_model_spec(name) for name in catalog.model_names()}
    gpus = {name: catalog.resolve_gpu(name) for name in ("h200", "h100-sxm", "mi300x")}
    rows: list[dict[str, Any]] = [
        {"model": "deepseek-v3", "gpu": "h200", "gpus": 8, "tp": 8, "engine": "sglang",
         "weight_dtype": "fp8", "concurrency": 32},
        {"model": "deepseek-v3", "gpu": "h200", "gpus": 8, "tp": 8, "engine": "sglang",
         "weight_dtype": "fp8", "concurrency": 32, "spec_method": "mtp"},
        {"model": "deepseek-v3", "gpu": "mi300x", "gpus": 8, "tp": 8, "engine": "vllm",
         "weight_dtype": "fp8", "target_requests_per_s": 2.0, "spec_method": "mtp",
         "spec_draft_tokens": 3, "spec_acceptance_length": 2.4,
         "prefix_cache_hit_fraction": 0.3},
        {"model": "llama-3-70b", "gpu": "h200", "gpus": 4, "tp": 4, "engine": "vllm",
         "concurrency": 16, "spec_method": "draft", "spec_draft_model": "llama-3-8b"},
        {"model": "llama-3-70b", "gpu": "h100-sxm", "gpus": 4, "tp": 4, "engine": "trtllm",
         "target_requests_per_s": 1.0, "spec_method": "draft", "spec_draft_model": "llama-2-7b",
         "spec_draft_tokens": 4, "prefix_cache_hit_fraction": 0.9, "slo_tpot_s": 0.05},
        {"model": "llama-3-8b", "gpu": "h100-sxm", "engine": "vllm", "prompt_tokens": 4096,
         "prefix_cache_hit_fraction": 1.0, "target_requests_per_s": 3.0, "slo_ttft_s": 0.5},
    ]
    table = evaluate_table(_table("inference", rows), models, gpus, "inference")
    assert np.asarray(table["spec_draft_tokens_effective"]).tolist() == [0, 1, 3, 5, 4, 0]
    assert np.asarray(table["prefill_tokens_computed"])[-1] == 1  # all cached: the last token
    for i, row in enumerate(rows):
        one = evaluate_row(row, models, gpus, "inference")
        for name in graph("inference").order:
            assert _same(one[name], table[name][i]), (i, name, one[name], table[name][i])
