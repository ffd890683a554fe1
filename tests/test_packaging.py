"""A wheel is a planner that starts: it carries ``migrations/``, ``seeds/`` and the UI's
stylesheet, and the installed code finds them without a repository around it (issue 16,
item 1). The wheel is built from a copy of the source tree, installed by unpacking it into a
folder outside the checkout, and run there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "planner", "migrations",
          "seeds")
RUN = "import sys; from planner.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planner wheel, built with ``pip wheel --no-deps`` from a copy of the sources."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_data"))
        elif (ROOT / name).exists():
            shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "--wheel-dir", str(out), str(src)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    (found,) = out.glob("planner-*.whl")
    return found


def test_the_wheel_carries_migrations_seeds_and_stylesheet(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {"planner/_data/migrations/env.py", "planner/_data/migrations/script.py.mako",
                "planner/_data/seeds/gpus.toml", "planner/_data/seeds/fleets.toml",
                "planner/_data/seeds/models/sources.toml", "planner/tui/app.tcss"}
    expected |= {f"planner/_data/migrations/versions/{p.name}"
                 for p in (ROOT / "migrations" / "versions").glob("*.py")}
    expected |= {f"planner/_data/seeds/{p.name}" for p in (ROOT / "seeds").glob("*.toml")}
    expected |= {f"planner/_data/seeds/models/{p.name}"
                 for p in (ROOT / "seeds" / "models").glob("*.json")}
    assert expected <= names, sorted(expected - names)
    assert not any("__pycache__" in n for n in names)


def test_the_installed_wheel_starts_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "PLANNER_DATA_DIR": str(tmp_path / "data")}
    env.pop("PLANNER_DATABASE_URL", None)
    env.pop("PLANNER_SEEDS_DIR", None)

    def planner(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True,
                              text=True, cwd=work, env=env, timeout=300)
        assert proc.returncode == 0, (args, proc.stderr)
        return proc.stdout

    where = subprocess.run(
        [sys.executable, "-c", "import importlib.resources as r, planner.resources as p; "
         "print(p.__file__); print(p.migrations_dir()); print(p.seeds_dir()); "
         "print(r.files('planner.tui').joinpath('app.tcss').is_file())"],
        capture_output=True, text=True, cwd=work, env=env, check=True).stdout.split("\n")
    for path in where[:3]:
        assert Path(path).is_relative_to(site), where
    assert where[3] == "True"
    data = json.loads(planner("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm",
                              "--json"))
    assert data["fits"] is True
    rows = json.loads(planner("scenario", "list", "--json"))
    assert len(rows) == 10
    planner("export", "--out", str(tmp_path / "report.xlsx"))
    assert (tmp_path / "report.xlsx").stat().st_size > 0
