"""The documentation in docs/ stays true: the command reference matches the click commands, and
nothing a user clones points at files outside the repository."""

from __future__ import annotations

from pathlib import Path

from planner.cli.reference import REGENERATE, markdown

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = ("../shared", "DESIGN.md", "REFERENCE.md", "seed-docs")
"""Names of documents that live outside the repository (the design notes and the source
articles); docs/design.md and docs/formulas.md replace them."""


def test_cli_reference_is_current() -> None:
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == markdown(), (
        f"docs/cli.md differs from the click commands; regenerate it with `{REGENERATE}`")


def _shipped_text_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*"))]
    files += sorted(p for p in (ROOT / "planner").rglob("*") if "__pycache__" not in p.parts)
    return [p for p in files if p.is_file() and p.suffix not in (".pyc", ".so")]


def test_docs_exist() -> None:
    for name in ("design.md", "formulas.md", "cli.md"):
        assert (ROOT / "docs" / name).read_text(encoding="utf-8").startswith("# "), name


def test_nothing_points_outside_the_repository() -> None:
    files = _shipped_text_files()
    assert ROOT / "README.md" in files and ROOT / "planner" / "cli" / "__init__.py" in files
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{number}: {name}" for name in OUTSIDE
                      if name in line]
    assert not found, ("these lines cite documents outside the repository; cite docs/design.md "
                       "or docs/formulas.md instead:\n" + "\n".join(found))
