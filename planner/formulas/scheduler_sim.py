"""A step-by-step simulation of a continuous-batching scheduler, to check the serving model's
closed forms (:mod:`planner.formulas.serving`) and to stand in where none exists.

The serving columns give steady-state figures in closed form (the running batch, the step
time, TTFT, TPOT) and the first wave of a closed loop (:func:`planner.formulas.serving.
wave_ttft_mean_s`). This module plays the scheduler one step at a time for one scenario, so a
test can hold the closed forms against it on a grid (tests/formulas/test_scheduler_sim.py,
within 5 %). It is plain Python over one scenario: not a column, not vectorized.

The scheduler follows vLLM V1's ``Scheduler.schedule`` (vllm/v1/core/sched/scheduler.py), the
policy SGLang and TensorRT-LLM share in their chunked-prefill modes:

1. running requests first, in admission order: a decoding request schedules one token; a
   request part-way through its prompt schedules its next chunk, ``min(rest, budget left)``;
2. then waiting requests, first come first served, while the token budget
   (``max_num_batched_tokens``), the sequence cap (``max_num_seqs``) and free KV blocks last;
   a request is admitted only if blocks for its first chunk are free;
3. a running request that needs a new block when none is free preempts the most recently
   admitted request, which frees its blocks and goes back to the front of the queue to be
   recomputed (vLLM's recompute preemption).

``prefill_first=True`` plays SGLang's policy instead (``python/sglang/srt/managers/
scheduler.py``, ``get_next_batch_to_run``: "Run prefill first if possible", else decode;
``enable_mixed_chunk`` off by default in ``server_args.py``): whenever a prompt is waiting or
part-way through its prefill, the step is a prefill-only step carrying prompt chunks up to the
token budget (the part-prefilled request first, ``add_chunked_req``, then waiting ones first
come first served while blocks and ``max_running_requests`` last); only when no prompt is left
is the step a decode step of every running request.

A step's time is :class:`StepCost` of what it carries. A closed loop of ``clients`` sends its
first ``clients`` requests at once and a new one as each finishes (``vllm bench serve
--max-concurrency``), until ``requests`` have been sent.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class StepCost:
    """Time of one engine step, in seconds, by what it carries (the serving model's step,
    :func:`planner.formulas.serving.step_seconds_at`, per token rather than per request):
    ``fixed + max(prefill compute * p + decode compute * d, weights + kv_read * kv) +
    per_token * (p + d)``, where ``p`` are the prefill tokens scheduled, ``d`` the decode
    tokens (one per decoding request) and ``kv`` the context tokens the decodes read."""

    fixed_s: float
    prefill_compute_s_per_token: float
    decode_compute_s_per_token: float
    weights_s: float
    kv_read_s_per_token: float
    per_token_s: float = 0.0

    def seconds(self, prefill: int, decode: int, kv_tokens: int) -> float:
        """Time of a step carrying ``prefill`` + ``decode`` tokens whose decodes read
        ``kv_tokens`` context tokens."""
        compute = (self.prefill_compute_s_per_token * prefill
                   + self.decode_compute_s_per_token * decode)
        return (self.fixed_s + max(compute, self.weights_s + self.kv_read_s_per_token * kv_tokens)
                + self.per_token_s * (prefill + decode))


@dataclass(slots=True)
class _Request:
    """One request through the run: its arrival (seconds), prompt and output lengths
    (tokens), the prompt tokens prefilled and output tokens generated so far, its first-token
    and finish times (seconds) and the KV blocks it holds."""

    arrival_s: float
    prompt: int
    output: int
    done_prompt: int = 0
    generated: int = 0
    first_token_s: float | None = None
    finish_s: float | None = None
    blocks: int = 0

    @property
    def context(self) -> int:
        """Tokens in the request's KV cache: prefilled prompt plus generated output."""
        return self.done_prompt + self.generated


@dataclass(frozen=True, slots=True)
class SimResult:
    """Figures of a simulated run (seconds, tokens/s); ``steady_*`` leave out the first wave
    (the first ``clients`` requests) and the drain (requests started after the last was
    sent)."""

    ttft_mean_s: float
    tpot_mean_s: float
    e2e_mean_s: float
    output_tokens_per_s: float
    first_wave_ttft_mean_s: float
    steady_ttft_mean_s: float
    steady_tpot_mean_s: float
    steady_output_tokens_per_s: float
    preemptions: int
    steps: int
    ttfts_s: list[float] = field(repr=False, default_factory=list)


def simulate_closed_loop(clients: int, prompt_tokens: int, output_tokens: int,
                         cost: StepCost, *, requests: int, budget_tokens: int,
                         max_seqs: int, kv_blocks: int, block_tokens: int = 16,
                         prefill_first: bool = False, range_ratio: float = 1.0,
                         seed: int = 0) -> SimResult:
    """Play a closed loop of ``clients`` over ``requests`` requests of ``prompt_tokens`` and
    ``output_tokens`` through the scheduler of the module docstring (vLLM's decode-first
    policy, or SGLang's prefill-first one with ``prefill_first``). Fixed lengths with
    ``range_ratio`` 1; below 1 each request draws its prompt and output lengths uniformly from
    the integers ``[int(L * range_ratio), L]`` (``vllm bench serve --random-range-ratio`` as
    InferenceX's client draws them, ``benchmark_serving.py`` ``sample_random_requests``),
    from a generator seeded with ``seed``."""
    if min(clients, prompt_tokens, output_tokens, requests, budget_tokens, max_seqs,
           kv_blocks, block_tokens) < 1:
        raise ValueError("every count must be at least 1")
    if not 0 < range_ratio <= 1:
        raise ValueError("range_ratio must be in (0, 1]")
    new_request = _request_source(prompt_tokens, output_tokens, range_ratio, seed)
    sim = _Scheduler(cost, budget_tokens, max_seqs, block_tokens, prefill_first, kv_blocks)
    sent = 0
    for _ in range(min(clients, requests)):
        sim.waiting.append(new_request(sim.now))
        sent += 1
    while len(sim.finished) < requests:
        sim.step()
        for _ in range(sim.retire_finished()):
            if sent < requests:
                sim.waiting.append(new_request(sim.now))
                sent += 1
    return _result(sim.finished, clients, requests, output_tokens, sim.now, sim.preemptions,
                   sim.steps)


def _request_source(prompt_tokens: int, output_tokens: int, range_ratio: float,
                    seed: int) -> Callable[[float], _Request]:
    """A maker of new requests arriving at a given time (seconds): fixed ``prompt_tokens``
    and ``output_tokens`` with ``range_ratio`` 1, else each length drawn uniformly from the
    integers ``[int(L * range_ratio), L]`` (prompt first, then output; at least 1 token) by a
    generator seeded with ``seed``."""
    rng = random.Random(seed)

    def draw(length: int) -> int:
        """A length (tokens): ``length`` itself, or drawn from ``[int(length * ratio), length]``."""
        return length if range_ratio >= 1 else rng.randint(int(length * range_ratio), length)

    def new_request(at: float) -> _Request:
        """A request arriving at ``at`` (seconds) with its prompt and output lengths drawn."""
        return _Request(at, max(draw(prompt_tokens), 1), max(draw(output_tokens), 1))

    return new_request


@dataclass(slots=True)
class _Scheduler:
    """The engine's state through a run: the queue, the running batch (in admission order),
    the finished requests, the free KV blocks, the clock (seconds) and the counts of steps
    and preemptions; :meth:`step` plays one engine step of the module docstring's policy."""

    cost: StepCost
    budget_tokens: int
    max_seqs: int
    block_tokens: int
    prefill_first: bool
    free: int
    """Free KV blocks."""
    waiting: deque[_Request] = field(default_factory=deque)
    running: list[_Request] = field(default_factory=list)
    finished: list[_Request] = field(default_factory=list)
    now: float = 0.0
    """The clock: the end of the last step (seconds)."""
    preemptions: int = 0
    steps: int = 0

    def step(self) -> None:
        """Schedule one step (running requests, then waiting ones within the token budget),
        advance the clock by its :class:`StepCost` and the requests by what it carried."""
        self.steps += 1
        if self.steps > 50_000_000:
            raise RuntimeError("simulation did not finish")
        prefilling = self._prefilling()
        scheduled: list[tuple[_Request, int]] = []
        left, kv_read = self._schedule_running(scheduled, prefilling)
        if prefilling or not self.prefill_first:
            self._admit_waiting(scheduled, left)
        decode = sum(1 for r, _ in scheduled if r.done_prompt >= r.prompt)
        prefill = sum(n for r, n in scheduled if r.done_prompt < r.prompt)
        self.now += self.cost.seconds(prefill, decode, kv_read)
        _advance(scheduled, self.now)

    def _prefilling(self) -> bool:
        """Whether this step is prefill-only (``prefill_first``): a running request is
        part-way through its prompt, or the first waiting one can be admitted (a sequence
        slot and blocks for its first chunk free)."""
        return self.prefill_first and (
            any(q.done_prompt < q.prompt for q in self.running)
            or (bool(self.waiting) and len(self.running) < self.max_seqs and math.ceil(
                min(self.waiting[0].prompt, self.budget_tokens) / self.block_tokens)
                <= self.free))

    def _blocks_needed(self, r: _Request, n: int) -> int:
        """KV blocks ``r`` needs beyond those it holds to schedule ``n`` more tokens."""
        return math.ceil((r.context + n) / self.block_tokens) - r.blocks

    def _schedule_running(self, scheduled: list[tuple[_Request, int]],
                          prefilling: bool) -> tuple[int, int]:
        """Schedule the running requests in admission order into ``scheduled`` (a decode
        token each, or a prompt's next chunk; decodes wait in a prefill-only step),
        preempting for blocks; returns the token budget left and the context tokens the
        scheduled decodes read."""
        left = self.budget_tokens
        kv_read = 0
        i = 0
        running = self.running
        while i < len(running) and left > 0:
            r = running[i]
            if prefilling and r.done_prompt >= r.prompt:
                i += 1  # a prefill-only step: the decodes wait
                continue
            n = 1 if r.done_prompt >= r.prompt else min(r.prompt - r.done_prompt, left)
            need = self._blocks_needed(r, n)
            if not self._make_room(r, need, scheduled):
                continue  # preempted itself: back in the queue
            self.free -= need
            r.blocks += need
            scheduled.append((r, n))
            if r.done_prompt >= r.prompt:
                kv_read += r.context
            left -= n
            i += 1
        return left, kv_read

    def _make_room(self, r: _Request, need: int, scheduled: list[tuple[_Request, int]]) -> bool:
        """Free ``need`` KV blocks for ``r`` by recompute preemption of the newest running
        requests (each freed, reset and put back at the front of the queue, dropped from
        ``scheduled``); False when ``r`` itself was preempted."""
        while need > self.free:
            victim = self.running.pop()  # recompute preemption of the newest request
            self.free += victim.blocks
            victim.blocks = victim.done_prompt = victim.generated = 0
            victim.first_token_s = None
            self.waiting.appendleft(victim)
            self.preemptions += 1
            scheduled[:] = [(q, m) for q, m in scheduled if q is not victim]
            if victim is r:
                break
        return not (r.blocks == 0 and r not in self.running)

    def _admit_waiting(self, scheduled: list[tuple[_Request, int]], left: int) -> None:
        """Admit waiting requests first come first served into ``scheduled`` with their first
        chunk, while ``left`` budget tokens, a sequence slot and the chunk's blocks last."""
        while self.waiting and left > 0 and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            n = min(r.prompt - r.done_prompt, left)
            need = self._blocks_needed(r, n)
            if need > self.free:
                break
            self.waiting.popleft()
            self.free -= need
            r.blocks += need
            self.running.append(r)
            scheduled.append((r, n))
            left -= n

    def retire_finished(self) -> int:
        """Move the running requests that finished to ``finished``, freeing their blocks;
        returns how many finished."""
        done = [q for q in self.running if q.finish_s is not None]
        for r in done:
            self.running.remove(r)
            self.free += r.blocks
            self.finished.append(r)
        return len(done)


def _advance(scheduled: list[tuple[_Request, int]], now: float) -> None:
    """Advance the requests of a step that ended at ``now`` (seconds) by the tokens it carried:
    a prompt chunk (the last one gives the first token), or one generated token; a request
    with all its output tokens finishes at ``now``."""
    for r, n in scheduled:
        if r.done_prompt < r.prompt:
            r.done_prompt += n
            if r.done_prompt >= r.prompt:
                r.generated = 1
                r.first_token_s = now
        else:
            r.generated += 1
        if r.done_prompt >= r.prompt and r.generated >= r.output:
            r.finish_s = now


def _mean(values: list[float]) -> float:
    """The mean of ``values`` (nan when empty)."""
    return sum(values) / len(values) if values else math.nan


def _result(finished: list[_Request], clients: int, requests: int, output_tokens: int,
            end_s: float, preemptions: int, steps: int) -> SimResult:
    ttft = [r.first_token_s - r.arrival_s for r in finished if r.first_token_s is not None]
    tpot = [((r.finish_s or 0) - (r.first_token_s or 0)) / (r.output - 1)
            for r in finished if r.output > 1]
    e2e = [(r.finish_s or 0) - r.arrival_s for r in finished]
    by_arrival = sorted(finished, key=lambda r: r.arrival_s)
    wave = by_arrival[:min(clients, requests)]
    last_sent = by_arrival[-1].arrival_s
    steady = [r for r in by_arrival[len(wave):] if (r.finish_s or 0) <= last_sent]
    span = (max((r.finish_s or 0) for r in steady) - min(r.arrival_s for r in steady)
            if steady else math.nan)
    return SimResult(
        ttft_mean_s=_mean(ttft), tpot_mean_s=_mean(tpot), e2e_mean_s=_mean(e2e),
        output_tokens_per_s=sum(r.output for r in finished) / end_s,
        first_wave_ttft_mean_s=_mean([(r.first_token_s or 0) - r.arrival_s for r in wave]),
        steady_ttft_mean_s=_mean([(r.first_token_s or 0) - r.arrival_s for r in steady]),
        steady_tpot_mean_s=_mean([((r.finish_s or 0) - (r.first_token_s or 0)) / (r.output - 1)
                                  for r in steady if r.output > 1]),
        steady_output_tokens_per_s=(_steady_rate(by_arrival, clients, output_tokens)
                                    if steady and span > 0 else math.nan),
        preemptions=preemptions, steps=steps, ttfts_s=ttft)


def _steady_rate(by_arrival: list[_Request], clients: int, output_tokens: int) -> float:
    """Output tokens per second between the end of the first wave's last request and the
    last request sent: the output tokens of the completions in that window over its length."""
    start = max((r.finish_s or 0) for r in by_arrival[:clients])
    stop = by_arrival[-1].arrival_s
    done = [r.output for r in by_arrival if start < (r.finish_s or 0) <= stop]
    return sum(done) / (stop - start) if stop > start and done else math.nan
