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


def soffice() -> str | None:
    """The LibreOffice binary, if installed."""
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
