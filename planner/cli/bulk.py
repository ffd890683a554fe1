"""``planner scenario import``: many new scenarios from a CSV, .xlsx or Parquet file at once."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from planner.cli.common import emit_json, json_option, workspace

PROGRESS_MIN_ROWS = 5_000
"""Imports of at least this many rows show a progress bar on stderr (a terminal only): about
a second of writing on this project's 2-core CI machine."""


@click.command("import")
@click.argument("fleet")
@click.argument("path", metavar="FILE", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True,
              help="Check every row and the database's constraints; write nothing.")
@click.option("--replace", "on_clash", flag_value="replace",
              help="A name the fleet already has: overwrite that scenario (one logged edit "
                   "each, so undo reverts it).")
@click.option("--skip-existing", "on_clash", flag_value="skip",
              help="A name the fleet already has: keep that scenario, leave the row out.")
@json_option
@click.pass_context
def scenario_import(ctx: click.Context, fleet: str, path: Path, dry_run: bool,
                    on_clash: str | None, as_json: bool) -> None:
    """Create many scenarios in FLEET from FILE (.csv, .xlsx, or .parquet with pyarrow
    installed): a header `name,model,gpu` then any of kind, notes, lora_targets and the input
    columns (see `planner estimate --help`); inputs left out or left empty take the
    defaults of their row's kind (so inference and training rows may share a file).

    Every cell is checked first, column by column, and every problem is listed as
    FILE:line (column): message (the first 20, and how many in all); then all rows are written
    in one transaction, or none. A name the fleet already has is refused unless --replace or
    --skip-existing says otherwise.
    """
    ws = workspace(ctx)
    bar: Any = None
    with contextlib.ExitStack() as stack:

        def started(rows: int) -> None:
            nonlocal bar
            if rows >= PROGRESS_MIN_ROWS and sys.stderr.isatty():
                bar = stack.enter_context(click.progressbar(
                    length=rows, label="checking constraints" if dry_run else "writing",
                    file=sys.stderr))

        def progress(rows: int) -> None:
            if bar is not None:
                bar.update(rows)

        result = ws.import_scenarios(fleet, path, on_clash=on_clash or "refuse",  # type: ignore[arg-type]
                                     dry_run=dry_run, progress=progress, started=started)
    if as_json:
        emit_json({"fleet": result.fleet, "file": result.source, "rows": result.rows,
                   "created": result.created, "replaced": result.replaced,
                   "skipped": result.skipped, "dry_run": result.dry_run})
        return
    verb = "would import" if dry_run else "imported"
    detail = [f"{result.created:,} created"]
    if result.replaced:
        detail.append(f"{result.replaced:,} replaced")
    if result.skipped:
        detail.append(f"{result.skipped:,} skipped")
    click.echo(f"{verb} {result.rows:,} rows of {result.source} into fleet {result.fleet}: "
               + ", ".join(detail) + (" (dry run: nothing written)" if dry_run else ""))
