"""Open a file a user names: only a regular file, only up to a size bound, refused by name.

Every reader of a user's file (config.json, workbooks, CSV, Parquet, benchmark results) goes
through :func:`open_regular` or :func:`read_regular`. Opening a FIFO for reading waits for a
writer forever, a device such as ``/dev/zero`` or ``/dev/urandom`` never ends, and a folder or
socket is not data: so the file is opened without blocking (``O_NONBLOCK``), its kind and size
are read from the open descriptor (``fstat``, no race with a rename), and anything but a
regular file no larger than the caller's bound is refused with one line naming the file and
what it is, before a byte is read. Readers that take a path (zip, pandas, pyarrow) are handed
the opened file object instead, so they read what was checked.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from planner.core.errors import PlannerError


class FileRefused(PlannerError):
    """A file the planner will not read; ``reason`` says why (without the path)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def size_text(n_bytes: int) -> str:
    """A byte bound in words: ``4 MiB``, ``2 GiB`` (binary units, as the limits are set)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n_bytes >= 1 << shift and n_bytes % (1 << shift) == 0:
            return f"{n_bytes >> shift:,} {unit}"
    return f"{n_bytes:,} bytes"


def open_regular(path: Path | str, max_bytes: int, what: str = "file") -> BinaryIO:
    """``path`` opened for binary reading when it is a regular file of at most ``max_bytes``;
    else :class:`FileRefused` naming it (missing, a folder, a FIFO, a device, a socket,
    unreadable, or larger than the bound, which ``what`` names: "a config.json is ...")."""
    p = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        raise FileRefused(p, "cannot be read: no such file") from None
    except PermissionError:
        raise FileRefused(p, "cannot be read (permission denied)") from None
    except OSError as exc:  # a socket (ENXIO), a name too long, a loop of links, …
        raise FileRefused(p, f"cannot be opened ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(p, f"is {_kind(info.st_mode)}, not a regular file; give the "
                                 f"{what} itself")
        if info.st_size > max_bytes:
            raise FileRefused(p, f"is {info.st_size:,} bytes, larger than the "
                                 f"{size_text(max_bytes)} a {what} may be")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of regular file ``path`` (:func:`open_regular`); at most ``max_bytes + 1``
    are read, so a file that grows past the bound while it is read is refused too."""
    with open_regular(path, max_bytes, what) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise FileRefused(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise FileRefused(path, f"is larger than the {size_text(max_bytes)} a {what} may be")
    return data
