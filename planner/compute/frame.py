"""Evaluate a pandas DataFrame of scenarios: the notebook entry point.

Each row is a scenario: a ``model`` and a ``gpu`` name, an optional ``kind`` (inference or
training, default inference), optional ``lora_targets``, and any input columns (absent ones take
their defaults). The result is a copy of the frame with every output column added; columns that
do not apply to a row's kind are NaN. Models and GPUs come from the catalog in ``seeds/`` unless
given (``Workspace.evaluate_frame`` passes the database's).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from planner.compute.graph import float_block, float_rows
from planner.compute.profiles import CalibrationFigures
from planner.compute.table import KINDS, evaluate_table, graph
from planner.core.errors import ValidationError
from planner.spec import catalog
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec

if TYPE_CHECKING:
    import pandas as pd


def _catalog_models() -> dict[str, ModelSpec]:
    return {name: catalog.resolve_model_spec(name) for name in catalog.model_names()}


def _catalog_gpus() -> dict[str, GpuSpec]:
    return dict(catalog.load_gpus())


def evaluate(frame: pd.DataFrame, models: Mapping[str, ModelSpec] | None = None,
             gpus: Mapping[str, GpuSpec] | None = None,
             outputs: Sequence[str] | None = None,
             profiles: Sequence[CalibrationFigures] | None = None) -> pd.DataFrame:
    """``frame`` with the output columns of each row's scenario added (one vectorized call per
    kind). Raises :class:`ValidationError` naming the column, row label and allowed range of the
    first bad value; the input frame is never modified."""
    import pandas as pd

    for required in ("model", "gpu"):
        if required not in frame.columns:
            raise ValidationError(required, "is a required column of the scenario frame")
    models = models if models is not None else _catalog_models()
    gpus = gpus if gpus is not None else _catalog_gpus()
    kinds = _kinds(frame)
    present = [k for k in KINDS if (kinds == k).any()]
    added: dict[str, Any] = {}
    for kind in present:
        mask = (kinds == kind).to_numpy()
        part = frame if len(present) == 1 else frame.loc[mask]
        wanted = [o for o in (outputs if outputs is not None else graph(kind).outputs)
                  if o in graph(kind).formulas]
        values = evaluate_table({c: part[c].to_numpy() for c in part.columns}, models, gpus,
                                kind, wanted, labels=part.index, profiles=profiles)
        if len(present) == 1:
            added.update((name, values[name]) for name in wanted)
        else:
            _merge_kind(added, values, wanted, mask, len(frame))
    computed = _frame_of(added, frame.index)
    return pd.concat([frame.drop(columns=[c for c in added if c in frame.columns]), computed],
                     axis=1)


def _merge_kind(added: dict[str, Any], values: Mapping[str, Any], wanted: Sequence[str],
                mask: np.ndarray, n: int) -> None:
    """One kind's outputs into the rows ``mask`` of the frame's output columns (nullable
    boolean or float columns of ``n`` rows, empty where another kind's rows are)."""
    import pandas as pd

    for name in wanted:
        dtype: Literal["boolean", "float64"] = (
            "boolean" if values[name].dtype == np.bool_ else "float64")
        column = added.setdefault(name, pd.array([None] * n, dtype=dtype))
        column[mask] = values[name]


def _kinds(frame: pd.DataFrame) -> pd.Series:
    """Each row's kind (``kind`` stripped and lower-cased; absent: inference); the first
    row of another kind is refused, naming its label."""
    import pandas as pd

    kinds = (frame["kind"].astype(str).str.strip().str.lower() if "kind" in frame.columns
             else pd.Series("inference", index=frame.index))
    bad = ~kinds.isin(KINDS)
    if bad.any():
        raise ValidationError(f"kind (row {kinds.index[bad][0]})", "one of " + ", ".join(KINDS),
                              value=frame.loc[kinds.index[bad][0], "kind"])
    return kinds


def _frame_of(columns: dict[str, Any], index: Any) -> pd.DataFrame:
    """A DataFrame of the computed columns, in their order. The float64 ones wrap the
    evaluation's 2-D block without a copy when they are consecutive rows of it (a chunked
    evaluation allocates the requested outputs first, in order: a million-row frame would
    otherwise copy 1.2 GB); the others (booleans, the columns that repeat another as its
    read-only view) are inserted beside them."""
    import pandas as pd

    found = float_rows(columns, columns)
    if found is None:
        found = float_block(columns, columns)
        if found is not None and found[1] != [n for n in columns if n in set(found[1])]:
            found = None
    if found is None:
        return pd.DataFrame({n: _series(v, index) for n, v in columns.items()}, index=index)
    block, names = found
    combined = pd.DataFrame(block.T, index=index, columns=names, copy=False)
    in_block = set(names)
    with warnings.catch_warnings():  # each insert is a block of its own, on purpose: the
        # columns repeating another are views of it (planner.compute.chunk_sink), not copies
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        for position, (name, value) in enumerate(columns.items()):
            if name not in in_block:
                combined.insert(position, name, _series(value, index))
    return combined


def _series(value: Any, index: Any) -> Any:
    import pandas as pd

    return pd.Series(np.broadcast_to(value, (len(index),)) if np.ndim(value) == 0 else value,
                     index=index, copy=False)
