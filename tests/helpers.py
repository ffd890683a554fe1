"""Helpers the test modules share, so that each is written once: the CLI run in-process, and a
wait on a condition (with a deadline) instead of a fixed sleep.

The fixtures (``ws``, ``db_url``, the data folder) are in ``conftest.py`` and
``store_fixtures.py``; these are plain functions a test imports.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
from click.testing import CliRunner, Result


def invoke(*args: str, input: str | None = None, env: Mapping[str, str] | None = None,
           timeout_s: int | None = None, clean: bool = False) -> Result:
    """``planner ARGS`` in-process (click's runner; the data folder is the test's own).

    ``input``: text on stdin; ``env``: extra environment variables for the command;
    ``timeout_s``: an alarm fails the test instead of hanging for ever; ``clean``: fail the
    test on an exception other than ``SystemExit`` (a traceback a user would see)."""
    from planner.cli import cli

    old: Any = None
    if timeout_s is not None:
        def hung(_sig: int, _frame: Any) -> None:
            raise TimeoutError(f"planner {' '.join(args)} did not return in {timeout_s} s")

        old = signal.signal(signal.SIGALRM, hung)
        signal.alarm(timeout_s)
    try:
        result = CliRunner(env=dict(env) if env else None).invoke(cli, list(args), input=input)
    finally:
        if timeout_s is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    if clean:
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exc_info)
    return result


def run(*args: str, input: str | None = None, env: Mapping[str, str] | None = None,
        timeout_s: int | None = None, clean: bool = False) -> tuple[int, str, str]:
    """:func:`invoke`, as (exit code, stdout, stderr)."""
    result = invoke(*args, input=input, env=env, timeout_s=timeout_s, clean=clean)
    return result.exit_code, result.stdout, result.stderr


WAIT_S = 30.0
"""How long :func:`until` waits before failing: far above any wait seen on a loaded 2-core
machine, so reaching it means the condition never came, not that the machine was slow."""


async def until(pilot: Any, condition: Callable[[], bool | Awaitable[bool]], what: str,
                timeout_s: float = WAIT_S) -> None:
    """Let a Textual app run (``pilot.pause()``: its pending messages handled) until
    ``condition()`` holds; fail the test naming ``what`` after ``timeout_s`` seconds. Waits on
    the event itself, however long the machine takes, instead of sleeping a fixed time."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = condition()
        if asyncio.iscoroutine(got):
            got = await got
        if got:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout_s:g} s for {what}")
        await pilot.pause(0.01)
