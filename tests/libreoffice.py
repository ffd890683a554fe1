"""Recalculate a workbook in LibreOffice headless (an engine independent of the planner).

A throwaway user profile sets Calc to recalculate OOXML files on load, so the cached values in
the converted copy are LibreOffice's own results, not the (absent) ones the planner wrote.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
  xmlns:xs="http://www.w3.org/2001/XMLSchema"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


marked: bool | None = None
"""Whether the running test carries ``@pytest.mark.libreoffice`` (set before each test by
:mod:`tests.services`; None outside a test run)."""


def soffice() -> str | None:
    """The LibreOffice binary, if installed. Refused in a test not marked ``libreoffice``, so
    that the marker (and a run that leaves it out) names every test that needs LibreOffice."""
    if marked is False:
        raise AssertionError("this test runs LibreOffice: mark it @pytest.mark.libreoffice "
                             "(tests/services.py skips it where LibreOffice is missing)")
    return shutil.which("soffice") or shutil.which("libreoffice")


def recalculate(path: Path, workdir: Path) -> Path:
    """A copy of ``path`` recalculated and saved by LibreOffice; returns its path."""
    exe = soffice()
    if exe is None:
        raise RuntimeError("LibreOffice is not installed (.ci/run installs libreoffice-calc)")
    profile = workdir / "lo-profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(PROFILE)
    out = workdir / "recalculated"
    out.mkdir(exist_ok=True)
    proc = subprocess.run(
        [exe, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore",
         "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", str(out), str(path)],
        capture_output=True, text=True, timeout=600)
    result = out / path.name
    if proc.returncode != 0 or not result.exists():
        raise RuntimeError(f"LibreOffice failed ({proc.returncode}): {proc.stderr or proc.stdout}")
    return result


def sheet_pdf(path: Path, workdir: Path, sheet_index: int = 0) -> Path:
    """LibreOffice's PDF of one sheet of ``path`` (by position; the Summary is 0).

    LibreOffice prints every sheet into one PDF, hidden ones too, and leaves out empty pages.
    So a copy is printed in which every other sheet's print area is one empty cell
    (``$XFD$1048576``): those sheets print nothing, and the PDF's pages are the sheet's own,
    laid out by its own print setup. Needs the workbook to set a print area on every sheet
    (the planner's does)."""
    import re
    import zipfile

    exe = soffice()
    if exe is None:
        raise RuntimeError("LibreOffice is not installed (.ci/run installs libreoffice-calc)")
    workdir.mkdir(parents=True, exist_ok=True)
    copy = workdir / path.name
    others = re.compile(r'(<definedName name="_xlnm.Print_Area" localSheetId="(\d+)">[^!<]*!)'
                        r"[^<]*<")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "xl/workbook.xml":
                data = others.sub(lambda m: m.group(0) if int(m.group(2)) == sheet_index
                                  else m.group(1) + "$XFD$1048576<", data.decode()).encode()
            dst.writestr(item, data)
    profile = workdir / "lo-profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [exe, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore",
         "--convert-to", "pdf", "--outdir", str(workdir / "pdf"), str(copy)],
        capture_output=True, text=True, timeout=600)
    result = workdir / "pdf" / (copy.stem + ".pdf")
    if proc.returncode != 0 or not result.exists():
        raise RuntimeError(f"LibreOffice failed ({proc.returncode}): {proc.stderr or proc.stdout}")
    return result
