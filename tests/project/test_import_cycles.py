"""No import circle among the package's modules (issue 27, item 5).

Every import counts: at the top of a module, inside a function and under ``TYPE_CHECKING``
(a circle there still means two modules that each need the other to be understood). A module
imports a module when it names it (``import planner.a.b``, ``from planner.a import b`` where
``b`` is a module, ``from planner.a.b import name``); a package's ``__init__`` is not counted
as imported by its submodules, which Python loads first anyway. A circle fails the build with
the modules in it and the line of each import that closes it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.project.test_layers import PACKAGE, module_name


def module_imports(path: Path, root: Path, modules: set[str]) -> dict[str, int]:
    """The package modules ``path`` imports, each with the line of its first import."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name in modules]
        elif isinstance(node, ast.ImportFrom):
            targets = _from_targets(node, package, modules)
        else:
            continue
        for target in targets:
            if target != name:
                found.setdefault(target, node.lineno)
    return found


def _from_targets(node: ast.ImportFrom, package: str, modules: set[str]) -> list[str]:
    """The modules ``from X import a, b`` names: ``X.a`` where that is a module, else ``X``
    (relative ``X`` resolved against ``package``)."""
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        source = ".".join([*base, node.module] if node.module else base)
    else:
        source = node.module or ""
    if source not in modules:
        return []
    return [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
            for a in node.names]


def import_circles(root: Path = PACKAGE) -> list[str]:
    """Each circle (a strongly connected set of modules) as one line: its modules in order
    and the ``file:line`` of each import around it."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph = {m: module_imports(p, root, set(paths)) for m, p in paths.items()}
    out = []
    for members in strongly_connected(graph):
        inside = set(members)
        edges = [f"{paths[a].relative_to(root.parent)}:{line} ({a} -> {b})"
                 for a in members for b, line in sorted(graph[a].items()) if b in inside]
        out.append(" <-> ".join(members) + ": " + "; ".join(edges))
    return sorted(out)


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan's algorithm), each
    sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while not members or members[-1] != v:
                members.append(stack.pop())
                on_stack.discard(members[-1])
            if len(members) > 1:
                circles.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return circles


def test_no_module_imports_itself_round_a_circle() -> None:
    assert import_circles() == []


def test_a_planted_circle_is_found_with_its_lines(tmp_path: Path) -> None:
    """A circle through a ``TYPE_CHECKING`` import and a function-level one is reported with
    both lines; a package ``__init__`` importing its submodule is not a circle."""
    package = tmp_path / "planner"
    (package / "compute").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compute" / "__init__.py").write_text("from planner.compute import a\n")
    (package / "compute" / "a.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from planner.compute.b import B\n")
    (package / "compute" / "b.py").write_text(
        "def f():\n    from planner.compute import a\n    return a\n")
    (package / "compute" / "c.py").write_text("from planner.compute.b import f\n")
    assert import_circles(package) == [
        "planner.compute.a <-> planner.compute.b: planner/compute/a.py:4 (planner.compute.a -> "
        "planner.compute.b); planner/compute/b.py:2 (planner.compute.b -> planner.compute.a)"]


def test_relative_imports_are_resolved(tmp_path: Path) -> None:
    package = tmp_path / "planner"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "x.py").write_text("from . import y\n")
    (package / "y.py").write_text("from .x import thing\n")
    assert import_circles(package) == [
        "planner.x <-> planner.y: planner/x.py:1 (planner.x -> planner.y); "
        "planner/y.py:1 (planner.y -> planner.x)"]
