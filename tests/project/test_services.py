"""The service markers (tests/services.py): a test needing PostgreSQL or LibreOffice skips with
the reason where the service is missing, and fails in CI (``CI=true``), where a missing service
is a broken set-up; tests that need neither run either way."""

from __future__ import annotations

import pytest

from tests import services

CASES = '''
import pytest

@pytest.mark.libreoffice
def test_recalculates():
    pass

@pytest.mark.postgres
def test_on_postgres():
    pass

@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request):
    return request.param

def test_each_backend(db_url):
    pass

def test_plain():
    pass
'''

INNER = ("-p", "no:textual-snapshot", "-p", "no:xdist")  # plugins whose state is the outer run's


@pytest.fixture
def nothing_installed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """No soffice on PATH, no PostgreSQL binaries, no PLANNER_TEST_POSTGRES_URL."""
    pytester.makeconftest("pytest_plugins = ['tests.services']\n")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n"
                     "markers =\n    libreoffice\n    postgres\n")
    pytester.makepyfile(test_cases=CASES)
    empty = pytester.mkdir("empty-bin")
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("PLANNER_TEST_POSTGRES_URL", raising=False)
    monkeypatch.setattr(services, "POSTGRES_BINARIES", str(empty / "*" / "initdb"))


def test_missing_services_skip_with_the_reason_locally(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       nothing_installed: None) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest_inprocess("-rs", *INNER)
    result.assert_outcomes(passed=2, skipped=3)
    result.stdout.fnmatch_lines([
        "SKIPPED [[]1[]] *LibreOffice is not installed (no soffice on PATH)*",
        "SKIPPED [[]2[]] *PostgreSQL is not installed (no PLANNER_TEST_POSTGRES_URL*",
    ], consecutive=False)


def test_missing_services_fail_in_ci(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                     nothing_installed: None) -> None:
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=2, errors=3)
    result.stdout.fnmatch_lines(["*LibreOffice is not installed*(CI=true: CI must provide it)*"],
                                consecutive=False)


def test_present_services_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                              nothing_installed: None) -> None:
    """With the services there (a PostgreSQL URL given, a soffice on PATH) nothing skips."""
    soffice = pytester.path / "empty-bin" / "soffice"
    soffice.write_text("#!/bin/sh\n")
    soffice.chmod(0o755)
    monkeypatch.setenv("PLANNER_TEST_POSTGRES_URL", "postgresql+psycopg://nobody@127.0.0.1/x")
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=5)


def test_only_the_postgresql_case_of_db_url_is_marked(pytester: pytest.Pytester,
                                                      nothing_installed: None) -> None:
    result = pytester.runpytest_inprocess(*INNER, "-m", "not postgres",
                                          "--collect-only", "-q")
    result.stdout.fnmatch_lines(["test_cases.py::test_recalculates",
                                 "test_cases.py::test_each_backend[[]sqlite[]]",
                                 "test_cases.py::test_plain", "*3/5 tests collected*"])
