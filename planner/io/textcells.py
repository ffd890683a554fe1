"""Text a user typed, made safe for the cell it goes into: never code, always read back as typed.

Two small rules, each one function, used by every writer of a CSV or a workbook:

* :func:`csv_text`: a CSV cell that a spreadsheet would run as a formula (it starts with
  ``=``, ``+``, ``-``, ``@``, a tab, CR or LF, also after leading blanks or a byte-order mark)
  gets a leading single quote, per the OWASP guidance on CSV injection
  (https://owasp.org/www-community/attacks/CSV_Injection); the CSV writer quotes every text
  cell (:data:`CSV_QUOTING`), so numbers stay numbers and nothing else changes.
* :func:`ooxml_text`: OOXML reads ``_xHHHH_`` in a cell's text as the character U+HHHH
  (ECMA-376 Part 1, 22.9.2.19 ST_Xstring), so a name typed as ``_x0041_`` would read back as
  ``A``. The underscore that starts such a run is written as ``_x005F_`` (the escape of ``_``),
  as Excel itself does, so the text reads back exactly as typed.
"""

from __future__ import annotations

import csv
import re
from typing import Literal

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
"""First characters that make a spreadsheet read a CSV cell as a formula (OWASP)."""
_BLANKS = " \u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u200b" \
          "\u202f\u205f\u3000\ufeff"
"""Leading characters a spreadsheet may skip before it looks for ``=`` (spaces of every
width, the byte-order mark)."""
CSV_QUOTING: Literal[2] = csv.QUOTE_NONNUMERIC
"""How the planner's CSV files quote: every text cell in double quotes, numbers bare."""
_ESCAPE_START = re.compile(r"_(?=x[0-9A-Fa-f]{4}_)")


def formula_like(text: str) -> bool:
    """Whether a spreadsheet could read ``text`` as a formula: it starts with one of
    :data:`FORMULA_STARTS`, directly or after leading blanks or a byte-order mark."""
    return text.startswith(FORMULA_STARTS) or text.lstrip(_BLANKS).startswith(FORMULA_STARTS)


def csv_text(value: object) -> object:
    """``value`` as a CSV cell: text that :func:`formula_like` judges a formula gets a
    leading ``'``; anything else (numbers, flags, safe text) is returned unchanged."""
    if isinstance(value, str) and formula_like(value):
        return "'" + value
    return value


def ooxml_text(text: str) -> str:
    """``text`` with every ``_`` that starts an ``_xHHHH_`` run written as ``_x005F_``, so
    an OOXML reader decodes it back to ``text`` (``_x0041_`` → ``_x005F_x0041_``)."""
    return _ESCAPE_START.sub("_x005F_", text) if "_x" in text else text
