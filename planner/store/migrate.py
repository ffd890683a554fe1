"""Schema migrations (Alembic, top-level ``migrations/``) run from the planner itself.

:func:`ensure_schema` is what start-up calls: an empty database is created at head, an older one
is upgraded in place (its data kept), and a database newer than this planner is refused with a
clear message instead of being touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

from planner.core.errors import PlannerError
from planner.core.resources import migrations_dir
from planner.store.engine import is_sqlite
from planner.store.schema import Base

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS_DIR = migrations_dir()


SCHEMA_HEAD = "0021"
"""The newest revision in ``migrations/versions``. Start-up compares the database with it
before importing Alembic (about 0.2 s of imports), which it needs only to migrate;
``tests/store/test_migrations.py`` checks it against Alembic's own head."""


class SchemaError(PlannerError):
    """The database's schema revision is one this planner does not know, or its tables are
    not what its revision says."""


SCHEMA_LOCK_KEY = 0x706C616E6E6572  # "planner"
"""The PostgreSQL advisory lock held while the schema is migrated or the catalog seeded:
clients opening an empty database at once create and seed it once (the others wait, then
find it done), instead of colliding in ``CREATE TABLE`` (``duplicate key … pg_type``)."""


@cache
def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS_DIR))


def _config(connection: Connection) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    return cfg


def heads() -> tuple[str, ...]:
    """Head revisions of the migration scripts (one, in a healthy tree)."""
    return tuple(_script().get_heads())


def head() -> str:
    """The single head revision."""
    found = heads()
    if len(found) != 1:
        raise SchemaError(f"migrations have {len(found)} heads: {', '.join(found)}")
    return found[0]


def revisions() -> list[str]:
    """Every revision, oldest first."""
    return [s.revision for s in reversed(list(_script().walk_revisions()))]


def current(engine: Engine) -> str | None:
    """The database's revision (``None`` for a database never migrated)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def missing_tables(conn: Connection) -> list[str]:
    """The planner's tables (those of :mod:`planner.store.schema`, the head schema) that the
    database lacks."""
    return sorted(set(Base.metadata.tables) - set(inspect(conn).get_table_names()))


def check_complete(conn: Connection, revision: str | None) -> None:
    """Refuse a database at head that lacks some of the planner's tables (one dropped by
    hand, say the change log): every read and write would go wrong or half-wrong, so it is
    named as damaged before anything runs. One query (the table names)."""
    if revision != SCHEMA_HEAD:
        return
    missing = missing_tables(conn)
    if missing:
        raise SchemaError(f"the database is damaged: it says schema revision {revision}, but "
                          f"the table(s) {', '.join(missing)} are missing; nothing was "
                          "changed. Restore it from a backup (`planner db check` lists "
                          "what is wrong)")


@contextmanager
def _migrating(engine: Engine) -> Iterator[Connection]:
    """One migration transaction. On SQLite, foreign keys are switched off around it: batch
    mode rebuilds a table by copy-and-drop, and with foreign keys on, dropping the old table
    would cascade-delete the rows that reference it (the change log). Integrity is checked with
    ``PRAGMA foreign_key_check`` before the transaction commits."""
    with engine.execution_options(planner_write=True).connect() as conn:
        sqlite = is_sqlite(engine)
        raw = conn.connection.driver_connection if sqlite else None
        if raw is not None:
            raw.execute("PRAGMA foreign_keys=OFF")  # no effect inside a transaction
        try:
            with conn.begin():
                yield conn
                if raw is not None:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise SchemaError(f"migration left broken foreign keys: {broken[:5]}")
        finally:
            if raw is not None:
                raw.execute("PRAGMA foreign_keys=ON")


def state(revision: str | None) -> str:
    """Where a database at ``revision`` stands against this planner: ``empty`` (never
    migrated), ``up to date``, ``behind`` (an older revision this planner upgrades) or
    ``newer`` (written by a newer planner: this one refuses to touch it)."""
    if revision is None:
        return "empty"
    if revision == head():
        return "up to date"
    return "behind" if revision in revisions() else "newer"


def _newer_error(revision: str) -> SchemaError:
    return SchemaError(f"the database is at revision {revision!r}, which this planner does not "
                       f"know (it was written by a newer planner; this one knows up to "
                       f"{head()}); upgrade the planner")


def _check_migratable(conn: Connection, revision: str | None) -> None:
    """Refuse a database written by a newer planner, and a database that holds tables but is
    not the planner's (no ``alembic_version``): migrating would add the planner's tables to
    someone else's database."""
    if revision is not None:
        if revision not in revisions():
            raise _newer_error(revision)
        return
    foreign = foreign_tables(conn)
    if foreign:
        shown = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
        raise SchemaError(f"the database is not a planner database: it already holds tables "
                          f"({shown}) and no planner schema revision; refusing to add the "
                          "planner's tables to it. Point --db at a new file or an empty "
                          "database")


def foreign_tables(conn: Connection) -> list[str]:
    """Tables other than Alembic's own (what a database never migrated should not hold)."""
    return sorted(set(inspect(conn).get_table_names()) - {"alembic_version"})


def current_in(conn: Connection) -> str | None:
    """The revision of the database behind ``conn`` (``None``: never migrated)."""
    return _revision_in(conn)


def _revision_in(conn: Connection) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def lock_schema(conn: Connection) -> None:
    """Hold :data:`SCHEMA_LOCK_KEY` until the transaction of ``conn`` ends (PostgreSQL; on
    SQLite the write transaction's ``BEGIN IMMEDIATE`` already holds the whole file)."""
    if not is_sqlite(conn):
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Upgrade to ``revision`` in one transaction (an unrelated or newer database refused,
    and one at head that lacks a table: :func:`check_complete`); returns the revision the
    database had, read under the schema lock (another client may have migrated it while this
    one waited)."""
    from alembic import command

    with _migrating(engine) as conn:
        lock_schema(conn)
        found = _revision_in(conn)
        _check_migratable(conn, found)
        command.upgrade(_config(conn), revision)
        check_complete(conn, _revision_in(conn))
    return found


def downgrade(engine: Engine, revision: str) -> None:
    """Downgrade to ``revision`` (``base`` empties the schema) in one transaction."""
    from alembic import command

    known = {*revisions(), "base"}
    if revision not in known and not revision.startswith("-"):
        raise SchemaError(f"unknown revision {revision!r}; known: {', '.join(sorted(known))}")
    with _migrating(engine) as conn:
        lock_schema(conn)
        found = _revision_in(conn)
        _check_migratable(conn, found)
        check_complete(conn, found)
        command.downgrade(_config(conn), revision)


def ensure_schema(engine: Engine) -> tuple[str | None, str]:
    """Bring the database to head; returns (revision before, revision after). A database at
    head that lacks a table is refused (:func:`check_complete`)."""
    with engine.connect() as conn:
        before = _revision_in(conn)
        if before == SCHEMA_HEAD:  # the usual start-up: nothing to do, Alembic not imported
            check_complete(conn, before)
            return before, before
    target = head()
    if before == target:
        return before, target
    if before is not None and before not in revisions():
        raise _newer_error(before)
    return upgrade(engine, target), target
