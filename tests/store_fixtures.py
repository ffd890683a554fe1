"""Database fixtures: every store test runs on SQLite and on a real PostgreSQL server.

The PostgreSQL server comes from ``PLANNER_TEST_POSTGRES_URL`` (``.ci/run`` starts one with
``.ci/postgres.sh``); when that is unset the session starts its own with the same script, on a
free port and in a private folder, and stops it at the end. No other server is touched.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, make_url, select, text

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


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    url = request.getfixturevalue("postgres_url")
    reset_postgres(url)
    yield url


def dump(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted: compare before and after to prove nothing changed."""
    engine = make_engine(url)
    out: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        from sqlalchemy import MetaData

        meta = MetaData()
        meta.reflect(conn)
        for name, table in sorted(meta.tables.items()):
            rows = conn.execute(select(table)).all()
            out[name] = sorted((tuple(r) for r in rows), key=repr)
        out["_tables"] = sorted((t,) for t in inspect(conn).get_table_names())
    engine.dispose()
    return out
