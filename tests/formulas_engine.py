"""The ``formulas`` package's Excel model, compiling each distinct formula once per sheet.

Why this exists: the package parses and compiles every formula cell on its own, about 10 ms
a cell, and half of the full test run went to it (the Calibration runs sheet alone holds
9,288 formula cells). An exported sheet repeats one formula per column down its rows, row
references shifted: written relative to its own cell (R1C1 style: ``A5`` in row 5 is
``R[0]C1``), row 6's formula is row 5's. :class:`ShiftCompiledModel` compiles the first
cell of each relative form as the package does, and builds every later one from it: the same
compiled function, its inputs renamed to the shifted cells.

A formula the shift could get wrong is compiled as usual: one that calls a function reading
its own position or the sheet around it (ROW, COLUMN, OFFSET, INDIRECT, implicit
intersection, ...), one with whole-column or whole-row ranges, and one whose inputs do not
pair one to one with the template's (two of them coinciding in one cell and not in the
other, or an input the pairing does not name). ``tests/io/test_formulas_engine.py`` checks
that the model computes every cell as the package's own does.
"""

from __future__ import annotations

import collections
import re
from typing import Any

import formulas
from formulas.cell import Cell, wrap_cell_func
from formulas.ranges import Ranges

_STRING = r'"(?:[^"]|"")*"'
_SHEET = r"(?:'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_.]*)!"
_CELL = r"\$?[A-Z]{1,3}\$?[0-9]+"
_REF = re.compile(
    rf"(?P<string>{_STRING})|(?<![A-Za-z0-9_.$'])(?P<ref>(?:{_SHEET})?{_CELL}(?::{_CELL})?)"
    r"(?![A-Za-z0-9_(!])")
_PART = re.compile(r"(\$?)([A-Z]{1,3})(\$?)([0-9]+)")
_WHOLE_LINES = re.compile(r"(?<![A-Za-z0-9_.])\$?(?:[A-Z]{1,3}:\$?[A-Z]{1,3}|[0-9]+:\$?[0-9]+)"
                          r"(?![A-Za-z0-9_(!])")
_POSITIONAL = re.compile(r"\b(?:ROW|ROWS|COLUMN|COLUMNS|OFFSET|INDIRECT|SINGLE|CELL|INFO|"
                         r"ISFORMULA|FORMULATEXT|RAND|RANDBETWEEN|NOW|TODAY)\s*\(|@")


def _column_number(letters: str) -> int:
    number = 0
    for ch in letters:
        number = number * 26 + ord(ch) - 64
    return number


def relative_form(formula: str, row: int, column: int) -> tuple[str, list[str]] | None:
    """``formula`` written relative to its cell at (``row``, ``column``), 1-based, and its
    references in order; None where a shift could change what it computes (module doc)."""
    text = re.sub(_STRING, '""', formula)
    if _POSITIONAL.search(text) or _WHOLE_LINES.search(text):
        return None
    refs: list[str] = []

    def relative(m: re.Match[str]) -> str:
        col_abs, letters, row_abs, digits = m.groups()
        c = f"C{_column_number(letters)}" if col_abs else f"C[{_column_number(letters) - column}]"
        r = f"R{digits}" if row_abs else f"R[{int(digits) - row}]"
        return r + c

    def token(m: re.Match[str]) -> str:
        if m.group("string"):
            return m.group("string")
        ref = m.group("ref")
        refs.append(ref)
        sheet, _, cells = ref.rpartition("!")
        return (sheet + "!" if sheet else "") + _PART.sub(relative, cells)

    return _REF.sub(token, formula), refs


class ShiftCompiledModel(formulas.ExcelModel):  # type: ignore[misc]
    """An ``formulas.ExcelModel`` that compiles one formula per relative form and sheet
    (module doc); loads, calculates and answers as the package's model does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._templates: dict[tuple[str, str, str], tuple[Cell, list[str]]] = {}
        """Per (workbook, sheet, relative form): its first cell, compiled, and the names its
        references resolve to, in the order they appear."""
        self.shifted = 0
        """How many cells were built from a template rather than compiled."""

    def _compile_cell(self, crd: str, val: Any, context: dict[str, Any], check_formula: bool,
                      references: Any) -> Cell:
        form = None
        if check_formula and isinstance(val, str) and val.startswith("=") and "!" not in crd:
            m = _PART.fullmatch(crd)
            if m:
                form = relative_form(val, int(m.group(4)), _column_number(m.group(2)))
        if form is None:
            return formulas.ExcelModel._compile_cell(crd, val, context, check_formula, references)
        relative, refs = form
        key = (context.get("excel", ""), context.get("sheet", ""), relative)
        template = self._templates.get(key)
        if template is not None:
            cell = self._shifted(template, crd, refs, context, references)
            if cell is not None:
                self.shifted += 1
                return cell
        cell = formulas.ExcelModel._compile_cell(crd, val, context, check_formula, references)
        if template is None and cell.func is not None:
            names = [Ranges().push(ref, context=context).ranges[0]["name"] for ref in refs]
            self._templates[key] = (cell, names)
        return cell

    @staticmethod
    def _shifted(template: tuple[Cell, list[str]], crd: str, refs: list[str],
                 context: dict[str, Any], references: Any) -> Cell | None:
        """The cell at ``crd`` built from ``template``'s compiled function, each input renamed
        to the reference in the same place of this cell's formula; None where they do not
        pair one to one."""
        base, base_names = template
        renamed: dict[str, str] = {}
        ranges: dict[str, Ranges] = {}
        for old, new_ref in zip(base_names, refs, strict=True):
            new_range = Ranges().push(new_ref, context=context)
            new = new_range.ranges[0]["name"]
            if renamed.setdefault(old, new) != new:
                return None
            ranges[new] = new_range
        if len(set(renamed.values())) != len(renamed):
            return None
        inputs: collections.OrderedDict[Any, Any] = collections.OrderedDict()
        for k, rng in base.func.inputs.items():
            if isinstance(rng, Ranges) and k not in (references or ()):
                if k not in renamed:
                    return None
                inputs[renamed[k]] = ranges[renamed[k]]
            else:  # a defined name, the dispatcher, a missing reference: not positional
                inputs[k] = rng
        cell = Cell(crd, None, context=context)
        cell.func = wrap_cell_func(base.func.func, cell._args)
        cell.func.inputs = inputs
        cell.update_inputs(references=references)
        return cell
