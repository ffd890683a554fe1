"""Build hook: ship the top-level ``migrations/`` and ``seeds/`` inside the wheel.

They stay at the top of the repository (Alembic's and the catalog's natural place); a wheel
(``pip install .``, ``pipx``, ``uv tool install``, a company mirror) gets a copy of them in
``planner/_data/``, where :mod:`planner.resources` looks first. An editable install reads them
from the checkout instead, so nothing is copied for it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = ("migrations", "seeds")


class BuildPyWithData(build_py):
    """``build_py`` that also copies :data:`SHIPPED` into ``planner/_data`` of the build."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        root = Path(__file__).resolve().parent
        for name in SHIPPED:
            target = Path(self.build_lib) / "planner" / "_data" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(root / name, target,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithData})
