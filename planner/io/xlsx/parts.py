"""The small parts of an .xlsx workbook, each read bounded: which worksheet part holds
each sheet (``xl/workbook.xml`` and its relationships), the shared string table, the cell
styles that show a date; with the cell-level helpers the streaming reader
(:mod:`planner.io.xlsx.stream`) shares (column letters, XML unescaping, rich text) and what
it refuses (:class:`SheetRefused`) or keeps aside (:class:`Marked`). Its own module so the
row streaming reads as one loop.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

CHUNK_BYTES = 1 << 20
"""Bytes of compressed-then-inflated XML read at a time."""

_TEXT = re.compile(r"<(?:\w+:)?t(?:\s[^>]*)?>([^<]*)</(?:\w+:)?t>")
_PHONETIC = re.compile(r"<(?:\w+:)?rPh\b.*?</(?:\w+:)?rPh>", re.S)
_SI = re.compile(r"<(?:\w+:)?si>(.*?)</(?:\w+:)?si>|<(?:\w+:)?si/>", re.S)
_ENTITY = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);")
_OOXML_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


class SheetRefused(Exception):
    """The sheet is outside the bounds the reader accepts; ``cell`` names where (``A1``
    style) when one cell is the reason, ``what`` says what is wrong."""

    def __init__(self, what: str, cell: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.cell = cell


@dataclass(frozen=True, slots=True)
class Marked:
    """A cell that is neither text, a number nor a flag the planner reads: ``kind`` is
    ``"date"`` (a number styled as a date or time), ``"error"`` (an error value such as
    ``#DIV/0!``) or ``"nan"`` (a number that is not finite); ``text`` is what it holds."""

    kind: str
    text: str

    def reason(self) -> str:
        """Why the cell is refused, for a message naming the cell."""
        if self.kind == "date":
            return (f"is a date or time cell (serial {self.text}); type the number as a plain "
                    "number, not formatted as a date")
        if self.kind == "error":
            return f"is the error value {self.text}; type a value"
        return f"is {self.text}, not a finite number"

    def __str__(self) -> str:
        return self.text


BUILTIN_DATE_FORMATS = frozenset({*range(14, 23), *range(27, 37), *range(45, 48),
                                  *range(50, 59)})
"""Built-in number format ids that show a date or time (ECMA-376 Part 1, 18.8.30, with the
East Asian ids 27-36 and 50-58)."""
_NUMFMT = re.compile(r'<(?:\w+:)?numFmt\b[^>]*?numFmtId="(\d+)"[^>]*?formatCode="([^"]*)"')
_CELLXFS = re.compile(r"<(?:\w+:)?cellXfs\b[^>]*>(.*?)</(?:\w+:)?cellXfs>", re.S)
_XF = re.compile(r"<(?:\w+:)?xf\b([^>]*)")
_NUMFMT_ID = re.compile(r'\bnumFmtId="(\d+)"')
MAX_STYLES_BYTES = 64 << 20
"""Largest uncompressed styles part read."""


def is_date_format(code: str) -> bool:
    """Whether number format ``code`` shows a date or time: a ``d``, ``m``, ``y``, ``h`` or
    ``s`` outside quoted text, escapes and ``[...]`` sections (colours, conditions)."""
    code = re.sub(r'"[^"]*"|\\.|_.|\*.', "", unescape(code))
    code = re.sub(r"\[(?![hms]+\])[^\]]*\]", "", code, flags=re.I)
    return re.search(r"[dmyhs]", code, re.I) is not None and code.lower() != "general"


def date_styles(z: zipfile.ZipFile, max_bytes: int = MAX_STYLES_BYTES) -> frozenset[int]:
    """Indexes of the cell styles (``s=``) whose number format shows a date or time, from
    ``xl/styles.xml`` (none if it is missing or larger than ``max_bytes``)."""
    xml = _styles_xml(z, max_bytes)
    if xml is None:
        return frozenset()
    custom = {int(i) for i, code in _NUMFMT.findall(xml) if is_date_format(code)}
    xfs = _CELLXFS.search(xml)
    if xfs is None:
        return frozenset()
    out = set()
    for index, attrs in enumerate(_XF.findall(xfs.group(1))):
        m = _NUMFMT_ID.search(attrs)
        fmt = int(m.group(1)) if m else 0
        if fmt in BUILTIN_DATE_FORMATS or fmt in custom:
            out.add(index)
    return frozenset(out)


def _styles_xml(z: zipfile.ZipFile, max_bytes: int) -> str | None:
    """The text of ``xl/styles.xml``; ``None`` if it is missing or larger than ``max_bytes``."""
    names = set(z.namelist())
    if "xl/styles.xml" not in names or z.getinfo("xl/styles.xml").file_size > max_bytes:
        return None
    with z.open("xl/styles.xml") as fh:
        xml = fh.read(max_bytes + 1).decode("utf-8", "replace")
    if len(xml) > max_bytes:
        return None
    return xml


def column_number(letters: str) -> int:
    """``"A"`` → 1, ``"JU"`` → 281."""
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def column_letters(number: int) -> str:
    """1 → ``"A"``, 281 → ``"JU"``."""
    out = ""
    while number:
        number, rest = divmod(number - 1, 26)
        out = chr(65 + rest) + out
    return out


def unescape(text: str) -> str:
    """XML character and entity references replaced by their characters."""
    if "&" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        ref = m.group(1)
        if ref.startswith("#x"):
            return chr(int(ref[2:], 16))
        if ref.startswith("#"):
            return chr(int(ref[1:]))
        return _NAMED[ref]
    return _ENTITY.sub(one, text)


def rich_text(xml: str) -> str:
    """The text of an ``<is>`` or ``<si>`` element: its ``<t>`` runs, phonetic runs left out,
    and ``_xHHHH_`` escapes (how Excel writes a control character such as CR) decoded."""
    if "<rPh" in xml or ":rPh" in xml:
        xml = _PHONETIC.sub("", xml)
    text = unescape("".join(_TEXT.findall(xml)))
    if "_x" in text:
        text = _OOXML_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return text


MAX_PART_BYTES = 16 << 20
"""Largest workbook.xml or its relationships part read (a workbook of 1,000 sheets needs
about 100 KiB)."""
_SHEET = re.compile(r"<(?:\w+:)?sheet\b([^>]*?)/?>")
_RELATIONSHIP = re.compile(r"<(?:\w+:)?Relationship\b([^>]*?)/?>")
_ATTR = re.compile(r'([\w:]+)="([^"]*)"')


def small_part(z: zipfile.ZipFile, name: str, max_bytes: int = MAX_PART_BYTES) -> str:
    """The text of part ``name`` of ``z``; :class:`SheetRefused` if it is missing or larger
    than ``max_bytes`` uncompressed (checked as it is read, whatever the zip header says)."""
    try:
        with z.open(name) as fh:
            data = fh.read(max_bytes + 1)
    except KeyError:
        raise SheetRefused(f"has no {name} part (not an .xlsx workbook)") from None
    if len(data) > max_bytes:
        raise SheetRefused(f"has a {name} larger than {max_bytes >> 20} MiB uncompressed")
    return data.decode("utf-8", "replace")


def sheet_parts(z: zipfile.ZipFile) -> dict[str, str]:
    """The worksheet part of each sheet, by sheet name, in the workbook's order (from
    ``xl/workbook.xml`` and its relationships, each read bounded by :func:`small_part`)."""
    workbook = small_part(z, "xl/workbook.xml")
    targets = _relationship_targets(small_part(z, "xl/_rels/workbook.xml.rels"))
    out: dict[str, str] = {}
    for attrs in _SHEET.findall(workbook):
        a = dict(_ATTR.findall(attrs))
        rid = a.get("r:id") or next((v for k, v in a.items() if k.endswith(":id")), None)
        if "name" not in a or rid not in targets:
            continue
        out[unescape(a["name"])] = _part_name(targets[rid])
    return out


def _relationship_targets(rels: str) -> dict[str, str]:
    """The target of each relationship of a relationships part, by its ``Id``."""
    targets = {}
    for attrs in _RELATIONSHIP.findall(rels):
        a = dict(_ATTR.findall(attrs))
        if "Id" in a and "Target" in a:
            targets[a["Id"]] = unescape(a["Target"])
    return targets


def _part_name(target: str) -> str:
    """A workbook relationship's target as a part name (absolute, or under ``xl/``)."""
    return target.lstrip("/") if target.startswith("/") else f"xl/{target}"


def shared_strings(z: zipfile.ZipFile, max_bytes: int, too_big: Callable[[], Exception]
                   ) -> list[str]:
    """The workbook's shared string table (empty if it has none), refusing (``too_big()``)
    a table larger than ``max_bytes`` uncompressed before reading it whole."""
    if "xl/sharedStrings.xml" not in set(z.namelist()):
        return []
    parts = []
    total = 0
    with z.open("xl/sharedStrings.xml") as fh:
        while chunk := fh.read(CHUNK_BYTES):
            total += len(chunk)
            if total > max_bytes:
                raise too_big()
            parts.append(chunk)
    xml = b"".join(parts).decode("utf-8", "replace")
    return [rich_text(m.group(1)) if m.group(1) is not None else "" for m in _SI.finditer(xml)]


_VALUE = re.compile(r"<(?:\w+:)?v>([^<]*)</(?:\w+:)?v>")
_CONSTANT_FLAG = re.compile(r"<(?:\w+:)?f(?:\s[^>]*)?>\s*=?\s*(TRUE|FALSE)\s*(?:\(\s*\))?\s*"
                            r"</(?:\w+:)?f>", re.I)


class Decoder:
    """Decodes (type attribute, cell content) pairs into number, text code, formula and
    non-empty flags, each distinct pair once."""

    def __init__(self, strings: list[str]) -> None:
        self.texts: list[Any] = [False, True]
        self.strings = strings
        self.shared_at: dict[int, int] = {}
        self.text_at: dict[str, int] = {}

    def text(self, value: str) -> int:
        code = self.text_at.get(value)
        if code is None:
            code = self.text_at[value] = len(self.texts)
            self.texts.append(value)
        return code

    def mark(self, kind: str, text: str) -> int:
        """The text code of a :class:`Marked` cell."""
        return self.text(Marked(kind, text))  # type: ignore[arg-type]

    def decode(self, kind: str, content: str) -> tuple[float, int, bool, bool]:
        """(number or NaN, text code or -1, formula, non-empty) of one cell. ``kind`` is the
        cell's ``t=`` type, or ``"date"`` for a number whose style shows a date."""
        formula = "<f" in content or (":f" in content
                                      and re.search(r"<\w+:f\b", content) is not None)
        if formula and (flag := _CONSTANT_FLAG.search(content)) is not None:
            return np.nan, int(flag.group(1).upper() == "TRUE"), False, True  # =TRUE()
        m = _VALUE.search(content)
        raw = m.group(1) if m else None
        if kind == "inlineStr":
            text = rich_text(content)
            return np.nan, self.text(text), formula, formula or bool(text.strip())
        if raw is None:
            return np.nan, -1, formula, formula
        return self._typed(kind, raw, formula)

    def _typed(self, kind: str, raw: str, formula: bool) -> tuple[float, int, bool, bool]:
        """:meth:`decode` of a cell with a value ``raw`` (its ``<v>`` text), by ``kind``:
        a shared string, a boolean, an error, an ISO date, a formula's text, else a number
        (a NaN or infinity, or a number styled as a date, marked; text that is no number as
        text)."""
        typed = _TYPED.get(kind)
        if typed is not None:
            return typed(self, raw, formula)
        return self._number(kind, raw, formula)

    def _text_cell(self, text: str, formula: bool) -> tuple[float, int, bool, bool]:
        """A text cell: non-empty when a formula or not blank."""
        return np.nan, self.text(text), formula, formula or bool(text.strip())

    def _shared(self, raw: str, formula: bool) -> tuple[float, int, bool, bool]:
        """A shared string cell (an index past the table as a ``#REF`` text)."""
        try:
            text = self.strings[int(raw)]
        except (ValueError, IndexError):
            text = f"#REF (shared string {raw})"
        return self._text_cell(text, formula)

    def _flag(self, raw: str, formula: bool) -> tuple[float, int, bool, bool]:
        """A boolean cell."""
        return np.nan, 1 if raw.strip() in ("1", "true") else 0, formula, True

    def _error(self, raw: str, formula: bool) -> tuple[float, int, bool, bool]:
        """An error value cell, marked."""
        return np.nan, self.mark("error", unescape(raw).strip()), formula, True

    def _iso_date(self, raw: str, formula: bool) -> tuple[float, int, bool, bool]:
        """An ISO 8601 date cell, marked."""
        return np.nan, self.mark("date", unescape(raw).strip()), formula, True

    def _formula_text(self, raw: str, formula: bool) -> tuple[float, int, bool, bool]:
        """A formula's text result."""
        return self._text_cell(unescape(raw), formula)

    def _number(self, kind: str, raw: str, formula: bool) -> tuple[float, int, bool, bool]:
        """A number cell (a NaN or infinity, or one styled as a date, marked; text that is no
        number as text)."""
        try:
            number = float(raw)
        except ValueError:
            return self._text_cell(unescape(raw), formula)
        if not np.isfinite(number):
            return np.nan, self.mark("nan", raw.strip()), formula, True
        if kind == "date":
            return np.nan, self.mark("date", raw.strip()), formula, True
        return number, -1, formula, True


_TYPED: dict[str, Callable[[Decoder, str, bool], tuple[float, int, bool, bool]]] = {
    "s": Decoder._shared, "b": Decoder._flag, "e": Decoder._error, "d": Decoder._iso_date,
    "str": Decoder._formula_text}
"""The decoder of each cell type whose value is not a number (a ``t=`` of none, ``"n"`` or
``"date"`` is one)."""
