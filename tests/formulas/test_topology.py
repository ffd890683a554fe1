"""The link a collective really crosses, by GPU wiring, and what collectives cost on it
(planner.formulas.topology, issue 23 item 4).

Golden figures are the catalog's datasheet wiring (``seeds/gpus.toml``, ``topology_source``):
A100 PCIe's NVLink bridge pairs two cards, so TP4 crosses PCIe Gen4 (31.5 GB/s each way, the
PCI-SIG rate); H100 SXM's NVSwitch board holds 8, TP16 crosses one ConnectX-7 400 Gb/s NIC per
GPU; MI300X's 7 Infinity Fabric links reach 64 GB/s each way per peer; GB200 NVL72 is one domain.
The algorithm choice follows vLLM's ``CustomAllreduce::allreduce`` size rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from planner.core.errors import ValidationError
from planner.formulas import topology as tp_
from planner.service import estimate
from planner.service.gpu_records import changed_spec
from planner.spec.catalog import load_gpus, resolve_model_spec
from planner.spec.gpu import topology_figures

GPUS = load_gpus()
GEN4 = 16 * 16e9 * 128 / 130 / 8


def link(gpu: str, tp: int) -> tuple[float, float]:
    """(path code, per-direction bytes/s) of a TP group of ``tp`` on ``gpu``."""
    f = topology_figures(GPUS[gpu])
    kind = tp_.tp_link_kind(tp, f["gpu_nvlink_domain_gpus"])
    rate = tp_.tp_link_bytes_per_s(tp, f["gpu_nvlink_domain_gpus"],
                                   GPUS[gpu].interconnect_bytes_per_s,
                                   f["gpu_mesh_links_per_gpu"], f["gpu_pcie_gen"],
                                   f["gpu_nic_gbit_per_s"])
    return kind, rate


def test_pcie_rates_are_the_pci_sig_figures() -> None:
    assert tp_.pcie_bytes_per_s(4) == pytest.approx(31.5077e9, rel=1e-5)
    assert tp_.pcie_bytes_per_s(5) == pytest.approx(63.0154e9, rel=1e-5)
    assert tp_.pcie_bytes_per_s(3) == pytest.approx(15.7538e9, rel=1e-5)
    assert tp_.pcie_bytes_per_s(6) == pytest.approx(121.0e9, rel=1e-9)
    assert tp_.pcie_bytes_per_s(0) == 0.0
    assert tp_.nic_bytes_per_s(400) == 50e9


@pytest.mark.parametrize(("gpu", "tp", "kind", "rate"), [
    ("a100-80gb-pcie", 2, tp_.LINK_DOMAIN, 300e9),  # the 600 GB/s bridge, one direction
    ("a100-80gb-pcie", 4, tp_.LINK_PCIE, GEN4),  # bridge pairs: the ring crosses PCIe
    ("a100-80gb-pcie", 8, tp_.LINK_PCIE, GEN4),
    ("a100-80gb-pcie", 16, tp_.LINK_NIC, GEN4),  # no NIC assumed: the PCIe path stands in
    ("h100-nvl", 4, tp_.LINK_PCIE, 2 * GEN4),  # PCIe Gen5
    ("l40s", 2, tp_.LINK_PCIE, GEN4),
    ("h100-sxm", 8, tp_.LINK_DOMAIN, 450e9),
    ("h100-sxm", 16, tp_.LINK_NIC, 400e9),  # 8 rings x one ConnectX-7 400 Gb/s each
    ("b300", 16, tp_.LINK_NIC, 800e9),  # 8 x ConnectX-8 800 Gb/s, below NVLink 900
    ("mi300x", 2, tp_.LINK_DOMAIN, 64e9),  # one of 7 Infinity Fabric links
    ("mi300x", 4, tp_.LINK_DOMAIN, 192e9),
    ("mi300x", 8, tp_.LINK_DOMAIN, 448e9),
    ("gb200", 72, tp_.LINK_DOMAIN, 900e9),  # NVL72: one NVLink domain
    ("gb200", 144, tp_.LINK_NIC, 900e9),  # 72 NICs per rack: NVLink stays the limit
])
def test_a_group_gets_the_link_it_crosses(gpu: str, tp: int, kind: int, rate: float) -> None:
    got_kind, got_rate = link(gpu, tp)
    assert got_kind == kind
    assert got_rate == pytest.approx(rate, rel=1e-4)


def test_unknown_wiring_keeps_the_listed_interconnect_for_any_group() -> None:
    for tp in (2, 8, 64):
        assert tp_.tp_link_kind(tp, 0) == tp_.LINK_DOMAIN
        assert tp_.tp_link_bytes_per_s(tp, 0, 900e9, 0, 0, 0) == 450e9


def test_every_catalog_gpu_states_its_wiring_with_a_source() -> None:
    for name, spec in GPUS.items():
        assert spec.nvlink_domain_gpus >= 1, name
        assert spec.pcie_gen in (0, 3, 4, 5, 6), name
        assert spec.topology_source, name
    domains = {n: s.nvlink_domain_gpus for n, s in GPUS.items()}
    assert [n for n, d in domains.items() if d == 2] == ["h100-pcie", "a100-80gb-pcie",
                                                         "h100-nvl"]
    assert sorted(n for n, d in domains.items() if d == 72) == ["gb200", "gb300"]
    assert sorted(n for n, s in GPUS.items() if s.mesh_links_per_gpu == 7) == [
        "gaudi3", "mi300x", "mi325x", "mi355x"]


def test_the_link_columns_are_vectorized_like_the_scalars() -> None:
    tps = np.array([2.0, 4.0, 8.0, 16.0])
    rates = tp_.tp_link_bytes_per_s(tps, 2.0, 600e9, 0.0, 4.0, 0.0)
    assert rates.tolist() == pytest.approx([300e9, GEN4, GEN4, GEN4])
    assert tp_.tp_hop_latency_s(tps, 8.0).tolist() == [2e-6, 2e-6, 2e-6, 8e-6]


def test_expert_all_to_all_across_hosts_mixes_nic_and_nvlink() -> None:
    f = topology_figures(GPUS["h100-sxm"])
    args = (f["gpu_nvlink_domain_gpus"], 900e9, f["gpu_mesh_links_per_gpu"], f["gpu_pcie_gen"],
            f["gpu_nic_gbit_per_s"])
    assert tp_.ep_link_bytes_per_s(8, *args) == 450e9
    remote = 8 / 15  # EP 16 over two boards: 8 of the 15 peers are on the other board
    assert tp_.ep_link_bytes_per_s(16, *args) == pytest.approx(
        1 / (remote / 50e9 + (1 - remote) / 450e9))
    g = topology_figures(GPUS["gb200"])
    assert tp_.ep_link_bytes_per_s(72, g["gpu_nvlink_domain_gpus"], 1800e9, 0,
                                   g["gpu_pcie_gen"], g["gpu_nic_gbit_per_s"]) == 900e9


@pytest.mark.parametrize(("size", "n", "mesh", "algorithm"), [
    (1 << 20, 2, 0, tp_.ONE_SHOT),  # two ranks: always one-shot below 8 MiB
    (100 << 10, 4, 1, tp_.ONE_SHOT),
    (400 << 10, 4, 1, tp_.ONE_SHOT),  # n <= 4 below 512 KiB
    (400 << 10, 8, 1, tp_.TWO_SHOT),  # n <= 8 only below 256 KiB
    (4 << 20, 8, 1, tp_.TWO_SHOT),
    (8 << 20, 8, 1, tp_.RING),  # at the 8 MiB buffer: NCCL
    (100 << 10, 4, 0, tp_.RING),  # PCIe-only, more than two ranks: no custom all-reduce
    (100 << 10, 3, 1, tp_.RING),  # no kernel case for 3 ranks
    (100 << 10, 16, 1, tp_.RING),
])
def test_the_small_message_algorithm_is_vllms(size: int, n: int, mesh: int,
                                              algorithm: int) -> None:
    assert tp_.allreduce_algorithm(size, n, mesh) == algorithm


def test_allreduce_time_is_latency_plus_bus_bytes() -> None:
    # ring, 16 ranks, 64 MiB over 50 GB/s at 8 us a step: 30 steps + 2*15/16 * S / B
    size = 64 * 2**20
    expected = 30 * 8e-6 + 2 * 15 / 16 * size / 50e9
    assert tp_.allreduce_s(size, 16, 50e9, 8e-6) == pytest.approx(expected, rel=1e-12)
    # two-shot, 8 ranks, 1 MiB over 450 GB/s at 2 us: 2 steps + 1.75 MiB / 450 GB/s = 8.08 us
    assert tp_.allreduce_s(2**20, 8, 450e9, 2e-6, full_mesh=1) == pytest.approx(
        4e-6 + 1.75 * 2**20 / 450e9, rel=1e-12)
    # one-shot, 2 ranks, 64 KiB: one step, the peer's whole buffer
    assert tp_.allreduce_s(65536, 2, 300e9, 2e-6) == pytest.approx(2e-6 + 65536 / 300e9)
    assert tp_.allreduce_s(65536, 1, 300e9, 2e-6) == 0
    assert tp_.collective_steps(8, tp_.RING) == 14


def test_all_gather_and_all_to_all() -> None:
    assert tp_.all_gather_s(8e6, 8, 450e9, 2e-6) == pytest.approx(7 * 2e-6 + 7e6 / 450e9)
    # DeepSeek-V3 (d 7,168, top-8) over EP 8, bf16: 7 * (1 - (7/8)^8) = 4.59 remote GPUs
    remote = 7 * (1 - (7 / 8) ** 8)
    assert tp_.expert_remote_gpus(8, 8) == pytest.approx(remote)
    assert tp_.all_to_all_bytes(1, 8, 8, 7168, 2) == pytest.approx(remote * 7168 * 2)
    assert remote * 7168 * 2 == pytest.approx(65_870, rel=1e-4)
    assert tp_.all_to_all_s(1000, 8, 8, 7168, 2, 450e9, 2e-6) == pytest.approx(
        2e-6 + 1000 * remote * 7168 * 2 / 450e9)
    assert tp_.all_to_all_s(1000, 1, 8, 7168, 2, 450e9, 2e-6) == 0


def test_serving_communication_uses_the_link_the_group_crosses() -> None:
    """A100 PCIe TP4: the all-reduce bytes cross PCIe Gen4 (31.5 GB/s each way), not the
    bridge (300 GB/s): communication per token grows by 300 / 31.5."""
    model = resolve_model_spec("llama-3-8b")
    pcie = estimate(model, GPUS["a100-80gb-pcie"], {"engine": "vllm", "tp": 4, "gpus": 4})
    assert pcie["tp_link_kind"] == tp_.LINK_PCIE
    assert pcie["tp_link_bytes_per_s"] == pytest.approx(GEN4)
    unknown = changed_spec(GPUS["a100-80gb-pcie"], {"nvlink_domain_gpus": 0})
    bridge = estimate(model, unknown, {"engine": "vllm", "tp": 4, "gpus": 4})
    assert bridge["tp_link_bytes_per_s"] == 300e9  # the former rule: the listed interconnect
    assert pcie["serving_comm_s_per_token"] / bridge["serving_comm_s_per_token"] == \
        pytest.approx(300e9 / GEN4)
    # bytes: 2 all-reduces x 32 layers x 2*3/4 x 4,096 x 2 B over 31.5 GB/s x 0.7
    assert pcie["serving_comm_s_per_token"] == pytest.approx(
        2 * 32 * 1.5 * 4096 * 2 / (GEN4 * 0.7))


def test_bad_wiring_is_refused_with_the_field_named() -> None:
    spec = GPUS["h100-sxm"]
    with pytest.raises(ValidationError, match="pcie_gen"):
        changed_spec(spec, {"pcie_gen": 2})
    with pytest.raises(ValidationError, match="nvlink_domain_gpus"):
        changed_spec(spec, {"nvlink_domain_gpus": 7.5})
    with pytest.raises(ValidationError, match="nic_gbit_per_s"):
        changed_spec(spec, {"nic_gbit_per_s": -1})
    assert changed_spec(spec, {"nvlink_domain_gpus": 16}).nvlink_domain_gpus == 16


def test_wiring_round_trips_through_the_catalog_record_and_the_store_row() -> None:
    from planner.spec.catalog import gpu_from_record, gpu_record
    from planner.store.convert import gpu_row_fields
    from planner.store.rowspec import gpu_spec

    class Row:
        def __init__(self, fields: dict) -> None:
            self.__dict__.update(fields)

    for name, spec in GPUS.items():
        assert gpu_from_record(name, gpu_record(spec)) == spec, name
        assert gpu_spec(Row(gpu_row_fields(spec))) == spec, name
