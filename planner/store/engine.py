"""Engines and transactions: SQLite tuned for a desktop tool, PostgreSQL for teams.

SQLite files get WAL (readers never block the writer), foreign keys on, and a busy timeout;
write transactions start with ``BEGIN IMMEDIATE`` so two processes never both read a snapshot
and then collide on upgrade to a write lock. Every command runs in one transaction: it commits
whole or leaves the database exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from planner.domain import ConflictError
from planner.errors import PlannerError

BUSY_TIMEOUT_MS = 15_000


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url``; creates the folder of a SQLite file."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise PlannerError(f"database URL {url!r} is not valid: {exc}") from exc
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, **kwargs)
        _tune_sqlite(engine)
        return engine
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return create_engine(parsed, pool_pre_ping=True, **kwargs)


def _tune_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if engine.url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("planner_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def is_sqlite(bind: Any) -> bool:
    """True for SQLite: the one dialect check (``bind`` is an engine, a connection or a
    session). SQLite locks the whole file (``BEGIN IMMEDIATE``), has no ``FOR UPDATE``, and
    alters tables in batch mode."""
    if isinstance(bind, Session):
        bind = bind.get_bind()
    return bind.dialect.name == "sqlite"


def locks_rows(bind: Any) -> bool:
    """True where a write transaction must lock the rows it reads (``SELECT … FOR UPDATE``):
    every database but SQLite, whose write transactions lock the whole file up front."""
    return not is_sqlite(bind)


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """One write transaction: commits on success, rolls back on any exception."""
    bound = engine.execution_options(planner_write=True)
    with Session(bound, expire_on_commit=False) as session, session.begin():
        yield session


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Session]:
    """:func:`write_session`, with the database's refusals in the planner's words: a stale
    versioned UPDATE becomes :class:`ConflictError`, a broken constraint a
    :class:`PlannerError` naming it."""
    try:
        with write_session(engine) as session:
            yield session
    except StaleDataError as exc:
        raise ConflictError("the row", -1, -1, {}) from exc
    except IntegrityError as exc:
        orig = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
        raise PlannerError(f"the database refused the change: {orig}") from exc


@contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """One read-only transaction (rolled back at the end)."""
    with Session(engine, expire_on_commit=False) as session, session.begin():
        yield session
        session.rollback()
