"""The compute layer: the column registry (inputs with type, unit and bounds; outputs with
formula and unit), one validation path, dependency order, vectorized evaluation and Excel
rendering of the formulas in :mod:`planner.formulas`.

``planner.compute.evaluate(frame)`` (also ``planner.evaluate`` and ``planner.sheet.evaluate``,
the names notebooks use) evaluates a pandas DataFrame of scenarios (one row each) and
returns it with every output column added; see :mod:`planner.compute.frame`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def evaluate(frame: pd.DataFrame, *args: Any, **kwargs: Any) -> pd.DataFrame:
    """See :func:`planner.compute.frame.evaluate`."""
    # lazy: the table machinery and catalog reader (~0.1 s), which `planner --help` does not need
    # (it imports planner.compute.inputs, and so this package)
    # lazy: loads numpy (~114 ms), only when this runs
    from planner.compute.frame import evaluate as _evaluate

    return _evaluate(frame, *args, **kwargs)
