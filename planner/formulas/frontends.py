"""Serving front ends as data: the per-request and per-streamed-token work of each engine's
HTTP server, with the source of every figure (issue 23 item 3).

Why a table: the serving model once applied the vLLM OpenAI server's figures to every engine
(40 ms on each TTFT, 20 ms + 0.2 ms per token of serialized work), which capped any replica at
14-16 requests/s whatever the server in front of it. Servers differ in where that work runs:

* **one serialized process** (vLLM's API server, V1's two-process design: HTTP, tokenization
  and detokenization in the API process, the engine core in another; trtllm-serve, a FastAPI
  server over the LLM API whose detokenization runs in its own process unless
  ``--num_postprocess_workers`` is set, default 0): a replica completes at most
  ``1 / (request work + G * per-token work)`` requests/s;
* **tokenize and detokenize in separate processes** (SGLang: ``TokenizerManager`` in the HTTP
  process, ``DetokenizerManager`` in its own; Triton's TensorRT-LLM ensemble, with
  ``preprocessing`` and ``postprocessing`` models as separate Python-backend instances): the
  two pipeline, so the cap is ``1 / max(request work, G * per-token work)``;
* **no single-threaded stage** (NVIDIA Dynamo's frontend, Rust, multi-threaded tokio runtime,
  tokenization and detokenization in Rust; the offline LLM API / ``trtllm-bench`` with no HTTP
  server): no serialized cap.

Where no published profile gives a server's figure, the entry says so and takes the figure of
the server with the closest mechanism, named in its ``source``. A scenario is served by its
engine's own server (:data:`ENGINE_FRONTENDS`); the scenario inputs ``request_latency_s``,
``request_overhead_s`` and ``stream_overhead_s_per_token`` override its figures where they are
above 0. Choosing another server per scenario (Triton, Dynamo, the offline API) needs a
``frontend`` input, which is a new stored scenario column (a schema migration): not done yet;
the rows are here for it and for scripts (``benchmarks/bench_serving_accuracy.py`` sets the
Dynamo frontend's latency on NVIDIA's Dynamo-served AIC rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.formulas.ops import Value, where

SERIAL = 0
"""``pipeline`` code: request and per-token work serialized in one process."""
SPLIT = 1
"""``pipeline`` code: tokenize and detokenize in separate processes (they overlap)."""
UNCAPPED = 2
"""``pipeline`` code: no single-threaded stage (no serialized cap)."""


@dataclass(frozen=True, slots=True)
class FrontEnd:
    """One server in front of an engine."""

    code: int
    label: str
    request_latency_s: float
    """Time one request's path adds to its TTFT (HTTP, template, tokenization, hand-offs to
    the engine and back, the first streamed chunk), seconds."""
    request_overhead_s: float
    """Per-request work in the front end's serialized stage, seconds."""
    stream_overhead_s_per_token: float
    """Per-streamed-token work (detokenize, one server-sent event), seconds per token."""
    pipeline: int
    """:data:`SERIAL`, :data:`SPLIT` or :data:`UNCAPPED`."""
    source: str


_VLLM_SOURCE = (
    "vLLM OpenAI API server (vllm serve, V1): latency 40 ms from GPUStack's vllm bench serve "
    "runs on H100 at concurrency 1-8 (20-65 ms of TTFT above the prefill, vLLM 0.11 ~50 ms); "
    "request work 20 ms from its burst runs (the server tops out near 45 requests/s on "
    "4-token requests); 0.2 ms per streamed token; one serialized process (vllm-project/vllm "
    "PR 11636 keeps detokenization in the API server process: a third process was slower)")

FRONTENDS: dict[str, FrontEnd] = {
    "vllm-openai": FrontEnd(1, "vLLM OpenAI server", 0.04, 0.02, 0.0002, SERIAL, _VLLM_SOURCE),
    "sglang-http": FrontEnd(
        2, "SGLang HTTP server", 0.02, 0.02, 0.0002, SPLIT,
        "SGLang launch_server: latency 20 ms from GPUStack's runs (SGLang 0.5, ~20 ms of TTFT "
        "above the prefill at concurrency 1-8); request and per-token work: no published "
        "profile, the vLLM OpenAI server's (the closest mechanism: Python asyncio "
        "tokenization and incremental detokenization) in SGLang's split pipeline "
        "(TokenizerManager and DetokenizerManager are separate processes, SGLang "
        "srt/entrypoints/engine.py)"),
    "trtllm-serve": FrontEnd(
        3, "trtllm-serve", 0.045, 0.02, 0.0002, SERIAL,
        "trtllm-serve (tensorrt_llm/serve/openai_server.py, FastAPI over the LLM API): "
        "latency 45 ms from GPUStack's runs (trtllm-serve 1.2, ~45 ms of TTFT above the "
        "prefill); request and per-token work: no published profile, the vLLM OpenAI "
        "server's (same mechanism: a Python server detokenizing in its own process while "
        "--num_postprocess_workers is 0, its default)"),
    "triton": FrontEnd(
        4, "Triton + TensorRT-LLM backend", 0.04, 0.02, 0.0002, SPLIT,
        "Triton Inference Server with the TensorRT-LLM backend's ensemble (C++ HTTP/gRPC, "
        "Python-backend preprocessing and postprocessing models in separate processes): no "
        "published latency or per-request profile; the vLLM OpenAI server's figures (Python "
        "tokenization and detokenization) in a split pipeline like SGLang's"),
    "dynamo": FrontEnd(
        5, "NVIDIA Dynamo frontend", 0.02, 0.0, 0.0, UNCAPPED,
        "NVIDIA Dynamo frontend (python -m dynamo.frontend: a Rust HTTP server, tokenization "
        "and detokenization in Rust on a multi-threaded runtime, Dynamo docs 'Frontend'): no "
        "serialized stage; latency: no published figure, SGLang's 20 ms (the lowest measured "
        "HTTP path here, an extra network hop to the worker included)"),
    "offline": FrontEnd(
        6, "offline (no HTTP server)", 0.0, 0.0, 0.0, UNCAPPED,
        "the engine's offline API (vLLM LLM, SGLang Engine, TRT-LLM LLM / trtllm-bench): no "
        "HTTP path, nothing serialized outside the engine"),
}
"""Every front end by name."""

ENGINE_FRONTENDS: dict[str, str] = {
    "roofline": "vllm-openai", "vllm": "vllm-openai", "sglang": "sglang-http",
    "trtllm": "trtllm-serve"}
"""The server each engine ships: ``vllm serve``, SGLang's ``launch_server``, ``trtllm-serve``;
roofline keeps the figures it always had (vLLM's)."""


def _by_code(code: Value, field: str) -> Value:
    """``FRONTENDS[...].field`` of the front end whose code is ``code`` (nested ``where``)."""
    rows = list(FRONTENDS.values())
    out: Value = getattr(rows[0], field)
    for row in rows[1:]:
        out = where(code == row.code, getattr(row, field), out)
    return out


def frontend_figure(code: Value, field: str) -> Value:
    """A front end's figure (``request_latency_s``, ``request_overhead_s``,
    ``stream_overhead_s_per_token`` or ``pipeline``) by its code."""
    return _by_code(code, field)
