"""The answers of ``planner solve`` as terminal tables: a goal seek's answer, the capacity
question's cheapest deployment and runners-up, aggregated and disaggregated.

Split from :mod:`planner.cli.render` (the estimate, list and sweep tables) because these read
the solve's result objects; they print through ``render.console``, the one console.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from planner.cli import render
from planner.cli.render import esc, figure_table, verdict_rows, verdict_title
from planner.compute import verdict
from planner.core.units import fmt_seconds
from planner.present import cell as _cell
from planner.spec.gpu import GpuSpec


def _print(*objects: Any) -> None:
    """Print on :data:`planner.cli.render.console` (looked up when called, so a test that
    replaces it sees these tables too)."""
    render.console.print(*objects)


def solution(title: str, result: Any, constraint: str | None, varied: list[str]) -> None:
    """A solve result: the answer, the objective and the constraint's columns (``title``:
    the scenario solved, FLEET/NAME, or the model of an unsaved one)."""
    what = f"{'maximize' if result.sense == 'max' else 'minimize'} {result.objective}"
    _print(f"[bold]{esc(title)}[/]: {esc(what)}"
                  + (f" subject to {esc(constraint)}" if constraint else ""))
    if not result.found:
        _print(f"[red]no feasible answer[/] among {result.candidates:,} candidates")
        return
    v = result.values
    keys = list(dict.fromkeys([*varied, result.objective]))
    rows = [(k, esc(v[k]) if isinstance(v.get(k), str) else _cell(k, v.get(k))) for k in keys]
    for extra in ("fits", "max_concurrent_sequences", "ttft_s", "tpot_s", "requests_per_s",
                  "cost_usd_per_hour"):
        if extra in v and extra not in keys:
            rows.append((extra, _cell(extra, v[extra])))
    _print(figure_table("Answer", rows, note=f"{result.feasible:,} of {result.candidates:,} "
                         f"candidates feasible ({result.method})"
                         + (f"; warning: {esc(result.note)}" if result.note else "")))


def capacity(title: str, base: dict[str, Any], answers: list[Any], gpus: dict[str, GpuSpec],
             query: Any) -> None:
    """The capacity question's answer: the cheapest deployment that meets the SLO (GPU, TP,
    count, replicas, dtype, $/month and the verdict's figures at the target rate), then the
    runners-up (:func:`planner.compute.capacity.answer_cells`, the UI's table), the ``*`` note
    and the search that was run."""
    # lazy: the capacity module's cells (numpy), only when this runs
    from planner.compute.capacity import ANSWER_HEADERS, answer_cells

    i = {**base}
    _print(f"[bold]{esc(title)}[/]: the cheapest GPU × TP × count × weight dtype that "
                  "meets the SLO at the target rate")
    if not answers:
        _print("[red]no deployment meets the SLO at the target rate[/] among the "
                      f"candidates of: {esc(' '.join(f'--vary {v}' for v in query.vary))}")
        return
    best = answers[0]
    shown = {**i, **best.changes}
    cells = dict(zip(ANSWER_HEADERS, answer_cells(1, best, gpus, i), strict=True))
    o = best.outputs
    rows = [("GPU", esc(cells["GPU"])), ("tensor parallel (TP)", cells["TP"]),
            ("GPUs", f"{cells['GPUs']} ({cells['replicas']} replicas × TP {cells['TP']}"
                     + (f" × PP {shown['pp']}" if int(shown.get("pp", 1)) > 1 else "") + ")"),
            ("weight dtype", esc(cells["dtype"])), ("cost", f"{cells['$/month']}/month"),
            ("meets SLO", verdict.figure("meets_slo", o, shown)),
            *[(verdict.VERDICT_LABELS[n], verdict.figure(n, o, shown))
              for n in ("ttft_p50_s", "ttft_p99_s", "tpot_mean_s", "utilization",
                        "saturation_requests_per_s")]]
    _print(f"[bold]Answer[/] {verdict_title(shown).removeprefix('Verdict ')}")
    _print(figure_table("", rows))
    if len(answers) > 1:
        _print(runners_up(ANSWER_HEADERS, ("GPU", "dtype"),
                          [answer_cells(n, a, gpus, i) for n, a in enumerate(answers[1:], 2)]))
    unsure = _unmeasured(answers, gpus, i)
    if unsure:
        _print(f"[yellow]* {esc(', '.join(unsure))}: {verdict.UNMEASURED_NOTE} "
                      "(estimates on them are less sure)[/]")
    _print(f"searched: minimize {query.objective} subject to {esc(query.constraint)}, "
                  + esc(" ".join(f"--vary {v}" for v in query.vary)))


def answer_verdict(r: dict[str, Any], measured: bool) -> None:
    """The solved deployment's verdict (an estimate of the answer), and whether its GPU's
    serving efficiencies are measured."""
    i = r["inputs"]
    if verdict.applies(i):
        _print(figure_table(verdict_title(i), verdict_rows(r, i)))
    if not measured:
        _print(f"[yellow]* {esc(r['gpu'])}: {verdict.UNMEASURED_NOTE}; this answer is "
                      "less sure than one on a measured part[/]")


def disagg_capacity(title: str, base: dict[str, Any], answers: list[Any],
                    gpus: dict[str, GpuSpec]) -> None:
    """The disaggregated capacity question's answer: the cheapest xPyD that meets the SLO
    (each pool's workers × GPU × TP, GPUs, $/month, the verdict's figures at the target rate
    and each pool's utilisation), then the runners-up
    (:func:`planner.compute.disagg_sizing.answer_cells`)."""
    # lazy: the disaggregated search's cells (numpy), only when this runs
    from planner.compute.disagg_sizing import ANSWER_HEADERS, answer_cells

    _print(f"[bold]{esc(title)}[/]: the cheapest disaggregated deployment (prefill "
                  "workers × decode workers, each pool's TP) that meets the SLO at the target "
                  "rate")
    if not answers:
        _print("[red]no disaggregated deployment meets the SLO at the target rate[/] "
                      "among the pool shapes searched")
        return
    best = answers[0]
    shown = {**base, **best.changes}
    cells = dict(zip(ANSWER_HEADERS, answer_cells(1, best, base, gpus), strict=True))
    o = best.outputs
    rows = [("prefill pool", esc(cells["prefill"])), ("decode pool", esc(cells["decode"])),
            ("weight dtype", esc(cells["dtype"])), ("GPUs", cells["GPUs"]),
            ("cost", f"{cells['$/month']}/month"),
            ("meets SLO", verdict.figure("meets_slo", o, shown)),
            *[(verdict.VERDICT_LABELS[n], verdict.figure(n, o, shown))
              for n in ("ttft_p50_s", "ttft_p99_s", "tpot_mean_s")],
            ("KV transfer per request", fmt_seconds(float(o["kv_transfer_s"]))),
            ("prefill utilisation", cells["prefill util."]),
            ("decode utilisation", cells["decode util."])]
    _print("[bold]Answer[/]")
    _print(figure_table("", rows))
    if len(answers) > 1:
        _print(runners_up(ANSWER_HEADERS, ("prefill", "decode", "dtype"),
                          [answer_cells(n, a, base, gpus) for n, a in enumerate(answers[1:], 2)]))
    if any(" *" in cell for a in answers for cell in answer_cells(0, a, base, gpus)[1:3]):
        _print(f"* {verdict.UNMEASURED_NOTE} (estimates on these parts are less sure)")


def runners_up(headers: tuple[str, ...], left: tuple[str, ...],
               rows: list[Any]) -> Table:
    """The runners-up table under an answer: ``headers`` (those in ``left`` left-aligned, the
    rest right-aligned) and one row of cells per answer after the first, cheapest first."""
    table = Table(title="Runners-up, cheapest first", title_justify="left", title_style="bold")
    for header in headers:
        table.add_column(header, justify="left" if header in left else "right")
    for cells in rows:
        table.add_row(*map(esc, cells))
    return table


def _unmeasured(answers: list[Any], gpus: dict[str, GpuSpec], base: dict[str, Any]) -> list[str]:
    """The GPUs among the answers (their own or the scenario's) whose serving efficiencies are
    planner defaults, sorted by name."""
    names = {str(a.changes.get("gpu", base.get("gpu"))) for a in answers}
    return sorted(n for n in names if n in gpus and not verdict.gpu_measured(gpus[n]))
