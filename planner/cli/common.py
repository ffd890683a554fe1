"""Pieces every ``planner`` subcommand shares: error handling, scenario flags, JSON, the database.

A :class:`PlannerError` (a user's mistake) becomes ``Error: …`` on stderr and exit status 2;
scenario flags are generated from the input column registry; the database opens lazily, once
per command, from ``--db`` / ``PLANNER_DATABASE_URL`` / the default file.
"""

from __future__ import annotations

import json
import math
import operator
import os
import sys
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from planner.compute.inputs import InputColumn
from planner.compute.validation import refusal_text
from planner.core.errors import PlannerError, ValidationError, echo
from planner.core.settings import database_url

if TYPE_CHECKING:
    from planner.service import Workspace
    from planner.spec.architecture import ModelSpec
    from planner.spec.gpu import GpuSpec

ALIASES = {
    "prompt_tokens": ("--prompt",),
    "output_tokens": ("--output",),
    "weight_dtype": ("--weight-dtype",),
    "kv_dtype": ("--kv-dtype",),
    "train_tokens": ("--tokens",),
    "train_seq_len": ("--seq-len",),
    "micro_batch_size": ("--micro-batch",),
    "lora_rank": ("--lora-rank",),
}


class PlannerGroup(click.Group):
    """Turns :class:`PlannerError` into ``Error: …`` and exit status 2, without a traceback;
    so are a failure of the database itself and of the file system (:func:`os_error`: a name
    too long, a folder not writable, a full disk). Before any command runs, the standard
    streams are made safe to write to (:func:`planner.cli.terminal.prepare`)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # lazy: the stream checks, only in the entry point (not in `import planner.cli`)
        from planner.cli import terminal

        problem = terminal.prepare()
        if problem is not None:
            sys.stderr.write(f"Error: {problem}\n")
            sys.stderr.flush()
            sys.exit(2)
        return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PlannerError as exc:
            click.echo(f"Error: {readable(str(exc))}", err=True)
            ctx.exit(2)
        except Exception as exc:
            known = _database_error(exc, ctx)
            if known is None and isinstance(exc, OSError) and not isinstance(
                    exc, BrokenPipeError):
                known = PlannerError(os_error(exc))
            if known is None:
                raise
            click.echo(f"Error: {readable(str(known))}", err=True)
            ctx.exit(2)


MESSAGE_LINE_MAX_CHARS = 1_000
"""Longest line of an error message printed whole. Messages cut what they echo of a user's
value (:func:`planner.core.errors.echo`); this is the net under any that does not."""


def readable(message: str) -> str:
    """``message`` with each line over :data:`MESSAGE_LINE_MAX_CHARS` cut in the middle."""
    limit = MESSAGE_LINE_MAX_CHARS
    return "\n".join(line if len(line) <= limit else
                     f"{line[:limit - 200]} … {line[-150:]} (a line of {len(line):,} "
                     "characters, cut)" for line in message.split("\n"))


PATH_SHOWN_CHARS = 80
"""Most characters of a path an error shows (its start and its end)."""


def shown_path(path: object) -> str:
    """``path`` as text, its middle cut out when long (``/tmp/aaaa…aaaa.csv (300
    characters)``)."""
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    if len(text) <= PATH_SHOWN_CHARS:
        return text
    half = PATH_SHOWN_CHARS // 2
    return f"{text[:half]}…{text[-half:]} ({len(text):,} characters)"


_OS_ADVICE = {
    "ENAMETOOLONG": "a file or folder name is longer than the system allows (255 bytes a "
                    "name); choose a shorter one",
    "EACCES": "permission denied; choose a place you can write to, or change its permissions",
    "EPERM": "not permitted; choose a place you can write to, or change its permissions",
    "EROFS": "the file system is read-only; choose a writable place",
    "ENOSPC": "the disk is full; free some space and try again",
    "EDQUOT": "the disk quota is used up; free some space and try again",
    "EEXIST": "a file is in the way where a folder should be; move it, or choose another "
              "place",
    "ENOTDIR": "part of the path is a file, not a folder; check the path",
    "EISDIR": "it is a folder, not a file; give a file name",
    "ENOENT": "no such file or folder; check the path",
    "ELOOP": "the path has a loop of symbolic links; check the path",
}
"""What to do about each file-system failure a user can meet (by ``errno`` name)."""


def os_error(exc: OSError) -> str:
    """One line for a file-system failure: which file, what went wrong, what to do. Nothing
    was written (every database write is one transaction; files are written whole)."""
    import errno

    code = errno.errorcode.get(exc.errno or 0, "")
    advice = _OS_ADVICE.get(code) or (exc.strerror or type(exc).__name__)
    where = f" {shown_path(exc.filename)}" if exc.filename is not None else ""
    return f"cannot use{where}: {advice}"


def _database_error(exc: Exception, ctx: click.Context) -> PlannerError | None:
    """A failure of the database itself (damaged, read-only, full disk, not a database) in the
    planner's words; ``None`` for anything else. SQLAlchemy is only consulted when a command
    has loaded it, so ``--help`` and ``estimate`` stay free of it."""
    if "sqlalchemy" not in sys.modules and not isinstance(exc, OSError):
        return None
    # lazy: only after a failure, when the command has already loaded the store
    from planner.store.engine import database_error

    return database_error(exc, database_url(ctx.find_root().ensure_object(dict).get("db")))


class ColumnType(click.ParamType):
    """A click parameter validated by an :class:`InputColumn`."""

    def __init__(self, column: InputColumn) -> None:
        self.column = column
        self.name = column.kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.column.parse(value)
        except ValidationError as exc:
            self.fail(f"{self.column.name} {refusal_text(exc.allowed, value)}", param, ctx)


def _flag_names(column: InputColumn) -> list[str]:
    long = "--" + column.name.replace("_", "-")
    aliases = ALIASES.get(column.name, ())
    return [*aliases, *([long] if long not in aliases else [])]


def column_options(columns: tuple[InputColumn, ...], skip: tuple[str, ...] = (),
                   overrides: Mapping[str, Any] | None = None
                   ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command with one option per input column (default None = column default;
    the help shows ``overrides`` where the command's defaults differ, as training's do)."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        for column in reversed(columns):
            if column.name in skip:
                continue
            default = (overrides or {}).get(column.name, column.default)
            shown = "yes" if default is True else "no" if default is False else default
            help_text = f"{column.help} [{column.unit}; {column.allowed()}; default: {shown}]"
            f = click.option(*_flag_names(column), column.name, type=ColumnType(column),
                             default=None, help=help_text, metavar=column.kind.upper())(f)
        return f

    return decorate


def given(kwargs: dict[str, Any], columns: tuple[InputColumn, ...]) -> dict[str, Any]:
    """The column values a user actually passed."""
    names = {c.name for c in columns}
    return {k: v for k, v in kwargs.items() if k in names and v is not None}


def _finite(data: Any) -> Any:
    """``data`` with every NaN or infinite float (and numpy scalar) replaced by ``None``."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite(v) for v in data]
    return data


def json_text(data: Any) -> str:
    """``data`` as indented, valid JSON: dataclasses and datetimes as strings, NaN and
    infinities as ``null`` (JSON has no ``Infinity``; scripts must be able to parse it)."""
    return json.dumps(_finite(data), indent=2, default=str, allow_nan=False)


def _encode(value: Any, indent: str) -> str:
    """:func:`json_text` of ``value`` nested at ``indent``, by type (see :func:`json_text_fast`)."""
    scalar = _SCALARS.get(type(value))
    if scalar is not None:
        return scalar(value)
    if isinstance(value, dict):
        return _encode_dict(value, indent)
    if isinstance(value, (list, tuple)):
        return _encode_list(value, indent)
    return _encode_other(value)


def _float_text(value: float) -> str:
    """A float's JSON text: ``float.__repr__``, or ``null`` for NaN and infinities."""
    return float.__repr__(value) if math.isfinite(value) else "null"


def _encode_other(value: Any) -> str:
    """:func:`_encode` of a value of no exact JSON type: a float or int subclass (an
    ``IntEnum``) by its value, anything else (a datetime, a Decimal) as its ``str``
    (json_text's ``default=str``)."""
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, int):
        return int.__repr__(value)
    return encode_basestring_ascii(str(value))


_LITERALS = {None: "null", True: "true", False: "false"}
"""JSON's literals, by the Python value (``None`` and the two ``bool``s only)."""

_SCALARS: dict[type, Callable[[Any], str]] = {
    str: encode_basestring_ascii, float: _float_text, int: int.__repr__,
    bool: _LITERALS.__getitem__, type(None): _LITERALS.__getitem__}
"""The encoder of each exact scalar type :func:`_encode` meets (subclasses:
:func:`_encode_other`)."""


def _encode_dict(value: dict[Any, Any], indent: str) -> str:
    """:func:`_encode` of a dict: its entries indented by two under ``indent``; one with a key
    that is not text through the standard encoder (:func:`_json_fallback`)."""
    if not value:
        return "{}"
    inner = indent + "  "
    parts = []
    for key, item in value.items():
        if type(key) is not str:
            return _json_fallback(value, indent)
        parts.append(f"{inner}{encode_basestring_ascii(key)}: {_encode(item, inner)}")
    return "{\n" + ",\n".join(parts) + "\n" + indent + "}"


def _encode_list(value: list[Any] | tuple[Any, ...], indent: str) -> str:
    """:func:`_encode` of a list or tuple: its items indented by two under ``indent``."""
    if not value:
        return "[]"
    inner = indent + "  "
    return ("[\n" + ",\n".join(inner + _encode(item, inner) for item in value) + "\n"
            + indent + "]")


def _json_fallback(value: Any, indent: str) -> str:
    """The standard encoder's text of an unusual value (non-text keys, ``default=str``)."""
    return json_text(value).replace("\n", "\n" + indent)


def json_text_fast(data: Any) -> str:
    """Exactly :func:`json_text` of ``data`` (two-space indent, ASCII, NaN and infinities as
    ``null``, other objects as their ``str``), several times faster on records of scalars:
    the standard library encodes indented JSON in pure Python, after a separate pass that
    replaces non-finite floats (``scenario list --json`` of 100,000 scenarios)."""
    return _encode(data, "")


_NON_FINITE = frozenset({"nan", "inf", "-inf"})
"""``float.__repr__`` of the floats JSON has no literal for (printed as ``null``)."""


def _encode_column(values: list[Any], indent: str) -> list[str]:
    """:func:`_encode` of each value nested at ``indent``; a column of one scalar type (as
    evaluated outputs are) is encoded by one C-level map, a column of dicts with the same keys
    column by column (:func:`json_records_fast`)."""
    kinds = set(map(type, values))
    if kinds == {float}:
        texts = list(map(float.__repr__, values))
        if not _NON_FINITE.isdisjoint(texts):  # one C-level pass; rare
            texts = ["null" if t in _NON_FINITE else t for t in texts]
        return texts
    if kinds == {str}:
        return list(map(encode_basestring_ascii, values))
    if kinds == {int}:
        return list(map(int.__repr__, values))
    if kinds == {dict}:
        return json_records_fast(values, indent)
    return [_encode(v, indent) for v in values]


def json_records_fast(records: list[dict[str, Any]], indent: str = "") -> list[str]:
    """:func:`json_text_fast` of each of ``records`` (dicts), nested at ``indent``: records
    with the same keys are encoded a column at a time, so a chunk of scenario records costs a
    few C-level passes per key instead of a Python call per value."""
    out: list[str] = [""] * len(records)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, record in enumerate(records):
        groups.setdefault(tuple(record), []).append(i)
    for keys, rows in groups.items():
        texts = _encode_group(keys, [records[i] for i in rows], indent)
        for i, text in zip(rows, texts, strict=True):
            out[i] = text
    return out


def _encode_group(keys: tuple[Any, ...], group: list[dict[str, Any]], indent: str
                  ) -> list[str]:
    """:func:`json_records_fast` of records that all have ``keys`` in that order: a column
    at a time when the keys are text, else one record at a time."""
    if not keys:
        return ["{}"] * len(group)
    if any(type(k) is not str for k in keys):
        return [_encode(record, indent) for record in group]
    inner = indent + "  "
    columns = []
    for key in keys:
        prefix = f"{inner}{encode_basestring_ascii(key)}: "
        column = list(map(operator.itemgetter(key), group))
        columns.append(map(prefix.__add__, _encode_column(column, inner)))
    head, tail = "{\n", "\n" + indent + "}"
    return [head + ",\n".join(parts) + tail for parts in zip(*columns, strict=True)]


def emit_json(data: Any) -> None:
    """Print ``data`` as :func:`json_text`."""
    click.echo(json_text(data))


class VersionType(click.ParamType):
    """A row version (``--if-version``): an integer from 1 to 2**62, which every database's
    integer column holds; anything else is refused as a usage error (exit status 2)."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            number = int(str(value).strip())
        except ValueError:
            number = 0
        if not 1 <= number <= 2**62:
            self.fail(f"must be an integer from 1 to {2**62:,} (got {echo(value)})", param, ctx)
        return number


VERSION = VersionType()


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def workspace(ctx: click.Context) -> Workspace:
    """The command's database (opened once; migrated and seeded on first run)."""
    root = ctx.find_root()
    obj = root.ensure_object(dict)
    if obj.get("workspace") is None:
        # lazy: ~26 ms of imports, only when this runs
        from planner.service import Workspace

        ws = Workspace.open(obj.get("db"))
        report = ws.open_report
        if (report and report.seeded and report.revision_before is not None
                and report.revision_before == report.revision):
            click.echo(f"Seeded the catalog of the planner database at {ws.url} "
                       f"({report.seeded.total_added} rows; it had none).", err=True)
        elif report and report.revision_before != report.revision:
            if report.revision_before is None:
                seeded = report.seeded.total_added if report.seeded else 0
                click.echo(f"Created the planner database at {ws.url} "
                           f"(seeded {seeded} catalog rows).", err=True)
            else:
                click.echo(f"Upgraded the planner database from revision "
                           f"{report.revision_before} to {report.revision}.", err=True)
        obj["workspace"] = ws
        root.call_on_close(ws.close)
    return obj["workspace"]


def model_spec(ctx: click.Context, ref: str) -> ModelSpec:
    """A config.json path (file or folder), the name of a model in the database, or a Hub id
    ``org/name[@revision]``: a model imported from it, else its config.json read from the
    Hugging Face cache or the Hub (nothing is saved). A name the database lacks that
    :mod:`planner.service.hub_names` knows (``qwen3-8b``, ``deepseek-v3.2``) is its Hub id."""
    path = Path(ref).expanduser()
    if path.suffix == ".json" or path.exists():
        # lazy: ~13 ms of imports, only when this runs
        from planner.spec import catalog

        return catalog.resolve_model_spec(ref)
    if "/" in ref:
        # lazy: the service layer (~26 ms), only when a Hub id is resolved
        from planner.service import hub

        if not hub.is_hub_id(ref):
            # lazy: ~13 ms of imports, only when this runs
            from planner.spec import catalog

            return catalog.resolve_model_spec(ref)
        try:
            return workspace(ctx).model(ref).spec
        except LookupError:  # not imported: read its config (nothing is saved)
            return hub.fetch_spec(ref)
    stored = _stored(ctx, "model", ref)
    if stored is not None:
        return stored
    try:
        return workspace(ctx).model(ref).spec
    except LookupError:
        # lazy: the name table and the Hub reader (~26 ms), only for a name not stored
        from planner.service import hub, hub_names

        repo = hub_names.hub_id_for(ref)
        if repo is None:
            raise
        try:  # a model imported from that Hub id, else its config.json from the cache
            return workspace(ctx).model(repo).spec
        except LookupError:
            return hub.fetch_spec(repo)


def gpu_spec(ctx: click.Context, name: str) -> GpuSpec:
    """The GPU called ``name`` in the database."""
    return _stored(ctx, "gpu", name) or workspace(ctx).gpu(name).spec


def _stored(ctx: click.Context, kind: str, name: str) -> Any:
    """The spec of model or GPU ``name`` read straight from a SQLite database file, without
    opening the store (:mod:`planner.store.lite`: no SQLAlchemy, no schema check); None when
    the command has opened the database already or it cannot be read that way."""
    obj = ctx.find_root().ensure_object(dict)
    if obj.get("workspace") is not None:
        return None
    # lazy: the standard library's sqlite3 reader, only when a catalog name is looked up
    from planner.store import lite

    url = database_url(obj.get("db"))
    return lite.model_spec(url, name) if kind == "model" else lite.gpu_spec_of(url, name)


def parse_assignments(pairs: tuple[str, ...]) -> dict[str, str]:
    """``field=value`` arguments → dict; a malformed one names itself."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(pair, "must be written field=value")
        out[key.strip()] = value
    return out
