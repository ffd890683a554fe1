"""Each disaggregated pool's links and the per-token seconds they add to its steps.

Why this module exists: the prefill and decode pools of a disaggregated deployment run their
own TP and EP, and the decode pool may sit on another GPU type, so each pool's TP all-reduce
and MoE exchange cross their own links. The link bandwidths are columns of their own
(``prefill_tp_link_bytes_per_s`` ... ``decode_ep_link_bytes_per_s``, the pool's counterparts of
:func:`planner.formulas.topology.tp_link_bytes_per_s` and ``ep_link_bytes_per_s``) rather
than terms inlined in ``prefill_token_s`` / ``decode_token_s``: a reader sees each link in
``explain`` and in the grid, and the workbook's formulas stay short. Inlined, each token-time
formula repeated the link trees and ran to 9,938 characters, past Excel's limit of 8,192
characters a formula (Microsoft, "Excel specifications and limits"), so Excel would have
refused the cells.

Every public function is a scenario column over the operator set
(:mod:`planner.formulas.ops`).
"""

from __future__ import annotations

from planner.formulas import expert_parallel as xp
from planner.formulas import serving_step, topology
from planner.formulas.ops import Value


def prefill_tp_link_bytes_per_s(prefill_tp_effective: Value, gpu_nvlink_domain_gpus: Value,
                                gpu_interconnect_bytes_per_s: Value,
                                gpu_mesh_links_per_gpu: Value, gpu_pcie_gen: Value,
                                gpu_nic_gbit_per_s: Value) -> Value:
    """Per-direction bus bandwidth (B/s) of a prefill worker's TP all-reduce on the scenario's
    GPU (:func:`planner.formulas.topology.tp_link_bytes_per_s` at the prefill TP)."""
    return topology.tp_link_bytes_per_s(prefill_tp_effective, gpu_nvlink_domain_gpus,
                                        gpu_interconnect_bytes_per_s, gpu_mesh_links_per_gpu,
                                        gpu_pcie_gen, gpu_nic_gbit_per_s)


def prefill_ep_link_bytes_per_s(prefill_ep_effective: Value, gpu_nvlink_domain_gpus: Value,
                                gpu_interconnect_bytes_per_s: Value,
                                gpu_mesh_links_per_gpu: Value, gpu_pcie_gen: Value,
                                gpu_nic_gbit_per_s: Value) -> Value:
    """Per-direction bandwidth (B/s) of a prefill worker's expert all-to-all on the scenario's
    GPU (:func:`planner.formulas.topology.ep_link_bytes_per_s` at the prefill EP)."""
    return topology.ep_link_bytes_per_s(prefill_ep_effective, gpu_nvlink_domain_gpus,
                                        gpu_interconnect_bytes_per_s, gpu_mesh_links_per_gpu,
                                        gpu_pcie_gen, gpu_nic_gbit_per_s)


def decode_tp_link_bytes_per_s(decode_tp_effective: Value, decode_gpu_nvlink_domain_gpus: Value,
                               decode_gpu_interconnect_bytes_per_s: Value,
                               decode_gpu_mesh_links_per_gpu: Value, decode_gpu_pcie_gen: Value,
                               decode_gpu_nic_gbit_per_s: Value) -> Value:
    """Per-direction bus bandwidth (B/s) of a decode worker's TP all-reduce on the decode GPU's
    wiring (:func:`planner.formulas.topology.tp_link_bytes_per_s` at the decode TP)."""
    return topology.tp_link_bytes_per_s(decode_tp_effective, decode_gpu_nvlink_domain_gpus,
                                        decode_gpu_interconnect_bytes_per_s,
                                        decode_gpu_mesh_links_per_gpu, decode_gpu_pcie_gen,
                                        decode_gpu_nic_gbit_per_s)


def decode_ep_link_bytes_per_s(decode_ep_effective: Value, decode_gpu_nvlink_domain_gpus: Value,
                               decode_gpu_interconnect_bytes_per_s: Value,
                               decode_gpu_mesh_links_per_gpu: Value, decode_gpu_pcie_gen: Value,
                               decode_gpu_nic_gbit_per_s: Value) -> Value:
    """Per-direction bandwidth (B/s) of a decode worker's expert all-to-all on the decode GPU's
    wiring (:func:`planner.formulas.topology.ep_link_bytes_per_s` at the decode EP)."""
    return topology.ep_link_bytes_per_s(decode_ep_effective, decode_gpu_nvlink_domain_gpus,
                                        decode_gpu_interconnect_bytes_per_s,
                                        decode_gpu_mesh_links_per_gpu, decode_gpu_pcie_gen,
                                        decode_gpu_nic_gbit_per_s)


def _pool_token_s(tp: Value, ep: Value, attention_dp_number: Value, model_layers: Value,
                  model_hidden_size: Value, model_experts: Value,
                  model_experts_per_token: Value, activation_bytes: Value, engine_code: Value,
                  matmul_path_code: Value, gpu_compute_bits: Value, nvlink_domain_gpus: Value,
                  tp_link: Value, ep_link: Value, collective_efficiency: Value,
                  ffn_width_per_token: Value, bandwidth_bytes_per_s: Value,
                  bandwidth_efficiency: Value) -> Value:
    """Per-token seconds outside ``max(compute, memory)`` on one GPU of a pool: the TP
    all-reduces (:func:`serving_step.serving_comm_s_per_token`) and the MoE layer's exchange
    (:func:`planner.formulas.expert_parallel.moe_comm_s_per_token`, chosen by
    :func:`~planner.formulas.expert_parallel.moe_exchange_code` at the pool's TP, EP and
    attention DP) over the pool's links (``tp_link``, ``ep_link`` in B/s), plus the
    element-wise kernels (:func:`serving_step.serving_activation_s_per_token`). Not a column."""
    code = xp.moe_exchange_code(tp, ep, attention_dp_number, model_experts,
                                model_experts_per_token, engine_code, nvlink_domain_gpus)
    dispatch = xp.moe_dispatch_bytes(engine_code, code, matmul_path_code, gpu_compute_bits,
                                     activation_bytes)
    moe = xp.moe_comm_s_per_token(code, tp, ep, model_layers, model_hidden_size,
                                  model_experts_per_token, dispatch, activation_bytes, tp_link,
                                  ep_link, collective_efficiency)
    comm = serving_step.serving_comm_s_per_token(tp, attention_dp_number, model_layers,
                                                 model_hidden_size, activation_bytes, tp_link,
                                                 collective_efficiency, moe)
    elementwise = serving_step.serving_activation_s_per_token(
        model_layers, model_hidden_size, ffn_width_per_token, tp, activation_bytes,
        bandwidth_bytes_per_s, bandwidth_efficiency)
    return comm + elementwise


def prefill_token_s(prefill_tp_effective: Value, prefill_ep_effective: Value,
                    prefill_attention_dp_number: Value, model_layers: Value,
                    model_hidden_size: Value, model_experts: Value,
                    model_experts_per_token: Value, activation_bytes: Value,
                    engine_code: Value, matmul_path_code: Value, gpu_compute_bits: Value,
                    gpu_nvlink_domain_gpus: Value, prefill_tp_link_bytes_per_s: Value,
                    prefill_ep_link_bytes_per_s: Value, collective_efficiency: Value,
                    ffn_width_per_token: Value, gpu_bandwidth_bytes_per_s: Value,
                    bandwidth_efficiency_effective: Value) -> Value:
    """Per-token collectives and element-wise seconds on a prefill GPU (s/token,
    :func:`_pool_token_s` at the prefill TP/EP over the prefill pool's links)."""
    return _pool_token_s(prefill_tp_effective, prefill_ep_effective,
                         prefill_attention_dp_number, model_layers, model_hidden_size,
                         model_experts, model_experts_per_token, activation_bytes, engine_code,
                         matmul_path_code, gpu_compute_bits, gpu_nvlink_domain_gpus,
                         prefill_tp_link_bytes_per_s, prefill_ep_link_bytes_per_s,
                         collective_efficiency, ffn_width_per_token, gpu_bandwidth_bytes_per_s,
                         bandwidth_efficiency_effective)


def decode_token_s(decode_tp_effective: Value, decode_ep_effective: Value,
                   decode_attention_dp_number: Value, model_layers: Value,
                   model_hidden_size: Value, model_experts: Value,
                   model_experts_per_token: Value, activation_bytes: Value, engine_code: Value,
                   matmul_path_code: Value, gpu_compute_bits: Value,
                   decode_gpu_nvlink_domain_gpus: Value, decode_tp_link_bytes_per_s: Value,
                   decode_ep_link_bytes_per_s: Value, collective_efficiency: Value,
                   ffn_width_per_token: Value, decode_gpu_bandwidth_bytes_per_s: Value,
                   decode_bandwidth_efficiency_effective: Value) -> Value:
    """Per-token collectives and element-wise seconds on a decode GPU (s/token,
    :func:`_pool_token_s` at the decode TP/EP over the decode pool's links; the MoE dispatch
    dtype by the scenario GPU's compute path)."""
    return _pool_token_s(decode_tp_effective, decode_ep_effective, decode_attention_dp_number,
                         model_layers, model_hidden_size, model_experts,
                         model_experts_per_token, activation_bytes, engine_code,
                         matmul_path_code, gpu_compute_bits, decode_gpu_nvlink_domain_gpus,
                         decode_tp_link_bytes_per_s, decode_ep_link_bytes_per_s,
                         collective_efficiency, ffn_width_per_token,
                         decode_gpu_bandwidth_bytes_per_s,
                         decode_bandwidth_efficiency_effective)
