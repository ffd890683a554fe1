"""``output_tokens_cv`` (planner/compute/inputs.py, planner/formulas/serving.py): with cv = 0
every output is bit-identical to the serving model without the term; with cv > 0 a running
slot holds ``S + G(1 + cv^2)/2`` KV tokens, so fewer requests fit and each reads more KV."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from planner.core.errors import PlannerError
from planner.formulas import serving
from planner.service import Workspace
from planner.spec.domain import Scenario


def _fleet(ws: Workspace) -> list[Scenario]:
    """The demo fleet as seeded, and each of its inference rows on every engine in a closed
    loop of 64 clients (the demo rows are roofline rows)."""
    demo = ws.scenarios("demo")
    out = list(demo)
    for sc in demo:
        if sc.kind != "inference":
            continue
        for engine in ("vllm", "sglang", "trtllm"):
            out.append(dataclasses.replace(sc, inputs={**sc.inputs, "engine": engine,
                                                       "concurrency": 64}))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


@pytest.mark.slow
def test_cv_zero_is_bit_identical_over_the_demo_fleet(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with Workspace.open(f"sqlite:///{tmp_path / 'cv.db'}") as ws:
        fleet = _fleet(ws)
        assert len(fleet) > 10 and all(s.inputs["output_tokens_cv"] == 0.0 for s in fleet)
        with_term = ws.evaluate_many(fleet)
        monkeypatch.setattr(serving, "_slot_context_extra_tokens", lambda g, cv: 0)
        without_term = ws.evaluate_many(fleet)
        # the patched term really is the one evaluated (no cached figures): a non-zero stand-in
        # moves the figures
        monkeypatch.setattr(serving, "_slot_context_extra_tokens", lambda g, cv: g * 1.0)
        moved = ws.evaluate_many(fleet)
    served = [a for a in with_term if "max_running_batch" in a]
    assert len(served) >= 3 * 4
    assert all(set(a) == set(b) for a, b in zip(with_term, without_term, strict=True))
    differing = [(i, k) for i, (a, b) in enumerate(zip(with_term, without_term, strict=True))
                 for k in a if not _same(a[k], b[k])]
    assert differing == []
    assert any(a.get("max_running_batch") != m.get("max_running_batch")
               for a, m in zip(with_term, moved, strict=True))


@pytest.mark.slow
def test_cv_shrinks_the_kv_limited_batch(tmp_path: Path) -> None:
    """Qwen-sized rows on one GPU, KV-limited: the running batch scales as the slot context,
    (S + G/2) / (S + G(1 + cv^2)/2); a cv outside 0..3 is refused with the field's name."""
    with Workspace.open(f"sqlite:///{tmp_path / 'cv.db'}") as ws:
        base = next(s for s in ws.scenarios("demo") if s.kind == "inference")
        rows = [dataclasses.replace(base, inputs={
            **base.inputs, "engine": "vllm", "prompt_tokens": 1000, "output_tokens": 1000,
            "max_num_seqs": 100000, "output_tokens_cv": cv}) for cv in (0.0, 1.0, 2.0)]
        out = ws.evaluate_many(rows)
        batch = [o["max_running_batch"] for o in out]
        assert batch[0] > 8, batch  # KV-limited, not the one-request floor
        # slot context 1500, 2000, 3500 tokens
        assert batch[1] == pytest.approx(batch[0] * 1500 / 2000, abs=1.5)
        assert batch[2] == pytest.approx(batch[0] * 1500 / 3500, abs=1.5)
        assert out[1]["serving_kv_memory_s_per_request"] > out[0][
            "serving_kv_memory_s_per_request"]
        with pytest.raises(PlannerError, match="output_tokens_cv"):
            ws.new_scenario("demo", "too-variable", model=base.model, gpu=base.gpu,
                            output_tokens_cv=3.5)
