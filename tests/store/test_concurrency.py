"""Two real processes on one database: stale edits refused, imports atomic under kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.service import Workspace
from tests.store_fixtures import dump

EDITOR = """
import json, os, sys, time
from planner.spec.domain import ConflictError
import pytest

from planner.service import Workspace
url, me, barrier, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ws = Workspace.open(url)
sc = ws.scenario("demo", "llama3-8b-request-1024+128")      # both read version 1
open(os.path.join(barrier, me), "w").close()
deadline = time.time() + 30
while len(os.listdir(barrier)) < 2 and time.time() < deadline:
    time.sleep(0.01)
try:
    new = ws.set_scenario("demo", sc.name, {"batch": batch}, expected_version=sc.version)
    print(json.dumps({"ok": True, "version": new.version}))
except ConflictError as exc:
    print(json.dumps({"ok": False, "error": str(exc), "changed": exc.changed}))
"""

IMPORTER = """
import json, sys, time
from pathlib import Path
import pytest

from planner.service import Workspace
url, marker = sys.argv[1], sys.argv[2]
config = json.loads(Path("seeds/models/llama-2-7b.json").read_text())
ws = Workspace.open(url)
def items():
    for i in range(5000):
        if i == 200:
            Path(marker).write_text("started")
        time.sleep(0.002)
        yield f"bulk-{i:05d}", config, "bulk"
ws.import_models(items())
print("finished")
"""


def _python(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])


@pytest.mark.slow
def test_two_processes_edit_the_same_scenario(db_url: str, tmp_path: Path) -> None:
    import json

    Workspace.open(db_url).close()
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [_python(EDITOR, db_url, name, str(barrier), str(batch))
             for name, batch in (("a", 48), ("b", 96))]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    winners = [r for r in results if r["ok"]]
    losers = [r for r in results if not r["ok"]]
    assert len(winners) == 1 and len(losers) == 1
    assert "changed by someone else" in losers[0]["error"]
    with Workspace.open(db_url) as ws:
        sc = ws.scenario("demo", "llama3-8b-request-1024+128")
        assert sc.version == 2
        assert losers[0]["changed"] == {"batch": sc.inputs["batch"]}
        history = ws.history("demo", sc.name)
        assert [(c.field, c.old_value, c.new_value) for c in history] == [
            ("batch", 1, sc.inputs["batch"])]


@pytest.mark.slow
def test_killed_import_leaves_the_database_as_it_was(db_url: str, tmp_path: Path) -> None:
    Workspace.open(db_url).close()
    before = dump(db_url)
    marker = tmp_path / "started"
    proc = _python(IMPORTER, db_url, str(marker))
    deadline = time.time() + 60
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert marker.exists(), proc.communicate()[1]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert dump(db_url) == before
    with Workspace.open(db_url) as ws:  # and it opens and writes normally afterwards
        assert not [m for m in ws.models() if m.name.startswith("bulk-")]
        ws.new_fleet("after-crash")
