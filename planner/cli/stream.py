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
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO

import click

CHUNK_ROWS = 20_000
"""Rows joined and written per write call (and per progress-bar step)."""

PROGRESS_MIN_ROWS = 200_000
"""Tables at least this long show a progress bar on stderr (a terminal only): about a second
of printing on this project's 2-core CI machine."""

JSON_CHUNK_ROWS = 10_000
"""Rows of a table turned into JSON records at a time (a sweep's ``--json``)."""

PROGRESS_MIN_JSON_ITEMS = 20_000
"""JSON lists at least this long show a progress bar on stderr (a terminal only): about a
second of writing scenario records."""


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
    widths = [max(len(h), max(map(len, c), default=0)) for h, c in zip(headers, columns,
                                                                        strict=True)]
    specs = [f"{{:{'<' if is_left else '>'}{w}}}" for w, is_left in zip(widths, left,
                                                                          strict=True)]
    line = "  ".join(specs)
    stream.write(f"{title}\n")
    stream.write(line.format(*headers).rstrip() + "\n")
    stream.write("  ".join("-" * w for w in widths) + "\n")
    _write_rows(stream, columns, progress, _plain_lines(line))
    stream.flush()


def _plain_lines(line: str) -> Callable[[Iterable[Any]], str]:
    """The function that writes rows of cells as :func:`write_table`'s lines: ``line``
    formatted with each row's cells, trailing spaces stripped."""
    fmt = line.format

    def lines(chunk: Iterable[Any]) -> str:
        """The rows of ``chunk`` as lines."""
        return "\n".join(fmt(*cells).rstrip() for cells in chunk)
    return lines


def _write_rows(stream: TextIO, columns: Sequence[Sequence[str]], progress: bool | None,
                lines: Callable[[Iterable[Any]], str]) -> None:
    """Write the rows of ``columns`` as ``lines`` joins them, :data:`CHUNK_ROWS` at a time,
    with a progress bar on stderr as :func:`progress_context` decides."""
    rows = len(columns[0]) if columns else 0
    bar = progress_context(progress, rows, PROGRESS_MIN_ROWS, "printing")
    with bar as progress_bar:
        for start in range(0, rows, CHUNK_ROWS):
            stop = min(start + CHUNK_ROWS, rows)
            stream.write(lines(zip(*(c[start:stop] for c in columns), strict=True)) + "\n")
            if progress_bar is not None:
                progress_bar.update(stop - start)


def _pad(text: str, width: int, is_left: bool, measure: Callable[[str], int]) -> str:
    gap = width - measure(text)
    return text + " " * gap if is_left else " " * gap + text


def progress_context(progress: bool | None, total: int, minimum: int, label: str) -> Any:
    """A progress bar of ``total`` steps on stderr as a context manager, or a null context:
    shown when ``progress`` says so, else (``None``) when ``total`` is at least ``minimum``
    and stderr is a terminal."""
    show = progress if progress is not None else (total >= minimum and sys.stderr.isatty())
    return (click.progressbar(length=total, label=label, file=sys.stderr) if show
            else contextlib.nullcontext())


def write_box_table(title: str, headers: Sequence[str], columns: Sequence[Sequence[str]],
                    left: Sequence[bool], *, out: TextIO | None = None,
                    progress: bool | None = None, wide: Sequence[bool] | None = None) -> None:
    """Print ``columns`` (formatted strings) as rich prints a default ``Table`` on a console
    wide enough for it, with no colour: the title centred over the table, a heavy header box,
    light rows, each column as wide as its longest entry (in terminal cells) plus one space of
    padding either side. The same text, written in chunks as it goes.

    ``wide``: per column, whether it may hold text wider than one cell per character (user
    text, measured with rich's ``cell_len``); the others are measured with ``len``."""
    stream = out if out is not None else sys.stdout
    measures = _measures(len(columns), wide)
    widths = [max(measure(h), max(map(measure, c), default=0))
              for h, c, measure in zip(headers, columns, measures, strict=True)]
    total = sum(widths) + 3 * len(widths) + 1
    excess = max(total - len(title), 0)
    stream.write(" " * (excess // 2) + title + " " * (excess - excess // 2) + "\n")
    stream.write("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓\n")
    stream.write("┃ " + " ┃ ".join(_pad(h, w, is_left, len) for h, w, is_left in
                                   zip(headers, widths, left, strict=True)) + " ┃\n")
    stream.write("┡" + "╇".join("━" * (w + 2) for w in widths) + "┩\n")
    _write_rows(stream, columns, progress, _box_lines(widths, left, measures))
    stream.write("└" + "┴".join("─" * (w + 2) for w in widths) + "┘\n")
    stream.flush()


def _measures(count: int, wide: Sequence[bool] | None) -> list[Callable[[str], int]]:
    """Per column, how its text's width is measured: rich's ``cell_len`` for a column of user
    text (``wide``), else ``len``."""
    if wide is None or not any(wide):
        return [len] * count
    # lazy: rich's cell widths, only for columns of user text
    from rich.cells import cell_len

    return [cell_len if w else len for w in wide]


def _box_lines(widths: list[int], left: Sequence[bool],
               measures: list[Callable[[str], int]]) -> Callable[[Iterable[Any]], str]:
    """The function that writes rows of cells as the table's light-ruled body lines: one
    ``str.format`` per row when every width is ``len``, padding by cell width otherwise."""
    if all(m is len for m in measures):
        specs = [f"{{:{'<' if is_left else '>'}{w}}}" for w, is_left in zip(widths, left,
                                                                              strict=True)]
        line = "│ " + " │ ".join(specs) + " │"
        return lambda chunk: "\n".join(line.format(*cells) for cells in chunk)
    return lambda chunk: "\n".join(
        "│ " + " │ ".join(_pad(t, w, is_left, m) for t, w, is_left, m in
                         zip(cells, widths, left, measures, strict=True)) + " │"
        for cells in chunk)


def write_json_list(items: Iterable[Any], count: int, *, out: TextIO | None = None,
                    progress: bool | None = None, chunk_items: int = 1_000) -> None:
    """Print the ``count`` ``items`` as one JSON list, exactly the text of
    ``json_text(list(items))`` (:func:`planner.cli.common.json_text`: indented by two, NaN and
    infinities as null), but written as the items are produced: memory is one chunk of items."""
    stream = out if out is not None else sys.stdout
    if count == 0:
        stream.write("[]\n")
        stream.flush()
        return
    bar = progress_context(progress, count, PROGRESS_MIN_JSON_ITEMS, "writing JSON")
    stream.write("[\n")
    with bar as progress_bar:
        written = _write_json_chunks(stream, items, count, chunk_items, progress_bar)
    if written != count:
        raise ValueError(f"write_json_list: {written} items, {count} announced")
    stream.write("\n]\n")
    stream.flush()


def _write_json_chunks(stream: TextIO, items: Iterable[Any], count: int, chunk_items: int,
                       progress_bar: Any) -> int:
    """Write the JSON texts of ``items`` a chunk at a time, a comma after each chunk but the
    last (or the ``count``-th item's); the number of items written."""
    written = 0
    for chunk, at_end in _chunks(items, chunk_items):
        written += len(chunk)
        stream.write(",\n".join("  " + text for text in _encode_items(chunk))
                     + (",\n" if not at_end and written < count else ""))
        if progress_bar is not None:
            progress_bar.update(len(chunk))
    return written


def _chunks(items: Iterable[Any], size: int) -> Iterator[tuple[list[Any], bool]]:
    """``items`` in lists of ``size`` as they are produced, each with whether the items ended
    there (only a last, shorter list; never an empty one)."""
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk, False
            chunk = []
    if chunk:
        yield chunk, True


def _encode_items(chunk: list[Any]) -> list[str]:
    """The JSON text of each item of ``chunk`` nested one level in a list: records (dicts)
    a column at a time, anything else one at a time."""
    # lazy: the CLI's JSON rules (a cycle at module level: common imports nothing from here)
    from planner.cli.common import json_records_fast, json_text_fast

    if all(type(item) is dict for item in chunk):
        return json_records_fast(chunk, "  ")
    return [json_text_fast(item).replace("\n", "\n  ") for item in chunk]
