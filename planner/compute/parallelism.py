"""The cross-field rules of a deployment: TP divides the heads, PP fits the layers, the GPUs
are whole ``tp*pp`` replicas.

One rule set (:data:`PARALLELISM_RULES`) on plain numbers or arrays: a table refuses its first
bad row (:func:`check_parallelism`), a sweep marks each bad row with the short reason
(:func:`parallelism_reasons`), a file import reports every bad cell.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from planner.compute.validation import RowError, row_label
from planner.formulas.ops import NumpyOnFirstUse

if TYPE_CHECKING:
    import numpy as np

    from planner.compute.validation import RowLabels
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none


PARALLELISM_RULES: tuple[tuple[str, str], ...] = (
    ("tp", "tp does not divide the attention heads"),
    ("pp", "pp exceeds the model's layers"),
    ("gpus", "gpus not a multiple of tp*pp"),
)
"""The cross-field rules of a deployment, in the order they are reported: the column each
names and the short reason a sweep shows for an invalid row."""


def parallelism_violations(tp: Any, pp: Any, gpus: Any, heads: Any, layers: Any
                           ) -> dict[str, Any]:
    """Per rule of :data:`PARALLELISM_RULES`, where it is broken (a boolean per row): TP must
    divide the attention heads, PP must not exceed the layers, and the GPUs must be a whole
    number of ``tp*pp`` replicas."""
    if all(isinstance(v, int) for v in (tp, pp, gpus, heads, layers)):  # one row: no numpy
        return {"tp": heads % tp != 0, "pp": pp > layers, "gpus": gpus % (tp * pp) != 0}
    return {"tp": np.mod(heads, tp) != 0, "pp": np.greater(pp, layers),
            "gpus": np.mod(gpus, np.multiply(tp, pp)) != 0}


def parallelism_reasons(tp: Any, pp: Any, gpus: Any, heads: Any, layers: Any, n: int
                        ) -> np.ndarray:
    """The first broken rule's short reason per row ('' where the row is valid)."""
    broken = parallelism_violations(tp, pp, gpus, heads, layers)
    reasons = np.full(n, "", dtype=object)
    for column, reason in reversed(PARALLELISM_RULES):
        reasons[np.broadcast_to(broken[column], (n,))] = reason
    return reasons


def check_parallelism(tp: Any, pp: Any, gpus: Any, heads: Any, layers: Any,
                      model_name: Callable[[int], str], labels: RowLabels | None) -> None:
    """Raise :class:`RowError` naming the column, the rule and the model, for the first row
    that breaks a rule."""
    broken = parallelism_violations(tp, pp, gpus, heads, layers)
    n = max(np.size(a) for a in (tp, pp, gpus, heads, layers))
    for column, _reason in PARALLELISM_RULES:
        if not np.any(broken[column]):
            continue
        i = int(np.argmax(np.broadcast_to(broken[column], (n,))))
        at = {k: np.broadcast_to(v, (n,))[i] for k, v in
              {"tp": tp, "pp": pp, "gpus": gpus, "heads": heads, "layers": layers}.items()}
        allowed = {
            "tp": f"must divide the {int(at['heads'])} attention heads of {model_name(i)}",
            "pp": f"must be at most the {int(at['layers'])} layers of {model_name(i)}",
            "gpus": f"must be a multiple of tp*pp = {int(at['tp'] * at['pp'])}",
        }[column]
        raise RowError(column, allowed, row_label(labels, i), int(at[column]))
