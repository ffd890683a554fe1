"""Large tables printed as they are produced: plain aligned text, written in chunks, with a
progress bar on stderr.

A rich ``Table`` measures every cell before printing the first line and keeps the whole
rendering in memory, so a 50,000-row sweep took 75 s and a million rows did not finish
(issue 16, item 20). Here each column is formatted once (a value that repeats, such as a
varied input or ``fits``, is formatted once per distinct value), its width is the longest
string (one C-level pass), and rows are joined and written in chunks as they go: time is
linear in the rows and memory is the formatted columns.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import click

CHUNK_ROWS = 20_000
"""Rows joined and written per write call (and per progress-bar step)."""

PROGRESS_MIN_ROWS = 200_000
"""Tables at least this long show a progress bar on stderr (a terminal only): about a second
of printing on this project's 2-core CI machine."""


def format_column(values: Sequence[Any], fmt: Callable[[Any], str]) -> list[str]:
    """``fmt`` of every value, each distinct value formatted once (NaN, which equals nothing,
    is formatted once too)."""
    memo: dict[Any, str] = {}
    nan_text: str | None = None
    out: list[str] = []
    append = out.append
    for v in values:
        text = memo.get(v)
        if text is None:
            if isinstance(v, float) and math.isnan(v):
                if nan_text is None:
                    nan_text = fmt(v)
                text = nan_text
            else:
                text = memo[v] = fmt(v)
        append(text)
    return out


def write_table(title: str, headers: Sequence[str], columns: Sequence[Sequence[str]],
                left: Sequence[bool], *, out: TextIO | None = None,
                progress: bool | None = None) -> None:
    """Print ``columns`` (formatted strings, equal lengths) under ``headers``, each column as
    wide as its longest entry, left- or right-aligned, two spaces apart, in chunks.

    ``progress`` None: a bar on stderr when the table is long and stderr is a terminal."""
    stream = out if out is not None else sys.stdout
    rows = len(columns[0]) if columns else 0
    widths = [max(len(h), max(map(len, c), default=0)) for h, c in zip(headers, columns,
                                                                        strict=True)]
    specs = [f"{{:{'<' if is_left else '>'}{w}}}" for w, is_left in zip(widths, left,
                                                                          strict=True)]
    line = "  ".join(specs)
    stream.write(f"{title}\n")
    stream.write(line.format(*headers).rstrip() + "\n")
    stream.write("  ".join("-" * w for w in widths) + "\n")
    show = progress if progress is not None else (rows >= PROGRESS_MIN_ROWS
                                                  and sys.stderr.isatty())
    bar = (click.progressbar(length=rows, label="printing", file=sys.stderr) if show
           else contextlib.nullcontext())
    with bar as progress_bar:
        fmt = line.format
        for start in range(0, rows, CHUNK_ROWS):
            stop = min(start + CHUNK_ROWS, rows)
            chunk = zip(*(c[start:stop] for c in columns), strict=True)
            stream.write("\n".join(fmt(*cells).rstrip() for cells in chunk) + "\n")
            if progress_bar is not None:
                progress_bar.update(stop - start)
    stream.flush()
