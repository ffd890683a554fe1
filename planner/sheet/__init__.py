"""``planner.sheet``: the notebook API's old name for :mod:`planner.compute`.

``planner.sheet.evaluate(frame)`` keeps working for the notebooks and scripts written against it;
new code imports :func:`planner.compute.evaluate` (or :func:`planner.evaluate`).
"""

from __future__ import annotations

from planner.compute import evaluate

__all__ = ["evaluate"]
