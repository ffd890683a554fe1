"""The documentation in docs/ stays true: the command reference matches the click commands, and
nothing a user clones points at files outside the repository."""

from __future__ import annotations

from pathlib import Path

from planner.cli.reference import REGENERATE, markdown

ROOT = Path(__file__).resolve().parents[2]
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
    return [p for p in files if p.is_file() and p.suffix not in (".pyc", ".so", ".png")]


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


def _readme_commands() -> list[str]:
    """Every ``planner …`` line of the README's code blocks, continuation lines joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```")[1::2]
    lines = []
    for block in blocks:
        joined = block.replace("\\\n", " ")
        lines += [line.strip() for line in joined.splitlines()
                  if line.strip().startswith("planner ")]
    return lines


def test_readme_states_the_python_it_needs() -> None:
    import tomllib

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    with (ROOT / "pyproject.toml").open("rb") as fh:
        requires = tomllib.load(fh)["project"]["requires-python"]
    assert requires == ">=3.11"
    assert "Python ≥ 3.11" in readme


def test_readme_links_stay_in_the_repository() -> None:
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)]+)\)", readme)
    assert targets
    for target in targets:
        assert "://" not in target and not target.startswith("/"), target
        assert (ROOT / target.split("#")[0]).resolve().is_relative_to(ROOT), target
        assert (ROOT / target.split("#")[0]).exists(), target
    assert "http://" not in readme and "https://" not in readme


def test_readme_prod_chat_examples_run_in_order() -> None:
    """The README's worked prod/chat example, run as written on a fresh database: the fleet
    is created before its scenario, and every command after it works."""
    import shlex

    from click.testing import CliRunner

    from planner.cli import cli

    commands = [c for c in _readme_commands()
                if "prod/chat" in c or c.startswith("planner fleet new prod")]
    assert commands and commands[0].startswith("planner fleet new prod")
    for command in commands:
        words = shlex.split(command.split("  #")[0].replace("[--if-version N]", ""))[1:]
        result = CliRunner().invoke(cli, words)
        assert result.exit_code == 0, (command, result.stderr)
