"""Files and functions over issue 27's size limits (500 lines a file, 60 a function).

A function's length is from its ``def`` line to its last line (nested functions are counted
on their own too); a file's is its line count. Prints one line per file or function over the
limit and the two counts, and exits 1 when there is any, so a CI step or a reviewer can run
it on a folder or on single files:

    python scripts/code_size.py planner/compute planner/service/compare.py
    python scripts/code_size.py --function-lines 80 planner
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


def python_files(paths: list[str]) -> list[Path]:
    """Every ``.py`` file under the given folders, and the given files, sorted."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def oversized(files: list[Path], file_lines: int, function_lines: int
              ) -> tuple[list[str], list[str]]:
    """(files over ``file_lines``, functions over ``function_lines``), each as a line."""
    long_files, long_functions = [], []
    for path in files:
        source = path.read_text(encoding="utf-8")
        count = len(source.splitlines())
        if count > file_lines:
            long_files.append(f"{path}: {count} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > function_lines:
                    long_functions.append(f"{path}:{node.lineno} {node.name}: {length} lines")
    return long_files, long_functions


def main(argv: list[str] | None = None) -> int:
    """Print what is over the limits; 1 when anything is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="folders or .py files")
    parser.add_argument("--file-lines", type=int, default=500)
    parser.add_argument("--function-lines", type=int, default=60)
    args = parser.parse_args(argv)
    long_files, long_functions = oversized(python_files(args.paths), args.file_lines,
                                           args.function_lines)
    for line in (*long_files, *long_functions):
        print(line)
    print(f"files over {args.file_lines} lines: {len(long_files)}; "
          f"functions over {args.function_lines} lines: {len(long_functions)}")
    return 1 if long_files or long_functions else 0


if __name__ == "__main__":
    sys.exit(main())
