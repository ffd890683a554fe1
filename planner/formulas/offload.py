"""Offload to host (CPU) memory: weights streamed over the host link every forward pass, and a
host-memory KV store that holds sequences the GPU does not run (docs/formulas.md, "Offload to
host memory").

Every public function is a scenario column over the operator set (:mod:`planner.formulas.ops`).
Quantities are per GPU unless the name says otherwise; every GPU of a replica has its own host
link and its own share of host memory, so a replica's GPUs move their shards at the same time.

Weights (``weight_offload_fraction``, vLLM ``--cpu-offload-gb``, accelerate/DeepSpeed
ZeRO-Inference): that share of each GPU's weights lives in pinned host memory and crosses the host
link once per forward pass, so it frees GPU memory for the KV cache (``kv_budget_bytes`` and the
engines' pools read :func:`weights_on_gpu_bytes_per_gpu`) and adds
:func:`host_weight_stream_s` = offloaded bytes per GPU · ``pp`` / host-link bandwidth to every
forward pass (a token passes the ``pp`` stages one after another, each streaming its own share),
outside ``max(compute, memory)``: vLLM's loader streams the layer's weights when the layer runs
and does not overlap the copy with other layers' compute, so this is the upper end for a
prefetching offloader. The offloaded share is streamed whole whatever the batch (a MoE's
untouched experts too), and it still counts in the HBM term (small next to the link time: HBM is
50-100 times faster than PCIe).

KV (``kv_offload_gib``, vLLM's ``OffloadingConnector`` / ``--kv-offloading-size``, LMCache's
``max_local_cpu_size``): host memory per GPU that holds KV blocks of sequences that are not
running (a conversation's prefix between turns, preempted requests). Attention reads KV from GPU
memory, so the running batch, TPOT and the step time do not change; the host store adds
capacity (:func:`kv_offload_tokens`, :func:`kv_offload_sequences`, :func:`held_sequences`) and
costs :func:`kv_swap_in_s` when a sequence's prompt blocks come back, fetched at host-link
bandwidth (instead of prefilling the prompt again: :func:`kv_swap_in_ttft_ratio` < 1 means the
fetch is the faster way back).

With ``weight_offload_fraction = 0`` every existing column is exactly what it was (the offload
terms are ``+ 0.0`` and ``- 0.0``), and ``kv_offload_gib = 0`` only sets the new KV columns to 0.
"""

from __future__ import annotations

from planner.formulas.memory import kv_elems_at_context
from planner.formulas.ops import Value, floor, maximum, safe_div


def weight_offload_bytes_per_gpu(weights_bytes_per_gpu: Value,
                                 weight_offload_fraction: Value) -> Value:
    """Weight bytes one GPU keeps in host memory and streams every forward pass:
    ``weights_bytes_per_gpu * weight_offload_fraction`` (vLLM ``--cpu-offload-gb`` is this
    figure in GiB; Llama-3-8B bf16 on one GPU with 0.25 offloaded: 4,015,130,624 B)."""
    return weights_bytes_per_gpu * weight_offload_fraction


def weights_on_gpu_bytes_per_gpu(weights_bytes_per_gpu: Value,
                                 weight_offload_bytes_per_gpu: Value) -> Value:
    """Weight bytes resident in GPU memory: ``weights_bytes_per_gpu -
    weight_offload_bytes_per_gpu`` (all of them without offload)."""
    return weights_bytes_per_gpu - weight_offload_bytes_per_gpu


def host_weight_stream_s(weight_offload_bytes_per_gpu: Value, pp: Value,
                         host_link_bytes_per_s: Value) -> Value:
    """Seconds one forward pass (a prefill, a decode step, an engine step) spends streaming
    offloaded weights over the host link: ``offloaded bytes per GPU * pp / host link``
    (tensor-parallel ranks stream at once over their own links, pipeline stages one after
    another). 4,015,130,624 B at 32 GB/s: 0.12547 s."""
    return weight_offload_bytes_per_gpu * pp / host_link_bytes_per_s


def weight_offload_bytes_per_token(weight_offload_bytes_per_gpu: Value, tp: Value, pp: Value,
                                   batch: Value) -> Value:
    """Host-link bytes a replica moves per decoded token: each decode step streams the
    offloaded weights of all ``tp*pp`` GPUs once for the batch's ``B`` tokens,
    ``offloaded per GPU * tp * pp / B``."""
    return weight_offload_bytes_per_gpu * tp * pp / batch


def kv_offload_bytes_per_token(kv_bytes_per_token: Value, tp_kv_fraction: Value,
                               pp: Value) -> Value:
    """KV bytes one token takes in one GPU's host store (the GPU's shard of it):
    ``kv_bytes_per_token * tp_kv_fraction / pp`` (Llama-3-8B bf16, one GPU: 131,072 B)."""
    return kv_bytes_per_token * tp_kv_fraction / pp


def kv_offload_tokens(kv_offload_bytes_per_gpu: Value,
                      kv_offload_bytes_per_token: Value) -> Value:
    """KV capacity gained in host memory, tokens per replica (every GPU holds its shard of the
    same tokens): ``floor(kv_offload_bytes_per_gpu / kv_offload_bytes_per_token)``. 64 GiB of
    Llama-3-8B bf16 KV: 524,288 tokens."""
    return maximum(0, floor(safe_div(kv_offload_bytes_per_gpu, kv_offload_bytes_per_token,
                                     0.0)))


def kv_offload_sequences(kv_offload_bytes_per_gpu: Value,
                         memory_bytes_per_sequence_per_gpu: Value) -> Value:
    """Full-context sequences (KV and any fixed state) host memory holds beyond the GPU's:
    ``floor(kv_offload_bytes_per_gpu / memory_bytes_per_sequence_per_gpu)``. 64 GiB of 8192-token
    Llama-3-8B sequences (1 GiB each): 64."""
    return maximum(0, floor(safe_div(kv_offload_bytes_per_gpu,
                                     memory_bytes_per_sequence_per_gpu, 0.0)))


def held_sequences(max_concurrent_sequences: Value, kv_offload_sequences: Value) -> Value:
    """Full-context sequences a replica keeps: running in GPU memory plus parked in host
    memory, ``max_concurrent_sequences + kv_offload_sequences`` (the running batch stays
    ``max_concurrent_sequences``: attention reads KV from GPU memory)."""
    return max_concurrent_sequences + kv_offload_sequences


def kv_swap_in_bytes_per_gpu(model_kv_elems_per_token_full: Value,
                             model_kv_elems_per_token_window: Value,
                             model_sliding_window_tokens: Value, prompt_tokens: Value,
                             kv_bits: Value, tp_kv_fraction: Value, pp: Value,
                             state_bytes_per_sequence_per_gpu: Value) -> Value:
    """Bytes one GPU fetches from host memory to bring back a sequence's prompt prefix:
    its KV at ``S`` tokens (windowed layers keep at most ``w``) times ``tp_kv_fraction/pp``,
    plus its fixed state, if any. Llama-3-8B bf16, S = 1024, one GPU: 134,217,728 B."""
    elems = kv_elems_at_context(model_kv_elems_per_token_full, model_kv_elems_per_token_window,
                                model_sliding_window_tokens, prompt_tokens)
    return elems * kv_bits / 8 * tp_kv_fraction / pp + state_bytes_per_sequence_per_gpu


def kv_swap_in_s(kv_swap_in_bytes_per_gpu: Value, host_link_bytes_per_s: Value) -> Value:
    """Seconds to fetch a sequence's prompt KV back from host memory over the host link (every
    GPU fetches its shard at once): ``kv_swap_in_bytes_per_gpu / host link``. 134,217,728 B at
    32 GB/s: 4.194 ms."""
    return kv_swap_in_bytes_per_gpu / host_link_bytes_per_s


def kv_swap_in_ttft_ratio(kv_swap_in_s: Value, ttft_s: Value) -> Value:
    """Fetch time over prefill time for a returning prompt: ``kv_swap_in_s / ttft_s``. Below 1,
    bringing the prefix back from host memory (LMCache, vLLM's offloading connector) beats
    computing it again."""
    return safe_div(kv_swap_in_s, ttft_s, 0.0)
