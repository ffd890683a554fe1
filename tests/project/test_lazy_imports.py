"""Imports of the package's own modules sit at the top of a module, where the layers contract
(tests/project/test_layers.py) and a reader see them. An import inside a function is allowed only
where start-up time needs it, and then says why on the line above (``# lazy: <reason>``)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "planner"


def unexplained(root: Path = PACKAGE) -> list[str]:
    """``file:line`` of every function-level ``planner`` import without a ``# lazy:`` reason."""
    out = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if not any(n.startswith("planner") for n in names):
                    continue
                above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
                if not above.startswith("# lazy:") or len(above) < len("# lazy: ") + 8:
                    out.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return out


def test_every_function_level_import_says_why_it_is_lazy() -> None:
    assert unexplained() == []


def test_an_unexplained_lazy_import_is_reported(tmp_path: Path) -> None:
    package = tmp_path / "planner"
    package.mkdir()
    (package / "a.py").write_text(
        "def f():\n    from planner import b\n    return b\n\n\n"
        "def g():\n    # lazy: loads openpyxl (~100 ms), only when this runs\n"
        "    from planner import c\n    return c\n")
    assert unexplained(package) == ["planner/a.py:2"]
