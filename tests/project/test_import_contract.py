"""Layer rule of docs/design.md: the estimator loads no database, dataframe, UI or Excel library."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("sqlalchemy", "pandas", "textual", "openpyxl", "click", "rich")


def _loaded_after(module: str) -> set[str]:
    code = (f"import sys, {module}; "
            f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return {m for m in out.stdout.strip().split(",") if m}


def test_estimator_imports_numpy_at_most() -> None:
    assert _loaded_after("planner.formulas.scenario, planner.spec.hf_config, "
                         "planner.spec.figures") == set()


def test_service_loads_no_ui_or_storage() -> None:
    assert _loaded_after("planner.service") == set()


def test_cli_json_path_does_not_load_rich() -> None:
    code = ("import sys; from planner.cli import main; "
            "main(['model', 'inspect', 'llama-3-8b', '--json']); "
            "print('RICH' if 'rich' in sys.modules else 'NORICH', file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().endswith("NORICH")


def test_store_does_not_reach_up_into_the_service_or_report_layers() -> None:
    code = ("import sys, planner.store.queries, planner.store.scenarios, "
            "planner.store.changelog, planner.store.convert, planner.store.seed, "
            "planner.store.migrate; "
            "print(','.join(m for m in sys.modules "
            "if m.startswith(('planner.service', 'planner.io', 'planner.tui', "
            "'planner.cli'))))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == ""
