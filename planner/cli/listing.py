"""``planner scenario list`` written as it is produced: the table and the JSON.

The table is the one :func:`planner.cli.render.scenario_list` draws with rich, character for
character when printed to a file or a pipe (:func:`planner.cli.stream.write_box_table`), but
each column is formatted once over the fleet's evaluated arrays (a value that repeats is
formatted once) and the rows are written in chunks, so a 100,000-scenario fleet costs about
what its ``--json`` costs instead of rich measuring and holding every cell (issue 14, item 2).
On a terminal, a short fleet (at most :data:`RICH_MAX_ROWS` rows per table)
is still drawn by rich, with colour; a table wider than the console is too.

The JSON is the list ``--json`` always printed, byte for byte, written a chunk of scenarios at
a time (:func:`scenario_json`) and encoded a column at a time straight from the evaluated arrays:
no record dict per scenario, a column that holds one value in a chunk (most inputs) encoded
once and folded into the literal text, and each float's text made once per distinct value
(:func:`planner.core.units.float_reprs`; ``float.__repr__`` is most of the cost that remains). At
100,000 scenarios (819 MB of JSON) that took it from 3.1× the table's CPU time to 1.7×.
"""

from __future__ import annotations

import itertools
import sys
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import fields
from json.encoder import encode_basestring_ascii
from operator import attrgetter, itemgetter
from typing import Any, TextIO

import numpy as np

from planner.cli import stream
from planner.cli.common import _NON_FINITE, _encode, _encode_column
from planner.compute import verdict
from planner.compute.fleet import FleetValues, column_values, output_list, record_columns
from planner.compute.outputs import output_columns
from planner.core.units import float_reprs, fmt_bytes_gib, fmt_count, fmt_seconds, fmt_usd
from planner.spec.domain import Scenario

RICH_CONSOLE_WIDTH = 200
"""The width rich draws at when stdout is not a terminal (:data:`planner.cli.render.console`);
a wider table is left to rich, which wraps it the way it always did."""

INFERENCE_HEADERS = ("scenario", "model", "GPU", "GPUs", "batch", "prompt+output tokens",
                     "fits", *verdict.LIST_HEADERS, "idle TTFT", "idle TPOT", "USD/h")
TRAINING_HEADERS = ("scenario", "model", "GPU", "GPUs", "tokens", "trainable params",
                    "FLOPs", "time", "GPU-h", "USD", "memory/GPU", "fits")
RICH_MAX_ROWS = 1_000
"""Tables up to this many rows are drawn by rich on a terminal (the limit sweeps use,
:data:`planner.cli.render.RICH_MAX_ROWS`)."""

_SCENARIO_FIELDS = tuple(f.name for f in fields(Scenario))
"""A scenario record's fields, in the order ``asdict`` gives them."""

TEXT_COLUMNS = 3
"""The first three columns (scenario, model, GPU) hold user text: left-aligned and measured in
terminal cells."""


def _fmt(fn: Callable[[Any], str]) -> Callable[[Sequence[Any]], list[str]]:
    return lambda values: stream.format_column(values, fn)


def _inference_columns(fv: FleetValues, index: list[int], values: Any) -> list[list[str]]:
    rows = [fv.scenarios[i] for i in index]
    out = [[f"{s.fleet}/{s.name}" for s in rows], [s.model for s in rows],
           [s.gpu for s in rows]]
    out.append(_fmt(str)([s.inputs["gpus"] for s in rows]))
    out.append(_fmt(str)([s.inputs["batch"] for s in rows]))
    out.append(_fmt(lambda pair: f"{pair[0]:,}+{pair[1]:,}")(
        [(s.inputs["prompt_tokens"], s.inputs["output_tokens"]) for s in rows]))
    out.append(_fits_column(values))
    out += _verdict_columns(rows, values)
    out.append(_fmt(fmt_seconds)(output_list(values, "ttft_s")))
    out.append(_fmt(fmt_seconds)(output_list(values, "tpot_s")))
    out.append(_fmt(fmt_usd)(output_list(values, "cost_usd_per_hour")))
    return out


def _fits_column(values: Any) -> list[str]:
    """The fits column: yes, or no with the shortfall per GPU when there is one (one
    accounting per engine: the engine's own fits)."""
    fits = output_list(values, "engine_fits")
    shortfall = output_list(values, "shortfall_bytes")
    short = _fmt(fmt_bytes_gib)(shortfall)
    return ["yes" if f else f"no (−{s})" if b > 0 else "no"
            for f, s, b in zip(fits, short, shortfall, strict=True)]


def _verdict_columns(rows: list[Any], values: Any) -> list[list[str]]:
    """The verdict's list columns (:func:`planner.compute.verdict.list_cells`) of ``rows``."""
    names = [n for n in (*verdict.VERDICT, "engine_fits", "fits", "saturated") if n in values]
    columns = {n: output_list(values, n) for n in names}
    cells = [verdict.list_cells({n: columns[n][at] for n in names}, s.inputs)
             for at, s in enumerate(rows)]
    return [list(c) for c in zip(*cells, strict=True)] if cells else [[], [], []]


def _training_columns(fv: FleetValues, index: list[int], values: Any) -> list[list[str]]:
    rows = [fv.scenarios[i] for i in index]
    out = [[f"{s.fleet}/{s.name}" for s in rows], [s.model for s in rows],
           [s.gpu for s in rows]]
    out.append(_fmt(str)([s.inputs["gpus"] for s in rows]))
    out.append(_fmt(lambda v: f"{v:,.0f}")([s.inputs["train_tokens"] for s in rows]))
    out.append(_fmt(fmt_count)(output_list(values, "trainable_params")))
    out.append(_fmt(lambda v: f"{v:.3g}")(output_list(values, "train_flops")))
    out.append(_fmt(fmt_seconds)(output_list(values, "train_time_s")))
    out.append(_fmt(lambda v: f"{v:,.1f}")(output_list(values, "gpu_hours")))
    out.append(_fmt(fmt_usd)(output_list(values, "train_cost_usd")))
    out.append(_fmt(fmt_bytes_gib)(output_list(values, "train_memory_bytes_per_gpu")))
    out.append(["yes" if f else "no" for f in output_list(values, "train_fits")])
    return out


def _width(headers: Sequence[str], columns: Sequence[Sequence[str]]) -> int:
    """The drawn width of a box table (cells measured with ``len``: a lower bound)."""
    return sum(max(len(h), max(map(len, c), default=0)) + 3
               for h, c in zip(headers, columns, strict=True)) + 1


def scenario_table(fv: FleetValues) -> None:
    """Print the inference and the training scenarios of ``fv`` with their headline outputs."""
    tables = _kind_tables(fv)
    if _drawn_by_rich(tables):
        # lazy: loads rich (~39 ms): a short table on a terminal, in colour
        from planner.cli import render

        render.scenario_list(fv.scenarios, list(fv.records()))
        return
    if not fv.scenarios:
        sys.stdout.write("no scenarios\n")
        return
    for title, headers, columns in tables:
        stream.write_box_table(title, headers, columns,
                               [i < TEXT_COLUMNS for i in range(len(headers))],
                               wide=[i < TEXT_COLUMNS for i in range(len(headers))])


_Table = tuple[str, Sequence[str], list[list[str]]]
"""One table of :func:`scenario_table`: its title, headers and formatted columns."""


def _kind_tables(fv: FleetValues) -> list[_Table]:
    """The inference table, then the training table, of the kinds ``fv`` holds."""
    tables: list[_Table] = []
    for kind, title, headers, build in (
            ("inference", "Inference scenarios", INFERENCE_HEADERS, _inference_columns),
            ("training", "Training scenarios", TRAINING_HEADERS, _training_columns)):
        if kind in fv.by_kind:
            index, values = fv.by_kind[kind]
            tables.append((title, headers, build(fv, index, values)))
    return tables


def _drawn_by_rich(tables: list[_Table]) -> bool:
    """Whether rich draws the tables: every one short, and on a terminal or wider than the
    console rich draws at (which rich wraps)."""
    small = all(len(columns[0]) <= RICH_MAX_ROWS for _t, _h, columns in tables)
    too_wide = any(_width(headers, columns) > RICH_CONSOLE_WIDTH
                   for _t, headers, columns in tables)
    return small and (too_wide or sys.stdout.isatty())


JSON_CHUNK_ROWS = 2_000
"""Scenarios encoded and written at a time by :func:`scenario_json` (about 16 MB of text)."""

_Encoded = str | list[str]
"""A column encoded as JSON: one text for every row (a constant column) or one per row."""


def _encode_objects(values: list[Any], indent: str) -> _Encoded:
    """A column of Python values as JSON texts nested at ``indent``; a column holding one value
    of one type (most inputs) is encoded once. A float zero is not taken as constant, since
    ``0.0 == -0.0`` although their texts differ."""
    if not values:
        return []
    first = values[0]
    if (type(first) in (str, int, bool, type(None))
            or (type(first) is float and first != 0.0)) and \
            values.count(first) == len(values) and len(set(map(type, values))) == 1:
        return _encode(first, indent)
    return _encode_column(values, indent)


def _encode_array(name: str, column: Any, indent: str) -> _Encoded:
    """An output column of :func:`planner.compute.fleet.record_columns` as JSON texts: a numeric
    or boolean array in a few C-level passes (the texts are those of the Python values a
    record holds: ``float.__repr__``, ``int.__repr__``, NaN and infinities as ``null``); a
    column that holds one value is encoded once; anything else through :func:`_encode_objects`."""
    if isinstance(column, list):
        return _encode_objects(column, indent)
    kind = column.dtype.kind
    if not len(column) or kind not in "fiub":
        return _encode_objects(column_values(name, column), indent)
    if kind in "fb" and _integer_output(name):
        if kind == "f" and not _int64_exact(column):
            return _encode_objects(column_values(name, column), indent)
        column = column.astype(np.int64)  # int(v) of each: truncation toward zero
        kind = "i"
    return _encode_numbers(column, kind, indent)


def _integer_output(name: str) -> bool:
    """Whether ``name`` is an output whose record value is an ``int``."""
    return name in output_columns() and output_columns()[name].integer


def _int64_exact(column: np.ndarray) -> bool:
    """Whether every float of ``column`` is finite and under 2**62 in size, so that int64
    holds ``int(v)`` of it."""
    return bool(np.isfinite(column).all() and (np.abs(column) < 2.0**62).all())


def _encode_numbers(column: np.ndarray, kind: str, indent: str) -> _Encoded:
    """A non-empty boolean, integer or float array (numpy ``kind``) as JSON texts; one text
    when every value is the same."""
    if kind == "b":
        if (column == column[0]).all():
            return "true" if column[0] else "false"
        return np.where(column, "true", "false").tolist()
    if kind in "iu":
        if (column == column[0]).all():
            return int.__repr__(int(column[0]))
        return list(map(int.__repr__, column.tolist()))
    return _encode_floats(column, indent)


def _encode_floats(column: np.ndarray, indent: str) -> _Encoded:
    """A float array as JSON texts (``float.__repr__`` of each, NaN and infinities as
    ``null``); one text when every value has the same bits."""
    if column.itemsize == 8 and (column.view(np.int64) == column.view(np.int64)[0]).all():
        return _encode(float(column[0]), indent)  # the same bits: the same text
    texts = float_reprs(column)
    if not np.isfinite(column).all():
        texts = ["null" if t in _NON_FINITE else t for t in texts]
    return texts


def _dict_parts(columns: list[tuple[str, _Encoded]], indent: str) -> list[_Encoded]:
    """The parts of a JSON object whose entries are ``columns`` (key, encoded values), nested
    at ``indent``: literal texts and per-row columns, in order."""
    if not columns:
        return ["{}"]
    inner = indent + "  "
    parts: list[_Encoded] = []
    for n, (key, encoded) in enumerate(columns):
        parts.append(("{\n" if n == 0 else ",\n") + inner + encode_basestring_ascii(key)
                     + ": ")
        parts.append(encoded)
    parts.append("\n" + indent + "}")
    return parts


def _records_json(rows: list[Scenario], cols: dict[str, Any]) -> list[str]:
    """The JSON text of each scenario record (its fields, then ``outputs``) of ``rows``,
    nested in the list: built column by column, each column encoded in one pass, constant
    columns folded into the literal text, and each record joined once."""
    merged = _merged(_record_parts(_record_entries(rows, cols)))
    if all(isinstance(part, str) for part in merged):
        return ["".join(merged)] * len(rows)  # type: ignore[arg-type]
    return list(map("".join, zip(*(itertools.repeat(part) if isinstance(part, str) else part
                                   for part in merged), strict=False)))


def _record_entries(rows: list[Scenario], cols: dict[str, Any]
                    ) -> list[tuple[str, list[_Encoded]]]:
    """Each field of the records of ``rows`` with the parts of its encoded values, then
    ``outputs`` (the columns ``cols``)."""
    entries: list[tuple[str, list[_Encoded]]] = []
    for name in _SCENARIO_FIELDS:
        values = list(map(attrgetter(name), rows))
        if name == "inputs":
            entries.append((name, _inputs_parts(values)))
        else:
            entries.append((name, [_encode_objects(values, "    ")]))
    entries.append(("outputs", _dict_parts(
        [(key, _encode_array(key, column, "      ")) for key, column in cols.items()],
        "    ")))
    return entries


def _record_parts(entries: list[tuple[str, list[_Encoded]]]) -> list[_Encoded]:
    """The parts of a record object nested in the list whose entries are ``entries``:
    literal texts and per-row columns, in order."""
    parts: list[_Encoded] = []
    for n, (key, encoded) in enumerate(entries):
        parts.append(("  {\n" if n == 0 else ",\n") + "    " + encode_basestring_ascii(key)
                     + ": ")
        parts.extend(encoded)
    parts.append("\n  }")
    return parts


def _merged(parts: list[_Encoded]) -> list[_Encoded]:
    """``parts`` with each run of adjacent literal texts joined into one."""
    merged: list[_Encoded] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return merged


def _inputs_parts(inputs: list[dict[str, Any]]) -> list[_Encoded]:
    """The parts of the ``inputs`` objects of a chunk: column by column when every row has the
    same text keys (as stored scenarios do), else each dict as a whole."""
    keys = tuple(inputs[0])
    if keys and all(type(k) is str for k in keys) and \
            all(type(d) is dict and tuple(d) == keys for d in inputs):
        return _dict_parts([(key, _encode_objects(list(map(itemgetter(key), inputs)),
                                                  "      ")) for key in keys], "    ")
    return [_encode_objects(inputs, "    ")]


def _masked(rows: list[Scenario], cols: dict[str, Any]) -> dict[str, Any]:
    """``cols`` with the figures that are states ``null``, as ``estimate --json`` and
    ``scenario show --json`` give them (:func:`planner.compute.verdict.json_null_rows`: queue
    latencies of a saturated row, sizing of a row that does not fit or cannot meet its SLO)."""
    target = np.array([float(r.inputs.get("target_requests_per_s") or 0) for r in rows])
    out = dict(cols)
    for name in cols:
        hit = verdict.json_null_rows(name, cols, target)
        if hit is None:
            continue
        values = column_values(name, cols[name])
        out[name] = [None if h else v for v, h in zip(values, hit.tolist(), strict=True)]
    return out


def scenario_json(fv: FleetValues, *, out: TextIO | None = None,
                  progress: bool | None = None, chunk_rows: int = JSON_CHUNK_ROWS) -> None:
    """Print every scenario of ``fv`` with all its outputs as one JSON list, exactly the text
    of :func:`planner.cli.common.json_text` of the records, streamed: ``chunk_rows`` scenarios
    at a time are encoded a column at a time, straight from the evaluated arrays (no record
    dicts, no per-value Python call for a numeric column) and written."""
    stream_out = out if out is not None else sys.stdout
    count = len(fv.scenarios)
    if count == 0:
        stream_out.write("[]\n")
        stream_out.flush()
        return
    bar = stream.progress_context(progress, count, stream.PROGRESS_MIN_JSON_ITEMS,
                                  "writing JSON")
    stream_out.write("[\n")
    with bar as progress_bar:
        for a in range(0, count, chunk_rows):
            b = min(a + chunk_rows, count)
            texts = _chunk_texts(fv, a, b)
            stream_out.write(",\n".join(texts) + (",\n" if b < count else "\n"))
            if progress_bar is not None:
                progress_bar.update(b - a)
    stream_out.write("]\n")
    stream_out.flush()


def _chunk_texts(fv: FleetValues, a: int, b: int) -> list[str]:
    """The JSON text of scenarios ``a:b`` of ``fv``: each kind's rows in the chunk
    evaluated as columns (:func:`planner.compute.fleet.record_columns`; an inference row's
    state figures null) and encoded; a scenario left unevaluated is a ``KeyError``."""
    texts: list[str | None] = [None] * (b - a)
    for kind, (index, _values) in fv.by_kind.items():
        lo, hi = bisect_left(index, a), bisect_left(index, b)
        if lo == hi:
            continue
        rows = [fv.scenarios[i] for i in index[lo:hi]]
        cols = record_columns(fv.scenarios, fv.by_kind, kind, lo, hi, fv.models,
                              fv.gpus, fv.profiles)
        if kind == "inference":
            cols = _masked(rows, cols)
        for i, text in zip(index[lo:hi], _records_json(rows, cols), strict=True):
            texts[i - a] = text
    if None in texts:
        raise KeyError(f"scenario {fv.scenarios[a + texts.index(None)].name!r} "
                       "was not evaluated")
    return texts  # type: ignore[return-value]
