"""Where the planner keeps its data and which database it talks to.

Order of precedence for the database: an explicit URL (``--db``), ``PLANNER_DATABASE_URL``, then
a SQLite file ``planner.db`` in the data folder. The data folder is ``PLANNER_DATA_DIR`` or the
platform's user data folder (``~/.local/share/planner`` on Linux); tests redirect it with the
environment variable.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "planner"


def data_dir() -> Path:
    """The planner's data folder (not created here)."""
    env = os.environ.get("PLANNER_DATA_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def default_database_url() -> str:
    """``sqlite:///<data dir>/planner.db``."""
    return f"sqlite:///{data_dir() / 'planner.db'}"


def is_default(url: str) -> bool:
    """Whether ``url`` is the default database (a file in the data folder, whose folder the
    planner creates on first run), not one a user named with ``--db`` or
    ``PLANNER_DATABASE_URL``."""
    return url == default_database_url()


def database_url(explicit: str | None = None) -> str:
    """The database URL in force: ``explicit``, ``$PLANNER_DATABASE_URL`` or the default."""
    return explicit or os.environ.get("PLANNER_DATABASE_URL") or default_database_url()
