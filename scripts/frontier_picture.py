"""Make docs/img/frontier.png: the throughput-interactivity frontier of Llama-3-70B on vLLM
(the demo fleet's llama3-70b-chat-h100-tp4: TP 4, 2,048+256 tokens, SLO TTFT p99 1 s and
TPOT 50 ms) on H100 SXM and B200, as LibreOffice prints the Excel Frontier sheet and its
chart (the way docs/img/summary.png is made: soffice PDF, then ``pdftoppm -r 110``):

    PLANNER_DATA_DIR=$(mktemp -d) python scripts/frontier_picture.py

It runs ``planner sweep demo/llama3-70b-chat-h100-tp4 --frontier --vary gpu=h100-sxm,b200
--out frontier.xlsx`` on a fresh database, prints the sheet with
:func:`tests.libreoffice.sheet_pdf` and converts its first page.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ARGS = ("sweep", "demo/llama3-70b-chat-h100-tp4", "--frontier", "--vary", "gpu=h100-sxm,b200")
"""The frontier pictured."""
OUT = ROOT / "docs" / "img" / "frontier.png"


def main() -> None:
    from planner.cli import cli
    from tests.libreoffice import sheet_pdf

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        xlsx = work / "frontier.xlsx"
        cli.main([*ARGS, "--out", str(xlsx)], standalone_mode=False)
        pdf = sheet_pdf(xlsx, work / "print", 0)
        subprocess.run(["pdftoppm", "-png", "-r", "110", "-f", "1", "-l", "1", "-singlefile",
                        str(pdf), str(OUT.with_suffix(""))], check=True)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
