"""Exact agreement with the real Hugging Face implementations.

``fixtures/hf_param_counts.json`` is written by ``scripts/hf_param_counts.py``, which instantiates
every config under ``seeds/models`` and ``fixtures/hf_configs`` with transformers on the meta
device and sums ``p.numel()`` per component. The estimator must match every component exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog import spec_from_file
from planner.estimator.hf_config import SUPPORTED_MODEL_TYPES
from planner.estimator.params import count_params

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "hf_param_counts.json").read_text())
MODELS = FIXTURE["models"]
COMPONENTS = ("embedding", "position", "attention", "mlp", "router", "norm", "lm_head",
              "total", "active")


def test_fixture_provenance() -> None:
    assert FIXTURE["generated_by"] == "scripts/hf_param_counts.py"
    assert FIXTURE["transformers_version"] == "5.23.0"
    assert len(MODELS) == 31


def test_every_supported_model_type_has_fixtures() -> None:
    covered = {m["model_type"] for m in MODELS.values()}
    assert covered == set(SUPPORTED_MODEL_TYPES)
    assert len(SUPPORTED_MODEL_TYPES) == 14


def test_every_config_on_disk_has_a_fixture() -> None:
    on_disk = {p.stem for d in ("seeds/models", "tests/fixtures/hf_configs")
               for p in (ROOT / d).glob("*.json")}
    assert on_disk == set(MODELS)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_counts_match_transformers(name: str) -> None:
    expected = MODELS[name]
    counts = count_params(spec_from_file(ROOT / expected["config"], name)).as_dict()
    assert {c: counts[c] for c in COMPONENTS} == {c: expected[c] for c in COMPONENTS}
