"""planner: LLM capacity planning over a database of models, GPUs and scenarios.

The package is layered (docs/design.md): ``core`` (units, errors, settings), ``spec`` (model and
GPU specs, the shipped catalog), ``formulas`` (the scenario formulas), ``compute`` (the column
registry and vectorized evaluation), ``store`` (the database), ``io`` (workbooks and bench files),
``service`` (use cases), ``present`` (what the CLI and UI show), and the ``cli`` and ``tui``.

``planner.evaluate(frame)`` evaluates a pandas DataFrame of scenarios (one row each) and returns
it with every output column added: :func:`planner.compute.frame.evaluate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def evaluate(frame: pd.DataFrame, *args: Any, **kwargs: Any) -> pd.DataFrame:
    """Evaluate a DataFrame of scenarios: :func:`planner.compute.frame.evaluate`."""
    # lazy: numpy and the catalog, which `import planner` (run by every module here) must not load
    from planner.compute.frame import evaluate as _evaluate

    return _evaluate(frame, *args, **kwargs)
