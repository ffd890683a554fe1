"""The ``planner`` command: a thin shell over the library (:mod:`planner.service`,
:mod:`planner.service.workspace`); no arithmetic here.

Subcommands live in modules named for what they own: ``estimate`` (estimate, train),
``models_gpus`` (model, gpu), ``fleets`` (fleet, scenario), ``db`` (schema operations).
"""

from __future__ import annotations

import sys

import click

from planner.cli.common import PlannerGroup, workspace
from planner.core.errors import PlannerError


@click.group(cls=PlannerGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", "db_url", envvar="PLANNER_DATABASE_URL", metavar="URL",
              help="Database URL (sqlite:///path.db or postgresql://user@host/db); the folder "
                   "of a SQLite file must exist. Default: planner.db in the user data folder "
                   "(or $PLANNER_DATA_DIR), created on first run. `planner db check` says "
                   "whether a database is healthy.")
@click.version_option(package_name="planner")
@click.pass_context
def cli(ctx: click.Context, db_url: str | None) -> None:
    """LLM capacity planning from a model's architecture: weight memory, KV cache, concurrency,
    FLOPs, latency and throughput bounds, serving and training cost.

    Without a command, opens the terminal UI on the database (press ? there for the keys).

    Units: GB = 10^9 B, GiB = 2^30 B; FLOPs are counts, FLOP/s rates.
    """
    ctx.ensure_object(dict)["db"] = db_url
    if ctx.invoked_subcommand is None:
        not_terminals = [n for n, s in (("input", sys.stdin), ("output", sys.stdout))
                         if s is None or not s.isatty()]
        if not_terminals:
            which = " and ".join(not_terminals)
            verb = "are not terminals" if len(not_terminals) == 2 else "is not a terminal"
            raise PlannerError(f"the terminal UI needs a terminal, and standard {which} "
                               f"{verb}; run it in a terminal, or give a command for "
                               "scripts (planner --help lists them)")
        ws = workspace(ctx)  # creates, migrates and seeds on first run; errors exit 2
        # lazy: loads rich, textual (~194 ms), only when this runs
        from planner.tui.app import create_app

        create_app(workspace=ws).run()


def _register() -> None:
    # lazy: the command modules import the `cli` group defined above (an import cycle)
    from planner.cli import (
        bench,
        bulk,
        db,
        estimate,
        fleets,
        models_gpus,
        options,  # noqa: F401  (registers scenario option/choose)
        plan,
        report,
        solve,
        whatif,
    )

    for command in (estimate.estimate, estimate.train, models_gpus.model,
                    models_gpus.gpu,
                    fleets.fleet, fleets.scenario, whatif.sweep, solve.solve, whatif.compare,
                    report.export, report.import_, bench.bench, bench.calibrate, db.db):
        cli.add_command(command)
    fleets.scenario.add_command(bulk.scenario_import)
    plan.register(fleets.fleet, fleets.scenario, models_gpus.gpu)


_register()


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="planner", standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
