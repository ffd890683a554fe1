"""A wheel is a planner that starts: it carries ``migrations/``, ``seeds/`` and the UI's
stylesheet, and the installed code finds them without a repository around it (issue 16,
item 1). The wheel is built from a copy of the source tree, installed by unpacking it into a
folder outside the checkout, and run there. The top-level folders are package data
(``planner._migrations``, ``planner._seeds``: pyproject's ``package-dir``, no build hook, issue
27 item 5), and pyproject lists every package of ``planner/`` by name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ("pyproject.toml", "MANIFEST.in", "README.md", "planner", "migrations", "seeds")
RUN = "import sys; from planner.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planner wheel, built with ``pip wheel --no-deps`` from a copy of the sources."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif (ROOT / name).exists():
            shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "--wheel-dir", str(out), str(src)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    (found,) = out.glob("planner-*.whl")
    return found


@pytest.mark.slow
def test_the_wheel_carries_migrations_seeds_and_stylesheet(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {"planner/_migrations/env.py", "planner/_migrations/script.py.mako",
                "planner/_seeds/gpus.toml", "planner/_seeds/fleets.toml",
                "planner/_seeds/models/sources.toml", "planner/tui/app.tcss", "planner/py.typed"}
    expected |= {f"planner/_migrations/versions/{p.name}"
                 for p in (ROOT / "migrations" / "versions").glob("*.py")}
    expected |= {f"planner/_seeds/{p.name}" for p in (ROOT / "seeds").glob("*.toml")}
    expected |= {f"planner/_seeds/models/{p.name}"
                 for p in (ROOT / "seeds" / "models").glob("*.json")}
    expected |= {f"planner/{p.relative_to(ROOT / 'planner').as_posix()}"
                 for p in (ROOT / "planner").rglob("*.py")}
    assert expected <= names, sorted(expected - names)
    assert not any("__pycache__" in n or "/_data/" in n for n in names)


def test_pyproject_lists_every_package_of_the_tree() -> None:
    """A package-dir mapping means no automatic discovery: a new ``planner/`` subpackage must be
    named in pyproject's ``packages``, else the wheel silently lacks it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(config["setuptools"]["packages"])
    tree = {".".join(p.parent.relative_to(ROOT).parts)
            for p in (ROOT / "planner").rglob("__init__.py")}
    mapped = {name: folder for name, folder in config["setuptools"]["package-dir"].items()}
    assert mapped == {"planner._migrations": "migrations", "planner._seeds": "seeds"}
    assert listed == tree | set(mapped), sorted(listed ^ (tree | set(mapped)))


@pytest.mark.slow
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
        [sys.executable, "-c", "import importlib.resources as r, planner.core.resources as p; "
         "print(p.__file__); print(p.migrations_dir()); print(p.seeds_dir()); "
         "print(r.files('planner.tui').joinpath('app.tcss').is_file())"],
        capture_output=True, text=True, cwd=work, env=env, check=True).stdout.split("\n")
    assert where[:4] == [str(site / "planner" / "core" / "resources.py"),
                         str(site / "planner" / "_migrations"), str(site / "planner" / "_seeds"),
                         "True"], where
    data = json.loads(planner("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm",
                              "--json"))
    assert data["fits"] is True
    rows = json.loads(planner("scenario", "list", "--json"))
    assert len(rows) == 10
    planner("export", "--out", str(tmp_path / "report.xlsx"))
    assert (tmp_path / "report.xlsx").stat().st_size > 0


def test_a_checkout_reads_its_own_folders() -> None:
    """Run from a source tree (this one), the planner reads the migrations and catalog beside
    its own ``planner/``, not those of whichever checkout an editable install points at."""
    from planner.core import resources

    assert resources.migrations_dir() == ROOT / "migrations"
    assert resources.seeds_dir() == ROOT / "seeds"
