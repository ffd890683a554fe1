"""The layer rule of docs/design.md, checked on every import in the package, including imports
inside functions and under ``TYPE_CHECKING``: a module may import its own layer or a layer
below it, never one above. A back-arrow fails the build with the importing line named."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "planner"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("planner",),
    ("planner.cli",),
    ("planner.tui",),
    ("planner.present",),
    ("planner.service",),
    ("planner.io",),
    ("planner.store",),
    ("planner.compute", "planner.sheet"),
    ("planner.formulas",),
    ("planner.spec",),
    ("planner.core",),
)
"""Top to bottom, as docs/design.md draws them. ``planner`` itself (the package ``__init__``,
whose ``planner.evaluate`` is the notebook facade) sits at the top: it may reach any layer, and no
module imports it by name. ``planner.sheet`` is the notebook API's old name for the compute layer.
A new top-level package must be given a layer here."""


def layer_of(module: str) -> int:
    """Index in :data:`LAYERS` of the longest prefix that matches ``module``."""
    best, best_len = None, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            nested = prefix != "planner" and module.startswith(prefix + ".")
            if (module == prefix or nested) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return best


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def planner_imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, imported module) of every ``planner`` import in ``path``, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("planner")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if not target.startswith("planner"):
                continue
            if target == "planner":  # from planner import catalog: the names are modules
                found += [(node.lineno, f"planner.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, target))
    return found


def back_arrows(root: Path = PACKAGE) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        here = layer_of(module_name(path, root))
        for line, target in planner_imports(path, root):
            if layer_of(target) < here:
                out.append(f"{path.relative_to(root.parent)}:{line}: {module_name(path, root)} "
                           f"imports {target}, a layer above it")
    return out


def test_no_import_points_up() -> None:
    assert back_arrows() == []


def test_every_module_is_in_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path))


def test_a_back_arrow_inside_a_function_is_caught(tmp_path: Path) -> None:
    """The check reads imports inside functions too: a compute module reaching up into the
    service layer at call time is reported with its line."""
    package = tmp_path / "planner"
    (package / "compute").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compute" / "__init__.py").write_text("")
    (package / "compute" / "table.py").write_text(
        "def f():\n    from planner.service import estimate\n    return estimate\n")
    (package / "compute" / "ok.py").write_text("from planner.formulas import ops\n")
    assert back_arrows(package) == [
        "planner/compute/table.py:2: planner.compute.table imports planner.service, "
        "a layer above it"]


@pytest.mark.parametrize("here,imported", [
    ("core/units.py", "planner.spec.gpu"),
    ("spec/gpu.py", "planner.formulas.ops"),
    ("formulas/memory.py", "planner.compute.outputs"),
    ("compute/table.py", "planner.store.schema"),
    ("store/engine.py", "planner.io.xlsx"),
    ("io/tables.py", "planner.service.reports"),
    ("service/reports.py", "planner.present"),
    ("present/__init__.py", "planner.tui.app"),
    ("tui/app.py", "planner.cli.common"),
])
def test_a_planted_back_arrow_in_each_layer_is_caught(tmp_path: Path, here: str,
                                                      imported: str) -> None:
    """One module of each layer importing the layer just above it fails the check, naming the
    line; the same import one layer down is allowed."""
    package = tmp_path / "planner"
    target = package / here
    target.parent.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    target.write_text(f"import {imported}\n")
    name = module_name(target, package)
    assert back_arrows(package) == [
        f"planner/{here}:1: {name} imports {imported}, a layer above it"]
    target.write_text("from planner.core import units\n")
    assert back_arrows(package) == []


@pytest.mark.parametrize("module,layer", [
    ("planner", 0), ("planner.cli.db", 1), ("planner.compute.table", 7), ("planner.sheet", 7),
    ("planner.formulas.ops", 8), ("planner.spec.catalog", 9), ("planner.core.units", 10)])
def test_layer_of(module: str, layer: int) -> None:
    assert layer_of(module) == layer
