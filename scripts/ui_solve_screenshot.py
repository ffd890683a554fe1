"""Make docs/img/ui-solve.png: the capacity task (issue 24) solved in the UI alone (``o``, then
Enter on the first goal) on a fresh database, saved as a Textual screenshot and converted with
rsvg-convert:

    PLANNER_DATA_DIR=$(mktemp -d) python scripts/ui_solve_screenshot.py && \\
        rsvg-convert /tmp/ui-solve.svg -o docs/img/ui-solve.png
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


async def main() -> None:
    from planner.service import Workspace
    from planner.tui.app import create_app
    from tests.tui.test_tui import ready, settle
    from tests.tui.test_verdict_tui import TASK, select

    with Workspace.open() as ws:
        ws.new_scenario("demo", "task70b", model="llama-3-70b", gpu="h100-sxm",
                        **{**TASK, "gpus": 1, "tp": 1})
    app = create_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        select(app, "task70b")
        await pilot.press("o")
        await pilot.press("enter")
        await settle(pilot)
        await settle(pilot)
        app.save_screenshot(filename="ui-solve.svg", path="/tmp")


if __name__ == "__main__":
    asyncio.run(main())
