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
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from planner.core.errors import PlannerError, echo
from planner.spec.domain import ConflictError

BUSY_TIMEOUT_MS = 15_000


SUPPORTED = "sqlite:///path.db or postgresql://user@host/db"
"""The database URLs the planner works with, in words for messages."""


def make_engine(url: str, *, create_folder: bool = False, **kwargs: Any) -> Engine:
    """An engine for ``url``. A URL that is not SQLite or PostgreSQL, or whose driver is not
    installed, is refused with a message; so is an in-memory SQLite database (``sqlite://``),
    which would lose every write when the command ends.

    The folder of a SQLite file must exist, unless ``create_folder`` (the default database in
    the data folder, made on first run): a mistyped ``--db`` path is an error, not a new
    empty database somewhere."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise PlannerError(f"database URL {echo(url)} is not valid; give {SUPPORTED}") from exc
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise PlannerError(f"database URL {parsed.render_as_string(hide_password=True)!r}: "
                           f"{backend} is not supported; give {SUPPORTED}")
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if _in_memory(database, parsed.query):
            raise PlannerError(f"database URL {echo(url)} is an in-memory database: every "
                               "change would be lost when the command ends; give a file, "
                               "sqlite:///path.db")
        if database and not database.startswith("file:"):
            _sqlite_folder(Path(database).expanduser().parent, url, create_folder)
        engine = create_engine(parsed, **kwargs)
        _tune_sqlite(engine)
        return engine
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        return create_engine(parsed, pool_pre_ping=True, **kwargs)
    except ImportError as exc:
        raise PlannerError(f"the database driver for {parsed.drivername} is not installed "
                           "(pip install 'planner[postgres]')") from exc


def _in_memory(database: str | None, query: Any) -> bool:
    """Whether a SQLite URL names an in-memory database (``sqlite://``, ``:memory:``,
    ``file::memory:`` or ``mode=memory``)."""
    if not database or database == ":memory:":
        return True
    return database.startswith("file::memory:") or "mode=memory" in database or (
        query.get("mode") == "memory")


def _sqlite_folder(folder: Path, url: str, create: bool) -> None:
    """Check (or, with ``create``, make) the folder a SQLite file lives in; a missing folder
    of a URL the user gave, or a folder that cannot be made, in words."""
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PlannerError(
                f"cannot create the planner's data folder {_short(folder)}: "
                f"{_folder_problem(exc)}; set PLANNER_DATA_DIR to a writable folder, or "
                "pass --db sqlite:///path.db") from exc
        return
    try:
        missing = not folder.is_dir()
    except OSError as exc:  # a name too long, a loop of links
        raise PlannerError(f"database URL {echo(url)}: its folder cannot be used: "
                           f"{_folder_problem(exc)}") from exc
    if missing:
        raise PlannerError(f"database URL {echo(url)}: the folder {_short(folder)} does not "
                           "exist; check the path for a typo, or create the folder first")


def _short(path: Path) -> str:
    text = str(path)
    return text if len(text) <= 80 else f"{text[:40]}…{text[-40:]} ({len(text):,} characters)"


def _folder_problem(exc: OSError) -> str:
    """Why a folder cannot be made or used, in words."""
    import errno

    return {errno.EEXIST: "a file of that name is in the way",
            errno.ENOTDIR: "part of its path is a file, not a folder",
            errno.EACCES: "permission denied", errno.EPERM: "permission denied",
            errno.EROFS: "the file system is read-only",
            errno.ENOSPC: "the disk is full",
            errno.ENAMETOOLONG: "a name in the path is longer than the system allows (255 "
                                "bytes)"}.get(exc.errno or 0, exc.strerror or str(exc))


_DATABASE_PROBLEMS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("file is not a database",),
     "is not a database (not a SQLite file); point --db at a planner database or a new file"),
    (("malformed", "disk image", "corrupt"),
     "is damaged ({detail}); restore it from a backup, or point --db at another file"),
    (("readonly", "read-only", "read only"),
     "is read-only ({detail}); nothing was changed. Check the file's permissions, or "
     "point --db at a writable copy"),
    (("disk is full", "no space left", "disk full", "could not extend file"),
     "cannot be written: the disk is full ({detail}); nothing was changed. Free some space "
     "and try again"),
    (("unable to open database file", "could not connect", "connection refused",
      "does not exist", "authentication failed"),
     "cannot be opened ({detail})"),
    (("database is locked",),
     "is locked by another program ({detail}); nothing was changed. Try again"),
)


def database_error(exc: BaseException, url: str | None = None) -> PlannerError | None:
    """The planner's message for a failure of the database itself (damaged, read-only, full,
    not a database, unreachable), or ``None`` for anything else (a bug, which may show a
    traceback). Every write is one transaction, so each message can say nothing changed."""
    original = _database_cause(exc)
    if original is None:
        return None
    detail = (str(original).strip().splitlines() or [type(original).__name__])[0]
    where = f"the database {_safe_url(url)}" if url else "the database"
    problem = _known_problem(detail)
    if problem is not None:
        return PlannerError(f"{where} {problem.format(detail=detail)}")
    if isinstance(original, OSError) and not isinstance(exc, DBAPIError):
        return None
    return PlannerError(f"{where} refused the operation: {detail}")


def _database_cause(exc: BaseException) -> BaseException | None:
    """The driver's error behind ``exc`` (a DBAPI error's original, or a sqlite3 or OS
    error itself); ``None`` for any other exception."""
    # lazy: sqlite3's error classes, only when an error is explained
    import sqlite3

    if isinstance(exc, DBAPIError):
        return exc.orig if exc.orig is not None else exc
    if isinstance(exc, (sqlite3.Error, OSError)):
        return exc
    return None


def _known_problem(detail: str) -> str | None:
    """The message template of the first :data:`_DATABASE_PROBLEMS` entry whose words
    ``detail`` holds (case-insensitive), or ``None``."""
    lowered = detail.lower()
    for needles, problem in _DATABASE_PROBLEMS:
        if any(n in lowered for n in needles):
            return problem
    return None


def _safe_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(unreadable URL)"


def _tune_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if engine.url.database not in (None, "", ":memory:"):
            mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal" and _new_or_planner(cursor):
                cursor.execute("PRAGMA journal_mode=WAL")  # kept in the file from then on
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("planner_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _new_or_planner(cursor: Any) -> bool:
    """Whether a SQLite file is new (no tables) or the planner's (``alembic_version``): only
    those are switched to WAL. The journal mode is written into the file, so another
    application's database, which the planner then refuses, is left byte for byte as it
    was."""
    names = {row[0] for row in cursor.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' LIMIT 2").fetchall()}
    return not names or "alembic_version" in {row[0] for row in cursor.execute(
        "SELECT name FROM sqlite_master WHERE name = 'alembic_version'").fetchall()}


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
