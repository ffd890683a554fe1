"""The interconnect a collective really runs over, and what a collective costs on it.

Why this module exists: a GPU's listed ``interconnect_gb_per_s`` is its scale-up link, but a
tensor-parallel group only gets that link when every member sits in the same scale-up domain.
An A100 PCIe card's 600 GB/s NVLink bridge joins two cards; a TP4 or TP8 ring on those cards
crosses PCIe, ten to twenty times slower (issue 23 item 4: costing it at the bridge put A100-PCIe
TP8 +326% off). The GPU catalog says how each part is wired (``seeds/gpus.toml``):

* ``nvlink_domain_gpus``: GPUs one scale-up fabric joins at the listed interconnect bandwidth:
  1 = none (PCIe only), 2 = an NVLink bridge pair (A100 PCIe, H100 PCIe, H100 NVL), 8 = an
  NVSwitch HGX board or an AMD Infinity Fabric OAM board, 72 = a GB200/GB300 NVL72 rack;
  0 = not known (the listed interconnect is taken for any group, the planner's former rule);
* ``mesh_links_per_gpu``: 0 for a switched fabric (NVSwitch: any group of the domain reaches the
  whole per-GPU bandwidth), else the number of point-to-point links the listed bandwidth is
  split over (MI300X/MI325X/MI355X: 7 Infinity Fabric links, one to each peer, so a group of
  ``n`` uses ``n - 1`` of them);
* ``pcie_gen``: the host link's PCIe generation (x16), the path between domains in one host;
* ``nic_gbit_per_s``: scale-out network per GPU, one direction, as NICs are quoted (400 = one
  ConnectX-7 400 Gb/s InfiniBand/RoCE NIC per GPU), the path between hosts.

Bandwidths here are **per direction** (a ring sends and receives at once: NCCL's bus bandwidth is
per direction); the catalog's interconnect figure counts both directions, as vendors quote it.

Collective costs follow NCCL's conventions (``nccl-tests/doc/PERFORMANCE.md``): an all-reduce of
``S`` bytes over ``n`` ranks moves ``2(n-1)/n * S`` bytes through each rank's link (its bus
bandwidth), an all-gather or reduce-scatter ``(n-1)/n * S``; a ring takes ``2(n-1)`` (all-reduce)
or ``n-1`` steps, each paying one hop latency. Small messages take the engines' own one-shot or
two-shot kernels (vLLM ``csrc/custom_all_reduce.cuh``, ``CustomAllreduce::allreduce``: one-shot
when ``world_size == 2`` or, on fully connected NVLink, ``world_size <= 4`` and ``bytes < 512
KiB`` or ``world_size <= 8`` and ``bytes < 256 KiB``; two-shot above that up to the 8 MiB
buffer; vLLM disables it on more than two PCIe-only GPUs, ``custom_all_reduce.py``; TRT-LLM's
``AllReduceStrategy.ONESHOT``/``TWOSHOT`` in ``cpp/tensorrt_llm/kernels/customAllReduceKernels``
pick the same way by size): one-shot is one hop in which each rank reads the other ``n - 1``
buffers, two-shot a reduce-scatter and an all-gather, two hops.

Every public function takes and returns values of the operator set
(:mod:`planner.formulas.ops`), so each runs on scalars, numpy arrays and the sheet's symbolic
values alike; those whose name is a scenario column are formula columns of the serving sheet.
"""

from __future__ import annotations

from planner.formulas.ops import Value, clip, maximum, minimum, power, safe_div, where

PCIE_X16_BYTES_PER_S: dict[int, float] = {
    3: 16 * 8e9 * 128 / 130 / 8, 4: 16 * 16e9 * 128 / 130 / 8,
    5: 16 * 32e9 * 128 / 130 / 8, 6: 16 * 64e9 * 242 / 256 / 8}
"""Bytes/s per direction of a PCIe x16 link by generation: 16 lanes x transfer rate (8, 16, 32,
64 GT/s) x line-code efficiency (128b/130b for Gen3-5; Gen6's 256 B FLIT carries 242 B of
payload) / 8 bits (PCI-SIG PCIe Base Specification 3.0-6.0): Gen4 31.5 GB/s, Gen5 63.0 GB/s."""

PCIE_HOST_GPUS = 8
"""Most GPUs one PCIe host holds: servers for double-width PCIe cards take up to eight (NVIDIA's
L40S and H100 NVL 8-GPU PCIe reference configurations, e.g. the NVIDIA-Certified 4U 8-GPU
systems); a tensor-parallel group of PCIe cards up to this size crosses PCIe, a larger one the
network."""

NVLINK_HOP_LATENCY_S = 2e-6
"""One step of a collective inside an NVLink/NVSwitch or Infinity Fabric domain: a few
microseconds (nccl-tests all_reduce_perf on 8x H100 SXM: ~8-12 us for a 2(n-1) = 14-step
small-message ring with the LL protocol, i.e. ~1 us per step plus launch; vLLM's one-shot custom
all-reduce ~5 us in total). Taken as 2 us per step including the kernel's share of launch."""

PCIE_HOP_LATENCY_S = 5e-6
"""One step of a collective across PCIe (through a PCIe switch or the CPU root complex): PCIe
peer-to-peer round trips of ~1-2 us plus NCCL's proxy and flag polling; nccl-tests small-message
all-reduce across 4-8 PCIe GPUs sits near 25-60 us, i.e. ~4-5 us per ring step."""

NIC_HOP_LATENCY_S = 8e-6
"""One step of a collective across InfiniBand/RoCE: ~2-3 us of NIC and switch latency plus the
GPU-initiated proxy hand-off; nccl-tests small-message inter-node all-reduce ~30-60 us for 2x8
GPUs."""

RING, ONE_SHOT, TWO_SHOT = 0, 1, 2
"""Collective algorithm codes: NCCL's ring, and the custom kernels' one-shot and two-shot."""

LINK_DOMAIN, LINK_PCIE, LINK_NIC = 0, 1, 2
"""Which path a group's collective crosses: the scale-up domain, PCIe in one host, the
network between hosts (code of :func:`tp_link_kind`)."""


def pcie_bytes_per_s(gpu_pcie_gen: Value) -> Value:
    """Per-direction bandwidth of the GPU's PCIe x16 host link (B/s), by generation
    (:data:`PCIE_X16_BYTES_PER_S`): Gen4 31.5e9, Gen5 63.0e9; 0 where the generation is
    unknown (0)."""
    chosen: Value = 0.0
    for gen, rate in PCIE_X16_BYTES_PER_S.items():
        chosen = where(gpu_pcie_gen == gen, rate, chosen)
    return chosen


def nic_bytes_per_s(gpu_nic_gbit_per_s: Value) -> Value:
    """Per-direction scale-out bandwidth of one GPU (B/s): ``nic_gbit_per_s * 1e9 / 8`` (a
    400 Gb/s NIC moves 50 GB/s each way)."""
    return gpu_nic_gbit_per_s * 1e9 / 8


def tp_link_kind(tp: Value, gpu_nvlink_domain_gpus: Value) -> Value:
    """Which path a tensor-parallel group of ``tp`` GPUs crosses (code, :data:`LINK_DOMAIN`,
    :data:`LINK_PCIE`, :data:`LINK_NIC`): the scale-up domain when the group fits in it (or the
    domain is unknown, 0); PCIe when a larger group fits in one PCIe host
    (:data:`PCIE_HOST_GPUS`) and the domain is smaller than a host (PCIe cards, bridge pairs);
    else the network. A100 PCIe (domain 2): TP2 domain, TP4 and TP8 PCIe, TP16 network; H100
    SXM (8): TP8 domain, TP16 network; GB200 (72): TP up to 72 in the domain."""
    in_domain = (gpu_nvlink_domain_gpus <= 0) + (tp <= gpu_nvlink_domain_gpus)
    in_host = (tp <= PCIE_HOST_GPUS) * (gpu_nvlink_domain_gpus < PCIE_HOST_GPUS)
    return where(in_domain > 0, LINK_DOMAIN, where(in_host > 0, LINK_PCIE, LINK_NIC))


def domain_link_bytes_per_s(tp: Value, gpu_interconnect_bytes_per_s: Value,
                            gpu_mesh_links_per_gpu: Value) -> Value:
    """Per-direction bandwidth one GPU of a ``tp`` group reaches inside its scale-up domain
    (B/s): ``interconnect / 2`` on a switched fabric (NVSwitch, NVLink bridge pair), times
    ``min(1, (tp - 1) / links)`` on a fully connected mesh of ``links`` point-to-point links
    (MI300X: 7 x 64 GB/s each way, so TP8 reaches 448 GB/s and TP2 one link, 64 GB/s)."""
    share = where(gpu_mesh_links_per_gpu > 0,
                  minimum(1, maximum(tp - 1, 1) / maximum(gpu_mesh_links_per_gpu, 1)), 1)
    return gpu_interconnect_bytes_per_s / 2 * share


def _host_gpus(gpu_nvlink_domain_gpus: Value) -> Value:
    """GPUs behind one set of NICs a ring crosses between hosts: the scale-up domain (an HGX
    board's 8, an NVL72 rack's 72), or a PCIe host's :data:`PCIE_HOST_GPUS` for smaller
    domains."""
    return maximum(gpu_nvlink_domain_gpus, PCIE_HOST_GPUS)


def _inner_bytes_per_s(tp: Value, gpu_nvlink_domain_gpus: Value,
                       gpu_interconnect_bytes_per_s: Value, gpu_mesh_links_per_gpu: Value,
                       gpu_pcie_gen: Value) -> Value:
    """Per-direction bandwidth of a group's path inside one host: the domain's when the domain
    fills a host, else PCIe (the domain's where the PCIe generation is unknown)."""
    domain = domain_link_bytes_per_s(tp, gpu_interconnect_bytes_per_s, gpu_mesh_links_per_gpu)
    pcie = pcie_bytes_per_s(gpu_pcie_gen)
    pcie_or_domain = where(pcie > 0, pcie, domain)
    return where(gpu_nvlink_domain_gpus >= PCIE_HOST_GPUS, domain, pcie_or_domain)


def tp_link_bytes_per_s(tp: Value, gpu_nvlink_domain_gpus: Value,
                        gpu_interconnect_bytes_per_s: Value, gpu_mesh_links_per_gpu: Value,
                        gpu_pcie_gen: Value, gpu_nic_gbit_per_s: Value) -> Value:
    """Per-direction bus bandwidth (B/s) a ``tp`` group's ring all-reduce reaches, by the path
    it crosses (:func:`tp_link_kind`):

    * domain: :func:`domain_link_bytes_per_s`;
    * PCIe (PCIe cards in one host): the x16 link each card's traffic shares
      (:func:`pcie_bytes_per_s`; the domain's where the generation is unknown);
    * network: NCCL runs one ring channel per NIC and crosses hosts at a different GPU/NIC pair
      in each, so the channels of a host move ``host_gpus * nic`` between hosts at once and the
      ring's bus bandwidth is ``min(inside-host path, host_gpus * nic)`` (nccl-tests
      ``doc/PERFORMANCE.md``: bus bandwidth reaches the slowest of NVLink, PCIe or the
      aggregate network; DGX H100: 8 x 400 Gb/s per 8 GPUs). No NIC known: the inside-host
      path stands in.

    A100 PCIe TP2 300e9 (bridge), TP4 31.5e9 (PCIe Gen4); H100 SXM TP8 450e9, TP16 400e9
    (8 x ConnectX-7 400 Gb/s); GB200 up to TP72 900e9 (NVL72)."""
    kind = tp_link_kind(tp, gpu_nvlink_domain_gpus)
    domain = domain_link_bytes_per_s(tp, gpu_interconnect_bytes_per_s, gpu_mesh_links_per_gpu)
    pcie = pcie_bytes_per_s(gpu_pcie_gen)
    inner = _inner_bytes_per_s(tp, gpu_nvlink_domain_gpus, gpu_interconnect_bytes_per_s,
                               gpu_mesh_links_per_gpu, gpu_pcie_gen)
    nic = nic_bytes_per_s(gpu_nic_gbit_per_s)
    network = where(nic > 0, minimum(inner, nic * _host_gpus(gpu_nvlink_domain_gpus)), inner)
    return where(kind == LINK_DOMAIN, domain,
                 where(kind == LINK_PCIE, where(pcie > 0, pcie, domain), network))


def ep_link_bytes_per_s(ep: Value, gpu_nvlink_domain_gpus: Value,
                        gpu_interconnect_bytes_per_s: Value, gpu_mesh_links_per_gpu: Value,
                        gpu_pcie_gen: Value, gpu_nic_gbit_per_s: Value) -> Value:
    """Per-direction bandwidth (B/s) of an expert-parallel group's all-to-all on one GPU.
    Inside the domain (an NVL72 rack is one all-to-all island up to EP 72) or a PCIe host:
    :func:`tp_link_bytes_per_s` of a group of ``ep``. Across hosts each GPU sends the remote
    share ``r = (ep - host_gpus) / (ep - 1)`` of its tokens through its own NIC (DeepEP and
    NCCL all-to-all send RDMA from every GPU's NIC) and the rest inside the host, so the
    effective bandwidth is ``1 / (r / nic + (1 - r) / inside)``: HGX H100 EP16, 8/15 remote,
    ~89 GB/s. No NIC known: the inside-host path."""
    kind = tp_link_kind(ep, gpu_nvlink_domain_gpus)
    inner = _inner_bytes_per_s(ep, gpu_nvlink_domain_gpus, gpu_interconnect_bytes_per_s,
                               gpu_mesh_links_per_gpu, gpu_pcie_gen)
    nic = nic_bytes_per_s(gpu_nic_gbit_per_s)
    remote = clip((ep - _host_gpus(gpu_nvlink_domain_gpus)) / maximum(ep - 1, 1), 0, 1)
    mixed = 1 / (remote / maximum(nic, 1) + (1 - remote) / maximum(inner, 1))
    network = where(nic > 0, mixed, inner)
    return where(kind == LINK_NIC, network,
                 tp_link_bytes_per_s(ep, gpu_nvlink_domain_gpus, gpu_interconnect_bytes_per_s,
                                     gpu_mesh_links_per_gpu, gpu_pcie_gen, gpu_nic_gbit_per_s))


def tp_hop_latency_s(tp: Value, gpu_nvlink_domain_gpus: Value) -> Value:
    """Latency of one step of a collective over the group's path (s): NVLink/Infinity Fabric
    :data:`NVLINK_HOP_LATENCY_S`, PCIe :data:`PCIE_HOP_LATENCY_S`, network
    :data:`NIC_HOP_LATENCY_S` (:func:`tp_link_kind`)."""
    kind = tp_link_kind(tp, gpu_nvlink_domain_gpus)
    return where(kind == LINK_DOMAIN, NVLINK_HOP_LATENCY_S,
                 where(kind == LINK_PCIE, PCIE_HOP_LATENCY_S, NIC_HOP_LATENCY_S))


def allreduce_algorithm(message_bytes: Value, n: Value, full_mesh: Value) -> Value:
    """The all-reduce algorithm an engine's custom kernel picks (code: :data:`RING`,
    :data:`ONE_SHOT`, :data:`TWO_SHOT`), vLLM ``CustomAllreduce::allreduce``
    (``csrc/custom_all_reduce.cuh``): one-shot for two ranks, or on a fully connected NVLink
    group (``full_mesh`` 1) for ``n <= 4`` below 512 KiB and ``n <= 8`` below 256 KiB; two-shot
    on such a group below the 8 MiB buffer (``custom_all_reduce.py`` ``should_custom_ar``); the
    kernel is built for 2, 4, 6 and 8 ranks; NCCL's ring otherwise (other group sizes, PCIe
    groups of more than two, larger messages)."""
    small = (((n <= 4) * (message_bytes < 512 * 1024))
             + ((n <= 8) * (message_bytes < 256 * 1024))) > 0
    sizes = (n == 2) + (n == 4) + (n == 6) + (n == 8)  # the kernel's REDUCE_CASEs
    custom = (n == 2) + full_mesh * sizes > 0
    fits = message_bytes < 8 * 2**20  # should_custom_ar: inp_size < max_size (8 MiB)
    one = (custom * fits * ((n == 2) + small > 0)) > 0
    two = (custom * fits * (n > 2) * full_mesh) > 0
    return where(n <= 1, RING, where(one, ONE_SHOT, where(two, TWO_SHOT, RING)))


def collective_steps(n: Value, algorithm: Value) -> Value:
    """Steps (hops) of an all-reduce over ``n`` ranks: ring ``2(n - 1)``, one-shot 1, two-shot
    2 (reduce-scatter then all-gather); 0 for one rank."""
    steps = where(algorithm == ONE_SHOT, 1, where(algorithm == TWO_SHOT, 2, 2 * (n - 1)))
    return where(n <= 1, 0, steps)


def collective_latency_s(n: Value, algorithm: Value, hop_latency_s: Value) -> Value:
    """Latency term of an all-reduce (s): ``collective_steps(n, algorithm) * hop_latency``
    (TP8 ring over NVLink 14 x 2 us = 28 us; one-shot 2 us)."""
    return collective_steps(n, algorithm) * hop_latency_s


def allreduce_bus_bytes(message_bytes: Value, n: Value, algorithm: Value) -> Value:
    """Bytes one rank's link carries in an all-reduce of ``message_bytes``: ring and two-shot
    ``2(n - 1)/n * S`` (NCCL busBw convention), one-shot ``(n - 1) * S`` (each rank reads every
    peer's whole buffer); 0 for one rank."""
    moved = where(algorithm == ONE_SHOT, (n - 1) * message_bytes,
                  2 * (n - 1) / maximum(n, 1) * message_bytes)
    return where(n <= 1, 0, moved)


def allreduce_s(message_bytes: Value, n: Value, link_bytes_per_s: Value,
                hop_latency_s: Value, efficiency: Value = 1.0,
                full_mesh: Value = 0) -> Value:
    """Seconds of one all-reduce of ``message_bytes`` over ``n`` ranks: the latency term
    (:func:`collective_latency_s`) plus the bus bytes (:func:`allreduce_bus_bytes`) over the
    per-direction link bandwidth times ``efficiency``, with the algorithm the engine's kernel
    picks (:func:`allreduce_algorithm`). 8 ranks, 1 MiB, 450 GB/s, 2 us, efficiency 1, full mesh:
    two-shot, 2 x 2 us + 1.75 MiB / 450 GB/s = 8.08 us."""
    algorithm = allreduce_algorithm(message_bytes, n, full_mesh)
    return (collective_latency_s(n, algorithm, hop_latency_s)
            + safe_div(allreduce_bus_bytes(message_bytes, n, algorithm),
                       link_bytes_per_s * efficiency, 0.0))


def all_gather_s(message_bytes: Value, n: Value, link_bytes_per_s: Value,
                 hop_latency_s: Value, efficiency: Value = 1.0) -> Value:
    """Seconds of a ring all-gather (or reduce-scatter) whose gathered result is
    ``message_bytes``: ``(n - 1) * hop_latency + (n - 1)/n * S / (link * efficiency)`` (NCCL
    busBw convention for all-gather); 0 for one rank."""
    moved = (n - 1) / maximum(n, 1) * message_bytes
    return where(n <= 1, 0, (n - 1) * hop_latency_s
                 + safe_div(moved, link_bytes_per_s * efficiency, 0.0))


def expert_remote_gpus(ep: Value, experts_per_token: Value) -> Value:
    """Expected GPUs other than its own a token is dispatched to under expert parallelism over
    ``ep`` GPUs with uniform routing to ``k`` experts, each destination once (DeepEP and
    TRT-LLM's all-to-all de-duplicate per destination): ``(ep - 1) * (1 - (1 - 1/ep)^k)``."""
    return (ep - 1) * (1 - power(1 - 1 / maximum(ep, 1), experts_per_token))


def all_to_all_bytes(tokens: Value, ep: Value, experts_per_token: Value, hidden_size: Value,
                     bytes_per_element: Value) -> Value:
    """Bytes one GPU sends in one MoE dispatch (the combine returns as many): each of its
    ``tokens`` goes once to each remote GPU holding one of its ``k`` experts,
    ``tokens * expert_remote_gpus(ep, k) * hidden * bytes``. DeepSeek-V3 (d 7,168, k 8) over
    EP 8, bf16: 7 * (1 - (7/8)^8) = 4.59 remote GPUs, 65.9 kB per token."""
    return tokens * expert_remote_gpus(ep, experts_per_token) * hidden_size * bytes_per_element


def all_to_all_s(tokens: Value, ep: Value, experts_per_token: Value, hidden_size: Value,
                 bytes_per_element: Value, link_bytes_per_s: Value, hop_latency_s: Value,
                 efficiency: Value = 1.0) -> Value:
    """Seconds of one MoE all-to-all (dispatch or combine) on one GPU: one hop latency (every
    peer is sent to at once) plus :func:`all_to_all_bytes` over the per-direction link
    bandwidth times ``efficiency``; 0 for ``ep`` 1. On an NVL72 domain the link is NVLink for
    any ``ep`` up to 72 (:func:`tp_link_bytes_per_s` with ``tp = ep``)."""
    sent = all_to_all_bytes(tokens, ep, experts_per_token, hidden_size, bytes_per_element)
    return where(ep <= 1, 0, hop_latency_s + safe_div(sent, link_bytes_per_s * efficiency, 0.0))
