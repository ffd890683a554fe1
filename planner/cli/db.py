"""``planner db …``: schema revisions for operators, and catalog seeding."""

from __future__ import annotations

import click

from planner.cli.common import PlannerGroup, emit_json, json_option, workspace
from planner.core.settings import database_url, is_default


def _engine(ctx: click.Context):  # type: ignore[no-untyped-def]
    # lazy: loads sqlalchemy (~199 ms), only when this runs
    from planner.store.engine import make_engine

    url = database_url(ctx.find_root().ensure_object(dict).get("db"))
    engine = make_engine(url, create_folder=is_default(url))
    ctx.call_on_close(engine.dispose)
    return engine


@click.group(cls=PlannerGroup)
def db() -> None:
    """Database schema: current revision, upgrade, downgrade; seed the catalog."""


@db.command("current")
@json_option
@click.pass_context
def db_current(ctx: click.Context, as_json: bool) -> None:
    """The database's schema revision and this planner's head."""
    # lazy: loads sqlalchemy (~207 ms), only when this runs
    from planner.store import health, migrate

    engine = _engine(ctx)
    revision, state = health.state_of(engine)
    data = {"url": engine.url.render_as_string(hide_password=True),
            "current": revision, "head": migrate.head(), "state": state}
    if as_json:
        emit_json(data)
        return
    words = {"empty": "empty: the planner creates it on first use",
             "damaged": "damaged: tables are missing; `planner db check` lists what is wrong",
             "not a planner database": "not a planner database: it holds another "
                                       "application's tables, which the planner will not "
                                       "touch",
             "up to date": "up to date", "behind": "behind head: `planner db upgrade`",
             "newer": "newer than this planner: written by a newer planner, which this one "
                      "will not touch; upgrade the planner"}[data["state"]]
    click.echo(f"{data['url']}: revision {data['current'] or '(empty)'}, head {data['head']} "
               f"({words})")


@db.command("check")
@json_option
@click.pass_context
def db_check(ctx: click.Context, as_json: bool) -> None:
    """Read the whole database once and say whether it is a healthy planner database: its
    revision, its tables, SQLite's page check, and every reference between rows (a scenario's
    GPU, model, fleet). Exit status 2 when it is damaged, foreign or newer than this planner."""
    from dataclasses import asdict

    # lazy: loads sqlalchemy (~207 ms), only when this runs
    from planner.store import health

    engine = _engine(ctx)
    found = health.check(engine)
    url = engine.url.render_as_string(hide_password=True)
    if as_json:
        emit_json({"url": url, **asdict(found), "healthy": found.healthy})
    else:
        verdict = "healthy" if found.healthy else "NOT healthy"
        click.echo(f"{url}: revision {found.revision or '(empty)'}, {found.state}: {verdict}")
        for line in found.problems:
            click.echo(f"  problem: {line}")
        for line in found.notes:
            click.echo(f"  note: {line}")
    if not found.healthy:
        ctx.exit(2)


@db.command("upgrade")
@click.argument("revision", default="head")
@click.pass_context
def db_upgrade(ctx: click.Context, revision: str) -> None:
    """Upgrade the schema to REVISION (default: head)."""
    # lazy: loads sqlalchemy (~207 ms), only when this runs
    from planner.store import migrate

    engine = _engine(ctx)
    before = migrate.current(engine)
    migrate.upgrade(engine, revision)
    click.echo(f"upgraded from {before or '(empty)'} to {migrate.current(engine)}")


@db.command("downgrade")
@click.argument("revision")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def db_downgrade(ctx: click.Context, revision: str, yes: bool) -> None:
    """Downgrade the schema to REVISION ('base' drops every table); asks first unless --yes."""
    # lazy: loads sqlalchemy (~207 ms), only when this runs
    from planner.store import migrate

    engine = _engine(ctx)
    what = ("Downgrading to base deletes every table and row." if revision == "base" else
            f"Downgrading to {revision} leaves a schema only an older planner uses (data it "
            "cannot hold is kept aside for the next upgrade).")
    if not yes and not click.confirm(f"{what} Continue?", err=True):
        raise click.Abort
    before = migrate.current(engine)
    migrate.downgrade(engine, revision)
    click.echo(f"downgraded from {before or '(empty)'} to {migrate.current(engine) or 'base'}")


@db.command("seed")
@json_option
@click.pass_context
def db_seed(ctx: click.Context, as_json: bool) -> None:
    """Add what is new in the catalog (seeds/); never overwrites rows you edited."""
    from dataclasses import asdict


    report = workspace(ctx).seed()
    if as_json:
        emit_json(asdict(report))
        return
    for label, part in (("added", report.added), ("refreshed", report.refreshed),
                        ("kept as edited", report.kept)):
        for kind, names in part.items():
            click.echo(f"{label} {len(names)} {kind}(s): {', '.join(names)}")
    if not (report.added or report.refreshed):
        click.echo("catalog already up to date")
