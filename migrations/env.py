"""Alembic environment: the planner's metadata and database URL, batch mode for SQLite.

Programmatic runs (``planner db …``, start-up upgrades, tests) pass an open connection in
``config.attributes["connection"]``; the ``alembic`` command line uses ``-x db=URL`` or the
planner's settings (``PLANNER_DATABASE_URL``, else the default SQLite file).
"""

from __future__ import annotations

from alembic import context

from planner.core.settings import database_url
from planner.store.engine import is_sqlite, make_engine
from planner.store.schema import Base

config = context.config
target_metadata = Base.metadata


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=is_sqlite(connection),
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("db") or database_url()
    engine = make_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
run_online()
