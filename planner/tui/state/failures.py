"""The failures the UI's database and file work expects, so that its workers catch those and
nothing else.

A worker that reads or writes the workspace can meet three kinds of failure that are not bugs:
a :class:`~planner.core.errors.PlannerError` (a value refused, a row renamed or deleted meanwhile,
a name taken, a version conflict), an :class:`sqlalchemy.exc.SQLAlchemyError` (the database
unreachable, read-only, full or locked) and an :class:`OSError` (a file that cannot be written,
a socket closed). Those are shown in the status line or a notification, with the database's
or the system's words, and the UI carries on. Anything else is a bug: it is not caught, and
reaches Textual's error screen with its traceback (DEVELOPERS.md: "anything else is a bug").
"""

from __future__ import annotations

from planner.core.errors import PlannerError


def work_failures() -> tuple[type[Exception], ...]:
    """The exceptions a worker of the UI catches: (PlannerError, SQLAlchemyError, OSError).

    Written as ``except work_failures() as exc:``: Python evaluates an ``except`` clause's
    expression only when an exception reaches it, so SQLAlchemy is imported here only after
    a failure (the workspace has loaded it by then), and the UI's start-up stays free of it."""
    from sqlalchemy.exc import SQLAlchemyError

    return (PlannerError, SQLAlchemyError, OSError)
