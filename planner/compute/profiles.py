"""Calibration profiles in evaluation (issue 12 item 3): the ``calibration`` input of a scenario
picks fitted efficiency figures that replace the GPU's and the engine's.

``calibration`` is ``auto`` (the newest profile fitted for the scenario's GPU and engine, or the
catalog's figures when there is none), ``none`` (the catalog's figures) or a profile name (its
newest version; it must have been fitted for the scenario's GPU and engine). A profile replaces:

* the GPU figures ``gpu_matmul_efficiency_16bit`` (and ``gpu_matmul_efficiency_8bit``, keeping
  its catalog ratio to the 16-bit share) and ``gpu_bandwidth_efficiency``: a scenario's own
  ``matmul_efficiency`` / ``bandwidth_efficiency`` input above 0 still wins, as it wins over the
  catalog;
* the engine inputs ``engine_step_overhead_s``, ``collective_efficiency`` and
  ``request_latency_s`` where the scenario holds the input's default (a value the user set wins).

Profiles come from the caller (the service layer reads them from the database); without them,
``auto`` means the catalog's figures and a profile name is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planner.compute.inputs import input_columns
from planner.core.errors import ValidationError
from planner.formulas.ops import Coded, NumpyOnFirstUse

if TYPE_CHECKING:
    import numpy as np
else:
    np = NumpyOnFirstUse(globals())  # numpy at its first use: one-row paths need none

GPU_REPLACED: dict[str, str] = {
    "matmul_efficiency": "gpu_matmul_efficiency_16bit",
    "bandwidth_efficiency": "gpu_bandwidth_efficiency",
}
"""Fitted parameter -> the GPU figure column it replaces."""
INPUT_REPLACED: tuple[str, ...] = ("engine_step_overhead_s", "collective_efficiency",
                                   "request_latency_s")
"""Fitted parameters that replace the scenario input of the same name (when at its default)."""
APPLIED_COLUMN = "calibration_profile"
"""Per-row text column evaluation adds: the profile applied (``name vN``), '' when none."""


@dataclass(frozen=True, slots=True)
class CalibrationFigures:
    """A calibration profile as evaluation uses it."""

    name: str
    version: int
    gpu: str
    engine: str
    parameters: Mapping[str, float]
    order: int
    """Creation order (the database id): ``auto`` takes the highest."""
    holdout_throughput_error: float | None = None

    @property
    def label(self) -> str:
        """``name vN``."""
        return f"{self.name} v{self.version}"

    def replaced_columns(self) -> dict[str, str]:
        """Formula column -> the fitted parameter that replaces it."""
        out = {column: name for name, column in GPU_REPLACED.items() if name in self.parameters}
        if "matmul_efficiency" in self.parameters:
            out["gpu_matmul_efficiency_8bit"] = "matmul_efficiency"
        out.update({name: name for name in INPUT_REPLACED if name in self.parameters})
        return out


def _per_row(values: Any, n: int) -> np.ndarray:
    if isinstance(values, Coded):
        return np.asarray(values.levels, dtype=object)[values.codes]
    return np.asarray(np.broadcast_to(np.asarray(values, dtype=object), (n,)))


def resolve(choice: str, gpu: str, engine: str,
            profiles: Sequence[CalibrationFigures] | None) -> CalibrationFigures | None:
    """The profile a scenario's ``calibration`` value picks for its GPU and engine."""
    if choice == "none":
        return None
    found = list(profiles or ())
    if choice == "auto":
        matching = [p for p in found if p.gpu.lower() == gpu.lower() and p.engine == engine]
        return max(matching, key=lambda p: p.order) if matching else None
    profile = _named(choice, found)
    if profile.gpu.lower() != gpu.lower() or profile.engine != engine:
        raise ValidationError("calibration", f"a profile fitted for {gpu}/{engine}; "
                              f"{profile.label} is fitted for {profile.gpu}/{profile.engine}",
                              value=choice)
    return profile


def _named(choice: str, found: Sequence[CalibrationFigures]) -> CalibrationFigures:
    """The latest version of the profile called ``choice``; refused, listing the names, when
    there is none."""
    named = [p for p in found if p.name == choice]
    if not named:
        names = sorted({p.name for p in found})
        raise ValidationError("calibration", "auto, none or a calibration profile name"
                              + (f" ({', '.join(names)})" if names else
                                 " (no profiles here: planner calibrate makes one)"),
                              value=choice)
    return max(named, key=lambda p: p.version)


def apply_calibration(cols: dict[str, Any], gpu_names: Sequence[str], g_codes: np.ndarray,
                      n: int, profiles: Sequence[CalibrationFigures] | None) -> None:
    """Replace, in ``cols`` (built formula columns), the figures of every row's profile and add
    :data:`APPLIED_COLUMN` (see the module docstring)."""
    choice = cols.get("calibration", "auto")
    if isinstance(choice, str) and (choice == "none" or (choice == "auto" and not profiles)):
        cols[APPLIED_COLUMN] = ""  # nothing to resolve: one text for every row
        return
    choices = _per_row(cols.get("calibration", "auto"), n)
    engines = _per_row(cols["engine"], n)
    gpus = np.asarray(gpu_names, dtype=object)[np.broadcast_to(g_codes, (n,))]
    index: dict[tuple[str, str, str], int] = {}
    inverse = np.fromiter((index.setdefault((str(c), str(g), str(e)), len(index))
                           for c, g, e in zip(choices, gpus, engines, strict=True)),
                          dtype=np.intp, count=n)
    applied = np.full(n, "", dtype=object)
    defaults = {name: input_columns()[name].default for name in INPUT_REPLACED}
    columns: dict[str, np.ndarray] = {}

    def column(name: str) -> np.ndarray:
        if name not in columns:
            columns[name] = np.array(np.broadcast_to(cols[name], (n,)), dtype=np.float64)
        return columns[name]

    for (choice, gpu, engine), code in index.items():
        rows = inverse == code
        try:
            profile = resolve(choice, gpu, engine, profiles)
        except ValidationError as exc:
            exc.row_index = int(np.argmax(rows))  # type: ignore[attr-defined]  # for RowError
            raise
        if profile is None:
            continue
        applied[rows] = profile.label
        _replace_figures(profile.parameters, rows, column, defaults)
    cols.update(columns)
    cols[APPLIED_COLUMN] = applied if applied.any() else ""


def _replace_figures(p: Mapping[str, float], rows: np.ndarray,
                     column: Callable[[str], np.ndarray], defaults: Mapping[str, Any]) -> None:
    """A profile's fitted figures in place on ``rows``: the 16-bit GEMM share (the 8-bit one
    keeps its ratio to it), the bandwidth share, and each input of :data:`INPUT_REPLACED` the
    row left at its default."""
    if "matmul_efficiency" in p:
        sixteen, eight = column("gpu_matmul_efficiency_16bit"), column(
            "gpu_matmul_efficiency_8bit")
        eight[rows] = p["matmul_efficiency"] * eight[rows] / sixteen[rows]
        sixteen[rows] = p["matmul_efficiency"]
    if "bandwidth_efficiency" in p:
        column("gpu_bandwidth_efficiency")[rows] = p["bandwidth_efficiency"]
    for name in INPUT_REPLACED:
        if name in p:
            target = column(name)
            target[rows & (target == defaults[name])] = p[name]
