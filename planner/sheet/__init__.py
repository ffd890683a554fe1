"""The scenario sheet: input and output columns, dependency order, vectorized evaluation.

``planner.sheet.evaluate(frame)`` evaluates a pandas DataFrame of scenarios (one row each) and
returns it with every output column added; see :mod:`planner.sheet.frame`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def evaluate(frame: pd.DataFrame, *args: Any, **kwargs: Any) -> pd.DataFrame:
    """See :func:`planner.sheet.frame.evaluate`."""
    # lazy: the table machinery and catalog reader (~0.1 s), which `planner --help` does not need
    # (it imports planner.sheet.inputs, and so this package)
    # lazy: loads numpy (~114 ms), only when this runs
    from planner.sheet.frame import evaluate as _evaluate

    return _evaluate(frame, *args, **kwargs)
