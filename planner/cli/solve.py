"""``planner solve``: goal seek over a saved or an unsaved scenario, and the capacity question.

The command checks its options, builds the :class:`Question` (the scenario's base inputs and
the catalogs it is solved over) and hands it to one of three answers: a goal seek
(:func:`planner.compute.sweep.solve`), the aggregated capacity question
(:mod:`planner.compute.capacity`) or the disaggregated one (:mod:`planner.compute.disagg_sizing`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import click

from planner.cli.common import emit_json, json_option, workspace
from planner.cli.estimate import inference_options
from planner.cli.fleets import fleet_option
from planner.cli.varied import echo_written, options_written, scenario_base, variations
from planner.core.errors import ValidationError

CAPACITY_EXAMPLE = ("planner solve --model llama-3-70b --engine vllm --target-requests-per-s "
                    "2000/min --prompt 1000 --output 250 --slo-ttft-s 1 --slo-percentile 50 "
                    "--slo-tpot-s 0.05")
"""The capacity task of issue 24 as one command (docs/capacity-task.md shows its output)."""


@dataclass
class Question:
    """What one ``planner solve`` runs over: the scenario (``sc`` is ``None`` when unsaved),
    its kind, the title printed, its base inputs and the model/GPU catalogs with the
    calibration figures."""

    ws: Any
    sc: Any
    kind: str
    title: str
    base: dict[str, Any]
    models: dict[str, Any]
    gpus: dict[str, Any]
    profiles: Any


@dataclass
class Narrowing:
    """The options that narrow a solve: what may vary, the constraint, the capacity
    question's GPU filter and utilisation cap, ``--as-options``/``--choose-best`` and
    ``--json``."""

    vary: tuple[str, ...]
    constraint: str | None
    gpu_filter: str
    utilization_cap: float | None
    as_options: int | None
    choose_best: bool
    as_json: bool


@click.command()
@click.argument("ref", metavar="[SCENARIO]", required=False)
@fleet_option
@click.option("--maximize", "maximize", metavar="COLUMN", help="Column to make as large as "
              "possible (e.g. prompt_tokens, batch).")
@click.option("--minimize", "minimize", metavar="COLUMN", help="Column to make as small as "
              "possible (e.g. gpus, cost_usd_per_hour). Without --maximize or --minimize: the "
              "capacity question (the cheapest deployment that meets the SLO).")
@click.option("--subject-to", "constraint", metavar="EXPR",
              help='Constraint, e.g. "fits and ttft_s <= 0.5" (columns, numbers, comparisons, '
                   "and/or/not, + - * /; strings in quotes). The capacity question adds it to "
                   "meets_slo.")
@click.option("--vary", "vary", multiple=True, metavar="COLUMN=VALUES",
              help="What may change (default: the maximized/minimized input over its range; "
                   "for the capacity question gpu=* tp=1,2,4,8 gpus=1..64 "
                   "weight_dtype=bf16,fp8, each replaced by a --vary of that column).")
@click.option("--gpu-filter", metavar="TEXT", default="",
              help="Capacity question: only GPUs whose name, label or vendor contains TEXT "
                   "(h100, amd, nvidia), as the UI's solve filter.")
@click.option("--utilization-cap", type=float, metavar="FRACTION",
              help="Capacity question: only deployments at most this utilised (0 < cap <= 1).")
@click.option("--as-options", "as_options", type=click.IntRange(1, 20), metavar="K",
              help="Also write the K best answers (other than SCENARIO as it is) as options of "
                   "SCENARIO's group, named SCENARIO+column=value; not chosen, so the fleet's "
                   "totals stay. Needs SCENARIO; --vary unless the capacity question.")
@click.option("--choose-best", is_flag=True,
              help="With --as-options: choose the best answer (it becomes the one counted).")
@inference_options(required=False)
@json_option
@click.pass_context
def solve(ctx: click.Context, ref: str | None, fleet_name: str | None, maximize: str | None,
          minimize: str | None, constraint: str | None, vary: tuple[str, ...],
          gpu_filter: str, utilization_cap: float | None, as_options: int | None,
          choose_best: bool, model_ref: str | None, as_json: bool, **kwargs: Any) -> None:
    """Goal seek with exact integer answers, over a saved SCENARIO or, without one, over the
    scenario the options of `planner estimate` describe (nothing is saved).

    Without --maximize or --minimize it answers the capacity question: the cheapest GPU × TP ×
    count × weight dtype that meets the SLO at the target rate (the UI's solve preset, the
    same search), the answer first, then the runners-up.

    \b
    Examples:
      planner solve --model llama-3-70b --engine vllm --target-requests-per-s 2000/min \\
          --prompt 1000 --output 250 --slo-ttft-s 1 --slo-percentile 50 --slo-tpot-s 0.05
      planner solve prod/chat --gpu-filter nvidia --as-options 3
      planner solve demo/llama3-8b-24gib-6x8k --maximize prompt_tokens --subject-to fits
      planner solve prod/chat --minimize gpus --vary gpus=1..64 --vary tp=1,2,4,8 \\
          --subject-to "meets_target_rate and fits"
      planner solve prod/chat --minimize cost_usd_per_month --vary gpu=h100-sxm,h200,mi300x \\
          --vary gpus=1..16 --subject-to "meets_slo" --as-options 3
    """
    narrowing = Narrowing(vary, constraint, gpu_filter, utilization_cap, as_options,
                          choose_best, as_json)
    capacity = not (maximize or minimize)
    _check_objective(maximize, minimize, narrowing)
    _check_scenario(ref, model_ref, as_options, kwargs)
    question, narrowing.vary = _question(ctx, ref, fleet_name, model_ref, kwargs, capacity,
                                         vary)
    if capacity:
        if question.kind != "inference":
            raise ValidationError("--minimize", "the capacity question is for inference "
                                  "scenarios; give --maximize or --minimize")
        if question.base.get("serving_mode") == "disaggregated":
            _disagg_capacity(ctx, question, narrowing)
        else:
            _capacity(ctx, question, narrowing)
        return
    _goal_seek(ctx, question, narrowing, maximize, minimize)


def _check_objective(maximize: str | None, minimize: str | None, n: Narrowing) -> None:
    """Refuse option combinations that contradict the objective (before any work)."""
    if maximize and minimize:
        raise ValidationError("--maximize/--minimize", "give exactly one of them (or "
                              "neither, for the capacity question)")
    capacity = not (maximize or minimize)
    if not capacity and (n.gpu_filter or n.utilization_cap is not None):
        raise ValidationError("--gpu-filter/--utilization-cap", "narrow the capacity question "
                              "(solve without --maximize/--minimize)")
    _check_as_options(n, capacity)


def _check_as_options(n: Narrowing, capacity: bool) -> None:
    """Refuse ``--choose-best`` without ``--as-options``, and ``--as-options`` of a goal seek
    that varies nothing."""
    if n.choose_best and not n.as_options:
        raise ValidationError("--choose-best", "works with --as-options K")
    if n.as_options and not n.vary and not capacity:
        raise ValidationError("--as-options", "say what may change with --vary column=values")


def _check_scenario(ref: str | None, model_ref: str | None, as_options: int | None,
                    kwargs: dict[str, Any]) -> None:
    """Refuse a solve with both or neither of a saved SCENARIO and ``--model``, and
    ``--as-options`` without a saved SCENARIO to write them to."""
    typed = [k for k, v in kwargs.items() if v is not None]
    if ref is not None and (model_ref or typed):
        raise ValidationError("SCENARIO", "give a saved SCENARIO or --model with the inputs "
                              "`planner estimate` takes, not both", value=ref)
    if ref is None and not model_ref:
        raise ValidationError("SCENARIO", "give a saved SCENARIO, or --model with the inputs "
                              f"`planner estimate` takes, e.g. {CAPACITY_EXAMPLE}")
    if ref is None and as_options:
        raise ValidationError("--as-options", "writes options of a saved SCENARIO; give one")


def _question(ctx: click.Context, ref: str | None, fleet_name: str | None,
              model_ref: str | None, kwargs: dict[str, Any], capacity: bool,
              vary: tuple[str, ...]) -> tuple[Question, tuple[str, ...]]:
    """The :class:`Question` of a saved scenario, or of the unsaved one ``--model`` and the
    estimate options describe; and ``vary``, with ``gpu=`` put first when an unsaved
    disaggregated capacity question names its prefill pool's GPU with ``--gpu``."""
    ws = workspace(ctx)
    models, gpus = dict(ws.model_specs()), dict(ws.gpu_specs())
    profiles = ws.calibration_figures()
    if ref is not None:
        sc, base = scenario_base(ctx, ref, fleet_name)
        return (Question(ws, sc, sc.kind, f"{sc.fleet}/{sc.name}", base, models, gpus,
                         profiles), vary)
    # lazy: the estimate command's option parsing, only when this runs
    from planner.cli.estimate import inference_base

    spec, gpu, inputs = inference_base(ctx, str(model_ref), kwargs)
    models[spec.name] = spec
    if gpu is not None:
        gpus[gpu.name] = gpu
    base = {"model": spec.name, "gpu": gpu.name if gpu is not None else next(iter(gpus)),
            "lora_targets": "", **inputs}
    if gpu is not None and capacity:
        if kwargs.get("serving_mode") == "disaggregated":
            vary = (f"gpu={gpu.name}", *vary)  # --gpu: the prefill pool's GPU
        else:
            gpus = {gpu.name: gpu}  # --gpu: the question is TP, count and dtype on it
    return Question(ws, None, "inference", spec.name, base, models, gpus, profiles), vary


def _goal_seek(ctx: click.Context, q: Question, n: Narrowing, maximize: str | None,
               minimize: str | None) -> None:
    """``--maximize``/``--minimize``: the best value of the varied inputs subject to the
    constraint (:func:`planner.compute.sweep.solve`), its estimate, and the options written."""
    # lazy: ~29 ms of imports, only when this runs
    from planner.compute.sweep import solve as run

    objective = maximize or minimize or ""
    sense = "max" if maximize else "min"
    varied = variations(ctx, n.vary, q.kind)
    result = run(q.base, objective, sense, n.constraint, varied, q.models, q.gpus,
                 kind=q.kind, profiles=q.profiles)
    written = _goal_seek_options(q, n, objective, sense, varied) if result.found else []
    answer = _goal_seek_answer(q, result, varied)
    if n.as_json:
        emit_json(_goal_seek_json(result, answer, q.gpus, written, n.as_options))
        return
    # lazy: loads rich (~37 ms), only when this runs
    from planner.cli import render_answers

    render_answers.solution(q.title, result, n.constraint, [v.split("=")[0] for v in n.vary])
    if answer is not None:
        # lazy: the verdict's confidence rule, only when this runs
        from planner.compute.verdict import gpu_measured

        render_answers.answer_verdict(answer, gpu_measured(q.gpus[str(answer["gpu"])]))
    echo_written(written, n.choose_best)
    if not result.found:
        ctx.exit(1)


def _goal_seek_answer(q: Question, result: Any, varied: list[Any]) -> dict[str, Any] | None:
    """The estimate of the deployment an inference goal seek found (``None``: no answer, or a
    training question)."""
    if not result.found or q.kind != "inference":
        return None
    return _answer_estimate(q.models, q.gpus, q.base, q.profiles,
                            {v.column: result.values[v.column] for v in varied
                             if v.column in result.values})


def _goal_seek_options(q: Question, n: Narrowing, objective: str, sense: str,
                       varied: list[Any]) -> list[str]:
    """``--as-options K`` of a goal seek that found an answer: the K best answers other than
    the scenario as it is (:func:`planner.compute.sweep.solve_best`), written as options."""
    if not n.as_options or q.sc is None:
        return []
    # lazy: ~29 ms of imports, only when this runs
    from planner.compute.sweep import solve_best

    answers = solve_best(q.base, objective, sense, n.constraint, varied, q.models, q.gpus,
                         n.as_options + 1, kind=q.kind, profiles=q.profiles)
    columns = [v.column for v in varied]
    changes = [{k: a[k] for k in columns} for a in answers]  # SCENARIO as it is: no option
    changes = [c for c in changes if any(v != q.base[k] for k, v in c.items())]
    return options_written(q.ws, q.sc, changes[:n.as_options], n.choose_best)


def _goal_seek_json(result: Any, answer: dict[str, Any] | None, gpus: dict[str, Any],
                    written: list[str], as_options: int | None) -> dict[str, Any]:
    """A goal seek's ``--json``: the result, its figures that are states masked as the
    estimate's JSON masks them, whether the answer's GPU is measured, the options written."""
    # lazy: the verdict's states and confidence rule, only when this runs
    from planner.compute import verdict

    measured = {}
    values = dict(result.values)
    if answer is not None:
        masked = verdict.json_outputs(answer, answer["inputs"])
        values = {k: masked.get(k, v) for k, v in values.items()}
    if result.found and "gpu" in result.values:
        spec_ = gpus.get(str(result.values["gpu"]))
        measured = {"gpu_efficiencies_measured": spec_ is not None
                    and verdict.gpu_measured(spec_)}
    return {**asdict(result), "values": values, **measured,
            **({"options": written} if as_options else {})}


def _answer_estimate(models: dict[str, Any], gpus: dict[str, Any], base: dict[str, Any],
                     profiles: Any, values: dict[str, Any]) -> dict[str, Any]:
    """The solved deployment estimated once: the scenario with the answer's varied values
    (the figures at the target rate, not the idle bounds)."""
    # lazy: ~26 ms of imports, only when this runs
    from planner import service

    answer = {**base, **values}
    model, gpu = models[str(answer.pop("model"))], gpus[str(answer.pop("gpu"))]
    answer.pop("lora_targets", None)
    return service.estimate(model, gpu, answer, profiles=profiles)


def _capacity(ctx: click.Context, q: Question, n: Narrowing) -> None:
    """The capacity question (:mod:`planner.compute.capacity`, the UI's solve preset): the
    cheapest deployment that meets the SLO at the target rate, and the runners-up."""
    # lazy: the capacity solve (numpy, the sweep), only when this runs
    from planner.compute.capacity import ANSWERS, capacity_query, solve_capacity

    query = capacity_query(q.base, q.gpus, gpu_filter=n.gpu_filter,
                           utilization_cap=n.utilization_cap, vary=n.vary,
                           constraint=n.constraint)
    answers = solve_capacity(q.base, query, q.models, q.gpus,
                             max(ANSWERS, n.as_options or 0) + 1, q.profiles)
    written = _capacity_options(q, n, answers, {v.split("=")[0] for v in query.vary})
    answers = answers[:ANSWERS]
    if n.as_json:
        emit_json({"found": bool(answers), "objective": query.objective,
                   "constraint": query.constraint, "vary": list(query.vary),
                   "answer": _capacity_record(answers[0], q) if answers else None,
                   "runners_up": [_capacity_record(a, q) for a in answers[1:]],
                   **({"options": written} if n.as_options else {})})
    else:
        # lazy: loads rich (~37 ms), only when this runs
        from planner.cli import render_answers

        render_answers.capacity(q.title, q.base, answers, q.gpus, query)
        echo_written(written, n.choose_best)
    if not answers:
        ctx.exit(1)


def _capacity_options(q: Question, n: Narrowing, answers: list[Any],
                      varied: set[str] | None) -> list[str]:
    """``--as-options K`` of a capacity question: the K best answers written as options.
    Aggregated (``varied``, the columns searched): the answers that change one of them;
    disaggregated (``None``): the first K, each named by only what differs from the scenario."""
    if not n.as_options or not answers or q.sc is None:
        return []
    if varied is None:
        changes = _differences(q.base, answers[:n.as_options])
    else:
        changes = _searched_changes(q.base, answers, varied)[:n.as_options]
    return options_written(q.ws, q.sc, changes, n.choose_best)


def _differences(base: dict[str, Any], answers: list[Any]) -> list[dict[str, Any]]:
    """Each disaggregated answer's changes that differ from ``base`` (only what differs
    names the option)."""
    return [{k: v for k, v in a.changes.items() if base.get(k) != v} for a in answers]


def _searched_changes(base: dict[str, Any], answers: list[Any],
                      varied: set[str]) -> list[dict[str, Any]]:
    """The changes of the aggregated answers that change one of the ``varied`` columns."""
    return [a.changes for a in answers
            if any(v != base.get(k) for k, v in a.changes.items() if k in varied)]


def _capacity_record(a: Any, q: Question) -> dict[str, Any]:
    """One capacity answer in ``--json``: the deployment, its cost and verdict figures (states
    masked), whether its GPU's serving efficiencies are measured."""
    # lazy: the verdict's JSON rules, only when this runs
    from planner.compute import verdict

    shown = ("cost_usd_per_month", *verdict.VERDICT, "saturated", "engine_fits")
    inputs = {**q.base, **a.changes}
    spec = q.gpus.get(str(inputs["gpu"]))
    masked = verdict.json_outputs(a.outputs, inputs)
    return {"gpu": str(inputs["gpu"]), "tp": int(inputs.get("tp", 1)),
            "pp": int(inputs.get("pp", 1)), "gpus": int(inputs.get("gpus", 1)),
            "replicas": int(a.outputs["replicas"]),
            "weight_dtype": str(inputs.get("weight_dtype", "auto")),
            **{k: masked[k] for k in shown if k in masked},
            "gpu_efficiencies_measured": spec is not None and verdict.gpu_measured(spec)}


def _disagg_capacity(ctx: click.Context, q: Question, n: Narrowing) -> None:
    """The capacity question for a disaggregated deployment (:mod:`planner.compute.disagg_sizing`):
    the cheapest xPyD (each pool's workers and TP; the prefill GPU from the scenario, or every
    GPU ``--gpu-filter`` keeps or ``--vary gpu=...`` names; the decode GPU the same type unless
    ``--vary decode_gpu=...``), then the runners-up."""
    # lazy: the disaggregated search (numpy), only when this runs
    from planner.compute import disagg_sizing as ds

    answers = ds.size_disaggregated(q.base, q.models, q.gpus,
                                    utilization_cap=n.utilization_cap,
                                    count=max(ds.ANSWERS, n.as_options or 0),
                                    profiles=q.profiles, **_disagg_search(q.gpus, n))
    written = _capacity_options(q, n, answers, None)
    answers = answers[:ds.ANSWERS]
    if n.as_json:
        emit_json({"found": bool(answers), "serving_mode": "disaggregated",
                   "answer": _disagg_record(answers[0], q.base) if answers else None,
                   "runners_up": [_disagg_record(a, q.base) for a in answers[1:]],
                   **({"options": written} if n.as_options else {})})
    else:
        # lazy: loads rich (~37 ms), only when this runs
        from planner.cli import render_answers

        render_answers.disagg_capacity(q.title, q.base, answers, q.gpus)
        echo_written(written, n.choose_best)
    if not answers:
        ctx.exit(1)


def _disagg_search(gpus: dict[str, Any], n: Narrowing) -> dict[str, Any]:
    """The disaggregated search's space from ``--vary`` (every GPU for the prefill pool unless
    named, as the aggregated question), narrowed by ``--gpu-filter``; ``--subject-to`` is
    refused (the search meets the SLO)."""
    # lazy: the disaggregated search (numpy), only when this runs
    from planner.compute import disagg_sizing as ds

    # lazy: the capacity module's GPU filter (numpy, the sweep), only when this runs
    from planner.compute.capacity import filtered_gpus

    if n.constraint:
        raise ValidationError("--subject-to", "the disaggregated solve meets the SLO; narrow it "
                              "with --utilization-cap or --vary", value=n.constraint)
    search = ds.search_from_vary(n.vary, gpus)
    search.setdefault("prefill_gpus", tuple(gpus))  # like the aggregated question: every GPU
    if n.gpu_filter:
        names = filtered_gpus(gpus, n.gpu_filter)
        search["prefill_gpus"] = tuple(x for x in search["prefill_gpus"] if x in names)
    return search


def _disagg_record(a: Any, base: dict[str, Any]) -> dict[str, Any]:
    """One disaggregated answer in ``--json``: each pool's GPU, TP and workers, the weight
    dtype and every output (states masked)."""
    # lazy: the verdict's JSON rules, only when this runs
    from planner.compute import verdict

    inputs = {**base, **a.changes}
    masked = verdict.json_outputs(a.outputs, inputs)
    decode_gpu = inputs["gpu"] if inputs["decode_gpu"] == "same" else inputs["decode_gpu"]
    return {"prefill": {"gpu": inputs["gpu"], "tp": inputs["prefill_tp"],
                        "workers": inputs["prefill_workers"]},
            "decode": {"gpu": decode_gpu, "tp": inputs["decode_tp"],
                       "workers": inputs["decode_workers"]},
            "weight_dtype": inputs["weight_dtype"],
            **{k: masked.get(k, v) for k, v in a.outputs.items()}}
