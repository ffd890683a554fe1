"""Shared fixtures: catalog specs, a helper that evaluates one scenario through the service, each
test's own data folder and the workspace on it (``ws``). The CLI runner and waits are in
``tests/helpers.py``; the database fixtures in ``tests/store_fixtures.py``."""

from __future__ import annotations

import inspect
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner import service
from planner.core.units import GB, GiB
from planner.service import Workspace
from planner.spec import catalog
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec

pytest_plugins = [
    "tests.store_fixtures",  # the database fixtures: db_url, postgres_url, the templates
    "tests.services",  # postgres/libreoffice markers: skip locally, fail in CI when missing
    "pytester",  # tests of those hooks
]


def spec(name: str) -> ModelSpec:
    """A catalog model's spec."""
    return catalog.resolve_model_spec(name)


def gpu(memory_gib: float = 80, tflops: float = 1000, bandwidth_gbs: float = 1000,
        price: float = 2.0) -> GpuSpec:
    """A round-numbered ad-hoc GPU."""
    return GpuSpec(name="test-gpu", memory_bytes=round(memory_gib * GiB),
                   flops_per_s={"bf16": tflops * 1e12, "fp16": tflops * 1e12,
                                "fp8": 2 * tflops * 1e12, "int8": 2 * tflops * 1e12},
                   bandwidth_bytes_per_s=bandwidth_gbs * GB, price_usd_per_hour=price)


def estimate(model: str | ModelSpec, g: GpuSpec | None = None, **inputs: Any) -> dict[str, Any]:
    """``service.estimate`` with keyword inputs."""
    s = spec(model) if isinstance(model, str) else model
    return service.estimate(s, g or gpu(), inputs)


@pytest.fixture
def llama3_8b() -> ModelSpec:
    return spec("llama-3-8b")


@pytest.fixture(autouse=True)
def isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      seeded_sqlite_template: Path) -> Iterator[Path]:
    """Every test gets its own data folder holding a copy of the seeded database; nothing
    touches the user's real data folder or a database named in the environment."""
    data = tmp_path / "planner-data"
    data.mkdir()
    shutil.copy(seeded_sqlite_template, data / "planner.db")
    monkeypatch.setenv("PLANNER_DATA_DIR", str(data))
    monkeypatch.delenv("PLANNER_DATABASE_URL", raising=False)
    yield data


@pytest.fixture
def ws_url(isolated_data_dir: Path) -> str | None:
    """The database :func:`ws` opens: by default the data folder's own (None: what
    ``Workspace.open()`` and the CLI open, a copy of the seeded template). A module whose
    workspace tests run on each backend overrides this with ``db_url``."""
    return None


@pytest.fixture
def ws(ws_url: str | None) -> Iterator[Workspace]:
    """A workspace on a seeded database (:func:`ws_url`), closed after the test."""
    workspace = Workspace.open(ws_url)
    yield workspace
    workspace.close()


def drives_the_app(item: pytest.Item) -> bool:
    """Whether a test starts the Textual app: a coroutine test (the suite's only coroutine tests
    are Pilot sessions, ``async with app.run_test()``) or a snapshot (``snap_compare`` runs the
    app to take it)."""
    function = getattr(item, "function", None)
    fixtures = getattr(item, "fixturenames", ())
    return inspect.iscoroutinefunction(function) or "snap_compare" in fixtures


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that drives the app ``pilot`` (1-10 s each: the app starts, loads a
    fleet and waits for its workers), so the fast run can leave them out by name; then order
    the run longest group first (:func:`run_order`)."""
    for item in items:
        if drives_the_app(item):
            item.add_marker(pytest.mark.pilot)
    items.sort(key=run_order)


DURATIONS_S: dict[str, float] = json.loads(
    (Path(__file__).parent / "durations.json").read_text())["seconds"]
"""Measured call time (s) of the slowest tests, by node id (``tests/durations.json``)."""


def run_order(item: pytest.Item) -> float:
    """Longest first, a stable sort: the measured tests by their time (``durations.json``),
    then ``slow`` or ``libreoffice`` ones, then ``pilot`` (1-10 s), then the rest (mostly well
    under a second). With ``--dist worksteal`` (pyproject's addopts) each worker starts on
    the long tests at the front of its share, and an idle one steals from the end of the
    other's, so a multi-minute test never starts near the end of the run and runs alone."""
    if item.nodeid in DURATIONS_S:
        return -DURATIONS_S[item.nodeid]
    if item.get_closest_marker("slow") or item.get_closest_marker("libreoffice"):
        return -2.0
    return -1.0 if item.get_closest_marker("pilot") else 0.0
