"""The outside services some tests need (PostgreSQL, LibreOffice), as markers: without one, its
tests skip with the reason on a developer's machine and fail in CI (``CI=true``), where a
missing service means a broken set-up, not a test to leave out.

A pytest plugin (``pytest_plugins`` in ``conftest.py``). The markers are registered in
``pyproject.toml``; ``postgres`` is put on every test that reaches the PostgreSQL fixtures by
the collection hook here, ``libreoffice`` is written on the tests that recalculate in
LibreOffice (and :mod:`tests.libreoffice` refuses to run for a test without it, so a fast run
``-m "not libreoffice"`` really leaves LibreOffice out).
"""

from __future__ import annotations

import glob
import os

import pytest

from tests import libreoffice

POSTGRES_BINARIES = "/usr/lib/postgresql/*/bin/initdb"
"""Where ``.ci/postgres.sh`` finds the server it starts (Debian's packages)."""


def in_ci() -> bool:
    """Whether this run is CI's (``CI=true``, as ``.ci/run`` and CI services set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing(service: str) -> str | None:
    """Why ``service`` (a marker name) cannot run here, or None when it can."""
    if service == "postgres":
        if os.environ.get("PLANNER_TEST_POSTGRES_URL") or glob.glob(POSTGRES_BINARIES):
            return None
        return ("PostgreSQL is not installed (no PLANNER_TEST_POSTGRES_URL, no "
                f"{POSTGRES_BINARIES}): install postgresql or run .ci/run")
    if service == "libreoffice":
        if libreoffice.soffice() is not None:
            return None
        return ("LibreOffice is not installed (no soffice on PATH): install "
                "libreoffice-calc-nogui or run .ci/run")
    raise ValueError(f"unknown service marker {service!r}: postgres or libreoffice")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``postgres`` every test that uses the PostgreSQL server: ``postgres_url`` itself
    or the ``postgresql`` case of ``db_url``."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and callspec.params.get("db_url") == "postgresql"
        if on_postgres or "postgres_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


@pytest.hookimpl(tryfirst=True)  # before the fixtures: a missing server is not started
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (locally) or fail (in CI) a test whose service is missing, saying which and why."""
    libreoffice.marked = item.get_closest_marker("libreoffice") is not None
    for service in ("postgres", "libreoffice"):
        if item.get_closest_marker(service) is None:
            continue
        reason = missing(service)
        if reason is None:
            continue
        if in_ci():
            pytest.fail(f"{reason} (CI=true: CI must provide it)", pytrace=False)
        pytest.skip(reason)
