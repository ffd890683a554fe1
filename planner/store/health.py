"""Is this database a healthy planner database? The checks behind ``planner db check``.

Start-up only reads the schema revision and the table names (:func:`planner.store.migrate.
ensure_schema`), so that a command stays fast on a large database. A database can be wrong in
ways that only a full read shows: a damaged SQLite page, a row whose GPU was deleted with
foreign keys off (the ``sqlite3`` shell's default), a table dropped by hand. This module reads
everything once and says what is wrong, so that no damaged, empty-by-accident or foreign
database is reported as healthy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, exists, func, inspect, select

from planner.store import migrate
from planner.store.engine import is_sqlite
from planner.store.schema import Base, GpuRow, ModelRow

SHOWN_PROBLEMS = 20
"""Most problems of one kind listed (with a count of the rest)."""


@dataclass(slots=True)
class Health:
    """What :func:`check` found: the revision and its state (:func:`planner.store.migrate.
    state`, or ``not a planner database``), ``problems`` (damage: the database should not be
    used as it is) and ``notes`` (worth knowing, not damage)."""

    revision: str | None
    state: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        """No problem, and a state this planner works with."""
        return not self.problems and self.state in ("empty", "up to date", "behind")


def state_of(engine: Engine) -> tuple[str | None, str]:
    """(revision, state): :func:`planner.store.migrate.state`, ``not a planner database``
    for a database with tables and no planner revision, or ``damaged`` for one at head that
    lacks a table (cheap: the revision and the table names)."""
    with engine.connect() as conn:
        revision = migrate.current_in(conn)
        if revision is None and migrate.foreign_tables(conn):
            return None, "not a planner database"
        if revision == migrate.SCHEMA_HEAD and migrate.missing_tables(conn):
            return revision, "damaged"
    return revision, migrate.state(revision)


def check(engine: Engine) -> Health:
    """Read the whole database once: its revision, the tables its revision needs, SQLite's
    page check, and every reference between rows (a scenario's GPU, model and fleet, a
    measurement's GPU, ...)."""
    revision, state = state_of(engine)
    health = Health(revision, state)
    if state == "not a planner database":
        with engine.connect() as conn:
            foreign = migrate.foreign_tables(conn)
        health.problems.append(f"it holds tables ({_listed(foreign)}) and no planner schema "
                               "revision: another application's database")
        return health
    if state == "empty":
        health.notes.append("empty: the planner creates its tables on first use")
        return health
    if state == "newer":
        health.problems.append(f"revision {revision} is newer than this planner "
                               f"(head {migrate.head()}); upgrade the planner")
        return health
    with engine.connect() as conn:
        if is_sqlite(engine):
            _page_check(conn, health)
        if state in ("up to date", "damaged"):
            _check_at_head(conn, health)
        else:
            health.notes.append(f"behind head {migrate.head()}: `planner db upgrade`, or any "
                                "command, upgrades it")
    return health


def _page_check(conn: Connection, health: Health) -> None:
    """SQLite's page check (``PRAGMA quick_check``); its findings are problems."""
    rows = [r[0] for r in conn.exec_driver_sql("PRAGMA quick_check").fetchall()]
    if rows != ["ok"]:
        health.problems.append("SQLite's page check failed: " + _listed(rows))


def _check_at_head(conn: Connection, health: Health) -> None:
    """The checks of a database at head: missing tables and dangling references are
    problems; an empty catalog is a note."""
    missing = migrate.missing_tables(conn)
    if missing:
        health.problems.append(f"table(s) {', '.join(missing)} are missing")
    present = set(inspect(conn).get_table_names())
    health.problems += _dangling(conn, present)
    if conn.scalar(select(func.count()).select_from(ModelRow)) == 0 or conn.scalar(
            select(func.count()).select_from(GpuRow)) == 0:
        health.notes.append("the catalog has no models or no GPUs: `planner db seed` "
                            "adds the shipped catalog")


def _dangling(conn: Connection, present: set[str]) -> list[str]:
    """Rows whose foreign key names a row that does not exist, one line per reference."""
    out = []
    for table in Base.metadata.sorted_tables:
        if table.name not in present:
            continue
        for fk in table.foreign_keys:
            parent = fk.column.table
            if parent.name not in present:
                continue
            column = fk.parent
            target = parent.alias()  # an alias: a reference may point into its own table
            orphan = select(func.count()).select_from(table).where(
                column.is_not(None), ~exists().where(target.c[fk.column.name] == column))
            count = conn.scalar(orphan)
            if count:
                out.append(f"{count:,} row(s) of {table.name} name a {parent.name} row that "
                           f"does not exist ({table.name}.{column.name}; deleted outside the "
                           "planner?)")
    return out


def _listed(items: list[str]) -> str:
    shown = ", ".join(map(str, items[:SHOWN_PROBLEMS]))
    return shown + (f" and {len(items) - SHOWN_PROBLEMS:,} more" if len(items) > SHOWN_PROBLEMS
                    else "")

