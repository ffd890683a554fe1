"""Where the planner's shipped files are: the Alembic ``migrations/`` and the ``seeds/``
catalog.

Both live at the top of the repository. A wheel carries a copy of them inside the package
(``planner/_data/``, put there by ``setup.py``), because an installed package has no repository
around it; a checkout or an editable install reads the repository's own folders. Paths are
package-relative, so the same code finds them from a checkout and from ``site-packages``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    """The folder ``name`` (``migrations`` or ``seeds``): the wheel's copy inside the package
    if there is one, else the repository's."""
    bundled = _PACKAGE / "_data" / name
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / name


def migrations_dir() -> Path:
    """The Alembic script folder (``env.py``, ``versions/``)."""
    return shipped_dir("migrations")


def seeds_dir() -> Path:
    """The shipped catalog folder (``gpus.toml``, ``fleets.toml``, ``models/*.json``)."""
    return shipped_dir("seeds")
