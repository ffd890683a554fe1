"""Database fixtures: every store test runs on SQLite and on a real PostgreSQL server.

The PostgreSQL server comes from ``PLANNER_TEST_POSTGRES_URL`` (``.ci/run`` starts one with
``.ci/postgres.sh``); when that is unset the session starts its own with the same script, on a
free port and in a private folder, and stops it at the end. No other server is touched.

Migrating to head and seeding costs about a second a database, so it happens once per session
(per pytest-xdist worker) and backend, into a template; each test gets a copy of it (SQLite: a
file copy; PostgreSQL: ``CREATE DATABASE ... TEMPLATE``). Tests of migration and first-run
seeding themselves ask for an empty database with ``@pytest.mark.empty_database``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, create_engine, inspect, make_url, select, text

from planner.store.engine import make_engine

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _worker_database(url: str) -> Iterator[str]:
    """``url`` itself, or under pytest-xdist a database of this worker's own on the same server
    (``<name>_gw0``, created empty, dropped at the end): the store tests drop and recreate the
    schema of the database they are given, so two workers must never share one."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        yield url
        return
    base = make_url(url)
    name = f"{base.database}_{re.sub(r'[^a-z0-9]', '', worker.lower())}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL database for the store tests (one per pytest-xdist worker)."""
    url = os.environ.get("PLANNER_TEST_POSTGRES_URL")
    if url:
        with _worker_database(url) as own:
            yield own
        return
    script = str(ROOT / ".ci" / "postgres.sh")
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_PG_PORT"}
    proc = subprocess.run(["bash", script], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        pytest.fail(f"could not start PostgreSQL for the store tests:\n{proc.stderr}")
    data = re.search(r"^PLANNER_PG_DATA=(.+)$", proc.stderr, re.MULTILINE)
    try:
        with _worker_database(proc.stdout.strip().splitlines()[-1]) as own:
            yield own
    finally:
        if data:
            subprocess.run(["bash", script, "stop", data.group(1)], capture_output=True)


def reset_postgres(url: str) -> None:
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


def _seed(url: str) -> None:
    """Migrate the empty database at ``url`` to head and seed it, as a first open does."""
    from planner.service import Workspace

    Workspace.open(url).close()


@pytest.fixture(scope="session")
def seeded_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database migrated to head and seeded, built once per session (per worker)."""
    path = tmp_path_factory.mktemp("template") / "planner.db"
    _seed(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_admin(postgres_url: str) -> Iterator[Any]:
    """An autocommit engine on this worker's PostgreSQL database, for CREATE/DROP DATABASE of
    the template and its copies (never the database it is connected to)."""
    admin = create_engine(make_url(postgres_url), isolation_level="AUTOCOMMIT")
    yield admin
    admin.dispose()


def _drop(admin: Any, name: str) -> None:
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def seeded_postgres_template(postgres_url: str, postgres_admin: Any) -> Iterator[str]:
    """The name of a PostgreSQL database (``<worker's database>_tpl``) migrated to head and
    seeded once per session; nothing connects to it after, so it can be a TEMPLATE."""
    base = make_url(postgres_url)
    name = f"{base.database}_tpl"
    _drop(postgres_admin, name)
    with postgres_admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    _seed(base.set(database=name).render_as_string(hide_password=False))
    yield name
    _drop(postgres_admin, name)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each backend at schema head with the seeds: a copy of the session's
    template. Under ``@pytest.mark.empty_database`` an empty one instead, for the tests of
    migration and first-run seeding."""
    empty = request.node.get_closest_marker("empty_database") is not None
    if request.param == "sqlite":
        path = tmp_path / "store.db"
        if not empty:
            shutil.copyfile(request.getfixturevalue("seeded_sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    url = request.getfixturevalue("postgres_url")
    if empty:
        reset_postgres(url)
        yield url
        return
    template = request.getfixturevalue("seeded_postgres_template")
    admin = request.getfixturevalue("postgres_admin")
    base = make_url(url)
    name = f"{base.database}_copy"
    _drop(admin, name)
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    yield base.set(database=name).render_as_string(hide_password=False)
    _drop(admin, name)


_REFLECTED: dict[tuple[str, str], MetaData] = {}
"""Reflected table definitions by (database URL, schema fingerprint): SQLAlchemy's reflection
of the planner's tables takes about 0.1 s, and a test that proves nothing changed dumps the
database before and after every command (the CLI fuzz test: 458 dumps, 42 of its 179
profiled seconds in reflection)."""


def _schema_fingerprint(conn: Any) -> str:
    """Every table's name and columns as the database describes them: equal exactly when a
    reflection would find the same tables and columns."""
    if conn.dialect.name == "sqlite":
        query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    else:
        query = ("SELECT table_name, column_name, data_type, is_nullable, ordinal_position "
                 "FROM information_schema.columns WHERE table_schema = current_schema() "
                 "ORDER BY table_name, ordinal_position")
    return repr(conn.execute(text(query)).all())


def dump(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted: compare before and after to prove nothing changed.
    The tables are reflected once per schema (:data:`_REFLECTED`), so their values keep the
    column types a fresh reflection gives."""
    engine = make_engine(url)
    out: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        key = (url, _schema_fingerprint(conn))
        meta = _REFLECTED.get(key)
        if meta is None:
            meta = MetaData()
            meta.reflect(conn)
            _REFLECTED[key] = meta
        for name, table in sorted(meta.tables.items()):
            rows = conn.execute(select(table)).all()
            out[name] = sorted((tuple(r) for r in rows), key=repr)
        out["_tables"] = sorted((t,) for t in inspect(conn).get_table_names())
    engine.dispose()
    return out
