"""Issue 16 #4: the store tests' PostgreSQL server never collides with another.

``.ci/postgres.sh`` used to start its server on port 54331 in a fixed folder, stopping whatever
ran there and deleting that folder, and the suite left its own server running. Now every start
gets a free port and a new private folder, and ``stop`` removes only the server it is given.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import text

from planner.store.engine import make_engine

pytestmark = pytest.mark.postgres  # starts servers of its own with .ci/postgres.sh

SCRIPT = str(Path(__file__).resolve().parents[2] / ".ci" / "postgres.sh")


def _start() -> tuple[str, str]:
    """(URL, data folder) of a new server."""
    proc = subprocess.run(["bash", SCRIPT], capture_output=True, text=True, check=True)
    data = re.search(r"^PLANNER_PG_DATA=(.+)$", proc.stderr, re.MULTILINE)
    assert data is not None, proc.stderr
    return proc.stdout.strip().splitlines()[-1], data.group(1)


def _answers(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()


def test_two_servers_get_their_own_port_and_folder_and_stop_leaves_the_other() -> None:
    first_url, first_data = _start()
    try:
        second_url, second_data = _start()
        try:
            port = re.compile(r":(\d+)/")
            assert port.search(first_url).group(1) != port.search(second_url).group(1)  # type: ignore[union-attr]
            assert first_data != second_data
            assert _answers(first_url) and _answers(second_url)
        finally:
            subprocess.run(["bash", SCRIPT, "stop", second_data], capture_output=True,
                           check=True)
        assert not Path(second_data).exists()
        assert _answers(first_url)  # the other server is untouched
    finally:
        subprocess.run(["bash", SCRIPT, "stop", first_data], capture_output=True, check=True)
    assert not Path(first_data).exists()
