"""Where the planner's shipped files are: the Alembic ``migrations/`` and the ``seeds/``
catalog.

Both live at the top of the repository. The build maps them into the package as
``planner._migrations`` and ``planner._seeds`` (pyproject's ``package-dir``), so an installed
planner reads them as package data through :mod:`importlib.resources`. A source checkout, run
from its folder or installed editable, reads the folders beside its own ``planner/``: an
editable install's import finder knows only the checkout it was installed from, and a second
worktree sharing that environment must read its own migrations and catalog, not the first's.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from planner.core.errors import PlannerError

_PACKAGE = Path(__file__).resolve().parent

SHIPPED = {"migrations": "planner._migrations", "seeds": "planner._seeds"}
"""Repository folder -> the package it becomes in a built planner."""


def shipped_dir(name: str) -> Path:
    """The folder ``name`` (``migrations`` or ``seeds``): the checkout's, when ``planner/``
    sits in a source tree (a ``pyproject.toml`` beside it), else the installed package's."""
    checkout = _PACKAGE.parent / name
    if (_PACKAGE.parent / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    installed = files(SHIPPED[name])
    if not isinstance(installed, Path):  # a zipped install: Alembic needs real files
        raise PlannerError(f"the planner's {name} are inside an archive ({installed}); "
                           "install the planner unpacked (pip install, not a zipapp)")
    return installed


def migrations_dir() -> Path:
    """The Alembic script folder (``env.py``, ``versions/``)."""
    return shipped_dir("migrations")


def seeds_dir() -> Path:
    """The shipped catalog folder (``gpus.toml``, ``fleets.toml``, ``models/*.json``)."""
    return shipped_dir("seeds")
