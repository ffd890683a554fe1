"""The ``--inferencex-lengths`` mapping of benchmarks/bench_serving_accuracy.py: InferenceX's
client draws input and output lengths uniformly over ``[0.8 L, L]``
(``utils/bench_serving/benchmark_serving.py`` ``sample_random_requests``,
``--random-range-ratio 0.8`` in its workflow templates), so a run of ISL/OSL 1024 is a mean of
921.6 tokens with an output coefficient of variation 0.2 / (sqrt(3) * 1.8)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.bench_serving_accuracy import (
    INFERENCEX_RANGE_RATIO,
    inferencex_lengths,
)


def test_uniform_draw_mean_and_cv() -> None:
    values = {"input_tokens": 8192, "output_tokens": 1024}
    settings: dict[str, float] = {}
    inferencex_lengths(values, settings)
    assert INFERENCEX_RANGE_RATIO == 0.8
    assert values == {"input_tokens": pytest.approx(7372.8), "output_tokens": pytest.approx(921.6)}
    assert settings["output_tokens_cv"] == pytest.approx(0.2 / (math.sqrt(3) * 1.8), rel=1e-12)
    assert settings["output_tokens_cv"] == pytest.approx(0.06415, abs=1e-5)


def test_the_closed_form_matches_the_client_draw() -> None:
    """The client's own draw, ``randint(int(0.8 L), L + 1)``, over a million samples: mean and
    coefficient of variation within 0.1 % of the closed form (the integer grid's half-token
    offsets are below that at L = 1024)."""
    draw = np.random.default_rng(0).integers(int(1024 * 0.8), 1024 + 1, size=1_000_000)
    values = {"input_tokens": 1024, "output_tokens": 1024}
    settings: dict[str, float] = {}
    inferencex_lengths(values, settings)
    assert draw.mean() == pytest.approx(values["output_tokens"], rel=1e-3)
    assert draw.std() / draw.mean() == pytest.approx(settings["output_tokens_cv"], rel=1e-2)
