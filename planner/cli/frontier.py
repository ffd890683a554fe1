"""``planner sweep SCENARIO --frontier``: the throughput–interactivity frontier in the terminal,
as JSON, and as a .csv or .xlsx file (the figures are :mod:`planner.sheet.frontier`'s).

Kept apart from :mod:`planner.cli.whatif` so that the sweep command only imports it when
``--frontier`` is given.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from planner.errors import ValidationError

HEADERS: dict[str, str] = {
    "configuration": "configuration",
    "concurrency": "concurrency (requests)",
    "gpus": "GPUs",
    "output_tokens_per_s_per_gpu": "tokens/s/GPU",
    "tokens_per_s_per_user": "tokens/s/user",
    "ttft_slo_percentile_s": "TTFT {p} (ms)",
    "tpot_mean_s": "TPOT (ms)",
    "output_tokens_per_s": "output (tokens/s)",
    "cost_usd_per_hour": "cost (USD/h)",
    "cost_usd_per_million_output_tokens": "USD/M output tokens",
    "state": "state",
    "pareto": "Pareto",
}
"""Text headers of the point table, each with its unit."""
PARETO_MARK = "*"


def concurrency_values(text: str) -> tuple[int, ...]:
    """``--concurrency`` as integers: ``1,2,4,...,1024`` or ``1..64`` or a list (the sweep's
    variation syntax), each from 1 to the input's maximum."""
    # lazy: the sweep's variation parser and the frontier's checks, only with --frontier
    from planner.sheet.frontier import AXIS, parse_concurrency
    from planner.sheet.inputs import input_columns
    from planner.sheet.sweep import parse_variation

    columns = input_columns()
    values = parse_variation(f"{AXIS}={text}", columns={AXIS: columns[AXIS]}).values
    return parse_concurrency(values)


def level_values(text: str | None) -> tuple[float, ...] | None:
    """``--levels`` (tokens/s per user, comma-separated), or None for the default."""
    if text is None:
        return None
    # lazy: as above
    from planner.sheet.frontier import parse_levels

    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValidationError("--levels", "numbers of tokens/s per user above 0, "
                              "comma-separated", value=text)
    return parse_levels(parts)


def _ms(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value * 1e3:,.1f}"


def _num(value: float, digits: int = 1) -> str:
    return "–" if not math.isfinite(value) else f"{value:,.{digits}f}"


def _cells(point: Any) -> dict[str, str]:
    return {
        "configuration": point.configuration,
        "concurrency": f"{point.concurrency:,}",
        "gpus": f"{point.gpus:,}",
        "output_tokens_per_s_per_gpu": _num(point.output_tokens_per_s_per_gpu),
        "tokens_per_s_per_user": _num(point.tokens_per_s_per_user),
        "ttft_slo_percentile_s": _ms(point.ttft_slo_percentile_s),
        "tpot_mean_s": _ms(point.tpot_mean_s),
        "output_tokens_per_s": _num(point.output_tokens_per_s),
        "cost_usd_per_hour": _num(point.cost_usd_per_hour, 2),
        "cost_usd_per_million_output_tokens": _num(point.cost_usd_per_million_output_tokens,
                                                   3),
        "state": point.state,
        "pareto": PARETO_MARK if point.pareto else "",
    }


def _slo_text(slo: dict[str, Any]) -> str:
    parts = []
    if slo.get("slo_ttft_s"):
        parts.append(f"TTFT p{slo.get('slo_percentile')} <= {float(slo['slo_ttft_s']) * 1e3:g} ms")
    if slo.get("slo_tpot_s"):
        parts.append(f"TPOT <= {float(slo['slo_tpot_s']) * 1e3:g} ms")
    return " and ".join(parts) or "no SLO set"


def print_text(title: str, result: Any) -> None:
    """The point table (Pareto points marked) and the cheapest configuration at each
    interactivity level, as plain aligned text."""
    # lazy: the streaming writer, only when the table is printed
    from planner.cli import stream

    percentile = f"p{result.slo.get('slo_percentile') or 50}"
    names = list(HEADERS)
    headers = [HEADERS[n].format(p=percentile) for n in names]
    cells = [_cells(p) for p in result.points]
    columns = [[c[n] for c in cells] for n in names]
    left = [n in ("configuration", "state") for n in names]
    stream.write_table(f"{title}: frontier over concurrency (one engine per configuration; "
                       f"SLO: {_slo_text(result.slo)}; {PARETO_MARK} = Pareto-optimal)",
                       headers, columns, left)
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
        point = _cells(result.points[c.point])
        rows.append([_num(c.level_tokens_per_s_per_user), *(point[k] for k in keys[1:])])
    stream.write_table("Cheapest configuration meeting the SLO at each interactivity level",
                       heads, [list(col) for col in zip(*rows, strict=True)],
                       [False, True, False, False, False, False])


def as_json(title: str, result: Any) -> dict[str, Any]:
    """The frontier as JSON: the points (NaN as null) and the cheapest at each level."""
    # lazy: the frontier's records, only when this runs
    from planner.sheet.frontier import records

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
    from planner.errors import PlannerError

    try:
        if path.suffix.lower() == ".csv":
            _write_csv(result, path)
        else:
            # lazy: openpyxl, only when an .xlsx is written
            from planner.io.xlsx.frontier import save_frontier

            save_frontier(title, result, path)
    except OSError as exc:
        raise PlannerError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _write_csv(result: Any, path: Path) -> None:
    import csv

    # lazy: the text-cell rules of the report layer, only when a CSV is written
    from planner.io.textcells import CSV_QUOTING, csv_text
    from planner.sheet.frontier import FIELDS, records

    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(name for name, _unit in FIELDS) + "\n")
        writer = csv.writer(fh, quoting=CSV_QUOTING)
        for row in records(result):
            writer.writerow([csv_text(v) if isinstance(v, str) else ("" if v is None else v)
                             for v in row.values()])
