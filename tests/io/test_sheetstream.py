"""The streamed sheet reader behind the workbook import (issue 14 item 2): the cells of the
kept columns whatever their encoding (numbers, shared and inline strings, flags, formulas,
entities, attributes in any order), rows up to Excel's last, and refusals naming the cell
outside the layout."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from planner.io.xlsx.parts import SheetRefused, shared_strings
from planner.io.xlsx.stream import read_columns

SST = ('<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="3" '
       'uniqueCount="3"><si><t>shared name</t></si><si><r><t>rich </t></r><r><t>text</t></r>'
       '<rPh><t>phonetic</t></rPh></si><si><t>a_x000D_b _x005F_x000D_</t></si></sst>')


def _sheet(tmp_path: Path, rows: str, dimension: str = "A1:D3") -> tuple[zipfile.ZipFile, str]:
    xml = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
           f'openxmlformats.org/spreadsheetml/2006/main"><dimension ref="{dimension}"/>'
           f'<sheetData>{rows}</sheetData></worksheet>')
    path = tmp_path / "s.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("xl/worksheets/sheet1.xml", xml)
        z.writestr("xl/sharedStrings.xml", SST)
    return zipfile.ZipFile(path), "xl/worksheets/sheet1.xml"


HEADER = ('<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c>'
          '<c r="B1" t="s"><v>0</v></c><c r="C1" t="inlineStr"><is><t>out</t></is></c>'
          '<c r="D1" t="inlineStr"><is><t>flag</t></is></c></row>')


def _read(z: zipfile.ZipFile, member: str, **kw: int) -> object:
    strings = shared_strings(z, 1 << 20, lambda: AssertionError("too big"))
    return read_columns(z, member, keep=kw.get("keep", [1, 2, 4]), width=kw.get("width", 4),
                        max_rows=kw.get("max_rows", 1_048_575), max_bytes=1 << 30,
                        strings=strings)


def test_every_encoding_of_the_kept_columns_is_read(tmp_path: Path) -> None:
    rows = (HEADER
            + '<row r="2"><c r="A2" s="3"><v>12</v></c><c r="B2" t="s"><v>1</v></c>'
            '<c r="C2"><f>A2*2</f><v>24</v></c><c r="D2" t="b"><v>1</v></c></row>'
            '<row r="3"><c r="A3"/><c r="B3" t="inlineStr"><is><t>  </t></is></c></row>'
            '<row r="5"><c s="1" r="A5"><v>2.5</v></c><c r="B5" t="inlineStr"><is>'
            '<t xml:space="preserve">a &amp; b &lt;c&gt; &#233;</t></is></c>'
            '<c r="D5" t="b"><f>NOT(A5)</f><v>0</v></c></row>'
            '<row r="6"><c r="B6" t="s"><v>2</v></c></row>'
            '<row r="1048576"><c r="B1048576" t="str"><v>last</v></c></row>')
    z, member = _sheet(tmp_path, rows)
    sheet = _read(z, member)
    assert sheet.header == ["id", "shared name", "out", "flag"]
    # row 3 holds only an empty cell and blank text: not a data row; C is not kept
    assert sheet.rows.tolist() == [2, 5, 6, 1_048_576]
    ids, id_formulas = sheet.values(0)
    assert ids.dtype == np.float64 and ids.tolist()[:2] == [12.0, 2.5]
    assert np.isnan(ids.iloc[2]) and np.isnan(ids.iloc[3]) and not id_formulas.any()
    names, _f = sheet.values(1)
    # Excel's _xHHHH_ escapes decoded (_x005F_ is an escaped underscore)
    assert names.tolist() == ["rich text", "a & b <c> é", "a\rb _x000D_", "last"]
    flags, flag_formulas = sheet.values(3)
    assert flags.tolist() == [True, False, None, None]
    assert flag_formulas.tolist() == [False, True, False, False]
    with pytest.raises(KeyError):
        sheet.values(2)  # column C was not kept


def test_a_cell_beyond_the_layout_is_refused_by_name(tmp_path: Path) -> None:
    far = HEADER + '<row r="7"><c r="A7"><v>1</v></c><c r="XFD7"><v>1</v></c></row>'
    z, member = _sheet(tmp_path, far)
    with pytest.raises(SheetRefused) as caught:
        _read(z, member)
    assert caught.value.cell == "XFD7"
    z, member = _sheet(tmp_path, HEADER + '<row r="12"><c r="A12"><v>1</v></c></row>')
    with pytest.raises(SheetRefused) as caught:
        _read(z, member, max_rows=10)
    assert caught.value.cell == "A12"
    z, member = _sheet(tmp_path, HEADER, dimension="A1:E3")
    with pytest.raises(SheetRefused) as caught:
        _read(z, member)
    assert caught.value.cell == "E3"


def test_a_cell_without_its_reference_is_refused(tmp_path: Path) -> None:
    z, member = _sheet(tmp_path, HEADER + '<row r="2"><c s="1"><v>1</v></c></row>')
    with pytest.raises(SheetRefused, match="without its r= reference"):
        _read(z, member)
