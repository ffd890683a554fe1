"""The Alembic scripts (``env.py``, ``versions/``). This ``__init__`` makes the folder the
package ``planner._migrations`` of a built planner (pyproject's ``package-dir``), so an installed
planner finds it through :mod:`importlib.resources` (:mod:`planner.core.resources`)."""
