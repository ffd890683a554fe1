"""One model's or GPU's spec read from a SQLite planner database without SQLAlchemy.

``planner estimate`` and ``planner train`` save nothing; they only need the spec of the model
and GPU they name. Opening the database through the store costs ~0.3 s of imports
(SQLAlchemy) and a schema check, most of such a command's time (issue 14, item 5). Here the
two rows are read with the standard library's ``sqlite3``, read-only. Anything out of the
ordinary (not a SQLite file URL, no such file, no such row, a schema without these columns)
returns None, and the caller opens the database the usual way, which creates, upgrades and
seeds it and names what is wrong: the answer is always the one the store would give.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

from planner.core.errors import PlannerError
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec
from planner.spec.hf_config import spec_from_config
from planner.store.rowspec import GPU_COLUMNS, gpu_spec


def sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///PATH`` URL (relative or, with four slashes, absolute); None
    for any other URL, an in-memory database or a URL with options."""
    for prefix in ("sqlite:///", "sqlite+pysqlite:///"):
        if url.startswith(prefix):
            rest = url[len(prefix):]
            if not rest or "?" in rest or rest == ":memory:":
                return None
            return Path(rest)
    return None


def _row(url: str, table: str, columns: tuple[str, ...], name: str) -> dict[str, Any] | None:
    path = sqlite_file(url)
    if path is None or not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        cur = conn.execute(f"SELECT {', '.join(columns)} FROM {table} "
                           "WHERE lower(name) = ?", (name.strip().lower(),))
        rows = cur.fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if len(rows) != 1:
        return None
    return dict(zip(columns, rows[0], strict=True))


def model_spec(url: str, name: str) -> ModelSpec | None:
    """The spec of the model called ``name`` (case-insensitive) in the SQLite database at
    ``url``, as the store parses it; None when it cannot be read this way."""
    row = _row(url, "models", ("name", "config_json"), name)
    if row is None:
        return None
    try:
        return spec_from_config(json.loads(row["config_json"]), row["name"])
    except (PlannerError, ValueError):
        return None  # the store's path reports it


def gpu_spec_of(url: str, name: str) -> GpuSpec | None:
    """The spec of the GPU called ``name`` (case-insensitive) in the SQLite database at
    ``url``; None when it cannot be read this way."""
    row = _row(url, "gpus", GPU_COLUMNS, name)
    if row is None:
        return None
    row["price_is_example"] = bool(row["price_is_example"])
    return gpu_spec(SimpleNamespace(**row))
