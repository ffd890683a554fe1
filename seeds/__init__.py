"""The shipped catalog (GPUs, models, fleets, plans) as data files. This ``__init__`` makes the
folder the package ``planner._seeds`` of a built planner (pyproject's ``package-dir``), so an
installed planner reads it through :mod:`importlib.resources` (:mod:`planner.core.resources`)."""
