"""The MoE layer's token exchange under expert parallelism and attention DP
(planner.formulas.expert_parallel, issue 25 item 5), with figures worked by hand.

Wiring is the GPU catalog's (``seeds/gpus.toml``): H100 SXM and H200 on 8-GPU NVSwitch boards
(900 GB/s, 450e9 B/s each way) with one 400 Gb/s NIC per GPU (50e9 B/s); GB200 in one NVL72
domain (1.8 TB/s, 900e9 B/s each way). DeepSeek-V3 (``seeds/models/deepseek-v3.json``): 61
layers, hidden 7,168, top-8 of 256 experts. Defaults: ``collective_efficiency`` 0.7,
``collective_latency_s`` 10 us.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from planner.compute import symbolic
from planner.compute.inputs import INFERENCE_INPUTS, parse_inputs
from planner.compute.table import graph
from planner.formulas import expert_parallel as xp
from planner.formulas import topology as tp_
from planner.formulas.serving_columns import SERVING
from planner.service import scenario_columns
from planner.spec.catalog import load_gpus, resolve_model_spec

GPUS = load_gpus()
DSV3 = resolve_model_spec("deepseek-v3")
GRAPH = graph("inference")
L, D, K = 61, 7168, 8
EFF, LAT = 0.7, 1e-5


def run(gpu: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Every column of DeepSeek-V3 on ``gpu`` with ``inputs``."""
    cols = scenario_columns(DSV3, GPUS[gpu], parse_inputs(INFERENCE_INPUTS, inputs))
    return GRAPH.compute(cols)


def test_all_to_all_volume_by_hand() -> None:
    # EP 8, FP8 dispatch with its per-128 fp32 scales (1.03125 B), BF16 combine:
    # 8 * 7/8 * 7,168 * 3.03125 = 152,096 B per token of the sending GPU and layer
    assert xp.all_to_all_bytes_per_token(8, K, D, 1 + 4 / 128, 2) == pytest.approx(152_096)
    assert xp.all_to_all_bytes_per_token(1, K, D, 2, 2) == 0
    # all-gather + reduce-scatter over 8 ranks, BF16: 7/8 * 7,168 * 4 = 25,088 B per step token
    assert xp.gather_scatter_bytes_per_token(8, D, 2, 2) == pytest.approx(25_088)
    assert xp.gather_scatter_bytes_per_token(1, D, 2, 2) == 0


def test_all_to_all_inside_one_nvl72_domain() -> None:
    """TRT-LLM, attention DP, EP 16 > top-8 on GB200: the MNNVL all-to-all over NVLink. NVFP4
    activations (W4A4): the dispatch sends 0.5625 B per element, the combine BF16."""
    r = run("gb200", {"engine": "trtllm", "tp": 16, "gpus": 16, "ep": 16, "attention_dp": True,
                      "weight_dtype": "nvfp4", "quant_mode": "weight_activation"})
    assert r["moe_exchange_code"] == xp.ALL_TO_ALL
    assert r["moe_dispatch_bytes"] == 0.5625
    assert r["ep_link_bytes_per_s"] == 900e9
    # per layer and step token: 8 * 15/16 * 7,168 * 2.5625 / 16 GPUs = 8,610 B over 630 GB/s
    assert r["moe_comm_s_per_token"] == pytest.approx(L * 8_610 / 630e9, rel=1e-12)
    assert r["serving_comm_s_per_token"] == r["moe_comm_s_per_token"]  # no TP all-reduce
    assert r["moe_collective_latency_s"] == LAT
    assert r["collective_latency_s_per_step"] == pytest.approx(2 * L * LAT, rel=1e-12)
    # BF16 activations (NVFP4 weight-only): 13,440 B per layer and token
    bf16 = run("gb200", {"engine": "trtllm", "tp": 16, "gpus": 16, "ep": 16,
                         "attention_dp": True, "weight_dtype": "nvfp4",
                         "quant_mode": "weight_only"})
    assert bf16["moe_dispatch_bytes"] == 2
    # quant_mode auto serves NVFP4 W4A4 like the engines (gpu.W4A4_BY_DEFAULT): FP4 dispatch
    auto = run("gb200", {"engine": "trtllm", "tp": 16, "gpus": 16, "ep": 16,
                         "attention_dp": True, "weight_dtype": "nvfp4"})
    assert auto["moe_dispatch_bytes"] == 0.5625
    assert bf16["moe_dispatch_bytes"] == 2
    assert bf16["moe_comm_s_per_token"] == pytest.approx(L * 13_440 / 630e9, rel=1e-12)


def test_all_to_all_across_domains_by_hand() -> None:
    """EP 16 on H100 SXM boards of 8 (a DeepEP-style all-to-all, the plain function): 8 of a
    GPU's 15 peers sit behind its 400 Gb/s NIC, so the link is
    1 / (8/15 / 50e9 + 7/15 / 450e9) = 85.44 GB/s, and each collective pays one network step
    on top of the 10 us."""
    link = tp_.ep_link_bytes_per_s(16, 8, 900e9, 0, 5, 400)
    want_link = 1 / (8 / 15 / 50e9 + 7 / 15 / 450e9)
    assert link == pytest.approx(want_link, rel=1e-12)
    assert want_link == pytest.approx(85.443e9, rel=1e-4)
    # FP8 dispatch, BF16 combine: 8 * 15/16 * 7,168 * 3.03125 / 16 = 10,185 B per step token
    got = xp.all_to_all_s_per_token(16, 16, K, D, 1.03125, 2, link, EFF)
    assert got == pytest.approx(10_185 / (want_link * EFF), rel=1e-12)
    inside = xp.all_to_all_s_per_token(8, 8, K, D, 1.03125, 2, 450e9, EFF)
    assert inside == pytest.approx(8 * 7 / 8 * D * 3.03125 / 8 / (450e9 * EFF), rel=1e-12)
    assert xp.exchange_latency_s(16, 8, LAT) == pytest.approx(LAT + tp_.NIC_HOP_LATENCY_S)
    assert xp.exchange_latency_s(8, 8, LAT) == LAT
    assert xp.exchange_latency_s(72, 72, LAT) == LAT  # NVL72: one island
    assert xp.all_to_all_s_per_token(16, 16, K, D, 1.03125, 2, 0.0, EFF) == 0  # link unknown


def test_attention_dp_gathers_and_scatters_on_an_hgx_board() -> None:
    """TRT-LLM on H200 (no multi-node NVLink), attention DP over 8, EP 8: an all-gather before
    the experts and a reduce-scatter after, BF16 (the FP8 block-scale path sends BF16)."""
    r = run("h200", {"engine": "trtllm", "tp": 8, "gpus": 8, "ep": 8, "attention_dp": True,
                     "weight_dtype": "fp8"})
    assert r["moe_exchange_code"] == xp.GATHER_SCATTER
    assert r["moe_dispatch_bytes"] == 2
    # 61 layers x 7/8 x 7,168 x 4 B = 1,530,368 B per step token over 450 GB/s x 0.7
    assert r["moe_comm_s_per_token"] == pytest.approx(1_530_368 / 315e9, rel=1e-12)
    assert r["serving_comm_s_per_token"] == r["moe_comm_s_per_token"]
    assert r["collective_latency_s_per_step"] == pytest.approx(122 * LAT, rel=1e-12)
    # attention DP with tensor-parallel experts (EP 1) gathers the same way
    tp_experts = run("h200", {"engine": "trtllm", "tp": 8, "gpus": 8, "ep": 1,
                              "attention_dp": True, "weight_dtype": "fp8"})
    assert tp_experts["moe_exchange_code"] == xp.GATHER_SCATTER
    assert tp_experts["moe_comm_s_per_token"] == r["moe_comm_s_per_token"]
    # vLLM and SGLang gather by default, on NVL72 too (DeepEP is not their default)
    for engine in ("vllm", "sglang"):
        other = run("gb200", {"engine": engine, "tp": 16, "gpus": 16, "ep": 16,
                              "attention_dp": True, "weight_dtype": "fp8"})
        assert other["moe_exchange_code"] == xp.GATHER_SCATTER


def test_attention_dp_across_hosts_gathers_over_the_nics() -> None:
    """16 H100s (two boards): the gather crosses the NICs, 8 x 50e9 = 400e9 B/s per board
    (below NVLink's 450e9), and each collective pays one network step."""
    r = run("h100-sxm", {"engine": "trtllm", "tp": 16, "gpus": 16, "ep": 16,
                         "attention_dp": True, "weight_dtype": "fp8"})
    assert r["moe_exchange_code"] == xp.GATHER_SCATTER
    assert r["tp_link_bytes_per_s"] == 400e9
    assert r["moe_comm_s_per_token"] == pytest.approx(L * 15 / 16 * D * 4 / 280e9, rel=1e-12)
    assert r["moe_collective_latency_s"] == pytest.approx(LAT + 8e-6)
    assert r["collective_latency_s_per_step"] == pytest.approx(2 * L * (LAT + 8e-6), rel=1e-12)


def test_tensor_parallel_attention_needs_no_exchange_whatever_ep() -> None:
    """TP attention: every GPU holds every token, the layer's all-reduce sums the experts'
    partial outputs, so EP 8 communicates exactly as EP 1."""
    base = {"engine": "trtllm", "tp": 8, "gpus": 8, "weight_dtype": "fp8"}
    ep1, ep8 = run("h200", {**base, "ep": 1}), run("h200", {**base, "ep": 8})
    assert ep8["moe_exchange_code"] == xp.IN_ALLREDUCE
    assert ep8["moe_comm_s_per_token"] == 0
    for name in ("serving_comm_s_per_token", "collective_latency_s_per_step",
                 "serving_step_fixed_s"):
        assert ep8[name] == ep1[name], name
    # two all-reduces per layer: 2 x 61 x 2 x 7/8 x 7,168 x 2 B over 315 GB/s; 122 x 10 us
    assert ep8["serving_comm_s_per_token"] == pytest.approx(
        2 * L * 2 * 7 / 8 * D * 2 / 315e9, rel=1e-12)
    assert ep8["collective_latency_s_per_step"] == pytest.approx(122 * LAT, rel=1e-12)


@pytest.mark.parametrize(("model", "gpu", "inputs"), [
    ("llama-3-8b", "h100-sxm", {"engine": "vllm", "tp": 2, "gpus": 2}),
    ("mixtral-8x7b", "h100-sxm", {"engine": "sglang", "tp": 4, "gpus": 8, "pp": 2}),
    ("deepseek-v3", "h200", {"engine": "trtllm", "tp": 8, "gpus": 8, "weight_dtype": "fp8"}),
])
def test_rows_without_ep_or_attention_dp_keep_the_former_step(model: str, gpu: str,
                                                              inputs: dict[str, Any]) -> None:
    """The former fixed step and communication, written out, are reproduced bit for bit."""
    spec = resolve_model_spec(model)
    r = GRAPH.compute(scenario_columns(spec, GPUS[gpu], parse_inputs(INFERENCE_INPUTS, inputs)))
    tp, pp, layers = r["tp"], r["pp"], r["model_layers"]
    collectives = (2 * layers if tp > 1 else 0) + 0 + pp - 1
    fixed = (r["engine_step_overhead_s"]
             + layers * (r["kernel_overhead_s_per_layer"] * r["model_layer_kernels"] / 9)
             + collectives * r["collective_latency_s"]) + r["host_weight_stream_s"]
    assert r["serving_step_fixed_s"] == fixed
    allreduce = 2 * layers * 2 * (tp - 1) / tp * r["model_hidden_size"] * r["activation_bytes"]
    former = (allreduce / (r["tp_link_bytes_per_s"] * r["collective_efficiency"]) if tp > 1
              else 0.0) + 0.0
    assert r["serving_comm_s_per_token"] == former


def test_columns_agree_on_numpy_rows_scalars_and_excel_formulas() -> None:
    """The exchange columns over a mixed vector of engines, domains, EP and attention DP give
    the same figures row by row and through their symbolic (Excel) form."""
    cols = scenario_columns(DSV3, GPUS["gb200"], parse_inputs(
        INFERENCE_INPUTS, {"engine": "trtllm", "tp": 16, "gpus": 16, "weight_dtype": "fp8"}))
    n = 8
    cols = dict(cols)
    cols.update(engine=np.array(["trtllm", "vllm", "trtllm", "sglang"] * 2, dtype=object),
                ep=np.array([16.0, 16.0, 4.0, 1.0, 16.0, 8.0, 16.0, 2.0]),
                attention_dp=np.array([True, True, True, True, False, False, True, True]),
                gpu_nvlink_domain_gpus=np.array([72.0, 72.0, 72.0, 8.0, 72.0, 8.0, 8.0, 72.0]))
    vec = GRAPH.compute(cols)
    assert list(vec["moe_exchange_code"]) == [2, 1, 1, 1, 0, 0, 1, 1]
    mine = ("moe_exchange_code", "moe_dispatch_bytes", "moe_comm_s_per_token",
            "moe_collective_latency_s", "collective_latency_s_per_step",
            "serving_comm_s_per_token", "serving_step_fixed_s")
    for i in range(n):
        one = {k: (v[i] if isinstance(v, np.ndarray) and v.dtype == object
                   else float(v[i]) if isinstance(v, np.ndarray) else v) for k, v in cols.items()}
        scalar = GRAPH.compute(one)
        for name in mine:
            assert float(scalar[name]) == pytest.approx(
                float(np.broadcast_to(vec[name], (n,))[i]), rel=1e-12), name
    by_name = {f.__name__: f for f in SERVING}
    for name in mine:
        expr = symbolic.symbolic(by_name[name])
        symbolic.excel(expr, lambda ref: ref.upper())
        got = symbolic.compute_tree(expr, vec)
        assert np.allclose(np.broadcast_to(np.asarray(got, dtype=float), (n,)),
                           np.broadcast_to(np.asarray(vec[name], dtype=float), (n,)),
                           rtol=1e-12), name


def test_attention_dp_splits_the_kv_per_rank() -> None:
    """DeepSeek-V3's MLA cache has one latent head, which tensor-parallel attention keeps whole
    on every GPU; under attention DP each rank holds only its own requests' cache, so a
    request's KV traffic per GPU is 1/8 of TP8's and the replica holds more tokens (less than
    8x: attention weights are replicated on every rank)."""
    base = {"engine": "trtllm", "tp": 8, "gpus": 8, "ep": 8, "weight_dtype": "fp8",
            "kv_dtype": "fp8"}
    tp8, dp8 = run("h200", base), run("h200", {**base, "attention_dp": True})
    assert (tp8["kv_fraction_per_gpu"], dp8["kv_fraction_per_gpu"]) == (1.0, 0.125)
    assert dp8["serving_kv_memory_s_per_request"] == pytest.approx(
        tp8["serving_kv_memory_s_per_request"] / 8, rel=1e-12)
    assert dp8["attention_replicated_bytes_per_gpu"] > 0
    assert tp8["engine_token_capacity"] < dp8["engine_token_capacity"] \
        < 8 * tp8["engine_token_capacity"]


# ------------------------------------------------------------------ the busiest expert rank


def _normal_max(n: int) -> float:
    """Expected maximum of ``n`` standard normals by quadrature of ``n x phi(x) Phi(x)^(n-1)``."""
    x = np.linspace(-10, 10, 200_001)
    dx = x[1] - x[0]
    phi = np.exp(-x * x / 2) / np.sqrt(2 * np.pi)
    cdf = np.cumsum(phi) * dx
    return float(np.sum(x * n * phi * cdf ** (n - 1)) * dx)


@pytest.mark.parametrize("n", [2, 3, 4, 6, 8, 12, 16, 32, 64, 72, 128, 256])
def test_expected_max_of_normals_against_quadrature(n: int) -> None:
    """Exact for 2 and 3 (1/sqrt(pi), 3/(2 sqrt(pi))), Chen-Tyler within 1.5 % from 4 on."""
    got, want = xp.expected_max_standard_normal(n), _normal_max(n)
    assert got == pytest.approx(want, rel=1e-4 if n <= 3 else 0.015)  # quadrature: 1e-5
    assert xp.expected_max_standard_normal(1) == 0
    assert xp.expected_max_standard_normal(2) == pytest.approx(1 / np.sqrt(np.pi), rel=1e-15)
    assert xp.expected_max_standard_normal(3) == pytest.approx(1.5 / np.sqrt(np.pi), rel=1e-15)


def test_busiest_rank_by_hand() -> None:
    """DeepSeek-V3 (E 256, k 8) over EP 8 (32 experts a rank), z = 1.4253 (8 ranks).
    64 tokens touch q = 1 - (31/32)^64 = 0.8687 of the experts; the busiest rank
    q + z sqrt(q (1 - q)/32) = 0.9539 of its own. 8,192 prompt tokens: z sqrt(8192 * 7 * 248 /
    (8 * 255)) = 1.4253 * 83.49 = 119.0 tokens of expert work more than the mean. One rank:
    exactly 0 of both."""
    z = xp.expected_max_standard_normal(8)
    assert z == pytest.approx(1.4253, abs=1e-4)
    q = 1 - (31 / 32) ** 64
    assert xp.busiest_rank_touch_extra(64, 256, 8, 8, z) == pytest.approx(
        z * np.sqrt(q * (1 - q) / 32), rel=1e-12)
    assert q + xp.busiest_rank_touch_extra(64, 256, 8, 8, z) == pytest.approx(0.9539, abs=1e-4)
    assert xp.busiest_rank_touch_extra(4096, 256, 8, 8, z) == 0  # every expert touched
    assert xp.busiest_rank_expert_tokens_extra(8192, 256, 8, 8, z) == pytest.approx(
        z * np.sqrt(8192 * 7 * 248 / (8 * 255)), rel=1e-12)
    assert xp.busiest_rank_expert_tokens_extra(8192, 256, 8, 8, z) == pytest.approx(119.0,
                                                                                    abs=0.1)
    assert xp.busiest_rank_touch_extra(64, 256, 8, 1, 0) == 0
    assert xp.busiest_rank_expert_tokens_extra(64, 256, 8, 1, 0) == 0


@pytest.mark.parametrize(("tokens", "experts", "k", "ep", "rel"), [
    (8, 256, 8, 8, 0.05), (64, 256, 8, 8, 0.05), (256, 256, 8, 8, 0.05),
    (16, 256, 8, 32, 0.1), (32, 128, 8, 4, 0.05), (64, 384, 8, 16, 0.05)])
def test_busiest_rank_against_uniform_routing_sampled(tokens: int, experts: int, k: int,
                                                      ep: int, rel: float) -> None:
    """The closed forms against routing sampled as the mechanism states it (each token draws
    k distinct experts uniformly; rank r holds experts r*E/ep .. (r+1)*E/ep - 1): the busiest
    rank's touched share and its (token, expert) pairs, mean over 300 steps, within 5 %
    (the normal approximation of a discrete maximum), 10 % where a rank's mean is 4 pairs
    (16 tokens over EP 32: 8.0 against 8.6 sampled, the approximation low)."""
    rng = np.random.default_rng(23)
    m = experts // ep
    touched, pairs = [], []
    for _ in range(300):
        picks = np.argsort(rng.random((tokens, experts)), axis=1)[:, :k]
        per_rank = np.bincount(picks.ravel(), minlength=experts).reshape(ep, m)
        touched.append((per_rank > 0).sum(axis=1).max() / m)
        pairs.append(per_rank.sum(axis=1).max())
    z = xp.expected_max_standard_normal(ep)
    from planner.formulas.latency import expert_touch_fraction
    share = expert_touch_fraction(tokens, experts, k) + xp.busiest_rank_touch_extra(
        tokens, experts, k, ep, z)
    busiest_pairs = (tokens + xp.busiest_rank_expert_tokens_extra(tokens, experts, k, ep, z)) \
        * k / ep
    assert share == pytest.approx(np.mean(touched), rel=rel)
    assert busiest_pairs == pytest.approx(np.mean(pairs), rel=rel)


def test_expert_parallel_steps_wait_for_the_busiest_rank() -> None:
    """TP attention on 8 H200, 64 clients: EP 8 reads the busiest rank's share of its experts
    and runs its extra expert work, so its decode step is longer than TP'd experts' (EP 1),
    by exactly the written-out extras; EP 1 is the mean GPU (extras exactly 0)."""
    base = {"engine": "trtllm", "tp": 8, "gpus": 8, "weight_dtype": "fp8", "concurrency": 64,
            "prompt_tokens": 1024, "output_tokens": 1024}
    ep1, ep8 = run("h200", {**base, "ep": 1}), run("h200", {**base, "ep": 8})
    assert (ep1["expert_ranks"], ep8["expert_ranks"]) == (1, 8)
    assert ep1["expert_rank_max_sd"] == 0
    assert ep8["expert_rank_max_sd"] == pytest.approx(1.4253, abs=1e-4)
    assert ep8["closed_loop_decode_step_s"] > ep1["closed_loop_decode_step_s"]
    batch = ep8["closed_loop_batch"]
    q = 1 - (1 - 8 / 256) ** batch
    extra_m = ep8["serving_expert_weights_s"] * min(1 - q, ep8["expert_rank_max_sd"]
                                                    * np.sqrt(q * (1 - q) / 32))
    # decode steps of 64 sequences are bound by the weights they read: the extra adds as is
    assert ep8["closed_loop_decode_step_s"] - ep1["closed_loop_decode_step_s"] == \
        pytest.approx(extra_m, rel=1e-9)


def test_busiest_rank_columns_agree_on_rows_and_excel() -> None:
    """The busiest-rank columns and the steps that read them over a vector of EP sizes give
    the same figures row by row and through their symbolic (Excel) form."""
    cols = dict(scenario_columns(DSV3, GPUS["h200"], parse_inputs(
        INFERENCE_INPUTS, {"engine": "trtllm", "tp": 8, "gpus": 8, "weight_dtype": "fp8",
                           "concurrency": 32})))
    n = 6
    cols.update(ep=np.array([1.0, 2.0, 3.0, 4.0, 8.0, 8.0]),
                attention_dp=np.array([False, False, False, True, False, True]))
    vec = GRAPH.compute(cols)
    mine = ("expert_ranks", "expert_rank_max_sd", "expert_gemm_s_per_token",
            "closed_loop_decode_step_s", "closed_loop_prefill_step_s", "saturation_step_s",
            "wave_prefill_step_s")
    for i in range(n):
        one = {k: (v[i] if isinstance(v, np.ndarray) and v.dtype == object
                   else float(v[i]) if isinstance(v, np.ndarray) else v) for k, v in cols.items()}
        scalar = GRAPH.compute(one)
        for name in mine:
            assert float(scalar[name]) == pytest.approx(
                float(np.broadcast_to(vec[name], (n,))[i]), rel=1e-12), name
    by_name = {f.__name__: f for f in SERVING}
    for name in mine:
        expr = symbolic.symbolic(by_name[name])
        symbolic.excel(expr, lambda ref: ref.upper())
        got = symbolic.compute_tree(expr, vec)
        assert np.allclose(np.broadcast_to(np.asarray(got, dtype=float), (n,)),
                           np.broadcast_to(np.asarray(vec[name], dtype=float), (n,)),
                           rtol=1e-12), name


def test_a_disaggregated_decode_pool_waits_for_its_busiest_rank() -> None:
    """1P1D of DeepSeek-V3 on H200 (TRT-LLM, fp8, TP 8 workers, 64 clients): the decode
    worker at EP 8 reads the busiest rank's share of its experts, so its TPOT exceeds the
    TP'd experts' (decode_ep 1) by exactly decode_expert_weights_s * z sqrt(q (1 - q)/32)
    (64 sequences, q = 1 - (31/32)^64; decode steps bound by the weights they read); the
    prefill pool, at EP 1, keeps the mean."""
    from planner.compute.table import evaluate_row

    base = {"model": "deepseek-v3", "gpu": "h200", "engine": "trtllm", "prompt_tokens": 1024,
            "output_tokens": 1024, "weight_dtype": "fp8", "serving_mode": "disaggregated",
            "prefill_workers": 1, "decode_workers": 1, "tp": 8, "gpus": 8, "concurrency": 64}
    specs = {"deepseek-v3": DSV3}
    tp_experts = evaluate_row({**base, "decode_ep": 1}, specs, GPUS)
    ep8 = evaluate_row({**base, "decode_ep": 8}, specs, GPUS)
    assert (tp_experts["decode_expert_ranks"], ep8["decode_expert_ranks"]) == (1, 8)
    assert ep8["prefill_expert_ranks"] == 1 and ep8["decode_batch_3"] == 64
    q = 1 - (31 / 32) ** 64
    extra = ep8["decode_expert_weights_s"] * ep8["decode_expert_rank_max_sd"] * np.sqrt(
        q * (1 - q) / 32)
    assert ep8["disagg_tpot_mean_s"] - tp_experts["disagg_tpot_mean_s"] == pytest.approx(
        extra, rel=1e-9)
    assert extra == pytest.approx(1.645e-3, rel=1e-3)
