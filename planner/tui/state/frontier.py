"""What the UI's sweep shows in frontier mode (ctrl+f): the scenario's throughput–interactivity
frontier (:mod:`planner.compute.frontier`) as table rows, the Pareto points marked, and the
cheapest configuration meeting the SLO at each interactivity level.

Textual-free, so it is tested without a terminal; the sweep screen
(:class:`planner.tui.screens.views.SweepScreen`) only renders :class:`FrontierView`. The
sweep's two fields keep their meaning: the column and its values are the configurations to
compare (``gpu`` = ``h100-sxm,b200``, ``tp`` = ``2,4,8``), except ``concurrency``, whose
values are then the frontier's axis for the scenario as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planner.compute import frontier as fr
from planner.compute.profiles import CalibrationFigures
from planner.compute.sweep import parse_variation
from planner.compute.table import inputs_of
from planner.core.errors import PlannerError
from planner.spec.architecture import ModelSpec
from planner.spec.domain import Scenario
from planner.spec.gpu import GpuSpec

CHEAPEST_HEADERS = ("at least (tokens/s/user)", "configuration", "concurrency (requests)",
                    "tokens/s/GPU", "USD/M output tokens")
"""Headers of the cheapest-at-each-level table, each with its unit."""


@dataclass(frozen=True, slots=True)
class FrontierView:
    """The frontier as text: the point table (``pareto[i]``: row ``i`` is optimal) and the
    cheapest-per-level table; ``error`` instead when the request was refused."""

    title: str = ""
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    pareto: list[bool] = field(default_factory=list)
    meets: list[bool] = field(default_factory=list)
    cheapest: list[list[str]] = field(default_factory=list)
    error: str = ""


def frontier_request(column: str, values: str, *, gpus: Sequence[str],
                     models: Sequence[str]) -> tuple[list[Any], tuple[int, ...]]:
    """The configurations (variations) and concurrencies the sweep's two fields ask for."""
    columns = {c.name: c for c in inputs_of("inference")}
    column, values = column.strip(), values.strip()
    if not column or not values:
        return [], fr.CONCURRENCY_GRID
    variation = parse_variation(f"{column}={values}", gpus=gpus, models=models,
                                columns=columns)
    if column == fr.AXIS:
        return [], fr.parse_concurrency(variation.values)
    return [variation], fr.CONCURRENCY_GRID


def frontier_view(sc: Scenario, column: str, values: str, models: Mapping[str, ModelSpec],
                  gpus: Mapping[str, GpuSpec],
                  profiles: Sequence[CalibrationFigures] | None = None) -> FrontierView:
    """The frontier of ``sc`` over what the fields ask for, or the one-line error."""
    base = _frontier_base(sc)
    try:
        variations, concurrency = frontier_request(column, values, gpus=list(gpus),
                                                   models=list(models))
        result = fr.frontier(base, variations, models, gpus, concurrency=concurrency,
                             profiles=profiles)
    except PlannerError as exc:
        return FrontierView(error=str(exc))
    cells = [fr.text_cells(p) for p in result.points]
    rows = [[c[k] for k in fr.HEADERS] for c in cells]
    cheapest = _cheapest_rows(result, cells)
    return FrontierView(f"Frontier of {sc.name}: SLO {fr.slo_text(result.slo)}; one engine "
                        f"per configuration; {fr.PARETO_MARK} = Pareto-optimal",
                        fr.headers(result), rows, [p.pareto for p in result.points],
                        [p.meets_slo for p in result.points], cheapest)


def _frontier_base(sc: Scenario) -> dict[str, Any]:
    """The scenario the frontier varies: its model, GPU, LoRA targets and inference inputs."""
    names = {c.name for c in inputs_of("inference")}
    return {"model": sc.model, "gpu": sc.gpu, "lora_targets": sc.lora_targets,
            **{k: v for k, v in sc.inputs.items() if k in names}}


def _cheapest_rows(result: fr.Frontier, cells: list[dict[str, str]]) -> list[list[str]]:
    """Per service level, the cheapest point meeting it: the level, then the point's
    configuration, concurrency, throughput per GPU and cost per million output tokens."""
    cheapest = []
    for c in result.cheapest:
        point = cells[c.point]
        cheapest.append([fr.number_text(c.level_tokens_per_s_per_user),
                         point["configuration"], point["concurrency"],
                         point["output_tokens_per_s_per_gpu"],
                         point["cost_usd_per_million_output_tokens"]])
    return cheapest
