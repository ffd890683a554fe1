"""The command reference, ``docs/cli.md``, generated from the click command tree.

Every command and subcommand gets its usage line, its help text and its options with their
help, in the order ``planner --help`` lists them. The text depends on nothing but the commands:
the width is fixed and no terminal, environment or database is consulted, so the committed file
can be compared with a fresh rendering (``tests/project/test_docs.py``). Regenerate it with::

    python -m planner.cli.reference > docs/cli.md
"""

from __future__ import annotations

import inspect
import sys

import click

from planner.cli import cli

WIDTH = 100
"""Characters per line of usage text (fixed, so the output does not follow the terminal)."""

REGENERATE = "python -m planner.cli.reference > docs/cli.md"


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    return click.Context(command, info_name=name, parent=parent, **settings)


def _usage(command: click.Command, ctx: click.Context) -> str:
    formatter = click.HelpFormatter(width=WIDTH, max_width=WIDTH)
    command.format_usage(ctx, formatter)
    return formatter.getvalue().rstrip()


def _help_text(command: click.Command) -> list[str]:
    """The help as Markdown: paragraphs as written, ``\\b`` blocks (kept unwrapped by click)
    as code blocks; anything after ``\\f`` is for developers and left out."""
    text = inspect.cleandoc(command.help or "").split("\f", 1)[0].strip()
    out: list[str] = []
    for paragraph in text.split("\n\n"):
        lines = paragraph.splitlines()
        if lines and lines[0].strip() == "\b":
            out += ["```text", *lines[1:], "```", ""]
        elif paragraph.strip():
            out += [" ".join(line.strip() for line in lines), ""]
    return out


def _options(command: click.Command, ctx: click.Context) -> list[str]:
    help_names = set(ctx.help_option_names)
    out: list[str] = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        if help_names.intersection(param.opts):
            continue  # every command takes -h/--help; said once at the top
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        out.append(f"- `{names}`" + (f": {_escape(help_text)}" if help_text else ""))
    return out


def _escape(text: str) -> str:
    """Keep Markdown from reading help text as emphasis or HTML."""
    for char in ("\\", "*", "<"):
        text = text.replace(char, "\\" + char)
    return text


def _section(command: click.Command, name: str, parent: click.Context | None,
             level: int) -> list[str]:
    ctx = _context(command, name, parent)
    out = [f"{'#' * min(level, 6)} `{ctx.command_path}`", "", "```text", _usage(command, ctx),
           "```", "", *_help_text(command)]
    options = _options(command, ctx)
    if options:
        out += ["Options:", "", *options, ""]
    if isinstance(command, click.Group):
        subcommands = [(n, command.get_command(ctx, n)) for n in command.list_commands(ctx)]
        shown = [(n, c) for n, c in subcommands if c is not None and not c.hidden]
        if shown:
            out += ["Commands: " + ", ".join(f"`{n}`" for n, _ in shown) + ".", ""]
        for sub_name, sub in shown:
            out += _section(sub, sub_name, ctx, level + 1)
    return out


def markdown(command: click.Command | None = None, name: str = "planner") -> str:
    """The Markdown reference of ``command`` (default: the ``planner`` group) and everything
    under it."""
    if command is None:

        command = cli
    head = ["# Command reference", "",
            f"Generated from the click commands by `{REGENERATE}`; do not edit by hand "
            "(`tests/project/test_docs.py` fails when this file and the commands differ). Every "
            "command also takes `-h`/`--help`.", ""]
    body = _section(command, name, None, 2)
    return "\n".join(head + body).rstrip() + "\n"


def main() -> None:
    sys.stdout.write(markdown())


if __name__ == "__main__":
    main()
