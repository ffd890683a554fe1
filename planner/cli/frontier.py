"""``planner sweep SCENARIO --frontier``: the throughput–interactivity frontier in the terminal,
as JSON, and as a .csv or .xlsx file (the figures are :mod:`planner.compute.frontier`'s).

Kept apart from :mod:`planner.cli.whatif` so that the sweep command only imports it when
``--frontier`` is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from planner.compute.frontier import (
    AXIS,
    FIELDS,
    HEADERS,
    PARETO_MARK,
    concurrency_allowed,
    headers,
    number_text,
    parse_concurrency,
    parse_levels,
    records,
    slo_text,
    text_cells,
)
from planner.compute.inputs import input_columns
from planner.compute.sweep import parse_variation
from planner.core.errors import PlannerError, ValidationError
from planner.io.textcells import CSV_QUOTING, csv_text


def concurrency_values(text: str) -> tuple[int, ...]:
    """``--concurrency`` as integers: ``1,2,4,...,1024`` or ``1..64`` or a list (the sweep's
    variation syntax), each from 1 to the input's maximum."""
    columns = input_columns()
    try:
        values = parse_variation(f"{AXIS}={text}", columns={AXIS: columns[AXIS]}).values
    except ValidationError as exc:
        if exc.field == AXIS and exc.allowed.startswith("an integer from"):
            raise ValidationError(AXIS, concurrency_allowed(), value=exc.value) from None
        raise
    return parse_concurrency(values)


def level_values(text: str | None) -> tuple[float, ...] | None:
    """``--levels`` (tokens/s per user, comma-separated), or None for the default."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValidationError("--levels", "numbers of tokens/s per user above 0, "
                              "comma-separated", value=text)
    return parse_levels(parts)


def print_text(title: str, result: Any) -> None:
    """The point table (Pareto points marked) and the cheapest configuration at each
    interactivity level, as plain aligned text."""
    # lazy: the streaming writer, only when the table is printed
    from planner.cli import stream

    names = list(HEADERS)
    cells = [text_cells(p) for p in result.points]
    columns = [[c[n] for c in cells] for n in names]
    left = [n in ("configuration", "state") for n in names]
    stream.write_table(f"{title}: frontier over concurrency (one engine per configuration; "
                       f"SLO: {slo_text(result.slo)}; {PARETO_MARK} = Pareto-optimal)",
                       headers(result), columns, left)
    click.echo()
    if not result.cheapest:
        click.echo("No point meets the SLO: no cheapest configuration at any interactivity "
                   "level.")
        return
    keys = ["level", "configuration", "concurrency", "output_tokens_per_s_per_gpu",
            "tokens_per_s_per_user", "cost_usd_per_million_output_tokens"]
    heads = ["at least (tokens/s/user)", *(HEADERS[k] for k in keys[1:])]
    rows = []
    for c in result.cheapest:
        point = text_cells(result.points[c.point])
        rows.append([number_text(c.level_tokens_per_s_per_user), *(point[k] for k in keys[1:])])
    stream.write_table("Cheapest configuration meeting the SLO at each interactivity level",
                       heads, [list(col) for col in zip(*rows, strict=True)],
                       [False, True, False, False, False, False])


def as_json(title: str, result: Any) -> dict[str, Any]:
    """The frontier as JSON: the points (NaN as null) and the cheapest at each level."""
    points = records(result)
    return {"scenario": title, "axis": "concurrency", "slo": result.slo,
            "configurations": [{"configuration": label, **changes} for label, changes
                               in zip(result.configurations, result.changes, strict=True)],
            "concurrency": list(result.concurrency), "points": points,
            "cheapest": [{"level_tokens_per_s_per_user": c.level_tokens_per_s_per_user,
                          "point": c.point, **points[c.point]} for c in result.cheapest]}


def write_file(title: str, result: Any, path: Path) -> None:
    """The points to a .csv (the planner's field names as headers) or an .xlsx (the
    workbook's Frontier sheet and its chart: :mod:`planner.io.xlsx.frontier`)."""
    try:
        if path.suffix.lower() == ".csv":
            _write_csv(result, path)
        else:
            # lazy: openpyxl, only when an .xlsx is written
            from planner.io.xlsx.workbook import save_frontier

            save_frontier(title, result, path)
    except OSError as exc:
        raise PlannerError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _write_csv(result: Any, path: Path) -> None:
    import csv

    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(name for name, _unit in FIELDS) + "\n")
        writer = csv.writer(fh, quoting=CSV_QUOTING)
        for row in records(result):
            writer.writerow([csv_text(v) if isinstance(v, str) else ("" if v is None else v)
                             for v in row.values()])
